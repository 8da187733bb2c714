/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* JSON pieces the sealed file and the signature file share (sealed.c). Internal. */
#ifndef MB_SEAL_JSON_H
#define MB_SEAL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>
#include <mboot/error.h>
#include <mboot/replay.h>

/* One JSON object, read by untrusted_json_parse (strict; nesting depth 8). */
int seal_json_parse_text(const char *text, size_t size, json_object **ret, mb_error *err);
/* seal_json_parse_text of at most max bytes (what names the file), whose "kind" is kind and "version" 1. */
int seal_json_open(const char *text, size_t size, size_t max, const char *what, const char *kind, json_object **ret,
		   mb_error *err);
/* root's "kind" is kind and its "version" 1. */
int seal_json_check_kind(json_object *root, const char *kind, mb_error *err);
/* root as pretty, newline-terminated text (malloc'd; NULL on ENOMEM); puts root. */
char *seal_json_finish(json_object *root);
/* o[key] when it has this type, else NULL. */
json_object *seal_json_get(json_object *o, const char *key, json_type type);
/* o[key]: exactly size bytes of hex; name is the field's place, for messages. */
int seal_json_hex(json_object *o, const char *key, const char *name, uint8_t *out, size_t size, mb_error *err);
/* o[key]: canonical base64 of at most max bytes (optional: a missing key is no error). */
int seal_json_b64(json_object *o, const char *key, size_t max, bool optional, uint8_t **ret, size_t *ret_size,
		  mb_error *err);
/* A PCR state {"bank", "selection", "values"}; name is its place, for messages. */
int seal_json_pcr_state(json_object *o, const char *name, mb_pcr_bank *bank, uint32_t *mask, mb_error *err);
json_object *seal_json_b64_obj(const uint8_t *p, size_t n);
json_object *seal_json_pcr_state_obj(const mb_pcr_bank *b, uint32_t mask);

#endif
