/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The IMA list an evidence carries (docs/attest.md, "IMA"): replayed in one bank against the
 * quoted PCR 10, from zero or from the machine's state of this boot (entries judged before and
 * PCR 10's value after them), up to the prefix whose replay is the quoted value. The kernel adds
 * an entry to its list before it extends PCR 10, so a list read after the quote may hold entries
 * the quote does not cover yet: they are left for the next evidence, unjudged. The covered
 * entries are judged by the policy's "ima" section, and the state after them is handed back.
 *
 * Why the state is safe to keep: it is only ever used where the quoted PCR 10 is its value
 * extended by the new entries, which the machine cannot arrange for other entries than the ones
 * the state judged (SHA-256 preimages).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/digest.h>
#include <mboot/ima.h>
#include <mboot/policy.h>

#include "lib/attest/attest-verify-internal.h"
#include "shared/fail.h"
#include "shared/hex.h"
#include "shared/json-doc.h"

#define IMA_PCR 10

void ima_state_done(ima_state *s)
{
	for (size_t i = 0; i < s->n_lines; i++)
		free(s->lines[i].detail);
	memset(s, 0, sizeof(*s));
}

/* ---- the state as text ---- */

static const char *rule_name(int rule)
{
	return rule == MB_IMA_MATCH_PADDED ? "padded" : "recomputed";
}

static int state_parse(const char *text, size_t size, ima_state *s, mb_error *err)
{
	json_t *root = NULL, *x, *lines;
	const mb_digest_info *d;
	int r;

	memset(s, 0, sizeof(*s));
	r = json_doc_open(text, size, 1u << 20, "IMA state", "mboot-ima-state", &root, err);
	if (r < 0)
		return r;
	x = json_doc_get(root, "bank", JSON_STRING);
	d = x ? mb_digest_by_name(json_string_value(x)) : NULL;
	if (!d) {
		r = set_error(err, -EBADMSG, "IMA state: no bank mboot computes");
		goto out;
	}
	s->bank = d->alg;
	x = json_doc_get(root, "rule", JSON_STRING);
	if (x && strcmp(json_string_value(x), "recomputed") == 0)
		s->rule = MB_IMA_MATCH_RECOMPUTED;
	else if (x && strcmp(json_string_value(x), "padded") == 0)
		s->rule = MB_IMA_MATCH_PADDED;
	else
		r = set_error(err, -EBADMSG, "IMA state: \"rule\" is not recomputed or padded");
	x = json_doc_get(root, "entries", JSON_INTEGER);
	if (r >= 0 && (!x || json_integer_value(x) < 1))
		r = set_error(err, -EBADMSG, "IMA state: \"entries\" is not a count of at least 1");
	else if (r >= 0)
		s->entries = (uint64_t) json_integer_value(x);
	x = json_doc_get(root, "problems", JSON_INTEGER);
	if (r >= 0 && (!x || json_integer_value(x) < 0))
		r = set_error(err, -EBADMSG, "IMA state: \"problems\" is not a count");
	else if (r >= 0)
		s->n_problems = (uint64_t) json_integer_value(x);
	x = json_doc_get(root, "aggregate", JSON_INTEGER);
	if (r >= 0 && (!x || json_integer_value(x) < MB_IMA_AGGREGATE_NO_ENTRY ||
		       json_integer_value(x) > MB_IMA_AGGREGATE_MISMATCH))
		r = set_error(err, -EBADMSG, "IMA state: \"aggregate\" is not one");
	else if (r >= 0)
		s->aggregate = (int) json_integer_value(x);
	if (r >= 0)
		r = json_doc_hex(root, "pcr10", "IMA state", s->pcr10, d->size, err);
	if (r >= 0)
		r = json_doc_hex(root, "last", "IMA state", s->last, sizeof(s->last), err);
	lines = json_doc_get(root, "earlier", JSON_ARRAY);
	if (r >= 0 && (!lines || json_array_size(lines) > IMA_STATE_LINES))
		r = set_error(err, -EBADMSG, "IMA state: \"earlier\" is not a list of at most %d", IMA_STATE_LINES);
	for (size_t i = 0; r >= 0 && i < json_array_size(lines); i++) {
		json_t *o = json_array_get(lines, i);
		json_t *name = json_is_object(o) ? json_doc_get(o, "reason", JSON_STRING) : NULL;
		json_t *detail = json_is_object(o) ? json_doc_get(o, "detail", JSON_STRING) : NULL;
		ima_state_line *l = &s->lines[s->n_lines];

		if (!name || !detail) {
			r = set_error(err, -EBADMSG, "IMA state: \"earlier\" %zu is not a reason and its detail", i);
			break;
		}
		if (strcmp(json_string_value(name), mb_attest_reason_name(MB_ATTEST_POLICY_VIOLATED)) == 0)
			l->reason = MB_ATTEST_POLICY_VIOLATED;
		else if (strcmp(json_string_value(name), mb_attest_reason_name(MB_ATTEST_LOG_NOT_VERIFIED)) == 0)
			l->reason = MB_ATTEST_LOG_NOT_VERIFIED;
		else {
			r = set_error(err, -EBADMSG, "IMA state: \"earlier\" %zu names no IMA reason", i);
			break;
		}
		if (!(l->detail = strdup(json_string_value(detail))))
			r = set_error(err, -ENOMEM, "out of memory");
		else
			s->n_lines++;
	}
	if (r >= 0 && s->n_problems < s->n_lines)
		r = set_error(err, -EBADMSG, "IMA state: fewer problems than earlier lines");
out:
	json_decref(root);
	if (r < 0)
		ima_state_done(s);
	return r;
}

