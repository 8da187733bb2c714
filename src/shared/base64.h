/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_SHARED_BASE64_H
#define MBOOT_SHARED_BASE64_H

#include <stddef.h>
#include <stdint.h>

/*
 * Base64 (RFC 4648 §4, padded). Encode: a new NUL-terminated string, NULL on ENOMEM. Decode:
 * s[0..len) into a new buffer (*ret, *ret_size) of at most max bytes: -EBADMSG for anything but
 * canonical padded input, -E2BIG over max, -ENOMEM.
 */
char *base64_encode(const uint8_t *in, size_t n);
int base64_decode(const char *s, size_t len, size_t max, uint8_t **ret, size_t *ret_size)
	__attribute__((warn_unused_result));

#endif
