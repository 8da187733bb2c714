/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * TPM2_MakeCredential done by the verifier, which has no TPM (TPM 2.0 Part 1 §24; the seed's
 * protection is Part 1 Annex B.10.3 for RSA and C.6.4 for ECC). The output must be what a real
 * TPM's TPM2_ActivateCredential accepts byte for byte, so each step follows the reference
 * implementation's choices: seed of nameAlg's digest size, labels with their NUL, the ephemeral
 * point padded to the curve's size, and the EK's own unique.x as partyVInfo.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>

#include "shared/fail.h"
#include "credential.h"
#include "tpm-public.h"

/* The ID object's credential is a TPM2B_DIGEST: at most sizeof(TPMU_HA). */
#define CREDENTIAL_MAX 64
/* An EC coordinate of the largest curve OpenSSL offers (P-521: 66 bytes). */
#define ECC_COORD_MAX 66

const EVP_MD *attest_md(uint16_t hash_alg)
{
	switch (hash_alg) {
	case TPM_ALG_SHA256:
		return EVP_sha256();
	case TPM_ALG_SHA384:
		return EVP_sha384();
	case TPM_ALG_SHA512:
		return EVP_sha512();
	default:
		return NULL;
	}
}

static void put_u32be(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t) (v >> 24);
	p[1] = (uint8_t) (v >> 16);
	p[2] = (uint8_t) (v >> 8);
	p[3] = (uint8_t) v;
}

static void put_u16be(uint8_t *p, size_t v)
{
	p[0] = (uint8_t) (v >> 8);
	p[1] = (uint8_t) v;
}

/*
 * The fixed input both KDFs hash after the counter: label || 00 || u || v (KDFa appends [bits]32,
 * which the caller adds). One buffer, so each block is one HMAC or one digest call.
 */
static uint8_t *fixed_input(const char *label, const uint8_t *u, size_t u_size, const uint8_t *v, size_t v_size,
			    size_t head, size_t tail, size_t *ret_size)
{
	size_t label_size = strlen(label) + 1, n;
	uint8_t *buf;

	if (u_size > 0xffff || v_size > 0xffff)
		return NULL;
	n = head + label_size + u_size + v_size + tail;
	buf = malloc(n);
	if (!buf)
		return NULL;
	memcpy(buf + head, label, label_size);
	if (u_size)
		memcpy(buf + head + label_size, u, u_size);
	if (v_size)
		memcpy(buf + head + label_size + u_size, v, v_size);
	*ret_size = n;
	return buf;
}

/*
 * The counter mode both KDFs share (SP 800-108 / SP 800-56A): block i is PRF(i || buf[4..]),
 * the counter written into buf's first 4 bytes; the PRF is HMAC with key (KDFa) or, with key
 * NULL, the hash itself (KDFe). Frees buf, wiped.
 */
static int kdf_counter(const EVP_MD *md, const uint8_t *key, size_t key_size, uint8_t *buf, size_t n, uint8_t *out,
		       size_t out_size)
{
	size_t done = 0, dsize = (size_t) EVP_MD_get_size(md);
	uint8_t block[EVP_MAX_MD_SIZE];
	uint32_t counter = 0;
	int r = 0;

	while (done < out_size) {
		unsigned len = 0;
		int ok;

		put_u32be(buf, ++counter);
		ok = key ? HMAC(md, key, (int) key_size, buf, n, block, &len) != NULL
			 : EVP_Digest(buf, n, block, &len, md, NULL) == 1;
		if (!ok || len != dsize) {
			r = -EIO;
			break;
		}
		memcpy(out + done, block, out_size - done < dsize ? out_size - done : dsize);
		done += dsize;
	}
	OPENSSL_cleanse(block, sizeof(block));
	OPENSSL_clear_free(buf, n);
	return r;
}

