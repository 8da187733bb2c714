/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_ATTEST_VERIFY_INTERNAL_H
#define MB_ATTEST_VERIFY_INTERNAL_H
/* The verifier's evidence check (evidence.c, verify-evidence.c, verify-logs.c, verdict.c). Internal. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mboot/attest.h>
#include <mboot/cel.h>
#include <mboot/eventlog.h>
#include <mboot/replay.h>

#include <openssl/evp.h>
#include "shared/json.h"

#include "lib/attest/quote-decode.h"
#include "lib/attest/tpm-public.h"

/* Caps of the evidence's binary fields (the logs have their own). */
#define EVIDENCE_AK_PUBLIC_MAX 2048
/* Reasons kept in a verdict (one per failing PCR or policy violation); the rest are counted. */
#define VERDICT_REASONS_MAX 64

/* Evidence as read (docs/attest.md), nothing checked but its shape. */
typedef struct attest_evidence {
	uint8_t *attest;
	size_t attest_size;
	uint8_t *signature;
	size_t signature_size;
	uint8_t *ak_public;
	size_t ak_public_size;
	uint8_t *eventlog;        /* NULL: none carried */
	size_t eventlog_size;
	/* the firmware log's SHA-256: named ("eventlog_sha256") instead of carried, or computed
	 * from the carried log when it was decoded */
	bool eventlog_named, has_eventlog_sha256;
	uint8_t eventlog_sha256[32];
	uint8_t *userspace_log;   /* NULL: none carried */
	size_t userspace_log_size;
	mb_pcr_values *pcrs;      /* the values carried */
	quote_attest quote;
	quote_signature sig;
	json_t *root;             /* the document (the logs' base64 in it) */
	bool logs_decoded;
	bool ima_carried;         /* "ima_log" is there (it may hold no entry) */
	uint64_t ima_start;       /* "ima_start": entries of the kernel's list before the carried ones */
	uint8_t *ima_log;         /* decoded by attest_judge_ima */
	size_t ima_log_size;
} attest_evidence;

/* The evidence read; the logs decoded too (attest_evidence_parse) or later
 * (attest_evidence_parse_lazy, then attest_evidence_decode_logs when they are needed). */
int attest_evidence_parse(const char *text, size_t size, attest_evidence *ret, mb_error *err);
int attest_evidence_parse_lazy(const char *text, size_t size, attest_evidence *ret, mb_error *err);
int attest_evidence_decode_logs(attest_evidence *ev, mb_error *err);
/* A log's base64 text as carried ("eventlog", "userspace_log"), NULL when the evidence has none. */
const char *attest_evidence_log_text(const attest_evidence *ev, const char *key, size_t *ret_len);
void attest_evidence_done(attest_evidence *e);

/* The machine record: the enrolled AK, decoded and imported into OpenSSL once. */
typedef struct attest_machine {
	uint8_t *ak_public;
	size_t ak_public_size;
	uint8_t ak_name[68];
	size_t ak_name_size;
	tpm_public ak;
	/* NULL when OpenSSL could not take it (key_error, key_err say why): an error only once a
	 * signature is to be checked with it, as before the record was parsed ahead */
	EVP_PKEY *key;
	int key_error;
	mb_error key_err;
} attest_machine;

struct mb_attest_machine {
	attest_machine m;
};

int attest_machine_parse(const char *text, size_t size, attest_machine *ret, mb_error *err);
void attest_machine_done(attest_machine *m);

/* ---- the IMA list's state between evidences of one boot (verify-ima.c) ---- */

#define IMA_STATE_LINES 8 /* earlier violations of the boot kept word for word; the rest counted */

typedef struct ima_state_line {
	mb_attest_reason reason;
	char *detail;
} ima_state_line;

typedef struct ima_state {
	uint16_t bank;            /* the bank PCR 10 is replayed in */
	int rule;                 /* mb_ima_match: RECOMPUTED or PADDED */
	uint64_t entries;         /* entries of the list judged: the quoted PCR 10 covered them */
	uint8_t pcr10[MB_DIGEST_MAX]; /* PCR 10 after them */
	uint8_t last[20];         /* the last one's template hash (SHA-1: the binary list's) */
	int aggregate;            /* mb_ima_aggregate of entry 0 */
	uint64_t n_problems;      /* violations and unverified entries so far in this boot */
	size_t n_lines;
	ima_state_line lines[IMA_STATE_LINES];
} ima_state;

