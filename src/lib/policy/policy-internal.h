/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_POLICY_INTERNAL_H
#define MB_POLICY_INTERNAL_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include "pcre2-dl.h"

#include <mboot/digest.h>
#include <mboot/policy.h>
#include "shared/json.h"

typedef struct policy_digest {
	uint16_t alg;
	uint16_t size;
	uint8_t bytes[MB_DIGEST_MAX];
} policy_digest;

/* One allowed binary: its digests in one or more banks, and what it is. */
typedef struct policy_allowed {
	char *description;
	size_t n;
	policy_digest d[MB_MAX_BANKS];
} policy_allowed;

typedef enum rule_kind { RULE_DIGESTS, RULE_TEXT } rule_kind;

typedef struct policy_rule {
	char *name;        /* for messages: the "description" or "type[#n]" */
	bool userspace;    /* "type": "userspace": matches userspace log records, never firmware events */
	uint32_t type;
	rule_kind kind;
	policy_allowed *allowed;
	size_t n_allowed;
	char *pattern;
	pcre2_code *re;
	char *literal;     /* the one text the pattern matches, when it is plain text (policy_pattern_literal) */
	size_t literal_len;
	bool required;
	uint32_t max;      /* 0: no limit */
} policy_rule;

typedef struct policy_pcr {
	bool governed;
	bool by_values;
	bool by_sets;      /* judged by the policy's firmware sets (all of a set's PCRs at once) */
	size_t n_values;
	policy_digest values[MB_MAX_BANKS];
	bool ordered;
	size_t n_rules;
	policy_rule *rules;
} policy_pcr;

/*
 * The one text a rule's pattern matches (anchored at both ends, as rules are compiled) when
 * the pattern is plain text: characters without regular-expression syntax, and punctuation
 * escaped with a backslash. NULL for anything else, or out of memory: the pattern is then
 * matched by PCRE2. Generated policies are mostly such patterns; comparing them as text
 * spares a PCRE2 match per event and rule.
 */
char *policy_pattern_literal(const char *pattern, size_t *ret_len);

/* One PCR's values in a firmware set. */
typedef struct policy_set_value {
	uint32_t pcr;
	size_t n_values;
	policy_digest values[MB_MAX_BANKS];
} policy_set_value;

/* A known-good firmware release: values for every firmware PCR, matched all together. */
typedef struct policy_fw_set {
	char *name;
	size_t n;
	policy_set_value *v;   /* n of them, in the file's order */
} policy_fw_set;

struct mb_policy {
	unsigned version;
	policy_pcr pcr[MB_PCR_COUNT];
	size_t n_fw_sets;
	policy_fw_set *fw_sets;
	uint32_t fw_pcrs;      /* the PCRs every set gives */
	uint16_t min_bank;     /* "min_bank": the TCG id of the weakest bank a quote may be judged in, or 0 */
	struct policy_ima *ima; /* the "ima" section, or NULL */
	pcre2_match_context *mctx;
};

/* The rules of type in pp nearest by text to an event's (text NULL: the first ones, in the
 * policy's order), each "name (text ~ /pattern/)" and for plain text what differs, into *ret
 * (NULL when none; the caller frees each and the list). A hint: out of memory gives fewer. */
#define POLICY_CLOSEST_RULES_MAX 4
size_t policy_closest_rules(const policy_pcr *pp, uint32_t type, const char *text, size_t text_len, char ***ret);

/* Match limits: a pattern that needs more is refused at load (catastrophic backtracking). */
#define POLICY_MATCH_LIMIT 200000
/* The first rung of policy_match_steps's ladder: what the cheapest match is charged. */
#define POLICY_FIRST_RUNG 100
#define POLICY_DEPTH_LIMIT 2000

typedef enum policy_match {
	POLICY_NO_MATCH = 0,
	POLICY_MATCHED,
	POLICY_OVER_LIMIT,   /* it needed more than POLICY_MATCH_LIMIT steps (or the depth, heap limit) */
	POLICY_OVER_BUDGET,  /* not tried to the end: *budget could not pay for the next limit */
} policy_match;

/* Match re against the whole of text under rising match limits, each charged to *budget
 * (policy-match.c). 0 and *ret, or -ENOMEM. mctx's match limit is changed. */
int policy_match_steps(const pcre2_code *re, pcre2_match_context *mctx, pcre2_match_data *md, const char *text,
		       size_t len, uint64_t *budget, policy_match *ret);

/* Loading (policy-load.c): what the parsers of a policy's sections share. */
typedef struct load_ctx {
	const char *text;
	size_t size;
	mb_error *err;
	uint64_t *budget;  /* PCRE2 steps the probes of the whole policy may still spend */
	uint64_t cpu_end;  /* and the thread's CPU time (ns) they must end by */
} load_ctx;

/* -EBADMSG, the message "line L: field: what" (L: of needle's first occurrence in the text). */
int policy_fail_field(const load_ctx *c, const char *needle, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Whether o has only the keys listed (NULL-terminated); else *bad names one. */
bool policy_only_keys(json_t *o, const char *const *keys, const char **bad);
/* pat compiled as every pattern of a policy is (anchored at both ends, UTF-8, no \C) into *ret;
 * one that does not compile fails as policy_fail_field(c, pat, field, "<prefix>regular
 * expression does not compile at offset N: why"). */
int policy_compile_regex(const load_ctx *c, const char *pat, const char *field, const char *prefix, pcre2_code **ret);
/* Probe a compiled pattern for catastrophic backtracking under the load budget: *ret
 * POLICY_NO_MATCH (fine), POLICY_OVER_LIMIT or POLICY_OVER_BUDGET; or -ENOMEM. */
int policy_probe_regex(const load_ctx *c, const mb_policy *p, pcre2_code *re, const char *pattern, policy_match *ret);

/* The "ima" section (policy-ima.c): parsed from the policy's JSON, freed with it. */
struct policy_ima;
int policy_ima_parse(const load_ctx *c, mb_policy *p, json_t *ima);
void policy_ima_free(struct policy_ima *ima);

#endif
