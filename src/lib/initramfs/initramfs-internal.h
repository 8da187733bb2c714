/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_INITRAMFS_INTERNAL_H
#define MB_INITRAMFS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <mboot/initramfs.h>

/* Fixed compression parameters: part of the format (docs/initramfs.md). */
#define MB_GZIP_LEVEL 6   /* zlib's and gzip's default */
#define MB_GZIP_OS    3   /* RFC 1952 "Unix", what gzip writes on Linux */
#define MB_ZSTD_LEVEL 3   /* libzstd's and zstd(1)'s default */

/* Compress in one shot; *ret malloc'd. */
int mb_compress_buffer(mb_compress c, const uint8_t *in, size_t in_size, uint8_t **ret, size_t *ret_size,
		       mb_error *err);

/* Which compressed format starts at p (NONE for a cpio magic or anything else). */
mb_compress mb_compress_detect(const uint8_t *p, size_t n);

/*
 * Decompress one gzip member or zstd frame starting at in. *ret_used is how many input bytes
 * it spanned; the output may not exceed max bytes (-E2BIG). *ret is malloc'd.
 */
int mb_decompress_one(mb_compress c, const uint8_t *in, size_t in_size, size_t max, uint8_t **ret,
		      size_t *ret_size, size_t *ret_used, mb_error *err);

/* mb_initramfs_parse with a smaller cap on all decompressed data (tests, fuzzing). */
int mb_initramfs_parse_capped(const void *data, size_t size, size_t max_total, mb_initramfs **ret, mb_error *err);

#endif
