/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The luks part's adapter to the sealing API (luks-seal.h): sealing a disk key the way
 * `mboot seal` does, and unsealing it, with the sealed object passed around as text.
 * Only this file changes when mb_sealed does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/digest.h>
#include <mboot/seal.h>
#include <mboot/tpm-policy.h>
#include "shared/fail.h"
#include "luks-seal.h"

/* The policy of opt into s (no TPM but the PCR read of --values current). */
static int sealed_policy(mb_tpm *t, const mb_luks_enroll_options *opt, mb_sealed *s, mb_error *err)
{
	uint16_t alg = opt->bank ? opt->bank : MB_ALG_SHA256;
	mb_pcr_values *v = NULL;
	int r;

	s->version = 1;
	if (opt->authority_public) {
		r = mb_tpm_key_name(opt->authority_public, opt->authority_public_size, s->auth_key_name, err);
		if (r < 0)
			return r;
		r = mb_policy_authorize_digest(s->auth_key_name, s->policy, err);
		if (r < 0)
			return r;
		s->auth_key = malloc(opt->authority_public_size);
		if (!s->auth_key)
			return set_error(err, -ENOMEM, "out of memory");
		memcpy(s->auth_key, opt->authority_public, opt->authority_public_size);
		s->auth_key_size = opt->authority_public_size;
		s->authorized = true;
		return 0;
	}
	if (!mb_digest_by_alg(alg))
		return set_error(err, -EINVAL, "unknown PCR bank 0x%04x", alg);
	if (opt->values) {
		if (opt->values->alg != alg)
			return set_error(err, -EINVAL, "the PCR values are of another bank");
		s->pcrs = *opt->values;
	} else {
		v = mb_pcr_values_new();
		if (!v)
			return set_error(err, -ENOMEM, "out of memory");
		r = mb_tpm_read_pcrs(t, &alg, 1, opt->pcr_mask, v, NULL, err);
		if (r == 0 && (mb_pcr_values_get_bank(v, alg, &s->pcrs) < 0 ||
			       (s->pcrs.present & opt->pcr_mask) != opt->pcr_mask))
			r = set_error(err, MB_ERR_TPM, "TPM: the %s bank does not have all of the PCRs to seal to",
				      mb_digest_by_alg(alg)->name);
		mb_pcr_values_free(v);
		if (r < 0)
			return r;
	}
	s->mask = opt->pcr_mask;
	return mb_sealed_set_policy(s, &s->pcrs, NULL, err);
}

int luks_seal_key(mb_tpm *t, const uint8_t *key, size_t key_size, const mb_luks_enroll_options *opt,
		  char **ret_json, mb_error *err)
{
	mb_tpm_sealed_blob blob = { 0 };
	mb_sealed s = { 0 };
	int r;

	*ret_json = NULL;
	r = sealed_policy(t, opt, &s, err);
	if (r == 0)
		r = mb_tpm_seal(t, key, key_size, s.policy, &blob, err);
	if (r < 0) {
		mb_sealed_done(&s);
		return r;
	}
	s.pub = blob.pub;
	s.pub_size = blob.pub_size;
	s.priv = blob.priv;
	s.priv_size = blob.priv_size;
	s.parent_persistent = blob.parent_persistent;
	s.parent_handle = blob.parent_handle;
	*ret_json = mb_sealed_to_json(&s);
	mb_sealed_done(&s);
	return *ret_json ? 0 : set_error(err, -ENOMEM, "out of memory");
}

int luks_sealed_check(const char *json, size_t size, luks_sealed_info *info, mb_error *err)
{
	mb_sealed s;
	int r = mb_sealed_parse(json, size, &s, err);

	if (r < 0)
		return r;
	memset(info, 0, sizeof(*info));
	info->policy = s.authorized ? "authorize" : s.n_branches ? "or" : "pcr";
	info->bank = s.authorized ? 0 : s.pcrs.alg;
	info->pcrs = s.authorized ? 0 : s.mask;
	info->n_branches = s.n_branches;
	if (s.authorized)
		memcpy(info->auth_key_name, s.auth_key_name, MB_TPM_NAME_SIZE);
	mb_sealed_done(&s);
	return 0;
}

int luks_unseal_key(mb_tpm *t, const char *json, size_t size, const mb_unseal_options *opt, uint8_t *out,
		    size_t *out_size, mb_unseal_explanation **explanation, mb_error *err)
{
	mb_sealed s;
	int r;

	*explanation = NULL;
	r = mb_sealed_parse(json, size, &s, err);
	if (r < 0)
		return r;
	r = mb_tpm_unseal_sealed(t, &s, opt, out, out_size, explanation, err);
	mb_sealed_done(&s);
	return r;
}
