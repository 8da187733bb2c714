/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The verifier's enrollment (src/lib/attest: credential.c, challenge.c, ek-roots.c) against
 * answers from outside mboot: KDFa is OpenSSL's KBKDF (HMAC, counter mode) and KDFe OpenSSL's
 * single-step SSKDF, both as `openssl kdf` printed them and through EVP_KDF at test time; a
 * credential is activated here the way TPM 2.0 Part 1 §24 says a TPM does, from OpenSSL's
 * primitives and KDFs only (never mboot's). The real TPM's activation is tests/tpm/tpm-attest-enroll.sh.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "shared/json.h"
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/param_build.h>
#include <openssl/rsa.h>
#include <openssl/sha.h>

#include <mboot/attest.h>
#include <mboot/seal.h>
#include "lib/attest/credential.h"
#include "lib/attest/tpm-public.h"
#include "shared/hex.h"
#include "shared/base64.h"

/* ---- OpenSSL's KDFs, the outside answers ---------------------------------------------- */

static void openssl_kbkdf(const char *md, const uint8_t *key, size_t key_size, const char *label,
			  const uint8_t *ctx, size_t ctx_size, uint8_t *out, size_t n)
{
	EVP_KDF *kdf = EVP_KDF_fetch(NULL, "KBKDF", NULL);
	EVP_KDF_CTX *kctx = EVP_KDF_CTX_new(kdf);
	OSSL_PARAM p[] = {
		OSSL_PARAM_utf8_string(OSSL_KDF_PARAM_MAC, (char *) "HMAC", 0),
		OSSL_PARAM_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *) md, 0),
		OSSL_PARAM_octet_string(OSSL_KDF_PARAM_KEY, (void *) key, key_size),
		OSSL_PARAM_octet_string(OSSL_KDF_PARAM_SALT, (void *) label, strlen(label)),
		OSSL_PARAM_octet_string(OSSL_KDF_PARAM_INFO, (void *) (ctx ? ctx : (const uint8_t *) ""), ctx_size),
		OSSL_PARAM_END,
	};

	assert_non_null(kctx);
	assert_int_equal(EVP_KDF_derive(kctx, out, n, p), 1);
	EVP_KDF_CTX_free(kctx);
	EVP_KDF_free(kdf);
}

static void openssl_sskdf(const char *md, const uint8_t *z, size_t z_size, const uint8_t *info, size_t info_size,
			  uint8_t *out, size_t n)
{
	EVP_KDF *kdf = EVP_KDF_fetch(NULL, "SSKDF", NULL);
	EVP_KDF_CTX *kctx = EVP_KDF_CTX_new(kdf);
	OSSL_PARAM p[] = {
		OSSL_PARAM_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *) md, 0),
		OSSL_PARAM_octet_string(OSSL_KDF_PARAM_KEY, (void *) z, z_size),
		OSSL_PARAM_octet_string(OSSL_KDF_PARAM_INFO, (void *) info, info_size),
		OSSL_PARAM_END,
	};

	assert_non_null(kctx);
	assert_int_equal(EVP_KDF_derive(kctx, out, n, p), 1);
	EVP_KDF_CTX_free(kctx);
	EVP_KDF_free(kdf);
}

static void unhex(const char *s, uint8_t *out, size_t n)
{
	assert_int_equal(strlen(s), 2 * n);
	assert_int_equal(hex_parse(s, 2 * n, out, n), 0);
}

static const struct {
	uint16_t alg;
	const char *md;
	size_t size;
} hashes[] = { { TPM_ALG_SHA256, "SHA256", 32 }, { TPM_ALG_SHA384, "SHA384", 48 }, { TPM_ALG_SHA512, "SHA512", 64 } };