int attest_kdfa(uint16_t hash_alg, const uint8_t *key, size_t key_size, const char *label, const uint8_t *context_u,
		size_t u_size, const uint8_t *context_v, size_t v_size, uint8_t *out, size_t out_size)
{
	const EVP_MD *md = attest_md(hash_alg);
	uint8_t *buf;
	size_t n;

	if (!md)
		return -EOPNOTSUPP;
	if (out_size > 0xffff || key_size > INT32_MAX)
		return -EINVAL;
	buf = fixed_input(label, context_u, u_size, context_v, v_size, 4, 4, &n);
	if (!buf)
		return -ENOMEM;
	put_u32be(buf + n - 4, (uint32_t) (out_size * 8));
	/* HMAC wants a key pointer even for an empty key: never NULL here */
	return kdf_counter(md, key ? key : (const uint8_t *) "", key_size, buf, n, out, out_size);
}

int attest_kdfe(uint16_t hash_alg, const uint8_t *z, size_t z_size, const char *label, const uint8_t *party_u,
		size_t u_size, const uint8_t *party_v, size_t v_size, uint8_t *out, size_t out_size)
{
	const EVP_MD *md = attest_md(hash_alg);
	uint8_t *buf;
	size_t n;

	if (!md)
		return -EOPNOTSUPP;
	if (z_size > 0xffff || out_size > 0xffff)
		return -EINVAL;
	/* counter || Z || label || 00 || u || v: Z goes where fixed_input leaves its head free */
	buf = fixed_input(label, party_u, u_size, party_v, v_size, 4 + z_size, 0, &n);
	if (!buf)
		return -ENOMEM;
	memcpy(buf + 4, z, z_size);
	return kdf_counter(md, NULL, 0, buf, n, out, out_size);
}

/* RSA: the seed OAEP-encrypted with nameAlg (hash and MGF1) and the label "IDENTITY" with its NUL. */
static int seed_rsa(const attest_protector *p, const uint8_t *seed, size_t seed_size, uint8_t **ret,
		    size_t *ret_size, mb_error *err)
{
	static const char label[] = "IDENTITY";
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, p->pkey, NULL);
	const EVP_MD *md = attest_md(p->name_alg);
	uint8_t *lab = NULL, *out = NULL;
	size_t out_size = 0;
	int r = -EIO;

	if (!ctx)
		return set_error(err, -ENOMEM, "out of memory");
	lab = OPENSSL_memdup(label, sizeof(label));
	if (!lab || EVP_PKEY_encrypt_init(ctx) <= 0 || EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) <= 0 ||
	    EVP_PKEY_CTX_set_rsa_oaep_md(ctx, md) <= 0 || EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, md) <= 0 ||
	    EVP_PKEY_CTX_set0_rsa_oaep_label(ctx, lab, (int) sizeof(label)) <= 0)
		goto out;
	lab = NULL; /* the context owns it now */
	if (EVP_PKEY_encrypt(ctx, NULL, &out_size, seed, seed_size) <= 0 || out_size > 0xffff - 2)
		goto out;
	out = malloc(2 + out_size);
	if (!out) {
		r = -ENOMEM;
		goto out;
	}
	if (EVP_PKEY_encrypt(ctx, out + 2, &out_size, seed, seed_size) <= 0)
		goto out;
	put_u16be(out, out_size);
	*ret = out;
	*ret_size = 2 + out_size;
	out = NULL;
	r = 0;
out:
	OPENSSL_free(lab);
	free(out);
	EVP_PKEY_CTX_free(ctx);
	if (r < 0)
		return set_error(err, r, r == -ENOMEM ? "out of memory" : "RSA-OAEP encryption of the seed to the EK failed");
	return 0;
}

static int coord(const EVP_PKEY *pk, const char *param, uint8_t *out, size_t size)
{
	BIGNUM *bn = NULL;
	int ok;

	if (!EVP_PKEY_get_bn_param(pk, param, &bn))
		return -EIO;
	ok = BN_bn2binpad(bn, out, (int) size) == (int) size;
	BN_free(bn);
	return ok ? 0 : -EIO;
}