static char *state_text(const ima_state *s)
{
	json_build_mark mark = json_build_begin();
	const mb_digest_info *d = mb_digest_by_alg(s->bank);
	json_t *root = json_object(), *lines = json_array();

	json_object_set_new(root, "version", json_integer(1));
	json_object_set_new(root, "kind", json_text("mboot-ima-state"));
	json_object_set_new(root, "bank", json_text(d->name));
	json_object_set_new(root, "rule", json_text(rule_name(s->rule)));
	json_object_set_new(root, "entries", json_integer((json_int_t) s->entries));
	json_object_set_new(root, "pcr10", json_hex(s->pcr10, d->size));
	json_object_set_new(root, "last", json_hex(s->last, sizeof(s->last)));
	json_object_set_new(root, "aggregate", json_integer(s->aggregate));
	json_object_set_new(root, "problems", json_integer((json_int_t) s->n_problems));
	for (size_t i = 0; i < s->n_lines; i++) {
		json_t *o = json_object();

		json_object_set_new(o, "reason", json_text(mb_attest_reason_name(s->lines[i].reason)));
		json_object_set_new(o, "detail", json_text(s->lines[i].detail));
		json_array_append_new(lines, o);
	}
	json_object_set_new(root, "earlier", lines);
	return json_doc_finish(root, mark);
}

MB_EXPORT const char *mb_attest_verdict_ima_state(const mb_attest_verdict *v)
{
	return v && v->ima_has_state ? v->ima_state_text : NULL;
}

MB_EXPORT int mb_attest_ima_state_resume(const char *state, size_t size, uint64_t *ret_entries, uint8_t ret_last[20],
					 mb_error *err)
{
	ima_state s;
	int r = state_parse(state, size, &s, err);

	if (r < 0)
		return r;
	*ret_entries = s.entries;
	memcpy(ret_last, s.last, sizeof(s.last));
	ima_state_done(&s);
	return 0;
}

/* ---- the replay ---- */

/*
 * The bank PCR 10 is replayed in: the weakest quoted bank at least as strong as SHA-256 and as
 * the verifier's and the policy's minimum (one strong bank binds the list; replaying every bank
 * would multiply the work), else the strongest quoted. 0 when no bank holds PCR 10.
 */
static uint16_t pick_bank(const mb_pcr_values *quoted, const mb_attest_verify_options *opts)
{
	const mb_digest_info *m;
	size_t need = 32, best = 0, strongest = 0, i;
	uint16_t pick = 0, fallback = 0;

	if ((m = mb_digest_by_alg(opts->min_bank)) && m->size > need)
		need = m->size;
	if (opts->policy && (m = mb_digest_by_alg(mb_policy_min_bank(opts->policy))) && m->size > need)
		need = m->size;
	for (i = 0; i < mb_pcr_values_n_banks(quoted); i++) {
		uint16_t alg = mb_pcr_values_bank_alg(quoted, i);
		const mb_digest_info *d = mb_digest_by_alg(alg);

		if (!d || !(mb_pcr_values_present(quoted, alg) & (1u << IMA_PCR)))
			continue;
		if (d->size >= need && (!best || d->size < best)) {
			best = d->size;
			pick = alg;
		}
		if (d->size > strongest) {
			strongest = d->size;
			fallback = alg;
		}
	}
	return pick ? pick : fallback;
}

