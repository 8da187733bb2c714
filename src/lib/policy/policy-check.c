/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Judging a verified log against a policy. Only the verified bank's digests are used. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/events.h>
#include "policy-internal.h"
#include "shared/fail.h"
#include "shared/hex.h"

int policy_regex_match(const struct mb_policy *p, const policy_rule *r, const char *text, size_t len)
{
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(r->re, NULL);
	int rc;

	if (!md)
		return -ENOMEM;
	rc = pcre2_match(r->re, (PCRE2_SPTR) text, len, 0, 0, md, p->mctx);
	pcre2_match_data_free(md);
	if (rc >= 0)
		return 1;
	if (rc == PCRE2_ERROR_NOMATCH)
		return 0;
	return -E2BIG; /* a limit was hit: treated as no match, and said */
}

static int add_violation(mb_policy_result *res, size_t *cap, uint32_t pcr, const mb_event *ev, char *closest,
			 const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static int add_violation(mb_policy_result *res, size_t *cap, uint32_t pcr, const mb_event *ev, char *closest,
			 const char *fmt, ...)
{
	va_list ap;
	char *reason = NULL;
	int n;

	if (res->n_violations == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		mb_policy_violation *v = realloc(res->violations, ncap * sizeof(*v));

		if (!v) {
			free(closest);
			return -ENOMEM;
		}
		res->violations = v;
		*cap = ncap;
	}
	va_start(ap, fmt);
	n = vasprintf(&reason, fmt, ap);
	va_end(ap);
	if (n < 0) {
		free(closest);
		return -ENOMEM;
	}
	res->violations[res->n_violations++] = (mb_policy_violation) { pcr, ev, reason, closest };
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

/* "rule A, rule B" for the rules of the event's type in this PCR, or NULL. */
static char *closest_rules(const policy_pcr *pp, uint32_t type)
{
	char *out = NULL;
	size_t len = 0, i, shown = 0;

	for (i = 0; i < pp->n_rules && shown < 4; i++) {
		const policy_rule *r = &pp->rules[i];
		size_t add;
		char *n;

		if (r->type != type)
			continue;
		add = strlen(r->name) + (r->pattern ? strlen(r->pattern) + 16 : 0) + 4;
		n = realloc(out, len + add + 1);
		if (!n)
			break;
		out = n;
		len += (size_t) snprintf(out + len, add + 1, "%s%s%s%s%s", shown ? "; " : "", r->name,
					 r->pattern ? " (text ~ /" : "", r->pattern ? r->pattern : "", r->pattern ? "/)" : "");
		shown++;
	}
	return out;
}

MB_EXPORT int mb_policy_check(const mb_policy *p, const mb_event_log *log, const mb_pcr_values *replayed,
			      uint16_t bank, mb_policy_result *ret, mb_error *err)
{
	const mb_digest_info *info = mb_digest_by_alg(bank);
	size_t cap = 0, n = mb_event_log_count(log), i, k;
	uint32_t *counts = NULL;
	uint32_t pcr;
	int rc = 0;

	memset(ret, 0, sizeof(*ret));
	ret->bank = bank;
	if (!info)
		return mb_fail(err, -EOPNOTSUPP, "unknown bank 0x%04x", bank);

	for (pcr = 0; pcr < MB_PCR_COUNT; pcr++) {
		const policy_pcr *pp = &p->pcr[pcr];
		size_t cursor = 0;
		bool violated = false;

		if (!pp->governed) {
			ret->pcr[pcr] = MB_POLICY_PCR_NOT_GOVERNED;
			continue;
		}
		if (pp->by_values) {
			const policy_digest *want = value_for(pp, bank);
			const mb_pcr_bank *b = mb_pcr_values_bank_const(replayed, bank);
			uint8_t have[MB_DIGEST_MAX];
			char hw[2 * MB_DIGEST_MAX + 1], hh[2 * MB_DIGEST_MAX + 1];

			if (b && (b->present & (1u << pcr)))
				memcpy(have, b->value[pcr], info->size);
			else
				mb_pcr_initial(bank, pcr, 0, false, have);
			if (!want) {
				rc = add_violation(ret, &cap, pcr, NULL, NULL,
						   "the policy has no %s value for PCR %u", info->name, pcr);
				violated = true;
			} else if (memcmp(want->bytes, have, info->size) != 0) {
				rc = add_violation(ret, &cap, pcr, NULL, NULL, "PCR %u (%s) is %s, the policy expects %s",
						   pcr, info->name, mb_hex(have, info->size, hh), mb_hex(want->bytes, info->size, hw));
				violated = true;
			}
			if (rc < 0)
				goto oom;
			ret->pcr[pcr] = violated ? MB_POLICY_PCR_VIOLATED : MB_POLICY_PCR_OK;
			continue;
		}

		free(counts);
		counts = calloc(pp->n_rules + 1, sizeof(*counts));
		if (!counts)
			goto oom;
		for (i = 0; i < n; i++) {
			const mb_event *ev = mb_event_log_event(log, i);
			const mb_event_digest *d;
			char *text = NULL;
			bool text_done = false, over_max = false, limit_hit = false;
			mb_digest_check check;
			int matched = -1;

			if (ev->pcr != pcr || ev->type == MB_EV_NO_ACTION)
				continue;
			d = mb_event_digest_for(ev, bank);
			if (mb_event_check_digest(ev, &check) < 0)
				check.status = MB_DIGEST_UNCHECKABLE;
			for (k = pp->ordered ? cursor : 0; k < pp->n_rules; k++) {
				const policy_rule *r = &pp->rules[k];
				bool match = false;

				if (r->type != ev->type)
					continue;
				if (r->kind == RULE_DIGESTS) {
					match = d && allowed_digest(r, d);
				} else if (check.status == MB_DIGEST_MATCH || check.status == MB_DIGEST_MATCH_ALTERNATE) {
					/* Text proves something only when it hashes to the logged digest. */
					if (!text_done) {
						text = mb_event_text(ev);
						text_done = true;
					}
					if (text) {
						int m = policy_regex_match(p, r, text, strlen(text));

						if (m == -ENOMEM) {
							free(text);
							goto oom;
						}
						if (m < 0)
							limit_hit = true;
						match = m == 1;
					}
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
				counts[matched]++;
				if (pp->ordered)
					cursor = (size_t) matched;
				ret->events_matched++;
				free(text);
				continue;
			}
			violated = true;
			if (!text_done)
				text = mb_event_text(ev);
			rc = add_violation(ret, &cap, pcr, ev, closest_rules(pp, ev->type), "%s%s%s%s",
					   !d ? "the event has no digest in the verified bank; " :
					   check.status == MB_DIGEST_MISMATCH ? "its data does not hash to its digest (not trusted); " : "",
					   over_max ? "a matching rule already matched its maximum number of times" :
					   "no rule of the policy allows it",
					   limit_hit ? " (a regular expression hit its match limit)" : "",
					   pp->ordered && !over_max ? " at this position (the PCR's rules are ordered)" : "");
			free(text);
			if (rc < 0)
				goto oom;
		}
		for (k = 0; k < pp->n_rules; k++)
			if (pp->rules[k].required && counts[k] == 0) {
				violated = true;
				rc = add_violation(ret, &cap, pcr, NULL, NULL, "required: %s did not appear", pp->rules[k].name);
				if (rc < 0)
					goto oom;
			}
		ret->pcr[pcr] = violated ? MB_POLICY_PCR_VIOLATED : MB_POLICY_PCR_OK;
	}
	free(counts);
	return 0;
oom:
	free(counts);
	mb_policy_result_done(ret);
	return mb_fail(err, -ENOMEM, "out of memory");
}

MB_EXPORT bool mb_policy_result_ok(const mb_policy_result *r)
{
	return r->n_violations == 0;
}

MB_EXPORT void mb_policy_result_done(mb_policy_result *r)
{
	size_t i;

	for (i = 0; i < r->n_violations; i++) {
		free(r->violations[i].reason);
		free(r->violations[i].closest);
	}
	free(r->violations);
	r->violations = NULL;
	r->n_violations = 0;
}
