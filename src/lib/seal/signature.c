/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Signed policies (docs/seal.md): PCR values a key's owner approves for secrets sealed
 * with TPM2_PolicyAuthorize. The approved policy is the PolicyPCR digest of the
 * values; the signature is over aHash = SHA-256(approvedPolicy || policyRef) with an
 * empty policyRef (TPM 2.0 Part 3 §23.16), in the bytes `openssl dgst -sha256 -sign`
 * writes, so that a release can also sign and check with openssl alone.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <mboot/digest.h>
#include <mboot/seal.h>
#include <mboot/tpm-policy.h>
#include "shared/fail.h"
#include "shared/hex.h"
#include "seal-json.h"

#define SIGNATURE_MAX_FILE (1u << 20)
#define KEY_PEM_MAX (64u << 10)

MB_EXPORT void mb_policy_signature_done(mb_policy_signature *sig)
{
	if (!sig)
		return;
	free(sig->sig);
	memset(sig, 0, sizeof(*sig));
}

MB_EXPORT int mb_policy_sign(const uint8_t *key_pem, size_t key_pem_size, mb_policy_signature *sig, mb_error *err)
{
	EVP_PKEY *pk = NULL;
	EVP_MD_CTX *md = NULL;
	BIO *bio;
	uint8_t *out = NULL;
	size_t n = 0;
	int r;

	free(sig->sig);
	sig->sig = NULL;
	sig->sig_size = 0;
	if (key_pem_size == 0 || key_pem_size > KEY_PEM_MAX)
		return set_error(err, -EBADMSG, "not a PEM private key (empty, or over %u bytes)", KEY_PEM_MAX);
	bio = BIO_new_mem_buf(key_pem, (int) key_pem_size);
	if (bio)
		/* an encrypted key is refused (no prompt in a library): the passphrase "" fails */
		pk = PEM_read_bio_PrivateKey(bio, NULL, NULL, (void *) "");
	BIO_free(bio);
	if (!pk)
		return set_error(err, -EBADMSG, "not an unencrypted PEM private key");
	if (EVP_PKEY_is_a(pk, "RSA"))
		sig->scheme = MB_SIG_RSASSA;
	else if (EVP_PKEY_is_a(pk, "EC")) {
		char curve[32] = "";

		if (!EVP_PKEY_get_utf8_string_param(pk, OSSL_PKEY_PARAM_GROUP_NAME, curve, sizeof(curve), NULL) ||
		    strcmp(curve, "prime256v1") != 0) {
			EVP_PKEY_free(pk);
			return set_error(err, -EOPNOTSUPP, "an EC key on curve %s (NIST P-256 is taken)", *curve ? curve : "?");
		}
		sig->scheme = MB_SIG_ECDSA;
	} else {
		EVP_PKEY_free(pk);
		return set_error(err, -EOPNOTSUPP, "not an RSA or EC key");
	}
	/* RSA: PKCS#1 v1.5, the default padding and what TPM_ALG_RSASSA verifies. */
	md = EVP_MD_CTX_new();
	r = md && EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, pk) == 1 &&
	    EVP_DigestSign(md, NULL, &n, sig->approved, sizeof(sig->approved)) == 1 && n <= MB_SIG_MAX &&
	    (out = malloc(n)) && EVP_DigestSign(md, out, &n, sig->approved, sizeof(sig->approved)) == 1;
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(pk);
	if (!r) {
		free(out);
		return set_error(err, -EINVAL, "signing failed");
	}
	sig->sig = out;
	sig->sig_size = n;
	return 0;
}

/* The signature's bytes fit its scheme: what the TPM's TPMT_SIGNATURE can carry. */
static int check_signature_bytes(const mb_policy_signature *s, mb_error *err)
{
	const unsigned char *p = s->sig;
	ECDSA_SIG *es;
	const BIGNUM *r, *q;
	bool ok;

	if (s->scheme == MB_SIG_RSASSA)
		return 0; /* json_doc_b64 capped it at MB_SIG_MAX, the TPM's MAX_RSA_KEY_BYTES */
	es = d2i_ECDSA_SIG(NULL, &p, (long) s->sig_size);
	ok = es && p == s->sig + s->sig_size;
	if (ok) {
		ECDSA_SIG_get0(es, &r, &q);
		ok = BN_num_bytes(r) <= 32 && BN_num_bytes(q) <= 32;
	}
	ECDSA_SIG_free(es);
	if (!ok)
		return set_error(err, -EBADMSG, "field \"signature.value\" is not one DER ECDSA-Sig-Value of a P-256 key");
	return 0;
}

