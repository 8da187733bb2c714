/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The policy of a sealed object from the PCR values it is to unseal under: one
 * PolicyPCR (Part 3 §23.7), or PolicyPCR branches joined by PolicyOR (§23.6) when a
 * predicted state differs from the current one (mboot reseal), or with a firmware-update
 * window (PolicyPCR of the non-firmware PCRs, then PolicyNV §23.9 on mboot's counter).
 */
#include <errno.h>
#include <string.h>

#include <mboot/seal.h>
#include <mboot/tpm-policy.h>
#include "shared/fail.h"
#include "sealed-internal.h"

static bool same_values(const mb_pcr_bank *a, const mb_pcr_bank *b, uint32_t mask)
{
	for (unsigned p = 0; p < MB_PCR_COUNT; p++)
		if ((mask & (1u << p)) && memcmp(a->value[p], b->value[p], a->size) != 0)
			return false;
	return true;
}

int sealed_window_digest(const mb_pcr_bank *bank, uint32_t mask, uint32_t index, uint64_t counter,
			 uint8_t out[MB_POLICY_DIGEST_SIZE], mb_error *err)
{
	uint8_t pcr[MB_POLICY_DIGEST_SIZE], name[MB_TPM_NAME_SIZE];
	int r;

	if (!mask || (mask & MB_FIRMWARE_PCRS))
		return set_error(err, -EINVAL, "a firmware-update window binds PCRs other than 0-3");
	r = mb_policy_pcr_digest(NULL, bank, mask, pcr, err);
	if (r == 0)
		r = mb_nv_counter_name(index, name, err);
	if (r == 0)
		r = mb_policy_nv_counter_digest(pcr, name, counter, out, err);
	return r;
}

int sealed_set_policy(mb_sealed *s, const mb_pcr_bank *current, const mb_pcr_bank *const *predicted,
		      size_t n_predicted, const sealed_window *window, mb_error *err)
{
	uint8_t digest[MB_POLICY_OR_MAX][MB_POLICY_DIGEST_SIZE], policy[MB_POLICY_DIGEST_SIZE];
	mb_pcr_bank bank[MB_POLICY_OR_MAX];
	uint32_t mask = s->mask, window_mask = s->mask & ~MB_FIRMWARE_PCRS;
	size_t n = 0, i, k;
	int r;

	if (s->authorized)
		return set_error(err, -EINVAL, "the secret is sealed to signed policies, not to PCR values");
	if (!current)
		return set_error(err, -EINVAL, "no current values");
	for (i = 0; i < n_predicted; i++)
		if (!predicted[i] || predicted[i]->alg != current->alg || predicted[i]->size != current->size)
			return set_error(err, -EINVAL, "the predicted values are of another bank than the current ones");
	if (window && !window_mask)
		return set_error(err, -EINVAL, "the secret is sealed to no PCR but the firmware's (0-3): a firmware-update "
				 "window would release it on any boot");
	/* Only the sealed PCRs' values are kept; computed first so that a refusal leaves s as it was. */
	bank[0] = *current;
	bank[0].present &= mask;
	r = mb_policy_pcr_digest(NULL, &bank[0], mask, digest[n++], err);
	if (r < 0)
		return r;
	for (i = 0; i < n_predicted; i++) {
		for (k = 0; k < n && !same_values(predicted[i], &bank[k], mask); k++)
			;
		if (k < n)
			continue; /* a state some branch has already */
		if (n + (window ? 1 : 0) >= MB_POLICY_OR_MAX)
			return set_error(err, -E2BIG, "more than %u PCR states to seal to (a TPM2_PolicyOR has at most %u "
					 "branches%s)", MB_POLICY_OR_MAX - (window ? 1u : 0u), MB_POLICY_OR_MAX,
					 window ? ", one the firmware-update window's" : ", one today's");
		bank[n] = *predicted[i];
		bank[n].present &= mask;
		r = mb_policy_pcr_digest(NULL, &bank[n], mask, digest[n], err);
		if (r < 0)
			return r;
		n++;
	}
	if (window) {
		/* the PCRs the firmware does not measure, at their values of this boot */
		bank[n] = bank[0];
		bank[n].present &= window_mask;
		r = sealed_window_digest(&bank[n], window_mask, window->index, window->counter, digest[n], err);
		if (r < 0)
			return r;
		n++;
	}
	if (n > 1) {
		r = mb_policy_or_digest((const uint8_t (*)[MB_POLICY_DIGEST_SIZE]) digest, n, policy, err);
		if (r < 0)
			return r;
		for (i = 0; i < n; i++) {
			s->branch[i] = bank[i];
			s->branch_mask[i] = i + 1 == n && window ? window_mask : mask;
		}
		memcpy(s->branch_digest, digest, n * MB_POLICY_DIGEST_SIZE);
		s->n_branches = n;
	} else {
		memcpy(policy, digest[0], MB_POLICY_DIGEST_SIZE);
		s->n_branches = 0;
	}
	s->window = window != NULL;
	s->window_index = window ? window->index : 0;
	s->window_counter = window ? window->counter : 0;
	s->pcrs = bank[0];
	memcpy(s->policy, policy, MB_POLICY_DIGEST_SIZE);
	return 0;
}
