/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One event as JSON, the two ways the tool writes it (log show --json, log diff --json). */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "shared/hex.h"
#include "shared/jsonout.h"
#include "tool/tool.h"

static void add_digests(json_object *o, const mb_event *ev)
{
	json_object *d = json_object_new_object();
	uint32_t i;

	for (i = 0; i < ev->n_digests; i++) {
		char name[8], *hex = hex_dup(ev->digests[i].bytes, ev->digests[i].size);

		if (hex)
			json_object_object_add(d, mb_digest_alg_name(ev->digests[i].alg, name), json_object_new_string(hex));
		free(hex);
	}
	json_object_object_add(o, "digests", d);
}

/* The decoded data as a json-c value, read back from the library's JSON text (NULL on out-of-memory). */
static json_object *decoded_json(const mb_event_log *log, const mb_event *ev)
{
	mb_event_decoded *dec = mb_event_decoded_new();
	json_object *o = NULL;
	char *text = NULL;

	if (dec && mb_event_decode(log, ev, dec) == 0)
		text = mb_event_decoded_json(dec);
	if (text)
		o = json_tokener_parse(text);
	free(text);
	mb_event_decoded_free(dec);
	return o;
}

json_object *tool_event_json(const mb_event_log *log, const mb_event *ev)
{
	json_object *o = json_object_new_object();
	char tbuf[16], *hex;
	mb_digest_check check;

	json_object_object_add(o, "index", json_object_new_int64(ev->number));
	json_object_object_add(o, "offset", json_object_new_int64((int64_t) ev->offset));
	json_object_object_add(o, "record_size", json_object_new_int64(ev->record_size));
	json_object_object_add(o, "pcr", json_object_new_int64(ev->pcr));
	json_object_object_add(o, "type", json_object_new_string(tool_type_name(ev->type, tbuf)));
	json_object_object_add(o, "type_value", json_object_new_int64(ev->type));
	add_digests(o, ev);
	hex = hex_dup(ev->data, ev->data_size);
	json_object_object_add(o, "data", json_object_new_string(hex ? hex : ""));
	free(hex);
	json_object_object_add(o, "decoded", decoded_json(log, ev));
	if (mb_event_check_digest(ev, &check) == 0) {
		json_object_object_add(o, "digest_check", json_object_new_string(mb_digest_status_name(check.status)));
		if (check.rule)
			json_object_object_add(o, "digest_rule", json_object_new_string(check.rule));
	}
	if (ev->pcr >= MB_PCR_COUNT)
		json_object_object_add(o, "pcr_out_of_range", json_object_new_boolean(true));
	return o;
}

/*
 * `log show --json` writes each event's envelope (index, PCR, type, digests, data) straight
 * into a buffer instead of building a json-c tree for it and serialising that: a
 * 100,000-event log spent most of its time there. The decoded data is the library's typed tree,
 * written by jsonout_decoded() (no json-c object either). The bytes are exactly what json-c
 * printed for tool_event_json() with JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE
 * (b->pretty: with JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED as well): every string
 * the envelope writes itself is hex, a static name or a "0x..." number, so none needs escaping.
 */
int tool_event_write(jsonout *b, const mb_event_log *log, const mb_event *ev, mb_event_decoded *dec,
		     const mb_digest_check *checked)
{
	char tbuf[16], name[8];
	const char *type = tool_type_name(ev->type, tbuf);
	size_t type_len = strlen(type), depth = b->depth + 1, line = jsonout_line_room(depth + 1), room;
	bool pretty = b->pretty;
	mb_digest_check check;
	int status = -1;
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
	/* As jsonout_close: the brace on a line of its own at the members' depth. */
	if (pretty)
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
	/* Out of memory prints null, as json-c did for a NULL object. */
	if (mb_event_decode(log, ev, dec) == 0)
		jsonout_decoded(b, mb_event_decoded_root(dec));
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
