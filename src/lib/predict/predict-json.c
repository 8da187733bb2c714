/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* `mboot predict --json`'s document (docs/predict.md): mb_predict_result_to_json. */
#include <stdio.h>
#include <stdlib.h>

#include <mboot/predict.h>
#include "shared/json.h"
#include "shared/jsonout.h"

/* A tree, written into o and dropped. */
static void put_tree(jsonout *o, json_t *v)
{
	if (!v) {
		o->oom = true;
		return;
	}
	jsonout_json(o, v);
	json_decref(v);
}

MB_EXPORT char *mb_predict_result_to_json(const mb_predict_result *r, const char *const (*unmatched)[3],
					  size_t n_unmatched, bool pretty)
{
	json_build_mark mark = json_build_begin();
	bool none_matched = r->unmatched || r->unmatched_efi || r->unmatched_grub_cfg || r->unmatched_efi_var;
	json_t *changed = json_array(), *unpred = json_object(), *notes = json_object(), *list = json_array();
	jsonout o = { .pretty = pretty };

	for (uint32_t p = 0; p < MB_PCR_COUNT; p++) {
		char key[4];

		snprintf(key, sizeof(key), "%u", p);
		if (r->changed & (1u << p) && !none_matched)
			json_array_append_new(changed, json_integer((json_int_t) p));
		if (r->unpredictable & (1u << p))
			json_object_set_new(unpred, key, json_text(r->why[p] ? r->why[p] : "unknown"));
		else if (r->why[p])
			json_object_set_new(notes, key, json_text(r->why[p]));
	}
	for (size_t i = 0; i < n_unmatched; i++) {
		json_t *u = json_object();

		json_object_set_new(u, "option", json_text(unmatched[i][0]));
		json_object_set_new(u, "value", json_text(unmatched[i][1] ? unmatched[i][1] : ""));
		json_object_set_new(u, "why", json_text(unmatched[i][2]));
		json_array_append_new(list, u);
	}
	/* no values when a change matched nothing; none for the unpredictable PCRs */
	jsonout_open(&o, '{');
	jsonout_key(&o, "banks");
	if (r->values)
		jsonout_pcr_banks(&o, r->values);
	else {
		jsonout_open(&o, '{');
		jsonout_close(&o, '}');
	}
	jsonout_key(&o, "changed");
	put_tree(&o, changed);
	jsonout_key(&o, "unpredictable");
	put_tree(&o, unpred);
	jsonout_key(&o, "unmatched");
	put_tree(&o, list);
	jsonout_key(&o, "notes");
	put_tree(&o, notes);
	jsonout_close(&o, '}');
	jsonout_put(&o, "", 1);
	if (o.oom || json_build_failed(mark)) {
		free(o.p);
		return NULL;
	}
	return o.p;
}
