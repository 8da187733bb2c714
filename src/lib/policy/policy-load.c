/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Loading a policy (docs/policy.md). The file is untrusted: every count is capped, every
 * field type checked, unknown keys refused (a typo must not quietly weaken a policy). */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "policy-internal.h"
#include "shared/fail.h"
#include "shared/hex.h"
#include "shared/json.h"

/* The calling thread's CPU time in ns: what a policy's probes may spend is CPU, not wall time
 * (a busy machine does not make a policy fail to load). */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		return 0;
	return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* The line of the first occurrence of needle in the policy text, or 0. Good enough to point a
 * person at a field: jansson keeps no positions of values. */
static unsigned line_of(const load_ctx *c, const char *needle)
{
	const char *hit;
	unsigned line = 1;
	const char *p;
	size_t n = 0;

	if (!needle || !*needle)
		return 0;
	/* The value as written in the file: up to the first character JSON would escape. */
	while (needle[n] && n < 64 && needle[n] != '\\' && needle[n] != '"' && (unsigned char) needle[n] >= 0x20)
		n++;
	if (n == 0)
		return 0;
	hit = memmem(c->text, c->size, needle, n);
	if (!hit)
		return 0;
	for (p = c->text; p < hit; p++)
		if (*p == '\n')
			line++;
	return line;
}

int policy_fail_field(const load_ctx *c, const char *needle, const char *field, const char *fmt, ...)
{
	char what[400];
	unsigned line = line_of(c, needle);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (line)
		return set_error(c->err, -EBADMSG, "line %u: %s: %s", line, field, what);
	return set_error(c->err, -EBADMSG, "%s: %s", field, what);
}

bool policy_only_keys(json_t *o, const char *const *keys, const char **bad)
{
	json_object_each(o, k, v) {
		const char *const *q;

		(void) v;
		for (q = keys; *q; q++)
			if (strcmp(*q, k) == 0)
				break;
		if (!*q) {
			*bad = k;
			return false;
		}
	}
	return true;
}

static int parse_digest(const load_ctx *c, const char *field, const char *bank, json_t *v, policy_digest *d)
{
	const mb_digest_info *info = mb_digest_by_name(bank);
	const char *hex;

	if (!info)
		return policy_fail_field(c, bank, field, "unknown bank \"%s\"", bank);
	if (!json_is_string(v))
		return policy_fail_field(c, bank, field, "%s: expected a hex string", bank);
	hex = json_string_value(v);
	if (hex_parse(hex, strlen(hex), d->bytes, info->size) < 0)
		return policy_fail_field(c, hex, field, "%s: not %u bytes of hex", bank, info->size);
	d->alg = info->alg;
	d->size = info->size;
	return 0;
}

/* A long run of one character, a character that breaks it, then every character the pattern
 * names (so PCRE2's "required character" shortcut does not end the match early). */
static size_t probe_subject(char *buf, size_t n, char ch, const char *tail, size_t tail_len)
{
	size_t run = n - 2 - tail_len;

	memset(buf, ch, run);
	buf[run] = '\x01';
	memcpy(buf + run + 1, tail, tail_len);
	return run + 1 + tail_len;
}

char *policy_pattern_literal(const char *pattern, size_t *ret_len)
{
	/* PCRE2's metacharacters outside a class (no PCRE2_EXTENDED: blanks and # are plain) */
	static const char meta[] = "\\^$.[]|()?*+{}";
	size_t n = strlen(pattern), i, k = 0;
	char *out = malloc(n + 1);

	if (!out)
		return NULL;
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char) pattern[i];

		if (ch == '\\') {
			unsigned char e = (unsigned char) pattern[i + 1];

			/* an escaped ASCII punctuation mark is itself; an escaped letter or digit is a class,
			 * an assertion, a back reference or \Q...\E: not plain text */
			if (e >= 0x80 || !ispunct(e)) {
				free(out);
				return NULL;
			}
			out[k++] = (char) e;
			i++;
			continue;
		}
		if (strchr(meta, ch)) {
			free(out);
			return NULL;
		}
		out[k++] = (char) ch;
	}
	out[k] = '\0';
	*ret_len = k;
	return out;
}

