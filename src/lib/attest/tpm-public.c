/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* TPMT_PUBLIC from untrusted bytes (tpm-public.h): an EK or AK as a machine sent it. */
#include <errno.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/params.h>

#include <mboot/digest.h>
#include "lib/attest/tpm-public.h"
#include "shared/fail.h"
#include "shared/reader.h"

const char *tpm_alg_digest_name(uint16_t alg)
{
	switch (alg) {
	case TPM_ALG_SHA1: return "SHA1";
	case TPM_ALG_SHA256: return "SHA256";
	case TPM_ALG_SHA384: return "SHA384";
	case TPM_ALG_SHA512: return "SHA512";
	default: return NULL;
	}
}

static int bad(mb_error *err, const byte_reader *r, const char *what)
{
	return set_error_at(err, -EBADMSG, reader_offset(r), "TPMT_PUBLIC: %s", what);
}

/* A TPM2B of at most max bytes, copied into out. */
static int read_tpm2b(byte_reader *r, uint8_t *out, size_t max, uint16_t *ret_size, const char *what, mb_error *err)
{
	uint16_t n;

	if (read_u16be(r, &n) < 0)
		return bad(err, r, what);
	if (n > max)
		return set_error_at(err, -EBADMSG, reader_offset(r), "TPMT_PUBLIC: %s of %u bytes (at most %zu)",
				  what, n, max);
	if (read_copy(r, out, n) < 0)
		return bad(err, r, what);
	*ret_size = n;
	return 0;
}

/* TPMT_SYM_DEF_OBJECT: an algorithm, then key bits and mode unless it is TPM_ALG_NULL. */
static int read_sym(byte_reader *r, tpm_public *p, mb_error *err)
{
	if (read_u16be(r, &p->sym_alg) < 0)
		return bad(err, r, "symmetric algorithm");
	if (p->sym_alg == TPM_ALG_NULL)
		return 0;
	if (read_u16be(r, &p->sym_bits) < 0 || read_u16be(r, &p->sym_mode) < 0)
		return bad(err, r, "symmetric key bits and mode");
	return 0;
}

/* TPMT_RSA_SCHEME / TPMT_ECC_SCHEME: a scheme, then its details (Part 2 §11.2.3-11.2.5). */
static int read_scheme(byte_reader *r, tpm_public *p, mb_error *err)
{
	uint16_t count;

	if (read_u16be(r, &p->scheme) < 0)
		return bad(err, r, "scheme");
	switch (p->scheme) {
	case TPM_ALG_NULL:
	case TPM_ALG_RSAES: /* TPMS_ENC_SCHEME_RSAES is empty */
		return 0;
	case TPM_ALG_ECDAA: /* hashAlg, then count */
		if (read_u16be(r, &p->scheme_hash) < 0 || read_u16be(r, &count) < 0)
			return bad(err, r, "ECDAA scheme details");
		return 0;
	case TPM_ALG_RSASSA:
	case TPM_ALG_RSAPSS:
	case TPM_ALG_OAEP:
	case TPM_ALG_ECDSA:
	case TPM_ALG_ECDH:
		if (read_u16be(r, &p->scheme_hash) < 0)
			return bad(err, r, "scheme hash");
		return 0;
	default:
		return set_error_at(err, -EOPNOTSUPP, reader_offset(r), "TPMT_PUBLIC: scheme 0x%04x not supported",
				  p->scheme);
	}
}

