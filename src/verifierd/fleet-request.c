/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pieces of a request a machine or an operator controls: ids, nonces, the enroll body. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shared/fail.h"
#include "shared/json-read.h"
#include "verifierd/fleet-internal.h"

/* Longest interval a machine may ask for: a year (its stale mark is twice that). */
#define FLEET_INTERVAL_MAX (366 * 24 * 3600)
/* The enroll body is an object holding the request, whose deepest value is a few levels down. */
#define FLEET_BODY_DEPTH 16

bool fleet_id_valid(const char *id, size_t n)
{
	size_t i;

	if (n < 1 || n > 64 || id[0] == '.')
		return false;
	for (i = 0; i < n; i++) {
		char c = id[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
		      c == '_' || c == '-'))
			return false;
	}
	return true;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int fleet_nonce_parse(const char *hex, char out[2 * MB_ATTEST_NONCE_MAX + 1], uint8_t *bytes, size_t *ret_size)
{
	size_t n = hex ? strlen(hex) : 0, i;

	if (n % 2 || n < 2 * MB_ATTEST_NONCE_MIN || n > 2 * MB_ATTEST_NONCE_MAX)
		return -EINVAL;
	for (i = 0; i < n; i += 2) {
		int hi = hexval(hex[i]), lo = hexval(hex[i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		bytes[i / 2] = (uint8_t) (hi << 4 | lo);
		out[i] = "0123456789abcdef"[hi];
		out[i + 1] = "0123456789abcdef"[lo];
	}
	out[n] = 0;
	*ret_size = n / 2;
	return 0;
}

void fleet_enroll_body_done(fleet_enroll_body *b)
{
	free(b->machine_id);
	free(b->request);
	memset(b, 0, sizeof(*b));
}

int fleet_enroll_body_parse(const char *body, size_t size, fleet_enroll_body *ret, mb_error *err)
{
	json_object *root = NULL, *v;
	const char *s;
	int r;

	memset(ret, 0, sizeof(*ret));
	r = untrusted_json_parse(body, size, FLEET_BODY_DEPTH, &root, err);
	if (r < 0)
		return prefix_error(err, r, "the enroll body");
	if (!json_object_is_type(root, json_type_object)) {
		r = set_error(err, -EBADMSG, "the enroll body is not a JSON object");
		goto out;
	}
	if (!json_object_object_get_ex(root, "machine_id", &v) || !json_object_is_type(v, json_type_string)) {
		r = set_error(err, -EBADMSG, "the enroll body: \"machine_id\" is missing or not a string");
		goto out;
	}
	if (!fleet_id_valid(json_object_get_string(v), (size_t) json_object_get_string_len(v))) {
		r = set_error(err, -EBADMSG,
			      "the enroll body: \"machine_id\" is not 1 to 64 of [A-Za-z0-9._-] not starting with '.'");
		goto out;
	}
	ret->machine_id = strdup(json_object_get_string(v));
	if (json_object_object_get_ex(root, "interval", &v) && v) {
		int64_t i = json_object_get_int64(v);

		if (!json_object_is_type(v, json_type_int) || i < 1 || i > FLEET_INTERVAL_MAX) {
			r = set_error(err, -EBADMSG, "the enroll body: \"interval\" is not a whole number of seconds from 1 to %d",
				      FLEET_INTERVAL_MAX);
			goto out;
		}
		ret->interval = i;
	}
	if (!json_object_object_get_ex(root, "request", &v) || !json_object_is_type(v, json_type_object)) {
		r = set_error(err, -EBADMSG, "the enroll body: \"request\" is missing or not an object");
		goto out;
	}
	/* json-c keeps no offsets to slice the request's own text; the strict reader refused any
	 * duplicate key, so printing the tree again loses nothing the library would read. */
	s = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	ret->request = s ? strdup(s) : NULL;
	if (!ret->machine_id || !ret->request) {
		r = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	ret->request_size = strlen(ret->request);
out:
	json_object_put(root);
	if (r < 0)
		fleet_enroll_body_done(ret);
	return r;
}
