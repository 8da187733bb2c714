/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Remote attestation on the machine (docs/attest.md): enrollment (the EK from attest-ek.c, a
 * new AK, the request) and TPM2_ActivateCredential. TPM 2.0 Library Part 3: §12.5
 * ActivateCredential, §23.4 PolicySecret.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shared/json.h"
#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>

#include <mboot/attest.h>
#include <mboot/digest.h>
#include <mboot/seal.h>
#include "shared/json-doc.h"
#include "shared/fail.h"
#include "shared/hex.h"
#include "shared/reader.h"
#include "tpm-internal.h"
#include "attest-internal.h"

/* The AK file and the challenge are small; refuse anything far bigger. */
#define AK_FILE_MAX (64u << 10)
#define CHALLENGE_MAX (64u << 10)
#define NAME_MAX_BYTES (2 + MB_DIGEST_MAX)

/* The AK: a restricted signing key (it signs only what the TPM itself produced: quotes). */
static void ak_template(mb_attest_key_alg alg, TPM2B_PUBLIC *p)
{
	TPMT_PUBLIC *a = &p->publicArea;

	memset(p, 0, sizeof(*p));
	a->nameAlg = TPM2_ALG_SHA256;
	a->objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN |
			      TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_SIGN_ENCRYPT;
	if (alg == MB_ATTEST_KEY_RSA) {
		a->type = TPM2_ALG_RSA;
		a->parameters.rsaDetail.symmetric.algorithm = TPM2_ALG_NULL;
		a->parameters.rsaDetail.scheme.scheme = TPM2_ALG_RSASSA;
		a->parameters.rsaDetail.scheme.details.rsassa.hashAlg = TPM2_ALG_SHA256;
		a->parameters.rsaDetail.keyBits = 2048;
	} else {
		a->type = TPM2_ALG_ECC;
		a->parameters.eccDetail.symmetric.algorithm = TPM2_ALG_NULL;
		a->parameters.eccDetail.scheme.scheme = TPM2_ALG_ECDSA;
		a->parameters.eccDetail.scheme.details.ecdsa.hashAlg = TPM2_ALG_SHA256;
		a->parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
		a->parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
	}
}

static int marshal_public(mb_tpm *t, const TPM2B_PUBLIC *p, uint8_t *out, size_t *size, mb_error *err)
{
	size_t off = 0;
	TSS2_RC rc = sym_Tss2_MU_TPM2B_PUBLIC_Marshal(p, out, sizeof(TPM2B_PUBLIC), &off);

	if (rc != TSS2_RC_SUCCESS)
		return tpm_fail(t, err, rc, "cannot marshal a TPM2B_PUBLIC");
	*size = off;
	return 0;
}


json_t *attest_doc_new(const char *kind)
{
	json_t *root = json_object();

	if (root) {
		json_object_set_new(root, "version", json_integer(1));
		json_object_set_new(root, "kind", json_text(kind));
	}
	return root;
}

