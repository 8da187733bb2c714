/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Seal and unseal with ESAPI. TPM 2.0 Library Part 3: §11.1 StartAuthSession,
 * §12.1 Create, §12.2 Load, §12.7 Unseal, §23.7 PolicyPCR, §24.1 CreatePrimary;
 * Part 2 §12.2 TPMT_PUBLIC. The SRK template is the TCG "TPM v2.0 Provisioning
 * Guidance" storage key: ECC NIST P-256, AES-128-CFB, SHA-256 name.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/ecdsa.h>
#include <openssl/hmac.h>
#include <openssl/x509.h>

#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>

#include <mboot/digest.h>
#include <mboot/seal.h>
#include <mboot/tpm-policy.h>
#include <mboot/tpm.h>
#include "shared/fail.h"
#include "tpm-internal.h"
#include "unseal-internal.h"

#define UNSEAL_MAX_TRIES 5

static const TPMT_SYM_DEF session_sym = {
	.algorithm = TPM2_ALG_AES,
	.keyBits = { .aes = 128 },
	.mode = { .aes = TPM2_ALG_CFB },
};

static void srk_template(TPM2B_PUBLIC *p)
{
	memset(p, 0, sizeof(*p));
	p->publicArea.type = TPM2_ALG_ECC;
	p->publicArea.nameAlg = TPM2_ALG_SHA256;
	p->publicArea.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
					 TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH |
					 TPMA_OBJECT_NODA | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT;
	p->publicArea.parameters.eccDetail.symmetric.algorithm = TPM2_ALG_AES;
	p->publicArea.parameters.eccDetail.symmetric.keyBits.aes = 128;
	p->publicArea.parameters.eccDetail.symmetric.mode.aes = TPM2_ALG_CFB;
	p->publicArea.parameters.eccDetail.scheme.scheme = TPM2_ALG_NULL;
	p->publicArea.parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
	p->publicArea.parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
	/* Provisioning Guidance: unique is two 32-byte zero coordinates. */
	p->publicArea.unique.ecc.x.size = 32;
	p->publicArea.unique.ecc.y.size = 32;
}

bool tpm_rc_is(TSS2_RC rc, uint32_t code)
{
	if ((rc & TSS2_RC_LAYER_MASK) != TSS2_TPM_RC_LAYER && (rc & TSS2_RC_LAYER_MASK) != TSS2_RESMGR_TPM_RC_LAYER)
		return false;
	/* Format 1 (bit 7): the handle/session/parameter number in bits 6 and 8-11 is not part of the code. */
	if (rc & TPM2_RC_FMT1)
		return (rc & 0xbf) == code;
	return (rc & 0xfff) == code;
}

int tpm_classify(mb_tpm *t, mb_error *err, TSS2_RC rc, const char *what)
{
	int r = tpm_fail(t, err, rc, what);

	if (tpm_rc_is(rc, TPM2_RC_LOCKOUT) && err)
		err->code = MB_ERR_TPM_LOCKOUT;
	if (tpm_rc_is(rc, TPM2_RC_LOCKOUT))
		r = MB_ERR_TPM_LOCKOUT;
	return r;
}

