/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The luks part's adapter to the sealing API (luks-seal.h): sealing a disk key the way
 * `mboot seal` does (mb_seal_secret), and unsealing it, with the sealed object passed
 * around as text. Only this file changes when mb_sealed does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/digest.h>
#include <mboot/seal.h>
#include <mboot/tpm.h>
#include "shared/fail.h"
#include "luks-seal.h"
#include "shared/base64.h"

/* The event summary of s from log, in base64 (*ret); NULL when there is no log. */
static int keep_events(mb_sealed *s, const uint8_t *log, size_t log_size, char **ret, mb_error *err)
{
	const uint8_t *summary;
	size_t size = 0;
	int r;

	*ret = NULL;
	if (!log)
		return 0;
	if (mb_sealed_policy_kind(s) == MB_SEAL_POLICY_AUTHORIZE)
		return set_error(err, -EINVAL, "a key sealed to signed policies keeps no event summary: the signatures "
				 "name the PCR values");
	r = mb_sealed_keep_event_summary(s, log, log_size, err);
	if (r < 0)
		return r;
	summary = mb_sealed_event_summary(s, &size);
	*ret = base64_encode(summary, size);
	return *ret ? 0 : set_error(err, -ENOMEM, "out of memory");
}

int luks_seal_key(mb_tpm *t, const uint8_t *key, size_t key_size, const mb_luks_enroll_options *opt,
		  char **ret_json, char **ret_events, mb_error *err)
{
	/* no event log, at most its summary: the LUKS2 header has no room for one (docs/luks.md) */
	mb_seal_options so = {
		.size = sizeof(mb_seal_options),
		.pcr_mask = opt->authority_public ? 0 : opt->pcr_mask,
		.bank = opt->authority_public ? 0 : opt->bank,
		.values = opt->authority_public ? NULL : opt->values,
		.authority_public = opt->authority_public,
		.authority_public_size = opt->authority_public_size,
		.parent = MB_SEAL_PARENT_AUTO,
		.pin = opt->pin,
		.pin_size = opt->pin_size,
	};
	mb_sealed *s = NULL;
	int r;

	*ret_json = NULL;
	*ret_events = NULL;
	r = mb_seal_secret(t, key, key_size, &so, &s, err);
	if (r < 0)
		return r;
	r = keep_events(s, opt->eventlog, opt->eventlog_size, ret_events, err);
	if (r == 0 && !(*ret_json = mb_sealed_to_json(s)))
		r = set_error(err, -ENOMEM, "out of memory");
	mb_sealed_free(s);
	if (r < 0) {
		free(*ret_events);
		*ret_events = NULL;
	}
	return r;
}

int luks_sealed_check(const char *json, size_t size, const uint8_t *summary, size_t summary_size,
		      luks_sealed_info *info, mb_error *err)
{
	mb_sealed *s = NULL;
	const uint8_t *name;
	int r;

	memset(info, 0, sizeof(*info));
	r = mb_sealed_parse(json, size, &s, err);
	if (r < 0)
		return r;
	if (summary) {
		r = mb_sealed_set_event_summary(s, summary, summary_size, err);
		if (r < 0) {
			info->events_bad = true;
			mb_sealed_free(s);
			return r;
		}
		info->has_events = true;
		info->n_events = mb_sealed_event_summary_count(s, &info->events_pcrs);
	}
	switch (mb_sealed_policy_kind(s)) {
	case MB_SEAL_POLICY_AUTHORIZE:
		info->policy = "authorize";
		name = mb_sealed_auth_key_name(s);
		if (name)
			memcpy(info->auth_key_name, name, MB_TPM_NAME_SIZE);
		break;
	case MB_SEAL_POLICY_OR:
		info->policy = "or";
		break;
	default:
		info->policy = "pcr";
		break;
	}
	info->pin = mb_sealed_pin(s);
	info->bank = mb_sealed_bank(s);
	info->pcrs = mb_sealed_mask(s);
	info->n_branches = mb_sealed_n_branches(s);
	mb_sealed_free(s);
	return 0;
}

int luks_unseal_key(mb_tpm *t, const char *json, size_t size, const uint8_t *summary, size_t summary_size,
		    const mb_unseal_options *opt, uint8_t *out, size_t *out_size, mb_unseal_explanation **explanation,
		    mb_error *err)
{
	mb_sealed *s = NULL;
	int r;

	*explanation = NULL;
	r = mb_sealed_parse(json, size, &s, err);
	if (r == 0 && summary)
		r = mb_sealed_set_event_summary(s, summary, summary_size, err);
	if (r < 0) {
		mb_sealed_free(s);
		return r;
	}
	r = mb_tpm_unseal_sealed(t, s, opt, out, out_size, explanation, err);
	mb_sealed_free(s);
	return r;
}

int luks_reseal_key(mb_tpm *t, const char *old_json, size_t old_size, const uint8_t *key, size_t key_size,
		    const mb_pcr_values *const *predicted, size_t n_predicted, const mb_unseal_options *opt,
		    char **ret_json, bool *ret_or, mb_error *err)
{
	mb_sealed *old = NULL, *s = NULL;
	mb_seal_options so = MB_OPTIONS_INIT(mb_seal_options);
	mb_pcr_bank pred[MB_POLICY_OR_MAX];
	size_t i;
	int r;

	*ret_json = NULL;
	*ret_or = false;
	if (n_predicted > MB_POLICY_OR_MAX - 1)
		return set_error(err, -E2BIG, "%zu predicted PCR states: a TPM2_PolicyOR has at most %u branches, one "
				 "today's", n_predicted, MB_POLICY_OR_MAX);
	r = mb_sealed_parse(old_json, old_size, &old, err);
	if (r < 0)
		return r;
	for (i = 0; i < n_predicted && mb_sealed_policy_kind(old) != MB_SEAL_POLICY_AUTHORIZE; i++) {
		if (!predicted[i] || mb_pcr_values_get_bank(predicted[i], mb_sealed_bank(old), &pred[i]) < 0) {
			const mb_digest_info *d = mb_digest_by_alg(mb_sealed_bank(old));

			r = set_error(err, -EINVAL, "the predicted values have no %s bank, which the key is sealed to",
				      d ? d->name : "such");
			goto out;
		}
	}
	r = mb_reseal_seal_options(old, pred, n_predicted, &so, err);
	if (r < 0)
		goto out;
	/* sealed with a PIN: again with the PIN it was unsealed with */
	if (mb_sealed_pin(old)) {
		/* never a silent downgrade to a key without the PIN */
		if (!opt || !opt->pin) {
			r = set_error(err, -EINVAL, "the key is sealed with a PIN: the new one needs the PIN too");
			goto out;
		}
		so.pin = opt->pin;
		so.pin_size = opt ? opt->pin_size : 0;
	}
	/* no event log, as at enroll: the LUKS2 header has no room for one */
	r = mb_seal_secret(t, key, key_size, &so, &s, err);
	if (r < 0)
		goto out;
	*ret_or = mb_sealed_policy_kind(s) == MB_SEAL_POLICY_OR;
	*ret_json = mb_sealed_to_json(s);
	if (!*ret_json)
		r = set_error(err, -ENOMEM, "out of memory");
out:
	mb_sealed_free(s);
	mb_sealed_free(old);
	return r;
}
