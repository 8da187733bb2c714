/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_SEAL_H
#define MBOOT_SEAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <mboot/error.h>
#include <mboot/replay.h>
#include <mboot/tpm-policy.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Sealing secrets to PCR values: the sealed file and signed policies (pure, no TPM). The
 * policy-digest math is in mboot/tpm-policy.h; the TPM commands in mboot/tpm.h
 * (mb_seal_secret, mb_tpm_unseal_sealed).
 */

/* The TPM limit on sealed data: MAX_SYM_DATA (TPM 2.0 Part 2 §10.4.5 TPM2B_SENSITIVE_DATA). */
#define MB_SEAL_MAX_SECRET 128
/* Caps on the sealed file (untrusted input). */
#define MB_SEALED_MAX_FILE (64u << 20)
#define MB_SEALED_MAX_BLOB 4096       /* TPM2B_PUBLIC / TPM2B_PRIVATE marshalled */
#define MB_SEALED_MAX_LOG (32u << 20) /* the event log kept in the file */

/* Signature schemes of a signed policy (TPM_ALG_ ids), always over SHA-256. */
#define MB_SIG_RSASSA 0x0014
#define MB_SIG_ECDSA 0x0018
#define MB_SIG_MAX 512 /* bytes of one signature: RSA up to 4096 bits; a DER ECDSA-Sig-Value is smaller */

/*
 * A signed policy (`mboot policy sign`, docs/seal.md): PCR values a key's owner
 * approves. approved is the PolicyPCR digest of pcrs/mask (then a PolicyNV on a
 * revocation counter, below); the signature is over
 * aHash = SHA-256(approved || policyRef), policyRef empty (Part 3 §23.16), as
 * `openssl dgst -sha256 -sign` makes it: PKCS#1 v1.5 bytes, or a DER ECDSA-Sig-Value.
 */
typedef struct mb_policy_signature {
	mb_pcr_bank pcrs;
	uint32_t mask;
	uint8_t approved[MB_POLICY_DIGEST_SIZE];
	uint8_t key_name[MB_TPM_NAME_SIZE];
	uint16_t scheme;                  /* MB_SIG_RSASSA or MB_SIG_ECDSA */
	uint8_t *sig;
	size_t sig_size;
	/*
	 * Revocable (docs/seal.md): approved is then PolicyPCR(pcrs, mask) followed by
	 * PolicyNV(mboot's NV counter at counter_index == counter_value), so the signature
	 * stops working when `mboot policy revoke` moves the counter on.
	 */
	bool counter;
	uint32_t counter_index;
	uint64_t counter_value;
} mb_policy_signature;

/*
 * sig->approved from sig's pcrs and mask (every PCR of mask present), and its counter when
 * sig->counter is set (an index of the owner range): what a signer signs.
 */
MB_EXPORT int mb_policy_signature_approve(mb_policy_signature *sig, mb_error *err) MB_WUR;

/*
 * Sign sig->approved with the private key of key_pem (PEM: PKCS#8 or traditional, RSA
 * or ECC P-256); sets sig->scheme and sig->sig. The caller has set pcrs, mask, approved
 * and key_name.
 */
MB_EXPORT int mb_policy_sign(const uint8_t *key_pem, size_t key_pem_size, mb_policy_signature *sig,
			     mb_error *err) MB_WUR;
/*
 * Parse a signature file (untrusted input); checks approved against pcrs, and that the
 * signature is well formed for its scheme (RSASSA: at most 512 bytes; ECDSA: exactly one
 * DER ECDSA-Sig-Value with r and s of at most 32 bytes, as P-256 makes them).
 */
MB_EXPORT int mb_policy_signature_parse(const char *text, size_t size, mb_policy_signature *ret,
					mb_error *err) MB_WUR;
MB_EXPORT char *mb_policy_signature_to_json(const mb_policy_signature *sig);
MB_EXPORT void mb_policy_signature_done(mb_policy_signature *sig);

/*
 * A sealed secret, as kept in the sealed file (docs/seal.md). Opaque: made by
 * mb_sealed_parse (a file) or mb_seal_secret (mboot/tpm.h: a new secret), freed with
 * mb_sealed_free, read with the accessors below. The pointers they return are s's, valid
 * until mb_sealed_free(s); every ret_size may be NULL.
 */
