/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Judging an IMA list by the policy's "ima" section (docs/policy.md, "IMA"). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ima/ima-internal.h" /* ima_replay_banks: only the banks the values hold */
#include "policy-ima.h"
#include "shared/fail.h"
#include "shared/hex.h"
#include "policy-ima-json.h"

typedef struct ima_check {
	mb_ima_policy_result *r;
	size_t cap;
} ima_check;

static char *digest_text(const char *alg, const uint8_t *d, size_t n)
{
	size_t alen = strlen(alg);
	char *s = malloc(alen + 1 + 2 * n + 1);

	if (!s)
		return NULL;
	memcpy(s, alg, alen);
	s[alen] = ':';
	hex_format(d, n, s + alen + 1);
	return s;
}

static int add_violation(ima_check *k, size_t entry, const mb_ima_entry *e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int add_violation(ima_check *k, size_t entry, const mb_ima_entry *e, const char *fmt, ...)
{
	mb_ima_policy_result *r = k->r;
	mb_ima_violation *v;
	char reason[512];
	va_list ap;

	if (r->n_violations == k->cap) {
		size_t cap = k->cap ? 2 * k->cap : 16;
		mb_ima_violation *nv = realloc(r->violations, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		r->violations = nv;
		k->cap = cap;
	}
	v = &r->violations[r->n_violations];
	memset(v, 0, sizeof(*v));
	v->entry = entry;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	if (!(v->reason = strdup(reason)))
		return -ENOMEM;
	r->n_violations++;
	if (e) {
		v->offset = e->offset;
		if (e->path && !(v->path = strdup(e->path)))
			return -ENOMEM;
		if (e->digest && e->digest_algo && !(v->digest = digest_text(e->digest_algo, e->digest, e->digest_size)))
			return -ENOMEM;
	}
	return 0;
}

static bool allowed(const ima_name *n, const mb_ima_entry *e)
{
	uint32_t i;

	for (i = 0; i < n->n; i++)
		if (n->d[i].size == e->digest_size && strcmp(n->d[i].alg, e->digest_algo) == 0 &&
		    memcmp(n->d[i].bytes, e->digest, e->digest_size) == 0)
			return true;
	return false;
}

/* 1 excluded, 0 not, 2 the budget could not pay for an answer; or -ENOMEM. */
static int excluded(const mb_policy *p, const struct policy_ima *ima, pcre2_match_data *md, const char *path,
		    uint64_t *budget)
{
	size_t len = strlen(path), i;

	for (i = 0; i < ima->n_excludes; i++) {
		const ima_exclude *x = &ima->excludes[i];
		policy_match m;
		int rc;

		if (x->literal) {
			if (x->literal_len == len && memcmp(x->literal, path, len) == 0)
				return 1;
			continue;
		}
		rc = policy_match_steps(x->re, p->mctx, md, path, len, budget, &m);
		if (rc < 0)
			return rc;
		if (m == POLICY_MATCHED)
			return 1;
		if (m != POLICY_NO_MATCH)
			return 2;
	}
	return 0;
}

static int judge_entry(const mb_policy *p, ima_check *k, pcre2_match_data *md, uint64_t *budget, size_t i,
		       const mb_ima_entry *e)
{
	const struct policy_ima *ima = p->ima;
	mb_ima_policy_result *r = k->r;
	bool buf = e->template_kind == MB_IMA_TEMPLATE_IMA_BUF;
	const ima_name *n;
	ima_sig_check sig;
	uint32_t keyid = 0;
	char signote[512] = "";
	int x;

	if (e->check == MB_IMA_CHECK_BAD)
		return add_violation(k, i, e, "the template hash is not the hash of the entry's fields: the entry was "
				     "altered");
	if (e->check == MB_IMA_CHECK_VIOLATION)
		return add_violation(k, i, e, "a measurement violation (all-zero template hash): the kernel could not "
				     "measure the file reliably (open for write, or its list overflowed)");
	if (e->check == MB_IMA_CHECK_UNCHECKED || !e->path || !e->digest || !e->digest_algo)
		return add_violation(k, i, e, "template \"%s\": no file path and digest to judge", e->template_name);
	/* the first entry's digest is of the boot's PCRs: judged against them, not by the allowlist */
	if (i == 0 && strcmp(e->path, "boot_aggregate") == 0)
		return 0;
	n = ima_table_find(ima, buf ? &ima->bufs : &ima->files, e->path, strlen(e->path));
	if (n && allowed(n, e)) {
		r->n_allowed++;
		return 0;
	}
	if (e->sig && e->sig_size && ima->n_keys) {
		sig = policy_ima_check_sig(ima, e->sig, e->sig_size, e->digest, e->digest_size, &keyid);
		if (sig == IMA_SIG_VERIFIED) {
			r->n_signed++;
			return 0;
		}
		snprintf(signote, sizeof(signote), "; its signature %s", sig == IMA_SIG_BAD ?
			 "does not verify with the policy's key" : sig == IMA_SIG_UNKNOWN_KEY ?
			 "is by a key the policy does not list" : "is not a version-2 IMA signature");
		if (sig == IMA_SIG_BAD || sig == IMA_SIG_UNKNOWN_KEY)
			snprintf(signote + strlen(signote), sizeof(signote) - strlen(signote), " (key id %08x)", keyid);
	}
	if (e->modsig && e->modsig_size && ima->n_keys) {
		char who[160];

		sig = policy_ima_check_modsig(ima, e->modsig, e->modsig_size, e->modsig_digest_algo, e->modsig_digest,
					      e->modsig_digest_size, who, sizeof(who));
		if (sig == IMA_SIG_VERIFIED) {
			r->n_signed++;
			return 0;
		}
		snprintf(signote + strlen(signote), sizeof(signote) - strlen(signote), "; its appended signature %s",
			 sig == IMA_SIG_BAD ? "does not verify with the policy's key" : sig == IMA_SIG_UNKNOWN_KEY ?
			 "is by a key the policy does not list" : "is not a PKCS#7 signature of its d-modsig");
		if (sig == IMA_SIG_BAD || sig == IMA_SIG_UNKNOWN_KEY)
			snprintf(signote + strlen(signote), sizeof(signote) - strlen(signote), " (%s)", who);
	}
	if (buf) {
		if (n)
			return add_violation(k, i, e, "ima-buf \"%s\": this content is not allowed (the policy allows %u "
					     "other digest%s for it)%s", e->path, n->n, n->n == 1 ? "" : "s", signote);
		if (ima->unlisted_ignore) {
			r->n_unlisted++;
			return 0;
		}
		return add_violation(k, i, e, "ima-buf \"%s\" is not in the policy's \"ima-buf\"", e->path);
	}
	x = excluded(p, ima, md, e->path, budget);
	if (x < 0)
		return x;
	if (x == 1) {
		r->n_excluded++;
		return 0;
	}
	if (x == 2)
		return add_violation(k, i, e, "the excludes' regular expressions spent their step budget "
				     "(%u per 1,000 entries) before judging this path", MB_POLICY_STEP_BUDGET);
	if (n)
		return add_violation(k, i, e, "this digest of the file is not allowed (the policy allows %u other "
				     "digest%s for this path)%s", n->n, n->n == 1 ? "" : "s", signote);
	if (ima->unlisted_ignore) {
		r->n_unlisted++;
		return 0;
	}
	return add_violation(k, i, e, "the file is not in the policy's allowlist%s", signote);
}

/* PCR 10 of every bank of actual against the replay, and boot_aggregate against PCRs 0-9. */
static int judge_pcrs(const mb_ima_log *log, const mb_pcr_values *actual, ima_check *k, mb_error *err)
{
	static const uint16_t algs[] = { MB_ALG_SHA1, MB_ALG_SHA256, MB_ALG_SHA384, MB_ALG_SHA512, MB_ALG_SM3_256 };
	mb_ima_policy_result *r = k->r;
	mb_pcr_values *rec = mb_pcr_values_new(), *pad = mb_pcr_values_new();
	uint16_t held[sizeof(algs) / sizeof(algs[0])];
	size_t i, n_held = 0, n_padded;
	int rc;

	if (!rec || !pad) {
		rc = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	/* the banks compared below: replaying the others would be wasted */
	for (i = 0; i < sizeof(algs) / sizeof(algs[0]); i++)
		if (mb_pcr_values_get(actual, algs[i], 10))
			held[n_held++] = algs[i];
	rc = ima_replay_banks(log, held, n_held, rec, NULL, err);
	/* the zero-padded replay (kernels before 5.11) only for a bank the recomputed one misses */
	for (i = 0, n_padded = 0; rc == 0 && i < n_held; i++)
		if (mb_ima_pcr_compare(rec, NULL, actual, held[i], 10) != MB_IMA_MATCH_RECOMPUTED)
			held[n_padded++] = held[i];
	if (rc == 0 && n_padded)
		rc = ima_replay_banks(log, held, n_padded, NULL, pad, err);
	if (rc < 0)
		goto out;
	r->pcrs_checked = true;
	for (i = 0; i < sizeof(algs) / sizeof(algs[0]) && r->n_banks < MB_MAX_BANKS; i++) {
		mb_ima_match m = mb_ima_pcr_compare(rec, pad, actual, algs[i], 10);

		if (m == MB_IMA_MATCH_ABSENT)
			continue;
		r->banks[r->n_banks].alg = algs[i];
		r->banks[r->n_banks++].match = m;
		if (m == MB_IMA_MATCH_NONE &&
		    (rc = add_violation(k, SIZE_MAX, NULL, "PCR 10 (%s) is not the list's replay: entries are missing, "
					"added or altered", mb_digest_by_alg(algs[i])->name)) < 0)
			goto out_nomem;
	}
	if (r->n_banks == 0 &&
	    (rc = add_violation(k, SIZE_MAX, NULL, "the PCR values have no PCR 10 to compare the list with")) < 0)
		goto out_nomem;
	r->aggregate = mb_ima_boot_aggregate_check(log, actual);
	if (r->aggregate != MB_IMA_AGGREGATE_MATCH && r->aggregate != MB_IMA_AGGREGATE_MATCH_0_7 &&
	    (rc = add_violation(k, SIZE_MAX, NULL, "boot_aggregate: %s (%s)", mb_ima_aggregate_label(r->aggregate),
				r->aggregate == MB_IMA_AGGREGATE_NO_ENTRY ? "the first entry is not a boot_aggregate" :
				r->aggregate == MB_IMA_AGGREGATE_NO_PCRS ? "the values lack one of PCRs 0-9" :
				"the list is not of this boot")) < 0)
		goto out_nomem;
	rc = 0;
	goto out;
out_nomem:
	rc = set_error(err, rc, "out of memory");
out:
	mb_pcr_values_free(rec);
	mb_pcr_values_free(pad);
	return rc;
}

/* Entries [0, n) of log, which are entries first... of the whole list; then PCRs with actual. */
static int check_ima(const mb_policy *p, const mb_ima_log *log, size_t n, size_t first, const mb_pcr_values *actual,
		     mb_ima_policy_result *ret, mb_error *err)
{
	ima_check k = { ret, 0 };
	pcre2_match_data *md = NULL;
	uint64_t budget;
	size_t i;
	int rc = 0;

	if (!log || !ret)
		return set_error(err, -EINVAL, "no list or result");
	memset(ret, 0, sizeof(*ret));
	if (p && !p->ima)
		return set_error(err, -EINVAL, "the policy has no \"ima\" section");
	if (n > mb_ima_log_count(log) || first > SIZE_MAX - n)
		return set_error(err, -EINVAL, "entries past the list's end");
	ret->n_entries = n;
	budget = (uint64_t) MB_POLICY_STEP_BUDGET * (1 + n / 1000);
	/* PCRE2 is loaded by mb_policy_parse: only with a policy */
	if (p && !(md = sym_pcre2_match_data_create(1, NULL))) {
		rc = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		const mb_ima_entry *e = mb_ima_log_entry(log, i);

		if (p)
			rc = judge_entry(p, &k, md, &budget, first + i, e);
		else if (e->check == MB_IMA_CHECK_BAD) /* no policy: the list's own consistency only */
			rc = add_violation(&k, first + i, e, "the template hash is not the hash of the entry's fields: the "
					   "entry was altered");
		if (rc < 0) {
			rc = set_error(err, rc, "out of memory");
			goto out;
		}
	}
	if (actual)
		rc = judge_pcrs(log, actual, &k, err);
out:
	if (md)
		sym_pcre2_match_data_free(md);
	if (rc < 0)
		mb_ima_policy_result_done(ret);
	return rc;
}

MB_EXPORT int mb_policy_check_ima(const mb_policy *p, const mb_ima_log *log, const mb_pcr_values *actual,
				  mb_ima_policy_result *ret, mb_error *err)
{
	return check_ima(p, log, log ? mb_ima_log_count(log) : 0, 0, actual, ret, err);
}

MB_EXPORT int mb_policy_check_ima_entries(const mb_policy *p, const mb_ima_log *log, size_t n, uint64_t first,
					  mb_ima_policy_result *ret, mb_error *err)
{
	if (first > SIZE_MAX)
		return set_error(err, -EINVAL, "entry %llu is past what this machine can count", (unsigned long long) first);
	return check_ima(p, log, n, (size_t) first, NULL, ret, err);
}

MB_EXPORT bool mb_ima_policy_result_ok(const mb_ima_policy_result *r)
{
	return r && r->n_violations == 0;
}

MB_EXPORT void mb_ima_policy_result_done(mb_ima_policy_result *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->n_violations; i++) {
		free(r->violations[i].path);
		free(r->violations[i].digest);
		free(r->violations[i].reason);
	}
	free(r->violations);
	memset(r, 0, sizeof(*r));
}

json_t *policy_ima_result_json(const mb_ima_policy_result *r)
{
	json_t *o = json_object(), *banks = json_array(), *viol = json_array();
	size_t i;

	json_object_set_new(o, "checked", json_true());
	json_object_set_new(o, "ok", json_boolean(mb_ima_policy_result_ok(r)));
	json_object_set_new(o, "entries", json_integer((json_int_t) r->n_entries));
	json_object_set_new(o, "allowed", json_integer((json_int_t) r->n_allowed));
	json_object_set_new(o, "excluded", json_integer((json_int_t) r->n_excluded));
	json_object_set_new(o, "unlisted", json_integer((json_int_t) r->n_unlisted));
	json_object_set_new(o, "signed", json_integer((json_int_t) r->n_signed));
	if (r->pcrs_checked) {
		for (i = 0; i < r->n_banks; i++) {
			json_t *b = json_object();

			json_object_set_new(b, "bank", json_text(mb_digest_by_alg(r->banks[i].alg)->name));
			json_object_set_new(b, "match", json_text(mb_ima_match_label(r->banks[i].match)));
			json_array_append_new(banks, b);
		}
		json_object_set_new(o, "pcr10", banks);
		json_object_set_new(o, "boot_aggregate", json_text(mb_ima_aggregate_label(r->aggregate)));
	} else {
		json_decref(banks);
	}
	for (i = 0; i < r->n_violations; i++) {
		const mb_ima_violation *v = &r->violations[i];
		json_t *j = json_object();

		if (v->entry != SIZE_MAX) {
			json_object_set_new(j, "entry", json_integer((json_int_t) v->entry));
			json_object_set_new(j, "offset", json_integer((json_int_t) v->offset));
		}
		if (v->path)
			json_object_set_new(j, "path", json_text(v->path));
		if (v->digest)
			json_object_set_new(j, "digest", json_text(v->digest));
		json_object_set_new(j, "reason", json_text(v->reason));
		json_array_append_new(viol, j);
	}
	json_object_set_new(o, "violations", viol);
	return o;
}
