/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Judging a verified log against a policy. Only the verified bank's digests are used. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/events.h>
#include "lib/events/digest-check.h"
#include "lib/grub/grub.h"
#include "event-text.h"
#include "policy-internal.h"
#include "shared/fail.h"
#include "shared/hex.h"

/* A list of closest_rules: its strings, then itself. */
static void free_rule_list(char **list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

/* Takes the closest rules (closest[0..n_closest), may be NULL), whether it fails or not. */
static int add_violation(mb_policy_result *res, size_t *cap, uint32_t pcr, const mb_event *ev, char **closest,
			 size_t n_closest, const char *fmt, ...) __attribute__((format(printf, 7, 8)));

static int add_violation(mb_policy_result *res, size_t *cap, uint32_t pcr, const mb_event *ev, char **closest,
			 size_t n_closest, const char *fmt, ...)
{
	va_list ap;
	char *reason = NULL;
	int n;

	if (res->n_violations == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		mb_policy_violation *v = realloc(res->violations, ncap * sizeof(*v));

		if (!v) {
			free_rule_list(closest, n_closest);
			return -ENOMEM;
		}
		res->violations = v;
		*cap = ncap;
	}
	va_start(ap, fmt);
	n = vasprintf(&reason, fmt, ap);
	va_end(ap);
	if (n < 0) {
		free_rule_list(closest, n_closest);
		return -ENOMEM;
	}
	res->violations[res->n_violations++] = (mb_policy_violation) { .pcr = pcr, .event = ev, .reason = reason,
									 .closest_rules = closest,
									 .n_closest_rules = n_closest };
	return 0;
}

static const policy_digest *value_for(const policy_pcr *pp, uint16_t alg)
{
	size_t i;

	for (i = 0; i < pp->n_values; i++)
		if (pp->values[i].alg == alg)
			return &pp->values[i];
	return NULL;
}

static bool allowed_digest(const policy_rule *r, const mb_event_digest *d)
{
	size_t i, k;

	for (i = 0; i < r->n_allowed; i++)
		for (k = 0; k < r->allowed[i].n; k++)
			if (r->allowed[i].d[k].alg == d->alg && r->allowed[i].d[k].size == d->size &&
			    memcmp(r->allowed[i].d[k].bytes, d->bytes, d->size) == 0)
				return true;
	return false;
}

typedef struct check_ctx {
	mb_policy_result *res;
	size_t cap;
	uint16_t bank;
	const mb_digest_info *info;
	pcre2_match_context *mctx;  /* the policy's, with a limit per try */
	pcre2_match_data *md;
	uint64_t budget;            /* PCRE2 steps left (an upper bound on what was spent) */
} check_ctx;

/* A rule's pattern against an event's text: plain text compared as text, the rest by PCRE2
 * charged to the check's budget. */
static int match_budgeted(check_ctx *c, const policy_rule *r, const char *text, size_t len, policy_match *ret)
{
	if (r->literal) {
		*ret = len == r->literal_len && memcmp(text, r->literal, len) == 0 ? POLICY_MATCHED : POLICY_NO_MATCH;
		return 0;
	}
	return policy_match_steps(r->re, c->mctx, c->md, text, len, &c->budget, ret);
}

/* What a governed PCR's judgement rests on: the log must account for its value in the bank. */
static int check_trusted(check_ctx *c, uint32_t pcr, const mb_verify_pcr *vr, bool *ok)
{
	char hex[2 * MB_DIGEST_MAX + 1];

	*ok = mb_verify_pcr_trusted(vr);
	if (*ok)
		return 0;
	if (!vr)
		return add_violation(c->res, &c->cap, pcr, NULL, NULL, 0, "PCR %u has no %s value to judge the log against",
				     pcr, c->info->name);
	if (vr->verdict == MB_PCR_NOT_COVERED)
		return add_violation(c->res, &c->cap, pcr, NULL, NULL, 0,
				     "PCR %u (%s) is %s, not its reset value, and the log has no event for it: "
				     "what was measured into it is not in the log", pcr, c->info->name,
				     hex_format(vr->actual, vr->size, hex));
	return add_violation(c->res, &c->cap, pcr, NULL, NULL, 0,
			     "PCR %u (%s) did not verify (%s): the log does not account for its value, so its "
			     "events prove nothing", pcr, c->info->name, mb_pcr_verdict_name(vr->verdict));
}

/* One event or userspace record of a PCR, as its rules see it. */
typedef struct judged {
	const mb_event *ev;            /* or... */
	const mb_cel_record *rec;
	size_t rec_index;
	grub_string_kind derived;
	const mb_event_digest *d;      /* in the judged bank, or NULL */
	bool text_trusted;             /* its text hashes to its digests (the judged bank's included) */
	bool digest_elsewhere;         /* its digest covers what the log does not hold (a file, an image) */
} judged;

/* Match j against the PCR's rules (counting, ordered from *cursor); a violation when none allows it. */
static int judge_one(check_ctx *c, const policy_pcr *pp, uint32_t *counts, size_t *cursor, const judged *j,
		     uint32_t pcr, bool *violated)
{
	const uint32_t type = j->ev ? j->ev->type : 0;
	char *text = NULL;
	bool text_done = false, over_max = false, limit_hit = false, budget_spent = false;
	size_t text_len = 0;
	int matched = -1, rc;
	char **closest = NULL;
	size_t k, n_closest;

	for (k = pp->ordered ? *cursor : 0; k < pp->n_rules; k++) {
		const policy_rule *r = &pp->rules[k];
		bool match = false;

		if (r->userspace != !j->ev || (j->ev && r->type != type))
			continue;
		if (!j->d)
			continue; /* nothing in the judged bank: no rule can vouch for it (PITFALLS #32) */
		if (r->kind == RULE_DIGESTS) {
			match = allowed_digest(r, j->d);
		} else if (j->text_trusted) {
			policy_match m;

			if (!text_done) {
				errno = 0;
				text = j->ev ? policy_judged_text(j->ev, j->derived) : strndup(j->rec->text, j->rec->text_len);
				/* no text is a violation, no memory an error (not a violation of a good boot) */
				if (!text && errno == ENOMEM)
					return -ENOMEM;
				text_len = text ? strlen(text) : 0;
				text_done = true;
			}
			if (!text)
				continue;
			rc = match_budgeted(c, r, text, text_len, &m);
			if (rc < 0) {
				free(text);
				return rc;
			}
			limit_hit |= m == POLICY_OVER_LIMIT;
			budget_spent |= m == POLICY_OVER_BUDGET;
			match = m == POLICY_MATCHED;
		}
		if (!match)
			continue;
		if (r->max && counts[k] >= r->max) {
			over_max = true;
			continue;
		}
		matched = (int) k;
		break;
	}
	if (matched >= 0) {
		free(text);
		counts[matched]++;
		if (pp->ordered)
			*cursor = (size_t) matched;
		c->res->events_matched++;
		return 0;
	}
	*violated = true;
	/* The hint compares the event's text as it claims it, trusted or not. */
	if (!text_done && j->ev)
		text = policy_judged_text(j->ev, j->derived);
	n_closest = j->ev ? policy_closest_rules(pp, type, text, text ? strlen(text) : 0, &closest) : 0;
	free(text);
	rc = add_violation(c->res, &c->cap, pcr, j->ev, closest, n_closest, "%s%s%s%s",
			   !j->d ? "it has no digest in the verified bank; " :
			   !j->text_trusted && j->digest_elsewhere ?
				   "its digest covers something not in the log, so its text proves nothing; " :
			   !j->text_trusted && j->ev ? "its data does not hash to its digest (not trusted); " : "",
			   budget_spent ? "not judged: the check spent its regular-expression budget" :
			   over_max ? "a matching rule already matched its maximum number of times" :
			   "no rule of the policy allows it",
			   limit_hit ? " (a regular expression hit its match limit)" : "",
			   pp->ordered && !over_max && !budget_spent ? " at this position (the PCR's rules are ordered)" : "");
	if (rc == 0 && j->rec) {
		c->res->violations[c->res->n_violations - 1].record = j->rec;
		c->res->violations[c->res->n_violations - 1].record_index = j->rec_index;
	}
	return rc;
}

static int judge_values(check_ctx *c, const policy_pcr *pp, uint32_t pcr, const mb_verify_pcr *vr, bool *violated)
{
	const policy_digest *want = value_for(pp, c->bank);
	char hw[2 * MB_DIGEST_MAX + 1], hh[2 * MB_DIGEST_MAX + 1];

	if (!want) {
		*violated = true;
		return add_violation(c->res, &c->cap, pcr, NULL, NULL, 0, "the policy has no %s value for PCR %u",
				     c->info->name, pcr);
	}
	if (memcmp(want->bytes, vr->actual, c->info->size) != 0) {
		*violated = true;
		return add_violation(c->res, &c->cap, pcr, NULL, NULL, 0, "PCR %u (%s) is %s, the policy expects %s", pcr,
				     c->info->name, hex_format(vr->actual, c->info->size, hh),
				     hex_format(want->bytes, c->info->size, hw));
	}
	return 0;
}

/* "0-7" or "0, 2, 4": the PCRs of a mask, for messages. */
static const char *pcr_list_text(uint32_t mask, char buf[128])
{
	size_t o = 0;
	unsigned p = 0;

	buf[0] = 0;
	while (p < MB_PCR_COUNT) {
		unsigned end = p;

		if (!(mask & (1u << p))) {
			p++;
			continue;
		}
		while (end + 1 < MB_PCR_COUNT && (mask & (1u << (end + 1))))
			end++;
		o += (size_t) snprintf(buf + o, 128 - o, "%s%u", o ? ", " : "", p);
		if (end >= p + 2)
			o += (size_t) snprintf(buf + o, 128 - o, "-%u", end);
		else if (end == p + 1)
			o += (size_t) snprintf(buf + o, 128 - o, ", %u", end);
		p = end + 1;
	}
	return buf;
}

static const policy_digest *set_value_for(const policy_set_value *sv, uint16_t alg)
{
	size_t i;

	for (i = 0; i < sv->n_values; i++)
		if (sv->values[i].alg == alg)
			return &sv->values[i];
	return NULL;
}

/*
 * The firmware PCRs against the policy's firmware sets: good when every one of them holds the
 * value one set gives, the same set for all (a PCR 0 of one release next to a PCR 2 of
 * another is no release anyone tested). Else each PCR that differs from the closest set (the
 * one most PCRs match) is a violation.
 */
static int judge_sets(check_ctx *c, const mb_policy *p, const mb_verify_result *verified)
{
	mb_policy_result *res = c->res;
	uint32_t trusted = 0, pcr;
	size_t s, k, best = 0, best_score = 0;
	char list[128], hw[2 * MB_DIGEST_MAX + 1], hh[2 * MB_DIGEST_MAX + 1];
	int rc;

	for (pcr = 0; pcr < MB_PCR_COUNT; pcr++) {
		bool ok;

		if (!(p->fw_pcrs & (1u << pcr)))
			continue;
		rc = check_trusted(c, pcr, mb_verify_result_pcr(verified, c->bank, pcr), &ok);
		if (rc < 0)
			return rc;
		trusted |= ok ? 1u << pcr : 0;
		res->pcr[pcr] = ok ? MB_POLICY_PCR_OK : MB_POLICY_PCR_VIOLATED;
	}
	for (s = 0; s < p->n_fw_sets; s++) {
		const policy_fw_set *set = &p->fw_sets[s];
		size_t score = 0;

		for (k = 0; k < set->n; k++) {
			const policy_digest *want = set_value_for(&set->v[k], c->bank);
			const mb_verify_pcr *vr = mb_verify_result_pcr(verified, c->bank, set->v[k].pcr);

			if ((trusted & (1u << set->v[k].pcr)) && want && memcmp(want->bytes, vr->actual, c->info->size) == 0)
				score++;
		}
		if (score == set->n) {
			res->firmware_set = strdup(set->name);
			return res->firmware_set ? 0 : -ENOMEM;
		}
		if (score > best_score) {
			best = s;
			best_score = score;
		}
	}
	pcr_list_text(p->fw_pcrs, list);
	for (k = 0; k < p->fw_sets[best].n; k++) {
		const policy_fw_set *set = &p->fw_sets[best];
		const policy_digest *want = set_value_for(&set->v[k], c->bank);
		const mb_verify_pcr *vr = mb_verify_result_pcr(verified, c->bank, set->v[k].pcr);

		pcr = set->v[k].pcr;
		if (!(trusted & (1u << pcr)))
			continue; /* its violation is there already */
		if (want && memcmp(want->bytes, vr->actual, c->info->size) == 0)
			continue;
		res->pcr[pcr] = MB_POLICY_PCR_VIOLATED;
		if (!want)
			rc = add_violation(res, &c->cap, pcr, NULL, NULL, 0, "no firmware set holds all of PCRs %s; the "
					   "closest, \"%s\" (%zu of %zu PCRs match), has no %s value for PCR %u", list,
					   set->name, best_score, set->n, c->info->name, pcr);
		else
			rc = add_violation(res, &c->cap, pcr, NULL, NULL, 0, "PCR %u (%s) is %s: no firmware set holds all "
					   "of PCRs %s; the closest, \"%s\" (%zu of %zu PCRs match), expects %s", pcr,
					   c->info->name, hex_format(vr->actual, c->info->size, hh), list, set->name,
					   best_score, set->n, hex_format(want->bytes, c->info->size, hw));
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int judge_rules(check_ctx *c, const policy_pcr *pp, uint32_t pcr, const mb_event_log *log,
		       const mb_cel_log *userspace, bool *violated)
{
	size_t n = mb_event_log_count(log), n_us = userspace ? mb_cel_log_count(userspace) : 0, i, k, cursor = 0;
	uint32_t *counts = calloc(pp->n_rules + 1, sizeof(*counts));
	const mb_digest_check *checks = event_log_digest_checks(log);
	grub_string_walk walk = { 0 };
	int rc = 0;

	if (!counts)
		return -ENOMEM;
	for (i = 0; i < n && rc == 0; i++) {
		const mb_event *ev = mb_event_log_event(log, i);
		judged j = { .ev = ev };
		grub_string_kind label;
		const uint8_t *body;
		size_t len;
		mb_digest_check check;

		if (ev->pcr != pcr || !mb_event_extends(ev))
			continue;
		j.derived = grub_string_walk_next(&walk, ev);
		j.d = mb_event_digest_for(ev, c->bank);
		if (checks)
			check = checks[i];
		else if (mb_event_check_digest(ev, &check) < 0)
			check.status = MB_DIGEST_UNCHECKABLE;
		j.text_trusted = check.status == MB_DIGEST_MATCH || check.status == MB_DIGEST_MATCH_ALTERNATE;
		j.digest_elsewhere = check.status == MB_DIGEST_UNCHECKABLE;
		label = grub_string_split(ev, &body, &len);
		if (label != j.derived) {
			/* GRUB never writes another label than the one it measured for: edited. */
			*violated = true;
			rc = add_violation(c->res, &c->cap, pcr, ev, NULL, 0,
					   "labelled \"%.*s\" but GRUB measured it as \"%.*s\" (the label is not covered by "
					   "the digest: the log was edited); judged as the latter",
					   (int) strlen(grub_string_prefix(label)) - 2, grub_string_prefix(label),
					   (int) strlen(grub_string_prefix(j.derived)) - 2, grub_string_prefix(j.derived));
			if (rc < 0)
				break;
		}
		rc = judge_one(c, pp, counts, &cursor, &j, pcr, violated);
	}
	for (i = 0; i < n_us && rc == 0; i++) {
		const mb_cel_record *rec = mb_cel_log_record(userspace, i);
		judged j = { .rec = rec, .rec_index = i };

		if (rec->pcr != pcr)
			continue;
		j.d = mb_cel_record_digest(rec, c->bank);
		if (j.d && rec->text) {
			uint8_t md[MB_DIGEST_MAX];

			j.text_trusted = mb_digest(c->bank, rec->text, rec->text_len, md) == 0 &&
					 memcmp(md, j.d->bytes, j.d->size) == 0;
		}
		rc = judge_one(c, pp, counts, &cursor, &j, pcr, violated);
	}
	for (k = 0; k < pp->n_rules && rc == 0; k++)
		if (pp->rules[k].required && counts[k] == 0) {
			const policy_rule *r = &pp->rules[k];

			*violated = true;
			if (r->pattern)
				rc = add_violation(c->res, &c->cap, pcr, NULL, NULL, 0, "required: %s (text ~ /%s/) did not appear",
						   r->name, r->pattern);
			else
				rc = add_violation(c->res, &c->cap, pcr, NULL, NULL, 0, "required: %s (%zu allowed digest%s) "
						   "did not appear", r->name, r->n_allowed, r->n_allowed == 1 ? "" : "s");
		}
	free(counts);
	return rc;
}

MB_EXPORT int mb_policy_check(const mb_policy *p, const mb_event_log *log, const mb_cel_log *userspace,
			      const mb_verify_result *verified, uint16_t bank, mb_policy_result *ret, mb_error *err)
{
	check_ctx c = { .res = ret, .bank = bank, .budget = MB_POLICY_STEP_BUDGET };
	uint32_t pcr;
	int rc = 0;

	memset(ret, 0, sizeof(*ret));
	ret->bank = bank;
	c.info = mb_digest_by_alg(bank);
	if (!c.info)
		return set_error(err, -EOPNOTSUPP, "unknown bank 0x%04x", bank);
	c.mctx = sym_pcre2_match_context_copy(p->mctx);
	c.md = sym_pcre2_match_data_create(1, NULL);
	if (!c.mctx || !c.md) {
		rc = -ENOMEM;
		goto out;
	}

	if (p->n_fw_sets)
		rc = judge_sets(&c, p, verified);
	for (pcr = 0; pcr < MB_PCR_COUNT && rc == 0; pcr++) {
		const policy_pcr *pp = &p->pcr[pcr];
		const mb_verify_pcr *vr = mb_verify_result_pcr(verified, bank, pcr);
		bool violated = false, trusted;

		if (pp->by_sets)
			continue; /* judged with its set */
		if (!pp->governed) {
			ret->pcr[pcr] = MB_POLICY_PCR_NOT_GOVERNED;
			continue;
		}
		/* Verify before judging (PITFALLS #33): events of a PCR the log does not account for prove nothing. */
		rc = check_trusted(&c, pcr, vr, &trusted);
		if (rc == 0 && !trusted)
			violated = true;
		else if (rc == 0 && pp->by_values)
			rc = judge_values(&c, pp, pcr, vr, &violated);
		else if (rc == 0)
			rc = judge_rules(&c, pp, pcr, log, userspace, &violated);
		ret->pcr[pcr] = violated ? MB_POLICY_PCR_VIOLATED : MB_POLICY_PCR_OK;
	}
out:
	sym_pcre2_match_data_free(c.md);
	sym_pcre2_match_context_free(c.mctx);
	if (rc < 0) {
		mb_policy_result_done(ret);
		return set_error(err, rc, rc == -ENOMEM ? "out of memory" : "policy check failed");
	}
	return 0;
}

MB_EXPORT bool mb_policy_result_ok(const mb_policy_result *r)
{
	return r->n_violations == 0;
}

MB_EXPORT const char *mb_policy_verdict_name(mb_policy_verdict v)
{
	return v == MB_POLICY_PCR_OK ? "ok" : v == MB_POLICY_PCR_VIOLATED ? "violated" : "not-governed";
}

MB_EXPORT void mb_policy_result_done(mb_policy_result *r)
{
	size_t i;

	for (i = 0; i < r->n_violations; i++) {
		free(r->violations[i].reason);
		free_rule_list(r->violations[i].closest_rules, r->violations[i].n_closest_rules);
	}
	free(r->violations);
	r->violations = NULL;
	r->n_violations = 0;
	free(r->firmware_set);
	r->firmware_set = NULL;
}
