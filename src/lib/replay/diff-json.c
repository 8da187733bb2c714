/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* `mboot log diff --json`'s document (mb_diff_to_json). */
#include <stdlib.h>
#include <string.h>

#include <mboot/diff.h>
#include "shared/jsonout.h"
#include "shared/log-show.h"
#include "lib/events/event-json.h"

MB_EXPORT const char *mb_diff_kind_name(mb_diff_kind k)
{
	switch (k) {
	case MB_DIFF_ADDED:
		return "added";
	case MB_DIFF_REMOVED:
		return "removed";
	case MB_DIFF_CHANGED:
		return "changed";
	}
	return "unknown";
}

/* "differs": {"digests": [banks whose digests differ, A's then those only B has], "data", "data_measured"}. */
static void differs_write(jsonout *b, const mb_diff_entry *e)
{
	const mb_event *sides[2] = { e->a, e->b };
	uint32_t i, s;

	jsonout_open(b, '{');
	jsonout_key(b, "digests");
	jsonout_open(b, '[');
	for (s = 0; s < 2; s++)
		for (i = 0; i < sides[s]->n_digests; i++) {
			uint16_t alg = sides[s]->digests[i].alg;
			char name[8];
			const char *n;

			/* B's banks: only those A lacks (A's loop named the rest). */
			if (log_digest_same(e->a, e->b, alg) || (s == 1 && mb_event_digest_for(e->a, alg)))
				continue;
			n = mb_digest_alg_name(alg, name);
			jsonout_next(b);
			jsonout_string(b, n, strlen(n));
		}
	jsonout_close(b, ']');
	jsonout_key(b, "data");
	if (e->differs & MB_DIFF_DATA)
		jsonout_lit(b, "true");
	else
		jsonout_lit(b, "false");
	jsonout_key(b, "data_measured");
	if (e->data_measured)
		jsonout_lit(b, "true");
	else
		jsonout_lit(b, "false");
	jsonout_close(b, '}');
}

/* One side of an entry: the event as log show --json writes it, or null. */
static void side_write(jsonout *b, const mb_event_log *log, const mb_event *ev, mb_event_decoded *dec)
{
	if (ev)
		(void) event_json_write(b, log, ev, dec, NULL);
	else
		jsonout_lit(b, "null");
}

/* Written as it goes, the events by the event writer (their decoded data may hold integers no
 * JSON tree here can: GPT attributes up to 2^64 - 1). */
MB_EXPORT char *mb_diff_to_json(const mb_diff *d, const mb_event_log *a, const mb_event_log *b, bool pretty)
{
	jsonout o = { .pretty = pretty };
	mb_event_decoded *dec;
	size_t i;
	uint32_t p;

	if (!d)
		return NULL;
	dec = mb_event_decoded_new();
	if (!dec)
		return NULL;
	jsonout_open(&o, '{');
	jsonout_key(&o, "entries");
	jsonout_open(&o, '[');
	for (i = 0; i < d->n_entries; i++) {
		const mb_diff_entry *e = &d->entries[i];
		const char *change = mb_diff_kind_name(e->kind);

		jsonout_next(&o);
		jsonout_open(&o, '{');
		jsonout_key(&o, "change");
		jsonout_string(&o, change, strlen(change));
		jsonout_key(&o, "pcr");
		jsonout_u64(&o, e->pcr);
		jsonout_key(&o, "a");
		side_write(&o, a, e->a, dec);
		jsonout_key(&o, "b");
		side_write(&o, b, e->b, dec);
		if (e->kind == MB_DIFF_CHANGED) {
			jsonout_key(&o, "differs");
			differs_write(&o, e);
		}
		jsonout_close(&o, '}');
	}
	jsonout_close(&o, ']');
	jsonout_key(&o, "pcrs_moved");
	jsonout_open(&o, '[');
	for (p = 0; p < MB_PCR_COUNT; p++)
		if (d->pcrs_moved & (1u << p)) {
			jsonout_next(&o);
			jsonout_u64(&o, p);
		}
	jsonout_close(&o, ']');
	jsonout_key(&o, "identical");
	if (d->n_entries == 0)
		jsonout_lit(&o, "true");
	else
		jsonout_lit(&o, "false");
	jsonout_close(&o, '}');
	jsonout_put(&o, "", 1);
	mb_event_decoded_free(dec);
	if (o.oom) {
		free(o.p);
		return NULL;
	}
	return o.p;
}
