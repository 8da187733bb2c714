/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/events.h>
#include <mboot/policy.h>
#include "lib/replay/pcr-values.h"
#include "event-text.h"
#include "policy-build.h"
#include "shared/fail.h"
#include "shared/hex.h"

char *policy_regex_literal(const char *s)
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

json_t *policy_event_digests(const mb_event *ev)
{
	json_t *o = json_object();
	uint32_t i;

	for (i = 0; o && i < ev->n_digests; i++) {
		const mb_digest_info *d = mb_digest_by_alg(ev->digests[i].alg);
		char hex[2 * MB_DIGEST_MAX + 1];

		if (d && d->size == ev->digests[i].size)
			json_object_set_new(o, d->name, json_text(hex_format(ev->digests[i].bytes, d->size, hex)));
	}
	return o;
}

const char *policy_string_field(json_t *o, const char *key)
{
	json_t *v;

	return o && ((v = json_object_get(o, key)) != NULL) && json_is_string(v) ?
		json_string_value(v) : NULL;
}

/* Two digest sets name the same binary when they agree on every bank both give. */
static bool same_digests(json_t *a, json_t *b)
{
	bool common = false;

	json_object_each(a, k, va) {
		json_t *vb;

		if (strcmp(k, "description") == 0 || !(vb = json_object_get(b, k)))
			continue;
		if (strcmp(json_string_value(va), json_string_value(vb)) != 0)
			return false;
		common = true;
	}
	return common;
}

json_t *policy_find_rule(json_t *rules, const char *type, const char *pattern, json_t *digests)
{
	size_t i, n = json_array_size(rules);

	for (i = 0; i < n; i++) {
		json_t *r = json_array_get(rules, i), *ds;
		const char *t = policy_string_field(r, "type");

		if (!t || strcmp(t, type) != 0)
			continue;
		if (pattern) {
			const char *rt = policy_string_field(r, "text");
			if (rt && strcmp(rt, pattern) == 0)
				return r;
		} else if (digests && ((ds = json_object_get(r, "digests")) != NULL) && json_array_size(ds) == 1 &&
			   same_digests(json_array_get(ds, 0), digests)) {
			return r;
		}
	}
	return NULL;
}

int policy_add_rule(json_t *rules, const char *type, const char *pattern, json_t *digests,
		    const char *description, bool required)
{
	json_t *rule = policy_find_rule(rules, type, pattern, digests), *max;

	if (rule) {
		if (((max = json_object_get(rule, "max")) != NULL))
			json_integer_set(max, json_integer_value(max) + 1);
		json_decref(digests);
		return 0;
	}
	rule = json_object();
	if (!rule) {
		json_decref(digests);
		return -ENOMEM;
	}
	json_object_set_new(rule, "type", json_text(type));
	if (pattern) {
		json_object_set_new(rule, "text", json_text(pattern));
		json_decref(digests);
	} else {
		json_t *arr = json_array();

		if (description)
			json_object_set_new(digests, "description", json_text(description));
		json_array_append_new(arr, digests);
		json_object_set_new(rule, "digests", arr);
	}
	if (description && pattern)
		json_object_set_new(rule, "description", json_text(description));
	json_object_set_new(rule, "required", json_boolean(required));
	json_object_set_new(rule, "max", json_integer(1));
	json_array_append_new(rules, rule);
	return 0;
}

json_t *policy_pcr_entry(json_t *pcrs, uint32_t pcr, const char *kind)
{
	char key[4];
	json_t *entry, *inner;

	snprintf(key, sizeof(key), "%u", pcr);
	if (!(entry = json_object_get(pcrs, key))) {
		entry = json_object();
		json_object_set_new(pcrs, key, entry);
	}
	if (!(inner = json_object_get(entry, kind))) {
		inner = strcmp(kind, "rules") == 0 ? json_array() : json_object();
		json_object_set_new(entry, kind, inner);
	}
	return inner;
}

