/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_TPM_H
#define MBOOT_TPM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <mboot/error.h>
#include <mboot/eventlog.h>
#include <mboot/replay.h>
#include <mboot/seal.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A connection to a TPM 2.0 through tpm2-tss (ESAPI over a TCTI). Only this part
 * of mboot talks to the TPM; everything else works on mb_pcr_values.
 *
 * Every function here returns 0 or a negative code. A failure reported by the TPM
 * or by the TSS (including "cannot reach the TPM") is MB_ERR_TPM, and err->message
 * holds Tss2_RC_Decode's words and the response code, so a caller can tell a TPM
 * failure (exit 3 in the tool) from bad arguments (-EINVAL) or -ENOMEM.
 *
 * tpm2-tss is loaded (dlopen) by the first mb_tpm_open, or the first mb_tpm_key_public,
 * mb_tpm_key_name or mb_tpm_check_sealed_blobs, not when libmboot loads: those return
 * -EOPNOTSUPP, with the library and package named in err->message, when it cannot be loaded.
 */
/* TPM_RC_INITIALIZE: the TPM has been reset (_TPM_Init) and waits for TPM2_Startup. */
#define MB_TPM_RC_INITIALIZE 0x100u

#define MB_TPM_DEFAULT_TCTI "device:/dev/tpmrm0"

typedef struct mb_tpm mb_tpm;

/*
 * Connect. tcti is a tpm2-tools style TCTI string ("swtpm:path=/run/sock",
 * "device:/dev/tpm0", "mssim:host=localhost,port=2321"); NULL means
 * $TPM2TOOLS_TCTI, else MB_TPM_DEFAULT_TCTI. Sends no command to the TPM.
 */
MB_EXPORT int mb_tpm_open(const char *tcti, mb_tpm **ret, mb_error *err) MB_WUR;
MB_EXPORT void mb_tpm_free(mb_tpm *t);
/* The TCTI string in use (owned by t). */
MB_EXPORT const char *mb_tpm_tcti(const mb_tpm *t);
/* The TPM response code of the last failed TPM command (0 if none, or a TSS-layer code). */
MB_EXPORT uint32_t mb_tpm_last_rc(const mb_tpm *t);

/* A PCR bank the TPM has allocated: its algorithm and which PCRs it holds. */
typedef struct mb_tpm_bank {
	uint16_t alg;
	uint32_t pcrs; /* bit n: PCR n allocated in this bank */
} mb_tpm_bank;

/*
 * The active PCR banks (TPM2_GetCapability(TPM2_CAP_PCRS)): banks with at least one
 * PCR allocated, in the TPM's order. *ret_n <= max; -E2BIG if the TPM has more.
 */
MB_EXPORT int mb_tpm_banks(mb_tpm *t, mb_tpm_bank *ret, size_t max, size_t *ret_n, mb_error *err) MB_WUR;

/*
 * Read PCRs: for each of the n_algs banks (all active banks when algs is NULL), the
 * PCRs in pcr_mask that the bank has. A TPM2_PCR_Read returns at most 8 digests, so
 * this asks again for what was not returned; if the PCR update counter moves between
 * calls the read starts over (a consistent snapshot). mb_pcr_values_present(ret, alg) marks
 * what was read. ret_calls (may be NULL) gets the number of TPM2_PCR_Read calls.
 */
MB_EXPORT int mb_tpm_read_pcrs(mb_tpm *t, const uint16_t *algs, size_t n_algs, uint32_t pcr_mask,
			       mb_pcr_values *ret, unsigned *ret_calls, mb_error *err) MB_WUR;

/*
 * TPM2_PCR_Extend of one PCR with one digest per bank (TPML_DIGEST_VALUES). Every
 * digest must be of an algorithm mboot knows and of that algorithm's size. Uses an
 * empty password authorisation (PCR authValue is empty unless set).
 */
MB_EXPORT int mb_tpm_extend(mb_tpm *t, uint32_t pcr, const mb_event_digest *digests, size_t n_digests,
			    mb_error *err) MB_WUR;

/*
 * Locality of the following commands (0-4). Only TCTIs that carry a locality
 * (swtpm, mssim) support this; a kernel device does not (-EOPNOTSUPP).
 */
MB_EXPORT int mb_tpm_set_locality(mb_tpm *t, uint8_t locality, mb_error *err) MB_WUR;

