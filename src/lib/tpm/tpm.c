/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The only file of mboot that includes tpm2-tss headers. TPM 2.0 Library
 * specification Part 3 (commands): §22.2 PCR_Extend, §22.4 PCR_Read,
 * §30.2 GetCapability; Part 2 (structures) §10.6 TPMS_PCR_SELECTION.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tss2/tss2_esys.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>

#include <mboot/digest.h>
#include <mboot/tpm.h>
#include "lib/replay/pcr-values.h"
#include "shared/fail.h"
#include "tpm-internal.h"

/* A PCR_Read returns at most 8 digests; a whole read of 4 banks x 24 PCRs takes 12 calls. */
#define PCR_READ_MAX_CALLS 64
#define PCR_READ_MAX_RESTARTS 4

int tpm_fail(mb_tpm *t, mb_error *err, TSS2_RC rc, const char *what)
{
	if (t)
		t->last_rc = rc;
	if ((rc & TSS2_RC_LAYER_MASK) == TSS2_TCTI_RC_LAYER)
		return set_error(err, MB_ERR_TPM, "%s: lost the connection to the TPM: %s (TSS response code 0x%08x)",
			       what, sym_Tss2_RC_Decode(rc), rc);
	return set_error(err, MB_ERR_TPM, "%s: %s (TPM/TSS response code 0x%08x)", what, sym_Tss2_RC_Decode(rc), rc);
}

MB_EXPORT int mb_tpm_open(const char *tcti, mb_tpm **ret, mb_error *err)
{
	mb_tpm *t;
	TSS2_RC rc;
	/* tpm2-tss is loaded here, not at start: most commands never talk to a TPM. */
	int loaded = dlopen_tpm2(err);

	if (loaded < 0)
		return loaded;
	if (!tcti || !*tcti)
		tcti = secure_getenv("TPM2TOOLS_TCTI");
	if (!tcti || !*tcti)
		tcti = MB_TPM_DEFAULT_TCTI;

	t = calloc(1, sizeof(*t));
	if (!t)
		return set_error(err, -ENOMEM, "out of memory");
	t->tcti_conf = strdup(tcti);
	if (!t->tcti_conf) {
		free(t);
		return set_error(err, -ENOMEM, "out of memory");
	}
	rc = sym_Tss2_TctiLdr_Initialize(t->tcti_conf, &t->tcti);
	if (rc != TSS2_RC_SUCCESS) {
		int r = set_error(err, MB_ERR_TPM, "no TPM answered at TCTI \"%s\": %s (0x%08x)", t->tcti_conf,
				sym_Tss2_RC_Decode(rc), rc);

		mb_tpm_free(t);
		return r;
	}
	rc = sym_Esys_Initialize(&t->esys, t->tcti, NULL);
	if (rc != TSS2_RC_SUCCESS) {
		int r = set_error(err, MB_ERR_TPM, "cannot set up ESAPI on TCTI \"%s\": %s (0x%08x)", t->tcti_conf,
				sym_Tss2_RC_Decode(rc), rc);

		mb_tpm_free(t);
		return r;
	}
	*ret = t;
	return 0;
}

MB_EXPORT void mb_tpm_free(mb_tpm *t)
{
	if (!t)
		return;
	if (t->esys)
		sym_Esys_Finalize(&t->esys);
	if (t->tcti)
		sym_Tss2_TctiLdr_Finalize(&t->tcti);
	free(t->tcti_conf);
	free(t);
}

MB_EXPORT const char *mb_tpm_tcti(const mb_tpm *t)
{
	return t->tcti_conf;
}

MB_EXPORT uint32_t mb_tpm_last_rc(const mb_tpm *t)
{
	return t->last_rc;
}

static uint32_t select_to_mask(const TPMS_PCR_SELECTION *s)
{
	uint32_t mask = 0;
	unsigned i;

	/* pcrSelect[i] bit j is PCR 8i+j (Part 2 §10.6.1). */
	for (i = 0; i < s->sizeofSelect && i < 4; i++)
		mask |= (uint32_t) s->pcrSelect[i] << (8 * i);
	return mask & ((1u << MB_PCR_COUNT) - 1);
}

