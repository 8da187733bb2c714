/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_SHARED_FAIL_H
#define MB_SHARED_FAIL_H

#include <stdint.h>
#include <mboot/error.h>

/* Fill err (when not NULL) and return code, so callers can `return set_error(...)`. */
int set_error(mb_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int set_error_at(mb_error *err, int code, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Prefix err's message with "what: " (a path the callee did not know); returns code. */
int prefix_error(mb_error *err, int code, const char *what);

#endif
