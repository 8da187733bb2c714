/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Enrollment on the verifier (docs/attest.md): check a machine's request (EK certificate, AK
 * attributes, AK name) and make a credential only that machine's TPM can recover, and only
 * for that AK; then check the machine's answer and write the machine record `attest verify`
 * trusts. Requests, states and responses are untrusted input: the strict JSON reader, size
 * caps, and the bounded reader for every TPM structure (tpm-public.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shared/json.h"
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <mboot/attest.h>
#include <mboot/seal.h>
#include "shared/json-doc.h"
#include "shared/fail.h"
#include "shared/hex.h"
#include "shared/options.h"
#include "credential.h"
#include "ek-roots.h"
#include "tpm-public.h"

/* Caps on what the verifier reads: a request is two public areas and one certificate. */
#define REQUEST_MAX (64u << 10)
#define STATE_MAX (64u << 10)
#define RESPONSE_MAX (4u << 10)
#define PUBLIC_MAX 1024    /* TPM2B_PUBLIC of an RSA 4096 key is ~600 bytes */
#define EK_CERT_MAX (16u << 10)
#define CREDENTIAL_SIZE 32 /* random bytes the machine must recover */

typedef struct request {
	uint8_t *ek_pub, *ek_cert, *ak_pub;
	size_t ek_pub_size, ek_cert_size, ak_pub_size;
	tpm_public ek, ak;
} request;

static void request_done(request *q)
{
	free(q->ek_pub);
	free(q->ek_cert);
	free(q->ak_pub);
	memset(q, 0, sizeof(*q));
}


/* o[key]: hex of 1..max bytes into out. */
static int get_hex(json_t *o, const char *key, const char *name, uint8_t *out, size_t max, size_t *ret_size,
		   mb_error *err)
{
	json_t *v = json_doc_get(o, key, JSON_STRING);
	size_t len = v ? (size_t) json_string_length(v) : 0;

	if (!v || len == 0 || len % 2 || len / 2 > max ||
	    hex_parse(json_string_value(v), len, out, len / 2) < 0)
		return set_error(err, -EBADMSG, "field \"%s\" is missing or not hex of at most %zu bytes", name, max);
	*ret_size = len / 2;
	return 0;
}

static int get_b64(json_t *o, const char *key, const char *name, size_t max, bool optional, uint8_t **ret,
		   size_t *ret_size, mb_error *err)
{
	int r = json_doc_b64(o, key, max, optional, ret, ret_size, err);

	return r < 0 ? prefix_error(err, r, name) : 0;
}

static bool has(uint32_t attrs, uint32_t bits)
{
	return (attrs & bits) == bits;
}

/*
 * The request object (also kept inside the state). Structure errors are -EBADMSG; an AK name
 * that is not its public's Name is a refusal: the credential would be bound to another key.
 */
static int request_parse(json_t *root, request *q, mb_error *err)
{
	uint8_t name[TPM_NAME_MAX];
	size_t name_size;
	json_t *ek, *ak, *v;
	int r;

	memset(q, 0, sizeof(*q));
	ek = json_doc_get(root, "ek", JSON_OBJECT);
	ak = json_doc_get(root, "ak", JSON_OBJECT);
	if (!ek || !ak)
		return set_error(err, -EBADMSG, "field \"%s\" is missing or not an object", ek ? "ak" : "ek");
	r = get_b64(ek, "public", "ek", PUBLIC_MAX, false, &q->ek_pub, &q->ek_pub_size, err);
	if (r >= 0)
		r = get_b64(ek, "certificate", "ek", EK_CERT_MAX, true, &q->ek_cert, &q->ek_cert_size, err);
	if (r >= 0 && ((v = json_object_get(ek, "nv_index")) != NULL) && !json_is_null_or_absent(v)) {
		const char *s = json_string_value(v);
		uint8_t idx[4];

		/* informational only, but still one spelling: "0x" and 8 hex digits */
		if (!json_is_string(v) || json_string_length(v) != 10 || s[0] != '0' ||
		    s[1] != 'x' || hex_parse(s + 2, 8, idx, 4) < 0)
			r = set_error(err, -EBADMSG, "field \"ek.nv_index\" is not null or \"0x\" and 8 hex digits");
	}
	if (r >= 0)
		r = get_b64(ak, "public", "ak", PUBLIC_MAX, false, &q->ak_pub, &q->ak_pub_size, err);
	if (r >= 0)
		r = get_hex(ak, "name", "ak.name", name, sizeof(name), &name_size, err);
	if (r >= 0 && (r = tpm_public_parse(q->ek_pub, q->ek_pub_size, &q->ek, err)) < 0)
		r = prefix_error(err, r, "ek.public");
	if (r >= 0 && (r = tpm_public_parse(q->ak_pub, q->ak_pub_size, &q->ak, err)) < 0)
		r = prefix_error(err, r, "ak.public");
	if (r >= 0 && (name_size != q->ak.name_size || memcmp(name, q->ak.name, name_size) != 0))
		r = set_error(err, MB_ERR_ATTEST_REFUSED, "ak.name is not the Name of ak.public");
	if (r < 0)
		request_done(q);
	return r;
}

/*
 * What makes a key an AK whose quotes mean something (go-attestation CVE-2022-0317): it signs
 * only what the TPM itself made (restricted, sign, not decrypt), and its private part never
 * existed outside this TPM (fixedTPM, fixedParent, sensitiveDataOrigin).
 */
static int check_ak(const tpm_public *ak, mb_error *err)
{
	static const struct {
		uint32_t bit;
		bool want;
		const char *why;
	} rules[] = {
		{ TPMA_RESTRICTED, true, "not restricted (it could sign a forged quote)" },
		{ TPMA_SIGN, true, "not a signing key" },
		{ TPMA_DECRYPT, false, "also a decryption key" },
		{ TPMA_FIXED_TPM, true, "not fixedTPM (it may be duplicated out of the TPM)" },
		{ TPMA_FIXED_PARENT, true, "not fixedParent (it may be duplicated)" },
		{ TPMA_SENSITIVE_DATA_ORIGIN, true, "not sensitiveDataOrigin (its private key was made outside the TPM)" },
	};
	size_t i;

	for (i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (has(ak->attributes, rules[i].bit) != rules[i].want)
			return set_error(err, MB_ERR_ATTEST_REFUSED, "the AK is %s (attributes 0x%08x)", rules[i].why,
				       ak->attributes);
	return 0;
}

/* The EK must be a storage key a credential can be protected to, and one that stays in its TPM. */
static int check_ek(const tpm_public *ek, mb_error *err)
{
	if (!has(ek->attributes, TPMA_RESTRICTED | TPMA_DECRYPT | TPMA_FIXED_TPM | TPMA_FIXED_PARENT) ||
	    (ek->attributes & TPMA_SIGN))
		return set_error(err, MB_ERR_ATTEST_REFUSED,
			       "the EK is not a restricted, fixedTPM decryption key (attributes 0x%08x)", ek->attributes);
	if (ek->sym_alg != TPM_ALG_AES || ek->sym_mode != TPM_ALG_CFB)
		return set_error(err, MB_ERR_ATTEST_REFUSED, "the EK's symmetric algorithm is not AES in CFB mode");
	if (!attest_md(ek->name_alg))
		return set_error(err, MB_ERR_ATTEST_REFUSED, "the EK's nameAlg 0x%04x is not SHA-256, -384 or -512",
			       ek->name_alg);
	return 0;
}

static json_t *now_obj(void)
{
	char buf[32];
	struct tm tm;
	time_t t = time(NULL);

	if (!gmtime_r(&t, &tm) || !strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm))
		return NULL;
	return json_text(buf);
}

static json_t *new_doc(const char *kind)
{
	json_t *o = json_object();

	if (o) {
		json_object_set_new(o, "version", json_integer(1));
		json_object_set_new(o, "kind", json_text(kind));
	}
	return o;
}

MB_EXPORT int mb_attest_challenge_make(const char *request_text, size_t request_size,
				       const mb_attest_challenge_options *opts_in, char **ret_challenge,
				       char **ret_state, mb_error *err)
{
	mb_attest_challenge_options o;
	const mb_attest_challenge_options *opts = &o;
	uint8_t cred[CREDENTIAL_SIZE], cred_digest[SHA256_DIGEST_LENGTH], cert_digest[SHA256_DIGEST_LENGTH];
	uint8_t *id = NULL, *secret = NULL;
	size_t id_size = 0, secret_size = 0;
	json_t *root = NULL, *ch = NULL, *st = NULL;
	json_build_mark mark;
	attest_protector prot = { 0 };
	bool cert_checked = false, cert_expired = false;
	request q = { 0 };
	int r;

	if (!request_text || !opts_in || !ret_challenge || !ret_state)
		return set_error(err, -EINVAL, "missing argument");
	r = OPTIONS_TAKE(o, opts_in, err);
	if (r < 0)
		return r;
	*ret_challenge = *ret_state = NULL;
	r = json_doc_open(request_text, request_size, REQUEST_MAX, "the request", "mboot-attest-request", &root,
			   err);
	if (r < 0)
		return r;
	r = request_parse(root, &q, err);
	if (r < 0)
		goto out;
	r = check_ek(&q.ek, err);
	if (r >= 0)
		r = check_ak(&q.ak, err);
	if (r < 0)
		goto out;

	/*
	 * The EK certificate: checked whenever there are CAs to check it against. Without CAs, only
	 * allow_no_ek_cert (trust on first use) goes on, and then a certificate is not looked at:
	 * the machine record names no fingerprint it did not check.
	 */
	if (ek_roots_count(opts->roots) > 0 && q.ek_cert) {
		r = ek_cert_check(opts->roots, q.ek_cert, q.ek_cert_size, &q.ek, opts->ek_check_validity, cert_digest,
				  &cert_expired, err);
		if (r < 0)
			goto out;
		cert_checked = true;
	} else if (!opts->allow_no_ek_cert) {
		r = q.ek_cert ? set_error(err, -EINVAL, "no EK CA certificates to check the EK certificate against")
			      : set_error(err, MB_ERR_ATTEST_REFUSED,
					"the request has no EK certificate (allow that only to trust on first use)");
		goto out;
	}

	if (RAND_bytes(cred, sizeof(cred)) != 1) {
		r = set_error(err, -EIO, "no random bytes for the credential");
		goto out;
	}
	r = tpm_public_to_pkey(&q.ek, &prot.pkey, err);
	if (r < 0) {
		r = prefix_error(err, r, "ek.public");
		goto out;
	}
	prot.name_alg = q.ek.name_alg;
	prot.sym_bits = q.ek.sym_bits;
	if (q.ek.type == TPM_ALG_ECC) {
		prot.ecc_x = q.ek.x;
		prot.ecc_x_size = q.ek.x_size;
	}
	r = attest_make_credential(&prot, q.ak.name, q.ak.name_size, cred, sizeof(cred), &id, &id_size, &secret,
				   &secret_size, err);
	if (r < 0)
		goto out;
	SHA256(cred, sizeof(cred), cred_digest);

	mark = json_build_begin();
	ch = new_doc("mboot-attest-challenge");
	st = new_doc("mboot-attest-state");
	if (!ch || !st) {
		r = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	json_object_set_new(ch, "ak_name", json_hex(q.ak.name, q.ak.name_size));
	json_object_set_new(ch, "credential_blob", json_doc_b64_obj(id, id_size));
	json_object_set_new(ch, "encrypted_secret", json_doc_b64_obj(secret, secret_size));
	json_object_set_new(st, "credential_sha256", json_hex(cred_digest, sizeof(cred_digest)));
	json_object_set_new(st, "ek_certificate_sha256",
			       cert_checked ? json_hex(cert_digest, sizeof(cert_digest)) : json_null());
	/* A note, not a refusal (unless ek_check_validity): the certificate's dates, now. */
	json_object_set_new(st, "ek_certificate_expired", cert_checked ? json_boolean(cert_expired) : json_null());
	json_object_set_new(st, "request", json_incref(root));
	json_object_set_new(st, "created", now_obj());
	*ret_challenge = json_doc_finish(ch, mark);
	*ret_state = json_doc_finish(st, mark);
	ch = st = NULL;
	if (!*ret_challenge || !*ret_state) {
		free(*ret_challenge);
		free(*ret_state);
		*ret_challenge = *ret_state = NULL;
		r = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	r = 0;
out:
	OPENSSL_cleanse(cred, sizeof(cred));
	EVP_PKEY_free(prot.pkey);
	json_decref(ch);
	json_decref(st);
	json_decref(root);
	free(id);
	free(secret);
	request_done(&q);
	return r;
}

MB_EXPORT int mb_attest_challenge_check(const char *state_text, size_t state_size, const char *response_text,
					size_t response_size, char **ret_machine, mb_error *err)
{
	uint8_t want[SHA256_DIGEST_LENGTH], got[SHA256_DIGEST_LENGTH], cert_digest[SHA256_DIGEST_LENGTH];
	uint8_t name[TPM_NAME_MAX], *cred = NULL;
	size_t name_size = 0, cred_size = 0;
	json_t *st = NULL, *resp = NULL, *req, *v, *m = NULL;
	json_build_mark mark;
	bool has_cert = false;
	request q = { 0 };
	int r;

	if (!state_text || !response_text || !ret_machine)
		return set_error(err, -EINVAL, "missing argument");
	*ret_machine = NULL;

	/* The state is the verifier's own file, but read as strictly as anything else. */
	r = json_doc_open(state_text, state_size, STATE_MAX, "the state", "mboot-attest-state", &st, err);
	if (r < 0)
		return prefix_error(err, r, "state");
	r = json_doc_hex(st, "credential_sha256", "credential_sha256", want, sizeof(want), err);
	if (r >= 0 && ((v = json_object_get(st, "ek_certificate_sha256")) != NULL) &&
	    !json_is_null_or_absent(v)) {
		r = json_doc_hex(st, "ek_certificate_sha256", "ek_certificate_sha256", cert_digest,
				  sizeof(cert_digest), err);
		has_cert = true;
	}
	if (r >= 0 && !(req = json_doc_get(st, "request", JSON_OBJECT)))
		r = set_error(err, -EBADMSG, "field \"request\" is missing or not an object");
	if (r >= 0)
		r = request_parse(req, &q, err);
	if (r < 0) {
		r = prefix_error(err, r == MB_ERR_ATTEST_REFUSED ? -EBADMSG : r, "state");
		goto out;
	}

	r = json_doc_open(response_text, response_size, RESPONSE_MAX, "the response", "mboot-attest-response",
			   &resp, err);
	if (r >= 0)
		r = get_hex(resp, "ak_name", "ak_name", name, sizeof(name), &name_size, err);
	if (r >= 0)
		r = json_doc_b64(resp, "credential", 64, false, &cred, &cred_size, err);
	if (r < 0) {
		r = prefix_error(err, r, "response");
		goto out;
	}
	if (name_size != q.ak.name_size || memcmp(name, q.ak.name, name_size) != 0) {
		r = set_error(err, MB_ERR_ATTEST_REFUSED, "the response is for another AK than the challenge's");
		goto out;
	}
	/* Compared as digests, in constant time: the state never held the credential itself. */
	SHA256(cred, cred_size, got);
	if (CRYPTO_memcmp(got, want, sizeof(got)) != 0) {
		r = set_error(err, MB_ERR_ATTEST_REFUSED,
			    "the response's credential is not the challenge's: the challenge was not activated by "
			    "the TPM of the request's EK");
		goto out;
	}

	mark = json_build_begin();
	m = new_doc("mboot-machine");
	if (!m) {
		r = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	json_object_set_new(m, "ak_public", json_doc_b64_obj(q.ak_pub, q.ak_pub_size));
	json_object_set_new(m, "ak_name", json_hex(q.ak.name, q.ak.name_size));
	json_object_set_new(m, "ek_public", json_doc_b64_obj(q.ek_pub, q.ek_pub_size));
	json_object_set_new(m, "ek_certificate_sha256", has_cert ? json_hex(cert_digest, sizeof(cert_digest)) : json_null());
	json_object_set_new(m, "ek_certificate_expired",
			       has_cert && ((v = json_object_get(st, "ek_certificate_expired")) != NULL) &&
					       json_is_boolean(v) ?
				       json_boolean(json_is_true(v)) : json_null());
	json_object_set_new(m, "enrolled", now_obj());
	*ret_machine = json_doc_finish(m, mark);
	m = NULL;
	r = *ret_machine ? 0 : set_error(err, -ENOMEM, "out of memory");
out:
	json_decref(m);
	json_decref(resp);
	json_decref(st);
	if (cred)
		OPENSSL_clear_free(cred, cred_size);
	request_done(&q);
	return r;
}
