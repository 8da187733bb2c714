/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One event as JSON: the element of `log show --json`'s events and of `log diff --json`'s sides. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/digest.h>
#include <mboot/events.h>
#include "shared/jsonout.h"
#include "lib/events/event-json.h"

/*
 * Each event's envelope (index, PCR, type, digests, data) goes straight into the buffer
 * instead of into a tree that is then written out: for a 100,000-event log that was most of
 * the time. The decoded data is the library's typed tree, written by jsonout_decoded(). The
 * layout is the writer's (jsonout.h), pretty or compact: every string the envelope writes
 * itself is hex, a static name or a "0x..." number, so none needs escaping.
 */
int event_json_write(jsonout *b, const mb_event_log *log, const mb_event *ev, mb_event_decoded *dec,
		     const mb_digest_check *checked)
{
	char tbuf[MB_EVENT_TYPE_LABEL_SIZE], name[8];
	const char *type = mb_event_type_label(ev->type, tbuf);
	size_t type_len = strlen(type), depth = b->depth + 1, line = jsonout_line_room(depth + 1), room;
	bool pretty = b->pretty;
	mb_digest_check check;
	int status = -1, decoded;
	uint32_t i;
	char *d;

	/*
	 * Up to "data": one run (jsonout_at_*) in room for every piece at its largest: the braces,
	 * eight keys (a comma, a line, "\"record_size\": " the longest), five numbers, the type,
	 * each digest (a comma, a line, its name, quotes, colon, blank, hex) and the digests'
	 * closing line, the data's hex.
	 */
	room = 2 + 8 * (1 + line + 16) + 5 * JSONOUT_U64_ROOM + type_len + 2 + line + 1 + 2 + 2 * (size_t) ev->data_size;
	for (i = 0; i < ev->n_digests; i++)
		room += 1 + line + strlen(mb_digest_alg_name(ev->digests[i].alg, name)) + 6 +
			2 * (size_t) ev->digests[i].size;
	d = jsonout_room(b, room);
	if (!d)
		return -1;
	*d++ = '{';
	d = jsonout_at_key(d, pretty, depth, true, "index");
	d = jsonout_at_u64(d, ev->number);
	d = jsonout_at_key(d, pretty, depth, false, "offset");
	d = jsonout_at_u64(d, ev->offset);
	d = jsonout_at_key(d, pretty, depth, false, "record_size");
	d = jsonout_at_u64(d, ev->record_size);
	d = jsonout_at_key(d, pretty, depth, false, "pcr");
	d = jsonout_at_u64(d, ev->pcr);
	d = jsonout_at_key(d, pretty, depth, false, "type");
	*d++ = '"';
	memcpy(d, type, type_len);
	d += type_len;
	*d++ = '"';
	d = jsonout_at_key(d, pretty, depth, false, "type_value");
	d = jsonout_at_u64(d, ev->type);
	d = jsonout_at_key(d, pretty, depth, false, "digests");
	*d++ = '{';
	/* The parser refuses two digests of one algorithm: every key is new. */
	for (i = 0; i < ev->n_digests; i++) {
		const char *alg = mb_digest_alg_name(ev->digests[i].alg, name);
		size_t alg_len = strlen(alg);

		if (i)
			*d++ = ',';
		if (pretty)
			d = jsonout_at_line(d, depth + 1);
		*d++ = '"';
		memcpy(d, alg, alg_len);
		d += alg_len;
		*d++ = '"';
		*d++ = ':';
		if (pretty)
			*d++ = ' ';
		*d++ = '"';
		d = jsonout_at_hex(d, ev->digests[i].bytes, ev->digests[i].size);
		*d++ = '"';
	}
	/* As jsonout_close: the brace on a line of its own at the members' depth, but after none. */
	if (pretty && ev->n_digests > 0)
		d = jsonout_at_line(d, depth);
	*d++ = '}';
	d = jsonout_at_key(d, pretty, depth, false, "data");
	*d++ = '"';
	d = jsonout_at_hex(d, ev->data, ev->data_size);
	*d++ = '"';
	b->n = (size_t) (d - b->p);
	b->depth = depth;
	b->opened = false;
	jsonout_key(b, "decoded");
	/* Out of memory loses the document (b->oom), not just this member. */
	decoded = mb_event_decode(log, ev, dec);
	if (decoded == 0)
		jsonout_decoded(b, mb_event_decoded_root(dec));
	else if (decoded == -ENOMEM)
		b->oom = true;
	else
		jsonout_lit(b, "null");
	if (checked)
		check = *checked;
	if (checked || mb_event_check_digest(ev, &check) == 0) {
		status = (int) check.status;
		jsonout_key(b, "digest_check");
		jsonout_lit(b, "\"");
		jsonout_raw(b, mb_digest_status_name(check.status));
		jsonout_lit(b, "\"");
		if (check.rule) {
			jsonout_key(b, "digest_rule");
			jsonout_lit(b, "\"");
			jsonout_raw(b, check.rule);
			jsonout_lit(b, "\"");
		}
	}
	if (ev->pcr >= MB_PCR_COUNT) {
		jsonout_key(b, "pcr_out_of_range");
		jsonout_lit(b, "true");
	}
	jsonout_close(b, '}');
	return status;
}

MB_EXPORT char *mb_event_to_json(const mb_event_log *log, const mb_event *ev, bool pretty)
{
	mb_event_decoded *dec = mb_event_decoded_new();
	jsonout b = { .pretty = pretty };

	if (!dec)
		return NULL;
	(void) event_json_write(&b, log, ev, dec, NULL);
	jsonout_put(&b, "", 1);
	mb_event_decoded_free(dec);
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	return b.p;
}
