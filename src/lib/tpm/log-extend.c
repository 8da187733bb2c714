/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A recorded boot replayed into a TPM, event by event (`mboot log extend`): the banks to
 * extend, the TPM started at the log's StartupLocality, the checks before the first extend.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <mboot/digest.h>
#include <mboot/replay.h>
#include <mboot/tpm.h>
#include "shared/fail.h"
#include "shared/options.h"

static bool alg_in(uint16_t alg, const uint16_t *algs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (algs[i] == alg)
			return true;
	return false;
}

/* Refused unless every PCR is in its reset value for the log's start: a boot already happened. */
static int check_reset_state(const mb_pcr_values *v, uint8_t locality, mb_error *err)
{
	size_t b;

	for (b = 0; b < mb_pcr_values_n_banks(v); b++) {
		uint16_t alg = mb_pcr_values_bank_alg(v, b);
		size_t size = mb_digest_by_alg(alg)->size;
		uint32_t p;

		for (p = 0; p < MB_PCR_COUNT; p++) {
			const uint8_t *value = mb_pcr_values_get(v, alg, p);
			uint8_t want[MB_DIGEST_MAX], zero[MB_DIGEST_MAX] = { 0 };
			char name[8];

			if (!value)
				continue;
			mb_pcr_initial(alg, p, locality, false, want);
			if (memcmp(want, value, size) == 0)
				continue;
			if (p == 0 && locality != 0 && memcmp(zero, value, size) == 0)
				return set_error(err, MB_ERR_LOG_EXTEND_REFUSED,
						 "the log starts at locality %u (StartupLocality event) but the TPM was started "
						 "at locality 0: %s PCR 0 would not match. Reset the TPM (swtpm: 'swtpm_ioctl "
						 "--unix SOCK.ctrl -i') and run 'mboot log extend' again: it then starts the TPM "
						 "at locality %u.", locality, mb_digest_alg_name(alg, name), locality);
			return set_error(err, MB_ERR_LOG_EXTEND_REFUSED,
					 "%s PCR %u is not in reset state: this TPM has already measured something (a real "
					 "boot?); refusing without --force", mb_digest_alg_name(alg, name), p);
		}
	}
	return 0;
}

/* Which banks to extend: every active TPM bank (fail closed), or those asked for. */
static int choose_banks(const mb_event_log *log, const mb_tpm_bank *tpm_banks, size_t n_tpm, const uint16_t *only,
			size_t n_only, uint16_t *use, size_t *n_use, mb_error *err)
{
	const mb_spec_id_alg *log_banks;
	size_t n_log_banks = mb_event_log_banks(log, &log_banks), i, b;
	char name[8];

	*n_use = 0;
	for (b = 0; b < n_tpm; b++) {
		const mb_digest_info *d = mb_digest_by_alg(tpm_banks[b].alg);
		bool in_log = false;

		for (i = 0; i < n_log_banks; i++)
			if (log_banks[i].alg == tpm_banks[b].alg)
				in_log = true;
		if (n_only && !alg_in(tpm_banks[b].alg, only, n_only))
			continue;
		if (!in_log || !d)
			return set_error(err, MB_ERR_LOG_EXTEND_REFUSED,
					 "the TPM has an active %s bank that %s; its PCRs could not be rebuilt. Limit the "
					 "extends with --bank (the log has %zu bank%s), or allocate only the log's banks "
					 "(tpm2_pcrallocate, then a TPM reset)", mb_digest_alg_name(tpm_banks[b].alg, name),
					 d ? "the log does not carry" : "mboot cannot hash", n_log_banks,
					 n_log_banks == 1 ? "" : "s");
		use[(*n_use)++] = tpm_banks[b].alg;
	}
	for (i = 0; i < n_only; i++)
		if (!alg_in(only[i], use, *n_use))
			return set_error(err, MB_ERR_LOG_EXTEND_REFUSED, "--bank %s: the TPM has no active bank of that name",
					 mb_digest_alg_name(only[i], name));
	if (*n_use == 0)
		return set_error(err, MB_ERR_LOG_EXTEND_REFUSED, "the TPM and the log have no bank in common");
	/* every event must carry every bank being extended: checked before the first extend */
	for (i = 0; i < mb_event_log_count(log); i++) {
		const mb_event *ev = mb_event_log_event(log, i);

		if (!mb_event_extends(ev))
			continue;
		for (b = 0; b < *n_use; b++)
			if (!mb_event_digest_for(ev, use[b]))
				return set_error(err, MB_ERR_LOG_EXTEND_REFUSED,
						 "event %u (PCR %u) has no %s digest; nothing extended", ev->number, ev->pcr,
						 mb_digest_alg_name(use[b], name));
	}
	return 0;
}

