/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The pure parts of sealing: base64 against RFC 4648 §10's vectors, and the PolicyPCR
 * digest against the value tpm2-tools' trial session (tpm2_startauthsession +
 * tpm2_policypcr -l sha256:0,7) printed on a swtpm whose PCR 0 and 7 were extended
 * with 0x00..01 and 0x00..07 (tpm2_pcrextend); tests/tpm/tpm-seal.sh checks the same
 * against a live trial session on every run.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <mboot/mboot.h>
#include "shared/hex.h"

static void test_base64_rfc4648(void **state)
{
	static const char *const plain[] = { "", "f", "fo", "foo", "foob", "fooba", "foobar" };
	static const char *const enc[] = { "", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy" };
	static const char *const bad[] = { "Zg=", "Zh==", "Zm9=", "Z===", "Zm9v!A==", "Zm=v", "====" };
	size_t i;

	(void) state;
	for (i = 0; i < 7; i++) {
		char *e = mb_base64_encode((const uint8_t *) plain[i], strlen(plain[i]));
		uint8_t *d = NULL;
		size_t n = 0;

		assert_non_null(e);
		assert_string_equal(e, enc[i]);
		assert_int_equal(mb_base64_decode(enc[i], strlen(enc[i]), 64, &d, &n), 0);
		assert_int_equal(n, strlen(plain[i]));
		assert_memory_equal(d, plain[i], n);
		free(d);
		free(e);
	}
	for (i = 0; i < 7; i++) {
		uint8_t *d = NULL;
		size_t n = 0;

		assert_true(mb_base64_decode(bad[i], strlen(bad[i]), 64, &d, &n) < 0);
	}
	{
		uint8_t *d = NULL;
		size_t n = 0;

		assert_int_equal(mb_base64_decode("Zm9vYmFy", 8, 5, &d, &n), -E2BIG);
	}
}

static void set_pcr(mb_pcr_bank *b, unsigned p, const char *hex)
{
	assert_int_equal(mb_unhex(hex, 64, b->value[p], 32), 0);
	b->present |= 1u << p;
}

static void test_policy_pcr_trial_vector(void **state)
{
	mb_pcr_bank b = { .alg = MB_ALG_SHA256, .size = 32 };
	uint8_t got[32], want[32], other[32];
	unsigned p, i;

	(void) state;
	/* tpm2_pcrread after tpm2_pcrextend 0:sha256=00..01 7:sha256=00..07 */
	set_pcr(&b, 0, "90f4b39548df55ad6187a1d20d731ecee78c545b94afd16f42ef7592d99cd365");
	set_pcr(&b, 7, "2ebe6807995c988b9d292b535a81546078d93d753a42bf8d15ddcaf2d84be200");
	assert_int_equal(mb_unhex("f979594e6fd8074655f06b92e7205db9738297c32599129d0e51971ae0b2456d", 64, want, 32), 0);
	assert_int_equal(mb_policy_pcr_digest(NULL, &b, (1u << 0) | (1u << 7), got, NULL), 0);
	assert_memory_equal(got, want, 32);

	/* Every bit of every selected PCR moves the digest (PITFALLS #30); other PCRs do not. */
	for (p = 0; p < 8; p += 7)
		for (i = 0; i < 32; i++) {
			b.value[p][i] ^= 0x01;
			assert_int_equal(mb_policy_pcr_digest(NULL, &b, (1u << 0) | (1u << 7), other, NULL), 0);
			assert_memory_not_equal(other, want, 32);
			b.value[p][i] ^= 0x01;
		}
	set_pcr(&b, 3, "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff");
	assert_int_equal(mb_policy_pcr_digest(NULL, &b, (1u << 0) | (1u << 7), other, NULL), 0);
	assert_memory_equal(other, want, 32);
	/* The selection is part of the digest: the same values under PCRs 0,3,7 differ. */
	assert_int_equal(mb_policy_pcr_digest(NULL, &b, (1u << 0) | (1u << 3) | (1u << 7), other, NULL), 0);
	assert_memory_not_equal(other, want, 32);
	/* A selected PCR without a value is an error, not a digest of garbage. */
	assert_int_equal(mb_policy_pcr_digest(NULL, &b, 1u << 5, other, NULL), -EINVAL);
}

/*
 * tpm-reseal.sh's states: PCR 0 = 0, PCR 7 = extend(0, A) (this boot) and
 * extend(PCR 7, E) (the next), A = SHA256("this boot"), E = SHA256("the update").
 * The PolicyOR of both PolicyPCR(sha256:0,7) branches, as tpm2_policypcr (twice, the
 * second with -f) and tpm2_policyor printed it on a swtpm.
 */
static void test_policy_or_trial_vector(void **state)
{
	mb_pcr_bank b0 = { .alg = MB_ALG_SHA256, .size = 32, .present = 0x81 }, b1;
	uint8_t a[32], e[32], br[2][32], got[32], want[32];

	(void) state;
	assert_int_equal(mb_digest(MB_ALG_SHA256, "this boot", 9, a), 0);
	assert_int_equal(mb_digest(MB_ALG_SHA256, "the update", 10, e), 0);
	assert_int_equal(mb_digest_extend(MB_ALG_SHA256, b0.value[7], a), 0);
	b1 = b0;
	assert_int_equal(mb_digest_extend(MB_ALG_SHA256, b1.value[7], e), 0);
	assert_int_equal(mb_policy_pcr_digest(NULL, &b0, 0x81, br[0], NULL), 0);
	assert_int_equal(mb_policy_pcr_digest(NULL, &b1, 0x81, br[1], NULL), 0);
	assert_int_equal(mb_policy_or_digest((const uint8_t (*)[32]) br, 2, got, NULL), 0);
	assert_int_equal(mb_unhex("46a0320e919e8f53507761ad307c0980e79ea6c0171c9bb3a422c2998f0cf073", 64, want, 32), 0);
	assert_memory_equal(got, want, 32);
	/* The order of the branches is part of the digest; 1 or 9 branches are refused. */
	memcpy(got, br[0], 32);
	memcpy(br[0], br[1], 32);
	memcpy(br[1], got, 32);
	assert_int_equal(mb_policy_or_digest((const uint8_t (*)[32]) br, 2, got, NULL), 0);
	assert_memory_not_equal(got, want, 32);
	assert_int_equal(mb_policy_or_digest((const uint8_t (*)[32]) br, 1, got, NULL), -EINVAL);
	assert_int_equal(mb_policy_or_digest((const uint8_t (*)[32]) br, 9, got, NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_base64_rfc4648),
		cmocka_unit_test(test_policy_pcr_trial_vector),
		cmocka_unit_test(test_policy_or_trial_vector),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
