/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Remote attestation on the machine (docs/attest.md): the EK and its certificate, the AK,
 * TPM2_ActivateCredential and TPM2_Quote. TPM 2.0 Library Part 3: §12.5 ActivateCredential,
 * §18.4 Quote, §23.4 PolicySecret, §31.13 NV_Read. TCG EK Credential Profile 2.3: templates
 * L-1 (RSA 2048), L-2 (ECC P-256) and H-3 (ECC P-384), certificate NV indices §2.2.1.4.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>

#include <mboot/attest.h>
#include <mboot/digest.h>
#include <mboot/seal.h>
#include "lib/seal/seal-json.h"
#include "shared/fail.h"
#include "shared/hex.h"
#include "shared/reader.h"
#include "tpm-internal.h"

/* The AK file and the challenge are small; refuse anything far bigger. */
#define AK_FILE_MAX (64u << 10)
#define CHALLENGE_MAX (64u << 10)
/* An EK certificate is about 1 KiB; NV indices are at most a few KiB. */
#define EK_CERT_MAX (16u << 10)
#define NAME_MAX_BYTES (2 + MB_DIGEST_MAX)
#define QUOTE_MAX_TRIES 4

/* The EK kinds mboot creates, in the order enroll prefers them (one with a certificate first). */
typedef enum ek_kind { EK_RSA2048, EK_ECC_P256, EK_ECC_P384, EK_KIND_MAX } ek_kind;

static const struct {
	const char *name;  /* "ek" in the AK file */
	uint32_t nv_index; /* its certificate */
} ek_kinds[EK_KIND_MAX] = {
	[EK_RSA2048] = { "rsa2048", 0x01c00002 },
	[EK_ECC_P256] = { "ecc-p256", 0x01c0000a },
	[EK_ECC_P384] = { "ecc-p384", 0x01c00016 },
};

/* PolicyA (EK Credential Profile §B.6): PolicySecret(TPM_RH_ENDORSEMENT), SHA-256. */
static const uint8_t policy_a_sha256[32] = {
	0x83, 0x71, 0x97, 0x67, 0x44, 0x84, 0xb3, 0xf8, 0x1a, 0x90, 0xcc, 0x8d, 0x46, 0xa5, 0xd7, 0x24,
	0xfd, 0x52, 0xd7, 0x6e, 0x06, 0x52, 0x0b, 0x64, 0xf2, 0xa1, 0xda, 0x1b, 0x33, 0x14, 0x69, 0xaa,
};
/* PolicyB (§B.6): PolicyOR of PolicyA and PolicyC, SHA-384, the high-range templates' policy. */
static const uint8_t policy_b_sha384[48] = {
	0xb2, 0x6e, 0x7d, 0x28, 0xd1, 0x1a, 0x50, 0xbc, 0x53, 0xd8, 0x82, 0xbc, 0xf5, 0xfd, 0x3a, 0x1a,
	0x07, 0x41, 0x48, 0xbb, 0x35, 0xd3, 0xb4, 0xe4, 0xcb, 0x1c, 0x0a, 0xd9, 0xbd, 0xe4, 0x19, 0xca,
	0xcb, 0x47, 0xba, 0x09, 0x69, 0x96, 0x46, 0x15, 0x0f, 0x9f, 0xc0, 0x00, 0xf3, 0xf8, 0x0e, 0x12,
};

static void ek_template(ek_kind kind, TPM2B_PUBLIC *p)
{
	TPMT_PUBLIC *a = &p->publicArea;

	memset(p, 0, sizeof(*p));
	a->objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN |
			      TPMA_OBJECT_ADMINWITHPOLICY | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT;
	if (kind == EK_RSA2048) {
		/* L-1: AES-128-CFB, 2048-bit modulus, unique 256 zero bytes */
		a->type = TPM2_ALG_RSA;
		a->nameAlg = TPM2_ALG_SHA256;
		a->authPolicy.size = 32;
		memcpy(a->authPolicy.buffer, policy_a_sha256, 32);
		a->parameters.rsaDetail.symmetric.algorithm = TPM2_ALG_AES;
		a->parameters.rsaDetail.symmetric.keyBits.aes = 128;
		a->parameters.rsaDetail.symmetric.mode.aes = TPM2_ALG_CFB;
		a->parameters.rsaDetail.scheme.scheme = TPM2_ALG_NULL;
		a->parameters.rsaDetail.keyBits = 2048;
		a->parameters.rsaDetail.exponent = 0;
		a->unique.rsa.size = 256;
	} else if (kind == EK_ECC_P256) {
		/* L-2: AES-128-CFB, NIST P-256, unique two 32-byte zero coordinates */
		a->type = TPM2_ALG_ECC;
		a->nameAlg = TPM2_ALG_SHA256;
		a->authPolicy.size = 32;
		memcpy(a->authPolicy.buffer, policy_a_sha256, 32);
		a->parameters.eccDetail.symmetric.algorithm = TPM2_ALG_AES;
		a->parameters.eccDetail.symmetric.keyBits.aes = 128;
		a->parameters.eccDetail.symmetric.mode.aes = TPM2_ALG_CFB;
		a->parameters.eccDetail.scheme.scheme = TPM2_ALG_NULL;
		a->parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
		a->parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
		a->unique.ecc.x.size = 32;
		a->unique.ecc.y.size = 32;
	} else {
		/*
		 * H-3: SHA-384 name, AES-256-CFB, NIST P-384, empty unique; userWithAuth set, so the
		 * empty endorsement authValue authorises it without a policy session.
		 */
		a->type = TPM2_ALG_ECC;
		a->nameAlg = TPM2_ALG_SHA384;
		a->objectAttributes |= TPMA_OBJECT_USERWITHAUTH;
		a->authPolicy.size = 48;
		memcpy(a->authPolicy.buffer, policy_b_sha384, 48);
		a->parameters.eccDetail.symmetric.algorithm = TPM2_ALG_AES;
		a->parameters.eccDetail.symmetric.keyBits.aes = 256;
		a->parameters.eccDetail.symmetric.mode.aes = TPM2_ALG_CFB;
		a->parameters.eccDetail.scheme.scheme = TPM2_ALG_NULL;
		a->parameters.eccDetail.curveID = TPM2_ECC_NIST_P384;
		a->parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
	}
}

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