/*
 * ECC: an ephemeral key on the EK's curve; Z = x of (ephemeral private * EK public); seed =
 * KDFe(nameAlg, Z, "IDENTITY", ephemeral x, EK x). The secret is the ephemeral TPMS_ECC_POINT.
 */
static int seed_ecc(const attest_protector *p, uint8_t *seed, size_t seed_size, uint8_t **ret, size_t *ret_size,
		    mb_error *err)
{
	uint8_t z[ECC_COORD_MAX], x[ECC_COORD_MAX], y[ECC_COORD_MAX], *out;
	char group[64];
	EVP_PKEY *eph = NULL;
	EVP_PKEY_CTX *ctx = NULL;
	size_t coord_size, z_size = sizeof(z);
	int r = -EIO;

	if (!EVP_PKEY_get_utf8_string_param(p->pkey, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof(group), NULL))
		return set_error(err, -EOPNOTSUPP, "the EK's curve is not a named curve");
	coord_size = ((size_t) EVP_PKEY_get_bits(p->pkey) + 7) / 8;
	if (coord_size == 0 || coord_size > ECC_COORD_MAX)
		return set_error(err, -EOPNOTSUPP, "the EK's curve %s is not supported", group);
	eph = EVP_PKEY_Q_keygen(NULL, NULL, "EC", group);
	if (!eph)
		goto out;
	ctx = EVP_PKEY_CTX_new_from_pkey(NULL, eph, NULL);
	if (!ctx || EVP_PKEY_derive_init(ctx) <= 0 || EVP_PKEY_derive_set_peer(ctx, p->pkey) <= 0 ||
	    EVP_PKEY_derive(ctx, z, &z_size) <= 0 || z_size != coord_size)
		goto out;
	if (coord(eph, OSSL_PKEY_PARAM_EC_PUB_X, x, coord_size) < 0 ||
	    coord(eph, OSSL_PKEY_PARAM_EC_PUB_Y, y, coord_size) < 0)
		goto out;
	r = attest_kdfe(p->name_alg, z, z_size, "IDENTITY", x, coord_size, p->ecc_x, p->ecc_x_size, seed, seed_size);
	if (r < 0)
		goto out;
	/* TPM2B_ENCRYPTED_SECRET { TPMS_ECC_POINT { TPM2B x, TPM2B y } } */
	out = malloc(2 + 2 + coord_size + 2 + coord_size);
	if (!out) {
		r = -ENOMEM;
		goto out;
	}
	put_u16be(out, 4 + 2 * coord_size);
	put_u16be(out + 2, coord_size);
	memcpy(out + 4, x, coord_size);
	put_u16be(out + 4 + coord_size, coord_size);
	memcpy(out + 6 + coord_size, y, coord_size);
	*ret = out;
	*ret_size = 6 + 2 * coord_size;
	r = 0;
out:
	OPENSSL_cleanse(z, sizeof(z));
	EVP_PKEY_CTX_free(ctx);
	EVP_PKEY_free(eph);
	if (r < 0)
		return set_error(err, r, r == -ENOMEM ? "out of memory" : "ECDH with the EK's key failed");
	return 0;
}

static const EVP_CIPHER *aes_cfb(uint16_t bits)
{
	switch (bits) {
	case 128:
		return EVP_aes_128_cfb128();
	case 192:
		return EVP_aes_192_cfb128();
	case 256:
		return EVP_aes_256_cfb128();
	default:
		return NULL;
	}
}

