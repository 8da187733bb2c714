/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_SHARED_OPTIONS_H
#define MBOOT_SHARED_OPTIONS_H

/*
 * Options structs that can grow (HACKING.md, "ABI: how a struct grows"): every public options
 * struct starts with `size_t size`, the caller's sizeof (MB_OPTIONS_INIT). An entry point takes
 * the caller's struct into a local copy of the library's own size with options_take: the bytes
 * the caller has, zeros past them (every field's default is zero), size set to the library's.
 */
#include <stddef.h>
#include <mboot/error.h>

/*
 * src (may be NULL: every field its default) into dst (dst_size bytes, its first field a
 * size_t). -EINVAL when src->size is smaller than the size field itself (0: the caller did not
 * use MB_OPTIONS_INIT); -EOPNOTSUPP when src is bigger than this library's struct and sets a
 * byte past it (a field of a newer libmboot). what (the entry point's name) starts the message.
 */
int options_take(void *dst, size_t dst_size, const void *src, const char *what, mb_error *err)
	__attribute__((warn_unused_result));
#define OPTIONS_TAKE(dst, src, err) options_take(&(dst), sizeof(dst), (src), __func__, (err))
/* An options struct the caller's points at (mb_predict_input.boot, an mb_boot_artifacts), taken
 * by the same rules into its own local copy; what names it in the message, as a caller wrote it. */
#define OPTIONS_TAKE_NAMED(dst, src, what, err) options_take(&(dst), sizeof(dst), (src), (what), (err))

/* Options the library fills for the caller (dst, whose size field the caller set): -EINVAL when
 * that size is smaller than the size field. */
int options_check_out(const void *dst, size_t src_size, const char *what, mb_error *err)
	__attribute__((warn_unused_result));
/* The fields of src (src_size bytes, the library's struct) that fit in the caller's dst->size;
 * dst's size field stays the caller's. */
void options_give(void *dst, const void *src, size_t src_size);

#endif
