/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Input: any bytes, taken in turn as the three files the verifier reads during enrollment: an
 * enrollment request (mb_attest_challenge_make, trust on first use so that a well-formed one
 * reaches the credential code), a verifier state (checked against a fixed good response), and a
 * response (checked against a fixed good state). A failure must come with a message; what
 * succeeds must be JSON that json-c reads back. The fixed state and response are
 * fuzz/corpus/attest-request/{state,response}.json: tests/data/attest's RSA EK and ECC AK, and
 * a credential of 32 bytes 0x11.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shared/json.h"
#include <mboot/mboot.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define EK "AToAAQALAAMAsgAgg3GXZ0SEs/gakMyNRqXXJP1S124GUgtk8qHaGzMUaaoABgCAAEMAEAgAAAAAAAEAvmjOqB2aNOQx7boUkdVAvKF7c8PmJmE1t+Ngh7BYWIMkQycz/YiBotiL8YUVTJEMHTGWTfghEiNlhnuHyGXSfVqs1kLG9WcnsE/cRBAUpbTxGVoNwqky/26sbm4RjXFdWTf9oDUD0IQLM8N2Xwp89iokBW7FJw8FpWF0A+rTI0BVPnsAwpWmewy9GfMPGsJzwhHYLRO6tExNqUALgj68tyCCstC7N/+AgkM+AhnJ9fpFHYgJb3y/2yC5EIAFimvmw5QTBxAExYsaPBqrdJPpWlo4XrpRg90V6nHKgEYEZdtQjLdsaf3UihJGUtrU4t7HB256E8xx28KanKK2bohIVw=="
#define AK "AFgAIwALAAUAcgAAABAAGAALAAMAEAAgRuGE/VDQEFdtfOYcHUNcfwUfjobdf1WJiGwlMvKRva0AIOr4XWwo7QGzHvvRihylKwvP3wpos+X0W/UA+GnIxmnC"
#define AK_NAME "000b6b54fc0fa6882912146b75c8717ff0e1ff04be099f2a3272873ab96034f2d583"
#define REQUEST \
	"{\"version\": 1, \"kind\": \"mboot-attest-request\", \"ek\": {\"public\": \"" EK "\", \"certificate\": null, " \
	"\"nv_index\": \"0x01c00002\"}, \"ak\": {\"public\": \"" AK "\", \"name\": \"" AK_NAME "\"}}"

static const char state[] =
	"{\"version\": 1, \"kind\": \"mboot-attest-state\", \"credential_sha256\": "
	"\"02d449a31fbb267c8f352e9968a79e3e5fc95c1bbeaa502fd6454ebde5a4bedc\", \"ek_certificate_sha256\": null, "
	"\"request\": " REQUEST ", \"created\": \"2026-12-03T22:00:00Z\"}";
static const char response[] = "{\"version\": 1, \"kind\": \"mboot-attest-response\", \"ak_name\": \"" AK_NAME
			       "\", \"credential\": \"ERERERERERERERERERERERERERERERERERERERERERE=\"}";

static void output(char *text)
{
	json_t *o;

	if (!text || !(o = json_from_text(text)))
		abort();
	json_decref(o);
	free(text);
}

static void judged(int r, const mb_error *err)
{
	if (r < 0 && !err->message[0])
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	mb_attest_challenge_options opts = { .size = sizeof(mb_attest_challenge_options), .allow_no_ek_cert = true };
	const char *text = (const char *) data;
	char *ch = NULL, *st = NULL, *machine = NULL;
	mb_error err = { 0 };
	int r;

	r = mb_attest_challenge_make(text, size, &opts, &ch, &st, &err);
	judged(r, &err);
	if (r >= 0) {
		output(ch);
		output(st);
	} else if (ch || st) {
		abort();
	}

	memset(&err, 0, sizeof(err));
	r = mb_attest_challenge_check(text, size, response, strlen(response), &machine, &err);
	judged(r, &err);
	if (r >= 0)
		output(machine);
	machine = NULL;

	memset(&err, 0, sizeof(err));
	r = mb_attest_challenge_check(state, strlen(state), text, size, &machine, &err);
	judged(r, &err);
	if (r >= 0)
		output(machine);
	return 0;
}
