/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Evidence judged for a machine (mb_attest_verify under its policy), each boot once: the verdict
 * of a boot's logs is kept by boot key and policy (fleet-cache.c) for the boot's later evidence,
 * and the machine's record parsed once. Nothing here writes the database.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/fail.h"
#include "shared/hex.h"
#include "verifierd/fleet-internal.h"

/* A machine without a policy is never trusted: the verdict says so in its own words. */
static int add_no_policy(fleet_judgment *j, const char *why)
{
	json_build_mark mark = json_build_begin();
	json_t *o = json_from_text(j->verdict), *reasons, *r;
	char *text;

	if (!o || !(reasons = json_object_get(o, "reasons"))) {
		json_decref(o);
		return -EINVAL;
	}
	r = json_object();
	json_object_set_new(r, "name", json_text("no-policy"));
	json_object_set_new(r, "detail", json_text(why));
	json_array_append_new(reasons, r);
	json_object_set_new(o, "trusted", json_boolean(false));
	text = json_write_built(o, JSON_LAYOUT_COMPACT, mark);
	json_decref(o);
	if (!text)
		return -ENOMEM;
	free(j->verdict);
	j->verdict = text;
	j->trusted = false;
	j->n_reasons++;
	return 0;
}

/*
 * Does a verdict with this reason still come from the machine's TPM? A quote the enrolled AK did
 * not sign, that the TPM did not make, or that answers another nonce could have been made by
 * anyone: it proves nothing about the machine, and storing it would let anyone overwrite the
 * machine's last verdict and the boot chain the page shows. What a genuine quote shows (values
 * that disagree with the log, a policy refusal) is the machine's own state, and is stored.
 */
bool fleet_reason_refuses(mb_attest_reason r)
{
	switch (r) {
	case MB_ATTEST_AK_NOT_ENROLLED:
	case MB_ATTEST_SIGNATURE_INVALID:
	case MB_ATTEST_SIGNATURE_SCHEME:
	case MB_ATTEST_NOT_TPM_GENERATED:
	case MB_ATTEST_NOT_QUOTE:
	case MB_ATTEST_NONCE_MISMATCH:
		return true;
	default:
		return false;
	}
}

/* judged_lookup: the verdict of this boot under the machine's policy, if one is kept. */
typedef struct judged_lookup_ctx {
	fleet_cache *cache;
	const char *policy;
	fleet_cache_entry *entry; /* the reference taken, released after the verification */
} judged_lookup_ctx;

static const mb_attest_verdict *judged_lookup(const uint8_t boot_key[32], void *p)
{
	judged_lookup_ctx *c = p;
	uint8_t key[32];

	if (c->entry || fleet_judged_key(boot_key, c->policy, key) < 0)
		return NULL;
	c->entry = fleet_cache_get(c->cache, key);
	return c->entry ? fleet_cache_value(c->entry) : NULL;
}

static void free_verdict(void *v)
{
	mb_attest_verdict_free(v);
}

static void free_machine(void *m)
{
	mb_attest_machine_free(m);
}

/* The machine's record parsed, kept by its SHA-256 (a new record, enrolled again, is another
 * key); a reference in *ret_entry to release. NULL (parsed by mb_attest_verify) when none can be
 * kept or the record does not parse (mb_attest_verify then says why). */
static const mb_attest_machine *machine_parsed(fleet_worker *w, const store_machine *m, fleet_cache_entry **ret_entry)
{
	mb_attest_machine *parsed = NULL;
	uint8_t key[32];

	*ret_entry = NULL;
	if (!w->f->machines || mb_digest(MB_ALG_SHA256, m->record, strlen(m->record), key) < 0)
		return NULL;
	if (!(*ret_entry = fleet_cache_get(w->f->machines, key))) {
		if (mb_attest_machine_parse(m->record, strlen(m->record), &parsed, NULL) < 0)
			return NULL;
		fleet_cache_add(w->f->machines, key, parsed, free_machine);
		*ret_entry = fleet_cache_get(w->f->machines, key);
	}
	return *ret_entry ? fleet_cache_value(*ret_entry) : NULL;
}

/* A verdict that judged its logs (not taken from the cache) kept for the boot's later evidence. */
static void judged_keep(fleet_worker *w, const char *policy, mb_attest_verdict **v, fleet_judgment *j)
{
	uint8_t boot_key[32], key[32];

	if (!mb_attest_verdict_boot_key(*v, boot_key))
		return;
	hex_format(boot_key, sizeof(boot_key), j->boot);
	if (!j->boot_reused && j->authentic && fleet_judged_key(boot_key, policy, key) >= 0) {
		fleet_cache_add(w->f->judged, key, *v, free_verdict);
		*v = NULL;
	}
}

