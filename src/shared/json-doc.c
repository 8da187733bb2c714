/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The JSON documents mboot writes and reads back (sealed files, signatures, envelopes,
 * attestation requests, challenges and evidence): one object, "kind" and "version", typed
 * fields, hex and base64 of bytes. Untrusted text through untrusted_json_parse.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "shared/base64.h"
#include "shared/fail.h"
#include "shared/hex.h"
#include "shared/json-doc.h"
#include "shared/json-read.h"

int json_doc_parse_text(const char *text, size_t size, json_object **ret, mb_error *err)
{
	json_object *root;
	int r;

	*ret = NULL;
	r = untrusted_json_parse(text, size, 8, &root, err);
	if (r < 0)
		return r;
	if (!json_object_is_type(root, json_type_object)) {
		json_object_put(root);
		return set_error(err, -EBADMSG, "not a JSON object");
	}
	*ret = root;
	return 0;
}

int json_doc_check_kind(json_object *root, const char *kind, mb_error *err)
{
	json_object *o = json_doc_get(root, "kind", json_type_string);

	if (!o || strcmp(json_object_get_string(o), kind) != 0)
		return set_error(err, -EBADMSG, "field \"kind\" is not \"%s\"", kind);
	if (!(o = json_doc_get(root, "version", json_type_int)) || json_object_get_int64(o) != 1)
		return set_error(err, -EBADMSG, "field \"version\" is not 1 (this mboot reads version 1)");
	return 0;
}

int json_doc_open(const char *text, size_t size, size_t max, const char *what, const char *kind, json_object **ret,
		   mb_error *err)
{
	json_object *root;
	int r;

	*ret = NULL;
	if (size > max || size > INT_MAX)
		return set_error(err, -E2BIG, "%s larger than %zu bytes", what, max);
	r = json_doc_parse_text(text, size, &root, err);
	if (r < 0)
		return r;
	r = json_doc_check_kind(root, kind, err);
	if (r < 0) {
		json_object_put(root);
		return r;
	}
	*ret = root;
	return 0;
}

char *json_doc_finish(json_object *root)
{
	const char *text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
								      JSON_C_TO_STRING_NOSLASHESCAPE);
	char *out = NULL;

	size_t n = text ? strlen(text) : 0;

	if (text && (out = malloc(n + 2))) {
		memcpy(out, text, n);
		memcpy(out + n, "\n", 2);
	}
	json_object_put(root);
	return out;
}

int json_doc_hex(json_object *o, const char *key, const char *name, uint8_t *out, size_t size, mb_error *err)
{
	json_object *v = json_doc_get(o, key, json_type_string);

	if (!v || (size_t) json_object_get_string_len(v) != 2 * size ||
	    hex_parse(json_object_get_string(v), 2 * size, out, size) < 0)
		return set_error(err, -EBADMSG, "field \"%s\" is not %zu bytes of hex", name, size);
	return 0;
}

json_object *json_doc_get(json_object *o, const char *key, json_type type)
{
	json_object *v = NULL;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, type))
		return NULL;
	return v;
}

int json_doc_b64(json_object *root, const char *key, size_t max, bool optional, uint8_t **ret, size_t *ret_size,
		   mb_error *err)
{
	json_object *v = NULL;
	int r;

	if (!json_object_object_get_ex(root, key, &v) || json_object_is_type(v, json_type_null)) {
		if (optional)
			return 0;
		return set_error(err, -EBADMSG, "field \"%s\" is missing", key);
	}
	if (!json_object_is_type(v, json_type_string))
		return set_error(err, -EBADMSG, "field \"%s\" is not a string", key);
	r = base64_decode(json_object_get_string(v), (size_t) json_object_get_string_len(v), max, ret, ret_size);
	if (r == -E2BIG)
		return set_error(err, -E2BIG, "field \"%s\" is larger than %zu bytes", key, max);
	if (r == -ENOMEM)
		return set_error(err, r, "out of memory");
	if (r < 0)
		return set_error(err, -EBADMSG, "field \"%s\" is not valid base64", key);
	return 0;
}

json_object *json_doc_b64_obj(const uint8_t *p, size_t n)
{
	char *s = base64_encode(p, n);
	json_object *o;

	if (!s)
		return NULL;
	o = json_object_new_string(s);
	free(s);
	return o;
}