/* TPM2_Startup(TPM_SU_CLEAR): for a TPM that was just reset (a swtpm after `swtpm_ioctl -i`). */
MB_EXPORT int mb_tpm_startup_clear(mb_tpm *t, mb_error *err) MB_WUR;

/*
 * Replay a recorded boot log into a TPM (`mboot log extend`): every event that a replay
 * extends becomes a TPM2_PCR_Extend with the event's own digests, in log order, so that a fresh
 * (software) TPM holds the PCRs of the machine that wrote the log. Checked before the first
 * extend, each a refusal (MB_ERR_LOG_EXTEND_REFUSED, nothing extended): a log with an H-CRTM
 * start (its PCR 0 begins with a hash sequence at locality 4 whose input the log lacks); an
 * active TPM bank (of those asked for) the log does not carry or mboot cannot hash; a bank
 * asked for that the TPM does not have; an extending event without a digest of a bank
 * extended; unless force, a PCR not in its reset state for the log's StartupLocality (a TPM
 * started at locality 0 for a log that says another is named so). A TPM that waits for
 * TPM2_Startup is started here at the log's StartupLocality (a TCTI that carries a locality).
 * Digests of banks not extended are skipped and counted.
 */
typedef struct mb_log_extend_options {
	size_t size;             /* sizeof(mb_log_extend_options): the fields that fit are read */
	const uint16_t *banks;   /* extend only these banks (TPM algorithm ids); NULL: every active one */
	size_t n_banks;
	bool force;              /* extend even when the PCRs are not in their reset state */
} mb_log_extend_options;

typedef struct mb_log_extend_result {
	size_t size;             /* sizeof(mb_log_extend_result): the fields that fit are written */
	bool started;            /* the TPM waited for TPM2_Startup and was started, also on failure */
	uint8_t startup_locality; /* ... at this locality */
	uint32_t extended;       /* events extended (on a TPM failure: before it) */
	uint32_t skipped_digests; /* digests of banks not extended */
	uint16_t *banks;         /* the caller's storage for the banks extended (MB_MAX_BANKS suffice), or NULL */
	size_t max_banks;
	size_t n_banks;
} mb_log_extend_result;

/* A refusal of mb_tpm_extend_log: MB_ERR_LOG_EXTEND_REFUSED (mboot/error.h). */

/*
 * Open the TPM at tcti (as mb_tpm_open) and extend log into it; opts and res may be NULL.
 * Errors: MB_ERR_LOG_EXTEND_REFUSED, a replay's (the log's start conditions), and the TPM's
 * (MB_ERR_TPM, -EOPNOTSUPP for a locality the TCTI cannot carry).
 */
MB_EXPORT int mb_tpm_extend_log(const char *tcti, const mb_event_log *log, const mb_log_extend_options *opts,
				mb_log_extend_result *res, mb_error *err) MB_WUR;

/*
 * mboot's NV counter at index (MB_NV_COUNTER_DEFAULT; mboot/tpm-policy.h): its value (as
 * TPM2_NV_Read gives it, big-endian). When absent and create is set, it is defined in the
 * owner hierarchy (empty owner authorization, as the rest of mboot's TPM use) and
 * incremented once, so that it is written (PolicyNV refuses an unwritten index); else
 * -ENOENT. An index that exists with other attributes, size or policy than mboot's: -EEXIST
 * (not mboot's counter: mboot touches it no further). TPM failures: MB_ERR_TPM.
 */
MB_EXPORT int mb_tpm_counter_read(mb_tpm *t, uint32_t index, bool create, uint64_t *ret, mb_error *err) MB_WUR;
/*
 * TPM2_NV_Increment of mboot's counter at index (owner authorization, empty); *ret_value
 * (may be NULL) gets its new value. -ENOENT when absent, -EEXIST when not mboot's.
 */
MB_EXPORT int mb_tpm_counter_increment(mb_tpm *t, uint32_t index, uint64_t *ret_value, mb_error *err) MB_WUR;

/*
 * Sealing (src/lib/tpm/seal.c). The sealed object is a KEYEDHASH object holding the
 * secret (at most MB_SEAL_MAX_SECRET bytes), with authPolicy = policy (a SHA-256
 * policy digest, mb_policy_pcr_digest) and userWithAuth clear, so only a policy
 * session satisfying the policy can unseal it. Its parent is the persistent SRK at
 * MB_TPM_SRK_HANDLE when the TPM has one, else the TCG ECC P-256 SRK created from
 * its template in the owner hierarchy (TCG TPM v2.0 Provisioning Guidance §7.5.1).
 * Sessions are salted with the parent, and the secret crosses the TPM interface
 * encrypted (AES-128-CFB parameter encryption) both ways.
 */
