/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* TPM2_Quote (TPM 2.0 Library Part 3 §18.4) and the evidence file (docs/attest.md). */
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
#include <mboot/ima.h>
#include "shared/fileio.h"
#include "shared/json-doc.h"
#include "shared/fail.h"
#include "shared/hex.h"
#include "shared/reader.h"
#include "shared/options.h"
#include "tpm-internal.h"
#include "attest-internal.h"

#define QUOTE_MAX_TRIES 4

/* The PCR update counter (TPM2_PCR_Read of no PCR). */
static int pcr_counter(mb_tpm *t, uint32_t *ret, mb_error *err)
{
	TPML_PCR_SELECTION none = { 0 };
	TPML_PCR_SELECTION *sel = NULL;
	TPML_DIGEST *values = NULL;
	TSS2_RC rc = sym_Esys_PCR_Read(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &none, ret, &sel, &values);

	sym_Esys_Free(sel);
	sym_Esys_Free(values);
	if (rc != TSS2_RC_SUCCESS)
		return tpm_fail(t, err, rc, "TPM2_PCR_Read of the update counter failed");
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
		return set_error(err, MB_ERR_TPM, "the quote's pcrDigest has %u bytes", q->pcrDigest.size);
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
		return set_error(err, -ENOMEM, "cannot hash the PCR values");
	return memcmp(digest, q->pcrDigest.buffer, h->size) == 0;
}

static json_t *pcrs_obj(const mb_pcr_values *v)
{
	json_t *root = json_object(), *banks = json_object();
	size_t i;

	if (!root || !banks) {
		json_decref(root);
		json_decref(banks);
		return NULL;
	}
	json_object_set_new(root, "banks", banks);
	for (i = 0; i < mb_pcr_values_n_banks(v); i++) {
		uint16_t alg = mb_pcr_values_bank_alg(v, i);
		const mb_digest_info *d = mb_digest_by_alg(alg);
		json_t *b = json_object();
		uint32_t p;

		if (!d || !b) {
			json_decref(b);
			json_decref(root);
			return NULL;
		}
		json_object_set_new(banks, d->name, b);
		for (p = 0; p < MB_PCR_COUNT; p++) {
			const uint8_t *val = mb_pcr_values_get(v, alg, p);
			char key[4];

			if (!val)
				continue;
			snprintf(key, sizeof(key), "%u", p);
			json_object_set_new(b, key, json_hex(val, d->size));
		}
	}
	return root;
}

