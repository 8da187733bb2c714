/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_INITRAMFS_INTERNAL_H
#define MB_INITRAMFS_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <mboot/initramfs.h>

/* Fixed compression parameters: part of the format (docs/initramfs.md). */
#define MB_GZIP_LEVEL 6   /* zlib's and gzip's default */
#define MB_GZIP_OS    3   /* RFC 1952 "Unix", what gzip writes on Linux */
#define MB_ZSTD_LEVEL 3   /* libzstd's and zstd(1)'s default */

/*
 * A byte stream filled by one thread and read by others while it grows: the buffer never
 * moves; the writer publishes how much is valid, readers wait for more.
 */
typedef struct follow_state {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	size_t avail;
	bool done;
	bool failed;
} follow_state;

void follow_init(follow_state *f);
void follow_destroy(follow_state *f);
void follow_publish(follow_state *f, size_t avail, bool done, bool failed);
/* Wait until more than have bytes are valid, or the end. 0, or -ECANCELED when the writer failed. */
int follow_wait(follow_state *f, size_t have, size_t *ret_avail, bool *ret_done);

/* Upper bound of the gzip stream for n input bytes. */
size_t gzip_bound(size_t n);
/*
 * gzip the bytes of in as they are published through fin, into out (out_cap bytes, at least
 * gzip_bound of the final size), publishing progress through fout. The bytes are those of
 * one-shot compression: deflate is fed without flushing.
 */
int gzip_follow(const uint8_t *in, follow_state *fin, uint8_t *out, size_t out_cap, follow_state *fout,
		   mb_error *err);

/* Compress in one shot; *ret malloc'd. */
int compress_buffer(mb_compress c, const uint8_t *in, size_t in_size, uint8_t **ret, size_t *ret_size,
		       mb_error *err);

/* Which compressed format starts at p (NONE for a cpio magic or anything else). */
mb_compress compress_detect(const uint8_t *p, size_t n);

/* Largest zstd window accepted when reading (32 MiB): the decoder allocates it. */
#define MB_ZSTD_WINDOW_LOG_MAX 25

/* A streaming decompressor of one gzip member or one zstd frame. */
typedef struct inflater inflater;
int inflater_new(mb_compress c, inflater **ret, mb_error *err);
inflater *inflater_free(inflater *z);
/*
 * Decompress from in (in_n bytes) into out (out_n bytes): *ret_used input bytes consumed,
 * *ret_made output bytes written, *ret_end once the member/frame is complete (input after it
 * is not touched). No progress at all means more input is needed. Errors carry the offset in in.
 */
int inflater_step(inflater *z, const uint8_t *in, size_t in_n, size_t *ret_used, uint8_t *out, size_t out_n,
		     size_t *ret_made, bool *ret_end, mb_error *err);

/* What a reader accepts; cpio_caps_default holds the library's caps (docs/initramfs.md). */
typedef struct cpio_caps {
	uint64_t total;    /* decompressed bytes, all segments together */
	uint64_t ratio;    /* decompressed <= ratio * compressed + slack, counted over the whole file */
	uint64_t slack;
	uint64_t pad;      /* NUL bytes in a row between two archives */
	size_t kept;       /* bytes of entry records, names and symlink targets held in memory */
	unsigned segments; /* concatenated segments */
} cpio_caps;
extern const cpio_caps cpio_caps_default;

/* mb_initramfs_parse with other caps (tests, fuzzing). */
int initramfs_parse_capped(const void *data, size_t size, const cpio_caps *caps, mb_initramfs **ret,
			      mb_error *err);

#endif