int policy_compile_regex(const load_ctx *c, const char *pat, const char *field, const char *prefix, pcre2_code **ret)
{
	int errcode;
	PCRE2_SIZE erroff;

	/* Anchored at both ends: a pattern says what the whole text (a rule's, a path) is. */
	*ret = sym_pcre2_compile((PCRE2_SPTR) pat, PCRE2_ZERO_TERMINATED,
				 PCRE2_ANCHORED | PCRE2_ENDANCHORED | PCRE2_UTF | PCRE2_MATCH_INVALID_UTF |
				 PCRE2_NEVER_BACKSLASH_C, &errcode, &erroff, NULL);
	if (!*ret) {
		PCRE2_UCHAR msg[200];

		sym_pcre2_get_error_message(errcode, msg, sizeof(msg));
		return policy_fail_field(c, pat, field, "%sregular expression does not compile at offset %zu: %s", prefix,
					 (size_t) erroff, (const char *) msg);
	}
	return 0;
}

/*
 * A pattern that needs more than the match limit on simple long subjects backtracks
 * catastrophically on some input: refuse it when the policy loads, not at boot. The probes
 * of all the policy's patterns share one budget of steps (MB_POLICY_LOAD_BUDGET): each
 * probe is cheap enough, but a policy of many patterns each just under the limit would take
 * hours to load. A pattern the budget cannot judge to the end is refused too.
 * 0 and *ret POLICY_NO_MATCH (fine), POLICY_OVER_LIMIT (catastrophic) or POLICY_OVER_BUDGET; or -ENOMEM.
 */
int policy_probe_regex(const load_ctx *c, const mb_policy *p, pcre2_code *re, const char *pattern, policy_match *ret)
{
	char subject[2200];
	pcre2_match_data *md = sym_pcre2_match_data_create_from_pattern(re, NULL);
	pcre2_match_context *mctx = sym_pcre2_match_context_copy(p->mctx);
	char probes[64];
	uint32_t first_type = 0, first = 0;
	size_t n = 0, i;
	int rc = 0;

	*ret = POLICY_NO_MATCH;
	if (!md || !mctx) {
		rc = -ENOMEM;
		goto out;
	}
	probes[n++] = 'a';
	probes[n++] = '0';
	probes[n++] = ' ';
	for (i = 0; pattern[i] && n < sizeof(probes); i++) {
		char ch = pattern[i];

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		    ch == ' ' || ch == '=' || ch == '/' || ch == '-' || ch == '_' || ch == '.' || ch == ',' || ch == ':') {
			if (!memchr(probes, ch, n))
				probes[n++] = ch;
		}
	}
	/* An anchored pattern that must begin with one ASCII character (PCRE2 knows, through
	 * alternatives) fails at once on a run of any other: charge such a probe the ladder's
	 * first rung, as it costs when tried, without the CPU of scanning its subject. */
	if (sym_pcre2_pattern_info(re, PCRE2_INFO_FIRSTCODETYPE, &first_type) != 0 || first_type != 1 ||
	    sym_pcre2_pattern_info(re, PCRE2_INFO_FIRSTCODEUNIT, &first) != 0 || first > 0x7f)
		first_type = 0;
	for (i = 0; i < n && rc == 0; i++) {
		size_t len;
		policy_match m;

		if (first_type == 1 && (probes[i] | 0x20) != (char) (first | 0x20)) {
			if (*c->budget < POLICY_FIRST_RUNG) {
				*ret = POLICY_OVER_BUDGET;
				break;
			}
			*c->budget -= POLICY_FIRST_RUNG;
			continue;
		}
		len = probe_subject(subject, sizeof(subject), probes[i], probes, n);

		/* Steps are not all equal: one of a lookaround or a possessive repeat can scan the
		 * whole text. The CPU cap bounds what such patterns spend within the steps. */
		if (thread_cpu_ns() > c->cpu_end) {
			*ret = POLICY_OVER_BUDGET;
			break;
		}
		rc = policy_match_steps(re, mctx, md, subject, len, c->budget, &m);
		if (rc == 0 && (m == POLICY_OVER_LIMIT || m == POLICY_OVER_BUDGET)) {
			*ret = m;
			break;
		}
	}
out:
	sym_pcre2_match_context_free(mctx);
	sym_pcre2_match_data_free(md);
	return rc;
}

