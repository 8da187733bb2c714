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
typedef struct mb_follow {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	size_t avail;
	bool done;
	bool failed;
} mb_follow;

void mb_follow_init(mb_follow *f);
void mb_follow_destroy(mb_follow *f);
void mb_follow_publish(mb_follow *f, size_t avail, bool done, bool failed);
/* Wait until more than have bytes are valid, or the end. 0, or -ECANCELED when the writer failed. */
int mb_follow_wait(mb_follow *f, size_t have, size_t *ret_avail, bool *ret_done);

/* Upper bound of the gzip stream for n input bytes. */
size_t mb_gzip_bound(size_t n);
/*
 * gzip the bytes of in as they are published through fin, into out (out_cap bytes, at least
 * mb_gzip_bound of the final size), publishing progress through fout. The bytes are those of
 * one-shot compression: deflate is fed without flushing.
 */
int mb_gzip_follow(const uint8_t *in, mb_follow *fin, uint8_t *out, size_t out_cap, mb_follow *fout,
		   mb_error *err);

/* Compress in one shot; *ret malloc'd. */
int mb_compress_buffer(mb_compress c, const uint8_t *in, size_t in_size, uint8_t **ret, size_t *ret_size,
		       mb_error *err);

/* Which compressed format starts at p (NONE for a cpio magic or anything else). */
mb_compress mb_compress_detect(const uint8_t *p, size_t n);

/* Largest zstd window accepted when reading (32 MiB): the decoder allocates it. */
#define MB_ZSTD_WINDOW_LOG_MAX 25

/* A streaming decompressor of one gzip member or one zstd frame. */
typedef struct mb_inflater mb_inflater;
int mb_inflater_new(mb_compress c, mb_inflater **ret, mb_error *err);
mb_inflater *mb_inflater_free(mb_inflater *z);
/*
 * Decompress from in (in_n bytes) into out (out_n bytes): *ret_used input bytes consumed,
 * *ret_made output bytes written, *ret_end once the member/frame is complete (input after it
 * is not touched). No progress at all means more input is needed. Errors carry the offset in in.
 */
int mb_inflater_step(mb_inflater *z, const uint8_t *in, size_t in_n, size_t *ret_used, uint8_t *out, size_t out_n,
		     size_t *ret_made, bool *ret_end, mb_error *err);

/* What a reader accepts; mb_cpio_caps_default holds the library's caps (docs/initramfs.md). */
typedef struct mb_cpio_caps {
	uint64_t total;    /* decompressed bytes, all segments together */
	uint64_t ratio;    /* decompressed <= ratio * compressed + slack, counted over the whole file */
	uint64_t slack;
	uint64_t pad;      /* NUL bytes in a row between two archives */
	size_t kept;       /* bytes of entry records, names and symlink targets held in memory */
	unsigned segments; /* concatenated segments */
} mb_cpio_caps;
extern const mb_cpio_caps mb_cpio_caps_default;

/* mb_initramfs_parse with other caps (tests, fuzzing). */
int mb_initramfs_parse_capped(const void *data, size_t size, const mb_cpio_caps *caps, mb_initramfs **ret,
			      mb_error *err);

#endif
