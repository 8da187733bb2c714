/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * External (non-TPM) public keys as the TPM sees them: the TPMT_PUBLIC that
 * TPM2_LoadExternal takes (TPM 2.0 Part 2 §12.2.4) and its name (Part 1 §16:
 * nameAlg || H_nameAlg(TPMT_PUBLIC)). The name is what a PolicyAuthorize policy
 * binds to, so it must come out byte for byte as other tools make it: the template is
 * tpm2_loadexternal's default for a public key (checked by tests/tpm/tpm-authorize.sh).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <tss2/tss2_mu.h>
#include <tss2/tss2_tpm2_types.h>

#include <mboot/digest.h>
#include <mboot/tpm.h>
#include "shared/fail.h"
#include "tss2-dl.h"

#define KEY_PEM_MAX (64u << 10)

static int bn_param(const EVP_PKEY *pk, const char *name, uint8_t *out, size_t size, bool exact)
{
	BIGNUM *bn = NULL;
	int n, r = -EINVAL;

	if (!EVP_PKEY_get_bn_param(pk, name, &bn))
		return -EINVAL;
	n = BN_num_bytes(bn);
	if (n > 0 && (size_t) n <= size)
		r = BN_bn2binpad(bn, out, exact ? (int) size : n) < 0 ? -EINVAL : (exact ? (int) size : n);
	BN_free(bn);
	return r;
}

/* The key of a PEM text: a public key, else the public part of a private key. */
static EVP_PKEY *read_pem(const uint8_t *pem, size_t size)
{
	BIO *bio = BIO_new_mem_buf(pem, (int) size);
	EVP_PKEY *pk;

	if (!bio)
		return NULL;
	pk = PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL);
	if (!pk) {
		(void) BIO_reset(bio);
		/* no passphrase prompt: the callback refuses */
		pk = PEM_read_bio_PrivateKey(bio, NULL, NULL, (void *) "");
	}
	BIO_free(bio);
	return pk;
}

static int public_from_pkey(EVP_PKEY *pk, TPM2B_PUBLIC *p, mb_error *err)
{
	TPMT_PUBLIC *a = &p->publicArea;

	memset(p, 0, sizeof(*p));
	a->nameAlg = TPM2_ALG_SHA256;
	a->objectAttributes = TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_SIGN_ENCRYPT | TPMA_OBJECT_DECRYPT;
	if (EVP_PKEY_is_a(pk, "RSA")) {
		uint8_t e[8];
		int n = bn_param(pk, OSSL_PKEY_PARAM_RSA_N, a->unique.rsa.buffer, sizeof(a->unique.rsa.buffer), false);
		int en = bn_param(pk, OSSL_PKEY_PARAM_RSA_E, e, 4, false);
		uint32_t exp = 0;

		if (n < 0)
			return set_error(err, -EOPNOTSUPP, "an RSA key of more than %zu bits", 8 * sizeof(a->unique.rsa.buffer));
		if (en < 0)
			return set_error(err, -EOPNOTSUPP, "an RSA exponent of more than 32 bits");
		for (int i = 0; i < en; i++)
			exp = exp << 8 | e[i];
		a->type = TPM2_ALG_RSA;
		a->parameters.rsaDetail.symmetric.algorithm = TPM2_ALG_NULL;
		a->parameters.rsaDetail.scheme.scheme = TPM2_ALG_NULL;
		a->parameters.rsaDetail.keyBits = (TPMI_RSA_KEY_BITS) (8 * n);
		a->parameters.rsaDetail.exponent = exp;
		a->unique.rsa.size = (UINT16) n;
		if (n != 256 && n != 384 && n != 512)
			return set_error(err, -EOPNOTSUPP, "an RSA key of %d bits (2048, 3072 or 4096 are taken)", 8 * n);
		return 0;
	}
	if (EVP_PKEY_is_a(pk, "EC")) {
		char curve[32] = "";

		if (!EVP_PKEY_get_utf8_string_param(pk, OSSL_PKEY_PARAM_GROUP_NAME, curve, sizeof(curve), NULL) ||
		    strcmp(curve, "prime256v1") != 0)
			return set_error(err, -EOPNOTSUPP, "an EC key on curve %s (NIST P-256 is taken)", *curve ? curve : "?");
		a->type = TPM2_ALG_ECC;
		a->parameters.eccDetail.symmetric.algorithm = TPM2_ALG_NULL;
		a->parameters.eccDetail.scheme.scheme = TPM2_ALG_NULL;
		a->parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
		a->parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
		if (bn_param(pk, OSSL_PKEY_PARAM_EC_PUB_X, a->unique.ecc.x.buffer, 32, true) < 0 ||
		    bn_param(pk, OSSL_PKEY_PARAM_EC_PUB_Y, a->unique.ecc.y.buffer, 32, true) < 0)
			return set_error(err, -EINVAL, "cannot read the EC public point");
		a->unique.ecc.x.size = a->unique.ecc.y.size = 32;
		return 0;
	}
	return set_error(err, -EOPNOTSUPP, "not an RSA or EC key");
}

