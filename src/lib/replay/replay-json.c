/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* `log replay --json`'s document: the PCR values' shape, and what the replay noticed ("info"). */
#include <stdlib.h>

#include <mboot/digest.h>
#include <mboot/replay.h>

#include "shared/json.h"

static json_t *info_json(const mb_replay_info *info, const mb_pcr_values *v)
{
	json_t *o = json_object(), *incomplete = NULL;
	size_t b, i;

	for (b = 0; b < mb_pcr_values_n_banks(v); b++) {
		json_t *list;
		uint32_t p;

		if (!info->incomplete || !info->incomplete[b])
			continue;
		/* PCRs some event extended without a digest for this bank: the value is not the TPM's. */
		list = json_array();
		for (p = 0; p < MB_PCR_COUNT; p++)
			if (info->incomplete[b] & (1u << p))
				json_array_append_new(list, json_integer((int) p));
		if (!incomplete)
			json_object_set_new(o, "incomplete", incomplete = json_object());
		json_object_set_new(incomplete, mb_digest_by_alg(mb_pcr_values_bank_alg(v, b))->name, list);
	}
	if (info->startup_locality_seen)
		json_object_set_new(o, "startup_locality", json_integer(info->startup_locality));
	json_object_set_new(o, "hcrtm", json_boolean(info->hcrtm));
	json_object_set_new(o, "events_extended", json_integer(info->events_extended));
	json_object_set_new(o, "events_not_extended_no_action", json_integer(info->events_no_action));
	json_object_set_new(o, "events_pcr_out_of_range", json_integer(info->events_out_of_range));
	if (info->n_unknown_algs) {
		json_t *u = json_array();

		for (i = 0; i < info->n_unknown_algs; i++) {
			char name[8];

			json_array_append_new(u, json_text(mb_digest_alg_name(info->unknown_algs[i], name)));
		}
		json_object_set_new(o, "banks_not_replayed", u);
	}
	return o;
}

MB_EXPORT char *mb_replay_to_json(const mb_pcr_values *v, const mb_replay_info *info, bool pretty)
{
	json_build_mark mark = json_build_begin();
	char *s = mb_pcr_values_to_json(v, false), *text;
	json_t *root = s ? json_from_text(s) : NULL;

	free(s);
	if (!root)
		return NULL;
	if (info)
		json_object_set_new(root, "info", info_json(info, v));
	text = json_write_built(root, pretty ? JSON_LAYOUT_PRETTY : JSON_LAYOUT_COMPACT, mark);
	json_decref(root);
	return text;
}