typedef struct mb_sealed mb_sealed;

/*
 * Parse a sealed file into a new object (*ret; NULL on failure). Checks every field (JSON
 * types, caps, base64, hex sizes, that public and private unmarshal as TPM2B_PUBLIC /
 * TPM2B_PRIVATE, and that the stored policy digest is the PolicyPCR, PolicyOR or
 * PolicyAuthorize digest of the stored values or key and the object's authPolicy);
 * -EBADMSG names the field.
 */
MB_EXPORT int mb_sealed_parse(const char *text, size_t size, mb_sealed **ret, mb_error *err) MB_WUR;
/* The JSON text of the sealed file (pretty, newline-terminated); NULL on ENOMEM. Caller frees. */
MB_EXPORT char *mb_sealed_to_json(const mb_sealed *s);
MB_EXPORT void mb_sealed_free(mb_sealed *s);

/* The sealed file's format version (1). */
MB_EXPORT unsigned mb_sealed_version(const mb_sealed *s);

/* How the secret is released: policy.kind of the file. */
typedef enum mb_seal_policy {
	MB_SEAL_POLICY_PCR = 1,     /* "pcr": one TPM2_PolicyPCR over the PCRs of mb_sealed_mask */
	MB_SEAL_POLICY_OR = 2,      /* "or": PolicyPCR branches joined by TPM2_PolicyOR (mboot reseal) */
	MB_SEAL_POLICY_AUTHORIZE = 3, /* "authorize": TPM2_PolicyAuthorize by a key (signed policies) */
} mb_seal_policy;

MB_EXPORT mb_seal_policy mb_sealed_policy_kind(const mb_sealed *s);
/* Sealed with a PIN as well (policy.pin): the PCR policy then TPM2_PolicyAuthValue; unsealing needs
 * mb_unseal_options.pin. */
MB_EXPORT bool mb_sealed_pin(const mb_sealed *s);
/* The policy digest (MB_POLICY_DIGEST_SIZE bytes): the sealed object's authPolicy. */
MB_EXPORT const uint8_t *mb_sealed_policy_digest(const mb_sealed *s);

/*
 * The PCR values sealed to ("pcrs" of the file): the bank (alg, size) and the value of
 * every PCR of mb_sealed_mask; for an "or" policy, the boot of sealing. NULL for an
 * "authorize" policy (the signatures carry the PCRs and values).
 */
MB_EXPORT const mb_pcr_bank *mb_sealed_pcrs(const mb_sealed *s);
/* The bank's algorithm (an MB_ALG_ id) and the sealed PCRs (bit n: PCR n); 0 for "authorize". */
MB_EXPORT uint16_t mb_sealed_bank(const mb_sealed *s);
MB_EXPORT uint32_t mb_sealed_mask(const mb_sealed *s);

/*
 * The firmware's PCRs, which a firmware-update window leaves unchecked: 0 (firmware code),
 * 1 (its configuration), 2 (option ROM code), 3 (option ROM configuration).
 */
#define MB_FIRMWARE_PCRS 0x0000000Fu

/*
 * A firmware-update window (mboot reseal --firmware-update, docs/seal.md): true when the
 * secret also unseals with the sealed PCRs but MB_FIRMWARE_PCRS at their values of sealing
 * while mboot's NV counter at *ret_index holds *ret_counter. Its branch is the last of
 * mb_sealed_n_branches. ret_index and ret_counter may be NULL.
 */
MB_EXPORT bool mb_sealed_window(const mb_sealed *s, uint32_t *ret_index, uint64_t *ret_counter);

/* An "or" policy's branches: 2 to 8 PCR states (0 for "pcr" and "authorize"), the window's last
 * when there is one (its mask then lacks MB_FIRMWARE_PCRS, and its PolicyPCR is followed by a PolicyNV). */
MB_EXPORT size_t mb_sealed_n_branches(const mb_sealed *s);
/* Branch i's PCR state and its PCRs (i < mb_sealed_n_branches); NULL and 0 past the end. */
MB_EXPORT const mb_pcr_bank *mb_sealed_branch(const mb_sealed *s, size_t i);
MB_EXPORT uint32_t mb_sealed_branch_mask(const mb_sealed *s, size_t i);