static int create_ek(mb_tpm *t, ek_kind kind, ESYS_TR *ret, TPM2B_PUBLIC **ret_pub, mb_error *err)
{
	TPM2B_SENSITIVE_CREATE sens = { 0 };
	TPM2B_DATA outside = { 0 };
	TPML_PCR_SELECTION creation = { 0 };
	TPM2B_PUBLIC tmpl;
	TSS2_RC rc;
	char what[96];

	ek_template(kind, &tmpl);
	rc = Esys_CreatePrimary(t->esys, ESYS_TR_RH_ENDORSEMENT, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &sens,
				&tmpl, &outside, &creation, ret, ret_pub, NULL, NULL, NULL);
	if (rc != TSS2_RC_SUCCESS) {
		snprintf(what, sizeof(what), "TPM2_CreatePrimary of the %s EK (EK Credential Profile template) failed",
			 ek_kinds[kind].name);
		return tpm_classify(t, err, rc, what);
	}
	return 0;
}

/* Which EK certificate indices the TPM has: bit k for ek_kinds[k]. */
static int ek_cert_indices(mb_tpm *t, unsigned *ret, mb_error *err)
{
	uint32_t next = 0x01c00000;
	TPMI_YES_NO more = TPM2_YES;
	unsigned found = 0, calls = 0;

	while (more && next < 0x01c10000 && calls++ < 64) {
		TPMS_CAPABILITY_DATA *cap = NULL;
		TSS2_RC rc = Esys_GetCapability(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2_CAP_HANDLES,
						next, TPM2_MAX_CAP_HANDLES, &more, &cap);
		uint32_t i, h = 0;

		if (rc != TSS2_RC_SUCCESS)
			return mb_tpm_fail(t, err, rc, "TPM2_GetCapability(HANDLES) of the NV indices failed");
		if (cap->capability != TPM2_CAP_HANDLES || cap->data.handles.count == 0) {
			Esys_Free(cap);
			break;
		}
		for (i = 0; i < cap->data.handles.count && i < TPM2_MAX_CAP_HANDLES; i++) {
			h = cap->data.handles.handle[i];
			for (unsigned k = 0; k < EK_KIND_MAX; k++)
				if (h == ek_kinds[k].nv_index)
					found |= 1u << k;
		}
		Esys_Free(cap);
		if (h < next)
			break; /* a TPM that does not move forward */
		next = h + 1;
	}
	*ret = found;
	return 0;
}

/* The TPM's largest NV_Read (TPM_PT_NV_BUFFER_MAX); 512 when it does not say. */
static uint16_t nv_buffer_max(mb_tpm *t)
{
	TPMS_CAPABILITY_DATA *cap = NULL;
	TPMI_YES_NO more = 0;
	uint16_t n = 512;

	if (Esys_GetCapability(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2_CAP_TPM_PROPERTIES,
			       TPM2_PT_NV_BUFFER_MAX, 1, &more, &cap) == TSS2_RC_SUCCESS) {
		if (cap->data.tpmProperties.count == 1 &&
		    cap->data.tpmProperties.tpmProperty[0].property == TPM2_PT_NV_BUFFER_MAX &&
		    cap->data.tpmProperties.tpmProperty[0].value >= 64 &&
		    cap->data.tpmProperties.tpmProperty[0].value <= TPM2_MAX_NV_BUFFER_SIZE)
			n = (uint16_t) cap->data.tpmProperties.tpmProperty[0].value;
		Esys_Free(cap);
	}
	return n;
}

/*
 * The size of the DER certificate at the start of the bytes: some TPMs define the NV index
 * larger than the certificate and pad it. 0 when it does not start with one SEQUENCE.
 */
static size_t der_size(const uint8_t *p, size_t n)
{
	mb_reader r;
	uint8_t tag, len0, b;
	size_t len = 0, head;

	mb_reader_init(&r, p, n, 0);
	if (mb_read_u8(&r, &tag) < 0 || tag != 0x30 || mb_read_u8(&r, &len0) < 0)
		return 0;
	if (len0 < 0x80) {
		len = len0;
	} else {
		unsigned k = len0 & 0x7f;

		if (k == 0 || k > 3)
			return 0;
		while (k--) {
			if (mb_read_u8(&r, &b) < 0)
				return 0;
			len = len << 8 | b;
		}
	}
	head = r.pos;
	if (len > mb_reader_left(&r))
		return 0;
	return head + len;
}