static void test_kdfa(void **state)
{
	/* openssl kdf -keylen 40 -kdfopt mac:HMAC -kdfopt digest:SHA256 -kdfopt hexkey:0001..1f
	 *   -kdfopt salt:STORAGE -kdfopt hexinfo:000b0123456789abcdef KBKDF */
	static const char want_hex[] = "dbbe9a06f68b3ead2ee8b804cdd1855615fd8f55dd00e5e5ae78ed4e5a446ec523419aed571ddb4b";
	static const size_t lengths[] = { 1, 16, 20, 32, 33, 48, 64, 100 };
	uint8_t key[32], ctx[10], want[100], got[100];
	size_t h, i;

	(void) state;
	for (i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t) i;
	unhex("000b0123456789abcdef", ctx, sizeof(ctx));
	unhex(want_hex, want, 40);
	assert_int_equal(attest_kdfa(TPM_ALG_SHA256, key, 32, "STORAGE", ctx, sizeof(ctx), NULL, 0, got, 40), 0);
	assert_memory_equal(got, want, 40);
	/* context_u || context_v is one context */
	assert_int_equal(attest_kdfa(TPM_ALG_SHA256, key, 32, "STORAGE", ctx, 3, ctx + 3, 7, got, 40), 0);
	assert_memory_equal(got, want, 40);

	for (h = 0; h < 3; h++)
		for (i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
			openssl_kbkdf(hashes[h].md, key, 17, "INTEGRITY", NULL, 0, want, lengths[i]);
			assert_int_equal(attest_kdfa(hashes[h].alg, key, 17, "INTEGRITY", NULL, 0, NULL, 0, got,
						     lengths[i]), 0);
			assert_memory_equal(got, want, lengths[i]);
			openssl_kbkdf(hashes[h].md, key, 32, "STORAGE", ctx, sizeof(ctx), want, lengths[i]);
			assert_int_equal(attest_kdfa(hashes[h].alg, key, 32, "STORAGE", ctx, sizeof(ctx), NULL, 0, got,
						     lengths[i]), 0);
			assert_memory_equal(got, want, lengths[i]);
		}
	assert_int_equal(attest_kdfa(TPM_ALG_SHA1, key, 32, "STORAGE", NULL, 0, NULL, 0, got, 16), -EOPNOTSUPP);
}

static void test_kdfe(void **state)
{
	/* openssl kdf -keylen 48 -kdfopt digest:SHA384 -kdfopt hexkey:00112233445566778899aabbccddeeff
	 *   -kdfopt hexinfo:4944454e5449545900aabbccdd0102030405 SSKDF  ("IDENTITY\0" || u || v) */
	static const char want_hex[] =
		"fbdcb454fd98700afc2563002299dfdc49d18dcb2566f232e2c55a203d8fb8bd707d645db6a4a0008d28e93890c08dfb";
	static const uint8_t u[] = { 0xaa, 0xbb, 0xcc, 0xdd }, v[] = { 1, 2, 3, 4, 5 };
	uint8_t z[67], want[100], got[100], info[9 + 66 + 66];
	size_t h, n;

	(void) state;
	unhex("00112233445566778899aabbccddeeff", z, 16);
	unhex(want_hex, want, 48);
	assert_int_equal(attest_kdfe(TPM_ALG_SHA384, z, 16, "IDENTITY", u, sizeof(u), v, sizeof(v), got, 48), 0);
	assert_memory_equal(got, want, 48);

	for (n = 0; n < sizeof(z); n++)
		z[n] = (uint8_t) (7 * n + 1);
	memcpy(info, "IDENTITY", 9);
	memcpy(info + 9, z + 1, 66);
	memcpy(info + 9 + 66, z, 66);
	for (h = 0; h < 3; h++)
		for (n = 1; n <= 100; n += 33) {
			openssl_sskdf(hashes[h].md, z, 66, info, sizeof(info), want, n);
			assert_int_equal(attest_kdfe(hashes[h].alg, z, 66, "IDENTITY", z + 1, 66, z, 66, got, n), 0);
			assert_memory_equal(got, want, n);
		}
}

/* ---- a TPM's ActivateCredential, by the spec, from OpenSSL's pieces --------------------- */

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t) (p[0] << 8 | p[1]);
}

static EVP_PKEY *ec_point_key(const char *group, const uint8_t *x, const uint8_t *y, size_t n)
{
	uint8_t pt[1 + 2 * 66];
	OSSL_PARAM_BLD *b = OSSL_PARAM_BLD_new();
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
	EVP_PKEY *pk = NULL;
	OSSL_PARAM *p;

	pt[0] = 4;
	memcpy(pt + 1, x, n);
	memcpy(pt + 1 + n, y, n);
	assert_true(OSSL_PARAM_BLD_push_utf8_string(b, OSSL_PKEY_PARAM_GROUP_NAME, group, 0));
	assert_true(OSSL_PARAM_BLD_push_octet_string(b, OSSL_PKEY_PARAM_PUB_KEY, pt, 1 + 2 * n));
	p = OSSL_PARAM_BLD_to_param(b);
	assert_int_equal(EVP_PKEY_fromdata_init(ctx), 1);
	assert_int_equal(EVP_PKEY_fromdata(ctx, &pk, EVP_PKEY_PUBLIC_KEY, p), 1);
	OSSL_PARAM_free(p);
	OSSL_PARAM_BLD_free(b);
	EVP_PKEY_CTX_free(ctx);
	return pk;
}