static void mask_to_select(uint16_t alg, uint32_t mask, TPMS_PCR_SELECTION *s)
{
	memset(s, 0, sizeof(*s));
	s->hash = alg;
	s->sizeofSelect = 3;
	s->pcrSelect[0] = mask & 0xff;
	s->pcrSelect[1] = (mask >> 8) & 0xff;
	s->pcrSelect[2] = (mask >> 16) & 0xff;
}

MB_EXPORT int mb_tpm_banks(mb_tpm *t, mb_tpm_bank *ret, size_t max, size_t *ret_n, mb_error *err)
{
	TPMS_CAPABILITY_DATA *cap = NULL;
	TPMI_YES_NO more = 0;
	TSS2_RC rc;
	size_t n = 0;
	uint32_t i;

	rc = sym_Esys_GetCapability(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2_CAP_PCRS, 0, 1, &more, &cap);
	if (rc != TSS2_RC_SUCCESS)
		return tpm_fail(t, err, rc, "TPM2_GetCapability(PCRS) failed");
	if (cap->capability != TPM2_CAP_PCRS) {
		sym_Esys_Free(cap);
		return set_error(err, MB_ERR_TPM, "TPM2_GetCapability(PCRS) answered with capability 0x%x",
			       cap->capability);
	}
	for (i = 0; i < cap->data.assignedPCR.count && i < TPM2_NUM_PCR_BANKS; i++) {
		const TPMS_PCR_SELECTION *s = &cap->data.assignedPCR.pcrSelections[i];
		uint32_t mask = select_to_mask(s);

		if (!mask)
			continue;
		if (n >= max) {
			sym_Esys_Free(cap);
			return set_error(err, -E2BIG, "the TPM has more than %zu active PCR banks", max);
		}
		ret[n].alg = s->hash;
		ret[n].pcrs = mask;
		n++;
	}
	sym_Esys_Free(cap);
	*ret_n = n;
	return 0;
}

/* One pass over all pending PCRs; returns 1 when the update counter moved (start over). */
static int read_pass(mb_tpm *t, size_t n_banks, const uint16_t *algs, const uint32_t *want, mb_pcr_values *v,
		     unsigned *calls, mb_error *err)
{
	uint32_t pending[MB_MAX_BANKS], counter = 0;
	bool have_counter = false;
	size_t b;

	memcpy(pending, want, n_banks * sizeof(*pending));
	for (;;) {
		TPML_PCR_SELECTION in = { 0 };
		TPML_PCR_SELECTION *out = NULL;
		TPML_DIGEST *values = NULL;
		uint32_t upd = 0, got_any = 0, k = 0, i;
		TSS2_RC rc;

		for (b = 0; b < n_banks; b++)
			if (pending[b])
				mask_to_select(algs[b], pending[b], &in.pcrSelections[in.count++]);
		if (in.count == 0)
			return 0;
		if (*calls >= PCR_READ_MAX_CALLS)
			return set_error(err, MB_ERR_TPM, "the TPM returned too few PCRs after %u TPM2_PCR_Read calls",
				       *calls);
		(*calls)++;
		rc = sym_Esys_PCR_Read(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &in, &upd, &out, &values);
		if (rc != TSS2_RC_SUCCESS)
			return tpm_fail(t, err, rc, "TPM2_PCR_Read failed");
		if (have_counter && upd != counter) {
			sym_Esys_Free(out);
			sym_Esys_Free(values);
			return 1;
		}
		have_counter = true;
		counter = upd;

		/* The digests come in the order of the returned selection: bank by bank, PCR by PCR. */
		for (i = 0; i < out->count && i < TPM2_NUM_PCR_BANKS; i++) {
			const mb_digest_info *d = mb_digest_by_alg(out->pcrSelections[i].hash);
			uint32_t mask = select_to_mask(&out->pcrSelections[i]);
			mb_pcr_bank *bank = NULL;
			size_t bi;
			unsigned p;

			for (bi = 0; bi < n_banks; bi++)
				if (algs[bi] == out->pcrSelections[i].hash)
					break;
			if (!d || bi == n_banks) {
				sym_Esys_Free(out);
				sym_Esys_Free(values);
				return set_error(err, MB_ERR_TPM, "TPM2_PCR_Read returned bank 0x%04x that was not asked for",
					       out->pcrSelections[i].hash);
			}
			bank = &v->banks[bi];
			for (p = 0; p < MB_PCR_COUNT; p++) {
				if (!(mask & (1u << p)))
					continue;
				if (k >= values->count || values->digests[k].size != d->size ||
				    !(pending[bi] & (1u << p))) {
					sym_Esys_Free(out);
					sym_Esys_Free(values);
					return set_error(err, MB_ERR_TPM,
						       "TPM2_PCR_Read returned a selection that does not match its digests");
				}
				memcpy(bank->value[p], values->digests[k].buffer, d->size);
				bank->present |= 1u << p;
				pending[bi] &= ~(1u << p);
				k++;
				got_any++;
			}
		}
		sym_Esys_Free(out);
		sym_Esys_Free(values);
		if (!got_any) {
			/* The TPM returns nothing for PCRs it does not have: those stay absent. */
			return 0;
		}
	}
}

