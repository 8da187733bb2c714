/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_VERIFY_H
#define MBOOT_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <mboot/digest.h>
#include <mboot/eventlog.h>
#include <mboot/replay.h>
#include <mboot/cel.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Check an event log against PCR values (read from a TPM, or from a file): replay the
 * log and compare, PCR by PCR and bank by bank. Pure: no TPM, no I/O.
 *
 * Fail closed: every bank of `actual` must verify for every PCR the log extends.
 * A bank `actual` has but the log does not carry is a failure (MB_PCR_BANK_NOT_IN_LOG),
 * unless the caller limits the check to some banks; the other banks are then
 * MB_PCR_UNVERIFIED, which never counts as verified.
 */
typedef enum mb_pcr_verdict {
	MB_PCR_VERIFIED = 0,     /* the replayed log gives exactly the PCR's value */
	MB_PCR_MISMATCH,         /* it does not (or, PCR 0-7: the log has no event but the value is not reset) */
	MB_PCR_NOT_COVERED,      /* the log extends nothing into this PCR (PCR 8-23): no claim either way */
	MB_PCR_BANK_NOT_IN_LOG,  /* the log extends this PCR but does not carry this bank: cannot verify */
	MB_PCR_UNVERIFIED,       /* bank left out by the caller's bank limit: not checked */
	MB_PCR_NO_VALUE,         /* the log extends this PCR but the values given do not include it */
	MB_PCR_DATA_MISMATCH,    /* the value matches, but an event's data does not hash to its digest:
				  * the data was changed (what the log says happened is not what was measured) */
	MB_PCR_USERSPACE_NOT_ALLOWED, /* the userspace log extends this PCR, which userspace does not measure
				       * into (outside the allowed set, or a PCR the firmware log extends) */
	_MB_PCR_VERDICT_MAX,
} mb_pcr_verdict;

typedef enum mb_verify_quirk {
	MB_QUIRK_NONE = 0,
	/* PCR 5 matches once "Exit Boot Services Invocation" / "... Returned with Success"
	 * EV_EFI_ACTION events are appended: firmware that measured them but did not log them. */
	MB_QUIRK_EXIT_BOOT_SERVICES,
	/* PCR 0 matches with another start value (quirk_locality: 0-4, or 4 for H-CRTM):
	 * the StartupLocality event is missing, wrong, or the TPM was started differently. */
	MB_QUIRK_STARTUP_LOCALITY,
} mb_verify_quirk;

#define MB_VERIFY_MAX_EDIT_EVENTS 1024
/* Extends the single-edit search may spend over a whole verify: it is quadratic in the events
 * of a PCR, and a hostile log must not buy minutes of CPU with it. */
#define MB_VERIFY_EDIT_BUDGET 400000u

/* The PCRs userspace measures into (systemd: 11-15); the default for mb_verify_options. */
#define MB_USERSPACE_PCRS_DEFAULT 0x0000f800u

typedef struct mb_verify_options {
	size_t size; /* MB_OPTIONS_INIT(mb_verify_options): its sizeof (mboot/error.h) */
	const uint16_t *only_banks;  /* check only these banks (the others are UNVERIFIED); n_only 0: all */
	size_t n_only;
	uint32_t userspace_pcrs;     /* bit n: the userspace log may extend PCR n (never a PCR the
				      * firmware log extends); 0: none */
} mb_verify_options;

typedef struct mb_verify_pcr {
	uint16_t alg;
	uint16_t size;
	uint32_t pcr;
	mb_pcr_verdict verdict;
	uint8_t expected[MB_DIGEST_MAX]; /* from the log (valid unless NOT_COVERED/BANK_NOT_IN_LOG/UNVERIFIED) */
	uint8_t actual[MB_DIGEST_MAX];   /* from the TPM or file (valid unless NO_VALUE) */
	uint32_t n_events;               /* firmware log events extended into this PCR */
	uint32_t n_userspace;            /* userspace log records extended into this PCR */
	/*
	 * Events of this PCR whose data does not hash to their digest (mb_event_check_digest
	 * says MB_DIGEST_MISMATCH). Types some real firmware hashes differently from the
	 * spec (EV_EFI_VARIABLE_AUTHORITY, EV_S_CRTM_VERSION) are counted apart, in
	 * n_untrusted_data: their data must not be trusted, but they do not fail the PCR.
	 */
	uint32_t n_bad_digest;
	const uint32_t *bad_digest_events; /* the first n_bad_listed of them by number, kept by the result */
	uint32_t n_bad_listed;             /* <= n_bad_digest: the list is capped */
	uint32_t n_untrusted_data;
	/* MISMATCH explanations. */
	bool prefix_match;               /* the value equals the log replayed up to and including... */
	int64_t last_good_event;         /* ...this event (-1: the value is the PCR's start value) */
	bool last_good_userspace;        /* last_good_event numbers a userspace record, from 0 */
	mb_verify_quirk quirk;
	uint8_t quirk_locality;
	uint32_t quirk_events;           /* EXIT_BOOT_SERVICES: 1 invocation, 2 success, 3 both appended */
	/*
	 * Single edits of the log that would make it match (tried for PCRs with at most
	 * MB_VERIFY_MAX_EDIT_EVENTS events): an event that never reached the TPM (added
	 * to the log), or two neighbouring events of this PCR in the other order.
	 */
	int64_t extra_event;             /* -1: none found */
	int64_t swapped_event;           /* -1: none found; else this event and the next of this PCR */
	int64_t swapped_next;
	bool edit_search_capped;         /* the search stopped at MB_VERIFY_EDIT_BUDGET: none found may be wrong */
} mb_verify_pcr;

/*
 * The verdicts of mb_verify_log, one mb_verify_pcr per (bank, PCR) checked. Opaque, so that
 * the number of banks and PCRs is not part of the ABI: read it with the accessors below.
 */