static int parse_area(const uint8_t *data, size_t size, uint64_t base, tpm_public *p, mb_error *err)
{
	byte_reader r;
	int rc;

	memset(p, 0, sizeof(*p));
	reader_init(&r, data, size, base);
	if (read_u16be(&r, &p->type) < 0 || read_u16be(&r, &p->name_alg) < 0 ||
	    read_u32be(&r, &p->attributes) < 0)
		return bad(err, &r, "truncated header");
	if (p->type != TPM_ALG_RSA && p->type != TPM_ALG_ECC)
		return set_error_at(err, -EOPNOTSUPP, base, "TPMT_PUBLIC: type 0x%04x is not an RSA or ECC key", p->type);
	if (!tpm_alg_digest_name(p->name_alg))
		return set_error_at(err, -EOPNOTSUPP, base + 2, "TPMT_PUBLIC: nameAlg 0x%04x not supported", p->name_alg);
	rc = read_tpm2b(&r, p->auth_policy, sizeof(p->auth_policy), &p->auth_policy_size, "authPolicy", err);
	if (rc < 0)
		return rc;
	rc = read_sym(&r, p, err);
	if (rc < 0)
		return rc;
	rc = read_scheme(&r, p, err);
	if (rc < 0)
		return rc;
	if (p->type == TPM_ALG_RSA) {
		if (read_u16be(&r, &p->rsa_bits) < 0 || read_u32be(&r, &p->rsa_exponent) < 0)
			return bad(err, &r, "RSA key bits and exponent");
		rc = read_tpm2b(&r, p->x, TPM_PUBLIC_RSA_MAX, &p->x_size, "RSA modulus", err);
		if (rc < 0)
			return rc;
		if (p->x_size == 0 || (size_t) p->x_size * 8 != p->rsa_bits)
			return set_error_at(err, -EBADMSG, reader_offset(&r), "TPMT_PUBLIC: a %u-byte modulus for a %u-bit key",
					  p->x_size, p->rsa_bits);
	} else {
		if (read_u16be(&r, &p->curve) < 0 || read_u16be(&r, &p->kdf) < 0)
			return bad(err, &r, "curve and KDF");
		if (p->kdf != TPM_ALG_NULL && read_u16be(&r, &p->kdf_hash) < 0)
			return bad(err, &r, "KDF hash");
		rc = read_tpm2b(&r, p->x, TPM_PUBLIC_ECC_MAX, &p->x_size, "ECC point x", err);
		if (rc < 0)
			return rc;
		rc = read_tpm2b(&r, p->y, TPM_PUBLIC_ECC_MAX, &p->y_size, "ECC point y", err);
		if (rc < 0)
			return rc;
		if (p->x_size == 0 || p->y_size == 0)
			return bad(err, &r, "empty ECC point");
	}
	if (reader_left(&r) != 0)
		return set_error_at(err, -EBADMSG, reader_offset(&r), "TPMT_PUBLIC: %zu bytes after the key",
				  reader_left(&r));
	p->name[0] = (uint8_t) (p->name_alg >> 8);
	p->name[1] = (uint8_t) p->name_alg;
	rc = mb_digest(p->name_alg, data, size, p->name + 2);
	if (rc < 0)
		return set_error(err, rc, "cannot hash the public area");
	p->name_size = 2 + mb_digest_by_alg(p->name_alg)->size;
	return 0;
}

int tpm_public_parse_area(const uint8_t *data, size_t size, tpm_public *ret, mb_error *err)
{
	return parse_area(data, size, 0, ret, err);
}

int tpm_public_parse(const uint8_t *data, size_t size, tpm_public *ret, mb_error *err)
{
	byte_reader r;
	const uint8_t *area;
	uint16_t n;

	reader_init(&r, data, size, 0);
	if (read_u16be(&r, &n) < 0 || read_bytes(&r, n, &area) < 0)
		return set_error_at(err, -EBADMSG, 0, "TPM2B_PUBLIC: truncated (%zu bytes)", size);
	if (reader_left(&r) != 0)
		return set_error_at(err, -EBADMSG, reader_offset(&r), "TPM2B_PUBLIC: %zu bytes after it",
				  reader_left(&r));
	return parse_area(area, n, 2, ret, err);
}