#define MB_TPM_SRK_HANDLE 0x81000001u

/*
 * A PIN (docs/seal.md, "TPM + PIN"): 1 to MB_PIN_MAX bytes, any bytes. The sealed object's
 * authValue is SHA-256(PIN), and its policy is the PCR policy followed by TPM2_PolicyAuthValue.
 */
#define MB_PIN_MAX 256u

/* The TPM's dictionary-attack state: TPM2_GetCapability(TPM_PROPERTIES), Part 2 §6.13. */
typedef struct mb_tpm_da_status {
	uint32_t counter;          /* TPM_PT_LOCKOUT_COUNTER: failed authorizations counted now */
	uint32_t max_tries;        /* TPM_PT_MAX_AUTH_FAIL: the lockout comes at this count */
	uint32_t interval;         /* TPM_PT_LOCKOUT_INTERVAL: seconds until the counter goes down by one */
	bool in_lockout;           /* TPMA_PERMANENT inLockout */
} mb_tpm_da_status;

/* Read the TPM's dictionary-attack state (MB_ERR_TPM on failure). */
MB_EXPORT int mb_tpm_da_status_read(mb_tpm *t, mb_tpm_da_status *ret, mb_error *err) MB_WUR;

typedef struct mb_tpm_sealed_blob {
	uint8_t *pub;      /* TPM2B_PUBLIC, marshalled; caller frees */
	size_t pub_size;
	uint8_t *priv;     /* TPM2B_PRIVATE, marshalled; caller frees */
	size_t priv_size;
	bool parent_persistent;
	uint32_t parent_handle;
	/* 0x81000001 exists but is no storage key, so the SRK template was used instead */
	bool persistent_unusable;
} mb_tpm_sealed_blob;

MB_EXPORT int mb_tpm_seal(mb_tpm *t, const uint8_t *secret, size_t secret_size, const uint8_t policy[32],
			  mb_tpm_sealed_blob *ret, mb_error *err) MB_WUR;
/* The same under a given parent (a persistent handle, or the SRK template): what reseal keeps. */
MB_EXPORT int mb_tpm_seal_under(mb_tpm *t, const uint8_t *secret, size_t secret_size, const uint8_t policy[32],
				bool parent_persistent, uint32_t parent_handle, mb_tpm_sealed_blob *ret,
				mb_error *err) MB_WUR;

/* Which parent key mb_seal_secret seals under. */
typedef enum mb_seal_parent {
	MB_SEAL_PARENT_AUTO = 0,       /* MB_TPM_SRK_HANDLE when it is a storage key, else the SRK template */
	MB_SEAL_PARENT_TEMPLATE = 1,   /* the TCG ECC P-256 SRK from its template */
	MB_SEAL_PARENT_PERSISTENT = 2, /* the storage key at parent_handle */
} mb_seal_parent;

/*
 * What mb_seal_secret seals a secret to. Zero-initialise, then set what applies: either
 * PCR values (pcr_mask, bank, values, predicted) or a signing key (authority_public).
 */
