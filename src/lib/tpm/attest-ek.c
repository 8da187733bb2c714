/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Endorsement Key and its certificate: TCG EK Credential Profile 2.3 templates L-1 (RSA
 * 2048), L-2 (ECC P-256) and H-3 (ECC P-384), certificate NV indices §2.2.1.4; TPM 2.0 Library
 * Part 3 §31.13 NV_Read.
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
#include "lib/attest/der-size.h"

/* An EK certificate is about 1 KiB; NV indices are at most a few KiB. */
#define EK_CERT_MAX (16u << 10)

const attest_ek_kind attest_ek_kinds[EK_KIND_MAX] = {
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
	/* All three: AES-CFB as the parent's symmetric scheme, no signing scheme, no KDF. */
	if (kind == EK_RSA2048) {
		/* L-1: AES-128, 2048-bit modulus, unique 256 zero bytes */
		a->type = TPM2_ALG_RSA;
		a->parameters.rsaDetail.symmetric = (TPMT_SYM_DEF_OBJECT) { .algorithm = TPM2_ALG_AES,
									   .keyBits.aes = 128, .mode.aes = TPM2_ALG_CFB };
		a->parameters.rsaDetail.scheme.scheme = TPM2_ALG_NULL;
		a->parameters.rsaDetail.keyBits = 2048;
		a->unique.rsa.size = 256;
	} else {
		/* L-2: AES-128, NIST P-256, unique two 32-byte zero coordinates; H-3 below */
		a->type = TPM2_ALG_ECC;
		a->parameters.eccDetail.symmetric = (TPMT_SYM_DEF_OBJECT) { .algorithm = TPM2_ALG_AES,
									   .keyBits.aes = 128, .mode.aes = TPM2_ALG_CFB };
		a->parameters.eccDetail.scheme.scheme = TPM2_ALG_NULL;
		a->parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
		a->parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
		a->unique.ecc.x.size = 32;
		a->unique.ecc.y.size = 32;
	}
	if (kind != EK_ECC_P384) {
		a->nameAlg = TPM2_ALG_SHA256;
		a->authPolicy.size = 32;
		memcpy(a->authPolicy.buffer, policy_a_sha256, 32);
		return;
	}
	/*
	 * H-3: SHA-384 name, AES-256, NIST P-384, empty unique; userWithAuth set, so the empty
	 * endorsement authValue authorises it without a policy session.
	 */
	a->nameAlg = TPM2_ALG_SHA384;
	a->objectAttributes |= TPMA_OBJECT_USERWITHAUTH;
	a->authPolicy.size = 48;
	memcpy(a->authPolicy.buffer, policy_b_sha384, 48);
	a->parameters.eccDetail.symmetric.keyBits.aes = 256;
	a->parameters.eccDetail.curveID = TPM2_ECC_NIST_P384;
	a->unique.ecc.x.size = 0;
	a->unique.ecc.y.size = 0;
}

int attest_create_ek(mb_tpm *t, ek_kind kind, ESYS_TR *ret, TPM2B_PUBLIC **ret_pub, mb_error *err)
{
	TPM2B_SENSITIVE_CREATE sens = { 0 };
	TPM2B_DATA outside = { 0 };
	TPML_PCR_SELECTION creation = { 0 };
	TPM2B_PUBLIC tmpl;
	TSS2_RC rc;
	char what[96];

	ek_template(kind, &tmpl);
	rc = sym_Esys_CreatePrimary(t->esys, ESYS_TR_RH_ENDORSEMENT, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &sens,
				&tmpl, &outside, &creation, ret, ret_pub, NULL, NULL, NULL);
	if (rc != TSS2_RC_SUCCESS) {
		snprintf(what, sizeof(what), "TPM2_CreatePrimary of the %s EK (EK Credential Profile template) failed",
			 attest_ek_kinds[kind].name);
		return tpm_classify(t, err, rc, what);
	}
	return 0;
}