/* json_doc_finish, or -ENOMEM. */
int attest_doc_finish(json_t *root, json_build_mark mark, char **ret, mb_error *err)
{
	*ret = root ? json_doc_finish(root, mark) : NULL;
	if (!*ret)
		return set_error(err, -ENOMEM, "out of memory");
	return 0;
}
MB_EXPORT int mb_tpm_attest_enroll(mb_tpm *t, mb_attest_key_alg ak_alg, char **ret_ak_file, char **ret_request,
				   mb_error *err)
{
	TPM2B_PUBLIC *ek_pub = NULL, *ak_pub = NULL, tmpl;
	TPM2B_PRIVATE *ak_priv = NULL;
	TPM2B_SENSITIVE_CREATE sens = { 0 };
	TPM2B_DATA outside = { 0 };
	TPML_PCR_SELECTION creation = { 0 };
	ESYS_TR ek = ESYS_TR_NONE, parent = ESYS_TR_NONE, session = ESYS_TR_NONE;
	bool flush = false, persistent = false, unusable = false;
	uint8_t ek_buf[sizeof(TPM2B_PUBLIC)], ak_buf[sizeof(TPM2B_PUBLIC)], priv_buf[sizeof(TPM2B_PRIVATE)];
	uint8_t name[MB_TPM_NAME_SIZE], *cert = NULL;
	size_t ek_size = 0, ak_size = 0, priv_size = 0, cert_size = 0, off = 0;
	unsigned have_cert = 0;
	ek_kind kind = EK_RSA2048;
	json_t *ak = NULL, *req = NULL, *o;
	json_build_mark mark;
	char index[16], parent_name[16];
	TSS2_RC rc;
	int r;

	*ret_ak_file = *ret_request = NULL;
	if (ak_alg != MB_ATTEST_KEY_ECC && ak_alg != MB_ATTEST_KEY_RSA)
		return set_error(err, -EINVAL, "unknown AK algorithm %d", (int) ak_alg);

	/* The EK whose certificate the TPM holds; without any, the RSA EK (then ECC, for a TPM without RSA). */
	r = attest_ek_cert_indices(t, &have_cert, err);
	if (r < 0)
		return r;
	for (kind = 0; kind < EK_KIND_MAX; kind++)
		if (have_cert & (1u << kind))
			break;
	if (kind == EK_KIND_MAX) {
		r = attest_create_ek(t, EK_RSA2048, &ek, &ek_pub, NULL);
		kind = r < 0 ? EK_ECC_P256 : EK_RSA2048;
	}
	if (ek == ESYS_TR_NONE) {
		r = attest_create_ek(t, kind, &ek, &ek_pub, err);
		if (r < 0)
			goto out;
	}
	sym_Esys_FlushContext(t->esys, ek);
	ek = ESYS_TR_NONE;
	r = marshal_public(t, ek_pub, ek_buf, &ek_size, err);
	if (r < 0)
		goto out;
	if (have_cert & (1u << kind)) {
		r = attest_read_ek_cert(t, attest_ek_kinds[kind].nv_index, &cert, &cert_size, err);
		if (r < 0)
			goto out;
	}

	r = tpm_load_storage_parent(t, &parent, &flush, &persistent, &unusable, err);
	if (r < 0)
		goto out;
	r = tpm_start_session(t, parent, TPM2_SE_HMAC, 0, &session, err);
	if (r < 0)
		goto out;
	ak_template(ak_alg, &tmpl);
	rc = sym_Esys_Create(t->esys, parent, session, ESYS_TR_NONE, ESYS_TR_NONE, &sens, &tmpl, &outside, &creation,
			 &ak_priv, &ak_pub, NULL, NULL, NULL);
	if (rc != TSS2_RC_SUCCESS) {
		r = tpm_classify(t, err, rc, "TPM2_Create of the AK failed");
		goto out;
	}
	r = marshal_public(t, ak_pub, ak_buf, &ak_size, err);
	if (r < 0)
		goto out;
	rc = sym_Tss2_MU_TPM2B_PRIVATE_Marshal(ak_priv, priv_buf, sizeof(priv_buf), &off);
	if (rc != TSS2_RC_SUCCESS) {
		r = tpm_fail(t, err, rc, "cannot marshal the AK's TPM2B_PRIVATE");
		goto out;
	}
	priv_size = off;
	r = mb_tpm_key_name(ak_buf, ak_size, name, err);
	if (r < 0)
		goto out;

	snprintf(parent_name, sizeof(parent_name), "0x%08x", MB_TPM_SRK_HANDLE);
	mark = json_build_begin();
	ak = attest_doc_new("mboot-ak");
	if (ak) {
		json_object_set_new(ak, "alg", json_text(ak_alg == MB_ATTEST_KEY_RSA ? "rsa" : "ecc"));
		json_object_set_new(ak, "public", json_doc_b64_obj(ak_buf, ak_size));
		json_object_set_new(ak, "private", json_doc_b64_obj(priv_buf, priv_size));
		json_object_set_new(ak, "parent", json_text(persistent ? parent_name : "srk-template"));
		json_object_set_new(ak, "name", json_hex(name, sizeof(name)));
		json_object_set_new(ak, "ek", json_text(attest_ek_kinds[kind].name));
	}
	req = attest_doc_new("mboot-attest-request");
	if (req) {
		o = json_object();
		json_object_set_new(req, "ek", o);
		json_object_set_new(o, "public", json_doc_b64_obj(ek_buf, ek_size));
		json_object_set_new(o, "certificate", cert ? json_doc_b64_obj(cert, cert_size) : json_null());
		snprintf(index, sizeof(index), "0x%08x", attest_ek_kinds[kind].nv_index);
		json_object_set_new(o, "nv_index", cert ? json_text(index) : json_null());
		o = json_object();
		json_object_set_new(req, "ak", o);
		json_object_set_new(o, "public", json_doc_b64_obj(ak_buf, ak_size));
		json_object_set_new(o, "name", json_hex(name, sizeof(name)));
	}
	r = attest_doc_finish(ak, mark, ret_ak_file, err);
	ak = NULL;
	if (r == 0)
		r = attest_doc_finish(req, mark, ret_request, err);
	req = NULL;
	if (r < 0) {
		free(*ret_ak_file);
		*ret_ak_file = NULL;
	}
out:
	json_decref(ak);
	json_decref(req);
	explicit_bzero(priv_buf, sizeof(priv_buf));
	free(cert);
	sym_Esys_Free(ek_pub);
	sym_Esys_Free(ak_pub);
	sym_Esys_Free(ak_priv);
	if (ek != ESYS_TR_NONE)
		sym_Esys_FlushContext(t->esys, ek);
	if (session != ESYS_TR_NONE)
		sym_Esys_FlushContext(t->esys, session);
	tpm_drop_parent(t, &parent, flush);
	return r;
}