static int name_of(const uint8_t *pub, size_t pub_size, uint8_t name[MB_TPM_NAME_SIZE], mb_error *err)
{
	/* the TPMT_PUBLIC is the TPM2B_PUBLIC without its 2-byte size */
	name[0] = TPM2_ALG_SHA256 >> 8;
	name[1] = TPM2_ALG_SHA256 & 0xff;
	if (mb_digest(MB_ALG_SHA256, pub + 2, pub_size - 2, name + 2) < 0)
		return set_error(err, -ENOMEM, "cannot hash");
	return 0;
}

MB_EXPORT int mb_tpm_key_public(const uint8_t *pem, size_t pem_size, uint8_t **ret, size_t *ret_size,
				uint8_t name[MB_TPM_NAME_SIZE], mb_error *err)
{
	TPM2B_PUBLIC p;
	EVP_PKEY *pk;
	uint8_t *buf;
	size_t off = 0;
	int r;

	*ret = NULL;
	*ret_size = 0;
	r = dlopen_tpm2(err);
	if (r < 0)
		return r;
	if (pem_size == 0 || pem_size > KEY_PEM_MAX)
		return set_error(err, -EBADMSG, "not a PEM key (empty, or over %u bytes)", KEY_PEM_MAX);
	pk = read_pem(pem, pem_size);
	if (!pk)
		return set_error(err, -EBADMSG, "not a PEM public or private key");
	r = public_from_pkey(pk, &p, err);
	EVP_PKEY_free(pk);
	if (r < 0)
		return r;
	buf = malloc(sizeof(TPM2B_PUBLIC));
	if (!buf)
		return set_error(err, -ENOMEM, "out of memory");
	if (sym_Tss2_MU_TPM2B_PUBLIC_Marshal(&p, buf, sizeof(TPM2B_PUBLIC), &off) != TSS2_RC_SUCCESS) {
		free(buf);
		return set_error(err, -EINVAL, "cannot marshal the key");
	}
	r = name_of(buf, off, name, err);
	if (r < 0) {
		free(buf);
		return r;
	}
	*ret = buf;
	*ret_size = off;
	return 0;
}

MB_EXPORT int mb_tpm_key_name(const uint8_t *pub, size_t pub_size, uint8_t name[MB_TPM_NAME_SIZE], mb_error *err)
{
	TPM2B_PUBLIC p;
	size_t off = 0;
	int r = dlopen_tpm2(err);

	if (r < 0)
		return r;
	memset(&p, 0, sizeof(p));
	if (sym_Tss2_MU_TPM2B_PUBLIC_Unmarshal(pub, pub_size, &off, &p) != TSS2_RC_SUCCESS || off != pub_size)
		return set_error(err, -EBADMSG, "not one TPM2B_PUBLIC");
	if ((p.publicArea.type != TPM2_ALG_RSA && p.publicArea.type != TPM2_ALG_ECC) ||
	    p.publicArea.nameAlg != TPM2_ALG_SHA256 || !(p.publicArea.objectAttributes & TPMA_OBJECT_SIGN_ENCRYPT))
		return set_error(err, -EBADMSG, "not an RSA or ECC signing key with a SHA-256 name");
	return name_of(pub, pub_size, name, err);
}