/* Returns 0 and the credential, or -1 when the integrity HMAC does not verify. */
static int activate(EVP_PKEY *ek, size_t h, unsigned sym_bits, const uint8_t *ek_x, size_t ek_x_size,
		    const uint8_t *name, size_t name_size, const uint8_t *id, size_t id_size, const uint8_t *secret,
		    size_t secret_size, uint8_t *cred, size_t *cred_size)
{
	const EVP_MD *md = EVP_get_digestbyname(hashes[h].md);
	size_t dsize = hashes[h].size, seed_size = sizeof(uint8_t[512]), enc_size;
	uint8_t seed[512], hkey[64], skey[32], mac[64], plain[128], mac_in[256];
	unsigned mac_len;
	int len;

	assert_int_equal(be16(secret), secret_size - 2);
	if (EVP_PKEY_is_a(ek, "RSA")) {
		EVP_PKEY_CTX *c = EVP_PKEY_CTX_new(ek, NULL);

		assert_int_equal(EVP_PKEY_decrypt_init(c), 1);
		assert_int_equal(EVP_PKEY_CTX_set_rsa_padding(c, RSA_PKCS1_OAEP_PADDING), 1);
		assert_int_equal(EVP_PKEY_CTX_set_rsa_oaep_md(c, md), 1);
		assert_int_equal(EVP_PKEY_CTX_set_rsa_mgf1_md(c, md), 1);
		assert_int_equal(EVP_PKEY_CTX_set0_rsa_oaep_label(c, OPENSSL_memdup("IDENTITY", 9), 9), 1);
		assert_int_equal(EVP_PKEY_decrypt(c, seed, &seed_size, secret + 2, secret_size - 2), 1);
		EVP_PKEY_CTX_free(c);
	} else {
		char group[32];
		size_t n = be16(secret + 2), z_size = 66;
		uint8_t z[66], info[9 + 2 * 66];
		EVP_PKEY *eph;
		EVP_PKEY_CTX *c;

		assert_int_equal(secret_size, 2 + 2 + n + 2 + n);
		assert_int_equal(be16(secret + 4 + n), n);
		assert_true(EVP_PKEY_get_utf8_string_param(ek, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof(group), NULL));
		eph = ec_point_key(group, secret + 4, secret + 6 + n, n);
		c = EVP_PKEY_CTX_new(ek, NULL);
		assert_int_equal(EVP_PKEY_derive_init(c), 1);
		assert_int_equal(EVP_PKEY_derive_set_peer(c, eph), 1);
		assert_int_equal(EVP_PKEY_derive(c, z, &z_size), 1);
		EVP_PKEY_CTX_free(c);
		EVP_PKEY_free(eph);
		memcpy(info, "IDENTITY", 9);
		memcpy(info + 9, secret + 4, n);
		memcpy(info + 9 + n, ek_x, ek_x_size);
		openssl_sskdf(hashes[h].md, z, z_size, info, 9 + n + ek_x_size, seed, dsize);
		seed_size = dsize;
	}
	assert_int_equal(seed_size, dsize);

	/* TPM2B_ID_OBJECT { TPM2B_DIGEST integrityHMAC, encIdentity } */
	assert_int_equal(be16(id), id_size - 2);
	assert_int_equal(be16(id + 2), dsize);
	enc_size = id_size - 4 - dsize;
	openssl_kbkdf(hashes[h].md, seed, dsize, "INTEGRITY", NULL, 0, hkey, dsize);
	memcpy(mac_in, id + 4 + dsize, enc_size);
	memcpy(mac_in + enc_size, name, name_size);
	assert_non_null(HMAC(md, hkey, (int) dsize, mac_in, enc_size + name_size, mac, &mac_len));
	if (memcmp(mac, id + 4, dsize) != 0)
		return -1;
	openssl_kbkdf(hashes[h].md, seed, dsize, "STORAGE", name, name_size, skey, sym_bits / 8);
	{
		static const uint8_t iv[16];
		const EVP_CIPHER *ciph = sym_bits == 128 ? EVP_aes_128_cfb128() : EVP_aes_256_cfb128();
		EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();

		assert_int_equal(EVP_DecryptInit_ex(c, ciph, NULL, skey, iv), 1);
		assert_int_equal(EVP_DecryptUpdate(c, plain, &len, id + 4 + dsize, (int) enc_size), 1);
		EVP_CIPHER_CTX_free(c);
	}
	assert_int_equal((size_t) len, enc_size);
	*cred_size = be16(plain);
	assert_int_equal(*cred_size + 2, enc_size);
	memcpy(cred, plain + 2, *cred_size);
	return 0;
}