typedef struct mb_verify_result mb_verify_result;

/*
 * Verify the firmware log, followed by the userspace measurement log (may be NULL;
 * its records are extended after every firmware event), against actual.
 * opts NULL: every bank of actual must verify, userspace records only in
 * MB_USERSPACE_PCRS_DEFAULT. A PCR one of whose extends (event or record) lacks a digest
 * of a bank is BANK_NOT_IN_LOG in that bank; a PCR the log extends but actual lacks is
 * NO_VALUE, a failure (a partial set of values never verifies the rest of the log).
 * Returns 0 whatever the verdict, with *ret a new result (read mb_verify_result_ok; free it with
 * mb_verify_result_free), or a negative errno when the replay itself fails (*ret is then NULL).
 */
MB_EXPORT int mb_verify_log(const mb_event_log *log, const mb_cel_log *userspace, const mb_pcr_values *actual,
			    const mb_verify_options *opts, mb_verify_result **ret, mb_error *err) MB_WUR;
MB_EXPORT void mb_verify_result_free(mb_verify_result *r);

/* Nothing failed and at least one PCR verified: the log is what the PCR values say happened. */
MB_EXPORT bool mb_verify_result_ok(const mb_verify_result *r);
/* How many entries are VERIFIED; how many failed (any verdict but VERIFIED, NOT_COVERED, UNVERIFIED). */
MB_EXPORT uint32_t mb_verify_result_n_verified(const mb_verify_result *r);
MB_EXPORT uint32_t mb_verify_result_n_failed(const mb_verify_result *r);
/* Bit n: the firmware or the userspace log extends PCR n (in some bank). */
MB_EXPORT uint32_t mb_verify_result_log_pcrs(const mb_verify_result *r);
/* What the replay of the firmware log found (StartupLocality, H-CRTM, counts). */
MB_EXPORT const mb_replay_info *mb_verify_result_replay_info(const mb_verify_result *r);
/* The entries, i < mb_verify_result_count(r): bank by bank of the values given, PCR 0 upwards in each. */
MB_EXPORT size_t mb_verify_result_count(const mb_verify_result *r);
MB_EXPORT const mb_verify_pcr *mb_verify_result_entry(const mb_verify_result *r, size_t i);

/*
 * The bank a policy judges the log by (mb_policy_check): the first of sha256, sha384, sha512,
 * sha1, sm3_256 in which at least one PCR verified and none failed; 0 when there is none.
 * `mboot verify --policy` and `mboot attest verify` use the same.
 */
MB_EXPORT uint16_t mb_verify_result_policy_bank(const mb_verify_result *r);

/*
 * The entry of ret for (alg, pcr), or NULL when the log does not extend the PCR and actual has
 * no value for it.
 */
MB_EXPORT const mb_verify_pcr *mb_verify_result_pcr(const mb_verify_result *ret, uint16_t alg, uint32_t pcr);

/*
 * Does the log account for this PCR's value in this bank? VERIFIED, or the log extends
 * nothing into it and the value is the PCR's reset value (an empty replay gives it).
 * What a policy may judge, and nothing else.
 */
MB_EXPORT bool mb_verify_pcr_trusted(const mb_verify_pcr *r);

/* "verified", "mismatch", "not-covered", "bank-not-in-log", "unverified", "no-value", "data-mismatch",
 * "userspace-not-allowed". */
MB_EXPORT const char *mb_pcr_verdict_name(mb_pcr_verdict v);

/* mboot/policy.h (which includes this header) */
struct mb_policy;
struct mb_policy_result;

/*
 * The verdict as JSON, what `mboot verify --json` prints (docs/verify.md, "JSON"): "verified" (the
 * log and, with a policy, the policy), "log_verified", "source" (where the PCR values came from:
 * a file's name, "tpm"), "pcrs_verified", "pcrs_failed", "pcrs" (one object an entry of res), and
 * with a policy "policy". policy NULL: no policy was asked for (checked must be NULL). policy with
 * checked, the result of mb_policy_check() on res (the log and userspace log it judged must be
 * alive): {"checked": true, "ok", "bank", ["firmware_set"], "pcrs", "not_governed",
 * "violations"}. policy without checked: the policy was not judged, {"checked": false, "reason"}
 * (the log did not verify, so its events prove nothing; or the check failed), and "verified" is
 * false. Compact (one line) or pretty (docs/json.md); no final newline. Returns the text (caller
 * frees), or NULL: errno EINVAL (no res or source, checked without policy) or ENOMEM (never a
 * document that lost a member).
 */
MB_EXPORT char *mb_verify_result_to_json(const mb_verify_result *res, const char *source,
					 const struct mb_policy *policy, const struct mb_policy_result *checked,
					 bool pretty);
/*
 * The same with the IMA list's verdict (`mboot verify --ima-log`, docs/verify.md, "IMA"):
 * ima_asked false gives mb_verify_result_to_json's document. ima_asked: "ima" is the result of
 * mb_policy_check_ima (on the same PCR values), {"checked": true, "ok", "entries", "allowed",
 * "excluded", "unlisted", "signed", "pcr10": [{"bank", "match"}], "boot_aggregate", "violations":
 * [{"entry", "offset", "path", "digest", "reason"}]}, or with ima NULL {"checked": false,
 * "reason"}; "verified" holds only when it is ok.
 */
struct mb_ima_policy_result;
MB_EXPORT char *mb_verify_result_to_json_ima(const mb_verify_result *res, const char *source,
					     const struct mb_policy *policy, const struct mb_policy_result *checked,
					     bool ima_asked, const struct mb_ima_policy_result *ima, bool pretty);

#ifdef __cplusplus
}
#endif
#endif