/* The EK certificate from its NV index, read with the index's own (empty) authorisation, else the owner's. */
static int read_ek_cert(mb_tpm *t, uint32_t index, uint8_t **ret, size_t *ret_size, mb_error *err)
{
	ESYS_TR nv = ESYS_TR_NONE;
	TPM2B_NV_PUBLIC *pub = NULL;
	uint8_t *buf = NULL;
	uint16_t size, chunk, off = 0;
	size_t der;
	TSS2_RC rc;
	char what[80];
	int r;

	*ret = NULL;
	*ret_size = 0;
	rc = Esys_TR_FromTPMPublic(t->esys, index, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &nv);
	if (rc == TSS2_RC_SUCCESS)
		rc = Esys_NV_ReadPublic(t->esys, nv, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &pub, NULL);
	if (rc != TSS2_RC_SUCCESS) {
		snprintf(what, sizeof(what), "TPM2_NV_ReadPublic of the EK certificate index 0x%08x failed", index);
		r = mb_tpm_fail(t, err, rc, what);
		goto out;
	}
	size = pub->nvPublic.dataSize;
	if (size == 0 || size > EK_CERT_MAX) {
		r = mb_fail(err, MB_ERR_TPM, "the EK certificate index 0x%08x holds %u bytes", index, size);
		goto out;
	}
	buf = malloc(size);
	if (!buf) {
		r = mb_fail(err, -ENOMEM, "out of memory");
		goto out;
	}
	chunk = nv_buffer_max(t);
	while (off < size) {
		TPM2B_MAX_NV_BUFFER *data = NULL;
		uint16_t n = (uint16_t) (size - off < chunk ? size - off : chunk);

		rc = Esys_NV_Read(t->esys, nv, nv, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, n, off, &data);
		if (rc != TSS2_RC_SUCCESS)
			rc = Esys_NV_Read(t->esys, ESYS_TR_RH_OWNER, nv, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, n,
					  off, &data);
		if (rc != TSS2_RC_SUCCESS) {
			snprintf(what, sizeof(what), "TPM2_NV_Read of the EK certificate index 0x%08x failed", index);
			r = mb_tpm_fail(t, err, rc, what);
			goto out;
		}
		if (data->size != n) {
			Esys_Free(data);
			r = mb_fail(err, MB_ERR_TPM, "TPM2_NV_Read returned %u bytes, not %u", data->size, n);
			goto out;
		}
		memcpy(buf + off, data->buffer, n);
		off += n;
		Esys_Free(data);
	}
	der = der_size(buf, size);
	*ret = buf;
	*ret_size = der ? der : size;
	buf = NULL;
	r = 0;
out:
	free(buf);
	Esys_Free(pub);
	if (nv != ESYS_TR_NONE)
		Esys_TR_Close(t->esys, &nv);
	return r;
}

static int marshal_public(mb_tpm *t, const TPM2B_PUBLIC *p, uint8_t *out, size_t *size, mb_error *err)
{
	size_t off = 0;
	TSS2_RC rc = Tss2_MU_TPM2B_PUBLIC_Marshal(p, out, sizeof(TPM2B_PUBLIC), &off);

	if (rc != TSS2_RC_SUCCESS)
		return mb_tpm_fail(t, err, rc, "cannot marshal a TPM2B_PUBLIC");
	*size = off;
	return 0;
}

static json_object *hex_obj(const uint8_t *p, size_t n)
{
	char *s = mb_hex_dup(p, n);
	json_object *o = s ? json_object_new_string(s) : NULL;

	free(s);
	return o;
}

static json_object *doc_new(const char *kind)
{
	json_object *root = json_object_new_object();

	if (root) {
		json_object_object_add(root, "version", json_object_new_int(1));
		json_object_object_add(root, "kind", json_object_new_string(kind));
	}
	return root;
}

