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
#include "shared/json.h"

int json_doc_parse_text(const char *text, size_t size, json_t **ret, mb_error *err)
{
	json_t *root;
	int r;

	*ret = NULL;
	r = untrusted_json_parse(text, size, 8, &root, err);
	if (r < 0)
		return r;
	if (!json_is_object(root)) {
		json_decref(root);
		return set_error(err, -EBADMSG, "not a JSON object");
	}
	*ret = root;
	return 0;
}

int json_doc_check_kind(json_t *root, const char *kind, mb_error *err)
{
	json_t *o = json_doc_get(root, "kind", JSON_STRING);

	if (!o || strcmp(json_string_value(o), kind) != 0)
		return set_error(err, -EBADMSG, "field \"kind\" is not \"%s\"", kind);
	if (!(o = json_doc_get(root, "version", JSON_INTEGER)) || json_integer_value(o) != 1)
		return set_error(err, -EBADMSG, "field \"version\" is not 1 (this mboot reads version 1)");
	return 0;
}

int json_doc_open(const char *text, size_t size, size_t max, const char *what, const char *kind, json_t **ret,
		   mb_error *err)
{
	json_t *root;
	int r;

	*ret = NULL;
	if (size > max || size > INT_MAX)
		return set_error(err, -E2BIG, "%s larger than %zu bytes", what, max);
	r = json_doc_parse_text(text, size, &root, err);
	if (r < 0)
		return r;
	r = json_doc_check_kind(root, kind, err);
	if (r < 0) {
		json_decref(root);
		return r;
	}
	*ret = root;
	return 0;
}

char *json_doc_finish(json_t *root, json_build_mark mark)
{
	char *text = json_write_built(root, JSON_LAYOUT_PRETTY, mark), *out;
	size_t n;

	json_decref(root);
	if (!text)
		return NULL;
	n = strlen(text);
	out = realloc(text, n + 2);
	if (!out) {
		free(text);
		return NULL;
	}
	memcpy(out + n, "\n", 2);
	return out;
}

int json_doc_hex(json_t *o, const char *key, const char *name, uint8_t *out, size_t size, mb_error *err)
{
	json_t *v = json_doc_get(o, key, JSON_STRING);

	if (!v || (size_t) json_string_length(v) != 2 * size ||
	    hex_parse(json_string_value(v), 2 * size, out, size) < 0)
		return set_error(err, -EBADMSG, "field \"%s\" is not %zu bytes of hex", name, size);
	return 0;
}

json_t *json_doc_get(json_t *o, const char *key, json_type type)
{
	json_t *v = NULL;

	if (!(v = json_object_get(o, key)) || json_typeof(v) != type)
		return NULL;
	return v;
}

int json_doc_b64(json_t *root, const char *key, size_t max, bool optional, uint8_t **ret, size_t *ret_size,
		   mb_error *err)
{
	json_t *v = NULL;
	int r;

	if (!(v = json_object_get(root, key)) || json_is_null_or_absent(v)) {
		if (optional)
			return 0;
		return set_error(err, -EBADMSG, "field \"%s\" is missing", key);
	}
	if (!json_is_string(v))
		return set_error(err, -EBADMSG, "field \"%s\" is not a string", key);
	r = base64_decode(json_string_value(v), (size_t) json_string_length(v), max, ret, ret_size);
	if (r == -E2BIG)
		return set_error(err, -E2BIG, "field \"%s\" is larger than %zu bytes", key, max);
	if (r == -ENOMEM)
		return set_error(err, r, "out of memory");
	if (r < 0)
		return set_error(err, -EBADMSG, "field \"%s\" is not valid base64", key);
	return 0;
}

json_t *json_doc_b64_obj(const uint8_t *p, size_t n)
{
	char *s = base64_encode(p, n);
	json_t *o;

	if (!s) {
		json_build_note_failure();
		return NULL;
	}
	o = json_text(s);
	free(s);
	return o;
}
