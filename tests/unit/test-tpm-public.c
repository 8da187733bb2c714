/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The verifier's TPMT_PUBLIC decoder against tpm2-tools (tests/data/attest/README.md): the
 * Name the TPM reported and the key OpenSSL reads from tpm2_readpublic's PEM; then the same
 * bytes truncated, padded, oversized and with a point off its curve.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <openssl/pem.h>

#include "lib/attest/tpm-public.h"

static uint8_t *load(const char *name, size_t *ret_size)
{
	char path[4096];
	const char *dir = getenv("MB_TESTDATA");
	static uint8_t buf[4096];
	FILE *f;
	uint8_t *copy;

	assert_non_null(dir);
	snprintf(path, sizeof(path), "%s/attest/%s", dir, name);
	f = fopen(path, "rb");
	assert_non_null(f);
	*ret_size = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	copy = malloc(*ret_size ? *ret_size : 1);
	assert_non_null(copy);
	memcpy(copy, buf, *ret_size);
	return copy;
}

static EVP_PKEY *load_pem(const char *name)
{
	size_t size;
	uint8_t *pem = load(name, &size);
	BIO *bio = BIO_new_mem_buf(pem, (int) size);
	EVP_PKEY *pk = PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL);

	BIO_free(bio);
	free(pem);
	assert_non_null(pk);
	return pk;
}

static void check_key(const char *base, uint16_t type, uint32_t want_attrs, uint32_t unwanted_attrs)
{
	char file[64];
	size_t size, name_size;
	uint8_t *pub, *name;
	tpm_public p;
	mb_error err = { 0 };
	EVP_PKEY *from_tpm = NULL, *from_pem;

	snprintf(file, sizeof(file), "%s.pub", base);
	pub = load(file, &size);
	snprintf(file, sizeof(file), "%s.name", base);
	name = load(file, &name_size);
	assert_int_equal(tpm_public_parse(pub, size, &p, &err), 0);
	assert_int_equal(p.type, type);
	assert_int_equal(p.name_alg, TPM_ALG_SHA256);
	assert_int_equal(p.attributes & want_attrs, want_attrs);
	assert_int_equal(p.attributes & unwanted_attrs, 0);
	assert_int_equal(p.name_size, name_size);
	assert_memory_equal(p.name, name, name_size);

	snprintf(file, sizeof(file), "%s.pem", base);
	from_pem = load_pem(file);
	assert_int_equal(tpm_public_to_pkey(&p, &from_tpm, &err), 0);
	assert_int_equal(EVP_PKEY_eq(from_tpm, from_pem), 1);
	assert_true(tpm_public_matches_pkey(&p, from_pem));
	EVP_PKEY_free(from_tpm);
	EVP_PKEY_free(from_pem);
	free(pub);
	free(name);
}

static void test_tpm2_tools_keys(void **state)
{
	(void) state;
	/* EKs: restricted decryption keys (storage parents for the credential); the AK: restricted signing */
	check_key("ek-rsa", TPM_ALG_RSA, TPMA_RESTRICTED | TPMA_DECRYPT | TPMA_FIXED_TPM, TPMA_SIGN);
	check_key("ek-ecc", TPM_ALG_ECC, TPMA_RESTRICTED | TPMA_DECRYPT | TPMA_FIXED_TPM, TPMA_SIGN);
	check_key("ak-ecc", TPM_ALG_ECC, TPMA_RESTRICTED | TPMA_SIGN | TPMA_FIXED_TPM | TPMA_FIXED_PARENT, TPMA_DECRYPT);
}

/* Another key's PEM is not this key. */
static void test_other_key_differs(void **state)
{
	size_t size;
	uint8_t *pub = load("ek-ecc.pub", &size);
	EVP_PKEY *ak = load_pem("ak-ecc.pem");
	tpm_public p;

	(void) state;
	assert_int_equal(tpm_public_parse(pub, size, &p, NULL), 0);
	assert_false(tpm_public_matches_pkey(&p, ak));
	EVP_PKEY_free(ak);
	free(pub);
}

static void test_hostile(void **state)
{
	static const char *const files[] = { "ek-rsa.pub", "ek-ecc.pub", "ak-ecc.pub" };
	size_t f, n, size;
	tpm_public p;
	mb_error err;

	(void) state;
	for (f = 0; f < 3; f++) {
		uint8_t *pub = load(files[f], &size), *longer = malloc(size + 1);

		/* every truncation, through the outer size or inside the area */
		for (n = 0; n < size; n++) {
			mb_error_clear(&err);
			assert_int_equal(tpm_public_parse(pub, n, &p, &err), -EBADMSG);
			assert_true(err.message[0] != '\0');
		}
		/* a byte after the TPM2B, and a TPM2B whose size claims one byte more than the area */
		memcpy(longer, pub, size);
		longer[size] = 0;
		assert_int_equal(tpm_public_parse(longer, size + 1, &p, NULL), -EBADMSG);
		longer[0] = (uint8_t) ((size - 1) >> 8);
		longer[1] = (uint8_t) (size - 1);
		assert_int_equal(tpm_public_parse(longer, size + 1, &p, NULL), -EBADMSG);
		free(longer);
		free(pub);
	}
}

/* An RSA modulus declared longer than any key, and an ECC point off its curve. */
static void test_oversized_and_off_curve(void **state)
{
	size_t size;
	uint8_t *rsa = load("ek-rsa.pub", &size), *ecc;
	tpm_public p;
	EVP_PKEY *pk = NULL;
	mb_error err = { 0 };
	size_t at;

	(void) state;
	/* RSA: TPM2B size 2, type, nameAlg, attributes 8, authPolicy 2+32, sym 6, scheme 2, bits 2, exponent 4 */
	at = 2 + 8 + 34 + 6 + 2 + 2 + 4;
	assert_int_equal(rsa[at] << 8 | rsa[at + 1], 256);
	rsa[at] = 0x02;
	rsa[at + 1] = 0x01; /* 513 bytes */
	assert_int_equal(tpm_public_parse(rsa, size, &p, &err), -EBADMSG);
	assert_non_null(strstr(err.message, "at most"));
	free(rsa);

	ecc = load("ak-ecc.pub", &size);
	ecc[size - 1] ^= 0x01; /* the last byte of y */
	assert_int_equal(tpm_public_parse(ecc, size, &p, &err), 0);
	assert_int_equal(tpm_public_to_pkey(&p, &pk, &err), -EBADMSG);
	assert_null(pk);
	assert_non_null(strstr(err.message, "curve"));
	free(ecc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tpm2_tools_keys),
		cmocka_unit_test(test_other_key_differs),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_oversized_and_off_curve),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