/* The parent: the persistent SRK, or a transient primary from the template (*flush set). */
int tpm_load_parent(mb_tpm *t, bool persistent, uint32_t handle, ESYS_TR *ret, bool *flush, mb_error *err)
{
	TPM2B_SENSITIVE_CREATE sens = { 0 };
	TPM2B_DATA outside = { 0 };
	TPML_PCR_SELECTION creation = { 0 };
	TPM2B_PUBLIC tmpl;
	TSS2_RC rc;

	*flush = false;
	if (persistent) {
		TPM2B_PUBLIC *pub = NULL;
		TPMA_OBJECT want = TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT;

		rc = sym_Esys_TR_FromTPMPublic(t->esys, handle, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ret);
		if (rc != TSS2_RC_SUCCESS) {
			char what[64];

			snprintf(what, sizeof(what), "no parent key at persistent handle 0x%08x", handle);
			return tpm_classify(t, err, rc, what);
		}
		rc = sym_Esys_ReadPublic(t->esys, *ret, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &pub, NULL, NULL);
		if (rc != TSS2_RC_SUCCESS) {
			sym_Esys_TR_Close(t->esys, ret);
			return tpm_classify(t, err, rc, "TPM2_ReadPublic of the parent failed");
		}
		if ((pub->publicArea.objectAttributes & want) != want) {
			sym_Esys_Free(pub);
			sym_Esys_TR_Close(t->esys, ret);
			return set_error(err, MB_ERR_TPM_NOT_STORAGE, "persistent handle 0x%08x is not a storage key", handle);
		}
		sym_Esys_Free(pub);
		return 0;
	}
	srk_template(&tmpl);
	rc = sym_Esys_CreatePrimary(t->esys, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &sens, &tmpl,
				&outside, &creation, ret, NULL, NULL, NULL, NULL);
	if (rc != TSS2_RC_SUCCESS)
		return tpm_classify(t, err, rc, "TPM2_CreatePrimary of the ECC P-256 SRK failed");
	*flush = true;
	return 0;
}

void tpm_drop_parent(mb_tpm *t, ESYS_TR *h, bool flush)
{
	if (*h == ESYS_TR_NONE)
		return;
	if (flush)
		sym_Esys_FlushContext(t->esys, *h);
	else
		sym_Esys_TR_Close(t->esys, h);
	*h = ESYS_TR_NONE;
}

/* A session salted with the parent, that encrypts command (decrypt) or response (encrypt) parameter 1. */
int tpm_start_session(mb_tpm *t, ESYS_TR parent, TPM2_SE type, TPMA_SESSION attrs, ESYS_TR *ret, mb_error *err)
{
	TSS2_RC rc = sym_Esys_StartAuthSession(t->esys, parent, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
					   NULL, type, &session_sym, TPM2_ALG_SHA256, ret);

	if (rc != TSS2_RC_SUCCESS)
		return tpm_classify(t, err, rc, "TPM2_StartAuthSession failed");
	rc = sym_Esys_TRSess_SetAttributes(t->esys, *ret, attrs | TPMA_SESSION_CONTINUESESSION, 0xff);
	if (rc != TSS2_RC_SUCCESS) {
		sym_Esys_FlushContext(t->esys, *ret);
		*ret = ESYS_TR_NONE;
		return tpm_fail(t, err, rc, "cannot set session attributes");
	}
	return 0;
}

int tpm_load_storage_parent(mb_tpm *t, ESYS_TR *ret, bool *flush, bool *persistent, bool *unusable, mb_error *err)
{
	int r = tpm_load_parent(t, true, MB_TPM_SRK_HANDLE, ret, flush, NULL);

	*persistent = r >= 0;
	*unusable = r == MB_ERR_TPM_NOT_STORAGE;
	if (r < 0)
		r = tpm_load_parent(t, false, 0, ret, flush, err);
	return r;
}

int tpm_pin_auth(const uint8_t *pin, size_t pin_size, uint8_t out[32], mb_error *err)
{
	if (!pin || pin_size == 0 || pin_size > MB_PIN_MAX)
		return set_error(err, -EINVAL, "a PIN of 1 to %u bytes, not %zu", MB_PIN_MAX, pin ? pin_size : 0);
	if (mb_digest(MB_ALG_SHA256, pin, pin_size, out) < 0)
		return set_error(err, -ENOMEM, "cannot hash");
	return 0;
}

/* the object's authValue: SHA-256(PIN), or none (auth NULL) */
static void set_auth(TPM2B_AUTH *a, const uint8_t *auth)
{
	memset(a, 0, sizeof(*a));
	if (!auth)
		return;
	a->size = 32;
	memcpy(a->buffer, auth, 32);
}