typedef struct mb_seal_options {
	size_t size; /* MB_OPTIONS_INIT(mb_seal_options): its sizeof (mboot/error.h) */
	/* The PCRs to seal to (bit n: PCR n), of bank (an MB_ALG_ id; 0: SHA-256). */
	uint32_t pcr_mask;
	uint16_t bank;
	/*
	 * The values: NULL for the TPM's own now (one consistent TPM2_PCR_Read), else these
	 * (predicted values, say), of bank and with every PCR of pcr_mask.
	 */
	const mb_pcr_bank *values;
	/*
	 * When not NULL and different in a sealed PCR: also unseal under these, a PolicyOR of
	 * two PolicyPCR branches (`mboot reseal --values`: this boot or the next).
	 */
	const mb_pcr_bank *predicted;
	/*
	 * Instead of PCR values: TPM2_PolicyAuthorize by this key (a marshalled TPM2B_PUBLIC
	 * from mb_tpm_key_public), so that the secret unseals in any PCR state its owner signs.
	 */
	const uint8_t *authority_public;
	size_t authority_public_size;
	/* The firmware event log to keep in the sealed file (copied; at most MB_SEALED_MAX_LOG). */
	const uint8_t *eventlog;
	size_t eventlog_size;
	mb_seal_parent parent;
	uint32_t parent_handle;        /* MB_SEAL_PARENT_PERSISTENT: a 0x81xxxxxx handle */
	/*
	 * A firmware-update window (PCR values only; docs/seal.md): also unseal when the sealed
	 * PCRs but MB_FIRMWARE_PCRS hold these values (values, or the TPM's now) while mboot's NV
	 * counter at window_index (0: MB_NV_COUNTER_DEFAULT) keeps its present value, read here
	 * (the counter is defined when absent, mb_tpm_counter_read).
	 */
	bool firmware_window;
	uint32_t window_index;
	/*
	 * More predicted states after predicted (a fallback entry, several kernels): each a branch
	 * of the PolicyOR too, identical states once; with today's (and the window's) at most
	 * MB_POLICY_OR_MAX (8) branches, else -E2BIG. n_more_predicted needs predicted.
	 */
	const mb_pcr_bank *more_predicted;
	size_t n_more_predicted;
	/*
	 * A PIN as well as the PCRs (PCR values only; 1 to MB_PIN_MAX bytes; NULL: none): the
	 * object's authValue is SHA-256(pin) and its policy ends with TPM2_PolicyAuthValue. The
	 * object has no noDA: the TPM counts wrong PINs. Not copied; the caller wipes it.
	 */
	const uint8_t *pin;
	size_t pin_size;
} mb_seal_options;

/*
 * Seal secret (1 to MB_SEAL_MAX_SECRET bytes) as `mboot seal` does: the policy of opt
 * (a PolicyPCR of the TPM's current values or opt->values, a PolicyOR with opt->predicted,
 * or a PolicyAuthorize), the object made under opt's parent (mb_tpm_seal_under), opt's
 * event log kept. *ret is the sealed secret (mb_sealed_to_json gives the file); the
 * secret itself is not copied and crosses to the TPM encrypted. -EINVAL for options that
 * do not fit (before any TPM command; also values of another bank, or a PCR of pcr_mask
 * without a value), -E2BIG for an event log over the cap, MB_ERR_TPM when the TPM's bank
 * lacks a PCR to seal to, and the errors of mb_tpm_seal.
 */
MB_EXPORT int mb_seal_secret(mb_tpm *t, const uint8_t *secret, size_t secret_size, const mb_seal_options *opt,
			     mb_sealed **ret, mb_error *err) MB_WUR;

/*
 * Why an unseal was refused, in the order it was found out: a list of items, each a
 * note (words), a PCR that differs (the expected value and the TPM's), an event that
 * made a differing PCR differ (today's event log against the one the sealed file
 * keeps, or against its event summary, mboot/seal.h), a signature by another key than the sealed one, or an error met while
 * finding out (what it concerns, e.g. "TPM" or a log's path, and the error).
 */
typedef enum mb_unseal_item_kind {
	MB_UNSEAL_NOTE,
	MB_UNSEAL_PCR,
	MB_UNSEAL_EVENT,
	MB_UNSEAL_OTHER_KEY,
	MB_UNSEAL_ERROR,
} mb_unseal_item_kind;

typedef struct mb_unseal_item {
	mb_unseal_item_kind kind;
	char *text;                         /* NOTE */
	unsigned pcr;                       /* PCR, EVENT */
	uint16_t alg;                       /* PCR: the bank */
	uint8_t expected[MB_DIGEST_MAX];    /* PCR: the sealed (or signed) value */
	uint8_t now[MB_DIGEST_MAX];         /* PCR: the TPM's value, when now_read */
	bool now_read;
	char *signature;                    /* PCR, OTHER_KEY: the signature's name; NULL for PCR values sealed to */
	const char *change;                 /* EVENT: "changed", "added" or "removed" */
	/*
	 * EVENT: "#N TYPE: description" then and today (NULL: none); then, from an event
	 * summary (no log of sealing): "sealed event K of PCR P: TYPE, BANK PREFIX…".
	 */
	char *before, *after;
	uint8_t key_name[MB_TPM_NAME_SIZE]; /* OTHER_KEY: the signing key */
	uint8_t sealed_key_name[MB_TPM_NAME_SIZE];
	char *what;                         /* ERROR */
	mb_error error;                     /* ERROR */
} mb_unseal_item;

