/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One event as JSON, the two ways the tool writes it (log show --json, log diff --json). */
#include <stdlib.h>

#include "shared/json-dl.h"

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
	char tbuf[16];
	mb_digest_check check;
	int status = -1;
	uint32_t i;

	jsonout_open(b, '{');
	jsonout_key(b, "index");
	jsonout_u64(b, ev->number);
	jsonout_key(b, "offset");
	jsonout_u64(b, ev->offset);
	jsonout_key(b, "record_size");
	jsonout_u64(b, ev->record_size);
	jsonout_key(b, "pcr");
	jsonout_u64(b, ev->pcr);
	jsonout_key(b, "type");
	jsonout_lit(b, "\"");
	jsonout_raw(b, tool_type_name(ev->type, tbuf));
	jsonout_lit(b, "\"");
	jsonout_key(b, "type_value");
	jsonout_u64(b, ev->type);
	jsonout_key(b, "digests");
	jsonout_open(b, '{');
	/* The parser refuses two digests of one algorithm: every key is new. */
	for (i = 0; i < ev->n_digests; i++) {
		char name[8];

		jsonout_next(b);
		jsonout_lit(b, "\"");
		jsonout_raw(b, mb_digest_alg_name(ev->digests[i].alg, name));
		jsonout_lit(b, "\"");
		jsonout_colon(b);
		jsonout_lit(b, "\"");
		jsonout_hex(b, ev->digests[i].bytes, ev->digests[i].size);
		jsonout_lit(b, "\"");
	}
	jsonout_close(b, '}');
	jsonout_key(b, "data");
	jsonout_lit(b, "\"");
	jsonout_hex(b, ev->data, ev->data_size);
	jsonout_lit(b, "\"");
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