static int b64_exact(json_t *o, const char *key, uint8_t *out, size_t max, size_t *ret_size, mb_error *err)
{
	uint8_t *p = NULL;
	size_t n = 0;
	int r = json_doc_b64(o, key, max, false, &p, &n, err);

	if (r < 0)
		return r;
	memcpy(out, p, n);
	explicit_bzero(p, n);
	free(p);
	*ret_size = n;
	return 0;
}

/* Up to max bytes of hex of even length; name is the field, for messages. */
static int hex_var(json_t *o, const char *key, uint8_t *out, size_t max, size_t *ret_size, mb_error *err)
{
	json_t *v = json_doc_get(o, key, JSON_STRING);
	size_t len = v ? (size_t) json_string_length(v) : 0;

	if (!v || len == 0 || len % 2 || len / 2 > max || hex_parse(json_string_value(v), len, out, len / 2) < 0)
		return set_error(err, -EBADMSG, "field \"%s\" is not hex of 1 to %zu bytes", key, max);
	*ret_size = len / 2;
	return 0;
}

int attest_ak_file_read(const char *text, size_t size, ak_file *ak, mb_error *err)
{
	json_t *root = NULL, *v;
	uint8_t raw[sizeof(TPM2B_PRIVATE)], name[MB_TPM_NAME_SIZE];
	size_t n = 0, off = 0;
	const TPMA_OBJECT want = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_RESTRICTED |
				 TPMA_OBJECT_SIGN_ENCRYPT;
	const char *s;
	unsigned k;
	int r;

	memset(ak, 0, sizeof(*ak));
	/* It unmarshals with tpm2-tss: a parser may be the first user in a process (the fuzzer is). */
	r = dlopen_tpm2(err);
	if (r < 0)
		return r;
	r = json_doc_open(text, size, AK_FILE_MAX, "the AK file", "mboot-ak", &root, err);
	if (r < 0)
		return r;
	r = b64_exact(root, "public", ak->pub_raw, sizeof(ak->pub_raw), &ak->pub_raw_size, err);
	if (r < 0)
		goto out;
	if (sym_Tss2_MU_TPM2B_PUBLIC_Unmarshal(ak->pub_raw, ak->pub_raw_size, &off, &ak->pub) != TSS2_RC_SUCCESS ||
	    off != ak->pub_raw_size) {
		r = set_error(err, -EBADMSG, "field \"public\" is not one TPM2B_PUBLIC");
		goto out;
	}
	if ((ak->pub.publicArea.objectAttributes & want) != want ||
	    (ak->pub.publicArea.objectAttributes & TPMA_OBJECT_DECRYPT)) {
		r = set_error(err, -EBADMSG, "field \"public\" is not a restricted signing key");
		goto out;
	}
	r = mb_tpm_key_name(ak->pub_raw, ak->pub_raw_size, ak->name, err);
	if (r < 0)
		goto out;
	r = json_doc_hex(root, "name", "name", name, sizeof(name), err);
	if (r < 0)
		goto out;
	if (memcmp(name, ak->name, sizeof(name)) != 0) {
		r = set_error(err, -EBADMSG, "field \"name\" is not the name of field \"public\"");
		goto out;
	}
	r = b64_exact(root, "private", raw, sizeof(raw), &n, err);
	if (r < 0)
		goto out;
	off = 0;
	if (sym_Tss2_MU_TPM2B_PRIVATE_Unmarshal(raw, n, &off, &ak->priv) != TSS2_RC_SUCCESS || off != n ||
	    ak->priv.size == 0) {
		r = set_error(err, -EBADMSG, "field \"private\" is not one TPM2B_PRIVATE");
		goto out;
	}
	v = json_doc_get(root, "parent", JSON_STRING);
	s = v ? json_string_value(v) : "";
	if (strcmp(s, "srk-template") == 0) {
		ak->parent_persistent = false;
	} else if (strlen(s) == 10 && strncmp(s, "0x81", 4) == 0 && hex_parse(s + 2, 8, raw, 4) == 0) {
		ak->parent_persistent = true;
		ak->parent_handle = (uint32_t) raw[0] << 24 | (uint32_t) raw[1] << 16 | (uint32_t) raw[2] << 8 | raw[3];
	} else {
		r = set_error(err, -EBADMSG, "field \"parent\" is neither \"srk-template\" nor a persistent handle");
		goto out;
	}
	v = json_doc_get(root, "ek", JSON_STRING);
	for (k = 0; v && k < EK_KIND_MAX; k++)
		if (strcmp(json_string_value(v), attest_ek_kinds[k].name) == 0)
			break;
	if (!v || k == EK_KIND_MAX) {
		r = set_error(err, -EBADMSG, "field \"ek\" is not \"rsa2048\", \"ecc-p256\" or \"ecc-p384\"");
		goto out;
	}
	ak->ek = (ek_kind) k;
	r = 0;
out:
	explicit_bzero(raw, sizeof(raw));
	json_decref(root);
	return r;
}