static void coord(EVP_PKEY *pk, const char *param, uint8_t *out, size_t n)
{
	BIGNUM *bn = NULL;

	assert_true(EVP_PKEY_get_bn_param(pk, param, &bn));
	assert_int_equal(BN_bn2binpad(bn, out, (int) n), (int) n);
	BN_free(bn);
}

static void credential_case(const char *kind, size_t h, unsigned sym_bits)
{
	EVP_PKEY *ek = strcmp(kind, "RSA") == 0 ? EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t) 2048)
						: EVP_PKEY_Q_keygen(NULL, NULL, "EC", kind);
	uint8_t name[2 + 64], cred[32], got[64], x[66], *id = NULL, *secret = NULL;
	size_t id_size, secret_size, got_size = 0, xs = 0, i;
	attest_protector p = { .pkey = ek, .name_alg = hashes[h].alg, .sym_bits = (uint16_t) sym_bits };
	mb_error err = { 0 };

	assert_non_null(ek);
	if (!EVP_PKEY_is_a(ek, "RSA")) {
		xs = ((size_t) EVP_PKEY_get_bits(ek) + 7) / 8;
		coord(ek, OSSL_PKEY_PARAM_EC_PUB_X, x, xs);
		p.ecc_x = x;
		p.ecc_x_size = xs;
	}
	for (i = 0; i < sizeof(name); i++)
		name[i] = (uint8_t) (i * 3);
	for (i = 0; i < sizeof(cred); i++)
		cred[i] = (uint8_t) (0xc0 + i);
	assert_int_equal(attest_make_credential(&p, name, 34, cred, sizeof(cred), &id, &id_size, &secret, &secret_size,
						&err), 0);
	assert_int_equal(activate(ek, h, sym_bits, x, xs, name, 34, id, id_size, secret, secret_size, got, &got_size),
			 0);
	assert_int_equal(got_size, sizeof(cred));
	assert_memory_equal(got, cred, sizeof(cred));
	/* bound to the name: another object's name fails the integrity check */
	name[5] ^= 1;
	assert_int_equal(activate(ek, h, sym_bits, x, xs, name, 34, id, id_size, secret, secret_size, got, &got_size),
			 -1);
	free(id);
	free(secret);
	EVP_PKEY_free(ek);
}

static void test_credential(void **state)
{
	(void) state;
	credential_case("RSA", 0, 128);
	credential_case("RSA", 1, 256);
	credential_case("P-256", 0, 128);
	credential_case("P-384", 1, 256);
	credential_case("P-521", 2, 256);
}

/* ---- the JSON flow: request -> challenge + state, response -> machine record ------------ */

static uint8_t *load(const char *name, size_t *ret_size)
{
	char path[4096];
	const char *dir = getenv("MB_TESTDATA");
	uint8_t buf[4096], *copy;
	FILE *f;

	assert_non_null(dir);
	snprintf(path, sizeof(path), "%s/attest/%s", dir, name);
	f = fopen(path, "rb");
	assert_non_null(f);
	*ret_size = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	copy = malloc(*ret_size);
	assert_non_null(copy);
	memcpy(copy, buf, *ret_size);
	return copy;
}

/* An EK's TPM2B_PUBLIC for a key made here (so that this test holds the private key): the
 * default EK templates' attributes, AES-CFB, no scheme. */