static const char *curve_group(uint16_t curve, size_t *ret_size)
{
	switch (curve) {
	case TPM_ECC_NIST_P256: *ret_size = 32; return "prime256v1";
	case TPM_ECC_NIST_P384: *ret_size = 48; return "secp384r1";
	case TPM_ECC_NIST_P521: *ret_size = 66; return "secp521r1";
	default: return NULL;
	}
}

int tpm_public_to_pkey(const tpm_public *p, EVP_PKEY **ret, mb_error *err)
{
	OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
	OSSL_PARAM *params = NULL;
	EVP_PKEY_CTX *ctx = NULL;
	EVP_PKEY *pkey = NULL;
	BIGNUM *n = NULL, *e = NULL;
	uint8_t point[1 + 2 * TPM_PUBLIC_ECC_MAX];
	int rc = -EINVAL;

	*ret = NULL;
	if (!bld)
		return set_error(err, -ENOMEM, "out of memory");
	if (p->type == TPM_ALG_RSA) {
		n = BN_bin2bn(p->x, p->x_size, NULL);
		e = BN_new();
		if (!n || !e || !BN_set_word(e, p->rsa_exponent ? p->rsa_exponent : 65537) ||
		    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, n) ||
		    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, e))
			goto out;
		ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
	} else {
		size_t field;
		const char *group = curve_group(p->curve, &field);

		if (!group) {
			rc = set_error(err, -EOPNOTSUPP, "ECC curve 0x%04x not supported", p->curve);
			goto out;
		}
		if (p->x_size > field || p->y_size > field) {
			rc = set_error(err, -EBADMSG, "ECC point longer than its curve's field");
			goto out;
		}
		/* uncompressed point: 04 || x || y, each left-padded to the field size */
		memset(point, 0, sizeof(point));
		point[0] = 0x04;
		memcpy(point + 1 + field - p->x_size, p->x, p->x_size);
		memcpy(point + 1 + 2 * field - p->y_size, p->y, p->y_size);
		if (!OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, group, 0) ||
		    !OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, point, 1 + 2 * field))
			goto out;
		ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
	}
	params = OSSL_PARAM_BLD_to_param(bld);
	if (!ctx || !params || EVP_PKEY_fromdata_init(ctx) <= 0)
		goto out;
	if (EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) <= 0) {
		/* OpenSSL decodes the point and refuses one off the curve here */
		if (p->type == TPM_ALG_ECC)
			rc = set_error(err, -EBADMSG, "the ECC point is not on its curve");
		goto out;
	}
	if (p->type == TPM_ALG_ECC) {
		/* fromdata does not check that the point is on the curve: a hostile point must not pass.
		 * The quick check (on the curve, not at infinity, coordinates in range) is all there is
		 * to it for the TPM's curves, whose cofactor is 1: the full one also multiplies the
		 * point by the order, as costly as verifying a signature, on every evidence. */
		EVP_PKEY_CTX *check = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
		int ok = check && EVP_PKEY_public_check_quick(check) == 1;

		EVP_PKEY_CTX_free(check);
		if (!ok) {
			rc = set_error(err, -EBADMSG, "the ECC point is not on its curve");
			goto out;
		}
	}
	*ret = pkey;
	pkey = NULL;
	rc = 0;
out:
	if (rc == -EINVAL)
		set_error(err, -EINVAL, "OpenSSL refused the %s key", p->type == TPM_ALG_RSA ? "RSA" : "ECC");
	EVP_PKEY_free(pkey);
	EVP_PKEY_CTX_free(ctx);
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	BN_free(n);
	BN_free(e);
	return rc;
}

bool tpm_public_matches_pkey(const tpm_public *p, const EVP_PKEY *pkey)
{
	EVP_PKEY *mine = NULL;
	bool same;

	if (!pkey || tpm_public_to_pkey(p, &mine, NULL) < 0)
		return false;
	same = EVP_PKEY_eq(mine, pkey) == 1;
	EVP_PKEY_free(mine);
	return same;
}
