/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The only place the luks part touches the sealing API (mb_sealed and how a secret is
 * sealed): the rest of src/lib/luks sees a sealed key as the JSON text of a sealed file
 * without its event log. Internal.
 */
#ifndef MB_LUKS_SEAL_H
#define MB_LUKS_SEAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <mboot/luks.h>
#include <mboot/tpm.h>

/* What a sealed file says about how it unseals (for list and luksDump). */
typedef struct luks_sealed_info {
	const char *policy;   /* "pcr", "or" or "authorize" (static) */
	uint16_t bank;        /* 0 for "authorize" */
	uint32_t pcrs;        /* the sealed PCRs; for "or" those of the boot of sealing */
	size_t n_branches;    /* "or" only */
	uint8_t auth_key_name[MB_TPM_NAME_SIZE]; /* "authorize" only */
	bool has_events;      /* an event summary is kept: */
	size_t n_events;      /* its events */
	uint32_t events_pcrs; /* the PCRs it summarises */
	bool events_bad;      /* luks_sealed_check failed on the summary, not the sealed file */
	bool pin;             /* sealed with a PIN (TPM + PIN) */
} luks_sealed_info;

/*
 * Seal key as `mboot seal` does, to what opt says (PCR values or a signing key; no event
 * log is kept), and return the sealed file's JSON text (*ret_json, malloc'd) and, when opt
 * gives the event log, its event summary in base64 (*ret_events, malloc'd; else NULL).
 */
int luks_seal_key(mb_tpm *t, const uint8_t *key, size_t key_size, const mb_luks_enroll_options *opt,
		  char **ret_json, char **ret_events, mb_error *err);
/*
 * Check a sealed file's text and its event summary (summary NULL: none; both untrusted:
 * mb_sealed_parse's and mb_sealed_set_event_summary's checks) and say how it unseals.
 */
int luks_sealed_check(const char *json, size_t size, const uint8_t *summary, size_t summary_size,
		      luks_sealed_info *info, mb_error *err);
/* mb_tpm_unseal_sealed of the sealed file's text, with its event summary (may be NULL), into out. */
int luks_unseal_key(mb_tpm *t, const char *json, size_t size, const uint8_t *summary, size_t summary_size,
		    const mb_unseal_options *opt, uint8_t *out, size_t *out_size, mb_unseal_explanation **explanation,
		    mb_error *err);
/*
 * Seal key again as `mboot reseal` does (mb_reseal_options_n): the bank, PCRs and parent of the
 * sealed file old_json (a PCR policy: the caller has refused "authorize"), to the TPM's values
 * now OR each predicted[i]'s values of that bank (n_predicted 0: now only; at most 7, identical
 * states once). *ret_json: the new sealed file's text (malloc'd); *ret_or: whether it is a
 * PolicyOR (a prediction differs).
 */
int luks_reseal_key(mb_tpm *t, const char *old_json, size_t old_size, const uint8_t *key, size_t key_size,
		    const mb_pcr_values *const *predicted, size_t n_predicted,
		    const mb_unseal_options *opt, char **ret_json, bool *ret_or,
		    mb_error *err);

#endif