typedef struct ima_replay {
	size_t covered;           /* entries of the carried list the quoted value covers */
	bool found;
	int rule;
	uint8_t value[MB_DIGEST_MAX];
} ima_replay;

/* The first prefix of the list whose replay on top of from (NULL: zero, either rule) is quoted. */
static int replay_prefix(const mb_ima_log *log, const ima_state *from, uint16_t bank, const uint8_t *quoted,
			 ima_replay *out, mb_error *err)
{
	const mb_digest_info *d = mb_digest_by_alg(bank);
	uint8_t rec[MB_DIGEST_MAX] = { 0 }, pad[MB_DIGEST_MAX] = { 0 }, ext[MB_DIGEST_MAX];
	bool try_rec = !from || from->rule == MB_IMA_MATCH_RECOMPUTED;
	bool try_pad = !from || from->rule == MB_IMA_MATCH_PADDED;
	size_t n = mb_ima_log_count(log), i;
	int r;

	memset(out, 0, sizeof(*out));
	if (from) {
		memcpy(rec, from->pcr10, d->size);
		memcpy(pad, from->pcr10, d->size);
	}
	for (i = 0;; i++) {
		const mb_ima_entry *e;

		if (try_rec && memcmp(rec, quoted, d->size) == 0) {
			*out = (ima_replay) { .covered = i, .found = true, .rule = MB_IMA_MATCH_RECOMPUTED };
			memcpy(out->value, rec, d->size);
			return 0;
		}
		if (try_pad && memcmp(pad, quoted, d->size) == 0) {
			*out = (ima_replay) { .covered = i, .found = true, .rule = MB_IMA_MATCH_PADDED };
			memcpy(out->value, pad, d->size);
			return 0;
		}
		if (i == n)
			return 0;
		e = mb_ima_log_entry(log, i);
		if (e->pcr != IMA_PCR)
			return set_error_at(err, -EOPNOTSUPP, e->offset, "IMA list: entry %zu extends PCR %u: mboot judges "
					    "the list on PCR 10 only", i, e->pcr);
		memset(ext, 0, sizeof(ext));
		if (e->check == MB_IMA_CHECK_VIOLATION) {
			memset(ext, 0xff, d->size);
		} else if (e->template_hash_alg == bank) {
			memcpy(ext, e->template_hash, d->size);
		} else {
			/* older kernels: the recorded hash zero-padded (or cut); 5.11 on: hashed again */
			memcpy(ext, e->template_hash, e->template_hash_size < d->size ? e->template_hash_size : d->size);
			if (try_pad && (r = mb_digest_extend(bank, pad, ext)) < 0)
				return set_error(err, r, "cannot extend %s", d->name);
			if (try_rec && (r = mb_ima_entry_template_hash(log, i, bank, ext, err)) < 0)
				return r;
			if (try_rec && (r = mb_digest_extend(bank, rec, ext)) < 0)
				return set_error(err, r, "cannot extend %s", d->name);
			continue;
		}
		if ((try_rec && (r = mb_digest_extend(bank, rec, ext)) < 0) ||
		    (try_pad && (r = mb_digest_extend(bank, pad, ext)) < 0))
			return set_error(err, r, "cannot extend %s", d->name);
	}
}

/* ---- the judgment ---- */