void ima_state_done(ima_state *s);

/* ---- the verdict (verdict.c) ---- */

typedef struct verdict_reason {
	mb_attest_reason reason;
	char *detail;
} verdict_reason;

typedef struct verdict_pcr {
	uint16_t alg;
	uint32_t pcr;
	mb_pcr_verdict verdict;
	uint32_t n_events, n_userspace;
} verdict_pcr;

typedef struct verdict_violation {
	uint32_t pcr;
	int64_t event;            /* firmware event number, or -1 */
	int64_t record;           /* userspace record index, or -1 */
	uint32_t type;
	char *text, *reason;
	char **closest_rules;     /* copied from mb_policy_violation */
	size_t n_closest_rules;
} verdict_violation;

typedef struct verdict_change {
	int kind;                 /* mb_diff_kind */
	uint32_t pcr;
	int64_t before, after;    /* event numbers in the baseline's and this log, or -1 */
	uint32_t type;
} verdict_change;

struct mb_attest_verdict {
	size_t n_reasons, n_reasons_dropped;
	verdict_reason reasons[VERDICT_REASONS_MAX];

	bool quote_decoded;
	quote_attest quote;
	uint16_t sig_alg, sig_hash;

	bool logs_checked, logs_ok;
	size_t n_pcrs;
	verdict_pcr *pcrs;
	uint32_t n_verified, n_failed;

	bool policy_checked, policy_ok;
	uint16_t policy_bank;
	uint32_t policy_ok_pcrs, policy_violated_pcrs;
	bool policy_has_sets;
	char *firmware_set;       /* the firmware set the PCRs matched (mb_policy_result), or NULL */
	size_t n_violations;
	verdict_violation *violations;

	bool has_baseline;
	uint64_t base_firmware_version, base_clock;
	uint32_t base_reset_count, base_restart_count;
	bool base_logs_compared;
	uint32_t base_pcrs_moved;
	size_t n_changes;
	verdict_change *changes;

	int eventlog_form;        /* 0: no firmware log; 1: carried; 2: named by its SHA-256 */
	uint8_t eventlog_sha256[32];
	bool has_boot_key;        /* the logs were judged (or taken from a verdict of this key) */
	uint8_t boot_key[32];
	/* the reasons of the logs' judgment, which a later evidence of this boot may take (the IMA
	 * list's come after them: they are its own) */
	size_t n_judgment_reasons, n_judgment_dropped;

	/* the IMA list (verify-ima.c) */
	bool ima_carried, ima_judged;
	uint64_t ima_start, ima_new, ima_pending;
	size_t ima_allowed, ima_excluded, ima_signed, ima_unlisted;
	uint64_t ima_violations;  /* this evidence's */
	bool ima_has_state;
	ima_state ima;            /* after this evidence */
	char *ima_state_text;     /* mb_attest_verdict_ima_state's */
};

/* Add a reason with a printf detail; -ENOMEM only. */
int verdict_add(mb_attest_verdict *v, mb_attest_reason r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The logs' judgment of src (reasons, per-PCR results, policy result, violations) copied into v,
 * which has none yet; -ENOMEM only. */
int verdict_copy_judgment(mb_attest_verdict *v, const mb_attest_verdict *src);

/*
 * Replay the logs against the quoted values and judge them with the policy (verify-logs.c): every
 * use of mb_verify_log and mb_policy_check is there. Fills v's logs and policy parts and adds
 * LOG_NOT_VERIFIED / POLICY_VIOLATED; a negative errno only when the logs are malformed or on OOM.
 */
int attest_judge_logs(mb_attest_verdict *v, const mb_event_log *log, const mb_cel_log *us,
		      const mb_pcr_values *quoted, const mb_attest_verify_options *opts, mb_error *err);

/*
 * The IMA list the evidence carries (ev->ima_carried), replayed against the quoted PCR 10 from the
 * state of opts->ima_state (or from zero when ima_start is 0) and judged by the policy's "ima"
 * section; the verdict's IMA part, its reasons and the state for the next evidence. Without a list,
 * a policy with an "ima" section is not met. A negative errno for a malformed list or state or OOM.
 */
int attest_judge_ima(mb_attest_verdict *v, attest_evidence *ev, const mb_pcr_values *quoted,
		     const mb_attest_verify_options *opts, mb_error *err);
/* The verdict's "ima" object (verify-ima.c). */
json_t *attest_ima_json(const mb_attest_verdict *v);

#endif