int tpm_seal_blob(mb_tpm *t, const uint8_t *secret, size_t secret_size, const uint8_t policy[32],
		  enum tpm_parent_choice choice, uint32_t handle, const uint8_t *auth, mb_tpm_sealed_blob *ret,
		  mb_error *err)
{
	TPM2B_SENSITIVE_CREATE sens;
	TPM2B_PUBLIC tmpl;
	TPM2B_DATA outside = { 0 };
	TPML_PCR_SELECTION creation = { 0 };
	TPM2B_PUBLIC *out_pub = NULL;
	TPM2B_PRIVATE *out_priv = NULL;
	ESYS_TR parent = ESYS_TR_NONE, session = ESYS_TR_NONE;
	bool flush = false, persistent = true, unusable = false;
	size_t off;
	TSS2_RC rc;
	int r;

	memset(ret, 0, sizeof(*ret));
	if (secret_size == 0 || secret_size > MB_SEAL_MAX_SECRET)
		return set_error(err, -EINVAL, "a secret of 1 to %u bytes can be sealed, not %zu", MB_SEAL_MAX_SECRET,
			       secret_size);

	if (choice == TPM_PARENT_AUTO) {
		handle = MB_TPM_SRK_HANDLE;
		r = tpm_load_storage_parent(t, &parent, &flush, &persistent, &unusable, err);
	} else {
		persistent = choice == TPM_PARENT_PERSISTENT;
		r = tpm_load_parent(t, persistent, handle, &parent, &flush, err);
	}
	if (r < 0)
		return r;
	r = tpm_start_session(t, parent, TPM2_SE_HMAC, TPMA_SESSION_DECRYPT, &session, err);
	if (r < 0)
		goto out;

	memset(&tmpl, 0, sizeof(tmpl));
	tmpl.publicArea.type = TPM2_ALG_KEYEDHASH;
	tmpl.publicArea.nameAlg = TPM2_ALG_SHA256;
	/*
	 * no userWithAuth: only the policy authorises; no sensitiveDataOrigin: we give the data;
	 * no noDA: a wrong authValue (PIN) counts against the TPM's dictionary-attack protection
	 */
	tmpl.publicArea.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT;
	tmpl.publicArea.authPolicy.size = 32;
	memcpy(tmpl.publicArea.authPolicy.buffer, policy, 32);
	tmpl.publicArea.parameters.keyedHashDetail.scheme.scheme = TPM2_ALG_NULL;

	memset(&sens, 0, sizeof(sens));
	set_auth(&sens.sensitive.userAuth, auth);
	sens.sensitive.data.size = (UINT16) secret_size;
	memcpy(sens.sensitive.data.buffer, secret, secret_size);
	rc = sym_Esys_Create(t->esys, parent, session, ESYS_TR_NONE, ESYS_TR_NONE, &sens, &tmpl, &outside, &creation,
			 &out_priv, &out_pub, NULL, NULL, NULL);
	explicit_bzero(&sens, sizeof(sens));
	if (rc != TSS2_RC_SUCCESS) {
		r = tpm_classify(t, err, rc, tpm_rc_is(rc, TPM2_RC_LOCKOUT) ?
				 "TPM2_Create refused: the parent key is protected against dictionary attacks (no noDA)" :
				 "TPM2_Create of the sealed object failed");
		goto out;
	}

	ret->pub = malloc(sizeof(TPM2B_PUBLIC));
	ret->priv = malloc(sizeof(TPM2B_PRIVATE));
	if (!ret->pub || !ret->priv) {
		r = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	off = 0;
	rc = sym_Tss2_MU_TPM2B_PUBLIC_Marshal(out_pub, ret->pub, sizeof(TPM2B_PUBLIC), &off);
	ret->pub_size = off;
	off = 0;
	if (rc == TSS2_RC_SUCCESS)
		rc = sym_Tss2_MU_TPM2B_PRIVATE_Marshal(out_priv, ret->priv, sizeof(TPM2B_PRIVATE), &off);
	ret->priv_size = off;
	if (rc != TSS2_RC_SUCCESS) {
		r = tpm_fail(t, err, rc, "cannot marshal the sealed object");
		goto out;
	}
	ret->parent_persistent = persistent;
	ret->persistent_unusable = unusable;
	ret->parent_handle = persistent ? handle : 0;
	r = 0;
out:
	sym_Esys_Free(out_pub);
	sym_Esys_Free(out_priv);
	if (session != ESYS_TR_NONE)
		sym_Esys_FlushContext(t->esys, session);
	tpm_drop_parent(t, &parent, flush);
	if (r < 0) {
		free(ret->pub);
		free(ret->priv);
		memset(ret, 0, sizeof(*ret));
	}
	return r;
}

MB_EXPORT int mb_tpm_seal(mb_tpm *t, const uint8_t *secret, size_t secret_size, const uint8_t policy[32],
			  mb_tpm_sealed_blob *ret, mb_error *err)
{
	return tpm_seal_blob(t, secret, secret_size, policy, TPM_PARENT_AUTO, 0, NULL, ret, err);
}

MB_EXPORT int mb_tpm_seal_under(mb_tpm *t, const uint8_t *secret, size_t secret_size, const uint8_t policy[32],
				bool parent_persistent, uint32_t parent_handle, mb_tpm_sealed_blob *ret, mb_error *err)
{
	return tpm_seal_blob(t, secret, secret_size, policy, parent_persistent ? TPM_PARENT_PERSISTENT : TPM_PARENT_TEMPLATE,
			     parent_handle, NULL, ret, err);
}

static int unmarshal(const uint8_t *pub, size_t pub_size, const uint8_t *priv, size_t priv_size, TPM2B_PUBLIC *p,
		     TPM2B_PRIVATE *q, mb_error *err)
{
	size_t off = 0;

	memset(p, 0, sizeof(*p));
	memset(q, 0, sizeof(*q));
	if (sym_Tss2_MU_TPM2B_PUBLIC_Unmarshal(pub, pub_size, &off, p) != TSS2_RC_SUCCESS || off != pub_size)
		return set_error(err, -EBADMSG, "field \"public\" is not one TPM2B_PUBLIC");
	if (p->publicArea.type != TPM2_ALG_KEYEDHASH || p->publicArea.nameAlg != TPM2_ALG_SHA256 ||
	    p->publicArea.authPolicy.size != 32 || (p->publicArea.objectAttributes & TPMA_OBJECT_USERWITHAUTH))
		return set_error(err, -EBADMSG,
			       "field \"public\" is not a sealed object (KEYEDHASH, SHA-256 name, policy only)");
	off = 0;
	if (sym_Tss2_MU_TPM2B_PRIVATE_Unmarshal(priv, priv_size, &off, q) != TSS2_RC_SUCCESS || off != priv_size ||
	    q->size == 0)
		return set_error(err, -EBADMSG, "field \"private\" is not one TPM2B_PRIVATE");
	return 0;
}

MB_EXPORT int mb_tpm_check_sealed_blobs(const uint8_t *pub, size_t pub_size, const uint8_t *priv, size_t priv_size,
					uint8_t *auth_policy, mb_error *err)
{
	TPM2B_PUBLIC p;
	TPM2B_PRIVATE q;
	int r = dlopen_tpm2(err);

	if (r == 0)
		r = unmarshal(pub, pub_size, priv, priv_size, &p, &q, err);
	if (r == 0 && auth_policy)
		memcpy(auth_policy, p.publicArea.authPolicy.buffer, 32);
	return r;
}

/* A signed policy made ready for TPM2_PolicyAuthorize: the key loaded, the signature checked. */
typedef struct authorization {
	const mb_policy_signature *sig;
	ESYS_TR key;
	TPM2B_NAME name;
	TPMT_TK_VERIFIED *ticket;
} authorization;

/* TPMT_SIGNATURE (Part 2 §11.3.4) of a PKCS#1 v1.5 signature or a DER ECDSA-Sig-Value. */
static int tpm_signature(const mb_policy_signature *sig, TPMT_SIGNATURE *ts, mb_error *err)
{
	memset(ts, 0, sizeof(*ts));
	if (sig->scheme == MB_SIG_RSASSA) {
		if (sig->sig_size == 0 || sig->sig_size > sizeof(ts->signature.rsassa.sig.buffer))
			return set_error(err, -EBADMSG, "an RSA signature of %zu bytes", sig->sig_size);
		ts->sigAlg = TPM2_ALG_RSASSA;
		ts->signature.rsassa.hash = TPM2_ALG_SHA256;
		ts->signature.rsassa.sig.size = (UINT16) sig->sig_size;
		memcpy(ts->signature.rsassa.sig.buffer, sig->sig, sig->sig_size);
		return 0;
	}
	if (sig->scheme == MB_SIG_ECDSA) {
		const unsigned char *p = sig->sig;
		ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &p, (long) sig->sig_size);
		const BIGNUM *r, *s;
		int ok;

		if (!es || p != sig->sig + sig->sig_size) {
			ECDSA_SIG_free(es);
			return set_error(err, -EBADMSG, "the ECDSA signature is not one DER ECDSA-Sig-Value");
		}
		ECDSA_SIG_get0(es, &r, &s);
		ok = BN_num_bytes(r) <= 32 && BN_num_bytes(s) <= 32 &&
		     BN_bn2binpad(r, ts->signature.ecdsa.signatureR.buffer, 32) == 32 &&
		     BN_bn2binpad(s, ts->signature.ecdsa.signatureS.buffer, 32) == 32;
		ECDSA_SIG_free(es);
		if (!ok)
			return set_error(err, -EBADMSG, "the ECDSA signature is not one of a P-256 key");
		ts->sigAlg = TPM2_ALG_ECDSA;
		ts->signature.ecdsa.hash = TPM2_ALG_SHA256;
		ts->signature.ecdsa.signatureR.size = ts->signature.ecdsa.signatureS.size = 32;
		return 0;
	}
	return set_error(err, -EBADMSG, "signature scheme 0x%04x", sig->scheme);
}