int mb_tpm_extend_log(const char *tcti, const mb_event_log *log, const mb_log_extend_options *opts_in,
		      mb_log_extend_result *res, mb_error *err)
{
	mb_log_extend_options opts;
	mb_log_extend_result out;
	const uint16_t *only;
	size_t n_only, n_use = 0, n_tpm = 0, i, b;
	uint16_t use[MB_MAX_BANKS];
	mb_tpm_bank tpm_banks[MB_MAX_BANKS];
	mb_replay_info info;
	mb_pcr_values *values;
	mb_tpm *tpm = NULL;
	uint32_t skipped = 0;
	uint8_t loc;
	int rc;

	/* the caller's fields that fit its size; the result's banks storage is the caller's too */
	rc = OPTIONS_TAKE(opts, opts_in, err);
	if (rc < 0 || (rc = OPTIONS_TAKE(out, res, err)) < 0)
		return rc;
	out.started = false;
	out.extended = 0;
	out.n_banks = 0;
	only = opts.n_banks ? opts.banks : NULL;
	n_only = only ? opts.n_banks : 0;
	values = mb_pcr_values_new();
	if (!values) {
		rc = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	/* a replay only to learn the start conditions (StartupLocality, H-CRTM) */
	rc = mb_replay_log(log, SIZE_MAX, values, &info, err);
	if (rc < 0)
		goto out;
	if (info.hcrtm) {
		rc = set_error(err, MB_ERR_LOG_EXTEND_REFUSED,
			       "the log starts with an H-CRTM measurement (EV_EFI_HCRTM_EVENT): PCR 0 begins at 0...04 "
			       "through a hash sequence at locality 4, which extends cannot rebuild; refusing rather than "
			       "leaving a PCR 0 that silently differs");
		goto out;
	}
	loc = info.startup_locality_seen ? info.startup_locality : 0;

	rc = mb_tpm_open(tcti, &tpm, err);
	if (rc < 0)
		goto out;
	rc = mb_tpm_banks(tpm, tpm_banks, MB_MAX_BANKS, &n_tpm, err);
	if (rc < 0) {
		if (mb_tpm_last_rc(tpm) != MB_TPM_RC_INITIALIZE)
			goto out;
		/* The TPM waits for TPM2_Startup: start it the way the logged boot did. Commands go at
		 * locality 0 unless told otherwise: only a non-zero start needs the TCTI's help. */
		if ((loc != 0 && (rc = mb_tpm_set_locality(tpm, loc, err)) < 0) || (rc = mb_tpm_startup_clear(tpm, err)) < 0)
			goto out;
		out.started = true;
		out.startup_locality = loc;
		if ((loc != 0 && (rc = mb_tpm_set_locality(tpm, 0, err)) < 0) ||
		    (rc = mb_tpm_banks(tpm, tpm_banks, MB_MAX_BANKS, &n_tpm, err)) < 0)
			goto out;
	}
	rc = choose_banks(log, tpm_banks, n_tpm, only, n_only, use, &n_use, err);
	if (rc < 0)
		goto out;
	if (!opts.force) {
		rc = mb_tpm_read_pcrs(tpm, use, n_use, (1u << MB_PCR_COUNT) - 1, values, NULL, err);
		if (rc < 0 || (rc = check_reset_state(values, loc, err)) < 0)
			goto out;
	}
	for (i = 0; i < mb_event_log_count(log); i++) {
		const mb_event *ev = mb_event_log_event(log, i);
		mb_event_digest d[MB_MAX_BANKS];
		size_t n = 0;
		uint32_t k;

		if (!mb_event_extends(ev))
			continue;
		for (k = 0; k < ev->n_digests; k++) {
			if (alg_in(ev->digests[k].alg, use, n_use) && n < MB_MAX_BANKS)
				d[n++] = ev->digests[k];
			else
				skipped++;
		}
		rc = mb_tpm_extend(tpm, ev->pcr, d, n, err);
		if (rc < 0) {
			char what[80];

			snprintf(what, sizeof(what), "event %u (PCR %u): stopped after %u events", ev->number, ev->pcr,
				 out.extended);
			prefix_error(err, rc, what);
			goto out;
		}
		out.extended++;
	}
	if (out.banks)
		for (b = 0; b < n_use && b < out.max_banks; b++)
			out.banks[out.n_banks++] = use[b];
	out.skipped_digests = skipped;
	rc = 0;
out:
	if (res)
		options_give(res, &out, sizeof(out));
	mb_pcr_values_free(values);
	mb_tpm_free(tpm);
	return rc;
}
