/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A policy from a log known to be good: exact values for the firmware PCRs, event rules for
 * the rest (text rules where the text hashes to the digest, digest rules otherwise). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include <mboot/events.h>
#include <mboot/policy.h>
#include "shared/fail.h"
#include "shared/hex.h"

/* Every character that means something to PCRE2 outside a class, escaped: the rule then says
 * exactly this text. */
static char *regex_literal(const char *s)
{
	size_t n = strlen(s), i, o = 0;
	char *out = malloc(2 * n + 1);

	if (!out)
		return NULL;
	for (i = 0; i < n; i++) {
		if (strchr("\\^$.|?*+()[]{}", s[i]))
			out[o++] = '\\';
		out[o++] = s[i];
	}
	out[o] = 0;
	return out;
}

static json_object *digests_of(const mb_event *ev)
{
	json_object *o = json_object_new_object();
	uint32_t i;

	for (i = 0; i < ev->n_digests; i++) {
		const mb_digest_info *d = mb_digest_by_alg(ev->digests[i].alg);
		char hex[2 * MB_DIGEST_MAX + 1];

		if (d && d->size == ev->digests[i].size)
			json_object_object_add(o, d->name, json_object_new_string(mb_hex(ev->digests[i].bytes, d->size, hex)));
	}
	return o;
}

static const char *string_field(json_object *o, const char *key)
{
	json_object *v;

	return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ?
		json_object_get_string(v) : NULL;
}

/* An existing rule of the same type and the same text or digests: count it there instead. */
static json_object *find_rule(json_object *rules, const char *type, const char *pattern, json_object *digests)
{
	size_t i, n = json_object_array_length(rules);

	for (i = 0; i < n; i++) {
		json_object *r = json_object_array_get_idx(rules, i), *ds;

		if (strcmp(string_field(r, "type"), type) != 0)
			continue;
		if (pattern) {
			const char *t = string_field(r, "text");
			if (t && strcmp(t, pattern) == 0)
				return r;
		} else if (json_object_object_get_ex(r, "digests", &ds)) {
			json_object *first = json_object_array_get_idx(ds, 0), *a, *b;

			if (json_object_object_get_ex(first, "sha256", &a) && json_object_object_get_ex(digests, "sha256", &b)) {
				if (strcmp(json_object_get_string(a), json_object_get_string(b)) == 0)
					return r;
			} else if (json_object_object_get_ex(first, "sha1", &a) && json_object_object_get_ex(digests, "sha1", &b)) {
				if (strcmp(json_object_get_string(a), json_object_get_string(b)) == 0)
					return r;
			}
		}
	}
	return NULL;
}

MB_EXPORT int mb_policy_generate_from_log(const mb_event_log *log, uint32_t pcrs, uint32_t firmware_pcrs,
					  char **ret_json, mb_error *err)
{
	json_object *root = json_object_new_object(), *jp = json_object_new_object();
	mb_pcr_values *v = malloc(sizeof(*v));
	size_t n = mb_event_log_count(log), i, b;
	uint32_t pcr;
	int rc;

	if (!root || !jp || !v) {
		rc = mb_fail(err, -ENOMEM, "out of memory");
		goto out;
	}
	rc = mb_replay_log(log, SIZE_MAX, v, NULL, err);
	if (rc < 0)
		goto out;
	json_object_object_add(root, "version", json_object_new_int(1));
	json_object_object_add(root, "description",
			       json_object_new_string("generated from a known-good event log: exact values for the firmware "
						      "PCRs, the events seen for the others"));
	json_object_object_add(root, "generator", json_object_new_string("mboot policy generate --from-log"));
	json_object_object_add(root, "pcrs", jp);

	for (pcr = 0; pcr < MB_PCR_COUNT; pcr++) {
		char key[4];
		json_object *entry;
		bool touched = false;

		if (!(pcrs & (1u << pcr)))
			continue;
		for (b = 0; b < v->n_banks; b++)
			touched |= !!(v->banks[b].present & (1u << pcr));
		if (!touched)
			continue;
		snprintf(key, sizeof(key), "%u", pcr);
		entry = json_object_new_object();
		json_object_object_add(jp, key, entry);
		if (firmware_pcrs & (1u << pcr)) {
			json_object *vals = json_object_new_object();

			for (b = 0; b < v->n_banks; b++) {
				char hex[2 * MB_DIGEST_MAX + 1];

				if (v->banks[b].present & (1u << pcr))
					json_object_object_add(vals, mb_digest_by_alg(v->banks[b].alg)->name,
							       json_object_new_string(mb_hex(v->banks[b].value[pcr], v->banks[b].size, hex)));
			}
			json_object_object_add(entry, "values", vals);
			continue;
		}
		{
			json_object *rules = json_object_new_array();

			json_object_object_add(entry, "rules", rules);
			for (i = 0; i < n; i++) {
				const mb_event *ev = mb_event_log_event(log, i);
				const char *type = mb_event_type_name(ev->type);
				mb_digest_check check;
				char *text = NULL, *pattern = NULL, tbuf[16];
				json_object *rule, *ds, *max;

				if (ev->pcr != pcr || ev->type == MB_EV_NO_ACTION)
					continue;
				if (!type) {
					snprintf(tbuf, sizeof(tbuf), "0x%08x", ev->type);
					type = tbuf;
				}
				if (mb_event_check_digest(ev, &check) == 0 &&
				    (check.status == MB_DIGEST_MATCH || check.status == MB_DIGEST_MATCH_ALTERNATE))
					text = mb_event_text(ev);
				if (text && !(pattern = regex_literal(text))) {
					free(text);
					rc = mb_fail(err, -ENOMEM, "out of memory");
					goto out;
				}
				ds = digests_of(ev);
				rule = find_rule(rules, type, pattern, ds);
				if (rule) {
					json_object_object_get_ex(rule, "max", &max);
					json_object_set_int64(max, json_object_get_int64(max) + 1);
					json_object_put(ds);
				} else {
					rule = json_object_new_object();
					json_object_object_add(rule, "type", json_object_new_string(type));
					if (pattern) {
						json_object_object_add(rule, "text", json_object_new_string(pattern));
						json_object_put(ds);
					} else {
						json_object *dec = mb_event_decode(log, ev), *arr = json_object_new_array();
						const char *desc = string_field(dec, "description");

						if (desc)
							json_object_object_add(ds, "description", json_object_new_string(desc));
						json_object_array_add(arr, ds);
						json_object_object_add(rule, "digests", arr);
						json_object_put(dec);
					}
					json_object_object_add(rule, "required", json_object_new_boolean(true));
					json_object_object_add(rule, "max", json_object_new_int64(1));
					json_object_array_add(rules, rule);
				}
				free(text);
				free(pattern);
			}
		}
	}
	{
		const char *s = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
								     JSON_C_TO_STRING_NOSLASHESCAPE);
		*ret_json = s ? strdup(s) : NULL;
		rc = *ret_json ? 0 : mb_fail(err, -ENOMEM, "out of memory");
	}
out:
	free(v);
	json_object_put(root);
	return rc;
}