MB_EXPORT int mb_policy_signature_approve(mb_policy_signature *sig, mb_error *err)
{
	uint8_t pcr[MB_POLICY_DIGEST_SIZE], name[MB_TPM_NAME_SIZE];
	int r = mb_policy_pcr_digest(NULL, &sig->pcrs, sig->mask, sig->counter ? pcr : sig->approved, err);

	if (r < 0 || !sig->counter)
		return r;
	r = mb_nv_counter_name(sig->counter_index, name, err);
	if (r == 0)
		r = mb_policy_nv_counter_digest(pcr, name, sig->counter_value, sig->approved, err);
	return r;
}

/* "counter": {"nv-index": "0x01800b01", "value": N} of a revocable signature. */
static int parse_counter(json_t *o, mb_policy_signature *s, mb_error *err)
{
	json_t *v;
	const char *h;
	char *end;
	unsigned long long x;
	int64_t c;

	if (!json_is_object(o))
		return set_error(err, -EBADMSG, "field \"counter\" is not an object");
	v = json_doc_get(o, "nv-index", JSON_STRING);
	h = v ? json_string_value(v) : "";
	x = strtoull(h, &end, 16);
	if (strncmp(h, "0x", 2) != 0 || json_string_length(v) != 10 || *end || x < MB_NV_OWNER_FIRST ||
	    x > MB_NV_OWNER_LAST)
		return set_error(err, -EBADMSG, "field \"counter.nv-index\" is not an NV index of the owner range "
				 "(0x%08x-0x%08x)", MB_NV_OWNER_FIRST, MB_NV_OWNER_LAST);
	v = json_doc_get(o, "value", JSON_INTEGER);
	c = v ? json_integer_value(v) : -1;
	if (c < 0 || c == INT64_MAX)
		return set_error(err, -EBADMSG, "field \"counter.value\" is not an integer from 0 to %lld",
				 (long long) INT64_MAX - 1);
	s->counter = true;
	s->counter_index = (uint32_t) x;
	s->counter_value = (uint64_t) c;
	return 0;
}