bool policy_add_values(json_t *pcrs, const mb_pcr_values *v, uint32_t pcr)
{
	json_t *vals = NULL;
	size_t b;

	for (b = 0; b < v->n_banks; b++) {
		char hex[2 * MB_DIGEST_MAX + 1];

		if (!(v->banks[b].present & (1u << pcr)))
			continue;
		if (!vals)
			vals = policy_pcr_entry(pcrs, pcr, "values");
		json_object_set_new(vals, mb_digest_by_alg(v->banks[b].alg)->name,
				       json_text(hex_format(v->banks[b].value[pcr], v->banks[b].size, hex)));
	}
	return vals != NULL;
}

int policy_rules_from_log(json_t *rules, const mb_event_log *log, uint32_t pcr,
			  bool (*skip)(const mb_event *ev, void *ud), void *ud, bool required)
{
	size_t n = mb_event_log_count(log), i;
	grub_string_walk walk = { 0 };

	for (i = 0; i < n; i++) {
		const mb_event *ev = mb_event_log_event(log, i);
		char *text = NULL, *pattern = NULL, tbuf[MB_EVENT_TYPE_LABEL_SIZE];
		const char *type = mb_event_type_label(ev->type, tbuf);
		mb_digest_check check;
		grub_string_kind derived;
		int rc;

		if (ev->pcr != pcr || !mb_event_extends(ev))
			continue;
		/* Every event the checker walks, skipped or not: a rule's text is the one it judges. */
		derived = grub_string_walk_next(&walk, ev);
		if (skip && skip(ev, ud))
			continue;
		if (mb_event_check_digest(ev, &check) == 0 &&
		    (check.status == MB_DIGEST_MATCH || check.status == MB_DIGEST_MATCH_ALTERNATE))
			text = policy_judged_text(ev, derived);
		if (text && !(pattern = policy_regex_literal(text))) {
			free(text);
			return -ENOMEM;
		}
		if (pattern) {
			rc = policy_add_rule(rules, type, pattern, NULL, NULL, required);
		} else {
			char *desc = mb_event_description(log, ev);

			rc = policy_add_rule(rules, type, NULL, policy_event_digests(ev), desc, required);
			free(desc);
		}
		free(text);
		free(pattern);
		if (rc < 0)
			return rc;
	}
	return 0;
}

char *policy_to_string(json_t *root, json_build_mark mark)
{
	return json_write_built(root, JSON_LAYOUT_PRETTY, mark);
}

json_t *policy_root_new(const char *description, const char *generator, json_t **ret_pcrs)
{
	json_t *root = json_object(), *pcrs = json_object();

	if (!root || !pcrs) {
		json_decref(root);
		json_decref(pcrs);
		return NULL;
	}
	json_object_set_new(root, "version", json_integer(1));
	json_object_set_new(root, "description", json_text(description));
	json_object_set_new(root, "generator", json_text(generator));
	json_object_set_new(root, "pcrs", pcrs);
	*ret_pcrs = pcrs;
	return root;
}

int policy_from_log(json_t *pcrs, const mb_event_log *log, uint32_t mask, uint32_t firmware,
		    int (*rules_of)(json_t *pcrs, const mb_event_log *log, uint32_t pcr, void *ud), void *ud,
		    mb_error *err)
{
	mb_pcr_values *v = mb_pcr_values_new();
	uint32_t pcr;
	int rc;

	if (!v)
		return set_error(err, -ENOMEM, "out of memory");
	rc = mb_replay_log(log, SIZE_MAX, v, NULL, err);
	for (pcr = 0; rc >= 0 && pcr < MB_PCR_COUNT; pcr++) {
		bool touched = false;
		size_t b;

		for (b = 0; b < v->n_banks; b++)
			touched |= !!(v->banks[b].present & (1u << pcr));
		if (!touched || !(mask & (1u << pcr)))
			continue;
		if (firmware & (1u << pcr)) {
			/* false only for an untouched PCR, and this one is touched */
			(void) policy_add_values(pcrs, v, pcr);
			continue;
		}
		rc = rules_of ? rules_of(pcrs, log, pcr, ud) :
			policy_rules_from_log(policy_pcr_entry(pcrs, pcr, "rules"), log, pcr, NULL, NULL, true);
		if (rc < 0)
			rc = set_error(err, rc, "out of memory");
	}
	mb_pcr_values_free(v);
	return rc < 0 ? rc : 0;
}