static size_t ek_public(EVP_PKEY *k, uint16_t name_alg, uint16_t sym_bits, uint32_t attrs, uint8_t *out)
{
	size_t n = 2, dsize = name_alg == TPM_ALG_SHA384 ? 48 : 32;
	uint8_t *p = out;

#define U16(v) (p[n] = (uint8_t) ((v) >> 8), p[n + 1] = (uint8_t) (v), n += 2)
#define U32(v) (U16((v) >> 16), U16((v) & 0xffff))
	U16(EVP_PKEY_is_a(k, "RSA") ? TPM_ALG_RSA : TPM_ALG_ECC);
	U16(name_alg);
	U32(attrs);
	U16(dsize);
	memset(p + n, 0x5a, dsize);
	n += dsize;
	U16(TPM_ALG_AES);
	U16(sym_bits);
	U16(TPM_ALG_CFB);
	U16(TPM_ALG_NULL);
	if (EVP_PKEY_is_a(k, "RSA")) {
		U16(2048);
		U32(0);
		U16(256);
		coord(k, OSSL_PKEY_PARAM_RSA_N, p + n, 256);
		n += 256;
	} else {
		size_t cs = ((size_t) EVP_PKEY_get_bits(k) + 7) / 8;

		U16(cs == 32 ? TPM_ECC_NIST_P256 : TPM_ECC_NIST_P384);
		U16(TPM_ALG_NULL);
		U16(cs);
		coord(k, OSSL_PKEY_PARAM_EC_PUB_X, p + n, cs);
		n += cs;
		U16(cs);
		coord(k, OSSL_PKEY_PARAM_EC_PUB_Y, p + n, cs);
		n += cs;
	}
	p = out;
	n -= 2;
	out[0] = (uint8_t) (n >> 8);
	out[1] = (uint8_t) n;
#undef U16
#undef U32
	return n + 2;
}

#define EK_ATTRS (TPMA_FIXED_TPM | TPMA_FIXED_PARENT | TPMA_SENSITIVE_DATA_ORIGIN | TPMA_ADMIN_WITH_POLICY | \
		  TPMA_RESTRICTED | TPMA_DECRYPT)

static char *request_json(const uint8_t *ek, size_t ek_size, const char *cert_b64, const uint8_t *ak, size_t ak_size,
			  const uint8_t *name, size_t name_size)
{
	char *ekb = base64_encode(ek, ek_size), *akb = base64_encode(ak, ak_size);
	char *nh = hex_dup(name, name_size), *out = NULL;

	assert_true(asprintf(&out,
			     "{\"version\": 1, \"kind\": \"mboot-attest-request\", \"ek\": {\"public\": \"%s\", "
			     "\"certificate\": %s, \"nv_index\": null}, \"ak\": {\"public\": \"%s\", \"name\": \"%s\"}}",
			     ekb, cert_b64 ? cert_b64 : "null", akb, nh) > 0);
	free(ekb);
	free(akb);
	free(nh);
	return out;
}

static uint8_t *json_b64(json_t *o, const char *key, size_t *size)
{
	json_t *v;
	uint8_t *out = NULL;

	assert_true(((v = json_object_get(o, key)) != NULL));
	assert_int_equal(base64_decode(json_string_value(v), (size_t) json_string_length(v), 4096, &out,
					  size), 0);
	return out;
}

static const char *json_str(json_t *o, const char *key)
{
	json_t *v;

	assert_true(((v = json_object_get(o, key)) != NULL));
	assert_true(json_is_string(v));
	return json_string_value(v);
}

static char *response_json(const char *name_hex, const uint8_t *cred, size_t n)
{
	char *b = base64_encode(cred, n), *out = NULL;

	assert_true(asprintf(&out, "{\"version\": 1, \"kind\": \"mboot-attest-response\", \"ak_name\": \"%s\", "
				   "\"credential\": \"%s\"}", name_hex, b) > 0);
	free(b);
	return out;
}

