/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_POLICY_H
#define MBOOT_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <mboot/artifacts.h>
#include <mboot/cel.h>
#include <mboot/eventlog.h>
#include <mboot/ima.h>
#include <mboot/predict.h>
#include <mboot/replay.h>
#include <mboot/verify.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A policy says what a good boot is (docs/policy.md): per PCR, either exact values per bank
 * (firmware PCRs, taken from a known-good machine) or event rules. A rule matches an event by
 * type and either a set of allowed digests or an anchored PCRE2 regular expression over the
 * event's text, which must also hash to the logged digest. Every event of a governed PCR must
 * match a rule; PCRs the policy does not mention are reported, not judged.
 */
typedef struct mb_policy mb_policy;

#define MB_POLICY_MAX_SIZE (64u << 20)   /* policy file (an IMA allowlist of a distribution is tens of MiB) */
#define MB_POLICY_MAX_RULES 4096         /* rules in one PCR */
#define MB_POLICY_MAX_DIGESTS 65536      /* allowed digests in one rule */
#define MB_POLICY_MAX_REGEX 65536        /* bytes of one pattern */
#define MB_POLICY_MAX_FIRMWARE_SETS 256  /* firmware value sets (version 2) */
#define MB_POLICY_MAX_SET_NAME 128       /* bytes of a firmware set's name */
/* PCRE2 match steps one check may spend (an upper bound, charged per match): past it the check
 * stops matching and fails, so a hostile log cannot buy hours of CPU (PITFALLS #36). */
#define MB_POLICY_STEP_BUDGET 10000000u
/* PCRE2 match steps loading one policy may spend probing its regular expressions for
 * catastrophic backtracking, all of them together: a pattern it cannot judge is refused, so
 * no policy, however large, takes long to load. Plain-text patterns cost nothing. */
#define MB_POLICY_LOAD_BUDGET 20000000u
/* and CPU time: steps of lookarounds and possessive repeats may each scan a whole text */
#define MB_POLICY_LOAD_CPU_MS 1000u

/* Parse a policy from JSON text; errors name the line and the field (err->message). PCRE2 is
 * loaded (dlopen) by the first call: -EOPNOTSUPP, the package named, when it cannot be. */
MB_EXPORT int mb_policy_parse(const char *text, size_t size, mb_policy **ret, mb_error *err) MB_WUR;
MB_EXPORT void mb_policy_free(mb_policy *p);
/* PCRs the policy governs (bit n for PCR n). */
MB_EXPORT uint32_t mb_policy_pcrs(const mb_policy *p);
/* The policy file's version (1 or 2). */
MB_EXPORT unsigned mb_policy_version(const mb_policy *p);
/* The policy's "min_bank" (docs/policy.md): the TCG algorithm id of the weakest bank a quote
 * may be judged in (mb_attest_verify; a stronger bank also does), 0 when the policy sets none. */
MB_EXPORT uint16_t mb_policy_min_bank(const mb_policy *p);
/* Firmware value sets (docs/policy.md, "Firmware releases"): how many, each one's name, and
 * the PCRs each gives (the same for all; 0 when the policy has no sets). */
MB_EXPORT size_t mb_policy_n_firmware_sets(const mb_policy *p);
MB_EXPORT const char *mb_policy_firmware_set_name(const mb_policy *p, size_t i);
MB_EXPORT uint32_t mb_policy_firmware_pcrs(const mb_policy *p);

/*
 * The "ima" section (docs/policy.md, "IMA"): what may run after the boot, judged on the kernel's
 * IMA runtime measurement list. An allowlist of file digests by path (a hash table built at
 * load), paths excluded by regular expression (anchored at both ends), ima-buf entries allowed
 * by name and digest, X.509 certificates whose keys sign files ("keys": an ima-sig entry whose
 * signature, or an ima-modsig entry whose appended signature, one verifies is allowed), and what a file the allowlist does not name means
 * ("unlisted": "violation", the default, or "ignore").
 */
