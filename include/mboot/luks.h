/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_LUKS_H
#define MBOOT_LUKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <mboot/error.h>
#include <mboot/replay.h>
#include <mboot/tpm.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Disk keys sealed into LUKS2 tokens (docs/luks.md). A key of its own (32 random bytes)
 * opens one keyslot; it is sealed as `mboot seal` seals a secret, and the sealed object
 * (without the event log a sealed file keeps; optionally with its event summary, base64)
 * is stored in a LUKS2 token of type "mboot" bound to that keyslot:
 *
 *   {"type": "mboot", "keyslots": ["N"], "mboot": {"version": 1, "sealed": {SEALED FILE},
 *    "events": "SUMMARY"}}
 *
 * A library built without libcryptsetup (meson -Dluks=disabled) still parses tokens; the
 * calls that open a device then return -EOPNOTSUPP.
 */
#define MB_LUKS_TOKEN_TYPE "mboot"
#define MB_LUKS_KEY_SIZE 32
/* The largest token text read (untrusted); LUKS2's default JSON area is 12 KiB. */
#define MB_LUKS_TOKEN_MAX (64u << 10)

/* A token parsed and checked (mb_luks_token_parse). Opaque. */
typedef struct mb_luks_token mb_luks_token;

/*
 * Parse a token's JSON (untrusted: strict JSON, caps, every field checked, the sealed
 * object as mb_sealed_parse checks a sealed file). -EBADMSG names the field; -E2BIG over
 * MB_LUKS_TOKEN_MAX.
 */
MB_EXPORT int mb_luks_token_parse(const char *json, size_t size, mb_luks_token **ret, mb_error *err) MB_WUR;
MB_EXPORT void mb_luks_token_free(mb_luks_token *t);
/* The keyslot the token opens. */
MB_EXPORT int mb_luks_token_keyslot(const mb_luks_token *t);
/* How the key unseals: "pcr", "or" (mboot reseal's this boot OR the next) or "authorize". */
MB_EXPORT const char *mb_luks_token_policy(const mb_luks_token *t);
/* Whether the key is sealed with a PIN as well (TPM + PIN): unsealing needs mb_unseal_options.pin. */
MB_EXPORT bool mb_luks_token_pin(const mb_luks_token *t);
/* The bank (an MB_ALG_ id) and PCRs (bit n: PCR n) sealed to; 0 for "authorize". */
MB_EXPORT uint16_t mb_luks_token_bank(const mb_luks_token *t);
MB_EXPORT uint32_t mb_luks_token_pcrs(const mb_luks_token *t);
/*
 * The number of events in the token's event summary ("mboot.events"), and the PCRs
 * summarised (ret_pcrs may be NULL); -1 (and 0) when the token keeps none.
 */
MB_EXPORT int mb_luks_token_events(const mb_luks_token *t, uint32_t *ret_pcrs);
/*
 * What the token says, as lines "\tkey: value\n" (what `cryptsetup luksDump` and `mboot
 * luks list` show); NULL on ENOMEM. Caller frees.
 */
MB_EXPORT char *mb_luks_token_describe(const mb_luks_token *t);
/*
 * Unseal the token's key into key (MB_SEAL_MAX_SECRET bytes; *key_size its size): as
 * mb_tpm_unseal_sealed, with its errors (MB_ERR_TPM_POLICY: not this boot; *explanation
 * then says why). The caller wipes key.
 */
MB_EXPORT int mb_luks_token_unseal(mb_tpm *tpm, const mb_luks_token *t, const mb_unseal_options *opt, uint8_t *key,
				   size_t *key_size, mb_unseal_explanation **explanation, mb_error *err) MB_WUR;
/* An unseal explanation as text, one line a finding (what the token plugin logs); NULL on ENOMEM. */
MB_EXPORT char *mb_luks_explanation_text(const mb_unseal_explanation *e);

/* What mb_luks_enroll seals the new key to: PCR values, or a signing key. */
typedef struct mb_luks_enroll_options {
	size_t size; /* MB_OPTIONS_INIT(mb_luks_enroll_options): its sizeof (mboot/error.h) */
	uint32_t pcr_mask;                 /* the PCRs (bit n: PCR n); not 0 */
	uint16_t bank;                     /* an MB_ALG_ id; 0: SHA-256 */
	const mb_pcr_bank *values;         /* NULL: the TPM's values now; else these (predicted) */
	/* Instead of PCRs: TPM2_PolicyAuthorize by this key (mb_tpm_key_public's TPM2B_PUBLIC). */
	const uint8_t *authority_public;
	size_t authority_public_size;
	/* An existing passphrase (or key file's bytes) of the device, to add a keyslot with. */
	const char *passphrase;
	size_t passphrase_size;
	/*
	 * The firmware event log of the boot whose values are sealed to, or NULL: its event
	 * summary (mboot/seal.h) is kept in the token, so that a refused unlock names the
	 * events that changed. It must replay to the values sealed to (PCR values only).
	 */
	const uint8_t *eventlog;
	size_t eventlog_size;
	/* TPM + PIN (PCR values only): the key unseals only with this PIN too (mb_seal_options.pin). */
	const uint8_t *pin;
	size_t pin_size;
} mb_luks_enroll_options;

