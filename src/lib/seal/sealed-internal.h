/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_LIB_SEAL_SEALED_INTERNAL_H
#define MB_LIB_SEAL_SEALED_INTERNAL_H

/*
 * The layout of mb_sealed, for the library only: the public header keeps it opaque so that
 * MB_POLICY_OR_MAX and the bank arrays are not part of the ABI. Code outside src/lib uses
 * the mb_sealed_* accessors (unit tests and fuzzers, which link the static core, may look in).
 */
#include <mboot/seal.h>
#include <mboot/tpm-policy.h>

struct mb_sealed {
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
	 * A firmware-update window (mboot reseal --firmware-update; docs/seal.md): then the last
	 * of the n_branches is PolicyPCR over the sealed PCRs but MB_FIRMWARE_PCRS, followed by
	 * PolicyNV(mboot's counter at window_index == window_counter). In the file it is
	 * policy.window, apart from policy.branches.
	 */
	bool window;
	uint32_t window_index;
	uint64_t window_counter;
	/*
	 * policy.kind "authorize" (seal --authorized-by): TPM2_PolicyAuthorize by the key
	 * auth_key (a marshalled TPM2B_PUBLIC) of name auth_key_name; pcrs/mask are then
	 * empty: the PCRs and values come with each signature.
	 */
	bool authorized;
	uint8_t *auth_key;
	size_t auth_key_size;
	uint8_t auth_key_name[MB_TPM_NAME_SIZE];
	/* policy.pin: the PCR policy above is followed by TPM2_PolicyAuthValue (authValue SHA-256(PIN)) */
	bool pin;
	bool parent_persistent;           /* true: parent_handle; false: the ECC P-256 SRK template */
	uint32_t parent_handle;
	/* only in a secret just sealed (mb_seal_secret), never in the file: mb_sealed_parent_fallback */
	bool parent_fallback;
	uint8_t *eventlog;                /* the firmware event log at sealing, or NULL */
	size_t eventlog_size;
	/* the event summary (event-summary.h), or NULL: never in the sealed file, the caller keeps it */
	uint8_t *summary;
	size_t summary_size;
};

/*
 * Set s's policy to unseal under the PCR values current (the PCRs of s->mask, which
 * current must all have) or, when predicted is not NULL and differs in one of them,
 * under current or predicted: branches PolicyPCR(current) and PolicyPCR(predicted)
 * joined by TPM2_PolicyOR, as `mboot reseal --values` makes it. Sets s->pcrs (current,
 * only the PCRs of s->mask), s->policy and the branches (n_branches 2, or 0 for a
 * single PolicyPCR). -EINVAL for a secret sealed to signed policies, for predicted of
 * another bank, or for a PCR of s->mask missing a value; s is then unchanged.
 */
typedef struct sealed_window {
	uint32_t index;   /* mboot's NV counter */
	uint64_t counter; /* its value now: the window is open while it stays */
} sealed_window;

/* current's branch, then each of the n_predicted states predicted[i] that differs from every
 * branch before it, then with window (not NULL) the window's (see struct mb_sealed). -EINVAL
 * when the secret is sealed to no PCR outside MB_FIRMWARE_PCRS (the window would open on any
 * boot); -E2BIG past MB_POLICY_OR_MAX branches. */
int sealed_set_policy(mb_sealed *s, const mb_pcr_bank *current, const mb_pcr_bank *const *predicted,
		      size_t n_predicted, const sealed_window *window, mb_error *err);
/* The window branch's policy digest: PolicyPCR(bank, mask) then PolicyNV(index == counter). */
int sealed_window_digest(const mb_pcr_bank *bank, uint32_t mask, uint32_t index, uint64_t counter,
			 uint8_t out[MB_POLICY_DIGEST_SIZE], mb_error *err);
/*
 * The sealed file as a JSON object, and back (what mb_sealed_to_json and mb_sealed_parse do
 * with text): for files that carry a sealed object inside (envelope.c). sealed_from_object
 * does not take root; sealed_to_object returns NULL on ENOMEM.
 */
#include "shared/json.h"
int sealed_from_object(json_t *root, mb_sealed **ret, mb_error *err);
json_t *sealed_to_object(const mb_sealed *s);
/* Frees what s holds and zeroes it (s itself is not freed). */
void sealed_done(mb_sealed *s);

#endif