#define MB_POLICY_MAX_IMA_PATHS 2000000   /* paths of the allowlist (and ima-buf names) */
#define MB_POLICY_MAX_IMA_DIGESTS 256     /* allowed digests of one path */
#define MB_POLICY_MAX_IMA_PATH 4096       /* bytes of one path */
#define MB_POLICY_MAX_IMA_EXCLUDES 4096   /* excluded-path patterns */
MB_EXPORT bool mb_policy_has_ima(const mb_policy *p);

typedef struct mb_ima_violation {
	size_t entry;     /* its index in the list, SIZE_MAX for the list as a whole (PCR 10, boot_aggregate) */
	uint64_t offset;  /* of the entry in the list */
	char *path;       /* the file path or ima-buf name, NULL when none */
	char *digest;     /* "alg:hex" of the file (or buffer), NULL when none */
	char *reason;     /* one line */
} mb_ima_violation;

typedef struct mb_ima_policy_bank {
	uint16_t alg;
	mb_ima_match match;  /* PCR 10 of the values against the list's replay */
} mb_ima_policy_bank;

typedef struct mb_ima_policy_result {
	size_t n_entries;
	size_t n_allowed;     /* files and buffers the policy allows */
	size_t n_excluded;    /* files whose path an "excludes" pattern matches */
	size_t n_unlisted;    /* files the allowlist does not name, with "unlisted": "ignore" */
	size_t n_signed;      /* ima-sig (ima-modsig) entries whose (appended) signature a key of "keys" verifies */
	bool pcrs_checked;    /* PCR values were given: PCR 10 and boot_aggregate compared */
	size_t n_banks;       /* the banks of the values with a PCR 10 */
	mb_ima_policy_bank banks[MB_MAX_BANKS];
	mb_ima_aggregate aggregate;
	size_t n_violations;
	mb_ima_violation *violations;
} mb_ima_policy_result;

/*
 * Judge an IMA list against the policy's "ima" section (-EINVAL, said, when it has none; p NULL:
 * no policy, only the list's consistency and, with actual, its PCRs are judged). Every
 * entry whose template hash is its fields' hash is judged: its path's allowed digests hold its
 * digest (allowed), else its ima-sig signature or ima-modsig's appended PKCS#7 verifies with a
 * key of "keys" (signed), else an
 * "excludes" pattern matches its path (excluded), else a violation
 * naming the path and digest (and whether the path is allowed with other digests); an entry
 * whose template hash is not its fields', a measurement violation (all-zero template hash) and
 * a template without a path are violations. The first entry, boot_aggregate, is judged by
 * actual (NULL: not compared): with values, PCR 10 of every bank they hold must be the list's
 * replay (either kernel rule, mb_ima_pcr_compare), at least one bank, and boot_aggregate must
 * match PCRs 0-9; each miss a violation. Regular expressions share MB_POLICY_STEP_BUDGET per
 * 1,000 entries. 0 (the verdict in *ret, mb_ima_policy_result_done frees it) or negative errno.
 */
MB_EXPORT int mb_policy_check_ima(const mb_policy *p, const mb_ima_log *log, const mb_pcr_values *actual,
				  mb_ima_policy_result *ret, mb_error *err) MB_WUR;
/*
 * mb_policy_check_ima of entries [0, n) of log alone, with no PCR values: a list carried from entry
 * `first` of the kernel's on (attestation evidence sends only the entries a verifier has not
 * judged), so that violations are numbered as in the whole list and only entry 0 is taken as
 * boot_aggregate. n at most the list's count.
 */
MB_EXPORT int mb_policy_check_ima_entries(const mb_policy *p, const mb_ima_log *log, size_t n, uint64_t first,
					  mb_ima_policy_result *ret, mb_error *err) MB_WUR;
MB_EXPORT bool mb_ima_policy_result_ok(const mb_ima_policy_result *r);
MB_EXPORT void mb_ima_policy_result_done(mb_ima_policy_result *r);