/* Which EK certificate indices the TPM has: bit k for attest_ek_kinds[k]. */
int attest_ek_cert_indices(mb_tpm *t, unsigned *ret, mb_error *err)
{
	uint32_t next = 0x01c00000;
	TPMI_YES_NO more = TPM2_YES;
	unsigned found = 0, calls = 0;

	while (more && next < 0x01c10000 && calls++ < 64) {
		TPMS_CAPABILITY_DATA *cap = NULL;
		TSS2_RC rc = sym_Esys_GetCapability(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2_CAP_HANDLES,
						next, TPM2_MAX_CAP_HANDLES, &more, &cap);
		uint32_t i, h = 0;

		if (rc != TSS2_RC_SUCCESS)
			return tpm_fail(t, err, rc, "TPM2_GetCapability(HANDLES) of the NV indices failed");
		if (cap->capability != TPM2_CAP_HANDLES || cap->data.handles.count == 0) {
			sym_Esys_Free(cap);
			break;
		}
		for (i = 0; i < cap->data.handles.count && i < TPM2_MAX_CAP_HANDLES; i++) {
			h = cap->data.handles.handle[i];
			for (unsigned k = 0; k < EK_KIND_MAX; k++)
				if (h == attest_ek_kinds[k].nv_index)
					found |= 1u << k;
		}
		sym_Esys_Free(cap);
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

	if (sym_Esys_GetCapability(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2_CAP_TPM_PROPERTIES,
			       TPM2_PT_NV_BUFFER_MAX, 1, &more, &cap) == TSS2_RC_SUCCESS) {
		if (cap->data.tpmProperties.count == 1 &&
		    cap->data.tpmProperties.tpmProperty[0].property == TPM2_PT_NV_BUFFER_MAX &&
		    cap->data.tpmProperties.tpmProperty[0].value >= 64 &&
		    cap->data.tpmProperties.tpmProperty[0].value <= TPM2_MAX_NV_BUFFER_SIZE)
			n = (uint16_t) cap->data.tpmProperties.tpmProperty[0].value;
		sym_Esys_Free(cap);
	}
	return n;
}

/* The EK certificate from its NV index, read with the index's own (empty) authorisation, else the owner's. */
int attest_read_ek_cert(mb_tpm *t, uint32_t index, uint8_t **ret, size_t *ret_size, mb_error *err)
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
	rc = sym_Esys_TR_FromTPMPublic(t->esys, index, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &nv);
	if (rc == TSS2_RC_SUCCESS)
		rc = sym_Esys_NV_ReadPublic(t->esys, nv, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &pub, NULL);
	if (rc != TSS2_RC_SUCCESS) {
		snprintf(what, sizeof(what), "TPM2_NV_ReadPublic of the EK certificate index 0x%08x failed", index);
		r = tpm_fail(t, err, rc, what);
		goto out;
	}
	size = pub->nvPublic.dataSize;
	if (size == 0 || size > EK_CERT_MAX) {
		r = set_error(err, MB_ERR_TPM, "the EK certificate index 0x%08x holds %u bytes", index, size);
		goto out;
	}
	buf = malloc(size);
	if (!buf) {
		r = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	chunk = nv_buffer_max(t);
	while (off < size) {
		TPM2B_MAX_NV_BUFFER *data = NULL;
		uint16_t n = (uint16_t) (size - off < chunk ? size - off : chunk);

		rc = sym_Esys_NV_Read(t->esys, nv, nv, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, n, off, &data);
		if (rc != TSS2_RC_SUCCESS)
			rc = sym_Esys_NV_Read(t->esys, ESYS_TR_RH_OWNER, nv, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, n,
					  off, &data);
		if (rc != TSS2_RC_SUCCESS) {
			snprintf(what, sizeof(what), "TPM2_NV_Read of the EK certificate index 0x%08x failed", index);
			r = tpm_fail(t, err, rc, what);
			goto out;
		}
		if (data->size != n) {
			sym_Esys_Free(data);
			r = set_error(err, MB_ERR_TPM, "TPM2_NV_Read returned %u bytes, not %u", data->size, n);
			goto out;
		}
		memcpy(buf + off, data->buffer, n);
		off += n;
		sym_Esys_Free(data);
	}
	der = ek_der_size(buf, size);
	*ret = buf;
	*ret_size = der ? der : size;
	buf = NULL;
	r = 0;
out:
	free(buf);
	sym_Esys_Free(pub);
	if (nv != ESYS_TR_NONE)
		sym_Esys_TR_Close(t->esys, &nv);
	return r;
}
