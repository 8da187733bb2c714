/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The quote's TPM structures (TPMS_ATTEST, TPMT_SIGNATURE) and the evidence reader, on hostile input. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/attest/attest-verify-internal.h"
#include "lib/attest/quote-decode.h"
#include "shared/hex.h"

/* What tpm2_quote (tpm2-tools 5.4) returned from a swtpm for -l sha1:all+sha256:all -q 0011223344556677;
 * tpm2_quote's own YAML gave the same clock (247), resetCount (2), firmwareVersion and pcrDigest. */
static const char swtpm_quote[] =
	"ff54434780180022000b5127d1189496978be7ac3cebcf1b9893e148a3c9cca5e84c6cebc71814cb6428000800112233"
	"4455667700000000000000f7000000020000000000201910230016363600000002000403ffffff000b03ffffff00201a"
	"253909533962db52412da93b9757ee1f99c100e187af3d32e00d006e0db42b";

static size_t unhex_all(const char *h, uint8_t *out)
{
	size_t n = strlen(h) / 2;

	assert_int_equal(hex_parse(h, 2 * n, out, n), 0);
	return n;
}

static void test_real_quote(void **state)
{
	uint8_t b[256], digest[32];
	size_t n = unhex_all(swtpm_quote, b);
	quote_attest a;

	(void) state;
	assert_int_equal(quote_attest_parse(b, n, &a, NULL), 0);
	assert_true(a.magic == TPM_GENERATED_VALUE);
	assert_int_equal(a.type, TPM_ST_ATTEST_QUOTE);
	assert_int_equal(a.signer_size, 34);
	assert_int_equal(a.extra_size, 8);
	assert_memory_equal(a.extra, "\x00\x11\x22\x33\x44\x55\x66\x77", 8);
	assert_true(a.clock == 247);
	assert_int_equal(a.reset_count, 2);
	assert_int_equal(a.restart_count, 0);
	assert_int_equal(a.safe, 0);
	assert_true(a.firmware_version == 0x2019102300163636ull);
	assert_int_equal(a.n_selections, 2);
	assert_int_equal(a.selections[0].hash, 0x0004);
	assert_int_equal(a.selections[0].mask, 0xffffff);
	assert_int_equal(a.selections[1].hash, 0x000b);
	assert_int_equal(a.selections[1].mask, 0xffffff);
	assert_int_equal(a.pcr_digest_size, 32);
	unhex_all("1a253909533962db52412da93b9757ee1f99c100e187af3d32e00d006e0db42b", digest);
	assert_memory_equal(a.pcr_digest, digest, 32);
}

static void test_quote_truncated_and_trailing(void **state)
{
	uint8_t b[256];
	size_t n = unhex_all(swtpm_quote, b), i;
	quote_attest a;
	mb_error err = { 0 };

	(void) state;
	/* every proper prefix is refused, with a message, never read past */
	for (i = 0; i < n; i++) {
		uint8_t *copy = malloc(i ? i : 1);

		memcpy(copy, b, i);
		assert_int_equal(quote_attest_parse(copy, i, &a, &err), -EBADMSG);
		assert_true(err.message[0] != 0);
		free(copy);
	}
	b[n] = 0;
	assert_int_equal(quote_attest_parse(b, n + 1, &a, &err), -EBADMSG);
	assert_non_null(strstr(err.message, "after the quote info"));
}

static void test_quote_caps(void **state)
{
	uint8_t b[256], big[QUOTE_ATTEST_MAX + 1] = { 0 };
	size_t n = unhex_all(swtpm_quote, b);
	quote_attest a;
	uint8_t c[256];
	mb_error err = { 0 };

	(void) state;
	/* 17 banks in TPML_PCR_SELECTION (at 0x4d) */
	memcpy(c, b, n);
	c[0x50] = 17;
	assert_int_equal(quote_attest_parse(c, n, &a, NULL), -E2BIG);
	/* sizeofSelect 5 */
	memcpy(c, b, n);
	c[0x53] = 5;
	assert_int_equal(quote_attest_parse(c, n, &a, &err), -E2BIG);
	assert_non_null(strstr(err.message, "sizeofSelect 5"));
	/* extraData of 67 bytes (its size at 0x2a) */
	memcpy(c, b, n);
	c[0x2a] = 0;
	c[0x2b] = 67;
	assert_int_equal(quote_attest_parse(c, n, &a, NULL), -E2BIG);
	/* qualifiedSigner of 0xffff bytes */
	memcpy(c, b, n);
	c[6] = c[7] = 0xff;
	assert_int_equal(quote_attest_parse(c, n, &a, NULL), -E2BIG);
	/* safe must be YES or NO */
	memcpy(c, b, n);
	c[0x44] = 2;
	assert_int_equal(quote_attest_parse(c, n, &a, NULL), -EBADMSG);
	assert_int_equal(quote_attest_parse(big, sizeof(big), &a, NULL), -E2BIG);
	/* another type and another magic decode: judging them is the verifier's */
	memcpy(c, b, n);
	c[3] = 0x48;
	c[5] = 0x19;
	assert_int_equal(quote_attest_parse(c, n, &a, NULL), 0);
	assert_int_equal(a.type, 0x8019);
	assert_true(a.magic == 0xff544348u);
	assert_int_equal(a.n_selections, 0);
}