/*
 * An "authorize" policy's key: its TPM2B_PUBLIC (marshalled; *ret_size its size) and its
 * name (MB_TPM_NAME_SIZE bytes). NULL (and *ret_size 0) for the other kinds.
 */
MB_EXPORT const uint8_t *mb_sealed_auth_key(const mb_sealed *s, size_t *ret_size);
MB_EXPORT const uint8_t *mb_sealed_auth_key_name(const mb_sealed *s);

/*
 * The parent key: true with *ret_handle a persistent handle (0x81xxxxxx); false for the TCG
 * ECC P-256 SRK made from its template (*ret_handle 0). ret_handle may be NULL.
 */
MB_EXPORT bool mb_sealed_parent_persistent(const mb_sealed *s, uint32_t *ret_handle);
/*
 * Only for a secret just sealed by mb_seal_secret with MB_SEAL_PARENT_AUTO: the key at
 * MB_TPM_SRK_HANDLE exists but is not a storage key, so the SRK template was used instead
 * (worth saying to the user). Always false for a parsed file.
 */
MB_EXPORT bool mb_sealed_parent_fallback(const mb_sealed *s);

/* The sealed object's TPM2B_PUBLIC and TPM2B_PRIVATE (marshalled, size fields included). */
MB_EXPORT const uint8_t *mb_sealed_public(const mb_sealed *s, size_t *ret_size);
MB_EXPORT const uint8_t *mb_sealed_private(const mb_sealed *s, size_t *ret_size);
/* The firmware event log kept at sealing, to explain a refused unseal; NULL (*ret_size 0) when none. */
MB_EXPORT const uint8_t *mb_sealed_eventlog(const mb_sealed *s, size_t *ret_size);

/*
 * An event summary: where the sealed object cannot keep the event log of sealing (a LUKS2
 * token: the header has no room, docs/luks.md), what that log said about the sealed PCRs,
 * so that a refused unseal can still name the events of today's log that changed. Per
 * event that extends a sealed PCR, in log order: its PCR, its type and the first
 * MB_EVENT_SUMMARY_PREFIX bytes of its digest in the sealed bank, MB_EVENT_SUMMARY_RECORD
 * bytes after a 4-byte header (the PCRs summarised). At most MB_EVENT_SUMMARY_MAX_EVENTS
 * events: PCRs are taken in index order while their events fit; a PCR that does not fit
 * is not summarised at all. mb_sealed_to_json never writes it: the caller keeps it where
 * it has room and gives it back with mb_sealed_set_event_summary before unsealing.
 */
#define MB_EVENT_SUMMARY_MAX_EVENTS 256
#define MB_EVENT_SUMMARY_PREFIX 8
#define MB_EVENT_SUMMARY_RECORD 13
#define MB_EVENT_SUMMARY_MAX (4 + MB_EVENT_SUMMARY_MAX_EVENTS * MB_EVENT_SUMMARY_RECORD)

/*
 * Summarise log (a firmware event log, the boot of sealing) into s, sealed to PCR values:
 * -EINVAL for a secret sealed to signed policies, a log that does not parse, lacks the
 * sealed bank, or does not replay to the sealed values in every sealed PCR (named).
 */
MB_EXPORT int mb_sealed_keep_event_summary(mb_sealed *s, const uint8_t *log, size_t log_size, mb_error *err) MB_WUR;
/*
 * Give s the summary kept with it (untrusted): -EBADMSG saying what is wrong (its length,
 * more than MB_EVENT_SUMMARY_MAX_EVENTS events, a PCR not sealed to, a record of a PCR not
 * summarised; any summary for a secret sealed to signed policies).
 */
MB_EXPORT int mb_sealed_set_event_summary(mb_sealed *s, const uint8_t *summary, size_t size, mb_error *err) MB_WUR;
/* s's event summary; NULL (*ret_size 0) when none. */
MB_EXPORT const uint8_t *mb_sealed_event_summary(const mb_sealed *s, size_t *ret_size);
/* The number of events in s's summary (0 when none), and the PCRs summarised (ret_pcrs may be NULL). */
MB_EXPORT size_t mb_sealed_event_summary_count(const mb_sealed *s, uint32_t *ret_pcrs);

#ifdef __cplusplus
}
#endif
#endif
