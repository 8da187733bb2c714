/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* `mboot luks list --json`'s document (docs/luks.md): a device's tokens and recovery keyslots. */
#include <stdlib.h>

#include <mboot/digest.h>
#include <mboot/luks.h>
#include "shared/json.h"

/* The set bits of mask below limit, as a list of numbers. */
static json_t *bit_list(uint32_t mask, unsigned limit)
{
	json_t *a = json_array();

	for (unsigned p = 0; p < limit; p++)
		if (mask & (1u << p))
			json_array_append_new(a, json_integer((json_int_t) p));
	return a;
}

static json_t *entry_json(const mb_luks_entry *e)
{
	const mb_luks_token *t = e->parsed;
	json_t *o = json_object();
	char name[8];

	json_object_set_new(o, "token", json_integer(e->token));
	if (!t) {
		json_object_set_new(o, "error", json_text(e->error.message));
		return o;
	}
	json_object_set_new(o, "keyslot", json_integer(mb_luks_token_keyslot(t)));
	json_object_set_new(o, "policy", json_text(mb_luks_token_policy(t)));
	if (mb_luks_token_pin(t))
		json_object_set_new(o, "pin", json_true());
	if (mb_luks_token_bank(t)) {
		uint32_t summarised = 0;
		int n_events = mb_luks_token_events(t, &summarised);

		json_object_set_new(o, "bank", json_text(mb_digest_alg_name(mb_luks_token_bank(t), name)));
		json_object_set_new(o, "pcrs", bit_list(mb_luks_token_pcrs(t), MB_PCR_COUNT));
		if (n_events >= 0) {
			json_object_set_new(o, "events", json_integer(n_events));
			json_object_set_new(o, "events_pcrs", bit_list(summarised, MB_PCR_COUNT));
		}
	}
	return o;
}

MB_EXPORT char *mb_luks_list_to_json(const char *device, const mb_luks_entry *entries, size_t n,
				     const uint32_t *recovery_keyslots, bool pretty)
{
	json_build_mark mark = json_build_begin();
	json_t *root = json_object(), *tokens = json_array();
	char *out;

	json_object_set_new(root, "device", json_text(device));
	json_object_set_new(root, "tokens", tokens);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(tokens, entry_json(&entries[i]));
	if (recovery_keyslots)
		json_object_set_new(root, "recovery_keyslots", bit_list(*recovery_keyslots, 32));
	out = json_write_built(root, pretty ? JSON_LAYOUT_PRETTY : JSON_LAYOUT_COMPACT, mark);
	json_decref(root);
	return out;
}
