/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The rules a violating event came closest to: a hint for the person who reads the violation,
 * never a verdict. The nearest by text first, with what differs, so that a command line that
 * only gained ` init=/bin/sh` points at the rule it was meant to meet.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy-internal.h"

/* How much of its text a rule shares with the event's, and where they part. */
typedef struct nearness {
	size_t rule;    /* index in the PCR's rules */
	size_t score;   /* bytes in common: the longest common start plus the longest common end */
	size_t prefix;  /* the common start */
	size_t suffix;  /* the common end (not overlapping the start in either text) */
} nearness;

static nearness measure(size_t rule, const char *a, size_t alen, const char *b, size_t blen)
{
	nearness n = { .rule = rule };
	size_t most = alen < blen ? alen : blen;

	while (n.prefix < most && a[n.prefix] == b[n.prefix])
		n.prefix++;
	while (n.suffix < most - n.prefix && a[alen - 1 - n.suffix] == b[blen - 1 - n.suffix])
		n.suffix++;
	n.score = n.prefix + n.suffix;
	return n;
}

/* Nearest first; among equals, the policy's order. */
static int by_nearness(const void *x, const void *y)
{
	const nearness *a = x, *b = y;

	if (a->score != b->score)
		return a->score > b->score ? -1 : 1;
	return a->rule < b->rule ? -1 : a->rule > b->rule;
}

/* The rule's text to compare: what a plain-text pattern matches, else the pattern as written. */
static const char *rule_text(const policy_rule *r, size_t *len)
{
	if (r->literal) {
		*len = r->literal_len;
		return r->literal;
	}
	*len = r->pattern ? strlen(r->pattern) : 0;
	return r->pattern;
}

/* "name (text ~ /pattern/)", and for a plain-text rule near the text, what differs. */
static char *describe(const policy_rule *r, const nearness *n, const char *text, size_t text_len)
{
	char *out = NULL;
	int rc;

	if (!r->pattern)
		return strdup(r->name);
	if (r->literal && text && n->score > 0) {
		const char *ev_mid = text + n->prefix, *rule_mid = r->literal + n->prefix;
		int ev_len = (int) (text_len - n->prefix - n->suffix);
		int rule_len = (int) (r->literal_len - n->prefix - n->suffix);

		if (rule_len == 0)
			rc = asprintf(&out, "%s (text ~ /%s/): the event adds \"%.*s\"%s", r->name, r->pattern,
				      ev_len > 120 ? 120 : ev_len, ev_mid, ev_len > 120 ? "..." : "");
		else if (ev_len == 0)
			rc = asprintf(&out, "%s (text ~ /%s/): the event lacks \"%.*s\"%s", r->name, r->pattern,
				      rule_len > 120 ? 120 : rule_len, rule_mid, rule_len > 120 ? "..." : "");
		else
			rc = asprintf(&out, "%s (text ~ /%s/): the event has \"%.*s\"%s where the rule has \"%.*s\"%s",
				      r->name, r->pattern, ev_len > 120 ? 120 : ev_len, ev_mid, ev_len > 120 ? "..." : "",
				      rule_len > 120 ? 120 : rule_len, rule_mid, rule_len > 120 ? "..." : "");
	} else {
		rc = asprintf(&out, "%s (text ~ /%s/)", r->name, r->pattern);
	}
	return rc < 0 ? NULL : out;
}

size_t policy_closest_rules(const policy_pcr *pp, uint32_t type, const char *text, size_t text_len, char ***ret)
{
	nearness *cand;
	char **out;
	size_t i, n = 0, k;

	*ret = NULL;
	cand = malloc((pp->n_rules ? pp->n_rules : 1) * sizeof(*cand));
	if (!cand)
		return 0;
	for (i = 0; i < pp->n_rules; i++) {
		const policy_rule *r = &pp->rules[i];
		const char *rt;
		size_t rlen;

		if (r->userspace || r->type != type)
			continue;
		rt = rule_text(r, &rlen);
		cand[n++] = text && rt ? measure(i, text, text_len, rt, rlen) : (nearness) { .rule = i };
	}
	qsort(cand, n, sizeof(*cand), by_nearness);
	if (n > POLICY_CLOSEST_RULES_MAX)
		n = POLICY_CLOSEST_RULES_MAX;
	out = n ? calloc(n, sizeof(*out)) : NULL;
	if (!out) {
		free(cand);
		return 0;
	}
	for (k = 0; k < n; k++) {
		out[k] = describe(&pp->rules[cand[k].rule], &cand[k], text, text_len);
		if (!out[k])
			break; /* a hint: out of memory gives fewer */
	}
	free(cand);
	if (!k) {
		free(out);
		return 0;
	}
	*ret = out;
	return k;
}
