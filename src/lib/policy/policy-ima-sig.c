/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The "ima" section's "keys": X.509 certificates (PEM) whose keys sign files, as IMA's keyrings
 * hold them; an ima-sig/ima-modsig entry whose signature one of them verifies is allowed.
 * IMA's signature (the sig field, ima-evm-utils' signature_v2_hdr): type 3 (EVM_IMA_XATTR_DIGSIG),
 * version 2, the kernel's hash_algo id, the key id (the last 4 bytes of the certificate's
 * subject key identifier, big-endian), the signature's size (u16 big-endian), the signature:
 * PKCS#1 v1.5 or ECDSA over the file digest, as public_key_verify_signature checks it.
 * ima-modsig's appended signature: a PKCS#7 SignedData as a kernel module carries (detached, one
 * signer, usually no signed attributes), checked as the kernel's pkcs7_verify does: the signer
 * found by issuer and serial (or subject key id) among the certificates, without signed
 * attributes the signature over d-modsig itself, with them messageDigest == d-modsig and the
 * signature over their DER (CMS_SignerInfo_verify).
 */
#include <errno.h>
#include <string.h>
#include <openssl/bn.h>
#include <openssl/cms.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "policy-ima.h"
#include "shared/fail.h"

#define MAX_KEYS 256
#define MAX_MODSIG (64u << 10) /* a module's PKCS#7: a signer and a few certificates at most */

int policy_ima_parse_keys(const load_ctx *c, struct policy_ima *ima, json_t *arr)
{
	size_t n, i;

	if (!json_is_array(arr) || json_array_size(arr) > MAX_KEYS)
		return policy_fail_field(c, "keys", "ima.keys", "expected an array of at most %u PEM certificates",
					 MAX_KEYS);
	n = json_array_size(arr);
	ima->keys = calloc(n ? n : 1, sizeof(*ima->keys));
	if (!ima->keys)
		return set_error(c->err, -ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		json_t *v = json_array_get(arr, i);
		const ASN1_OCTET_STRING *skid;
		X509 *x = NULL;
		BIO *bio;

		if (!json_is_string(v) || json_string_length(v) > 65536)
			return policy_fail_field(c, "keys", "ima.keys", "[%zu]: expected a PEM certificate", i);
		bio = BIO_new_mem_buf(json_string_value(v), (int) json_string_length(v));
		if (bio)
			x = PEM_read_bio_X509(bio, NULL, NULL, NULL);
		BIO_free(bio);
		ERR_clear_error();
		if (!x)
			return policy_fail_field(c, "keys", "ima.keys", "[%zu]: not a PEM certificate", i);
		skid = X509_get0_subject_key_id(x);
		if (!skid || ASN1_STRING_length(skid) < 4) {
			X509_free(x);
			return policy_fail_field(c, "keys", "ima.keys", "[%zu]: the certificate has no subject key "
						 "identifier (IMA names keys by its last 4 bytes)", i);
		}
		memcpy(ima->keys[i].id, ASN1_STRING_get0_data(skid) + ASN1_STRING_length(skid) - 4, 4);
		ima->keys[i].pkey = X509_get_pubkey(x);
		ima->keys[i].cert = x;
		ima->n_keys++; /* freed from here on */
		if (!ima->keys[i].pkey)
			return policy_fail_field(c, "keys", "ima.keys", "[%zu]: its public key cannot be read", i);
	}
	return 0;
}

void policy_ima_free_keys(struct policy_ima *ima)
{
	size_t i;

	for (i = 0; i < ima->n_keys; i++) {
		EVP_PKEY_free(ima->keys[i].pkey);
		X509_free(ima->keys[i].cert);
	}
	free(ima->keys);
}

/* The kernel's enum hash_algo (include/uapi/linux/hash_info.h) for the algorithms it signs with. */
static const EVP_MD *hash_algo_md(uint8_t id)
{
	switch (id) {
	case 2: return EVP_sha1();
	case 4: return EVP_sha256();
	case 5: return EVP_sha384();
	case 6: return EVP_sha512();
	case 7: return EVP_sha224();
	default: return NULL;
	}
}

ima_sig_check policy_ima_check_sig(const struct policy_ima *ima, const uint8_t *sig, size_t sig_size,
				   const uint8_t *digest, size_t digest_size, uint32_t *ret_keyid)
{
	const EVP_MD *md;
	size_t len, i;

	*ret_keyid = 0;
	if (sig_size < 9 || sig[0] != 3 || sig[1] != 2)
		return IMA_SIG_MALFORMED;
	*ret_keyid = (uint32_t) sig[3] << 24 | (uint32_t) sig[4] << 16 | (uint32_t) sig[5] << 8 | sig[6];
	len = (size_t) sig[7] << 8 | sig[8];
	md = hash_algo_md(sig[2]);
	if (len != sig_size - 9 || !md || (size_t) EVP_MD_get_size(md) != digest_size)
		return IMA_SIG_MALFORMED;
	for (i = 0; i < ima->n_keys; i++) {
		EVP_PKEY_CTX *ctx;
		int ok;

		if (memcmp(ima->keys[i].id, sig + 3, 4) != 0)
			continue;
		ctx = EVP_PKEY_CTX_new(ima->keys[i].pkey, NULL);
		ok = ctx && EVP_PKEY_verify_init(ctx) == 1 && EVP_PKEY_CTX_set_signature_md(ctx, md) == 1 &&
		     EVP_PKEY_verify(ctx, sig + 9, len, digest, digest_size) == 1;
		EVP_PKEY_CTX_free(ctx);
		ERR_clear_error(); /* a failed check leaves OpenSSL's reasons queued: not ours to report */
		return ok ? IMA_SIG_VERIFIED : IMA_SIG_BAD;
	}
	return IMA_SIG_UNKNOWN_KEY;
}