int attest_load_ak(mb_tpm *t, const ak_file *ak, ESYS_TR *parent, bool *flush, ESYS_TR *ret, mb_error *err)
{
	ESYS_TR session = ESYS_TR_NONE;
	TSS2_RC rc;
	int r;

	r = tpm_load_parent(t, ak->parent_persistent, ak->parent_handle, parent, flush, err);
	if (r < 0)
		return r;
	r = tpm_start_session(t, *parent, TPM2_SE_HMAC, 0, &session, err);
	if (r < 0)
		return r;
	rc = sym_Esys_Load(t->esys, *parent, session, ESYS_TR_NONE, ESYS_TR_NONE, &ak->priv, &ak->pub, ret);
	sym_Esys_FlushContext(t->esys, session);
	if (rc != TSS2_RC_SUCCESS)
		return tpm_classify(t, err, rc, "TPM2_Load of the AK failed (another TPM, or another parent key?)");
	return 0;
}

static bool rc_is_refusal(TSS2_RC rc)
{
	/* What a credential for another AK name or another EK makes ActivateCredential answer. */
	return tpm_rc_is(rc, TPM2_RC_INTEGRITY) || tpm_rc_is(rc, TPM2_RC_VALUE) || tpm_rc_is(rc, TPM2_RC_SIZE) ||
	       tpm_rc_is(rc, TPM2_RC_ECC_POINT) || tpm_rc_is(rc, TPM2_RC_SCHEME) || tpm_rc_is(rc, TPM2_RC_KEY);
}

int attest_challenge_read(const char *text, size_t size, attest_challenge *ret, mb_error *err)
{
	json_t *root = NULL;
	uint8_t raw[sizeof(TPM2B_ENCRYPTED_SECRET)];
	size_t n = 0, off = 0;
	int r;

	memset(ret, 0, sizeof(*ret));
	r = json_doc_open(text, size, CHALLENGE_MAX, "the challenge", "mboot-attest-challenge", &root, err);
	if (r < 0)
		return r;
	r = hex_var(root, "ak_name", ret->name, sizeof(ret->name), &ret->name_size, err);
	if (r < 0)
		goto out;
	r = b64_exact(root, "credential_blob", raw, sizeof(raw), &n, err);
	if (r < 0)
		goto out;
	if (sym_Tss2_MU_TPM2B_ID_OBJECT_Unmarshal(raw, n, &off, &ret->blob) != TSS2_RC_SUCCESS || off != n ||
	    ret->blob.size == 0) {
		r = set_error(err, -EBADMSG, "field \"credential_blob\" is not one TPM2B_ID_OBJECT");
		goto out;
	}
	r = b64_exact(root, "encrypted_secret", raw, sizeof(raw), &n, err);
	if (r < 0)
		goto out;
	off = 0;
	if (sym_Tss2_MU_TPM2B_ENCRYPTED_SECRET_Unmarshal(raw, n, &off, &ret->secret) != TSS2_RC_SUCCESS || off != n ||
	    ret->secret.size == 0) {
		r = set_error(err, -EBADMSG, "field \"encrypted_secret\" is not one TPM2B_ENCRYPTED_SECRET");
		goto out;
	}
	r = 0;
out:
	json_decref(root);
	return r;
}