/*
 * Load the authorising key in the owner hierarchy (a key in the null hierarchy only
 * gets null tickets, which PolicyAuthorize refuses) and have the TPM check the
 * signature over aHash = SHA-256(approved || policyRef), policyRef empty.
 */
static int authorization_start(mb_tpm *t, const uint8_t *key, size_t key_size, const mb_policy_signature *sig,
			       authorization *a, mb_error *err)
{
	TPM2B_PUBLIC pub;
	TPM2B_DIGEST ahash = { .size = 32 };
	TPMT_SIGNATURE ts;
	TPM2B_NAME *name = NULL;
	size_t off = 0;
	TSS2_RC rc;
	int r;

	memset(a, 0, sizeof(*a));
	a->sig = sig;
	a->key = ESYS_TR_NONE;
	memset(&pub, 0, sizeof(pub));
	if (sym_Tss2_MU_TPM2B_PUBLIC_Unmarshal(key, key_size, &off, &pub) != TSS2_RC_SUCCESS || off != key_size)
		return set_error(err, -EBADMSG, "the authorising key is not one TPM2B_PUBLIC");
	if ((sig->scheme == MB_SIG_RSASSA) != (pub.publicArea.type == TPM2_ALG_RSA))
		return set_error(err, MB_ERR_TPM_SIGNATURE, "the signature is %s, the key the secret is sealed to %s",
			       sig->scheme == MB_SIG_RSASSA ? "RSASSA" : "ECDSA",
			       pub.publicArea.type == TPM2_ALG_RSA ? "RSA" : "ECC");
	r = tpm_signature(sig, &ts, err);
	if (r < 0)
		return r;
	if (mb_digest(MB_ALG_SHA256, sig->approved, sizeof(sig->approved), ahash.buffer) < 0)
		return set_error(err, -ENOMEM, "cannot hash");
	rc = sym_Esys_LoadExternal(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, NULL, &pub, ESYS_TR_RH_OWNER,
			       &a->key);
	if (rc != TSS2_RC_SUCCESS)
		return tpm_classify(t, err, rc, "TPM2_LoadExternal of the authorising key failed");
	rc = sym_Esys_TR_GetName(t->esys, a->key, &name);
	if (rc != TSS2_RC_SUCCESS)
		return tpm_fail(t, err, rc, "cannot get the authorising key's name");
	a->name = *name;
	sym_Esys_Free(name);
	if (a->name.size != MB_TPM_NAME_SIZE || memcmp(a->name.name, sig->key_name, MB_TPM_NAME_SIZE) != 0)
		return set_error(err, MB_ERR_TPM_SIGNATURE, "the signature names another key than the one the secret "
			       "is sealed to");
	rc = sym_Esys_VerifySignature(t->esys, a->key, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &ahash, &ts, &a->ticket);
	if (rc != TSS2_RC_SUCCESS) {
		r = tpm_classify(t, err, rc, "TPM2_VerifySignature failed");
		if (tpm_rc_is(rc, TPM2_RC_SIGNATURE))
			r = set_error(err, MB_ERR_TPM_SIGNATURE, "the TPM finds the signature invalid: it was not made "
				    "by the key the secret is sealed to over these PCR values (TPM_RC_SIGNATURE)");
		return r;
	}
	return 0;
}

