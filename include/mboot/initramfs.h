/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_INITRAMFS_H
#define MBOOT_INITRAMFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <mboot/error.h>
#include <mboot/eventlog.h>
#include <mboot/replay.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Deterministic initramfs: a cpio "newc" archive of a directory whose bytes depend only on
 * the names, types, permission bits, contents, symlink targets, device numbers and hard-link
 * structure of the files in it, plus one chosen mtime. docs/initramfs.md states the rules.
 * Reading (list/verify) treats the archive as untrusted input.
 */

/* Caps on what an archive may declare (reading) or hold (packing). */
#define MB_CPIO_NAME_MAX      4096u                 /* name size, NUL included */
#define MB_CPIO_FILE_MAX      (2u * 1024 * 1024 * 1024 - 1) /* one entry's data */
#define MB_CPIO_ENTRIES_MAX   1000000u
#define MB_CPIO_TOTAL_MAX     ((size_t) 2 * 1024 * 1024 * 1024) /* all decompressed data */
/* Reading only: decompressed bytes may not exceed RATIO times the compressed bytes read so
 * far plus SLACK (a decompression bomb expands far more), NUL padding between two archives
 * is at most PAD bytes in a row, and the entry records, names and symlink targets a parse
 * keeps take at most KEPT bytes. docs/initramfs.md says why. */
#define MB_CPIO_RATIO_MAX     256u
#define MB_CPIO_RATIO_SLACK   ((size_t) 16 * 1024 * 1024)
#define MB_CPIO_PAD_MAX       ((size_t) 1024 * 1024)
#define MB_CPIO_KEPT_MAX      ((size_t) 32 * 1024 * 1024)
#define MB_CPIO_SEGMENTS_MAX  64u

typedef enum mb_compress {
	MB_COMPRESS_NONE = 0,
	MB_COMPRESS_GZIP,
	MB_COMPRESS_ZSTD,
} mb_compress;

/* "none", "gzip", "zstd"; NULL for other values. */
MB_EXPORT const char *mb_compress_name(mb_compress c);
/* 0 and *ret set, or -EINVAL. */
MB_EXPORT int mb_compress_from_name(const char *name, mb_compress *ret) MB_WUR;

typedef struct mb_initramfs_opts {
	size_t size; /* MB_OPTIONS_INIT(mb_initramfs_opts): its sizeof (mboot/error.h) */
	mb_compress compress;
	uint32_t mtime; /* stored in every entry (SOURCE_DATE_EPOCH handling is the caller's) */
} mb_initramfs_opts;

typedef struct mb_initramfs_stats {
	size_t entries;   /* "." included, the trailer not */
	size_t cpio_size; /* uncompressed archive size */
	uint8_t cpio_sha256[32];
	/* of the bytes returned (what a boot loader measures) */
	uint8_t sha1[20], sha256[32], sha384[48];
} mb_initramfs_stats;

/*
 * Pack the tree under dir: dir itself first as ".", then its entries in bytewise path order.
 * *ret (malloc'd, *ret_size bytes) receives the archive, compressed as asked, and stats (may
 * be NULL) its digests. Uses up to two helper threads; the bytes do not depend on them.
 * Symlinks are never followed. Sockets, files over MB_CPIO_FILE_MAX, and files that
 * change size or identity while being read are refused (-EINVAL / -E2BIG / -ESTALE).
 */
MB_EXPORT int mb_initramfs_pack(const char *dir, const mb_initramfs_opts *opts, uint8_t **ret, size_t *ret_size,
				mb_initramfs_stats *stats, mb_error *err) MB_WUR;

/* One entry of a parsed archive. name and data point into memory owned by the mb_initramfs.
 * File contents are not kept (the archive is read as a stream): sha256 is their digest. */
typedef struct mb_cpio_entry {
	uint64_t offset;   /* of the header, in the cpio data of its segment */
	unsigned segment;  /* index into the segments */
	uint32_t ino, mode, uid, gid, nlink, mtime;
	uint32_t devmajor, devminor, rdevmajor, rdevminor;
	const char *name;  /* NUL-terminated, as stored */
	size_t name_len;
	const uint8_t *data; /* a symlink's target (size bytes, then a NUL); NULL for other types */
	uint32_t size;       /* of the data in the archive */
	uint8_t sha256[32];  /* of the data (of no bytes when size is 0) */
} mb_cpio_entry;

/* A file holds one or more concatenated archives (segments), each plain or compressed, as
 * the kernel accepts (e.g. an uncompressed microcode cpio followed by a compressed one). */
typedef struct mb_cpio_segment {
	mb_compress compress;
	uint64_t file_offset; /* where the segment starts in the file */
	uint64_t file_size;   /* bytes of the file it spans */
	size_t cpio_size;     /* decompressed size */
} mb_cpio_segment;