MB_EXPORT int mb_tpm_read_pcrs(mb_tpm *t, const uint16_t *algs, size_t n_algs, uint32_t pcr_mask,
			       mb_pcr_values *ret, unsigned *ret_calls, mb_error *err)
{
	mb_tpm_bank active[MB_MAX_BANKS];
	uint16_t use[MB_MAX_BANKS];
	uint32_t want[MB_MAX_BANKS];
	size_t n_active = 0, n = 0, i, j;
	unsigned calls = 0, attempt;
	int r;

	r = mb_tpm_banks(t, active, MB_MAX_BANKS, &n_active, err);
	if (r < 0)
		return r;
	if (!algs) {
		for (i = 0; i < n_active; i++) {
			if (!mb_digest_by_alg(active[i].alg))
				continue; /* a bank mboot cannot hash (e.g. a vendor algorithm) */
			use[n] = active[i].alg;
			want[n++] = active[i].pcrs & pcr_mask;
		}
	} else {
		if (n_algs > MB_MAX_BANKS)
			return set_error(err, -EINVAL, "too many banks asked for");
		for (i = 0; i < n_algs; i++) {
			const mb_digest_info *d = mb_digest_by_alg(algs[i]);

			if (!d)
				return set_error(err, -EINVAL, "unknown bank 0x%04x", algs[i]);
			for (j = 0; j < n_active; j++)
				if (active[j].alg == algs[i])
					break;
			if (j == n_active)
				return set_error(err, MB_ERR_TPM, "the TPM has no active %s bank", d->name);
			use[n] = algs[i];
			want[n++] = active[j].pcrs & pcr_mask;
		}
	}

	for (attempt = 0; attempt < PCR_READ_MAX_RESTARTS; attempt++) {
		memset(ret, 0, sizeof(*ret));
		ret->n_banks = n;
		for (i = 0; i < n; i++) {
			ret->banks[i].alg = use[i];
			ret->banks[i].size = mb_digest_by_alg(use[i])->size;
		}
		r = read_pass(t, n, use, want, ret, &calls, err);
		if (r < 0)
			return r;
		if (r == 0) {
			if (ret_calls)
				*ret_calls = calls;
			return 0;
		}
	}
	return set_error(err, MB_ERR_TPM, "PCRs kept changing while being read (%u attempts)", attempt);
}

