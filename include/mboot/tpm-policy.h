/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_TPM_POLICY_H
#define MBOOT_TPM_POLICY_H

#include <stddef.h>
#include <stdint.h>
#include <mboot/error.h>
#include <mboot/replay.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * TPM policy digests computed in software, without a TPM: what a trial session would give
 * (TPM 2.0 Part 3 §23). Not to be confused with mboot/policy.h, the boot policy a log is
 * judged against: these are the authorization policies sealed objects carry.
 */

/* The session hash of every policy mboot computes: SHA-256 (the sealed object's nameAlg).
 * SHA-256's size, fixed by the specs, not a cap: public structs may hold it. */
#define MB_POLICY_DIGEST_SIZE 32

/*
 * TPM2_PolicyPCR's effect on a fresh (all-zero) SHA-256 policy digest, TPM 2.0 Part 3
 * §23.7: policyDigest = H(0^32 || TPM_CC_PolicyPCR || TPML_PCR_SELECTION || H(values)),
 * where the selection is one bank (sizeofSelect 3, as mboot sends it) and values are
 * bank->value[p] of the PCRs in mask, in ascending order. Every PCR in mask must be
 * present in bank. old may be NULL (a fresh session) or the previous 32-byte digest.
 */
MB_EXPORT int mb_policy_pcr_digest(const uint8_t *old, const mb_pcr_bank *bank, uint32_t mask,
				   uint8_t out[MB_POLICY_DIGEST_SIZE], mb_error *err) MB_WUR;

/*
 * TPM2_PolicyAuthValue's effect, Part 3 §23.17: policyDigest = H(old || TPM_CC_PolicyAuthValue
 * (0x0000016B)); old NULL: a fresh session. A secret sealed with a PIN (mb_seal_options.pin) has
 * its PCR policy followed by this: the TPM then also wants the object's authValue, and counts a
 * wrong one against its dictionary-attack protection.
 */
MB_EXPORT int mb_policy_auth_value_digest(const uint8_t old[MB_POLICY_DIGEST_SIZE], uint8_t out[MB_POLICY_DIGEST_SIZE],
					  mb_error *err) MB_WUR;

/* TPM2_PolicyOR's branches: 2 to 8 (Part 3 §23.6, TPML_DIGEST of the command). */
#define MB_POLICY_OR_MAX 8

/*
 * TPM2_PolicyOR over n branch digests, Part 3 §23.6: the policy is reset, then
 * policyDigest = H(0^32 || TPM_CC_PolicyOR || branch_1 || ... || branch_n).
 */
MB_EXPORT int mb_policy_or_digest(const uint8_t (*branches)[MB_POLICY_DIGEST_SIZE], size_t n,
				  uint8_t out[MB_POLICY_DIGEST_SIZE], mb_error *err) MB_WUR;

/* The TPM name of a SHA-256 object: nameAlg (TPM_ALG_SHA256, 2 bytes) || SHA-256(TPMT_PUBLIC). Fixed
 * by the specs (TPM 2.0 Part 1, object names), not a cap: public structs may hold it. */
#define MB_TPM_NAME_SIZE 34

/*
 * TPM2_PolicyAuthorize's effect on a fresh policy, Part 3 §23.16 (PolicyUpdate with an
 * empty policyRef): policyDigest = H(H(0^32 || TPM_CC_PolicyAuthorize || keyName) || "").
 * A secret with this policy unseals in any PCR state the key's owner signs.
 */
MB_EXPORT int mb_policy_authorize_digest(const uint8_t key_name[MB_TPM_NAME_SIZE],
					 uint8_t out[MB_POLICY_DIGEST_SIZE], mb_error *err) MB_WUR;

/*
 * The NV counter mboot binds firmware-update windows and signed policies to (docs/seal.md):
 * an index in the owner range of the TCG "Registry of Reserved TPM 2.0 Handles and
 * Localities" (0x01800000-0x01BFFFFF), defined by mboot when absent with exactly
 * MB_NV_COUNTER_ATTRIBUTES, SHA-256 name, empty authValue and authPolicy, 8 bytes.
 */
#define MB_NV_COUNTER_DEFAULT 0x01800b00u
/* The counter signed policies are bound to (mboot policy sign --counter-value, policy revoke):
 * another index, so that closing a firmware-update window revokes no signature. */
#define MB_NV_REVOCATION_DEFAULT 0x01800b01u
#define MB_NV_OWNER_FIRST 0x01800000u
#define MB_NV_OWNER_LAST 0x01bfffffu
/*
 * TPMA_NV of the counter once incremented (Part 2 §13.4): TPM_NT_COUNTER, OWNERWRITE (only
 * the owner moves it), OWNERREAD and AUTHREAD (anyone may read it, as PolicyNV must: a
 * counter is no secret), NO_DA, WRITTEN (set by the first TPM2_NV_Increment, which mboot
 * sends right after defining it: PolicyNV refuses an unwritten index).
 */
#define MB_NV_COUNTER_ATTRIBUTES 0x22060012u

/*
 * The TPM name of mboot's counter at index (MB_NV_COUNTER_ATTRIBUTES; Part 1 §16, Part 2
 * §13.5): nameAlg (TPM_ALG_SHA256) || SHA-256(TPMS_NV_PUBLIC). -EINVAL for an index outside
 * the owner range.
 */
MB_EXPORT int mb_nv_counter_name(uint32_t index, uint8_t out[MB_TPM_NAME_SIZE], mb_error *err) MB_WUR;

/*
 * TPM2_PolicyNV(operandB = value as 8 big-endian bytes, offset 0, TPM_EO_EQ) on an NV
 * counter of this name, Part 3 §23.9: policyDigest = H(old || TPM_CC_PolicyNV || args ||
 * name), args = H(operandB || offset || operation). old: the previous digest, or NULL for
 * a fresh session. The policy holds while the counter's value is value.
 */
MB_EXPORT int mb_policy_nv_counter_digest(const uint8_t *old, const uint8_t name[MB_TPM_NAME_SIZE], uint64_t value,
					  uint8_t out[MB_POLICY_DIGEST_SIZE], mb_error *err) MB_WUR;

#ifdef __cplusplus
}
#endif
#endif