/*
 * An "ima" section from a known-good IMA list (log: each file path with its digests, each
 * ima-buf name with its digests; boot_aggregate left out) and/or Keylime's runtime policy JSON
 * (keylime, untrusted: "digests", "excludes" (Python re.match patterns: anchored at the start
 * only, so each is written "(?:pattern)[\s\S]*"), "keyrings" and "ima-buf" as ima-buf names;
 * "meta" and "release" read, other fields refused), merged. base: a policy's JSON text to add
 * the section to (one without an "ima" section), or NULL: a version-1 policy governing no PCR.
 * The policy text (caller frees) in *ret_json; it loads with mb_policy_parse.
 */
MB_EXPORT int mb_policy_generate_ima(const char *base, size_t base_size, const mb_ima_log *log, const char *keylime,
				     size_t keylime_size, char **ret_json, mb_error *err) MB_WUR;

typedef enum mb_policy_verdict {
	MB_POLICY_PCR_OK = 0,
	MB_POLICY_PCR_VIOLATED,
	MB_POLICY_PCR_NOT_GOVERNED,
} mb_policy_verdict;

/* "ok", "violated" or "not-governed": the name `verify --policy` and its JSON give a PCR. */
MB_EXPORT const char *mb_policy_verdict_name(mb_policy_verdict v);

typedef struct mb_policy_violation {
	uint32_t pcr;
	const mb_event *event;     /* NULL for a PCR-level violation (value, missing required event)... */
	const mb_cel_record *record; /* ...or a userspace record's */
	size_t record_index;       /* its number in the userspace log, from 0 */
	char *reason;              /* what was wrong, one line */
	/* The rules of the event's type in its PCR (at most 4), each "name" or "name (text ~
	 * /pattern/)": what it came closest to. NULL (and 0) when none, or not an event. */
	char **closest_rules;
	size_t n_closest_rules;
} mb_policy_violation;

typedef struct mb_policy_result {
	uint16_t bank;                       /* the bank whose digests were judged */
	mb_policy_verdict pcr[MB_PCR_COUNT];
	size_t n_violations;
	mb_policy_violation *violations;
	uint32_t events_matched;
	/* The name of the firmware set whose values all the firmware PCRs hold, or NULL (no sets,
	 * or none matched). Freed by mb_policy_result_done. */
	char *firmware_set;
} mb_policy_result;

/*
 * Judge the events of a log (and of the userspace log, may be NULL) that mb_verify_log()
 * checked against the TPM's values (`verified`): only `bank`'s digests are used, never another
 * bank's (PITFALLS #7), and a governed PCR is judged only if the log accounts for its value in
 * that bank (mb_verify_pcr_trusted): else it is violated, whatever its events say. GRUB's
 * strings are judged by the kind GRUB measured them as, not by their (undigested) label.
 * Regular expressions share one step budget per check. Returns 0 (see result for the
 * verdict) or a negative errno on an internal failure.
 */
MB_EXPORT int mb_policy_check(const mb_policy *p, const mb_event_log *log, const mb_cel_log *userspace,
			      const mb_verify_result *verified, uint16_t bank, mb_policy_result *ret,
			      mb_error *err) MB_WUR;
MB_EXPORT bool mb_policy_result_ok(const mb_policy_result *r);
MB_EXPORT void mb_policy_result_done(mb_policy_result *r);

/* The event's text for text rules: its data as UTF-8 (UTF-16 converted, trailing NULs dropped);
 * NULL when the data is not text (errno 0) or out of memory (errno ENOMEM). Caller frees. */
MB_EXPORT char *mb_event_text(const mb_event *ev);

/*
 * Generate a policy (JSON text, caller frees) from a log known to be good: exact values for
 * firmware_pcrs, event rules for the other PCRs of `pcrs` the log touches.
 */
MB_EXPORT int mb_policy_generate_from_log(const mb_event_log *log, uint32_t pcrs, uint32_t firmware_pcrs,
					  char **ret_json, mb_error *err) MB_WUR;