int fleet_judge(fleet_worker *w, const store_machine *m, const char *evidence, size_t evidence_size,
		const char *nonce_hex, fleet_judgment *ret, mb_error *err, bool *ret_db_error)
{
	judged_lookup_ctx lookup = { .cache = w->f->judged };
	fleet_cache_entry *machine = NULL;
	uint8_t nonce[MB_ATTEST_NONCE_MAX];
	char norm[2 * MB_ATTEST_NONCE_MAX + 1];
	mb_attest_verify_options opts = MB_OPTIONS_INIT(mb_attest_verify_options);
	mb_attest_verdict *v = NULL;
	const mb_policy *policy = NULL;
	mb_policy *owned = NULL;
	size_t nonce_size, i;
	int r;

	memset(ret, 0, sizeof(*ret));
	*ret_db_error = false;
	if (fleet_nonce_parse(nonce_hex, norm, nonce, &nonce_size) < 0)
		return set_error(err, -EBADMSG, "the stored nonce is not hex");
	if (m->policy) {
		r = fleet_policy_get(w, m->policy, &policy, &owned, err);
		if (r < 0) {
			*ret_db_error = r == -ENOTCONN || r == -EIO || r == -EBUSY;
			return r;
		}
	}
	opts.nonce = nonce;
	opts.nonce_size = nonce_size;
	opts.policy = policy;
	opts.min_bank = w->f->min_bank;
	if (w->f->judged) {
		/* the policy judged under: none when the machine's is no longer stored */
		lookup.policy = policy ? m->policy : NULL;
		opts.judged_lookup = judged_lookup;
		opts.judged_ctx = &lookup;
	}
	opts.machine_parsed = machine_parsed(w, m, &machine);
	/* kept under the machine's policy and record only: store.c drops it when either changes */
	opts.ima_state = m->ima_state;
	opts.ima_state_size = m->ima_state ? strlen(m->ima_state) : 0;
	r = mb_attest_verify(evidence, evidence_size, m->record, strlen(m->record), &opts, &v, err);
	fleet_cache_release(machine);
	mb_policy_free(owned);
	/* taken when the quote passed and the verdict's key is the entry's */
	ret->boot_reused = lookup.entry && r >= 0 && mb_attest_verdict_boot_key(v, (uint8_t[32]) { 0 });
	fleet_cache_release(lookup.entry);
	if (r < 0)
		return r;
	ret->verdict = mb_attest_verdict_to_json(v, false);
	if (mb_attest_verdict_ima_state(v) && !(ret->ima_state = strdup(mb_attest_verdict_ima_state(v)))) {
		free(ret->verdict);
		ret->verdict = NULL;
	}
	{
		uint8_t log_sha256[32];
		bool carried = true;

		ret->log_named = mb_attest_verdict_eventlog_sha256(v, log_sha256, &carried) && !carried;
	}
	ret->trusted = mb_attest_verdict_trusted(v);
	ret->n_reasons = (int64_t) mb_attest_verdict_n_reasons(v);
	ret->authentic = true;
	for (i = 0; i < (size_t) ret->n_reasons && ret->authentic; i++) {
		const char *detail = NULL;
		mb_attest_reason why = mb_attest_verdict_reason(v, i, &detail);

		if (fleet_reason_refuses(why)) {
			ret->authentic = false;
			ret->refusal = why;
			snprintf(ret->refusal_detail, sizeof(ret->refusal_detail), "%s", detail ? detail : "");
		}
	}
	if (w->f->judged)
		judged_keep(w, lookup.policy, &v, ret);
	if (ret->boot[0])
		atomic_fetch_add(ret->boot_reused ? &w->f->boots_reused : &w->f->boots_judged, 1);
	mb_attest_verdict_free(v);
	if (!ret->verdict) {
		free(ret->ima_state);
		ret->ima_state = NULL;
		return set_error(err, -ENOMEM, "out of memory");
	}
	if (!policy) {
		char why[200];

		/* The fix in the operator's words: the command, with this machine's id. */
		snprintf(why, sizeof(why), "%s: give it one with 'mboot fleet policy set %s POLICY'",
			 m->policy ? "the machine's policy is no longer stored" : "the machine has no policy", m->id);
		r = add_no_policy(ret, why);
		if (r < 0) {
			free(ret->verdict);
			free(ret->ima_state);
			ret->verdict = ret->ima_state = NULL;
			return set_error(err, r, "the verdict could not be amended");
		}
	}
	return 0;
}

void fleet_judgment_reset(fleet_judgment *j)
{
	free(j->verdict);
	free(j->ima_state);
	memset(j, 0, sizeof(*j));
}