typedef struct mb_unseal_explanation {
	mb_unseal_item *items;
	size_t n_items;
	bool incomplete;                    /* out of memory: items are missing */
} mb_unseal_explanation;

MB_EXPORT void mb_unseal_explanation_free(mb_unseal_explanation *e);
/*
 * `mboot unseal --json`'s document (docs/seal.md), pretty or compact (docs/json.md), no final
 * newline: {"unsealed": false, then each list in the order its first item comes in e (NULL:
 * none): "notes": [text], "pcrs": [{"pcr", "bank", "expected", "actual" (null when not
 * read), "signature"}], "events": [{"pcr", "change", "before", "after"}], "signatures":
 * [{"file", "key", "sealed_key"}], and "wrong_pin": true when wrong_pin}. ERROR items are
 * left out: the caller reports them. Caller frees; NULL when out of memory.
 */
MB_EXPORT char *mb_unseal_explanation_to_json(const mb_unseal_explanation *e, bool wrong_pin, bool pretty);

typedef struct mb_unseal_options {
	size_t size; /* MB_OPTIONS_INIT(mb_unseal_options): its sizeof (mboot/error.h) */
	/*
	 * Today's event log, to say which events changed when the PCRs differ: log, else
	 * the file log_path (read only then); neither: the events are not explained.
	 */
	const mb_event_log *log;
	const char *log_path;
	/*
	 * A secret sealed to signed policies (MB_SEAL_POLICY_AUTHORIZE): the signatures to
	 * try, in order, and their names in the explanation (NULL: "signature N").
	 */
	const mb_policy_signature *signatures;
	const char *const *signature_names;
	size_t n_signatures;
	/*
	 * The PIN of a secret sealed with one (mb_sealed_pin): without it such a secret is
	 * -ENOKEY; a wrong one MB_ERR_TPM_AUTH (counted by the TPM). Ignored for a secret sealed
	 * without a PIN.
	 */
	const uint8_t *pin;
	size_t pin_size;
} mb_unseal_options;

/*
 * Unseal the secret of s into out (MB_SEAL_MAX_SECRET bytes; *out_size its size).
 * A PolicyPCR object: its PCR state. A PolicyOR object: the branch whose values the
 * TPM's PCRs hold now. A PolicyAuthorize object: each signature of opt by the sealed
 * key whose values the PCRs hold, in order, until the TPM accepts one. A PCR change
 * during the unseal is retried. -> MB_ERR_TPM_POLICY when refused:
 * the PCRs are not a state the secret is sealed to; *explanation then says why.
 * Other failures: MB_ERR_TPM, MB_ERR_TPM_LOCKOUT, -EINVAL, -ENOMEM, and -EBADMSG for
 * a malformed signature (the message starts with its name). *explanation (NULL when
 * there is nothing to say) may also be set on those failures, with what was said
 * before them; the caller frees it with mb_unseal_explanation_free.
 */
MB_EXPORT int mb_tpm_unseal_sealed(mb_tpm *t, const mb_sealed *s, const mb_unseal_options *opt, uint8_t *out,
				   size_t *out_size, mb_unseal_explanation **explanation, mb_error *err) MB_WUR;

/*
 * The options a reseal of s seals with (what mb_reseal uses; mb_luks_reseal too, which unseals
 * its key itself): s's bank and PCRs, under the parent s records (a reseal never moves a secret
 * to another key), to the TPM's values now OR each of the n_predicted states predicted[0..n-1]
 * (each with every sealed PCR, of s's bank; the same state once; n_predicted 0: today's values
 * alone, which drops the stale branches of an earlier reseal). No event log, window or PIN is
 * set: the caller adds them. predicted must stay valid while ret is used. ret->size is the
 * caller's (MB_OPTIONS_INIT); the fields that fit in it are set, the others are the caller's
 * to leave. -EINVAL: s is sealed to signed policies (nothing to reseal: a release ships a
 * signature), or a predicted state is of another bank or lacks a sealed PCR (named); -E2BIG: more
 * than 7 predicted states.
 */
MB_EXPORT int mb_reseal_seal_options(const mb_sealed *s, const mb_pcr_bank *predicted, size_t n_predicted,
				     mb_seal_options *ret, mb_error *err) MB_WUR;