MB_EXPORT int mb_tpm_extend(mb_tpm *t, uint32_t pcr, const mb_event_digest *digests, size_t n_digests,
			    mb_error *err)
{
	TPML_DIGEST_VALUES v = { 0 };
	TSS2_RC rc;
	size_t i;

	if (pcr >= MB_PCR_COUNT)
		return set_error(err, -EINVAL, "PCR %u out of range", pcr);
	if (n_digests == 0 || n_digests > TPM2_NUM_PCR_BANKS)
		return set_error(err, -EINVAL, "between 1 and %u digests needed, not %zu", TPM2_NUM_PCR_BANKS, n_digests);
	for (i = 0; i < n_digests; i++) {
		const mb_digest_info *d = mb_digest_by_alg(digests[i].alg);

		if (!d || d->size != digests[i].size || d->size > sizeof(v.digests[i].digest))
			return set_error(err, -EINVAL, "digest %zu: unknown algorithm 0x%04x or wrong size %u", i,
				       digests[i].alg, digests[i].size);
		v.digests[i].hashAlg = digests[i].alg;
		memcpy(&v.digests[i].digest, digests[i].bytes, d->size);
	}
	v.count = (UINT32) n_digests;
	rc = sym_Esys_PCR_Extend(t->esys, ESYS_TR_PCR0 + pcr, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &v);
	if (rc != TSS2_RC_SUCCESS) {
		char what[64];

		snprintf(what, sizeof(what), "TPM2_PCR_Extend of PCR %u failed", pcr);
		return tpm_fail(t, err, rc, what);
	}
	return 0;
}

MB_EXPORT int mb_tpm_set_locality(mb_tpm *t, uint8_t locality, mb_error *err)
{
	TSS2_RC rc;

	if (locality > 4)
		return set_error(err, -EINVAL, "locality %u out of range (0-4)", locality);
	rc = Tss2_Tcti_SetLocality(t->tcti, locality);
	if (rc == TSS2_TCTI_RC_NOT_IMPLEMENTED || rc == TSS2_TCTI_RC_NOT_PERMITTED)
		return set_error(err, -EOPNOTSUPP, "TCTI \"%s\" cannot set the locality: %s", t->tcti_conf,
			       sym_Tss2_RC_Decode(rc));
	if (rc != TSS2_RC_SUCCESS)
		return tpm_fail(t, err, rc, "setting the locality failed");
	return 0;
}

MB_EXPORT int mb_tpm_startup_clear(mb_tpm *t, mb_error *err)
{
	TSS2_RC rc = sym_Esys_Startup(t->esys, TPM2_SU_CLEAR);

	if (rc != TSS2_RC_SUCCESS)
		return tpm_fail(t, err, rc, "TPM2_Startup(CLEAR) failed");
	return 0;
}

/* One TPM property (Part 2 §6.13), or an error. */
static int tpm_property(mb_tpm *t, TPM2_PT property, uint32_t *ret, mb_error *err)
{
	TPMS_CAPABILITY_DATA *cap = NULL;
	TPMI_YES_NO more = 0;
	TSS2_RC rc = sym_Esys_GetCapability(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2_CAP_TPM_PROPERTIES,
					property, 1, &more, &cap);
	bool ok;

	if (rc != TSS2_RC_SUCCESS)
		return tpm_fail(t, err, rc, "TPM2_GetCapability(TPM_PROPERTIES) failed");
	ok = cap->capability == TPM2_CAP_TPM_PROPERTIES && cap->data.tpmProperties.count == 1 &&
	     cap->data.tpmProperties.tpmProperty[0].property == property;
	if (ok)
		*ret = cap->data.tpmProperties.tpmProperty[0].value;
	sym_Esys_Free(cap);
	if (!ok)
		return set_error(err, MB_ERR_TPM, "the TPM does not report property 0x%08x", property);
	return 0;
}

MB_EXPORT int mb_tpm_da_status_read(mb_tpm *t, mb_tpm_da_status *ret, mb_error *err)
{
	uint32_t permanent = 0;
	int r;

	memset(ret, 0, sizeof(*ret));
	r = tpm_property(t, TPM2_PT_LOCKOUT_COUNTER, &ret->counter, err);
	if (r == 0)
		r = tpm_property(t, TPM2_PT_MAX_AUTH_FAIL, &ret->max_tries, err);
	if (r == 0)
		r = tpm_property(t, TPM2_PT_LOCKOUT_INTERVAL, &ret->interval, err);
	if (r == 0)
		r = tpm_property(t, TPM2_PT_PERMANENT, &permanent, err);
	if (r == 0)
		ret->in_lockout = (permanent & TPMA_PERMANENT_INLOCKOUT) != 0;
	return r;
}