MB_EXPORT int mb_policy_signature_parse(const char *text, size_t size, mb_policy_signature *ret, mb_error *err)
{
	json_t *root = NULL, *o, *v;
	mb_policy_signature s = { 0 };
	uint8_t want[MB_POLICY_DIGEST_SIZE];
	const char *scheme;
	int r;

	memset(ret, 0, sizeof(*ret));
	r = json_doc_open(text, size, SIGNATURE_MAX_FILE, "signature file", "mboot-policy-signature", &root, err);
	if (r < 0)
		return r;
	r = seal_json_pcr_state(json_doc_get(root, "pcrs", JSON_OBJECT), "pcrs", &s.pcrs, &s.mask, err);
	if (r == 0 && s.mask == 0)
		r = set_error(err, -EBADMSG, "field \"pcrs.selection\" is empty: a signature for no PCRs approves any boot");
	if (r == 0)
		r = json_doc_hex(root, "policy", "policy", want, sizeof(want), err);
	if (r == 0 && ((o = json_object_get(root, "counter")) != NULL))
		r = parse_counter(o, &s, err);
	if (r == 0)
		r = mb_policy_signature_approve(&s, err);
	if (r == 0 && memcmp(want, s.approved, sizeof(want)) != 0)
		r = set_error(err, -EBADMSG, s.counter ? "field \"policy\" is not the PolicyPCR + PolicyNV digest of "
			      "\"pcrs\" and \"counter\"" : "field \"policy\" is not the PolicyPCR digest of \"pcrs\"");
	if (r < 0)
		goto fail;
	o = json_doc_get(root, "key", JSON_OBJECT);
	if (!o) {
		r = set_error(err, -EBADMSG, "field \"key\" is missing or not an object");
		goto fail;
	}
	r = json_doc_hex(o, "name", "key.name", s.key_name, sizeof(s.key_name), err);
	if (r < 0)
		goto fail;
	if (s.key_name[0] != 0x00 || s.key_name[1] != 0x0b) {
		r = set_error(err, -EBADMSG, "field \"key.name\" is not a SHA-256 name (000b...)");
		goto fail;
	}
	o = json_doc_get(root, "signature", JSON_OBJECT);
	v = o ? json_doc_get(o, "scheme", JSON_STRING) : NULL;
	scheme = v ? json_string_value(v) : "";
	if (strcmp(scheme, "rsassa") == 0)
		s.scheme = MB_SIG_RSASSA;
	else if (strcmp(scheme, "ecdsa") == 0)
		s.scheme = MB_SIG_ECDSA;
	else {
		r = set_error(err, -EBADMSG, "field \"signature.scheme\" is missing or not \"rsassa\" or \"ecdsa\"");
		goto fail;
	}
	v = json_doc_get(o, "hash", JSON_STRING);
	if (!v || strcmp(json_string_value(v), "sha256") != 0) {
		r = set_error(err, -EBADMSG, "field \"signature.hash\" is not \"sha256\"");
		goto fail;
	}
	r = json_doc_b64(o, "value", MB_SIG_MAX, false, &s.sig, &s.sig_size, err);
	if (r < 0) {
		prefix_error(err, r, "signature");
		goto fail;
	}
	if (s.sig_size == 0) {
		r = set_error(err, -EBADMSG, "field \"signature.value\" is empty");
		goto fail;
	}
	r = check_signature_bytes(&s, err);
	if (r < 0)
		goto fail;
	json_decref(root);
	*ret = s;
	return 0;
fail:
	json_decref(root);
	mb_policy_signature_done(&s);
	return r;
}

MB_EXPORT char *mb_policy_signature_to_json(const mb_policy_signature *sig)
{
	json_build_mark mark = json_build_begin();
	json_t *root = json_object(), *key = json_object(), *so = json_object();
	char hex[2 * MB_DIGEST_MAX + 1];
	int bad = 0;

	if (!root || !key || !so || !mb_digest_by_alg(sig->pcrs.alg)) {
		json_decref(root);
		json_decref(key);
		json_decref(so);
		return NULL;
	}
	bad |= json_object_set_new(root, "version", json_integer(1));
	bad |= json_object_set_new(root, "kind", json_text("mboot-policy-signature"));
	bad |= json_object_set_new(root, "pcrs", seal_json_pcr_state_obj(&sig->pcrs, sig->mask));
	bad |= json_object_set_new(root, "policy",
			       json_text(hex_format(sig->approved, MB_POLICY_DIGEST_SIZE, hex)));
	if (sig->counter) {
		json_t *c = json_object();

		snprintf(hex, sizeof(hex), "0x%08x", sig->counter_index);
		bad |= json_object_set_new(c, "nv-index", json_text(hex));
		bad |= json_object_set_new(c, "value", json_integer((int64_t) sig->counter_value));
		bad |= json_object_set_new(root, "counter", c);
	}
	bad |= json_object_set_new(key, "name", json_text(hex_format(sig->key_name, MB_TPM_NAME_SIZE, hex)));
	bad |= json_object_set_new(root, "key", key);
	bad |= json_object_set_new(so, "scheme", json_text(sig->scheme == MB_SIG_ECDSA ? "ecdsa" : "rsassa"));
	bad |= json_object_set_new(so, "hash", json_text("sha256"));
	bad |= json_object_set_new(so, "value", json_doc_b64_obj(sig->sig, sig->sig_size));
	bad |= json_object_set_new(root, "signature", so);
	if (bad) { /* a member that could not be made (ENOMEM): no document rather than one without it */
		json_decref(root);
		return NULL;
	}
	return json_doc_finish(root, mark);
}