typedef struct mb_initramfs mb_initramfs;

/*
 * Parse an archive, decompressing it as a stream: memory stays bounded whatever the input
 * (a few buffers, the decompressor's window, and what MB_CPIO_KEPT_MAX allows). Malformed
 * input is -EBADMSG, with err->offset the byte in the segment's decompressed cpio data (the
 * message says which segment and whether it was compressed); exceeding a cap is -E2BIG.
 * Names that are absolute or contain a ".." component are refused.
 */
MB_EXPORT int mb_initramfs_parse(const void *data, size_t size, mb_initramfs **ret, mb_error *err) MB_WUR;
/* Every byte of the file, in order, as it is read (to hash it, say); nonzero stops the parse
 * with that code (negative errno), whose message the callback sets in err. */
typedef int (*mb_initramfs_tap)(const uint8_t *data, size_t size, void *userdata, mb_error *err);
/* The same, reading fd to its end in chunks rather than from memory; tap may be NULL. */
MB_EXPORT int mb_initramfs_parse_fd(int fd, mb_initramfs_tap tap, void *userdata, mb_initramfs **ret,
				    mb_error *err) MB_WUR;
MB_EXPORT size_t mb_initramfs_entry_count(const mb_initramfs *a);
MB_EXPORT const mb_cpio_entry *mb_initramfs_entry_at(const mb_initramfs *a, size_t i);
MB_EXPORT size_t mb_initramfs_segment_count(const mb_initramfs *a);
MB_EXPORT const mb_cpio_segment *mb_initramfs_segment_at(const mb_initramfs *a, size_t i);
MB_EXPORT mb_initramfs *mb_initramfs_free(mb_initramfs *a);

/*
 * Where two archives first differ: 0 when their entries (headers, names and data digests) are equal
 * and in the same order; otherwise 1, *ret_index the entry index of the first difference
 * (== the shorter count when one is a prefix of the other) and what (may be NULL) a short
 * description ("mode 0100644 vs 0100755", "data", "name", "missing", "extra").
 */
MB_EXPORT int mb_initramfs_compare(const mb_initramfs *a, const mb_initramfs *b, size_t *ret_index,
				   char *what, size_t what_size);

/*
 * The documents of `mboot initramfs` (docs/initramfs.md), pretty or compact (docs/json.md).
 * digests are FILE's own (sha1, sha256, sha384 as the boot loader measures it), written as
 * "digests": {bank name: hex} in the order given.
 */
/* name (n bytes, not NUL-terminated) printable: bytes below 0x20, from 0x7f and '\' as \xNN.
 * Caller frees; NULL when out of memory. */
MB_EXPORT char *mb_initramfs_name_escape(const char *s, size_t n);
/* `initramfs list --json`: {"file", "size", "digests", "segments": [{"compress", "offset",
 * "size", "cpio_size"}], "entries": [{"name", "name_hex" (when name needed escapes), "type",
 * "mode", "uid", "gid", "nlink", "mtime", "ino", "size", "segment", "offset", "target"
 * (symlink), "rdev" (devices), "sha256" (non-empty files)}]} and a newline, handed to sink in
 * pieces as it is written (an archive of a million entries is never one tree). 0, or a
 * negative errno (-ENOMEM, the sink's), after which what sink got is incomplete. */
MB_EXPORT int mb_initramfs_write_json(const mb_initramfs *a, const char *file, uint64_t size,
				      const mb_event_digest *digests, size_t n_digests, bool pretty,
				      mb_text_sink sink, void *ctx, mb_error *err) MB_WUR;
/* `initramfs pack --json`: {"file", "size", "compress", "entries", "mtime", "cpio_size",
 * "cpio_sha256", "digests", "policy" (policy_json, a policy's text, when not NULL)} of what
 * mb_initramfs_pack(.., opts, .., st) made, size bytes, written to file. No final newline;
 * caller frees; NULL when out of memory or policy_json is not JSON. */
MB_EXPORT char *mb_initramfs_pack_to_json(const char *file, uint64_t size, const mb_initramfs_opts *opts,
					  const mb_initramfs_stats *st, const char *policy_json, bool pretty);
/* `initramfs verify --json`: {"file", "dir", "result" ("identical" when what is NULL, else
 * "different"), "compress", "mtime", "digests", "first_difference": {"entry" (unless entry is
 * SIZE_MAX), "name" (e's, when e is not NULL), "what"} (only when different)}. No final
 * newline; caller frees; NULL when out of memory. */
MB_EXPORT char *mb_initramfs_verify_to_json(const char *file, const char *dir, const mb_initramfs_opts *opts,
					    const mb_event_digest *digests, size_t n_digests, const char *what,
					    size_t entry, const mb_cpio_entry *e, bool pretty);

#ifdef __cplusplus
}
#endif
#endif
