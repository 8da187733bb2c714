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

#include <openssl/evp.h>

#include <mboot/mboot.h>
#include "lib/seal/sealed-internal.h" /* the tests link the static core: the policy setter is internal */
#include "shared/hex.h"
#include "shared/base64.h"

/* Every byte value in every position of a first and of a last quantum: decoded as OpenSSL's
 * EVP_DecodeBlock decodes it (the two take different paths in mboot's decoder). */
static void test_base64_every_byte(void **state)
{
	int c, pos;

	(void) state;
	for (pos = 0; pos < 8; pos++)
		for (c = 0; c < 256; c++) {
			char in[9] = "QUJDREVG";
			unsigned char want[8];
			uint8_t *got = NULL;
			size_t n = 0;
			int ours, theirs;

			if (c == '=' || c == 0)
				continue; /* padding only at the end (and then canonical); NUL never */
			in[pos] = (char) c;
			/* EVP_DecodeBlock skips blanks before and after: those are not base64 here */
			theirs = c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v' ?
				 EVP_DecodeBlock(want, (const unsigned char *) in, 8) : -1;
			ours = base64_decode(in, 8, 64, &got, &n);
			assert_int_equal(ours == 0, theirs == 6);
			if (ours == 0) {
				assert_int_equal(n, 6);
				assert_memory_equal(got, want, 6);
			}
			free(got);
		}
}

