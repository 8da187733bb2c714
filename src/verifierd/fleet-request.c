/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pieces of a request a machine or an operator controls: ids, nonces, the enroll body. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shared/fail.h"
#include "shared/hex.h"
#include "shared/json.h"
#include "verifierd/fleet-internal.h"

/* Longest interval a machine may ask for: a year (its stale mark is twice that). */
#define FLEET_INTERVAL_MAX (366 * 24 * 3600)
/* The enroll body is an object holding the request, whose deepest value is a few levels down. */
#define FLEET_BODY_DEPTH 16

bool fleet_id_valid(const char *id, size_t n)
{
	size_t i;

	if (n < 1 || n > FLEET_ID_MAX || id[0] == '.')
		return false;
	for (i = 0; i < n; i++) {
		char c = id[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
		      c == '_' || c == '-'))
			return false;
	}
	return true;
}

int fleet_nonce_parse(const char *hex, char out[2 * MB_ATTEST_NONCE_MAX + 1], uint8_t *bytes, size_t *ret_size)
{
	size_t n = hex ? strlen(hex) : 0;

	if (n % 2 || n < 2 * MB_ATTEST_NONCE_MIN || n > 2 * MB_ATTEST_NONCE_MAX)
		return -EINVAL;
	if (hex_parse(hex, n, bytes, n / 2) < 0)
		return -EINVAL;
	/* the nonce as the store keys it: lowercase, whatever case the machine sent */
	hex_format(bytes, n / 2, out);
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
	json_t *root = NULL, *v;
	int r;

	memset(ret, 0, sizeof(*ret));
	r = untrusted_json_parse(body, size, FLEET_BODY_DEPTH, &root, err);
	if (r < 0)
		return prefix_error(err, r, "the enroll body");
	if (!json_is_object(root)) {
		r = set_error(err, -EBADMSG, "the enroll body is not a JSON object");
		goto out;
	}
	if (!(v = json_object_get(root, "machine_id")) || !json_is_string(v)) {
		r = set_error(err, -EBADMSG, "the enroll body: \"machine_id\" is missing or not a string");
		goto out;
	}
	if (!fleet_id_valid(json_string_value(v), (size_t) json_string_length(v))) {
		r = set_error(err, -EBADMSG,
			      "the enroll body: \"machine_id\" is not 1 to 64 of [A-Za-z0-9._-] not starting with '.'");
		goto out;
	}
	ret->machine_id = strdup(json_string_value(v));
	if (((v = json_object_get(root, "interval")) != NULL) && v) {
		int64_t i = json_integer_value(v);

		if (!json_is_integer(v) || i < 1 || i > FLEET_INTERVAL_MAX) {
			r = set_error(err, -EBADMSG, "the enroll body: \"interval\" is not a whole number of seconds from 1 to %d",
				      FLEET_INTERVAL_MAX);
			goto out;
		}
		ret->interval = i;
	}
	if (!(v = json_object_get(root, "request")) || !json_is_object(v)) {
		r = set_error(err, -EBADMSG, "the enroll body: \"request\" is missing or not an object");
		goto out;
	}
	/* The parser keeps no offsets to slice the request's own text; it refused any duplicate
	 * key, so printing the tree again loses nothing the library would read. */
	ret->request = json_write(v, JSON_LAYOUT_COMPACT);
	if (!ret->machine_id || !ret->request) {
		r = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	ret->request_size = strlen(ret->request);
out:
	json_decref(root);
	if (r < 0)
		fleet_enroll_body_done(ret);
	return r;
}
