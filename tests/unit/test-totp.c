/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* TOTP: the RFC 6238 Appendix B vectors, RFC 4648 base32 vectors, and oathtool at test time. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <mboot/mboot.h>

static void test_rfc6238_appendix_b(void **state)
{
	static const char k1[] = "12345678901234567890";
	static const char k256[] = "12345678901234567890123456789012";
	static const char k512[] = "1234567890123456789012345678901234567890123456789012345678901234";
	static const struct {
		uint64_t t;
		uint32_t sha1, sha256, sha512;
	} v[] = {
		{ 59ull, 94287082, 46119246, 90693936 },
		{ 1111111109ull, 7081804, 68084774, 25091201 },
		{ 1111111111ull, 14050471, 67062674, 99943326 },
		{ 1234567890ull, 89005924, 91819424, 93441116 },
		{ 2000000000ull, 69279037, 90698825, 38618901 },
		{ 20000000000ull, 65353130, 77737706, 47863826 },
	};
	size_t i;
	uint32_t code;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		assert_int_equal(mb_totp((const uint8_t *) k1, 20, v[i].t, 30, 0, 8, MB_ALG_SHA1, &code), 0);
		assert_int_equal(code, v[i].sha1);
		assert_int_equal(mb_totp((const uint8_t *) k256, 32, v[i].t, 30, 0, 8, MB_ALG_SHA256, &code), 0);
		assert_int_equal(code, v[i].sha256);
		assert_int_equal(mb_totp((const uint8_t *) k512, 64, v[i].t, 30, 0, 8, MB_ALG_SHA512, &code), 0);
		assert_int_equal(code, v[i].sha512);
	}
	/* Refused: no seed, step 0, 5 digits, an unknown algorithm. */
	assert_int_equal(mb_totp((const uint8_t *) k1, 0, 59, 30, 0, 8, MB_ALG_SHA1, &code), -EINVAL);
	assert_int_equal(mb_totp((const uint8_t *) k1, 20, 59, 0, 0, 8, MB_ALG_SHA1, &code), -EINVAL);
	assert_int_equal(mb_totp((const uint8_t *) k1, 20, 59, 30, 0, 5, MB_ALG_SHA1, &code), -EINVAL);
	assert_int_equal(mb_totp((const uint8_t *) k1, 20, 59, 30, 0, 6, MB_ALG_SM3_256, &code), -EINVAL);
}

static void test_base32_rfc4648(void **state)
{
	static const char *const in[] = { "", "f", "fo", "foo", "foob", "fooba", "foobar" };
	static const char *const out[] = { "", "MY", "MZXQ", "MZXW6", "MZXW6YQ", "MZXW6YTB", "MZXW6YTBOI" };
	size_t i;

	for (i = 0; i < 7; i++) {
		char *s = mb_base32_encode((const uint8_t *) in[i], strlen(in[i]));

		assert_non_null(s);
		assert_string_equal(s, out[i]);
		free(s);
	}
}

/* oathtool (an independent implementation) on random seeds and times, 6 digits, SHA-1. */
static void test_against_oathtool(void **state)
{
	FILE *r = fopen("/dev/urandom", "rb");
	int n;

	assert_non_null(r);
	for (n = 0; n < 20; n++) {
		uint8_t seed[20];
		uint64_t t;
		uint32_t code;
		char cmd[256], hex[41], line[64];
		FILE *p;
		int i;

		assert_int_equal(fread(seed, 1, sizeof(seed), r), sizeof(seed));
		assert_int_equal(fread(&t, 1, sizeof(t), r), sizeof(t));
		t %= 4000000000ull;
		for (i = 0; i < 20; i++)
			sprintf(hex + 2 * i, "%02x", seed[i]);
		snprintf(cmd, sizeof(cmd), "oathtool --totp=sha1 -d 6 -N @%llu %s", (unsigned long long) t, hex);
		p = popen(cmd, "r");
		assert_non_null(p);
		assert_non_null(fgets(line, sizeof(line), p));
		assert_int_equal(pclose(p), 0);
		assert_int_equal(mb_totp(seed, 20, t, 30, 0, 6, MB_ALG_SHA1, &code), 0);
		assert_int_equal(code, (uint32_t) strtoul(line, NULL, 10));
	}
	fclose(r);
}

static void test_uri(void **state)
{
	static const uint8_t seed[] = "12345678901234567890";
	char *uri = mb_totp_uri(seed, 20, "mboot", "host name", 6, 30, MB_ALG_SHA1);

	assert_non_null(uri);
	assert_string_equal(uri, "otpauth://totp/mboot:host%20name?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
				 "&issuer=mboot&algorithm=SHA1&digits=6&period=30");
	free(uri);
}

/* The sealed form: settings and seed round-trip; a seed sealed before the header is read with
 * init's old settings; a header with impossible settings or no seed is refused. */
static void test_secret_pack(void **state)
{
	static const uint8_t seed[20] = "12345678901234567890";
	static const uint8_t expected[13] = { 'M', 'B', 'T', 'O', 'T', 'P', '1', 0, 8, 0, 0, 0, 60 };
	uint8_t out[MB_TOTP_SECRET_MAX], bad[14];
	const uint8_t *got;
	size_t len, got_len;
	mb_totp_settings set = { .digits = 8, .period = 60 }, back;

	(void) state;
	assert_int_equal(mb_totp_secret_pack(seed, sizeof(seed), &set, out, &len), 0);
	assert_int_equal(len, 33);
	assert_memory_equal(out, expected, sizeof(expected));
	assert_int_equal(mb_totp_secret_unpack(out, len, &got, &got_len, &back), 0);
	assert_int_equal(back.digits, 8);
	assert_int_equal(back.period, 60);
	assert_int_equal(got_len, 20);
	assert_memory_equal(got, seed, 20);
	assert_int_equal(mb_totp_secret_unpack(seed, sizeof(seed), &got, &got_len, &back), 0);
	assert_int_equal(back.digits, 6);
	assert_int_equal(back.period, 30);
	assert_ptr_equal(got, seed);
	/* no seed after the header; 11 digits; period 0; cut inside the period */
	assert_int_equal(mb_totp_secret_unpack(out, 13, &got, &got_len, &back), -EBADMSG);
	memcpy(bad, out, sizeof(bad));
	bad[8] = 11;
	assert_int_equal(mb_totp_secret_unpack(bad, sizeof(bad), &got, &got_len, &back), -EBADMSG);
	memcpy(bad, out, sizeof(bad));
	memset(bad + 9, 0, 4);
	assert_int_equal(mb_totp_secret_unpack(bad, sizeof(bad), &got, &got_len, &back), -EBADMSG);
	assert_int_equal(mb_totp_secret_unpack(out, 11, &got, &got_len, &back), -EBADMSG);
	set.digits = 5;
	assert_int_equal(mb_totp_secret_pack(seed, sizeof(seed), &set, out, &len), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc6238_appendix_b),
		cmocka_unit_test(test_base32_rfc4648),
		cmocka_unit_test(test_against_oathtool),
		cmocka_unit_test(test_uri),
		cmocka_unit_test(test_secret_pack),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