static void authorization_done(mb_tpm *t, authorization *a)
{
	if (a->key != ESYS_TR_NONE)
		sym_Esys_FlushContext(t->esys, a->key);
	a->key = ESYS_TR_NONE;
	sym_Esys_Free(a->ticket);
	a->ticket = NULL;
}

/*
 * Load the sealed object and unseal it in a policy session: PolicyPCR(bank_alg,
 * mask), then PolicyOR(or_list) or PolicyAuthorize(auth) when given, then Unseal.
 */
static int unseal_object(mb_tpm *t, const uint8_t *pub, size_t pub_size, const uint8_t *priv, size_t priv_size,
			 bool parent_persistent, uint32_t parent_handle, uint16_t bank_alg, uint32_t mask,
			 const tpm_nv_condition *nv, const TPML_DIGEST *or_list, authorization *auth, const uint8_t *key, size_t key_size,
			 const uint8_t *pin_auth, uint8_t *out, size_t *out_size, mb_error *err)
{
	TPM2B_PUBLIC p;
	TPM2B_PRIVATE q;
	TPML_PCR_SELECTION sel = { 0 };
	TPM2B_DIGEST empty = { 0 };
	TPM2B_OPERAND operand = { .size = 8 };
	ESYS_TR parent = ESYS_TR_NONE, obj = ESYS_TR_NONE, session = ESYS_TR_NONE, nv_tr = ESYS_TR_NONE;
	bool flush = false;
	unsigned tries;
	TSS2_RC rc;
	int r;

	*out_size = 0;
	r = unmarshal(pub, pub_size, priv, priv_size, &p, &q, err);
	if (r < 0)
		return r;
	sel.count = 1;
	sel.pcrSelections[0].hash = bank_alg;
	sel.pcrSelections[0].sizeofSelect = 3;
	sel.pcrSelections[0].pcrSelect[0] = mask & 0xff;
	sel.pcrSelections[0].pcrSelect[1] = (mask >> 8) & 0xff;
	sel.pcrSelections[0].pcrSelect[2] = (mask >> 16) & 0xff;

	r = tpm_load_parent(t, parent_persistent, parent_handle, &parent, &flush, err);
	if (r < 0)
		return r;
	r = tpm_start_session(t, parent, TPM2_SE_HMAC, 0, &session, err);
	if (r < 0)
		goto out;
	rc = sym_Esys_Load(t->esys, parent, session, ESYS_TR_NONE, ESYS_TR_NONE, &q, &p, &obj);
	sym_Esys_FlushContext(t->esys, session);
	session = ESYS_TR_NONE;
	if (rc != TSS2_RC_SUCCESS) {
		r = tpm_classify(t, err, rc, tpm_rc_is(rc, TPM2_RC_LOCKOUT) ?
				 "TPM2_Load refused: the parent key is protected against dictionary attacks (no noDA)" :
				 "TPM2_Load of the sealed object failed (another TPM, or another parent key?)");
		goto out;
	}
	if (pin_auth) {
		TPM2B_AUTH a;

		set_auth(&a, pin_auth);
		rc = sym_Esys_TR_SetAuth(t->esys, obj, &a);
		explicit_bzero(&a, sizeof(a));
		if (rc != TSS2_RC_SUCCESS) {
			r = tpm_fail(t, err, rc, "cannot set the sealed object's authValue");
			goto out;
		}
	}
	if (auth) {
		r = authorization_start(t, key, key_size, auth->sig, auth, err);
		if (r < 0)
			goto out;
	}
	if (nv) {
		uint8_t want[MB_TPM_NAME_SIZE];
		TPM2B_NAME *name = NULL;

		for (unsigned i = 0; i < 8; i++)
			operand.buffer[i] = (uint8_t) (nv->value >> (56 - 8 * i));
		r = mb_nv_counter_name(nv->index, want, err);
		if (r < 0)
			goto out;
		rc = sym_Esys_TR_FromTPMPublic(t->esys, nv->index, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &nv_tr);
		if (rc != TSS2_RC_SUCCESS) {
			nv_tr = ESYS_TR_NONE;
			r = tpm_classify(t, err, rc, "the NV counter cannot be read (TPM2_NV_ReadPublic)");
			goto out;
		}
		rc = sym_Esys_TR_GetName(t->esys, nv_tr, &name);
		if (rc != TSS2_RC_SUCCESS) {
			r = tpm_fail(t, err, rc, "cannot get the NV counter's name");
			goto out;
		}
		/* another index than mboot's counter there: PolicyNV would fail on its name anyway */
		if (name->size != MB_TPM_NAME_SIZE || memcmp(name->name, want, MB_TPM_NAME_SIZE) != 0) {
			sym_Esys_Free(name);
			r = set_error(err, MB_ERR_TPM_POLICY, "NV index 0x%08x is not mboot's counter", nv->index);
			goto out;
		}
		sym_Esys_Free(name);
	}

	for (tries = 0;; tries++) {
		TPM2B_SENSITIVE_DATA *data = NULL;

		r = tpm_start_session(t, parent, TPM2_SE_POLICY, TPMA_SESSION_ENCRYPT, &session, err);
		if (r < 0)
			goto out;
		rc = sym_Esys_PolicyPCR(t->esys, session, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &empty, &sel);
		if (rc == TSS2_RC_SUCCESS && nv) {
			/* read authorised by the index itself (AUTHREAD, empty authValue) */
			rc = sym_Esys_PolicyNV(t->esys, nv_tr, nv_tr, session, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
					   &operand, 0, TPM2_EO_EQ);
			/* TPM_RC_POLICY: the counter has moved on, the window is closed */
			if (tpm_rc_is(rc, TPM2_RC_POLICY))
				rc = TPM2_RC_POLICY_FAIL;
		}
		if (rc == TSS2_RC_SUCCESS && or_list) {
			rc = sym_Esys_PolicyOR(t->esys, session, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, or_list);
			/* the PCRs gave a digest that is none of the branches */
			if (tpm_rc_is(rc, TPM2_RC_VALUE))
				rc = TPM2_RC_POLICY_FAIL;
		}
		if (rc == TSS2_RC_SUCCESS && auth) {
			TPM2B_DIGEST approved = { .size = 32 };
			TPM2B_NONCE ref = { 0 };

			memcpy(approved.buffer, auth->sig->approved, 32);
			rc = sym_Esys_PolicyAuthorize(t->esys, session, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &approved,
						  &ref, &auth->name, auth->ticket);
			/* the PCRs are not the signed values: the session's digest is not approvedPolicy */
			if (tpm_rc_is(rc, TPM2_RC_VALUE))
				rc = TPM2_RC_POLICY_FAIL;
		}
		/* last, as systemd-cryptenroll --tpm2-with-pin orders it: the HMAC then needs the authValue */
		if (rc == TSS2_RC_SUCCESS && pin_auth)
			rc = sym_Esys_PolicyAuthValue(t->esys, session, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE);
		if (rc == TSS2_RC_SUCCESS)
			rc = sym_Esys_Unseal(t->esys, obj, session, ESYS_TR_NONE, ESYS_TR_NONE, &data);
		sym_Esys_FlushContext(t->esys, session);
		session = ESYS_TR_NONE;
		if (rc == TSS2_RC_SUCCESS) {
			if (data->size > MB_SEAL_MAX_SECRET) {
				r = set_error(err, MB_ERR_TPM, "TPM2_Unseal returned %u bytes", data->size);
				explicit_bzero(data, sizeof(*data));
				sym_Esys_Free(data);
				goto out;
			}
			memcpy(out, data->buffer, data->size);
			*out_size = data->size;
			explicit_bzero(data, sizeof(*data));
			sym_Esys_Free(data);
			r = 0;
			goto out;
		}
		/* PCRs extended between PolicyPCR and Unseal: the session is stale, start again. */
		if (tpm_rc_is(rc, TPM2_RC_PCR_CHANGED) && tries + 1 < UNSEAL_MAX_TRIES)
			continue;
		if (pin_auth && (tpm_rc_is(rc, TPM2_RC_AUTH_FAIL) || tpm_rc_is(rc, TPM2_RC_BAD_AUTH))) {
			tpm_fail(t, err, rc, "TPM2_Unseal refused");
			r = set_error(err, MB_ERR_TPM_AUTH, "wrong PIN");
			goto out;
		}
		if (tpm_rc_is(rc, TPM2_RC_POLICY_FAIL)) {
			tpm_fail(t, err, rc, "TPM2_Unseal refused");
			r = set_error(err, MB_ERR_TPM_POLICY, "the PCRs do not have the values the secret is sealed to");
			goto out;
		}
		r = tpm_classify(t, err, rc, tpm_rc_is(rc, TPM2_RC_PCR_CHANGED) ?
				 "the PCRs kept changing between TPM2_PolicyPCR and TPM2_Unseal; gave up after "
				 "5 tries" : "TPM2_PolicyPCR/TPM2_Unseal failed");
		goto out;
	}
out:
	if (session != ESYS_TR_NONE)
		sym_Esys_FlushContext(t->esys, session);
	if (nv_tr != ESYS_TR_NONE)
		sym_Esys_TR_Close(t->esys, &nv_tr);
	if (auth)
		authorization_done(t, auth);
	if (obj != ESYS_TR_NONE)
		sym_Esys_FlushContext(t->esys, obj);
	tpm_drop_parent(t, &parent, flush);
	return r;
}

