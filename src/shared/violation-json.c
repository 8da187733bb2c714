/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <mboot/digest.h>
#include "shared/hex.h"
#include "shared/violation-json.h"

json_object *violation_json_new(const violation_view *v)
{
	json_object *o = json_object_new_object();
	char hex[2 * MB_DIGEST_MAX + 1];
	size_t k;

	json_object_object_add(o, "pcr", json_object_new_int64(v->pcr));
	if (v->event >= 0) {
		json_object_object_add(o, "event", json_object_new_int64(v->event));
		json_object_object_add(o, "type", json_object_new_string(v->type));
	} else if (v->record >= 0) {
		json_object_object_add(o, "userspace_record", json_object_new_int64(v->record));
	}
	if (v->text)
		json_object_object_add(o, "text", json_object_new_string_len(v->text, (int) v->text_len));
	if (v->digest && v->digest_size <= MB_DIGEST_MAX)
		json_object_object_add(o, "digest", json_object_new_string(hex_format(v->digest, v->digest_size, hex)));
	json_object_object_add(o, "reason", json_object_new_string(v->reason));
	if (v->n_closest_rules) {
		json_object *rules = json_object_new_array();

		for (k = 0; k < v->n_closest_rules; k++)
			json_object_array_add(rules, json_object_new_string(v->closest_rules[k]));
		json_object_object_add(o, "closest_rules", rules);
	}
	return o;
}
