/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The verdict of `mboot verify --json` as one document: the log's verdicts per PCR and bank
 * (mb_verify_log), and, when a policy was asked for, its verdict (mb_policy_check). Written here,
 * once; the tool only chooses pretty or compact (docs/verify.md, "JSON").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/json.h"
#include "lib/policy/policy-ima-json.h"

#include <mboot/cel.h>
#include <mboot/eventlog.h>
#include <mboot/policy.h>
#include <mboot/verify.h>
#include "shared/violation-json.h"

static json_t *pcr_json(const mb_verify_pcr *r)
{
	json_t *o = json_object();
	char name[8];

	json_object_set_new(o, "pcr", json_integer(r->pcr));
	json_object_set_new(o, "bank", json_text(mb_digest_alg_name(r->alg, name)));
	json_object_set_new(o, "verdict", json_text(mb_pcr_verdict_name(r->verdict)));
	json_object_set_new(o, "events", json_integer(r->n_events));
	if (r->n_userspace)
		json_object_set_new(o, "userspace_records", json_integer(r->n_userspace));
	/* expected: the log replayed, where the log gives a value in this bank */
	if (r->verdict == MB_PCR_VERIFIED || r->verdict == MB_PCR_MISMATCH || r->verdict == MB_PCR_NO_VALUE ||
	    r->verdict == MB_PCR_NOT_COVERED || r->verdict == MB_PCR_DATA_MISMATCH ||
	    r->verdict == MB_PCR_USERSPACE_NOT_ALLOWED)
		json_object_set_new(o, "expected", json_hex(r->expected, r->size));
	if (r->verdict != MB_PCR_NO_VALUE)
		json_object_set_new(o, "actual", json_hex(r->actual, r->size));
	if (r->n_untrusted_data)
		json_object_set_new(o, "events_untrusted_data", json_integer(r->n_untrusted_data));
	if (r->verdict == MB_PCR_MISMATCH || r->verdict == MB_PCR_DATA_MISMATCH) {
		json_t *bad = json_array();
		uint32_t k;

		for (k = 0; k < r->n_bad_listed; k++)
			json_array_append_new(bad, json_integer(r->bad_digest_events[k]));
		json_object_set_new(o, "events_digest_mismatch", bad);
		if (r->prefix_match)
			json_object_set_new(o, r->last_good_userspace ? "last_agreeing_userspace_record" :
					       "last_agreeing_event", json_integer(r->last_good_event));
		if (r->extra_event >= 0)
			json_object_set_new(o, "matches_without_event", json_integer(r->extra_event));
		if (r->edit_search_capped)
			json_object_set_new(o, "edit_search_capped", json_boolean(true));
		if (r->swapped_event >= 0) {
			json_t *sw = json_array();

			json_array_append_new(sw, json_integer(r->swapped_event));
			json_array_append_new(sw, json_integer(r->swapped_next));
			json_object_set_new(o, "matches_with_events_swapped", sw);
		}
		if (r->quirk == MB_QUIRK_EXIT_BOOT_SERVICES) {
			json_object_set_new(o, "quirk", json_text("missing-exit-boot-services-events"));
		} else if (r->quirk == MB_QUIRK_STARTUP_LOCALITY) {
			json_object_set_new(o, "quirk", json_text("startup-locality"));
			json_object_set_new(o, "quirk_locality", json_integer(r->quirk_locality));
		}
	}
	return o;
}

/* One violation (shared/violation-json.h, the attest verdict's shape), with the judged bank's digest. */
static json_t *violation_json(const mb_policy_violation *v, uint16_t bank)
{
	violation_view view = {
		.pcr = v->pcr, .event = -1, .record = -1, .reason = v->reason,
		.closest_rules = v->closest_rules, .n_closest_rules = v->n_closest_rules,
	};
	const mb_event_digest *d = NULL;
	char *text = NULL, tbuf[MB_EVENT_TYPE_LABEL_SIZE];
	json_t *o;

	if (v->event) {
		errno = 0;
		text = mb_event_text(v->event);
		if (!text && errno == ENOMEM)
			json_build_note_failure(); /* the text would be missing: no document */
		d = mb_event_digest_for(v->event, bank);
		view.event = v->event->number;
		view.type = mb_event_type_label(v->event->type, tbuf);
		view.text = text;
		view.text_len = text ? strlen(text) : 0;
	} else if (v->record) {
		d = mb_cel_record_digest(v->record, bank);
		view.record = (int64_t) v->record_index;
		view.text = v->record->text;
		view.text_len = v->record->text_len;
	}
	if (d) {
		view.digest = d->bytes;
		view.digest_size = d->size;
	}
	o = violation_json_new(&view);
	free(text);
	return o;
}