int tpm_unseal_pcr(mb_tpm *t, const uint8_t *pub, size_t pub_size, const uint8_t *priv, size_t priv_size,
			    bool parent_persistent, uint32_t parent_handle, uint16_t bank_alg, uint32_t mask,
			    const tpm_nv_condition *nv, const uint8_t (*or_digests)[32], size_t n_or, const uint8_t *pin_auth,
			    uint8_t *out, size_t *out_size, mb_error *err)
{
	TPML_DIGEST or_list = { 0 };

	*out_size = 0;
	if (n_or == 1 || n_or > 8)
		return set_error(err, -EINVAL, "a PolicyOR needs 2 to 8 branches, not %zu", n_or);
	for (size_t i = 0; i < n_or; i++) {
		or_list.digests[i].size = 32;
		memcpy(or_list.digests[i].buffer, or_digests[i], 32);
	}
	or_list.count = (UINT32) n_or;
	return unseal_object(t, pub, pub_size, priv, priv_size, parent_persistent, parent_handle, bank_alg, mask, nv,
			     n_or ? &or_list : NULL, NULL, NULL, 0, pin_auth, out, out_size, err);
}

int tpm_unseal_authorized(mb_tpm *t, const uint8_t *pub, size_t pub_size, const uint8_t *priv,
				       size_t priv_size, bool parent_persistent, uint32_t parent_handle,
				       const uint8_t *key, size_t key_size, const mb_policy_signature *sig,
				       uint8_t *out, size_t *out_size, mb_error *err)
{
	authorization a = { .sig = sig, .key = ESYS_TR_NONE };
	tpm_nv_condition nv = { sig->counter_index, sig->counter_value };

	/* a revocable signature: PolicyPCR, PolicyNV(counter == value signed), PolicyAuthorize */
	return unseal_object(t, pub, pub_size, priv, priv_size, parent_persistent, parent_handle, sig->pcrs.alg,
			     sig->mask, sig->counter ? &nv : NULL, NULL, &a, key, key_size, NULL, out, out_size, err);
}
