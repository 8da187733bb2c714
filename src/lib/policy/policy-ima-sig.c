/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The "ima" section's "keys": X.509 certificates (PEM) whose keys sign files, as IMA's keyrings
 * hold them; an ima-sig/ima-modsig entry whose signature one of them verifies is allowed.
 * IMA's signature (the sig field, ima-evm-utils' signature_v2_hdr): type 3 (EVM_IMA_XATTR_DIGSIG),
 * version 2, the kernel's hash_algo id, the key id (the last 4 bytes of the certificate's
 * subject key identifier, big-endian), the signature's size (u16 big-endian), the signature:
 * PKCS#1 v1.5 or ECDSA over the file digest, as public_key_verify_signature checks it.
 */
#include <errno.h>
#include <string.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "policy-ima.h"
#include "shared/fail.h"

#define MAX_KEYS 256

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
		X509_free(x);
		if (!ima->keys[i].pkey)
			return policy_fail_field(c, "keys", "ima.keys", "[%zu]: its public key cannot be read", i);
		ima->n_keys++;
	}
	return 0;
}

void policy_ima_free_keys(struct policy_ima *ima)
{
	size_t i;

	for (i = 0; i < ima->n_keys; i++)
		EVP_PKEY_free(ima->keys[i].pkey);
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