static int parse_rule(const load_ctx *c, mb_policy *p, unsigned pcr, size_t idx, json_t *o, policy_rule *r)
{
	static const char *const keys[] = { "type", "digests", "text", "required", "max", "description", NULL };
	char field[64];
	json_t *v;
	const char *bad;
	int rc;

	snprintf(field, sizeof(field), "pcrs.%u.rules[%zu]", pcr, idx);
	if (!json_is_object(o))
		return policy_fail_field(c, NULL, field, "expected an object");
	if (!policy_only_keys(o, keys, &bad))
		return policy_fail_field(c, bad, field, "unknown key \"%s\"", bad);
	if (!(v = json_object_get(o, "type")) || !json_is_string(v))
		return policy_fail_field(c, NULL, field, "needs \"type\": an event type name such as \"EV_IPL\"");
	if (strcmp(json_string_value(v), "userspace") == 0)
		r->userspace = true;
	else if (mb_event_type_from_name(json_string_value(v), &r->type) < 0)
		return policy_fail_field(c, json_string_value(v), field, "unknown event type \"%s\"",
				  json_string_value(v));
	if (((v = json_object_get(o, "description")) != NULL)) {
		if (!json_is_string(v))
			return policy_fail_field(c, "description", field, "\"description\" must be a string");
		r->name = strdup(json_string_value(v));
	} else {
		char name[64];
		snprintf(name, sizeof(name), "PCR %u rule %zu (%s)", pcr, idx, r->userspace ? "userspace" :
			 mb_event_type_name(r->type) ? mb_event_type_name(r->type) : "event");
		r->name = strdup(name);
	}
	if (!r->name)
		return set_error(c->err, -ENOMEM, "out of memory");
	if (((v = json_object_get(o, "required")) != NULL)) {
		if (!json_is_boolean(v))
			return policy_fail_field(c, "required", field, "\"required\" must be true or false");
		r->required = json_is_true(v);
	}
	if (((v = json_object_get(o, "max")) != NULL)) {
		int64_t m = json_integer_value(v);

		if (!json_is_integer(v) || m < 1 || m > 1000000)
			return policy_fail_field(c, "max", field, "\"max\" must be a count from 1 to 1000000");
		r->max = (uint32_t) m;
	}
	{
		json_t *digests = NULL, *text = NULL;

		digests = json_object_get(o, "digests");
		text = json_object_get(o, "text");
		if (!!digests == !!text)
			return policy_fail_field(c, NULL, field, "needs exactly one of \"digests\" or \"text\"");
		if (text) {
			const char *pat;

			if (!json_is_string(text))
				return policy_fail_field(c, "text", field, "\"text\" must be a regular expression string");
			pat = json_string_value(text);
			if (strlen(pat) > MB_POLICY_MAX_REGEX)
				return policy_fail_field(c, pat, field, "regular expression over %u bytes", MB_POLICY_MAX_REGEX);
			r->kind = RULE_TEXT;
			r->pattern = strdup(pat);
			if (!r->pattern)
				return set_error(c->err, -ENOMEM, "out of memory");
			if ((rc = policy_compile_regex(c, pat, field, "", &r->re)) < 0)
				return rc;
			/* Plain text is compared as text (it cannot backtrack): no probe. */
			r->literal = policy_pattern_literal(pat, &r->literal_len);
			if (!r->literal) {
				/* the line: of its description if it has one (rules' patterns often share a start) */
				const char *where = ((v = json_object_get(o, "description")) != NULL) ? r->name : pat;
				policy_match m;

				rc = policy_probe_regex(c, p, r->re, pat, &m);
				if (rc < 0)
					return set_error(c->err, rc, "out of memory");
				if (m == POLICY_OVER_LIMIT)
					return policy_fail_field(c, where, field, "rule \"%.80s\": regular expression backtracks "
							  "catastrophically (it exceeds the match limit on a simple long "
							  "text); simplify it", r->name);
				if (m == POLICY_OVER_BUDGET)
					return policy_fail_field(c, where, field, "rule \"%.80s\": regular expression cannot be judged "
							  "within the load budget (%u PCRE2 steps or %u ms of CPU for all "
							  "the policy's regular expressions, spent by this one and those "
							  "before it); simplify the policy's regular expressions or write "
							  "them as plain text", r->name, MB_POLICY_LOAD_BUDGET,
							  MB_POLICY_LOAD_CPU_MS);
			}
		} else {
			size_t n, i;

			if (!json_is_array(digests))
				return policy_fail_field(c, "digests", field, "\"digests\" must be an array");
			n = json_array_size(digests);
			if (n == 0 || n > MB_POLICY_MAX_DIGESTS)
				return policy_fail_field(c, "digests", field, "\"digests\" must hold 1 to %u entries", MB_POLICY_MAX_DIGESTS);
			r->kind = RULE_DIGESTS;
			r->allowed = calloc(n, sizeof(*r->allowed));
			if (!r->allowed)
				return set_error(c->err, -ENOMEM, "out of memory");
			r->n_allowed = n;
			for (i = 0; i < n; i++) {
				json_t *e = json_array_get(digests, i);
				policy_allowed *a = &r->allowed[i];
				char efield[96];

				snprintf(efield, sizeof(efield), "%s.digests[%zu]", field, i);
				if (!json_is_object(e))
					return policy_fail_field(c, NULL, efield, "expected {\"sha256\": \"<hex>\", \"description\": ...}");
				json_object_each(e, k, val) {
					if (strcmp(k, "description") == 0) {
						if (!json_is_string(val))
							return policy_fail_field(c, "description", efield, "\"description\" must be a string");
						free(a->description);
						a->description = strdup(json_string_value(val));
						continue;
					}
					if (a->n >= MB_MAX_BANKS)
						return policy_fail_field(c, k, efield, "too many banks");
					rc = parse_digest(c, efield, k, val, &a->d[a->n]);
					if (rc < 0)
						return rc;
					a->n++;
				}
				if (a->n == 0)
					return policy_fail_field(c, NULL, efield, "no digest given");
			}
		}
	}
	return 0;
}

