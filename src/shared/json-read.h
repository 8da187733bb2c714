/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_SHARED_JSON_READ_H
#define MB_SHARED_JSON_READ_H

/*
 * The one way mboot parses JSON that users hand it (policies, PCR values, sealed objects,
 * signature files, userspace log records). Stricter than json-c alone: RFC 8259 grammar
 * only (no trailing commas, comments, single quotes, NaN, "1.", unescaped control
 * characters), well-formed UTF-8 and escapes (no lone surrogates, no \u0000, which would
 * cut a C string short), nothing but white space after the value, no NUL byte, at most
 * max_depth nested arrays and objects, and no key twice in one object (json-c keeps the
 * last of two silently, so a lax rule could hide behind a strict one).
 *
 * Errors are -EBADMSG (-E2BIG over INT_MAX bytes, -EINVAL for a max_depth over
 * JSON_READ_MAX_DEPTH, -ENOMEM) with the byte offset and a message
 * "line L, column C: what", lines and columns (characters) counted from 1.
 */

#include <stddef.h>
#include <json-c/json.h>
#include <mboot/error.h>

#define JSON_READ_MAX_DEPTH 64

/* One JSON value of any type in text[0, size); *ret is the caller's to put (NULL for "null"). */
int untrusted_json_parse(const char *text, size_t size, unsigned max_depth, json_object **ret, mb_error *err);

/* The same for the value in doc[start, start + len), one piece of a larger document:
 * offsets, lines and columns in messages are those of doc. */
int untrusted_json_parse_in(const char *doc, size_t doc_size, size_t start, size_t len, unsigned max_depth,
			    json_object **ret, mb_error *err);

#endif