static void flow_case(const char *kind, size_t h, uint16_t sym_bits)
{
	EVP_PKEY *ek = strcmp(kind, "RSA") == 0 ? EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t) 2048)
						: EVP_PKEY_Q_keygen(NULL, NULL, "EC", kind);
	mb_attest_challenge_options opts = { .size = sizeof(mb_attest_challenge_options), .allow_no_ek_cert = true };
	uint8_t ekpub[600], *ak, *akname, *id, *secret, cred[64], x[66], digest[32];
	size_t ek_size, ak_size, akname_size, id_size, secret_size, cred_size, xs = 0;
	char *req, *ch = NULL, *st = NULL, *resp, *machine = NULL, hexbuf[2 * 66 + 1], *ak_b64;
	json_t *cho, *mo, *sto;
	mb_error err = { 0 };

	assert_non_null(ek);
	ek_size = ek_public(ek, hashes[h].alg, sym_bits, EK_ATTRS, ekpub);
	ak = load("ak-ecc.pub", &ak_size);
	akname = load("ak-ecc.name", &akname_size);
	req = request_json(ekpub, ek_size, NULL, ak, ak_size, akname, akname_size);
	assert_int_equal(mb_attest_challenge_make(req, strlen(req), &opts, &ch, &st, &err), 0);

	cho = json_loads(ch, JSON_DECODE_ANY, NULL);
	assert_non_null(cho);
	assert_string_equal(json_str(cho, "kind"), "mboot-attest-challenge");
	assert_string_equal(json_str(cho, "ak_name"), hex_format(akname, akname_size, hexbuf));
	id = json_b64(cho, "credential_blob", &id_size);
	secret = json_b64(cho, "encrypted_secret", &secret_size);
	if (!EVP_PKEY_is_a(ek, "RSA")) {
		xs = ((size_t) EVP_PKEY_get_bits(ek) + 7) / 8;
		coord(ek, OSSL_PKEY_PARAM_EC_PUB_X, x, xs);
	}
	assert_int_equal(activate(ek, h, sym_bits, x, xs, akname, akname_size, id, id_size, secret, secret_size, cred,
				  &cred_size), 0);
	assert_int_equal(cred_size, 32);

	/* the state: a digest of the credential, never the credential */
	sto = json_loads(st, JSON_DECODE_ANY, NULL);
	assert_non_null(sto);
	SHA256(cred, cred_size, digest);
	assert_string_equal(json_str(sto, "credential_sha256"), hex_format(digest, 32, hexbuf));
	assert_true(json_is_null(json_object_get(sto, "ek_certificate_sha256")));
	assert_null(strstr(st, hex_format(cred, 32, hexbuf)));

	resp = response_json(hex_format(akname, akname_size, hexbuf), cred, cred_size);
	assert_int_equal(mb_attest_challenge_check(st, strlen(st), resp, strlen(resp), &machine, &err), 0);
	mo = json_loads(machine, JSON_DECODE_ANY, NULL);
	assert_non_null(mo);
	assert_string_equal(json_str(mo, "kind"), "mboot-machine");
	assert_string_equal(json_str(mo, "ak_name"), hex_format(akname, akname_size, hexbuf));
	ak_b64 = base64_encode(ak, ak_size);
	assert_string_equal(json_str(mo, "ak_public"), ak_b64);
	assert_true(json_is_null(json_object_get(mo, "ek_certificate_sha256")));
	free(ak_b64);
	free(resp);
	free(machine);
	machine = NULL;

	/* a credential activated elsewhere (one bit off) is refused, with the reason */
	cred[0] ^= 1;
	resp = response_json(hex_format(akname, akname_size, hexbuf), cred, cred_size);
	assert_int_equal(mb_attest_challenge_check(st, strlen(st), resp, strlen(resp), &machine, &err),
			 MB_ERR_ATTEST_REFUSED);
	assert_non_null(strstr(err.message, "not the challenge's"));
	assert_null(machine);
	free(resp);
	cred[0] ^= 1;
	/* an answer for another AK */
	akname[10] ^= 1;
	resp = response_json(hex_format(akname, akname_size, hexbuf), cred, cred_size);
	assert_int_equal(mb_attest_challenge_check(st, strlen(st), resp, strlen(resp), &machine, &err),
			 MB_ERR_ATTEST_REFUSED);
	assert_non_null(strstr(err.message, "another AK"));
	free(resp);
	/* a malformed response is an error, not a refusal */
	assert_int_equal(mb_attest_challenge_check(st, strlen(st), "{}", 2, &machine, &err), -EBADMSG);
	assert_int_equal(mb_attest_challenge_check("[]", 2, st, strlen(st), &machine, &err), -EBADMSG);

	json_decref(cho);
	json_decref(sto);
	json_decref(mo);
	free(id);
	free(secret);
	free(ak);
	free(akname);
	free(req);
	free(ch);
	free(st);
	EVP_PKEY_free(ek);
}

static void test_flow(void **state)
{
	(void) state;
	flow_case("RSA", 0, 128);
	flow_case("P-256", 0, 128);
	flow_case("P-384", 1, 256);
}

static int make(const char *req, const mb_attest_challenge_options *opts, mb_error *err)
{
	char *ch = NULL, *st = NULL;
	int r = mb_attest_challenge_make(req, strlen(req), opts, &ch, &st, err);

	if (r < 0) {
		assert_null(ch);
		assert_null(st);
	}
	free(ch);
	free(st);
	return r;
}