/* What mb_reseal seals a secret again to, beside the TPM's values now (all zero: those alone). */
typedef struct mb_reseal_options {
	size_t size; /* MB_OPTIONS_INIT(mb_reseal_options): its sizeof (mboot/error.h) */
	/* n_predicted predicted states (at most 7), as mb_reseal_seal_options: each a branch */
	const mb_pcr_bank *predicted;
	size_t n_predicted;
	/* To explain a refused unseal: today's event log, else the file log_path (as mb_unseal_options). */
	const mb_event_log *log;
	const char *log_path;
	/* The PIN of a secret sealed with one (mb_sealed_pin): unsealed with it and sealed again with it. */
	const uint8_t *pin;
	size_t pin_size;
	/* The firmware event log to keep in the new object; NULL: the one s keeps, if any. */
	const uint8_t *eventlog;
	size_t eventlog_size;
	/*
	 * Before a firmware update (docs/seal.md): also open a window (mb_seal_options.firmware_window)
	 * on NV counter window_index; 0: the counter of s's own window when it has one (a window
	 * reopened stays on its counter), else MB_NV_COUNTER_DEFAULT.
	 */
	bool firmware_update;
	uint32_t window_index;
} mb_reseal_options;

/*
 * `mboot reseal`: unseal s on this boot (its PCR state; with opt->pin) and seal the same secret
 * again to the same bank and PCRs under the same parent, to the TPM's values now OR each predicted
 * state (mb_reseal_seal_options), keeping opt's event log (or s's). The secret stays in locked
 * memory and is wiped. *ret is the new sealed secret (mb_sealed_to_json gives the file); the caller
 * stores it, then calls mb_reseal_close_window unless it keeps the window open. Errors: as
 * mb_reseal_seal_options (checked before the TPM is used), mb_tpm_unseal_sealed (MB_ERR_TPM_POLICY:
 * this boot cannot unseal s, *explanation says why; MB_ERR_TPM_AUTH, -ENOKEY: the PIN) and
 * mb_seal_secret. *explanation (NULL when there is nothing to say): the caller frees it.
 */
MB_EXPORT int mb_reseal(mb_tpm *t, const mb_sealed *s, const mb_reseal_options *opt, mb_sealed **ret,
			mb_unseal_explanation **explanation, mb_error *err) MB_WUR;

/*
 * After the secret resealed from s (which had a firmware-update window) is stored, never before
 * (were the counter moved first and the write to fail, the secret would be locked out): close s's
 * window by incrementing its NV counter, unless the counter has moved on already. *ret_closed:
 * whether this call moved it; *ret_counter: its value now. s without a window: 0, nothing done
 * (*ret_closed false, *ret_counter 0). The TPM's errors.
 */
MB_EXPORT int mb_reseal_close_window(mb_tpm *t, const mb_sealed *s, bool *ret_closed, uint64_t *ret_counter,
				     mb_error *err) MB_WUR;

/*
 * No TPM: the TPM2B_PUBLIC (marshalled, *ret malloc'd) and name of the public part of
 * a PEM key (public or private; RSA or ECC NIST P-256) as TPM2_LoadExternal takes it
 * for verifying signatures: SHA-256 name, userWithAuth | sign | decrypt, no scheme
 * (the signature names its own), RSA exponent as is. These are tpm2_loadexternal's
 * defaults, so `tpm2_loadexternal -C o -u KEY.pem` gives the same name.
 */
MB_EXPORT int mb_tpm_key_public(const uint8_t *pem, size_t pem_size, uint8_t **ret, size_t *ret_size,
				uint8_t name[MB_TPM_NAME_SIZE], mb_error *err) MB_WUR;
/* No TPM: check a marshalled TPM2B_PUBLIC of an RSA or ECC key with a SHA-256 name, and compute the name. */
MB_EXPORT int mb_tpm_key_name(const uint8_t *pub, size_t pub_size, uint8_t name[MB_TPM_NAME_SIZE],
			      mb_error *err) MB_WUR;

/*
 * No TPM: check that pub and priv are exactly one marshalled TPM2B_PUBLIC (a
 * KEYEDHASH object with a SHA-256 name and a policy) and one TPM2B_PRIVATE; when
 * auth_policy is not NULL, the object's authPolicy (32 bytes) is copied there.
 */
MB_EXPORT int mb_tpm_check_sealed_blobs(const uint8_t *pub, size_t pub_size, const uint8_t *priv, size_t priv_size,
					uint8_t *auth_policy, mb_error *err) MB_WUR;

#ifdef __cplusplus
}
#endif
#endif