/* A PCR number as a key: "0" to "23", no leading zero (one spelling per PCR: "08" next to "8"
 * would let a later entry replace an earlier one). */
static int parse_pcr_key(const load_ctx *c, const char *field, const char *key, unsigned *ret)
{
	unsigned pcr = 0;
	size_t i;

	for (i = 0; key[i]; i++) {
		if (key[i] < '0' || key[i] > '9' || i > 1)
			return policy_fail_field(c, NULL, field, "PCR keys are numbers from 0 to 23");
		pcr = pcr * 10 + (unsigned) (key[i] - '0');
	}
	if (i == 0 || pcr >= MB_PCR_COUNT)
		return policy_fail_field(c, NULL, field, "PCR keys are numbers from 0 to 23");
	if (i > 1 && key[0] == '0')
		return policy_fail_field(c, NULL, field, "write PCR %u as \"%u\" (no leading zero)", pcr, pcr);
	*ret = pcr;
	return 0;
}

/* {"sha256": "<hex>", ...}: one value per bank, at least one. */
static int parse_values(const load_ctx *c, const char *field, json_t *values, policy_digest *out, size_t *n)
{
	size_t k;
	int rc;

	if (!json_is_object(values) || json_object_size(values) == 0)
		return policy_fail_field(c, NULL, field, "expected an object mapping bank names to hex values");
	json_object_each(values, bank, val) {
		if (*n >= MB_MAX_BANKS)
			return policy_fail_field(c, bank, field, "too many banks");
		rc = parse_digest(c, field, bank, val, &out[*n]);
		if (rc < 0)
			return rc;
		for (k = 0; k < *n; k++)
			if (out[k].alg == out[*n].alg)
				return policy_fail_field(c, bank, field, "bank %s given twice", bank);
		(*n)++;
	}
	return 0;
}