/* seal_json_finish, or -ENOMEM. */
static int doc_finish(json_object *root, char **ret, mb_error *err)
{
	*ret = root ? seal_json_finish(root) : NULL;
	if (!*ret)
		return mb_fail(err, -ENOMEM, "out of memory");
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
	json_object *ak = NULL, *req = NULL, *o;
	char index[16], parent_name[16];
	TSS2_RC rc;
	int r;

	*ret_ak_file = *ret_request = NULL;
	if (ak_alg != MB_ATTEST_KEY_ECC && ak_alg != MB_ATTEST_KEY_RSA)
		return mb_fail(err, -EINVAL, "unknown AK algorithm %d", (int) ak_alg);

	/* The EK whose certificate the TPM holds; without any, the RSA EK (then ECC, for a TPM without RSA). */
	r = ek_cert_indices(t, &have_cert, err);
	if (r < 0)
		return r;
	for (kind = 0; kind < EK_KIND_MAX; kind++)
		if (have_cert & (1u << kind))
			break;
	if (kind == EK_KIND_MAX) {
		r = create_ek(t, EK_RSA2048, &ek, &ek_pub, NULL);
		kind = r < 0 ? EK_ECC_P256 : EK_RSA2048;
	}
	if (ek == ESYS_TR_NONE) {
		r = create_ek(t, kind, &ek, &ek_pub, err);
		if (r < 0)
			goto out;
	}
	Esys_FlushContext(t->esys, ek);
	ek = ESYS_TR_NONE;
	r = marshal_public(t, ek_pub, ek_buf, &ek_size, err);
	if (r < 0)
		goto out;
	if (have_cert & (1u << kind)) {
		r = read_ek_cert(t, ek_kinds[kind].nv_index, &cert, &cert_size, err);
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
	rc = Esys_Create(t->esys, parent, session, ESYS_TR_NONE, ESYS_TR_NONE, &sens, &tmpl, &outside, &creation,
			 &ak_priv, &ak_pub, NULL, NULL, NULL);
	if (rc != TSS2_RC_SUCCESS) {
		r = tpm_classify(t, err, rc, "TPM2_Create of the AK failed");
		goto out;
	}
	r = marshal_public(t, ak_pub, ak_buf, &ak_size, err);
	if (r < 0)
		goto out;
	rc = Tss2_MU_TPM2B_PRIVATE_Marshal(ak_priv, priv_buf, sizeof(priv_buf), &off);
	if (rc != TSS2_RC_SUCCESS) {
		r = mb_tpm_fail(t, err, rc, "cannot marshal the AK's TPM2B_PRIVATE");
		goto out;
	}
	priv_size = off;
	r = mb_tpm_key_name(ak_buf, ak_size, name, err);
	if (r < 0)
		goto out;

	snprintf(parent_name, sizeof(parent_name), "0x%08x", MB_TPM_SRK_HANDLE);
	ak = doc_new("mboot-ak");
	if (ak) {
		json_object_object_add(ak, "alg", json_object_new_string(ak_alg == MB_ATTEST_KEY_RSA ? "rsa" : "ecc"));
		json_object_object_add(ak, "public", seal_json_b64_obj(ak_buf, ak_size));
		json_object_object_add(ak, "private", seal_json_b64_obj(priv_buf, priv_size));
		json_object_object_add(ak, "parent", json_object_new_string(persistent ? parent_name : "srk-template"));
		json_object_object_add(ak, "name", hex_obj(name, sizeof(name)));
		json_object_object_add(ak, "ek", json_object_new_string(ek_kinds[kind].name));
	}
	req = doc_new("mboot-attest-request");
	if (req) {
		o = json_object_new_object();
		json_object_object_add(req, "ek", o);
		json_object_object_add(o, "public", seal_json_b64_obj(ek_buf, ek_size));
		json_object_object_add(o, "certificate", cert ? seal_json_b64_obj(cert, cert_size) : NULL);
		snprintf(index, sizeof(index), "0x%08x", ek_kinds[kind].nv_index);
		json_object_object_add(o, "nv_index", cert ? json_object_new_string(index) : NULL);
		o = json_object_new_object();
		json_object_object_add(req, "ak", o);
		json_object_object_add(o, "public", seal_json_b64_obj(ak_buf, ak_size));
		json_object_object_add(o, "name", hex_obj(name, sizeof(name)));
	}
	r = doc_finish(ak, ret_ak_file, err);
	ak = NULL;
	if (r == 0)
		r = doc_finish(req, ret_request, err);
	req = NULL;
	if (r < 0) {
		free(*ret_ak_file);
		*ret_ak_file = NULL;
	}
out:
	json_object_put(ak);
	json_object_put(req);
	explicit_bzero(priv_buf, sizeof(priv_buf));
	free(cert);
	Esys_Free(ek_pub);
	Esys_Free(ak_pub);
	Esys_Free(ak_priv);
	if (ek != ESYS_TR_NONE)
		Esys_FlushContext(t->esys, ek);
	if (session != ESYS_TR_NONE)
		Esys_FlushContext(t->esys, session);
	tpm_drop_parent(t, &parent, flush);
	return r;
}

/* An AK file, read and checked. */
typedef struct ak_file {
	TPM2B_PUBLIC pub;
	TPM2B_PRIVATE priv;
	uint8_t pub_raw[sizeof(TPM2B_PUBLIC)];
	size_t pub_raw_size;
	uint8_t name[MB_TPM_NAME_SIZE];
	bool parent_persistent;
	uint32_t parent_handle;
	ek_kind ek;
} ak_file;

static int b64_exact(json_object *o, const char *key, uint8_t *out, size_t max, size_t *ret_size, mb_error *err)
{
	uint8_t *p = NULL;
	size_t n = 0;
	int r = seal_json_b64(o, key, max, false, &p, &n, err);

	if (r < 0)
		return r;
	memcpy(out, p, n);
	explicit_bzero(p, n);
	free(p);
	*ret_size = n;
	return 0;
}

/* Up to max bytes of hex of even length; name is the field, for messages. */
static int hex_var(json_object *o, const char *key, uint8_t *out, size_t max, size_t *ret_size, mb_error *err)
{
	json_object *v = seal_json_get(o, key, json_type_string);
	size_t len = v ? (size_t) json_object_get_string_len(v) : 0;

	if (!v || len == 0 || len % 2 || len / 2 > max || mb_unhex(json_object_get_string(v), len, out, len / 2) < 0)
		return mb_fail(err, -EBADMSG, "field \"%s\" is not hex of 1 to %zu bytes", key, max);
	*ret_size = len / 2;
	return 0;
}

static int ak_file_read(const char *text, size_t size, ak_file *ak, mb_error *err)
{
	json_object *root = NULL, *v;
	uint8_t raw[sizeof(TPM2B_PRIVATE)], name[MB_TPM_NAME_SIZE];
	size_t n = 0, off = 0;
	const TPMA_OBJECT want = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_RESTRICTED |
				 TPMA_OBJECT_SIGN_ENCRYPT;
	const char *s;
	unsigned k;
	int r;

	memset(ak, 0, sizeof(*ak));
	r = seal_json_open(text, size, AK_FILE_MAX, "the AK file", "mboot-ak", &root, err);
	if (r < 0)
		return r;
	r = b64_exact(root, "public", ak->pub_raw, sizeof(ak->pub_raw), &ak->pub_raw_size, err);
	if (r < 0)
		goto out;
	if (Tss2_MU_TPM2B_PUBLIC_Unmarshal(ak->pub_raw, ak->pub_raw_size, &off, &ak->pub) != TSS2_RC_SUCCESS ||
	    off != ak->pub_raw_size) {
		r = mb_fail(err, -EBADMSG, "field \"public\" is not one TPM2B_PUBLIC");
		goto out;
	}
	if ((ak->pub.publicArea.objectAttributes & want) != want ||
	    (ak->pub.publicArea.objectAttributes & TPMA_OBJECT_DECRYPT)) {
		r = mb_fail(err, -EBADMSG, "field \"public\" is not a restricted signing key");
		goto out;
	}
	r = mb_tpm_key_name(ak->pub_raw, ak->pub_raw_size, ak->name, err);
	if (r < 0)
		goto out;
	r = seal_json_hex(root, "name", "name", name, sizeof(name), err);
	if (r < 0)
		goto out;
	if (memcmp(name, ak->name, sizeof(name)) != 0) {
		r = mb_fail(err, -EBADMSG, "field \"name\" is not the name of field \"public\"");
		goto out;
	}
	r = b64_exact(root, "private", raw, sizeof(raw), &n, err);
	if (r < 0)
		goto out;
	off = 0;
	if (Tss2_MU_TPM2B_PRIVATE_Unmarshal(raw, n, &off, &ak->priv) != TSS2_RC_SUCCESS || off != n ||
	    ak->priv.size == 0) {
		r = mb_fail(err, -EBADMSG, "field \"private\" is not one TPM2B_PRIVATE");
		goto out;
	}
	v = seal_json_get(root, "parent", json_type_string);
	s = v ? json_object_get_string(v) : "";
	if (strcmp(s, "srk-template") == 0) {
		ak->parent_persistent = false;
	} else if (strlen(s) == 10 && strncmp(s, "0x81", 4) == 0 && mb_unhex(s + 2, 8, raw, 4) == 0) {
		ak->parent_persistent = true;
		ak->parent_handle = (uint32_t) raw[0] << 24 | (uint32_t) raw[1] << 16 | (uint32_t) raw[2] << 8 | raw[3];
	} else {
		r = mb_fail(err, -EBADMSG, "field \"parent\" is neither \"srk-template\" nor a persistent handle");
		goto out;
	}
	v = seal_json_get(root, "ek", json_type_string);
	for (k = 0; v && k < EK_KIND_MAX; k++)
		if (strcmp(json_object_get_string(v), ek_kinds[k].name) == 0)
			break;
	if (!v || k == EK_KIND_MAX) {
		r = mb_fail(err, -EBADMSG, "field \"ek\" is not \"rsa2048\", \"ecc-p256\" or \"ecc-p384\"");
		goto out;
	}
	ak->ek = (ek_kind) k;
	r = 0;
out:
	explicit_bzero(raw, sizeof(raw));
	json_object_put(root);
	return r;
}

static int load_ak(mb_tpm *t, const ak_file *ak, ESYS_TR *parent, bool *flush, ESYS_TR *ret, mb_error *err)
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
	rc = Esys_Load(t->esys, *parent, session, ESYS_TR_NONE, ESYS_TR_NONE, &ak->priv, &ak->pub, ret);
	Esys_FlushContext(t->esys, session);
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

MB_EXPORT int mb_tpm_attest_activate(mb_tpm *t, const char *ak_text, size_t ak_text_size, const char *challenge,
				     size_t challenge_size, char **ret_response, mb_error *err)
{
	ak_file ak;
	json_object *root = NULL, *resp;
	TPM2B_ID_OBJECT blob;
	TPM2B_ENCRYPTED_SECRET secret;
	TPM2B_DIGEST *cred = NULL;
	TPM2B_PUBLIC *ek_pub = NULL;
	uint8_t raw[sizeof(TPM2B_ENCRYPTED_SECRET)], name[NAME_MAX_BYTES];
	size_t n = 0, name_size = 0, off = 0;
	ESYS_TR parent = ESYS_TR_NONE, ak_h = ESYS_TR_NONE, ek = ESYS_TR_NONE, policy = ESYS_TR_NONE;
	ESYS_TR ek_auth = ESYS_TR_PASSWORD;
	bool flush = false;
	TSS2_RC rc;
	int r;

	*ret_response = NULL;
	r = ak_file_read(ak_text, ak_text_size, &ak, err);
	if (r < 0)
		return mb_fail_prefix(err, r, "AK file");

	/* The challenge first: a malformed one is an input error before any TPM work. */
	r = seal_json_open(challenge, challenge_size, CHALLENGE_MAX, "the challenge", "mboot-attest-challenge", &root,
			   err);
	if (r < 0)
		goto out_input;
	r = hex_var(root, "ak_name", name, sizeof(name), &name_size, err);
	if (r < 0)
		goto out_input;
	memset(&blob, 0, sizeof(blob));
	r = b64_exact(root, "credential_blob", raw, sizeof(raw), &n, err);
	if (r < 0)
		goto out_input;
	if (Tss2_MU_TPM2B_ID_OBJECT_Unmarshal(raw, n, &off, &blob) != TSS2_RC_SUCCESS || off != n || blob.size == 0) {
		r = mb_fail(err, -EBADMSG, "field \"credential_blob\" is not one TPM2B_ID_OBJECT");
		goto out_input;
	}
	memset(&secret, 0, sizeof(secret));
	r = b64_exact(root, "encrypted_secret", raw, sizeof(raw), &n, err);
	if (r < 0)
		goto out_input;
	off = 0;
	if (Tss2_MU_TPM2B_ENCRYPTED_SECRET_Unmarshal(raw, n, &off, &secret) != TSS2_RC_SUCCESS || off != n ||
	    secret.size == 0) {
		r = mb_fail(err, -EBADMSG, "field \"encrypted_secret\" is not one TPM2B_ENCRYPTED_SECRET");
		goto out_input;
	}
	if (name_size != sizeof(ak.name) || memcmp(name, ak.name, name_size) != 0) {
		r = mb_fail(err, MB_ERR_ATTEST_REFUSED, "the challenge is for another AK (its ak_name is not this AK's "
			    "name): it was made from another enrollment request");
		goto out;
	}

	r = create_ek(t, ak.ek, &ek, &ek_pub, err);
	if (r < 0)
		goto out;
	r = load_ak(t, &ak, &parent, &flush, &ak_h, err);
	if (r < 0)
		goto out;
	if (!(ek_pub->publicArea.objectAttributes & TPMA_OBJECT_USERWITHAUTH)) {
		/* The low-range EKs: only PolicyA (PolicySecret on the endorsement hierarchy) authorises them. */
		static const TPMT_SYM_DEF no_sym = { .algorithm = TPM2_ALG_NULL };
		TPM2B_NONCE nonce_tpm = { 0 };
		TPM2B_DIGEST cp_hash = { 0 };
		TPM2B_NONCE ref = { 0 };

		rc = Esys_StartAuthSession(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
					   ESYS_TR_NONE, NULL, TPM2_SE_POLICY, &no_sym, ek_pub->publicArea.nameAlg,
					   &policy);
		if (rc != TSS2_RC_SUCCESS) {
			r = tpm_classify(t, err, rc, "TPM2_StartAuthSession of the EK's policy session failed");
			goto out;
		}
		rc = Esys_PolicySecret(t->esys, ESYS_TR_RH_ENDORSEMENT, policy, ESYS_TR_PASSWORD, ESYS_TR_NONE,
				       ESYS_TR_NONE, &nonce_tpm, &cp_hash, &ref, 0, NULL, NULL);
		if (rc != TSS2_RC_SUCCESS) {
			r = tpm_classify(t, err, rc, "TPM2_PolicySecret(TPM_RH_ENDORSEMENT) failed (an endorsement "
					 "hierarchy password?)");
			goto out;
		}
		ek_auth = policy;
	}
	rc = Esys_ActivateCredential(t->esys, ak_h, ek, ESYS_TR_PASSWORD, ek_auth, ESYS_TR_NONE, &blob, &secret,
				     &cred);
	if (rc != TSS2_RC_SUCCESS) {
		r = tpm_classify(t, err, rc, "TPM2_ActivateCredential failed");
		if (rc_is_refusal(rc))
			r = mb_fail(err, MB_ERR_ATTEST_REFUSED, "the TPM cannot open the credential: it was not made "
				    "for this AK and this TPM's EK (TPM response code 0x%08x)", rc);
		goto out;
	}

	resp = doc_new("mboot-attest-response");
	if (resp) {
		json_object_object_add(resp, "ak_name", hex_obj(ak.name, sizeof(ak.name)));
		json_object_object_add(resp, "credential", seal_json_b64_obj(cred->buffer, cred->size));
	}
	r = doc_finish(resp, ret_response, err);
	goto out;
out_input:
	r = mb_fail_prefix(err, r, "challenge");
out:
	if (cred)
		explicit_bzero(cred, sizeof(*cred));
	Esys_Free(cred);
	Esys_Free(ek_pub);
	json_object_put(root);
	if (policy != ESYS_TR_NONE)
		Esys_FlushContext(t->esys, policy);
	if (ak_h != ESYS_TR_NONE)
		Esys_FlushContext(t->esys, ak_h);
	if (ek != ESYS_TR_NONE)
		Esys_FlushContext(t->esys, ek);
	tpm_drop_parent(t, &parent, flush);
	return r;
}

/* The PCR update counter (TPM2_PCR_Read of no PCR). */
static int pcr_counter(mb_tpm *t, uint32_t *ret, mb_error *err)
{
	TPML_PCR_SELECTION none = { 0 };
	TPML_PCR_SELECTION *sel = NULL;
	TPML_DIGEST *values = NULL;
	TSS2_RC rc = Esys_PCR_Read(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &none, ret, &sel, &values);

	Esys_Free(sel);
	Esys_Free(values);
	if (rc != TSS2_RC_SUCCESS)
		return mb_tpm_fail(t, err, rc, "TPM2_PCR_Read of the update counter failed");
	return 0;
}

/*
 * 1 when v holds exactly the PCRs the quote selected and pcrDigest is their hash (hash_alg,
 * the AK's scheme's), in the order the TPM hashes them: bank by bank as selected, PCR 0 up.
 */
static int quote_matches(const TPMS_QUOTE_INFO *q, uint16_t hash_alg, const mb_pcr_values *v, mb_error *err)
{
	uint8_t buf[MB_MAX_BANKS * MB_PCR_COUNT * MB_DIGEST_MAX], digest[MB_DIGEST_MAX];
	const mb_digest_info *h = mb_digest_by_alg(hash_alg);
	size_t n = 0, quoted_banks = 0;
	uint32_t i, p;

	if (!h || q->pcrDigest.size != h->size)
		return mb_fail(err, MB_ERR_TPM, "the quote's pcrDigest has %u bytes", q->pcrDigest.size);
	for (i = 0; i < q->pcrSelect.count && i < TPM2_NUM_PCR_BANKS; i++) {
		const TPMS_PCR_SELECTION *s = &q->pcrSelect.pcrSelections[i];
		const mb_digest_info *d = mb_digest_by_alg(s->hash);
		uint32_t mask = 0;

		for (p = 0; p < s->sizeofSelect && p < 4; p++)
			mask |= (uint32_t) s->pcrSelect[p] << (8 * p);
		if (!d || (mask >> MB_PCR_COUNT) || mb_pcr_values_present(v, s->hash) != mask)
			return 0;
		quoted_banks++;
		for (p = 0; p < MB_PCR_COUNT; p++) {
			if (!(mask & (1u << p)))
				continue;
			if (n + d->size > sizeof(buf))
				return 0;
			memcpy(buf + n, mb_pcr_values_get(v, s->hash, p), d->size);
			n += d->size;
		}
	}
	if (quoted_banks != mb_pcr_values_n_banks(v))
		return 0;
	if (mb_digest(hash_alg, buf, n, digest) < 0)
		return mb_fail(err, -ENOMEM, "cannot hash the PCR values");
	return memcmp(digest, q->pcrDigest.buffer, h->size) == 0;
}

static json_object *pcrs_obj(const mb_pcr_values *v)
{
	json_object *root = json_object_new_object(), *banks = json_object_new_object();
	size_t i;

	if (!root || !banks) {
		json_object_put(root);
		json_object_put(banks);
		return NULL;
	}
	json_object_object_add(root, "banks", banks);
	for (i = 0; i < mb_pcr_values_n_banks(v); i++) {
		uint16_t alg = mb_pcr_values_bank_alg(v, i);
		const mb_digest_info *d = mb_digest_by_alg(alg);
		json_object *b = json_object_new_object();
		uint32_t p;

		if (!d || !b) {
			json_object_put(b);
			json_object_put(root);
			return NULL;
		}
		json_object_object_add(banks, d->name, b);
		for (p = 0; p < MB_PCR_COUNT; p++) {
			const uint8_t *val = mb_pcr_values_get(v, alg, p);
			char key[4];

			if (!val)
				continue;
			snprintf(key, sizeof(key), "%u", p);
			json_object_object_add(b, key, hex_obj(val, d->size));
		}
	}
	return root;
}

static json_object *now_obj(void)
{
	char buf[32];
	time_t now = time(NULL);
	struct tm tm;

	if (!gmtime_r(&now, &tm) || strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		return NULL;
	return json_object_new_string(buf);
}

MB_EXPORT int mb_tpm_quote(mb_tpm *t, const char *ak_text, size_t ak_text_size, const mb_quote_input *in,
			   char **ret_evidence, mb_error *err)
{
	ak_file ak;
	mb_tpm_bank active[MB_MAX_BANKS];
	uint16_t use[MB_MAX_BANKS];
	size_t n_active = 0, n_use = 0, i, j;
	uint32_t mask = in->pcr_mask ? in->pcr_mask : (1u << MB_PCR_COUNT) - 1;
	TPML_PCR_SELECTION sel = { 0 };
	TPM2B_DATA qualifying = { 0 };
	TPMT_SIG_SCHEME scheme = { .scheme = TPM2_ALG_NULL };
	TPM2B_ATTEST *quoted = NULL;
	TPMT_SIGNATURE *sig = NULL;
	uint8_t sig_buf[sizeof(TPMT_SIGNATURE)];
	size_t sig_size = 0;
	ESYS_TR parent = ESYS_TR_NONE, ak_h = ESYS_TR_NONE;
	bool flush = false;
	mb_pcr_values *v = NULL;
	json_object *root, *q;
	unsigned tries;
	uint16_t hash_alg;
	TSS2_RC rc;
	int r;

	*ret_evidence = NULL;
	if (!in->nonce || in->nonce_size < MB_ATTEST_NONCE_MIN || in->nonce_size > MB_ATTEST_NONCE_MAX)
		return mb_fail(err, -EINVAL, "the nonce must have %u to %u bytes, not %zu", MB_ATTEST_NONCE_MIN,
			       MB_ATTEST_NONCE_MAX, in->nonce ? in->nonce_size : 0);
	if (mask >> MB_PCR_COUNT)
		return mb_fail(err, -EINVAL, "PCR mask 0x%x names PCRs over %u", mask, MB_PCR_COUNT - 1);
	/* base64 grows by 4/3: keep the evidence readable by a verifier (MB_ATTEST_FILE_MAX). */
	if (in->eventlog_size > MB_ATTEST_FILE_MAX / 2 || in->userspace_log_size > MB_ATTEST_FILE_MAX / 4)
		return mb_fail(err, -E2BIG, "the logs are too large for evidence of at most %u bytes",
			       MB_ATTEST_FILE_MAX);
	r = ak_file_read(ak_text, ak_text_size, &ak, err);
	if (r < 0)
		return mb_fail_prefix(err, r, "AK file");
	hash_alg = ak.pub.publicArea.type == TPM2_ALG_RSA ?
			   ak.pub.publicArea.parameters.rsaDetail.scheme.details.anySig.hashAlg :
			   ak.pub.publicArea.parameters.eccDetail.scheme.details.anySig.hashAlg;
	if (!mb_digest_by_alg(hash_alg))
		return mb_fail(err, -EBADMSG, "AK file: the AK signs with hash 0x%04x", hash_alg);

	r = mb_tpm_banks(t, active, MB_MAX_BANKS, &n_active, err);
	if (r < 0)
		return r;
	if (!in->algs) {
		for (i = 0; i < n_active; i++)
			if (mb_digest_by_alg(active[i].alg) && (active[i].pcrs & mask))
				use[n_use++] = active[i].alg;
	} else {
		if (in->n_algs == 0 || in->n_algs > MB_MAX_BANKS)
			return mb_fail(err, -EINVAL, "1 to %u banks can be quoted, not %zu", MB_MAX_BANKS, in->n_algs);
		for (i = 0; i < in->n_algs; i++) {
			const mb_digest_info *d = mb_digest_by_alg(in->algs[i]);

			for (j = 0; j < n_active; j++)
				if (active[j].alg == in->algs[i])
					break;
			if (!d)
				return mb_fail(err, -EINVAL, "unknown bank 0x%04x", in->algs[i]);
			if (j == n_active)
				return mb_fail(err, MB_ERR_TPM, "the TPM has no active %s bank", d->name);
			for (j = 0; j < n_use; j++)
				if (use[j] == in->algs[i])
					return mb_fail(err, -EINVAL, "bank %s asked for twice", d->name);
			use[n_use++] = in->algs[i];
		}
	}
	if (n_use == 0)
		return mb_fail(err, MB_ERR_TPM, "no active PCR bank mboot knows has any of the PCRs to quote");
	/* One quote over all of it: TPML_PCR_SELECTION holds every bank, and the TPM hashes all of them. */
	for (i = 0; i < n_use; i++) {
		for (j = 0; j < n_active; j++)
			if (active[j].alg == use[i])
				break;
		sel.pcrSelections[sel.count].hash = use[i];
		sel.pcrSelections[sel.count].sizeofSelect = 3;
		for (unsigned b = 0; b < 3; b++)
			sel.pcrSelections[sel.count].pcrSelect[b] = (uint8_t) ((active[j].pcrs & mask) >> (8 * b));
		sel.count++;
	}
	qualifying.size = (UINT16) in->nonce_size;
	memcpy(qualifying.buffer, in->nonce, in->nonce_size);

	r = load_ak(t, &ak, &parent, &flush, &ak_h, err);
	if (r < 0)
		goto out;
	v = mb_pcr_values_new();
	if (!v) {
		r = mb_fail(err, -ENOMEM, "out of memory");
		goto out;
	}
	/*
	 * The values and the quote must be one snapshot: read the update counter, the values, quote,
	 * and read the counter again; then check that pcrDigest is the hash of the values read.
	 */
	for (tries = 0;; tries++) {
		TPMS_ATTEST att;
		uint32_t before = 0, after = 0;
		size_t off = 0;

		Esys_Free(quoted);
		Esys_Free(sig);
		quoted = NULL;
		sig = NULL;
		if (tries == QUOTE_MAX_TRIES) {
			r = mb_fail(err, MB_ERR_TPM, "the PCRs kept changing while being quoted (%u tries)", tries);
			goto out;
		}
		r = pcr_counter(t, &before, err);
		if (r < 0)
			goto out;
		r = mb_tpm_read_pcrs(t, use, n_use, mask, v, NULL, err);
		if (r < 0)
			goto out;
		rc = Esys_Quote(t->esys, ak_h, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &qualifying, &scheme, &sel,
				&quoted, &sig);
		if (rc != TSS2_RC_SUCCESS) {
			r = tpm_classify(t, err, rc, "TPM2_Quote failed");
			goto out;
		}
		r = pcr_counter(t, &after, err);
		if (r < 0)
			goto out;
		if (before != after)
			continue;
		memset(&att, 0, sizeof(att));
		if (Tss2_MU_TPMS_ATTEST_Unmarshal(quoted->attestationData, quoted->size, &off, &att) != TSS2_RC_SUCCESS ||
		    off != quoted->size || att.magic != TPM2_GENERATED_VALUE || att.type != TPM2_ST_ATTEST_QUOTE ||
		    att.extraData.size != in->nonce_size || memcmp(att.extraData.buffer, in->nonce, in->nonce_size) != 0) {
			r = mb_fail(err, MB_ERR_TPM, "TPM2_Quote returned an attestation that is not a quote of the nonce");
			goto out;
		}
		r = quote_matches(&att.attested.quote, hash_alg, v, err);
		if (r < 0)
			goto out;
		if (r == 1)
			break;
	}
	rc = Tss2_MU_TPMT_SIGNATURE_Marshal(sig, sig_buf, sizeof(sig_buf), &sig_size);
	if (rc != TSS2_RC_SUCCESS) {
		r = mb_tpm_fail(t, err, rc, "cannot marshal the quote's signature");
		goto out;
	}

	root = doc_new("mboot-evidence");
	q = json_object_new_object();
	if (root && q) {
		json_object_object_add(root, "quote", q);
		json_object_object_add(q, "attest", seal_json_b64_obj(quoted->attestationData, quoted->size));
		json_object_object_add(q, "signature", seal_json_b64_obj(sig_buf, sig_size));
		json_object_object_add(root, "pcrs", pcrs_obj(v));
		json_object_object_add(root, "ak_public", seal_json_b64_obj(ak.pub_raw, ak.pub_raw_size));
		json_object_object_add(root, "eventlog",
				       in->eventlog ? seal_json_b64_obj(in->eventlog, in->eventlog_size) : NULL);
		json_object_object_add(root, "userspace_log",
				       in->userspace_log ? seal_json_b64_obj(in->userspace_log, in->userspace_log_size) :
							   NULL);
		json_object_object_add(root, "created", now_obj());
	} else {
		json_object_put(q);
	}
	r = doc_finish(root, ret_evidence, err);
out:
	mb_pcr_values_free(v);
	Esys_Free(quoted);
	Esys_Free(sig);
	if (ak_h != ESYS_TR_NONE)
		Esys_FlushContext(t->esys, ak_h);
	tpm_drop_parent(t, &parent, flush);
	return r;
}