static void test_base64_rfc4648(void **state)
{
	static const char *const plain[] = { "", "f", "fo", "foo", "foob", "fooba", "foobar" };
	static const char *const enc[] = { "", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy" };
	static const char *const bad[] = { "Zg=", "Zh==", "Zm9=", "Z===", "Zm9v!A==", "Zm=v", "====" };
	size_t i;

	(void) state;
	for (i = 0; i < 7; i++) {
		char *e = base64_encode((const uint8_t *) plain[i], strlen(plain[i]));
		uint8_t *d = NULL;
		size_t n = 0;

		assert_non_null(e);
		assert_string_equal(e, enc[i]);
		assert_int_equal(base64_decode(enc[i], strlen(enc[i]), 64, &d, &n), 0);
		assert_int_equal(n, strlen(plain[i]));
		assert_memory_equal(d, plain[i], n);
		free(d);
		free(e);
	}
	for (i = 0; i < 7; i++) {
		uint8_t *d = NULL;
		size_t n = 0;

		assert_true(base64_decode(bad[i], strlen(bad[i]), 64, &d, &n) < 0);
	}
	{
		uint8_t *d = NULL;
		size_t n = 0;

		assert_int_equal(base64_decode("Zm9vYmFy", 8, 5, &d, &n), -E2BIG);
	}
}

static void set_pcr(mb_pcr_bank *b, unsigned p, const char *hex)
{
	assert_int_equal(hex_parse(hex, 64, b->value[p], 32), 0);
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
	assert_int_equal(hex_parse("f979594e6fd8074655f06b92e7205db9738297c32599129d0e51971ae0b2456d", 64, want, 32), 0);
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
	assert_int_equal(hex_parse("46a0320e919e8f53507761ad307c0980e79ea6c0171c9bb3a422c2998f0cf073", 64, want, 32), 0);
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

/*
 * sealed_set_policy against tpm2-tools, on a swtpm (swtpm socket --tpm2 --flags
 * startup-clear) after tpm2_pcrextend 1:sha256=SHA256("one") 4:sha256=SHA256("four"),
 * at the time of writing:
 *   current  = tpm2_pcrread sha256:1,4 (below);
 *   branch 0 = tpm2_startauthsession -S s.ctx; tpm2_policypcr -S s.ctx -l sha256:1,4 -L b0.dig
 *   branch 1 = the same with -f next.bin (PCR 1 || PCR 4 after a further extend of PCR 4 by
 *              SHA256("five"), which tpm2_pcrextend + tpm2_pcrread confirmed) -L b1.dig
 *   OR       = tpm2_policyor -S s.ctx -l sha256:b0.dig,b1.dig -L or.dig
 *   sha1     = tpm2_policypcr -S s.ctx -l sha1:1,4 (both PCRs all zero in that bank)
 */
#define CUR_PCR1 "c7e3347570821fed43690c2125ce36b1fb0ca7787ba0f219b8e75ee0fc7b4644"
#define CUR_PCR4 "84002a163c8b9f4f25eba9bea671d386902940115aa8fda33ecd195e9a94d7e7"
#define NEXT_PCR4 "9e9af3dbaf030e89046ad91d3eed4ee2973dacc7e6e2c31893c0e652d6923b08"
#define TRIAL_BRANCH0 "2b1dcdb8567a025cc8f5bd5730fab1645ab133bb8e7ea4854ee688ae2a540618"
#define TRIAL_BRANCH1 "646204930d099e090aadce6ca6ef26a64d52c15ac0e8bbe95ee20a9fdcc05c62"
#define TRIAL_OR "6dbac6af5937eacf52472e27bd4024ad384f6a6c20eb1ea30905088581547716"
#define TRIAL_SHA1 "4ae74d22964f96db5330035003fa354427b6a8931afeddd5aa304c583d4fb200"

static void assert_hex_equal(const uint8_t *got, const char *want_hex)
{
	uint8_t want[32];

	assert_int_equal(hex_parse(want_hex, 64, want, 32), 0);
	assert_memory_equal(got, want, 32);
}

static void test_sealed_set_policy_trial_vectors(void **state)
{
	mb_pcr_bank cur = { .alg = MB_ALG_SHA256, .size = 32 }, next, sha1 = { .alg = MB_ALG_SHA1, .size = 20 };
	mb_sealed s = { .version = 1, .mask = (1u << 1) | (1u << 4) };

	(void) state;
	set_pcr(&cur, 1, CUR_PCR1);
	set_pcr(&cur, 4, CUR_PCR4);
	/* a PCR outside the mask: not kept, not in the policy */
	set_pcr(&cur, 9, "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff");
	next = cur;
	assert_int_equal(hex_parse(NEXT_PCR4, 64, next.value[4], 32), 0);

	/* No prediction: one PolicyPCR, tpm2_policypcr's digest. */
	assert_int_equal(sealed_set_policy(&s, &cur, NULL, 0, NULL, NULL), 0);
	assert_int_equal(s.n_branches, 0);
	assert_hex_equal(s.policy, TRIAL_BRANCH0);
	assert_int_equal(s.pcrs.present, s.mask);
	assert_memory_equal(s.pcrs.value[4], cur.value[4], 32);

	/* A prediction that differs: PolicyOR(current, predicted), tpm2_policyor's digest. */
	assert_int_equal(sealed_set_policy(&s, &cur, (const mb_pcr_bank *[]) { &next }, 1, NULL, NULL), 0);
	assert_int_equal(s.n_branches, 2);
	assert_hex_equal(s.branch_digest[0], TRIAL_BRANCH0);
	assert_hex_equal(s.branch_digest[1], TRIAL_BRANCH1);
	assert_hex_equal(s.policy, TRIAL_OR);
	assert_int_equal(s.branch_mask[0], s.mask);
	assert_int_equal(s.branch_mask[1], s.mask);
	assert_int_equal(s.branch[1].present, s.mask);
	assert_memory_equal(s.branch[1].value[4], next.value[4], 32);
	assert_memory_equal(s.pcrs.value[4], cur.value[4], 32);

	/* A prediction equal to the current values in the sealed PCRs: no OR (reseal drops the stale branch). */
	next = cur;
	next.value[9][0] ^= 1;
	assert_int_equal(sealed_set_policy(&s, &cur, (const mb_pcr_bank *[]) { &next }, 1, NULL, NULL), 0);
	assert_int_equal(s.n_branches, 0);
	assert_hex_equal(s.policy, TRIAL_BRANCH0);

	/* Several predictions (reseal to the next default and a fallback): identical states once, the
	 * current values' too; [next, cur, next] is tpm2_policyor's two-branch digest again. */
	next = cur;
	assert_int_equal(hex_parse(NEXT_PCR4, 64, next.value[4], 32), 0);
	{
		const mb_pcr_bank *three[] = { &next, &cur, &next };
		const mb_pcr_bank *many[MB_POLICY_OR_MAX];
		mb_pcr_bank other[MB_POLICY_OR_MAX];
		mb_error err = { 0 };
		size_t i;

		assert_int_equal(sealed_set_policy(&s, &cur, three, 3, NULL, NULL), 0);
		assert_int_equal(s.n_branches, 2);
		assert_hex_equal(s.branch_digest[0], TRIAL_BRANCH0);
		assert_hex_equal(s.branch_digest[1], TRIAL_BRANCH1);
		assert_hex_equal(s.policy, TRIAL_OR);
		/* 7 distinct predictions and today's: 8 branches; an 8th prediction: -E2BIG, s untouched */
		for (i = 0; i < MB_POLICY_OR_MAX; i++) {
			other[i] = cur;
			other[i].value[1][0] ^= (uint8_t) (i + 1);
			many[i] = &other[i];
		}
		assert_int_equal(sealed_set_policy(&s, &cur, many, MB_POLICY_OR_MAX - 1, NULL, NULL), 0);
		assert_int_equal(s.n_branches, MB_POLICY_OR_MAX);
		assert_hex_equal(s.branch_digest[0], TRIAL_BRANCH0);
		assert_int_equal(sealed_set_policy(&s, &cur, many, MB_POLICY_OR_MAX, NULL, &err), -E2BIG);
		assert_int_equal(s.n_branches, MB_POLICY_OR_MAX);
		/* with a window, one fewer */
		{
			sealed_window w = { .index = 0x01800b00, .counter = 1 };

			assert_int_equal(sealed_set_policy(&s, &cur, many, MB_POLICY_OR_MAX - 1, &w, &err), -E2BIG);
			assert_int_equal(sealed_set_policy(&s, &cur, many, MB_POLICY_OR_MAX - 2, &w, &err), 0);
			assert_int_equal(s.n_branches, MB_POLICY_OR_MAX);
		}
	}

	/* Another bank: the session hash stays SHA-256, the values are 20-byte SHA-1 ones. */
	sha1.present = s.mask;
	assert_int_equal(sealed_set_policy(&s, &sha1, NULL, 0, NULL, NULL), 0);
	assert_hex_equal(s.policy, TRIAL_SHA1);
}

static void test_sealed_set_policy_refusals(void **state)
{
	mb_pcr_bank cur = { .alg = MB_ALG_SHA256, .size = 32 }, sha1 = { .alg = MB_ALG_SHA1, .size = 20 };
	mb_sealed s = { .version = 1, .mask = (1u << 1) | (1u << 4) }, before;
	mb_error err = { 0 };

	(void) state;
	set_pcr(&cur, 1, CUR_PCR1);
	set_pcr(&cur, 4, CUR_PCR4);
	assert_int_equal(sealed_set_policy(&s, &cur, NULL, 0, NULL, NULL), 0);
	memcpy(&before, &s, sizeof(s));
	/* a prediction of another bank */
	sha1.present = s.mask;
	assert_int_equal(sealed_set_policy(&s, &cur, (const mb_pcr_bank *[]) { &sha1 }, 1, NULL, &err), -EINVAL);
	/* a sealed PCR without a value, now or predicted */
	cur.present = 1u << 1;
	assert_int_equal(sealed_set_policy(&s, &cur, NULL, 0, NULL, &err), -EINVAL);
	set_pcr(&cur, 4, CUR_PCR4);
	sha1 = cur;
	sha1.present = 1u << 1;
	sha1.value[4][0] ^= 1;
	assert_int_equal(sealed_set_policy(&s, &cur, (const mb_pcr_bank *[]) { &sha1 }, 1, NULL, &err), -EINVAL);
	/* s is untouched by a refusal */
	assert_memory_equal(&s, &before, sizeof(s));
	/* a secret sealed to signed policies has no PCR policy to set */
	s.authorized = true;
	assert_int_equal(sealed_set_policy(&s, &cur, NULL, 0, NULL, &err), -EINVAL);
}

/*
 * mboot's NV counter at 0x01800b00 as tpm2-tools saw it on a swtpm (tests/tpm/tpm-fw-window.sh
 * makes it): tpm2_nvreadpublic's name, and tpm2_policynv -i OPERAND 0x01800b00 eq in a fresh
 * trial session, with operandB 8 big-endian bytes 1, then 2.
 */
static void test_policy_nv_trial_vectors(void **state)
{
	uint8_t name[MB_TPM_NAME_SIZE], got[32], pcr[32];
	mb_error err = { 0 };

	(void) state;
	assert_int_equal(mb_nv_counter_name(MB_NV_COUNTER_DEFAULT, name, NULL), 0);
	assert_hex_equal(name, "000baf5f9e554eb8e61ecc2b2d4d9a41f3352ea912484fa39e5630340647e89b354a");
	assert_int_equal(mb_policy_nv_counter_digest(NULL, name, 1, got, NULL), 0);
	assert_hex_equal(got, "82a45c9db2f33abc66464b7863fa7c3e31d9cb9f8c9a97f6d0b7e9d57a0bc1c8");
	assert_int_equal(mb_policy_nv_counter_digest(NULL, name, 2, got, NULL), 0);
	assert_hex_equal(got, "535a188456c0597a9644fb96d6182e106224ad87106b98660dd64d82a3eba83c");
	/* the previous digest counts: after a PolicyPCR it is another digest */
	memset(pcr, 0x5a, sizeof(pcr));
	assert_int_equal(mb_policy_nv_counter_digest(pcr, name, 1, got, NULL), 0);
	assert_memory_not_equal(got, pcr, 32);
	assert_int_equal(mb_policy_nv_counter_digest(NULL, name, 1, pcr, NULL), 0);
	assert_memory_not_equal(got, pcr, 32);
	/* only the owner range */
	assert_int_equal(mb_nv_counter_name(0x01400000, name, &err), -EINVAL);
	assert_non_null(strstr(err.message, "owner range"));
	assert_int_equal(mb_nv_counter_name(0x01c00002, name, NULL), -EINVAL);
}

/* A window on a secret sealed only to firmware PCRs would open on any boot: refused, s unchanged. */
static void test_window_refusals(void **state)
{
	mb_sealed s = { .mask = 0x3 };
	mb_pcr_bank cur = { .alg = MB_ALG_SHA256, .size = 32, .present = 0x3 };
	sealed_window w = { .index = MB_NV_COUNTER_DEFAULT, .counter = 1 };
	mb_error err = { 0 };

	(void) state;
	assert_int_equal(sealed_set_policy(&s, &cur, NULL, 0, &w, &err), -EINVAL);
	assert_non_null(strstr(err.message, "no PCR but the firmware"));
	assert_false(s.window);
	assert_int_equal(s.n_branches, 0);
	s.mask = 0x83;
	cur.present = 0x83;
	assert_int_equal(sealed_set_policy(&s, &cur, NULL, 0, &w, &err), 0);
	assert_true(s.window);
	assert_int_equal(s.n_branches, 2);
	assert_int_equal(s.branch_mask[1], 0x80);
	w.index = 0x01c00002; /* an EK certificate's index: not the owner's */
	assert_int_equal(sealed_set_policy(&s, &cur, NULL, 0, &w, &err), -EINVAL);
	assert_int_equal(s.window_index, MB_NV_COUNTER_DEFAULT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_base64_rfc4648),
		cmocka_unit_test(test_base64_every_byte),
		cmocka_unit_test(test_policy_pcr_trial_vector),
		cmocka_unit_test(test_policy_or_trial_vector),
		cmocka_unit_test(test_sealed_set_policy_trial_vectors),
		cmocka_unit_test(test_sealed_set_policy_refusals),
		cmocka_unit_test(test_policy_nv_trial_vectors),
		cmocka_unit_test(test_window_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