/*
 * Enroll: on the LUKS2 device (a block device or an image file), seal a new random key
 * (MB_LUKS_KEY_SIZE bytes, kept only in locked memory and wiped) to opt, add a keyslot
 * for it authorised by opt->passphrase, and store the sealed key in a new "mboot" token
 * bound to that keyslot. The keyslot is removed again if the token cannot be stored
 * (-ENOSPC: the JSON metadata area has no room, said with both sizes). Errors: -EINVAL
 * (not LUKS2, bad options), -EPERM (the passphrase opens no keyslot), the TPM's
 * (MB_ERR_TPM...), the system's. *ret_token, *ret_keyslot (may be NULL): what was added.
 */
MB_EXPORT int mb_luks_enroll(mb_tpm *tpm, const char *device, const mb_luks_enroll_options *opt, int *ret_token,
			     int *ret_keyslot, mb_error *err) MB_WUR;

/* One "mboot" token of a device: parsed, or why it does not parse. */
typedef struct mb_luks_entry {
	int token;
	mb_luks_token *parsed;             /* NULL when the token is malformed: then error */
	mb_error error;
} mb_luks_entry;

/* The device's "mboot" tokens, in token order (*ret_n may be 0). */
MB_EXPORT int mb_luks_list(const char *device, mb_luks_entry **ret, size_t *ret_n, mb_error *err) MB_WUR;
MB_EXPORT void mb_luks_list_free(mb_luks_entry *entries, size_t n);
/*
 * `mboot luks list --json`'s document (docs/luks.md), pretty or compact (docs/json.md), no
 * final newline: {"device", "tokens": [{"token", then "error" (a malformed token's message)
 * or "keyslot", "policy", "pin" (true, when one is needed), "bank", "pcrs", "events" and
 * "events_pcrs" (the event summary's count and PCRs, when kept)}], "recovery_keyslots" (the
 * keyslots of *recovery_keyslots, a mask as mb_luks_recovery_keyslots gives it; left out
 * when NULL)}. Caller frees; NULL when out of memory.
 */
MB_EXPORT char *mb_luks_list_to_json(const char *device, const mb_luks_entry *entries, size_t n,
				     const uint32_t *recovery_keyslots, bool pretty);

/*
 * Remove "mboot" token `token` and the keyslot it opens (unless another token uses that
 * keyslot too). Refused (-EBUSY, nothing changed) when no keyslot would remain that is
 * not an mboot token's: the device must keep a way in that needs no TPM (a passphrase).
 * -ENOENT: no such token; -EINVAL: not an "mboot" token. *ret_keyslot (may be NULL): the
 * keyslot destroyed, or -1.
 */
MB_EXPORT int mb_luks_remove(const char *device, int token, int *ret_keyslot, mb_error *err) MB_WUR;

/*
 * Unseal the key of "mboot" token `token` (-1: each such token in order until one
 * unseals) and open its keyslot: activate the device as name (a device-mapper name), or
 * with name NULL only check that the key opens the keyslot. Returns the keyslot opened.
 * MB_ERR_TPM_POLICY: no token unseals on this boot (*explanation says why, for the last
 * one tried); -EPERM: a key unsealed but does not open its keyslot; -ENOENT: no such
 * token; -EBADMSG: the token is malformed (named); the TPM's and the system's errors.
 * *ret_token (may be NULL): the token used.
 */
MB_EXPORT int mb_luks_unlock(mb_tpm *tpm, const char *device, const char *name, int token,
			     const mb_unseal_options *opt, int *ret_token, mb_unseal_explanation **explanation,
			     mb_error *err) MB_WUR;

/* What mb_luks_reseal did. */
typedef struct mb_luks_reseal_result {
	int keyslot;        /* the keyslot whose "mboot" tokens were resealed */
	int token;          /* the new token; -1 when none was stored */
	uint32_t removed;   /* bit n: the keyslot's earlier "mboot" token n, removed once the new one was stored */
	uint32_t left;      /* bit n: an earlier token that could not be removed (the next reseal removes it) */
	bool or_policy;     /* sealed to the current OR the predicted values; false: the current ones only */
} mb_luks_reseal_result;

