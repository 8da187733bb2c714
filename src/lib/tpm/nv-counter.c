/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mboot's NV counter (docs/seal.md): TPM 2.0 Part 3 §31.3 NV_DefineSpace, §31.8
 * NV_Increment, §31.13 NV_Read, §31.6 NV_ReadPublic. The counter only ever moves up: a
 * window or a signature bound to its value N stops working when it leaves N.
 */
#include <errno.h>
#include <string.h>

#include <mboot/tpm-policy.h>
#include <mboot/tpm.h>
#include "shared/fail.h"
#include "tpm-internal.h"

/* TPM_RC_HANDLE (format 1): no such index */
#define RC_HANDLE 0x08Bu

/* The counter's ESYS handle, after checking it is mboot's (name = the one of MB_NV_COUNTER_ATTRIBUTES,
 * or of them without WRITTEN: defined, not yet incremented; *written says which). */
static int counter_open(mb_tpm *t, uint32_t index, ESYS_TR *ret, bool *written, mb_error *err)
{
	uint8_t want[MB_TPM_NAME_SIZE];
	TPM2B_NV_PUBLIC *pub = NULL;
	TPMA_NV attrs;
	TSS2_RC rc;
	int r;

	*ret = ESYS_TR_NONE;
	r = mb_nv_counter_name(index, want, err);
	if (r < 0)
		return r;
	rc = sym_Esys_TR_FromTPMPublic(t->esys, index, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ret);
	if (rc != TSS2_RC_SUCCESS) {
		*ret = ESYS_TR_NONE;
		if (tpm_rc_is(rc, RC_HANDLE))
			return set_error(err, -ENOENT, "no NV counter at 0x%08x", index);
		return tpm_classify(t, err, rc, "TPM2_NV_ReadPublic of the NV counter failed");
	}
	rc = sym_Esys_NV_ReadPublic(t->esys, *ret, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &pub, NULL);
	if (rc != TSS2_RC_SUCCESS) {
		sym_Esys_TR_Close(t->esys, ret);
		return tpm_classify(t, err, rc, "TPM2_NV_ReadPublic of the NV counter failed");
	}
	attrs = pub->nvPublic.attributes;
	*written = (attrs & TPMA_NV_WRITTEN) != 0;
	if ((attrs | TPMA_NV_WRITTEN) != MB_NV_COUNTER_ATTRIBUTES || pub->nvPublic.nameAlg != TPM2_ALG_SHA256 ||
	    pub->nvPublic.authPolicy.size != 0 || pub->nvPublic.dataSize != 8) {
		set_error(err, -EEXIST, "NV index 0x%08x is not an mboot counter (attributes 0x%08x, %u bytes): "
			  "choose another index", index, (unsigned) attrs, pub->nvPublic.dataSize);
		sym_Esys_Free(pub);
		sym_Esys_TR_Close(t->esys, ret);
		return -EEXIST;
	}
	sym_Esys_Free(pub);
	return 0;
}

static int counter_define(mb_tpm *t, uint32_t index, ESYS_TR *ret, mb_error *err)
{
	TPM2B_AUTH auth = { 0 };
	TPM2B_NV_PUBLIC pub = { 0 };
	TSS2_RC rc;

	pub.nvPublic.nvIndex = index;
	pub.nvPublic.nameAlg = TPM2_ALG_SHA256;
	pub.nvPublic.attributes = MB_NV_COUNTER_ATTRIBUTES & ~TPMA_NV_WRITTEN;
	pub.nvPublic.dataSize = 8;
	rc = sym_Esys_NV_DefineSpace(t->esys, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &auth, &pub,
				 ret);
	if (rc != TSS2_RC_SUCCESS) {
		*ret = ESYS_TR_NONE;
		return tpm_classify(t, err, rc, "TPM2_NV_DefineSpace of the NV counter failed");
	}
	return 0;
}

static int counter_increment(mb_tpm *t, ESYS_TR nv, mb_error *err)
{
	TSS2_RC rc = sym_Esys_NV_Increment(t->esys, ESYS_TR_RH_OWNER, nv, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE);

	if (rc != TSS2_RC_SUCCESS)
		return tpm_classify(t, err, rc, "TPM2_NV_Increment of the NV counter failed");
	return 0;
}

static int counter_value(mb_tpm *t, ESYS_TR nv, uint64_t *ret, mb_error *err)
{
	TPM2B_MAX_NV_BUFFER *data = NULL;
	TSS2_RC rc = sym_Esys_NV_Read(t->esys, nv, nv, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, 8, 0, &data);
	uint64_t v = 0;

	if (rc != TSS2_RC_SUCCESS)
		return tpm_classify(t, err, rc, "TPM2_NV_Read of the NV counter failed");
	if (data->size != 8) {
		sym_Esys_Free(data);
		return set_error(err, MB_ERR_TPM, "TPM2_NV_Read of the counter gave %u bytes", data->size);
	}
	for (unsigned i = 0; i < 8; i++)
		v = v << 8 | data->buffer[i];
	sym_Esys_Free(data);
	*ret = v;
	return 0;
}

MB_EXPORT int mb_tpm_counter_read(mb_tpm *t, uint32_t index, bool create, uint64_t *ret, mb_error *err)
{
	ESYS_TR nv = ESYS_TR_NONE;
	bool written = false;
	int r;

	*ret = 0;
	r = counter_open(t, index, &nv, &written, err);
	if (r == -ENOENT && create) {
		r = counter_define(t, index, &nv, err);
		/* defined by another mboot meanwhile: take that one */
		if (r < 0 && mb_tpm_last_rc(t) && tpm_rc_is(mb_tpm_last_rc(t), TPM2_RC_NV_DEFINED))
			r = counter_open(t, index, &nv, &written, err);
	}
	if (r < 0)
		return r;
	if (!written) {
		r = create ? counter_increment(t, nv, err)
			   : set_error(err, -ENOENT, "the NV counter at 0x%08x was never incremented", index);
		/* the name changed with TPMA_NV_WRITTEN: ESYS must read it again */
		if (r == 0) {
			sym_Esys_TR_Close(t->esys, &nv);
			r = counter_open(t, index, &nv, &written, err);
			if (r < 0)
				return r;
		}
	}
	if (r == 0)
		r = counter_value(t, nv, ret, err);
	sym_Esys_TR_Close(t->esys, &nv);
	return r;
}

MB_EXPORT int mb_tpm_counter_increment(mb_tpm *t, uint32_t index, uint64_t *ret_value, mb_error *err)
{
	ESYS_TR nv = ESYS_TR_NONE;
	bool written = false;
	uint64_t v = 0;
	int r = counter_open(t, index, &nv, &written, err);

	if (r < 0)
		return r;
	r = counter_increment(t, nv, err);
	if (r == 0 && ret_value) {
		sym_Esys_TR_Close(t->esys, &nv);
		r = counter_open(t, index, &nv, &written, err);
		if (r == 0)
			r = counter_value(t, nv, &v, err);
		*ret_value = v;
	}
	if (nv != ESYS_TR_NONE)
		sym_Esys_TR_Close(t->esys, &nv);
	return r;
}
