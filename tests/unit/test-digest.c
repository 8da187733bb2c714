/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The five TPM banks' digests (src/lib/digest, OpenSSL's EVP) against published vectors: "abc"
 * from FIPS 180-4's examples (SHA-1, SHA-2) and GB/T 32905-2016's (SM3). A large input, in one
 * call and streamed in uneven pieces, is held to EVP_Digest by the legacy name lookup.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <openssl/evp.h>

#include <mboot/digest.h>
#include "shared/hex.h"

static void check_hex(const uint8_t *got, size_t n, const char *want)
{
	char hex[2 * MB_DIGEST_MAX + 1];

	assert_true(n * 2 < sizeof(hex));
	hex_format(got, n, hex);
	assert_string_equal(hex, want);
}

static void test_vectors(void **state)
{
	static const struct {
		uint16_t alg;
		const char *abc;
	} v[] = {
		{ MB_ALG_SHA1, "a9993e364706816aba3e25717850c26c9cd0d89d" },
		{ MB_ALG_SHA256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ MB_ALG_SHA384, "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed"
				 "8086072ba1e7cc2358baeca134c825a7" },
		{ MB_ALG_SHA512, "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
				 "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f" },
		{ MB_ALG_SM3_256, "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0" },
	};
	uint8_t out[MB_DIGEST_MAX];

	(void) state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		const mb_digest_info *d = mb_digest_by_alg(v[i].alg);
		mb_digest_ctx *ctx;

		assert_non_null(d);
		assert_int_equal(mb_digest(v[i].alg, "abc", 3, out), 0);
		check_hex(out, d->size, v[i].abc);
		/* streamed a byte at a time */
		assert_int_equal(mb_digest_ctx_new(v[i].alg, &ctx), 0);
		for (size_t k = 0; k < 3; k++)
			assert_int_equal(mb_digest_ctx_update(ctx, &"abc"[k], 1), 0);
		assert_int_equal(mb_digest_ctx_final(ctx, out), 0);
		mb_digest_ctx_free(ctx);
		check_hex(out, d->size, v[i].abc);
	}
	assert_int_equal(mb_digest(0x0004 + 0x1000, "abc", 3, out), -EOPNOTSUPP);
}

/* An extend is H(pcr || digest): SHA-256 of 64 zero bytes for a zero PCR and a zero digest
 * (sha256sum of /dev/zero's first 64 bytes). */
static void test_extend(void **state)
{
	uint8_t pcr[32] = { 0 }, d[32] = { 0 };

	(void) state;
	assert_int_equal(mb_digest_extend(MB_ALG_SHA256, pcr, d), 0);
	check_hex(pcr, 32, "f5a5fd42d16a20302798ef6ed309979b43003d2320d9f0e8ea9831a92759fb4b");
}

/* Each bank of 5 MiB + 7 bytes, three ways: mb_digest in one call, a context fed in pieces,
 * and OpenSSL's EVP_Digest. */
static void test_bulk(void **state)
{
	static const char *const names[] = { "SHA1", "SHA256", "SHA384", "SHA512", "SM3" };
	size_t n = (5u << 20) + 7;
	uint8_t *buf = malloc(n);

	(void) state;
	assert_non_null(buf);
	for (size_t i = 0; i < n; i++)
		buf[i] = (uint8_t) (i * 2654435761u >> 13);
	for (size_t i = 0; i < mb_digest_count(); i++) {
		const mb_digest_info *d = mb_digest_at(i);
		uint8_t one[MB_DIGEST_MAX], pieces[MB_DIGEST_MAX], ref[EVP_MAX_MD_SIZE];
		unsigned int ref_len = 0;
		mb_digest_ctx *ctx;

		assert_int_equal(mb_digest(d->alg, buf, n, one), 0);

		assert_int_equal(mb_digest_ctx_new(d->alg, &ctx), 0);
		for (size_t off = 0; off < n; off += 65521)
			assert_int_equal(mb_digest_ctx_update(ctx, buf + off, n - off < 65521 ? n - off : 65521), 0);
		assert_int_equal(mb_digest_ctx_final(ctx, pieces), 0);
		mb_digest_ctx_free(ctx);

		assert_int_equal(EVP_Digest(buf, n, ref, &ref_len, EVP_get_digestbyname(names[i]), NULL), 1);
		assert_int_equal(ref_len, d->size);
		assert_memory_equal(one, ref, d->size);
		assert_memory_equal(pieces, ref, d->size);
	}
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_extend),
		cmocka_unit_test(test_bulk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