int attest_make_credential(const attest_protector *p, const uint8_t *name, size_t name_size, const uint8_t *cred,
			   size_t cred_size, uint8_t **ret_id, size_t *ret_id_size, uint8_t **ret_secret,
			   size_t *ret_secret_size, mb_error *err)
{
	const EVP_MD *md = attest_md(p->name_alg);
	const EVP_CIPHER *cipher = aes_cfb(p->sym_bits);
	uint8_t seed[EVP_MAX_MD_SIZE], sym_key[32], hmac_key[EVP_MAX_MD_SIZE], plain[2 + CREDENTIAL_MAX];
	uint8_t *secret = NULL, *id = NULL, *enc, *mac_in = NULL;
	size_t dsize, enc_size = 2 + cred_size, id_size;
	EVP_CIPHER_CTX *cctx = NULL;
	unsigned mac_len = 0;
	int r, len = 0, fin = 0;

	if (!md)
		return set_error(err, -EOPNOTSUPP, "nameAlg 0x%04x is not SHA-256, SHA-384 or SHA-512", p->name_alg);
	if (!cipher)
		return set_error(err, -EOPNOTSUPP, "the EK's symmetric key (AES-%u) is not AES-128, -192 or -256 CFB",
			       p->sym_bits);
	if (cred_size > CREDENTIAL_MAX || name_size > 2 + EVP_MAX_MD_SIZE)
		return set_error(err, -EINVAL, "credential or name too long");
	dsize = (size_t) EVP_MD_get_size(md);

	if (EVP_PKEY_is_a(p->pkey, "RSA")) {
		if (RAND_bytes(seed, (int) dsize) != 1)
			return set_error(err, -EIO, "no random bytes for the seed");
		r = seed_rsa(p, seed, dsize, &secret, ret_secret_size, err);
	} else if (EVP_PKEY_is_a(p->pkey, "EC")) {
		r = seed_ecc(p, seed, dsize, &secret, ret_secret_size, err);
	} else {
		r = set_error(err, -EOPNOTSUPP, "the EK is neither an RSA nor an ECC key");
	}
	if (r < 0)
		goto out;

	r = attest_kdfa(p->name_alg, seed, dsize, "STORAGE", name, name_size, NULL, 0, sym_key, p->sym_bits / 8u);
	if (r >= 0)
		r = attest_kdfa(p->name_alg, seed, dsize, "INTEGRITY", NULL, 0, NULL, 0, hmac_key, dsize);
	if (r < 0) {
		r = set_error(err, r, "KDFa failed");
		goto out;
	}

	/* TPM2B_ID_OBJECT { TPM2B_DIGEST integrityHMAC, encIdentity = CFB(TPM2B_DIGEST credential) } */
	id_size = 2 + 2 + dsize + enc_size;
	id = malloc(id_size);
	mac_in = malloc(enc_size + name_size);
	cctx = EVP_CIPHER_CTX_new();
	if (!id || !mac_in || !cctx) {
		r = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	put_u16be(plain, cred_size);
	memcpy(plain + 2, cred, cred_size);
	enc = id + 4 + dsize;
	{
		static const uint8_t zero_iv[16];

		if (!EVP_EncryptInit_ex(cctx, cipher, NULL, sym_key, zero_iv) ||
		    !EVP_EncryptUpdate(cctx, enc, &len, plain, (int) enc_size) ||
		    !EVP_EncryptFinal_ex(cctx, enc + len, &fin) || (size_t) (len + fin) != enc_size) {
			r = set_error(err, -EIO, "AES-CFB encryption of the credential failed");
			goto out;
		}
	}
	memcpy(mac_in, enc, enc_size);
	memcpy(mac_in + enc_size, name, name_size);
	if (!HMAC(md, hmac_key, (int) dsize, mac_in, enc_size + name_size, id + 4, &mac_len) || mac_len != dsize) {
		r = set_error(err, -EIO, "HMAC of the credential failed");
		goto out;
	}
	put_u16be(id, id_size - 2);
	put_u16be(id + 2, dsize);
	*ret_id = id;
	*ret_id_size = id_size;
	*ret_secret = secret;
	id = secret = NULL;
	r = 0;
out:
	OPENSSL_cleanse(seed, sizeof(seed));
	OPENSSL_cleanse(sym_key, sizeof(sym_key));
	OPENSSL_cleanse(hmac_key, sizeof(hmac_key));
	OPENSSL_cleanse(plain, sizeof(plain));
	EVP_CIPHER_CTX_free(cctx);
	free(mac_in);
	free(id);
	free(secret);
	return r;
}
