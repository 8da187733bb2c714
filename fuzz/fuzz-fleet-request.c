/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Input: any bytes, taken as what a machine sends mboot-verifierd without any credential: the
 * body of POST /v1/enroll (its request then goes to mb_attest_challenge_make, trust on first
 * use so that a well-formed one reaches the credential code), a machine id from a path and a
 * nonce from a query. A refusal must come with a message; an accepted body must have a valid
 * id, an interval in range and a request that is a JSON object.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "verifierd/fleet-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	mb_attest_challenge_options opts = { .size = sizeof(mb_attest_challenge_options), .allow_no_ek_cert = true };
	char norm[2 * MB_ATTEST_NONCE_MAX + 1], *challenge = NULL, *state = NULL, *text;
	uint8_t nonce[MB_ATTEST_NONCE_MAX];
	fleet_enroll_body b;
	mb_error err = { 0 };
	json_t *o;
	size_t n;

	/* The server hands bodies over NUL-terminated. */
	text = malloc(size + 1);
	if (!text)
		abort();
	memcpy(text, data, size);
	text[size] = 0;
	if (fleet_enroll_body_parse(text, size, &b, &err) < 0) {
		if (!err.message[0])
			abort();
	} else {
		if (!fleet_id_valid(b.machine_id, strlen(b.machine_id)) || b.interval < 0 ||
		    b.request_size != strlen(b.request))
			abort();
		o = json_from_text(b.request);
		if (!json_is_object(o))
			abort();
		json_decref(o);
		mb_error_clear(&err);
		if (mb_attest_challenge_make(b.request, b.request_size, &opts, &challenge, &state, &err) < 0) {
			if (!err.message[0])
				abort();
		} else if (!challenge || !state)
			abort();
		free(challenge);
		free(state);
		fleet_enroll_body_done(&b);
	}
	(void) fleet_id_valid(text, size);
	if (fleet_nonce_parse(text, norm, nonce, &n) == 0 && (n < MB_ATTEST_NONCE_MIN || strlen(norm) != 2 * n))
		abort();
	free(text);
	return 0;
}