static json_t *now_obj(void)
{
	char buf[32];
	time_t now = time(NULL);
	struct tm tm;

	if (!gmtime_r(&now, &tm) || strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		return NULL;
	return json_text(buf);
}

/* The IMA list as the evidence carries it: read now (after the quote), from entry *start on. */
static int read_ima(const mb_quote_input *in, uint8_t **ret, size_t *ret_off, size_t *ret_size, uint64_t *start,
		    mb_error *err)
{
	uint8_t last[20];
	size_t off = 0;
	int r = file_read(in->ima_log_path, MB_IMA_MAX_SIZE, ret, ret_size, err);

	*start = 0;
	*ret_off = 0;
	if (r < 0)
		return prefix_error(err, r, "IMA list");
	if (in->ima_start) {
		r = mb_ima_log_skip(*ret, *ret_size, in->ima_start, &off, last, err);
		/* fewer entries, or another entry where the verifier's last one was: a new boot */
		if (r == -ENOENT || (r >= 0 && in->ima_last && memcmp(last, in->ima_last, 20) != 0))
			r = 0, off = 0;
		else if (r < 0)
			return prefix_error(err, r, "IMA list");
		else
			*start = in->ima_start;
	}
	*ret_off = off;
	if (*ret_size - off > MB_ATTEST_FILE_MAX / 4)
		return set_error(err, -E2BIG, "the IMA list's %zu bytes are too many for evidence of at most %u bytes",
				 *ret_size - off, MB_ATTEST_FILE_MAX);
	return 0;
}

MB_EXPORT int mb_tpm_quote(mb_tpm *t, const char *ak_text, size_t ak_text_size, const mb_quote_input *in_opt,
			   char **ret_evidence, mb_error *err)
{
	mb_quote_input in_buf;
	int take = OPTIONS_TAKE(in_buf, in_opt, err);
	const mb_quote_input *in = &in_buf;
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
	char log_named[65] = ""; /* the log's SHA-256 when it is named instead of carried */
	json_build_mark mark;
	ESYS_TR parent = ESYS_TR_NONE, ak_h = ESYS_TR_NONE;
	bool flush = false;
	mb_pcr_values *v = NULL;
	uint8_t *ima = NULL;
	size_t ima_off = 0, ima_size = 0;
	uint64_t ima_start = 0;
	json_t *root, *q;
	unsigned tries;
	uint16_t hash_alg;
	TSS2_RC rc;
	int r;

	*ret_evidence = NULL;
	if (take < 0)
		return take;
	if ((!in->nonce && in->nonce_size) || in->nonce_size > MB_ATTEST_EXTRA_DATA_MAX)
		return set_error(err, -EINVAL, "the nonce must have 0 to %u bytes, not %zu", MB_ATTEST_EXTRA_DATA_MAX,
			       in->nonce_size);
	if (mask >> MB_PCR_COUNT)
		return set_error(err, -EINVAL, "PCR mask 0x%x names PCRs over %u", mask, MB_PCR_COUNT - 1);
	/* base64 grows by 4/3: keep the evidence readable by a verifier (MB_ATTEST_FILE_MAX). */
	if (in->eventlog_size > MB_ATTEST_FILE_MAX / 2 || in->userspace_log_size > MB_ATTEST_FILE_MAX / 4)
		return set_error(err, -E2BIG, "the logs are too large for evidence of at most %u bytes",
			       MB_ATTEST_FILE_MAX);
	r = attest_ak_file_read(ak_text, ak_text_size, &ak, err);
	if (r < 0)
		return prefix_error(err, r, "AK file");
	hash_alg = ak.pub.publicArea.type == TPM2_ALG_RSA ?
			   ak.pub.publicArea.parameters.rsaDetail.scheme.details.anySig.hashAlg :
			   ak.pub.publicArea.parameters.eccDetail.scheme.details.anySig.hashAlg;
	if (!mb_digest_by_alg(hash_alg))
		return set_error(err, -EBADMSG, "AK file: the AK signs with hash 0x%04x", hash_alg);

	r = mb_tpm_banks(t, active, MB_MAX_BANKS, &n_active, err);
	if (r < 0)
		return r;
	if (!in->algs) {
		for (i = 0; i < n_active; i++)
			if (mb_digest_by_alg(active[i].alg) && (active[i].pcrs & mask))
				use[n_use++] = active[i].alg;
	} else {
		if (in->n_algs == 0 || in->n_algs > MB_MAX_BANKS)
			return set_error(err, -EINVAL, "1 to %u banks can be quoted, not %zu", MB_MAX_BANKS, in->n_algs);
		for (i = 0; i < in->n_algs; i++) {
			const mb_digest_info *d = mb_digest_by_alg(in->algs[i]);

			for (j = 0; j < n_active; j++)
				if (active[j].alg == in->algs[i])
					break;
			if (!d)
				return set_error(err, -EINVAL, "unknown bank 0x%04x", in->algs[i]);
			if (j == n_active)
				return set_error(err, MB_ERR_TPM, "the TPM has no active %s bank", d->name);
			for (j = 0; j < n_use; j++)
				if (use[j] == in->algs[i])
					return set_error(err, -EINVAL, "bank %s asked for twice", d->name);
			use[n_use++] = in->algs[i];
		}
	}
	if (n_use == 0)
		return set_error(err, MB_ERR_TPM, "no active PCR bank mboot knows has any of the PCRs to quote");
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

	r = attest_load_ak(t, &ak, &parent, &flush, &ak_h, err);
	if (r < 0)
		goto out;
	v = mb_pcr_values_new();
	if (!v) {
		r = set_error(err, -ENOMEM, "out of memory");
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

		sym_Esys_Free(quoted);
		sym_Esys_Free(sig);
		quoted = NULL;
		sig = NULL;
		if (tries == QUOTE_MAX_TRIES) {
			r = set_error(err, MB_ERR_TPM, "the PCRs kept changing while being quoted (%u tries)", tries);
			goto out;
		}
		r = pcr_counter(t, &before, err);
		if (r < 0)
			goto out;
		r = mb_tpm_read_pcrs(t, use, n_use, mask, v, NULL, err);
		if (r < 0)
			goto out;
		rc = sym_Esys_Quote(t->esys, ak_h, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &qualifying, &scheme, &sel,
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
		if (sym_Tss2_MU_TPMS_ATTEST_Unmarshal(quoted->attestationData, quoted->size, &off, &att) != TSS2_RC_SUCCESS ||
		    off != quoted->size || att.magic != TPM2_GENERATED_VALUE || att.type != TPM2_ST_ATTEST_QUOTE ||
		    att.extraData.size != in->nonce_size || memcmp(att.extraData.buffer, in->nonce, in->nonce_size) != 0) {
			r = set_error(err, MB_ERR_TPM, "TPM2_Quote returned an attestation that is not a quote of the nonce");
			goto out;
		}
		r = quote_matches(&att.attested.quote, hash_alg, v, err);
		if (r < 0)
			goto out;
		if (r == 1)
			break;
	}
	if (in->ima_log_path && (r = read_ima(in, &ima, &ima_off, &ima_size, &ima_start, err)) < 0)
		goto out;
	rc = sym_Tss2_MU_TPMT_SIGNATURE_Marshal(sig, sig_buf, sizeof(sig_buf), &sig_size);
	if (rc != TSS2_RC_SUCCESS) {
		r = tpm_fail(t, err, rc, "cannot marshal the quote's signature");
		goto out;
	}

	/* The verifier holds this log's judgment: naming it saves sending, reading and hashing it. */
	if (in->eventlog && in->eventlog_known) {
		uint8_t digest[32];

		r = mb_digest(MB_ALG_SHA256, in->eventlog, in->eventlog_size, digest);
		if (r < 0) {
			set_error(err, r, "cannot hash the firmware log");
			goto out;
		}
		if (memcmp(digest, in->eventlog_known, sizeof(digest)) == 0)
			hex_format(digest, sizeof(digest), log_named);
	}

	mark = json_build_begin();
	root = attest_doc_new("mboot-evidence");
	q = json_object();
	if (root && q) {
		json_object_set_new(root, "quote", q);
		json_object_set_new(q, "attest", json_doc_b64_obj(quoted->attestationData, quoted->size));
		json_object_set_new(q, "signature", json_doc_b64_obj(sig_buf, sig_size));
		json_object_set_new(root, "pcrs", pcrs_obj(v));
		json_object_set_new(root, "ak_public", json_doc_b64_obj(ak.pub_raw, ak.pub_raw_size));
		if (log_named[0])
			json_object_set_new(root, "eventlog_sha256", json_text(log_named));
		else
			json_object_set_new(root, "eventlog", in->eventlog ? json_doc_b64_obj(in->eventlog, in->eventlog_size) :
									     json_null());
		json_object_set_new(root, "userspace_log",
				       in->userspace_log ? json_doc_b64_obj(in->userspace_log, in->userspace_log_size) :
							   NULL);
		if (ima) {
			json_object_set_new(root, "ima_log", json_doc_b64_obj(ima + ima_off, ima_size - ima_off));
			json_object_set_new(root, "ima_start", json_integer((json_int_t) ima_start));
		}
		json_object_set_new(root, "created", now_obj());
	} else {
		json_decref(q);
	}
	r = attest_doc_finish(root, mark, ret_evidence, err);
out:
	free(ima);
	mb_pcr_values_free(v);
	sym_Esys_Free(quoted);
	sym_Esys_Free(sig);
	if (ak_h != ESYS_TR_NONE)
		sym_Esys_FlushContext(t->esys, ak_h);
	tpm_drop_parent(t, &parent, flush);
	return r;
}
