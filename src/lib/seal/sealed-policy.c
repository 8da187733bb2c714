/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The policy of a sealed object from the PCR values it is to unseal under: one
 * PolicyPCR (Part 3 §23.7), or PolicyPCR branches joined by PolicyOR (§23.6) when a
 * predicted state differs from the current one (mboot reseal).
 */
#include <errno.h>
#include <string.h>

#include <mboot/seal.h>
#include "shared/fail.h"
#include "sealed-internal.h"

static bool same_values(const mb_pcr_bank *a, const mb_pcr_bank *b, uint32_t mask)
{
	for (unsigned p = 0; p < MB_PCR_COUNT; p++)
		if ((mask & (1u << p)) && memcmp(a->value[p], b->value[p], a->size) != 0)
			return false;
	return true;
}

int sealed_set_policy(mb_sealed *s, const mb_pcr_bank *current, const mb_pcr_bank *predicted, mb_error *err)
{
	uint8_t digest[MB_POLICY_OR_MAX][MB_POLICY_DIGEST_SIZE], policy[MB_POLICY_DIGEST_SIZE];
	mb_pcr_bank now, next;
	uint32_t mask = s->mask;
	int r;

	if (s->authorized)
		return set_error(err, -EINVAL, "the secret is sealed to signed policies, not to PCR values");
	if (!current || (predicted && (predicted->alg != current->alg || predicted->size != current->size)))
		return set_error(err, -EINVAL, "the predicted values are of another bank than the current ones");
	/* Only the sealed PCRs' values are kept; computed first so that a refusal leaves s as it was. */
	now = *current;
	now.present &= mask;
	r = mb_policy_pcr_digest(NULL, &now, mask, digest[0], err);
	if (r < 0)
		return r;
	if (predicted && !same_values(predicted, &now, mask)) {
		next = *predicted;
		next.present &= mask;
		r = mb_policy_pcr_digest(NULL, &next, mask, digest[1], err);
		if (r < 0)
			return r;
		r = mb_policy_or_digest((const uint8_t (*)[MB_POLICY_DIGEST_SIZE]) digest, 2, policy, err);
		if (r < 0)
			return r;
		s->branch[0] = now;
		s->branch[1] = next;
		s->branch_mask[0] = s->branch_mask[1] = mask;
		memcpy(s->branch_digest, digest, 2 * MB_POLICY_DIGEST_SIZE);
		s->n_branches = 2;
	} else {
		memcpy(policy, digest[0], MB_POLICY_DIGEST_SIZE);
		s->n_branches = 0;
	}
	s->pcrs = now;
	memcpy(s->policy, policy, MB_POLICY_DIGEST_SIZE);
	return 0;
}