/* The signer as the signature names it: issuer and serial, or subject key id. */
static void signer_text(CMS_SignerInfo *si, char *who, size_t who_size)
{
	ASN1_OCTET_STRING *kid = NULL;
	X509_NAME *issuer = NULL;
	ASN1_INTEGER *serial = NULL;
	BIGNUM *bn = NULL;
	char *hex = NULL, name[128];

	snprintf(who, who_size, "an unnamed signer");
	if (CMS_SignerInfo_get0_signer_id(si, &kid, &issuer, &serial) != 1)
		return;
	if (issuer && serial) {
		X509_NAME_oneline(issuer, name, sizeof(name));
		bn = ASN1_INTEGER_to_BN(serial, NULL);
		hex = bn ? BN_bn2hex(bn) : NULL;
		snprintf(who, who_size, "issuer %s, serial %s", name, hex ? hex : "?");
	} else if (kid) {
		size_t n = (size_t) ASN1_STRING_length(kid), k;
		int w = snprintf(who, who_size, "subject key id ");

		for (k = 0; k < n && (size_t) w + 3 < who_size; k++, w += 2)
			snprintf(who + w, who_size - (size_t) w, "%02x", ASN1_STRING_get0_data(kid)[k]);
	}
	OPENSSL_free(hex);
	BN_free(bn);
}

/* si's signature by key k over digest (of md): 1 verified, 0 not. */
static int modsig_verify(CMS_SignerInfo *si, const ima_key *k, const EVP_MD *md, const uint8_t *digest,
			 size_t digest_size)
{
	ASN1_OCTET_STRING *sig, *md_attr;
	EVP_PKEY_CTX *ctx;
	int ok;

	if (CMS_signed_get_attr_count(si) > 0) {
		md_attr = CMS_signed_get0_data_by_OBJ(si, OBJ_nid2obj(NID_pkcs9_messageDigest), -3,
						      V_ASN1_OCTET_STRING);
		if (!md_attr || (size_t) ASN1_STRING_length(md_attr) != digest_size ||
		    memcmp(ASN1_STRING_get0_data(md_attr), digest, digest_size) != 0)
			return 0;
		CMS_SignerInfo_set1_signer_cert(si, k->cert);
		return CMS_SignerInfo_verify(si) == 1;
	}
	sig = CMS_SignerInfo_get0_signature(si);
	ctx = EVP_PKEY_CTX_new(k->pkey, NULL);
	ok = sig && ctx && EVP_PKEY_verify_init(ctx) == 1 && EVP_PKEY_CTX_set_signature_md(ctx, md) == 1 &&
	     EVP_PKEY_verify(ctx, ASN1_STRING_get0_data(sig), (size_t) ASN1_STRING_length(sig), digest,
			     digest_size) == 1;
	EVP_PKEY_CTX_free(ctx);
	return ok;
}

ima_sig_check policy_ima_check_modsig(const struct policy_ima *ima, const uint8_t *modsig, size_t size,
				      const char *algo, const uint8_t *digest, size_t digest_size, char *who,
				      size_t who_size)
{
	const unsigned char *p = modsig;
	CMS_ContentInfo *cms = NULL;
	STACK_OF(CMS_SignerInfo) *sis;
	ima_sig_check r = IMA_SIG_MALFORMED;
	const EVP_MD *want = algo ? EVP_get_digestbyname(algo) : NULL;

	snprintf(who, who_size, "an unreadable signer");
	if (size == 0 || size > MAX_MODSIG || !want || (size_t) EVP_MD_get_size(want) != digest_size)
		return IMA_SIG_MALFORMED;
	cms = d2i_CMS_ContentInfo(NULL, &p, (long) size);
	if (!cms || p != modsig + size || OBJ_obj2nid(CMS_get0_type(cms)) != NID_pkcs7_signed)
		goto out;
	sis = CMS_get0_SignerInfos(cms);
	/* a module has one signer (the kernel's pkcs7 parser refuses others) */
	if (!sis || sk_CMS_SignerInfo_num(sis) != 1)
		goto out;
	{
		CMS_SignerInfo *si = sk_CMS_SignerInfo_value(sis, 0);
		X509_ALGOR *dig = NULL, *sigalg = NULL;
		const EVP_MD *md;

		CMS_SignerInfo_get0_algs(si, NULL, NULL, &dig, &sigalg);
		md = dig ? EVP_get_digestbyobj(dig->algorithm) : NULL;
		signer_text(si, who, who_size);
		if (!md || EVP_MD_get_type(md) != EVP_MD_get_type(want))
			goto out; /* not a signature of d-modsig's digest */
		r = IMA_SIG_UNKNOWN_KEY;
		for (size_t i = 0; i < ima->n_keys; i++)
			if (CMS_SignerInfo_cert_cmp(si, ima->keys[i].cert) == 0) {
				r = modsig_verify(si, &ima->keys[i], md, digest, digest_size) ? IMA_SIG_VERIFIED
											: IMA_SIG_BAD;
				break;
			}
	}
out:
	CMS_ContentInfo_free(cms);
	ERR_clear_error(); /* OpenSSL's reasons of a refusal are not ours to report */
	return r;
}