MB_EXPORT int mb_tpm_attest_activate(mb_tpm *t, const char *ak_text, size_t ak_text_size, const char *challenge,
				     size_t challenge_size, char **ret_response, mb_error *err)
{
	ak_file ak;
	attest_challenge ch;
	json_t *resp;
	json_build_mark mark;
	TPM2B_DIGEST *cred = NULL;
	TPM2B_PUBLIC *ek_pub = NULL;
	ESYS_TR parent = ESYS_TR_NONE, ak_h = ESYS_TR_NONE, ek = ESYS_TR_NONE, policy = ESYS_TR_NONE;
	ESYS_TR ek_auth = ESYS_TR_PASSWORD;
	bool flush = false;
	TSS2_RC rc;
	int r;

	*ret_response = NULL;
	r = attest_ak_file_read(ak_text, ak_text_size, &ak, err);
	if (r < 0)
		return prefix_error(err, r, "AK file");

	/* The challenge first: a malformed one is an input error before any TPM work. */
	r = attest_challenge_read(challenge, challenge_size, &ch, err);
	if (r < 0)
		goto out_input;
	if (ch.name_size != sizeof(ak.name) || memcmp(ch.name, ak.name, ch.name_size) != 0) {
		r = set_error(err, MB_ERR_ATTEST_REFUSED, "the challenge is for another AK (its ak_name is not this AK's "
			    "name): it was made from another enrollment request");
		goto out;
	}

	r = attest_create_ek(t, ak.ek, &ek, &ek_pub, err);
	if (r < 0)
		goto out;
	r = attest_load_ak(t, &ak, &parent, &flush, &ak_h, err);
	if (r < 0)
		goto out;
	if (!(ek_pub->publicArea.objectAttributes & TPMA_OBJECT_USERWITHAUTH)) {
		/* The low-range EKs: only PolicyA (PolicySecret on the endorsement hierarchy) authorises them. */
		static const TPMT_SYM_DEF no_sym = { .algorithm = TPM2_ALG_NULL };
		TPM2B_NONCE nonce_tpm = { 0 };
		TPM2B_DIGEST cp_hash = { 0 };
		TPM2B_NONCE ref = { 0 };

		rc = sym_Esys_StartAuthSession(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
					   ESYS_TR_NONE, NULL, TPM2_SE_POLICY, &no_sym, ek_pub->publicArea.nameAlg,
					   &policy);
		if (rc != TSS2_RC_SUCCESS) {
			r = tpm_classify(t, err, rc, "TPM2_StartAuthSession of the EK's policy session failed");
			goto out;
		}
		rc = sym_Esys_PolicySecret(t->esys, ESYS_TR_RH_ENDORSEMENT, policy, ESYS_TR_PASSWORD, ESYS_TR_NONE,
				       ESYS_TR_NONE, &nonce_tpm, &cp_hash, &ref, 0, NULL, NULL);
		if (rc != TSS2_RC_SUCCESS) {
			r = tpm_classify(t, err, rc, "TPM2_PolicySecret(TPM_RH_ENDORSEMENT) failed (an endorsement "
					 "hierarchy password?)");
			goto out;
		}
		ek_auth = policy;
	}
	rc = sym_Esys_ActivateCredential(t->esys, ak_h, ek, ESYS_TR_PASSWORD, ek_auth, ESYS_TR_NONE, &ch.blob, &ch.secret,
				     &cred);
	if (rc != TSS2_RC_SUCCESS) {
		r = tpm_classify(t, err, rc, "TPM2_ActivateCredential failed");
		if (rc_is_refusal(rc))
			r = set_error(err, MB_ERR_ATTEST_REFUSED, "the TPM cannot open the credential: it was not made "
				    "for this AK and this TPM's EK (TPM response code 0x%08x)", rc);
		goto out;
	}

	mark = json_build_begin();
	resp = attest_doc_new("mboot-attest-response");
	if (resp) {
		json_object_set_new(resp, "ak_name", json_hex(ak.name, sizeof(ak.name)));
		json_object_set_new(resp, "credential", json_doc_b64_obj(cred->buffer, cred->size));
	}
	r = attest_doc_finish(resp, mark, ret_response, err);
	goto out;
out_input:
	r = prefix_error(err, r, "challenge");
out:
	if (cred)
		explicit_bzero(cred, sizeof(*cred));
	sym_Esys_Free(cred);
	sym_Esys_Free(ek_pub);
	if (policy != ESYS_TR_NONE)
		sym_Esys_FlushContext(t->esys, policy);
	if (ak_h != ESYS_TR_NONE)
		sym_Esys_FlushContext(t->esys, ak_h);
	if (ek != ESYS_TR_NONE)
		sym_Esys_FlushContext(t->esys, ek);
	tpm_drop_parent(t, &parent, flush);
	return r;
}
