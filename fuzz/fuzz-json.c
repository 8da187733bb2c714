/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Input: any bytes, taken as a JSON text for src/shared/json-read (the reader of every JSON
 * file users give mboot). When it parses: the tree written out by mboot's writer, compact and
 * pretty, must parse strictly again to the same tree, and without reals (whose digits the two
 * choose differently) be byte for byte what jansson's own writer prints. When it does not: the
 * message has a line and a column and the offset lies inside the text.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shared/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool has_real(const json_t *v)
{
	size_t i;

	if (json_is_real(v))
		return true;
	if (json_is_array(v))
		for (i = 0; i < json_array_size(v); i++)
			if (has_real(json_array_get(v, i)))
				return true;
	if (json_is_object(v))
		json_object_each(v, key, m)
			if (has_real(m))
				return true;
	return false;
}

static void round_trip(const json_t *o, json_layout layout, size_t jansson_flags)
{
	char *out = json_write(o, layout), *ref;
	json_t *again = NULL;

	if (!out || untrusted_json_parse(out, strlen(out), 16, &again, NULL) < 0 || !json_equal(o, again))
		abort();
	if (!has_real(o)) {
		ref = json_dumps(o, jansson_flags | JSON_ENCODE_ANY);
		if (!ref || strcmp(ref, out) != 0)
			abort();
		free(ref);
	}
	json_decref(again);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *) data;
	json_t *o = NULL;
	mb_error err = { 0 };
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
	round_trip(o, JSON_LAYOUT_COMPACT, JSON_COMPACT);
	round_trip(o, JSON_LAYOUT_PRETTY, JSON_INDENT(2));
	json_decref(o);
	return 0;
}