/*
 * Reseal the key of "mboot" token `token` before an upgrade, as `mboot reseal` reseals a
 * sealed file: unseal it on this boot (any "mboot" token of the same keyslot that unseals
 * and whose key opens the keyslot will do: after a crash in an earlier reseal there are
 * two), seal it again to the same bank and PCRs under the same parent, to the TPM's values
 * now OR each of the n_predicted states predicted[0..n-1] in that bank (a TPM2_PolicyOR, identical
 * states once, at most 7: -E2BIG; n_predicted 0: now only, which drops the stale branches of an
 * earlier reseal), store that in a NEW token bound to the same
 * keyslot, read it back from the disk and check that it unseals to the same key, and only
 * then remove the keyslot's earlier "mboot" tokens (those sealed to signed policies and
 * malformed ones are left alone). Each step is one LUKS2 header write, so at every instant a
 * good boot opens the keyslot with some token; a crash leaves at most one token too many,
 * which the next reseal removes. The keyslot and its key never change; the key is only in
 * locked memory, and wiped.
 * Errors (nothing changed unless said): -ENOENT no such "mboot" token; -EBADMSG it is
 * malformed; -EINVAL it is sealed to signed policies (nothing to reseal: a release ships a
 * signature), or predicted lacks a sealed PCR; MB_ERR_TPM_POLICY no token of the keyslot
 * unseals on this boot (*explanation says why); -EPERM a key unsealed but does not open the
 * keyslot; -ENOSPC no room in the LUKS2 JSON area for the new token beside the old one; the
 * TPM's and the system's. Failing to remove an old token after the new one was stored is an
 * error too (ret says which are left). ret is filled on success and on error.
 */
MB_EXPORT int mb_luks_reseal(mb_tpm *tpm, const char *device, int token, const mb_pcr_values *const *predicted,
			     size_t n_predicted, const mb_unseal_options *opt, mb_luks_reseal_result *ret,
			     mb_unseal_explanation **explanation, mb_error *err) MB_WUR;

/*
 * Recovery keys (docs/luks.md, "Recovery keys"): a passphrase a human types when the TPM
 * does not release the disk key, in a keyslot of its own that uses libcryptsetup's default
 * PBKDF (argon2id, as `cryptsetup luksAddKey`), marked by a token of type
 * MB_LUKS_RECOVERY_TOKEN_TYPE naming that keyslot. The key is 32 random bytes written as 64
 * "modhex" characters (cbdefghijklnrtuv: 4 bits each, the same keys on every common keyboard
 * layout) in 8 groups of 8 joined by '-': MB_LUKS_RECOVERY_KEY_LEN characters.
 */
#define MB_LUKS_RECOVERY_TOKEN_TYPE "mboot-recovery"
#define MB_LUKS_RECOVERY_KEY_LEN 71

/*
 * A new recovery key (RAND_priv_bytes) into out, NUL-terminated: out_size at least
 * MB_LUKS_RECOVERY_KEY_LEN + 1 (-EINVAL else). The caller keeps out in locked memory and wipes it.
 */
MB_EXPORT int mb_luks_recovery_key_new(char *out, size_t out_size, mb_error *err) MB_WUR;

/*
 * Add recovery_key as a passphrase in a new keyslot, authorised by an existing passphrase,
 * and a token marking it. Nothing is left behind on failure. -EPERM: the passphrase opens no
 * keyslot; -ENOSPC: no room in the header. *ret_keyslot, *ret_token (may be NULL): what was added.
 */
MB_EXPORT int mb_luks_add_recovery(const char *device, const char *passphrase, size_t passphrase_size,
				   const char *recovery_key, size_t recovery_key_size, int *ret_keyslot,
				   int *ret_token, mb_error *err) MB_WUR;

/* The keyslots (bit n: keyslot n) that a recovery token marks and that are in use. */
MB_EXPORT int mb_luks_recovery_keyslots(const char *device, uint32_t *ret_mask, mb_error *err) MB_WUR;

/* What mb_luks_rekey did. */
typedef struct mb_luks_rekey_result {
	int old_keyslot;    /* the keyslot of the token replaced */
	int keyslot;        /* the new key's keyslot; -1 when none was added (or it was removed again) */
	int token;          /* the new token; -1 when none was stored */
	uint32_t removed;   /* bit n: the old keyslot's "mboot" token n, removed */
	bool old_keyslot_removed;
	bool or_policy;     /* sealed to the current OR the predicted values */
} mb_luks_rekey_result;

/*
 * For a token this boot cannot unseal (locked out after an update): without unsealing
 * anything, seal a NEW random key to the bank, PCRs and parent of "mboot" token `token`, to
 * the TPM's values now OR each predicted state (as mb_luks_reseal), add a keyslot for it
 * authorised by passphrase (a passphrase, a recovery key or a key file's bytes), store a new
 * token for it, check from the disk that it unseals to that key, and only then remove the old
 * keyslot's "mboot" tokens and the old keyslot (unless another token uses it, or no keyslot
 * without a token would remain). Until the new token is stored nothing on the disk changes;
 * if its check fails it and its keyslot are removed again. The new token keeps no event summary.
 * Errors: -ENOENT no such token; -EBADMSG malformed; -EINVAL sealed to signed policies;
 * -EPERM the passphrase opens no keyslot; -ENOSPC no room; the TPM's and the system's.
 */
MB_EXPORT int mb_luks_rekey(mb_tpm *tpm, const char *device, int token, const char *passphrase,
			    size_t passphrase_size, const mb_pcr_values *const *predicted, size_t n_predicted,
			    mb_luks_rekey_result *ret, mb_error *err) MB_WUR;

#ifdef __cplusplus
}
#endif
#endif