static void test_signature(void **state)
{
	/* ECDSA, SHA-256, r and s of 2 bytes each */
	static const uint8_t ecdsa[] = { 0x00, 0x18, 0x00, 0x0b, 0x00, 0x02, 0x12, 0x34, 0x00, 0x02, 0x56, 0x78 };
	uint8_t b[1100] = { 0 };
	quote_signature s;
	mb_error err = { 0 };
	size_t i;

	(void) state;
	assert_int_equal(quote_signature_parse(ecdsa, sizeof(ecdsa), &s, NULL), 0);
	assert_int_equal(s.alg, QUOTE_SIG_ECDSA);
	assert_int_equal(s.hash, 0x000b);
	assert_int_equal(s.a_size, 2);
	assert_int_equal(s.b_size, 2);
	assert_memory_equal(s.b, "\x56\x78", 2);
	for (i = 0; i < sizeof(ecdsa); i++)
		assert_int_equal(quote_signature_parse(ecdsa, i, &s, &err), -EBADMSG);
	memcpy(b, ecdsa, sizeof(ecdsa));
	assert_int_equal(quote_signature_parse(b, sizeof(ecdsa) + 1, &s, &err), -EBADMSG);
	/* an RSA signature of 513 bytes */
	b[0] = 0x00, b[1] = 0x14, b[2] = 0x00, b[3] = 0x0b, b[4] = 0x02, b[5] = 0x01;
	assert_int_equal(quote_signature_parse(b, 6 + 513, &s, NULL), -E2BIG);
	/* 512 is the most */
	b[5] = 0x00;
	assert_int_equal(quote_signature_parse(b, 6 + 512, &s, NULL), 0);
	assert_int_equal(s.a_size, 512);
	/* an ECC parameter of 67 bytes */
	b[1] = 0x18, b[4] = 0, b[5] = 67;
	assert_int_equal(quote_signature_parse(b, 6 + 67 + 2, &s, NULL), -E2BIG);
	/* unknown algorithm; NULL; HMAC with an unknown hash */
	b[1] = 0x99;
	assert_int_equal(quote_signature_parse(b, 2, &s, NULL), -EOPNOTSUPP);
	b[1] = 0x10;
	assert_int_equal(quote_signature_parse(b, 2, &s, NULL), 0);
	b[1] = 0x05, b[2] = 0x00, b[3] = 0x77;
	assert_int_equal(quote_signature_parse(b, 4, &s, NULL), -EOPNOTSUPP);
	assert_int_equal(quote_signature_parse(b, sizeof(b), &s, NULL), -E2BIG);
}

static int evidence(const char *pcrs, attest_evidence *e, mb_error *err)
{
	char text[2048];

	/* attest: the swtpm quote; signature: the ECDSA one above; ak_public: any bytes (not decoded here) */
	snprintf(text, sizeof(text),
		 "{\"version\": 1, \"kind\": \"mboot-evidence\", \"quote\": {\"attest\": "
		 "\"/1RDR4AYACIAC1En0RiUlpeL56w8688bmJPhSKPJzKXoTGzrxxgUy2QoAAgAESIzRFVmdwAAAAAAAAD3AAAAAgAAAAAAIBkQIwA"
		 "WNjYAAAACAAQD////AAsD////ACAaJTkJUzli21JBLak7l1fuH5nBAOGHrz0y4A0Abg20Kw==\", "
		 "\"signature\": \"ABgACwACEjQAAlZ4\"}, \"pcrs\": %s, \"ak_public\": \"AAE=\", \"eventlog\": null}",
		 pcrs);
	return attest_evidence_parse(text, strlen(text), e, err);
}

static void test_evidence_reader(void **state)
{
	attest_evidence e;
	mb_error err = { 0 };
	char zeros[65];

	(void) state;
	memset(zeros, '0', 64);
	zeros[64] = 0;
	{
		char p[256];

		snprintf(p, sizeof(p), "{\"banks\": {\"sha256\": {\"0\": \"%s\", \"23\": \"%s\"}}}", zeros, zeros);
		assert_int_equal(evidence(p, &e, &err), 0);
		assert_int_equal(mb_pcr_values_present(e.pcrs, 0x000b), 0x800001);
		assert_int_equal(e.quote.reset_count, 2);
		assert_int_equal(e.sig.alg, QUOTE_SIG_ECDSA);
		assert_null(e.eventlog);
		attest_evidence_done(&e);
		snprintf(p, sizeof(p), "{\"banks\": {\"sha256\": {\"24\": \"%s\"}}}", zeros);
		assert_int_equal(evidence(p, &e, &err), -EBADMSG);
		snprintf(p, sizeof(p), "{\"banks\": {\"sha256\": {\"01\": \"%s\"}}}", zeros);
		assert_int_equal(evidence(p, &e, &err), -EBADMSG);
		snprintf(p, sizeof(p), "{\"banks\": {\"sha256\": {\"1\": \"%.62s\"}}}", zeros);
		assert_int_equal(evidence(p, &e, &err), -EBADMSG);
		snprintf(p, sizeof(p), "{\"banks\": {\"sha256\": {\"1\": \"%s\", \"1\": \"%s\"}}}", zeros, zeros);
		assert_int_equal(evidence(p, &e, &err), -EBADMSG);
		snprintf(p, sizeof(p), "{\"banks\": {\"md5\": {}}}");
		assert_int_equal(evidence(p, &e, &err), -EOPNOTSUPP);
		assert_int_equal(evidence("{}", &e, &err), -EBADMSG);
		assert_int_equal(evidence("[]", &e, &err), -EBADMSG);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_quote),
		cmocka_unit_test(test_quote_truncated_and_trailing),
		cmocka_unit_test(test_quote_caps),
		cmocka_unit_test(test_signature),
		cmocka_unit_test(test_evidence_reader),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