static int parse_pcr(const load_ctx *c, mb_policy *p, const char *key, json_t *o)
{
	static const char *const keys[] = { "values", "rules", "ordered", "description", NULL };
	policy_pcr *pp;
	json_t *values = NULL, *rules = NULL, *v;
	const char *bad;
	char field[32];
	unsigned pcr = 0;
	size_t i, n;
	int rc;

	snprintf(field, sizeof(field), "pcrs.%.8s", key);
	rc = parse_pcr_key(c, field, key, &pcr);
	if (rc < 0)
		return rc;
	pp = &p->pcr[pcr];
	if (pp->governed)
		return policy_fail_field(c, NULL, field, "PCR %u is given twice", pcr);
	if (!json_is_object(o))
		return policy_fail_field(c, NULL, field, "expected an object with \"values\" or \"rules\"");
	if (!policy_only_keys(o, keys, &bad))
		return policy_fail_field(c, bad, field, "unknown key \"%s\"", bad);
	values = json_object_get(o, "values");
	rules = json_object_get(o, "rules");
	if (!!values == !!rules)
		return policy_fail_field(c, NULL, field, "needs exactly one of \"values\" or \"rules\"");
	pp->governed = true;
	if (((v = json_object_get(o, "ordered")) != NULL)) {
		if (!json_is_boolean(v))
			return policy_fail_field(c, "ordered", field, "\"ordered\" must be true or false");
		pp->ordered = json_is_true(v);
	}
	if (values) {
		if (!json_is_object(values) || json_object_size(values) == 0)
			return policy_fail_field(c, "values", field, "\"values\" must map bank names to hex values");
		pp->by_values = true;
		return parse_values(c, field, values, pp->values, &pp->n_values);
	}
	if (!json_is_array(rules))
		return policy_fail_field(c, "rules", field, "\"rules\" must be an array");
	n = json_array_size(rules);
	if (n > MB_POLICY_MAX_RULES)
		return policy_fail_field(c, "rules", field, "more than %u rules", MB_POLICY_MAX_RULES);
	pp->rules = calloc(n ? n : 1, sizeof(*pp->rules));
	if (!pp->rules)
		return set_error(c->err, -ENOMEM, "out of memory");
	pp->n_rules = n;
	for (i = 0; i < pp->n_rules; i++) {
		rc = parse_rule(c, p, pcr, i, json_array_get(rules, i), &pp->rules[i]);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* A set's name: what verdicts report, so printable and short. */
static bool good_set_name(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > MB_POLICY_MAX_SET_NAME)
		return false;
	for (i = 0; i < n; i++)
		if ((unsigned char) s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return true;
}

static int parse_fw_set(const load_ctx *c, mb_policy *p, size_t idx, json_t *o, policy_fw_set *set)
{
	static const char *const keys[] = { "name", "description", "pcrs", NULL };
	json_t *v, *pcrs;
	const char *bad, *name;
	char field[64];
	uint32_t mask = 0;
	size_t i;
	int rc;

	snprintf(field, sizeof(field), "firmware[%zu]", idx);
	if (!json_is_object(o))
		return policy_fail_field(c, NULL, field, "expected an object with \"name\" and \"pcrs\"");
	if (!policy_only_keys(o, keys, &bad))
		return policy_fail_field(c, bad, field, "unknown key \"%s\"", bad);
	if (!(v = json_object_get(o, "name")) || !json_is_string(v) ||
	    !good_set_name(json_string_value(v)))
		return policy_fail_field(c, "name", field, "needs a \"name\": 1 to %u printable bytes", MB_POLICY_MAX_SET_NAME);
	name = json_string_value(v);
	for (i = 0; i < idx; i++)
		if (strcmp(p->fw_sets[i].name, name) == 0)
			return policy_fail_field(c, name, field, "the name \"%s\" is given to firmware[%zu] too", name, i);
	if (!(set->name = strdup(name)))
		return set_error(c->err, -ENOMEM, "out of memory");
	if (((v = json_object_get(o, "description")) != NULL) && !json_is_string(v))
		return policy_fail_field(c, "description", field, "\"description\" must be a string");
	if (!(pcrs = json_object_get(o, "pcrs")) || !json_is_object(pcrs) ||
	    json_object_size(pcrs) == 0)
		return policy_fail_field(c, name, field, "needs \"pcrs\": the values of at least one PCR");
	set->v = calloc(MB_PCR_COUNT, sizeof(*set->v));
	if (!set->v)
		return set_error(c->err, -ENOMEM, "out of memory");
	{
		json_object_each(pcrs, key, val) {
			char pfield[96];
			unsigned pcr;

			snprintf(pfield, sizeof(pfield), "%s.pcrs.%.8s", field, key);
			rc = parse_pcr_key(c, pfield, key, &pcr);
			if (rc < 0)
				return rc;
			/* the reader refuses duplicate keys: no PCR twice within "pcrs" */
			if (p->pcr[pcr].governed)
				return policy_fail_field(c, NULL, pfield, "PCR %u is governed in \"pcrs\" too: a PCR is "
						  "governed in one place", pcr);
			if (set->n >= MB_PCR_COUNT)
				return policy_fail_field(c, NULL, pfield, "too many PCRs");
			set->v[set->n].pcr = pcr;
			rc = parse_values(c, pfield, val, set->v[set->n].values, &set->v[set->n].n_values);
			if (rc < 0)
				return rc;
			set->n++;
			mask |= 1u << pcr;
		}
	}
	/* Every set gives the same PCRs: a set with fewer would let those others be anything. */
	if (idx == 0)
		p->fw_pcrs = mask;
	else if (mask != p->fw_pcrs)
		return policy_fail_field(c, name, field, "gives other PCRs than firmware[0]: every set must give the same PCRs");
	return 0;
}

static int parse_firmware(const load_ctx *c, mb_policy *p, json_t *arr)
{
	size_t n, i;
	unsigned pcr;
	int rc;

	if (!json_is_array(arr))
		return policy_fail_field(c, "firmware", "firmware", "expected an array of firmware sets");
	n = json_array_size(arr);
	if (n == 0 || n > MB_POLICY_MAX_FIRMWARE_SETS)
		return policy_fail_field(c, "firmware", "firmware", "must hold 1 to %u sets", MB_POLICY_MAX_FIRMWARE_SETS);
	p->fw_sets = calloc(n, sizeof(*p->fw_sets));
	if (!p->fw_sets)
		return set_error(c->err, -ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		p->n_fw_sets++;
		rc = parse_fw_set(c, p, i, json_array_get(arr, i), &p->fw_sets[i]);
		if (rc < 0)
			return rc;
	}
	for (pcr = 0; pcr < MB_PCR_COUNT; pcr++)
		if (p->fw_pcrs & (1u << pcr))
			p->pcr[pcr].governed = p->pcr[pcr].by_sets = true;
	return 0;
}

MB_EXPORT int mb_policy_parse(const char *text, size_t size, mb_policy **ret, mb_error *err)
{
	static const char *const keys[] = { "version", "description", "pcrs", "generator", "firmware", "min_bank", "ima", NULL };
	uint64_t budget = MB_POLICY_LOAD_BUDGET;
	load_ctx c = { text, size, err, &budget, thread_cpu_ns() + MB_POLICY_LOAD_CPU_MS * UINT64_C(1000000) };
	json_t *root = NULL, *v, *pcrs, *firmware = NULL;
	mb_policy *p = NULL;
	const char *bad;
	int rc;

	if (size > MB_POLICY_MAX_SIZE)
		return set_error(err, -E2BIG, "policy over %u bytes", MB_POLICY_MAX_SIZE);
	if (memchr(text, 0, size))
		return set_error(err, -EBADMSG, "policy contains a NUL byte");
	/* PCRE2 is loaded here, not at start: only policies have regular expressions. */
	rc = dlopen_pcre2(err);
	if (rc < 0)
		return rc;
	p = calloc(1, sizeof(*p));
	if (!p || !(p->mctx = sym_pcre2_match_context_create(NULL))) {
		rc = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	sym_pcre2_set_match_limit(p->mctx, POLICY_MATCH_LIMIT);
	sym_pcre2_set_depth_limit(p->mctx, POLICY_DEPTH_LIMIT);
	sym_pcre2_set_heap_limit(p->mctx, 8192); /* KiB */
	/* nesting: policy, pcrs, pcr, rules, rule, digests, entry (ima, digests, path, digest) */
	rc = untrusted_json_parse(text, size, 16, &root, err);
	if (rc < 0)
		goto out;
	if (!json_is_object(root)) {
		rc = set_error(err, -EBADMSG, "a policy is a JSON object");
		goto out;
	}
	if (!policy_only_keys(root, keys, &bad)) {
		rc = policy_fail_field(&c, bad, "policy", "unknown key \"%s\"", bad);
		goto out;
	}
	if (!(v = json_object_get(root, "version")) || !json_is_integer(v) ||
	    json_integer_value(v) < 1 || json_integer_value(v) > 2) {
		rc = policy_fail_field(&c, "version", "version", "this mboot reads policy versions 1 and 2");
		goto out;
	}
	p->version = (unsigned) json_integer_value(v);
	/* Version 2 adds firmware sets: a version-1 reader refuses the file by its version rather
	 * than by an unknown key, and a version-1 file means what it always meant. */
	if (((firmware = json_object_get(root, "firmware")) != NULL) && p->version < 2) {
		rc = policy_fail_field(&c, "firmware", "firmware", "firmware sets need \"version\": 2");
		goto out;
	}
	if (!(pcrs = json_object_get(root, "pcrs")) || !json_is_object(pcrs)) {
		rc = policy_fail_field(&c, "pcrs", "pcrs", "needs an object \"pcrs\" keyed by PCR number");
		goto out;
	}
	{
		json_object_each(pcrs, key, val) {
			rc = parse_pcr(&c, p, key, val);
			if (rc < 0)
				goto out;
		}
	}
	if (firmware) {
		rc = parse_firmware(&c, p, firmware);
		if (rc < 0)
			goto out;
	}
	/* The weakest bank a quote may be judged in (attestation, docs/policy.md): a name mboot computes. */
	if (((v = json_object_get(root, "min_bank")) != NULL)) {
		const mb_digest_info *d = json_is_string(v) ?
					  mb_digest_by_name(json_string_value(v)) : NULL;

		if (!d) {
			rc = policy_fail_field(&c, "min_bank", "min_bank", "expected a bank name: sha1, sha256, sha384, sha512 "
					"or sm3_256");
			goto out;
		}
		p->min_bank = d->alg;
	}
	if (((v = json_object_get(root, "ima")) != NULL)) {
		rc = policy_ima_parse(&c, p, v);
		if (rc < 0)
			goto out;
	}
	/* A policy that governs nothing would call every boot good (an "ima" section governs what
	 * ran after it: such a policy judges an IMA list, and a verify without one fails). */
	if (mb_policy_pcrs(p) == 0 && !p->ima) {
		rc = policy_fail_field(&c, "pcrs", "pcrs", "the policy governs no PCR: it would call every boot good");
		goto out;
	}
	*ret = p;
	p = NULL;
	rc = 0;
out:
	json_decref(root);
	mb_policy_free(p);
	return rc;
}

MB_EXPORT void mb_policy_free(mb_policy *p)
{
	size_t i, k, a;

	if (!p)
		return;
	for (i = 0; i < MB_PCR_COUNT; i++) {
		for (k = 0; k < p->pcr[i].n_rules; k++) {
			policy_rule *r = &p->pcr[i].rules[k];

			free(r->name);
			free(r->pattern);
			free(r->literal);
			sym_pcre2_code_free(r->re);
			for (a = 0; a < r->n_allowed; a++)
				free(r->allowed[a].description);
			free(r->allowed);
		}
		free(p->pcr[i].rules);
	}
	for (i = 0; i < p->n_fw_sets; i++) {
		free(p->fw_sets[i].name);
		free(p->fw_sets[i].v);
	}
	free(p->fw_sets);
	policy_ima_free(p->ima);
	sym_pcre2_match_context_free(p->mctx);
	free(p);
}

MB_EXPORT uint32_t mb_policy_pcrs(const mb_policy *p)
{
	uint32_t m = 0;
	unsigned i;

	for (i = 0; i < MB_PCR_COUNT; i++)
		if (p->pcr[i].governed)
			m |= 1u << i;
	return m;
}

MB_EXPORT unsigned mb_policy_version(const mb_policy *p)
{
	return p->version;
}

MB_EXPORT uint16_t mb_policy_min_bank(const mb_policy *p)
{
	return p->min_bank;
}

MB_EXPORT size_t mb_policy_n_firmware_sets(const mb_policy *p)
{
	return p->n_fw_sets;
}

MB_EXPORT const char *mb_policy_firmware_set_name(const mb_policy *p, size_t i)
{
	return i < p->n_fw_sets ? p->fw_sets[i].name : NULL;
}

MB_EXPORT uint32_t mb_policy_firmware_pcrs(const mb_policy *p)
{
	return p->fw_pcrs;
}
