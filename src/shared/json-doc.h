/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The JSON documents mboot writes and reads back: one object, typed fields, hex and base64 (json-doc.c). */
#ifndef MBOOT_SHARED_JSON_DOC_H
#define MBOOT_SHARED_JSON_DOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "shared/json.h"
#include <mboot/error.h>

/* One JSON object, read by untrusted_json_parse (strict; nesting depth 8). */
int json_doc_parse_text(const char *text, size_t size, json_t **ret, mb_error *err);
/* json_doc_parse_text of at most max bytes (what names the file), whose "kind" is kind and "version" 1. */
int json_doc_open(const char *text, size_t size, size_t max, const char *what, const char *kind, json_t **ret,
		  mb_error *err);
/* root's "kind" is kind and its "version" 1. */
int json_doc_check_kind(json_t *root, const char *kind, mb_error *err);
/* root as pretty, newline-terminated text (malloc'd; NULL on ENOMEM, also when an allocation
 * failed since mark, the json_build_begin() taken before root was built: json.h); puts root. */
char *json_doc_finish(json_t *root, json_build_mark mark);
/* o[key] when it has this type, else NULL. */
json_t *json_doc_get(json_t *o, const char *key, json_type type);
/* o[key]: exactly size bytes of hex; name is the field's place, for messages. */
int json_doc_hex(json_t *o, const char *key, const char *name, uint8_t *out, size_t size, mb_error *err);
/* o[key]: canonical base64 of at most max bytes (optional: a missing key is no error). */
int json_doc_b64(json_t *o, const char *key, size_t max, bool optional, uint8_t **ret, size_t *ret_size,
		 mb_error *err);
/* bytes as a base64 string; NULL on ENOMEM */
json_t *json_doc_b64_obj(const uint8_t *p, size_t n);

#endif
