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
 * (mb_tpm_seal, mb_tpm_unseal_sealed).
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
 * approves. approved is the PolicyPCR digest of pcrs/mask; the signature is over
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
} mb_policy_signature;

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

/* A sealed secret, as kept in the sealed file (DESIGN.md, docs/seal.md). */
typedef struct mb_sealed {
	unsigned version;                 /* 1 */
	uint8_t *pub;                     /* TPM2B_PUBLIC, marshalled (size field included) */
	size_t pub_size;
	uint8_t *priv;                    /* TPM2B_PRIVATE, marshalled */
	size_t priv_size;
	mb_pcr_bank pcrs;                 /* bank, and value[] of every PCR in mask */
	uint32_t mask;
	uint8_t policy[MB_POLICY_DIGEST_SIZE];
	/*
	 * policy.kind "or" (mboot reseal): the secret unseals under any of n_branches PCR
	 * states (PolicyPCR then PolicyOR); pcrs/mask above are then the boot of sealing.
	 * n_branches == 0: policy.kind "pcr", a single PolicyPCR over pcrs/mask.
	 */
	size_t n_branches;
	mb_pcr_bank branch[MB_POLICY_OR_MAX];
	uint32_t branch_mask[MB_POLICY_OR_MAX];
	uint8_t branch_digest[MB_POLICY_OR_MAX][MB_POLICY_DIGEST_SIZE];
	/*
	 * policy.kind "authorize" (seal --authorized-by): TPM2_PolicyAuthorize by the key
	 * auth_key (a marshalled TPM2B_PUBLIC) of name auth_key_name; pcrs/mask are then
	 * empty: the PCRs and values come with each signature.
	 */
	bool authorized;
	uint8_t *auth_key;
	size_t auth_key_size;
	uint8_t auth_key_name[MB_TPM_NAME_SIZE];
	bool parent_persistent;           /* true: parent_handle; false: the ECC P-256 SRK template */
	uint32_t parent_handle;
	uint8_t *eventlog;                /* the firmware event log at sealing, or NULL */
	size_t eventlog_size;
} mb_sealed;

/*
 * Parse a sealed file. Checks every field (JSON types, caps, base64, hex sizes, that
 * public and private unmarshal as TPM2B_PUBLIC / TPM2B_PRIVATE, and that the stored
 * policy digest is the PolicyPCR digest of the stored values); -EBADMSG names the field.
 */
MB_EXPORT int mb_sealed_parse(const char *text, size_t size, mb_sealed *ret, mb_error *err) MB_WUR;
/*
 * Set s's policy to unseal under the PCR values current (the PCRs of s->mask, which
 * current must all have) or, when predicted is not NULL and differs in one of them,
 * under current or predicted: branches PolicyPCR(current) and PolicyPCR(predicted)
 * joined by TPM2_PolicyOR, as `mboot reseal --values` makes it. Sets s->pcrs (current,
 * only the PCRs of s->mask), s->policy and the branches (n_branches 2, or 0 for a
 * single PolicyPCR). -EINVAL for a secret sealed to signed policies, for predicted of
 * another bank, or for a PCR of s->mask missing a value; s is then unchanged.
 */
MB_EXPORT int mb_sealed_set_policy(mb_sealed *s, const mb_pcr_bank *current, const mb_pcr_bank *predicted,
				   mb_error *err) MB_WUR;
/* The JSON text (pretty, newline-terminated); NULL on ENOMEM. Caller frees. */
MB_EXPORT char *mb_sealed_to_json(const mb_sealed *s);
MB_EXPORT void mb_sealed_done(mb_sealed *s);

/* Base64 (RFC 4648 §4, padded). Decode rejects anything but canonical padded input. */
MB_EXPORT char *mb_base64_encode(const uint8_t *in, size_t n);
MB_EXPORT int mb_base64_decode(const char *s, size_t len, size_t max, uint8_t **ret, size_t *ret_size) MB_WUR;

#ifdef __cplusplus
}
#endif
#endif
