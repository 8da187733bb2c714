/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Input: any bytes, taken as a JSON text for src/shared/json-read (the reader of every JSON
 * file users give mboot). When it parses: json-c's lenient parser must make the same tree of
 * it (the strict reader only refuses, never reads differently), and that tree written out by
 * json-c must parse strictly again to the same tree. When it does not: the message has a
 * line and a column and the offset lies inside the text.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "shared/json-read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *) data, *out;
	json_object *o = NULL, *lax, *again = NULL;
	json_tokener *tok;
	mb_error err = { 0 };
	size_t out_len;
	int r;

	if (size > (1u << 20))
		return 0;
	r = untrusted_json_parse(text, size, 16, &o, &err);
	if (r < 0) {
		if (r != -EBADMSG && r != -ENOMEM)
			abort();
		if (r == -EBADMSG && (!err.has_offset || err.offset > size || strncmp(err.message, "line ", 5) != 0 ||
				      !strstr(err.message, ", column ")))
			abort();
		return 0;
	}

	tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
	if (!tok)
		abort();
	lax = json_tokener_parse_ex(tok, text, (int) size);
	if (!lax && json_tokener_get_error(tok) == json_tokener_continue)
		lax = json_tokener_parse_ex(tok, "", 1);
	if (json_tokener_get_error(tok) != json_tokener_success || !json_object_equal(o, lax))
		abort();
	json_tokener_free(tok);

	out = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &out_len);
	if (!out || untrusted_json_parse(out, out_len, 16, &again, NULL) < 0 || !json_object_equal(o, again))
		abort();
	json_object_put(again);
	json_object_put(lax);
	json_object_put(o);
	return 0;
}
