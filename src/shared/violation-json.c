/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <mboot/digest.h>
#include "shared/hex.h"
#include "shared/violation-json.h"

json_t *violation_json_new(const violation_view *v)
{
	json_t *o = json_object();
	char hex[2 * MB_DIGEST_MAX + 1];
	size_t k;

	json_object_set_new(o, "pcr", json_integer(v->pcr));
	if (v->event >= 0) {
		json_object_set_new(o, "event", json_integer(v->event));
		json_object_set_new(o, "type", json_text(v->type));
	} else if (v->record >= 0) {
		json_object_set_new(o, "userspace_record", json_integer(v->record));
	}
	if (v->text)
		json_object_set_new(o, "text", json_textn(v->text, v->text_len));
	if (v->digest && v->digest_size <= MB_DIGEST_MAX)
		json_object_set_new(o, "digest", json_text(hex_format(v->digest, v->digest_size, hex)));
	json_object_set_new(o, "reason", json_text(v->reason));
	if (v->n_closest_rules) {
		json_t *rules = json_array();

		for (k = 0; k < v->n_closest_rules; k++)
			json_array_append_new(rules, json_text(v->closest_rules[k]));
		json_object_set_new(o, "closest_rules", rules);
	}
	return o;
}
