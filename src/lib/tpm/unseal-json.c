/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `mboot unseal --json`'s document (docs/seal.md): why a secret was not unsealed, the
 * explanation of mb_tpm_unseal_sealed as JSON (mb_unseal_explanation_to_json). No TPM here.
 */
#include <stdlib.h>

#include <mboot/digest.h>
#include <mboot/tpm.h>
#include "shared/json.h"

/* The list of key, added to the document when its first item comes: lists in the order met. */
static json_t *report_list(json_t *report, const char *key)
{
	json_t *a = json_object_get(report, key);

	if (!a) {
		a = json_array();
		json_object_set_new(report, key, a);
	}
	return a;
}

static json_t *pcr_json(const mb_unseal_item *it)
{
	const mb_digest_info *d = mb_digest_by_alg(it->alg);
	json_t *o = json_object();

	json_object_set_new(o, "pcr", json_integer((json_int_t) it->pcr));
	json_object_set_new(o, "bank", json_text(d->name));
	json_object_set_new(o, "expected", json_hex(it->expected, d->size));
	json_object_set_new(o, "actual", it->now_read ? json_hex(it->now, d->size) : json_null());
	if (it->signature)
		json_object_set_new(o, "signature", json_text(it->signature));
	return o;
}

static json_t *event_json(const mb_unseal_item *it)
{
	json_t *o = json_object();

	json_object_set_new(o, "pcr", json_integer((json_int_t) it->pcr));
	json_object_set_new(o, "change", json_text(it->change));
	if (it->before)
		json_object_set_new(o, "before", json_text(it->before));
	if (it->after)
		json_object_set_new(o, "after", json_text(it->after));
	return o;
}

static json_t *other_key_json(const mb_unseal_item *it)
{
	json_t *o = json_object();

	json_object_set_new(o, "file", json_text(it->signature));
	json_object_set_new(o, "key", json_hex(it->key_name, MB_TPM_NAME_SIZE));
	json_object_set_new(o, "sealed_key", json_hex(it->sealed_key_name, MB_TPM_NAME_SIZE));
	return o;
}

MB_EXPORT char *mb_unseal_explanation_to_json(const mb_unseal_explanation *e, bool wrong_pin, bool pretty)
{
	json_build_mark mark = json_build_begin();
	json_t *report = json_object();
	char *out;

	json_object_set_new(report, "unsealed", json_false());
	for (size_t i = 0; e && i < e->n_items; i++) {
		const mb_unseal_item *it = &e->items[i];

		switch (it->kind) {
		case MB_UNSEAL_NOTE:
			json_array_append_new(report_list(report, "notes"), json_text(it->text));
			break;
		case MB_UNSEAL_PCR:
			if (mb_digest_by_alg(it->alg))
				json_array_append_new(report_list(report, "pcrs"), pcr_json(it));
			break;
		case MB_UNSEAL_EVENT:
			json_array_append_new(report_list(report, "events"), event_json(it));
			break;
		case MB_UNSEAL_OTHER_KEY:
			json_array_append_new(report_list(report, "signatures"), other_key_json(it));
			break;
		case MB_UNSEAL_ERROR:
			break; /* the caller's to report, as errors are */
		}
	}
	if (wrong_pin)
		json_object_set_new(report, "wrong_pin", json_true());
	out = json_write_built(report, pretty ? JSON_LAYOUT_PRETTY : JSON_LAYOUT_COMPACT, mark);
	json_decref(report);
	return out;
}
