/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_ERROR_H
#define MBOOT_ERROR_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define MB_EXPORT __attribute__((visibility("default")))
#define MB_WUR __attribute__((warn_unused_result))
#else
#define MB_EXPORT
#define MB_WUR
#endif

/*
 * Every fallible library call returns 0 or a negative errno and, when the caller
 * passes an mb_error, fills it with a message and, for parse errors, the byte
 * offset in the input where the problem was found. The library never prints.
 *
 *   -EBADMSG     malformed input (offset set)
 *   -E2BIG       the input declares a size or count over one of our caps
 *   -EOPNOTSUPP  a format or algorithm we do not handle
 *   -ENOENT, -EACCES, -EIO ... from the system, as they came
 *   -ENOMEM      out of memory
 */
typedef struct mb_error {
	int code;
	bool has_offset;
	uint64_t offset;
	char message[512];
} mb_error;

MB_EXPORT void mb_error_clear(mb_error *err);

/* Short words for an errno-style code, e.g. "malformed input". Never NULL. */
MB_EXPORT const char *mb_strerror(int code);

#ifdef __cplusplus
}
#endif
#endif
