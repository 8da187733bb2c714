/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The TPM commands behind mb_tpm_unseal_sealed() (internal: callers pass a sealed object). */
#ifndef MB_TPM_UNSEAL_INTERNAL_H
#define MB_TPM_UNSEAL_INTERNAL_H

#include <mboot/seal.h>
#include <mboot/tpm.h>

/*
 * Load the object under its parent (persistent handle, or the SRK template), run a
 * policy session with TPM2_PolicyPCR(bank alg, mask) and TPM2_Unseal. out must hold
 * MB_SEAL_MAX_SECRET bytes. When n_or > 0, TPM2_PolicyOR(or_digests) follows the
 * PolicyPCR (the object's policy is an OR of PolicyPCR branches; bank_alg and mask are
 * the branch to satisfy). A TPM_RC_PCR_CHANGED race is retried. -> MB_ERR_TPM_POLICY
 * when the PCRs do not match the policy, MB_ERR_TPM_LOCKOUT, MB_ERR_TPM.
 */
typedef struct tpm_nv_condition {
	uint32_t index;  /* mboot's NV counter */
	uint64_t value;  /* PolicyNV(counter == value) */
} tpm_nv_condition;

/* nv (may be NULL): TPM2_PolicyNV on mboot's counter after the PolicyPCR (a firmware-update window).
 * pin_auth (32 bytes, may be NULL): the object's authValue, TPM2_PolicyAuthValue last; a wrong one is
 * MB_ERR_TPM_AUTH. */
int tpm_unseal_pcr(mb_tpm *t, const uint8_t *pub, size_t pub_size, const uint8_t *priv, size_t priv_size,
		   bool parent_persistent, uint32_t parent_handle, uint16_t bank_alg, uint32_t mask,
		   const tpm_nv_condition *nv, const uint8_t (*or_digests)[32], size_t n_or, const uint8_t *pin_auth,
		   uint8_t *out, size_t *out_size, mb_error *err);

/*
 * Unseal an object whose policy is TPM2_PolicyAuthorize by key (a marshalled
 * TPM2B_PUBLIC, mb_tpm_key_public) with sig: TPM2_LoadExternal of the key (owner
 * hierarchy, so that its ticket counts), TPM2_VerifySignature of sig over
 * SHA-256(sig->approved) (-> MB_ERR_TPM_SIGNATURE), then a policy session with
 * TPM2_PolicyPCR(sig's selection), TPM2_PolicyAuthorize(sig->approved, ticket) and
 * TPM2_Unseal. PCRs other than the signed values -> MB_ERR_TPM_POLICY.
 */
int tpm_unseal_authorized(mb_tpm *t, const uint8_t *pub, size_t pub_size, const uint8_t *priv,
				       size_t priv_size, bool parent_persistent, uint32_t parent_handle,
				       const uint8_t *key, size_t key_size, const mb_policy_signature *sig,
				       uint8_t *out, size_t *out_size, mb_error *err);

#endif