static json_t *policy_json(const mb_verify_result *res, const mb_policy *policy, const mb_policy_result *pr)
{
	json_t *o = json_object(), *pcrs, *ng, *viol;
	const mb_digest_info *info;
	uint32_t p;
	size_t i;

	if (!pr) {
		json_object_set_new(o, "checked", json_boolean(false));
		json_object_set_new(o, "reason", json_text(mb_verify_result_ok(res) ? "the policy check failed" :
								   "the log did not verify"));
		return o;
	}
	info = mb_digest_by_alg(pr->bank);
	json_object_set_new(o, "checked", json_boolean(true));
	json_object_set_new(o, "ok", json_boolean(mb_policy_result_ok(pr)));
	json_object_set_new(o, "bank", json_text(info ? info->name : "?"));
	if (mb_policy_n_firmware_sets(policy))
		json_object_set_new(o, "firmware_set", pr->firmware_set ? json_text(pr->firmware_set) : json_null());
	pcrs = json_object();
	for (p = 0; p < MB_PCR_COUNT; p++) {
		char key[4];

		snprintf(key, sizeof(key), "%u", p);
		if (pr->pcr[p] != MB_POLICY_PCR_NOT_GOVERNED)
			json_object_set_new(pcrs, key, json_text(mb_policy_verdict_name(pr->pcr[p])));
	}
	json_object_set_new(o, "pcrs", pcrs);
	/* PCRs the logs extend that the policy does not mention: reported, not judged. */
	ng = json_array();
	for (p = 0; p < MB_PCR_COUNT; p++)
		if (pr->pcr[p] == MB_POLICY_PCR_NOT_GOVERNED && (mb_verify_result_log_pcrs(res) & (1u << p)))
			json_array_append_new(ng, json_integer((int) p));
	json_object_set_new(o, "not_governed", ng);
	viol = json_array();
	for (i = 0; i < pr->n_violations; i++)
		json_array_append_new(viol, violation_json(&pr->violations[i], pr->bank));
	json_object_set_new(o, "violations", viol);
	return o;
}

MB_EXPORT char *mb_verify_result_to_json(const mb_verify_result *res, const char *source,
					 const struct mb_policy *policy, const struct mb_policy_result *checked,
					 bool pretty)
{
	return mb_verify_result_to_json_ima(res, source, policy, checked, false, NULL, pretty);
}

MB_EXPORT char *mb_verify_result_to_json_ima(const mb_verify_result *res, const char *source,
					     const struct mb_policy *policy, const struct mb_policy_result *checked,
					     bool ima_asked, const struct mb_ima_policy_result *ima, bool pretty)
{
	json_build_mark mark = json_build_begin();
	bool verified;
	json_t *root, *arr;
	char *out;
	size_t i;

	if (!res || !source || (checked && !policy)) {
		errno = EINVAL;
		return NULL;
	}
	/* The verdict of everything asked (the log and the policy); the log's own apart. */
	verified = mb_verify_result_ok(res) && (!policy || (checked && mb_policy_result_ok(checked))) &&
		   (!ima_asked || (ima && mb_ima_policy_result_ok(ima)));
	root = json_object();
	json_object_set_new(root, "verified", json_boolean(verified));
	json_object_set_new(root, "log_verified", json_boolean(mb_verify_result_ok(res)));
	json_object_set_new(root, "source", json_text(source));
	json_object_set_new(root, "pcrs_verified", json_integer(mb_verify_result_n_verified(res)));
	json_object_set_new(root, "pcrs_failed", json_integer(mb_verify_result_n_failed(res)));
	arr = json_array();
	for (i = 0; i < mb_verify_result_count(res); i++)
		json_array_append_new(arr, pcr_json(mb_verify_result_entry(res, i)));
	json_object_set_new(root, "pcrs", arr);
	if (policy)
		json_object_set_new(root, "policy", policy_json(res, policy, checked));
	if (ima_asked) {
		json_t *io = ima ? policy_ima_result_json(ima) : json_object();

		if (!ima) {
			json_object_set_new(io, "checked", json_false());
			json_object_set_new(io, "reason", json_text("the IMA list was not judged"));
		}
		json_object_set_new(root, "ima", io);
	}
	out = json_write_built(root, pretty ? JSON_LAYOUT_PRETTY : JSON_LAYOUT_COMPACT, mark);
	json_decref(root);
	if (!out)
		errno = ENOMEM;
	return out;
}