static void refused(const char *req, const mb_attest_challenge_options *opts, const char *reason)
{
	mb_error err = { 0 };

	assert_int_equal(make(req, opts, &err), MB_ERR_ATTEST_REFUSED);
	if (!strstr(err.message, reason))
		fail_msg("refused for \"%s\", not \"%s\"", err.message, reason);
}

/* The AK's attributes changed in place, and the Name computed again (SHA-256, outside mboot). */
static void set_attrs(uint8_t *pub, size_t size, uint32_t attrs, uint8_t name[34])
{
	pub[6] = (uint8_t) (attrs >> 24);
	pub[7] = (uint8_t) (attrs >> 16);
	pub[8] = (uint8_t) (attrs >> 8);
	pub[9] = (uint8_t) attrs;
	name[0] = 0;
	name[1] = 0x0b;
	SHA256(pub + 2, size - 2, name + 2);
}

static void test_refusals(void **state)
{
	mb_attest_challenge_options opts = { .size = sizeof(mb_attest_challenge_options), .allow_no_ek_cert = true }, strict = MB_OPTIONS_INIT(mb_attest_challenge_options);
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t) 2048);
	uint8_t ekpub[600], *ak, *akname, name[34], *ekr;
	size_t ek_size, ak_size, akname_size, ekr_size;
	uint32_t attrs;
	mb_error err = { 0 };
	char *req;

	(void) state;
	ek_size = ek_public(k, TPM_ALG_SHA256, 128, EK_ATTRS, ekpub);
	ak = load("ak-ecc.pub", &ak_size);
	akname = load("ak-ecc.name", &akname_size);
	attrs = (uint32_t) ak[6] << 24 | (uint32_t) ak[7] << 16 | (uint32_t) ak[8] << 8 | ak[9];
	assert_int_equal(attrs & (TPMA_RESTRICTED | TPMA_SIGN), TPMA_RESTRICTED | TPMA_SIGN);

	/* the good request passes, so that each refusal below is its own change's */
	req = request_json(ekpub, ek_size, NULL, ak, ak_size, akname, akname_size);
	assert_int_equal(make(req, &opts, &err), 0);
	refused(req, &strict, "no EK certificate");
	free(req);

	/* a certificate and no CA to check it against: a usage error, not trust */
	req = request_json(ekpub, ek_size, "\"AAAA\"", ak, ak_size, akname, akname_size);
	assert_int_equal(make(req, &strict, &err), -EINVAL);
	free(req);

	/* the name of another key */
	akname[33] ^= 1;
	req = request_json(ekpub, ek_size, NULL, ak, ak_size, akname, akname_size);
	refused(req, &opts, "ak.name is not the Name of ak.public");
	free(req);

	static const struct {
		uint32_t clear, set;
		const char *reason;
	} cases[] = {
		{ TPMA_RESTRICTED, 0, "not restricted" },
		{ TPMA_SIGN, 0, "not a signing key" },
		{ 0, TPMA_DECRYPT, "also a decryption key" },
		{ TPMA_FIXED_TPM, 0, "not fixedTPM" },
		{ TPMA_FIXED_PARENT, 0, "not fixedParent" },
		{ TPMA_SENSITIVE_DATA_ORIGIN, 0, "not sensitiveDataOrigin" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		set_attrs(ak, ak_size, (attrs & ~cases[i].clear) | cases[i].set, name);
		req = request_json(ekpub, ek_size, NULL, ak, ak_size, name, sizeof(name));
		refused(req, &opts, cases[i].reason);
		free(req);
	}
	set_attrs(ak, ak_size, attrs, name);
	assert_memory_equal(name, akname, 33);

	/* the EK as the AK: a decryption key, not a signing one */
	ekr = load("ek-rsa.pub", &ekr_size);
	{
		uint8_t *ekname;
		size_t ekname_size;

		ekname = load("ek-rsa.name", &ekname_size);
		req = request_json(ekpub, ek_size, NULL, ekr, ekr_size, ekname, ekname_size);
		refused(req, &opts, "not a signing key");
		free(req);
		free(ekname);
	}
	/* an EK that is not a restricted decryption key */
	ek_size = ek_public(k, TPM_ALG_SHA256, 128, EK_ATTRS & ~TPMA_RESTRICTED, ekpub);
	req = request_json(ekpub, ek_size, NULL, ak, ak_size, name, sizeof(name));
	refused(req, &opts, "the EK is not a restricted");
	free(req);
	free(ekr);
	free(ak);
	free(akname);
	EVP_PKEY_free(k);
}