/* A reason of the IMA list, kept in the state too (the boot's problems stay named). */
static int add_problem(mb_attest_verdict *v, mb_attest_reason reason, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int add_problem(mb_attest_verdict *v, mb_attest_reason reason, const char *fmt, ...)
{
	char line[768];
	va_list ap;
	ima_state_line *l;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	v->ima.n_problems++;
	if (v->ima.n_lines < IMA_STATE_LINES) {
		l = &v->ima.lines[v->ima.n_lines];
		if (!(l->detail = strdup(line)))
			return -ENOMEM;
		l->reason = reason;
		v->ima.n_lines++;
	}
	return verdict_add(v, reason, "%s", line);
}

static int judge_entries(mb_attest_verdict *v, const mb_ima_log *log, size_t n, const mb_policy *policy,
			 mb_error *err)
{
	mb_ima_policy_result res;
	bool has_ima = mb_policy_has_ima(policy);
	int r = mb_policy_check_ima_entries(has_ima ? policy : NULL, log, n, v->ima_start, &res, err);

	if (r < 0)
		return r;
	v->ima_allowed = res.n_allowed;
	v->ima_excluded = res.n_excluded;
	v->ima_signed = res.n_signed;
	v->ima_unlisted = res.n_unlisted;
	v->ima_violations = res.n_violations;
	for (size_t i = 0; i < res.n_violations && r >= 0; i++) {
		const mb_ima_violation *x = &res.violations[i];

		/* without the section only the list's own consistency is judged: an altered entry */
		r = add_problem(v, has_ima ? MB_ATTEST_POLICY_VIOLATED : MB_ATTEST_LOG_NOT_VERIFIED,
				"IMA entry %zu \"%.300s\"%s%s%s: %s", x->entry, x->path ? x->path : "",
				x->digest ? " (" : "", x->digest ? x->digest : "", x->digest ? ")" : "", x->reason);
	}
	mb_ima_policy_result_done(&res);
	return r < 0 ? set_error(err, r, "out of memory") : 0;
}

int attest_judge_ima(mb_attest_verdict *v, attest_evidence *ev, const mb_pcr_values *quoted,
		     const mb_attest_verify_options *opts, mb_error *err)
{
	bool has_ima = mb_policy_has_ima(opts->policy);
	ima_state from = { 0 };
	bool have_from = false;
	mb_ima_log *log = NULL;
	ima_replay rp;
	uint16_t bank;
	const uint8_t *q10;
	const mb_ima_entry *last;
	int r;

	if (!ev->ima_carried)
		return has_ima ? verdict_add(v, MB_ATTEST_POLICY_VIOLATED, "the policy has an \"ima\" section, and the "
					     "evidence carries no IMA list: what ran after the boot cannot be judged") : 0;
	v->ima_carried = true;
	v->ima_start = ev->ima_start;
	r = json_doc_b64(ev->root, "ima_log", MB_IMA_MAX_SIZE, true, &ev->ima_log, &ev->ima_log_size, err);
	if (r < 0)
		return prefix_error(err, r, "evidence");
	if (ev->ima_log_size && (r = mb_ima_log_parse(ev->ima_log, ev->ima_log_size, MB_ALG_SHA1, &log, err)) < 0)
		return prefix_error(err, r, "evidence: ima_log");
	if (log && mb_ima_log_tail(log, NULL, NULL))
		r = set_error(err, -EBADMSG, "evidence: ima_log: the list ends inside an entry");
	if (r >= 0 && ev->ima_start && opts->ima_state) {
		r = state_parse(opts->ima_state, opts->ima_state_size, &from, err);
		have_from = r >= 0;
	}
	if (r < 0)
		goto out;
	bank = pick_bank(quoted, opts);
	if (!bank) {
		r = verdict_add(v, MB_ATTEST_LOG_NOT_VERIFIED, "the evidence carries an IMA list, and the quote does not "
				"cover PCR 10");
		goto out;
	}
	if (ev->ima_start && (!have_from || from.entries != ev->ima_start || from.bank != bank)) {
		r = verdict_add(v, MB_ATTEST_LOG_NOT_VERIFIED, "the IMA list starts at entry %llu, and the verifier holds "
				"no judgment of this boot's entries before it: the next evidence must carry the whole list",
				(unsigned long long) ev->ima_start);
		goto out;
	}
	q10 = mb_pcr_values_get(quoted, bank, IMA_PCR);
	r = log ? replay_prefix(log, have_from ? &from : NULL, bank, q10, &rp, err) : 0;
	if (!log)
		rp = (ima_replay) { .covered = 0, .found = have_from && memcmp(from.pcr10, q10,
			mb_digest_by_alg(bank)->size) == 0, .rule = from.rule };
	if (r < 0)
		goto out;
	if (!rp.found || (!ev->ima_start && rp.covered == 0)) {
		r = verdict_add(v, MB_ATTEST_LOG_NOT_VERIFIED, "PCR 10 (%s) is not the replay of %s of the IMA list%s: "
				"entries are missing, added or altered", mb_digest_by_alg(bank)->name,
				ev->ima_start ? "the entries judged before and any prefix" : "any prefix",
				ev->ima_start ? "'s new entries" : "");
		goto out;
	}
	v->ima_judged = true;
	v->ima_new = rp.covered;
	v->ima_pending = (log ? mb_ima_log_count(log) : 0) - rp.covered;
	if (have_from) {
		v->ima = from;
		memset(&from, 0, sizeof(from));
	}
	v->ima.bank = bank;
	v->ima.rule = rp.rule;
	v->ima.entries = ev->ima_start + rp.covered;
	memcpy(v->ima.pcr10, rp.value, sizeof(rp.value));
	if (rp.covered) {
		last = mb_ima_log_entry(log, rp.covered - 1);
		memset(v->ima.last, 0, sizeof(v->ima.last));
		memcpy(v->ima.last, last->template_hash, last->template_hash_size < 20 ? last->template_hash_size : 20);
	}
	/* the boot's earlier problems stand until it ends */
	for (size_t i = 0; i < v->ima.n_lines && r >= 0; i++)
		r = verdict_add(v, v->ima.lines[i].reason, "%s (an earlier evidence of this boot)", v->ima.lines[i].detail);
	if (r >= 0 && v->ima.n_problems > v->ima.n_lines)
		r = verdict_add(v, v->ima.n_lines ? v->ima.lines[0].reason : MB_ATTEST_POLICY_VIOLATED,
				"%llu more IMA problems earlier in this boot",
				(unsigned long long) (v->ima.n_problems - v->ima.n_lines));
	if (r >= 0 && !ev->ima_start) {
		v->ima.aggregate = (int) mb_ima_boot_aggregate_check(log, quoted);
		if (v->ima.aggregate == MB_IMA_AGGREGATE_MISMATCH)
			r = add_problem(v, MB_ATTEST_LOG_NOT_VERIFIED, "IMA boot_aggregate is not the hash of the quoted "
					"PCRs 0-9: the list is not of this boot");
		else if (has_ima && v->ima.aggregate != MB_IMA_AGGREGATE_MATCH &&
			 v->ima.aggregate != MB_IMA_AGGREGATE_MATCH_0_7)
			r = add_problem(v, MB_ATTEST_POLICY_VIOLATED, "IMA boot_aggregate cannot be checked: %s",
					v->ima.aggregate == MB_IMA_AGGREGATE_NO_ENTRY ? "the first entry is not one" :
					"the quote lacks one of PCRs 0-9");
	}
	if (r >= 0 && rp.covered)
		r = judge_entries(v, log, rp.covered, opts->policy, err);
	if (r >= 0) {
		if (!(v->ima_state_text = state_text(&v->ima)))
			r = -ENOMEM;
		else
			v->ima_has_state = true;
	}
out:
	ima_state_done(&from);
	mb_ima_log_free(log);
	if (r == -ENOMEM)
		set_error(err, r, "out of memory");
	return r;
}

json_t *attest_ima_json(const mb_attest_verdict *v)
{
	json_t *o = json_object();
	char buf[8];

	json_object_set_new(o, "carried", json_boolean(v->ima_carried));
	if (!v->ima_carried)
		return o;
	json_object_set_new(o, "start", json_integer((json_int_t) v->ima_start));
	json_object_set_new(o, "judged", json_boolean(v->ima_judged));
	if (!v->ima_judged)
		return o;
	json_object_set_new(o, "bank", json_text(mb_digest_alg_name(v->ima.bank, buf)));
	json_object_set_new(o, "rule", json_text(rule_name(v->ima.rule)));
	json_object_set_new(o, "entries", json_integer((json_int_t) v->ima.entries));
	json_object_set_new(o, "new_entries", json_integer((json_int_t) v->ima_new));
	json_object_set_new(o, "pending", json_integer((json_int_t) v->ima_pending));
	json_object_set_new(o, "allowed", json_integer((json_int_t) v->ima_allowed));
	json_object_set_new(o, "excluded", json_integer((json_int_t) v->ima_excluded));
	json_object_set_new(o, "signed", json_integer((json_int_t) v->ima_signed));
	json_object_set_new(o, "unlisted", json_integer((json_int_t) v->ima_unlisted));
	json_object_set_new(o, "violations", json_integer((json_int_t) v->ima_violations));
	json_object_set_new(o, "boot_problems", json_integer((json_int_t) v->ima.n_problems));
	json_object_set_new(o, "boot_aggregate", json_text(mb_ima_aggregate_label((mb_ima_aggregate) v->ima.aggregate)));
	return o;
}
