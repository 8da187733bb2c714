/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A secret sealed in one call, as `mboot seal` (and totp init, and reseal) seal it: the
 * policy from PCR values (the TPM's now, or given; OR predicted ones) or a signing key,
 * the object made under the chosen parent, the event log kept. The secret is only passed
 * on to mb_tpm_seal, which wipes its own copy.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/digest.h>
#include <mboot/seal.h>
#include <mboot/tpm.h>
#include <mboot/tpm-policy.h>
#include "lib/seal/sealed-internal.h"
#include "shared/fail.h"
#include "shared/options.h"
#include "tpm-internal.h"

/* Everything about opt that can be refused before the TPM is asked anything. */
static int check_options(const uint8_t *secret, size_t secret_size, const mb_seal_options *opt,
			 const mb_digest_info **bank, mb_error *err)
{
	*bank = NULL;
	if (!secret || secret_size == 0 || secret_size > MB_SEAL_MAX_SECRET)
		return set_error(err, -EINVAL, "a secret of 1 to %u bytes can be sealed, not %zu", MB_SEAL_MAX_SECRET,
				 secret ? secret_size : 0);
	if (opt->eventlog_size > MB_SEALED_MAX_LOG || (!opt->eventlog && opt->eventlog_size))
		return set_error(err, opt->eventlog ? -E2BIG : -EINVAL, "the event log to keep is larger than %u bytes",
				 MB_SEALED_MAX_LOG);
	if (opt->parent != MB_SEAL_PARENT_AUTO && opt->parent != MB_SEAL_PARENT_TEMPLATE &&
	    opt->parent != MB_SEAL_PARENT_PERSISTENT)
		return set_error(err, -EINVAL, "no such parent choice (%d)", (int) opt->parent);
	if (opt->parent == MB_SEAL_PARENT_PERSISTENT && (opt->parent_handle >> 24) != 0x81)
		return set_error(err, -EINVAL, "parent handle 0x%08x is not a persistent handle (0x81xxxxxx)",
				 opt->parent_handle);
	if (opt->pin && (opt->pin_size == 0 || opt->pin_size > MB_PIN_MAX))
		return set_error(err, -EINVAL, "a PIN of 1 to %u bytes, not %zu", MB_PIN_MAX, opt->pin_size);
	if (!opt->pin && opt->pin_size)
		return set_error(err, -EINVAL, "a PIN size without a PIN");
	if (opt->authority_public) {
		if (opt->pin)
			return set_error(err, -EINVAL, "a secret sealed to a signing key takes no PIN (not implemented)");
		if (opt->firmware_window)
			return set_error(err, -EINVAL, "a secret sealed to a signing key takes no firmware-update window: "
					 "sign the new values instead");
		if (opt->pcr_mask || opt->bank || opt->values || opt->predicted)
			return set_error(err, -EINVAL, "a secret sealed to a signing key takes no PCRs or values: the "
					 "signatures name them");
		return 0;
	}
	*bank = mb_digest_by_alg(opt->bank ? opt->bank : MB_ALG_SHA256);
	if (!*bank)
		return set_error(err, -EINVAL, "no known PCR bank 0x%04x", opt->bank);
	if ((opt->values && opt->values->alg != (*bank)->alg) || (opt->predicted && opt->predicted->alg != (*bank)->alg))
		return set_error(err, -EINVAL, "the values to seal to are of another bank than %s", (*bank)->name);
	if (opt->n_more_predicted && (!opt->more_predicted || !opt->predicted))
		return set_error(err, -EINVAL, "more predicted values without the first (predicted)");
	if (opt->n_more_predicted > MB_POLICY_OR_MAX - 2)
		return set_error(err, -E2BIG, "more than %u PCR states to seal to (a TPM2_PolicyOR has at most %u branches, "
				 "one today's)", MB_POLICY_OR_MAX - 1, MB_POLICY_OR_MAX);
	for (size_t i = 0; i < opt->n_more_predicted; i++)
		if (opt->more_predicted[i].alg != (*bank)->alg)
			return set_error(err, -EINVAL, "the values to seal to are of another bank than %s", (*bank)->name);
	if (opt->pcr_mask >> MB_PCR_COUNT)
		return set_error(err, -EINVAL, "PCR mask 0x%08x selects PCRs over %u", opt->pcr_mask, MB_PCR_COUNT - 1);
	if (opt->firmware_window && !(opt->pcr_mask & ~MB_FIRMWARE_PCRS))
		return set_error(err, -EINVAL, "the secret is sealed to no PCR but the firmware's (0-3): a firmware-update "
				 "window would release it on any boot");
	if (opt->firmware_window && opt->window_index &&
	    (opt->window_index < MB_NV_OWNER_FIRST || opt->window_index > MB_NV_OWNER_LAST))
		return set_error(err, -EINVAL, "NV index 0x%08x is not in the owner range 0x%08x-0x%08x", opt->window_index,
				 MB_NV_OWNER_FIRST, MB_NV_OWNER_LAST);
	return 0;
}

/* The policy of a PCR seal: the TPM's values now unless opt gives them; OR opt's predicted ones. */
static int pcr_policy(mb_tpm *t, const mb_seal_options *opt, const mb_digest_info *bank, mb_sealed *s,
		      mb_error *err)
{
	mb_pcr_values *v = NULL;
	mb_pcr_bank now;
	sealed_window window = { 0 }, *w = NULL;
	const mb_pcr_bank *preds[MB_POLICY_OR_MAX];
	size_t n = 0, i;
	int r;

	s->mask = opt->pcr_mask;
	if (opt->firmware_window) {
		window.index = opt->window_index ? opt->window_index : MB_NV_COUNTER_DEFAULT;
		r = mb_tpm_counter_read(t, window.index, true, &window.counter, err);
		if (r < 0)
			return r;
		w = &window;
	}
	if (opt->predicted)
		preds[n++] = opt->predicted;
	for (i = 0; i < opt->n_more_predicted && n < MB_POLICY_OR_MAX; i++)
		preds[n++] = &opt->more_predicted[i];
	if (opt->values)
		return sealed_set_policy(s, opt->values, preds, n, w, err);
	v = mb_pcr_values_new();
	if (!v)
		return set_error(err, -ENOMEM, "out of memory");
	r = mb_tpm_read_pcrs(t, &bank->alg, 1, opt->pcr_mask, v, NULL, err);
	if (r == 0 && (mb_pcr_values_get_bank(v, bank->alg, &now) < 0 ||
		       (now.present & opt->pcr_mask) != opt->pcr_mask))
		r = set_error(err, MB_ERR_TPM, "the %s bank does not have all of the PCRs to seal to", bank->name);
	mb_pcr_values_free(v);
	if (r == 0)
		r = sealed_set_policy(s, &now, preds, n, w, err);
	return r;
}

static int keep_copy(const uint8_t *p, size_t n, uint8_t **ret, size_t *ret_size, mb_error *err)
{
	*ret = NULL;
	*ret_size = 0;
	if (!p)
		return 0;
	*ret = malloc(n ? n : 1);
	if (!*ret)
		return set_error(err, -ENOMEM, "out of memory");
	memcpy(*ret, p, n);
	*ret_size = n;
	return 0;
}

MB_EXPORT int mb_seal_secret(mb_tpm *t, const uint8_t *secret, size_t secret_size, const mb_seal_options *opt_in,
			     mb_sealed **ret, mb_error *err)
{
	mb_seal_options o;
	const mb_seal_options *opt = &o;
	const mb_digest_info *bank;
	mb_tpm_sealed_blob blob = { 0 };
	uint8_t auth[32];
	mb_sealed *s;
	int r;

	*ret = NULL;
	r = OPTIONS_TAKE(o, opt_in, err);
	if (r < 0)
		return r;
	r = check_options(secret, secret_size, opt, &bank, err);
	if (r < 0)
		return r;
	if (!t)
		return set_error(err, -EINVAL, "no TPM");
	s = calloc(1, sizeof(*s));
	if (!s)
		return set_error(err, -ENOMEM, "out of memory");
	s->version = 1;
	if (opt->authority_public) {
		s->authorized = true;
		r = keep_copy(opt->authority_public, opt->authority_public_size, &s->auth_key, &s->auth_key_size, err);
		if (r == 0 && mb_tpm_key_name(s->auth_key, s->auth_key_size, s->auth_key_name, err) < 0)
			r = prefix_error(err, -EINVAL, "the signing key");
		if (r == 0)
			r = mb_policy_authorize_digest(s->auth_key_name, s->policy, err);
	} else
		r = pcr_policy(t, opt, bank, s, err);
	if (r == 0 && opt->pin) {
		/* docs/seal.md "TPM + PIN": the PCR policy, then TPM2_PolicyAuthValue */
		s->pin = true;
		r = mb_policy_auth_value_digest(s->policy, s->policy, err);
		if (r == 0)
			r = tpm_pin_auth(opt->pin, opt->pin_size, auth, err);
	}
	if (r == 0)
		r = keep_copy(opt->eventlog, opt->eventlog_size, &s->eventlog, &s->eventlog_size, err);
	if (r < 0)
		goto fail;

	r = tpm_seal_blob(t, secret, secret_size, s->policy,
			  opt->parent == MB_SEAL_PARENT_AUTO ? TPM_PARENT_AUTO :
			  opt->parent == MB_SEAL_PARENT_PERSISTENT ? TPM_PARENT_PERSISTENT : TPM_PARENT_TEMPLATE,
			  opt->parent_handle, opt->pin ? auth : NULL, &blob, err);
	explicit_bzero(auth, sizeof(auth));
	if (r < 0)
		goto fail;
	s->pub = blob.pub;
	s->pub_size = blob.pub_size;
	s->priv = blob.priv;
	s->priv_size = blob.priv_size;
	s->parent_persistent = blob.parent_persistent;
	s->parent_handle = blob.parent_handle;
	s->parent_fallback = blob.persistent_unusable;
	*ret = s;
	return 0;
fail:
	explicit_bzero(auth, sizeof(auth));
	mb_sealed_free(s);
	return r;
}

/* mb_reseal_seal_options into the library's own struct */
static int reseal_seal_options(const mb_sealed *s, const mb_pcr_bank *predicted, size_t n_predicted,
			       mb_seal_options *ret, mb_error *err)
{
	const mb_digest_info *bank;
	uint32_t missing;
	size_t i;

	memset(ret, 0, sizeof(*ret));
	ret->size = sizeof(*ret);
	if (!s)
		return set_error(err, -EINVAL, "no sealed secret");
	if (s->authorized)
		return set_error(err, -EINVAL, "sealed to signed policies: nothing to reseal, a new release ships a new "
				 "signature ('mboot policy sign')");
	bank = mb_digest_by_alg(s->pcrs.alg);
	if (!bank)
		return set_error(err, -EINVAL, "no known PCR bank 0x%04x", s->pcrs.alg);
	if (n_predicted && !predicted)
		return set_error(err, -EINVAL, "no predicted values");
	if (n_predicted > MB_POLICY_OR_MAX - 1)
		return set_error(err, -E2BIG, "%zu predicted PCR states: a TPM2_PolicyOR has at most %u branches, one "
				 "today's", n_predicted, MB_POLICY_OR_MAX);
	for (i = 0; i < n_predicted; i++) {
		if (predicted[i].alg != s->pcrs.alg)
			return set_error(err, -EINVAL, "the predicted values are not of the sealed bank %s", bank->name);
		missing = s->mask & ~predicted[i].present;
		if (missing) {
			unsigned p = 0;

			while (!(missing & (1u << p)))
				p++;
			return set_error(err, -EINVAL, "the predicted values have no %s value for PCR %u, which is sealed to",
					 bank->name, p);
		}
	}
	ret->bank = s->pcrs.alg;
	ret->pcr_mask = s->mask;
	ret->predicted = n_predicted ? &predicted[0] : NULL;
	ret->more_predicted = n_predicted > 1 ? &predicted[1] : NULL;
	ret->n_more_predicted = n_predicted > 1 ? n_predicted - 1 : 0;
	if (s->parent_persistent) {
		ret->parent = MB_SEAL_PARENT_PERSISTENT;
		ret->parent_handle = s->parent_handle;
	} else
		ret->parent = MB_SEAL_PARENT_TEMPLATE;
	return 0;
}

MB_EXPORT int mb_reseal_seal_options(const mb_sealed *s, const mb_pcr_bank *predicted, size_t n_predicted,
				     mb_seal_options *ret, mb_error *err)
{
	mb_seal_options o;
	int r;

	if (!ret)
		return set_error(err, -EINVAL, "no options to fill");
	r = options_check_out(ret, sizeof(o), __func__, err);
	if (r < 0)
		return r;
	r = reseal_seal_options(s, predicted, n_predicted, &o, err);
	options_give(ret, &o, sizeof(o));
	return r;
}