static void test_malformed(void **state)
{
	mb_attest_challenge_options opts = { .size = sizeof(mb_attest_challenge_options), .allow_no_ek_cert = true };
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t) 2048);
	uint8_t ekpub[600], *ak, *akname;
	size_t ek_size, ak_size, akname_size, big_size = (64u << 10) + 1;
	mb_error err = { 0 };
	char *req, *s, *big;

	(void) state;
	ek_size = ek_public(k, TPM_ALG_SHA256, 128, EK_ATTRS, ekpub);
	ak = load("ak-ecc.pub", &ak_size);
	akname = load("ak-ecc.name", &akname_size);
	req = request_json(ekpub, ek_size, NULL, ak, ak_size, akname, akname_size);

	assert_int_equal(make("", &opts, &err), -EBADMSG);
	assert_int_equal(make("[1]", &opts, &err), -EBADMSG);
	assert_int_equal(make("{\"version\": 1, \"kind\": \"mboot-attest-request\"}", &opts, &err), -EBADMSG);
	/* wrong kind, wrong version, a key twice */
	s = strdup(req);
	memcpy(strstr(s, "request"), "respons", 7);
	assert_int_equal(make(s, &opts, &err), -EBADMSG);
	strcpy(s, req);
	*strstr(s, "1") = '2';
	assert_int_equal(make(s, &opts, &err), -EBADMSG);
	free(s);
	assert_true(asprintf(&s, "{\"kind\": \"x\", %s", req + 1) > 0);
	assert_int_equal(make(s, &opts, &err), -EBADMSG);
	free(s);
	/* bad base64 */
	s = strdup(req);
	strstr(s, "\"public\": \"")[11] = '!';
	assert_int_equal(make(s, &opts, &err), -EBADMSG);
	free(s);
	free(req);
	/* the EK's TPM2B_PUBLIC one byte short (its size field says so too: the modulus is cut) */
	ekpub[1]--;
	req = request_json(ekpub, ek_size - 1, NULL, ak, ak_size, akname, akname_size);
	assert_int_equal(make(req, &opts, &err), -EBADMSG);
	assert_non_null(strstr(err.message, "ek.public"));
	free(req);
	/* over the size cap */
	big = malloc(big_size + 1);
	memset(big, ' ', big_size);
	big[big_size] = '\0';
	big[0] = '{';
	big[big_size - 1] = '}';
	assert_int_equal(make(big, &opts, &err), -E2BIG);
	free(big);
	free(ak);
	free(akname);
	EVP_PKEY_free(k);
}

static void test_roots(void **state)
{
	char dir[] = "/tmp/mboot-roots.XXXXXX", path[64];
	mb_ek_roots *r = NULL;
	mb_error err = { 0 };
	FILE *f;

	(void) state;
	assert_int_equal(mb_ek_roots_new(&r, &err), 0);
	assert_int_equal(mb_ek_roots_add_path(r, "/nonexistent/ca.pem", &err), -ENOENT);
	assert_non_null(mkdtemp(dir));
	assert_int_equal(mb_ek_roots_add_path(r, dir, &err), -ENOENT); /* no certificate in it */
	snprintf(path, sizeof(path), "%s/junk.pem", dir);
	f = fopen(path, "w");
	fputs("-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n", f);
	fclose(f);
	assert_int_equal(mb_ek_roots_add_path(r, path, &err), -EBADMSG);
	assert_int_equal(mb_ek_roots_add_path(r, dir, &err), -EBADMSG); /* a broken certificate is no note */
	f = fopen(path, "w");
	fputs("a note, not a certificate\n", f);
	fclose(f);
	assert_int_equal(mb_ek_roots_add_path(r, path, &err), -EBADMSG);
	assert_int_equal(mb_ek_roots_add_path(r, dir, &err), -ENOENT); /* skipped in a directory */
	unlink(path);
	rmdir(dir);
	mb_ek_roots_free(r);
	mb_ek_roots_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kdfa),	 cmocka_unit_test(test_kdfe),	   cmocka_unit_test(test_credential),
		cmocka_unit_test(test_flow),	 cmocka_unit_test(test_refusals), cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_roots),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