/*
 * Generate a policy from release artifacts (docs/policy.md, "From release artifacts"):
 * PCR 9 digest rules for the files GRUB reads (kernel, initrd, grub.cfg) and the Linux EFI
 * stub's initrd tag; PCR 8 text rules for the kernel-loading commands and the
 * kernel_cmdline; optional extra text rules (allow_text). With a known-good log, the
 * firmware PCRs' values come from it, and the GRUB commands and files that do not load the
 * kernel or initrd are carried over from it (GRUB measures commands after variable
 * expansion, which no config file can tell). EFI binaries for PCR 4 are passed as
 * precomputed Authenticode digests (boot->efi[].digest).
 */
typedef struct mb_policy_artifacts {
	size_t size; /* MB_OPTIONS_INIT(mb_policy_artifacts): its sizeof (mboot/error.h) */
	/* kernel and initrd required, and cmdline or grub_cfg (efi: digest); or uki. NULL: none of
	 * them, refused as an all-unset one is. Read during the call; its size is checked as this
	 * struct's. */
	const mb_boot_artifacts *boot;
	const char *const *allow_text;    /* extra PCR 8 EV_IPL text rules (regular expressions) */
	size_t n_allow_text;
	const mb_event_log *log;          /* known-good log, or NULL */
	uint32_t firmware_pcrs;           /* exact values from log (default: 0-7, less 4 with efi) */
} mb_policy_artifacts;

MB_EXPORT int mb_policy_generate_from_artifacts(const mb_policy_artifacts *a, char **ret_json, mb_error *err) MB_WUR;

/*
 * A policy (JSON text, caller frees) allowing one initrd in PCR 9, one rule per way its bytes
 * get there, as mb_policy_generate_from_artifacts writes them: GRUB's EV_IPL of the file it read
 * (required) and the EFI stub's EV_EVENT_TAG "Linux initrd" (LoadFile2 only: not required),
 * each with the file's digests (as stored) and its name in the description (`mboot initramfs
 * pack --policy-rule`). name: the file's path or name (its last component is used).
 */
MB_EXPORT int mb_policy_generate_initrd(const char *name, const mb_event_digest *digests, size_t n_digests,
					char **ret_json, mb_error *err) MB_WUR;

/*
 * The known-good log of the boot after a Secure Boot or MOK update (docs/policy.md, "After a
 * Secure Boot update"), to generate that boot's policy from before the update is rolled out:
 * log with each of vars (n_vars, at most 32) applied as mb_predict applies it, PCR 7's db, dbx,
 * ... and SbatLevel events and PCR 14's MOK events recomputed. Refused with
 * MB_ERR_POLICY_UNPREDICTABLE, the message naming each PCR and why, when a PCR of that boot
 * cannot be predicted (a dbx that revokes what verified a booted binary, a db without the entry
 * that verified it, ...) or a variable has no event in log (what it changes is unknown): a
 * policy holds no guessed value. Other negative errno on bad input, as mb_predict (an
 * unreadable or malformed file, a name mboot does not predict). *ret_log: caller frees.
 */
MB_EXPORT int mb_policy_log_after_update(const mb_event_log *log, const mb_efi_var_update *vars, size_t n_vars,
					 mb_event_log **ret_log, mb_error *err) MB_WUR;

/*
 * Add the firmware values a known-good log replays to (a machine after a firmware update) as
 * a new firmware set of a policy (JSON text): the PCRs of the policy's sets, or of its PCR
 * values (a version-1 policy, whose values become the first set, "firmware-1", and which is
 * written as version 2). pcrs (0: those) must name the same PCRs, or with a version-1 policy
 * some of them. name NULL: "firmware-N". Refused: a policy that does not load or a signature
 * file (mboot policy sign: re-sign instead) (-EBADMSG), a set with this name or these values
 * already (-EEXIST), other PCRs than the sets' (-EINVAL), the most sets already (-E2BIG). The
 * new policy text (caller frees) is in *ret_json.
 */
MB_EXPORT int mb_policy_add_firmware(const char *policy_text, size_t size, const mb_event_log *log, uint32_t pcrs,
				     const char *name, char **ret_json, mb_error *err) MB_WUR;

#ifdef __cplusplus
}
#endif
#endif
