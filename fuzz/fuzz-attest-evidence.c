/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Input: any bytes, taken as evidence (docs/attest.md) judged by mb_attest_verify for a fixed
 * machine record (tests/data/attest/ak-ecc.pub), and also as a bare TPMS_ATTEST, TPMT_SIGNATURE,
 * machine record and IMA state (mb_attest_ima_state_resume). A refusal must come with a message;
 * a verdict must print as JSON and name a reason unless trusted.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/mboot.h>

#include "lib/attest/attest-verify-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char machine[] =
	"{\"version\": 1, \"kind\": \"mboot-machine\", \"ak_public\": \"AFgAIwALAAUAcgAAABAAGAALAAMAEAAgRuGE/VDQEFdtfOYcH"
	"UNcfwUfjobdf1WJiGwlMvKRva0AIOr4XWwo7QGzHvvRihylKwvP3wpos+X0W/UA+GnIxmnC\", \"ak_name\": "
	"\"000b6b54fc0fa6882912146b75c8717ff0e1ff04be099f2a3272873ab96034f2d583\"}";

/* A verifier that keeps judgments but holds none: the boot key is taken (a carried log decoded
 * and hashed, a named one read), and a named log is then asked for. */
static const mb_attest_verdict *judged_none(const uint8_t key[32], void *ctx)
{
	(void) key;
	(void) ctx;
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t nonce[] = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77 };
	mb_attest_verify_options opts = { .size = sizeof(mb_attest_verify_options), .nonce = nonce, .nonce_size = sizeof(nonce) };
	mb_attest_verdict *v = NULL;
	mb_error err = { 0 };
	quote_attest a;
	quote_signature s;
	attest_machine m;
	char *json;

	if (size > (4u << 20))
		return 0;
	(void) quote_attest_parse(data, size, &a, NULL);
	(void) quote_signature_parse(data, size, &s, NULL);
	if (attest_machine_parse((const char *) data, size, &m, NULL) >= 0)
		attest_machine_done(&m);
	{
		uint64_t entries;
		uint8_t last[20];

		if (mb_attest_ima_state_resume((const char *) data, size, &entries, last, &err) < 0 && !err.message[0])
			abort();
		if (mb_attest_ima_state_resume((const char *) data, size, &entries, last, &err) >= 0 && entries == 0)
			abort();
		mb_error_clear(&err);
	}
	if (mb_attest_verify((const char *) data, size, machine, sizeof(machine) - 1, &opts, &v, &err) < 0) {
		if (!err.message[0])
			abort();
		return 0;
	}
	json = mb_attest_verdict_to_json(v, false);
	if (!json || (!mb_attest_verdict_trusted(v) && mb_attest_verdict_n_reasons(v) == 0))
		abort();
	free(json);
	mb_attest_verdict_free(v);
	opts.judged_lookup = judged_none;
	if (mb_attest_verify((const char *) data, size, machine, sizeof(machine) - 1, &opts, &v, &err) < 0) {
		if (!err.message[0])
			abort();
		return 0;
	}
	{
		uint8_t sha256[32];
		bool carried = false;

		/* a log named and not judged is never trusted */
		if (mb_attest_verdict_eventlog_sha256(v, sha256, &carried) && !carried && mb_attest_verdict_trusted(v))
			abort();
	}
	mb_attest_verdict_free(v);
	return 0;
}
