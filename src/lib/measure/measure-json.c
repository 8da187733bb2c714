/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The content of `mboot measure`'s records (content_type "mboot"): mb_measure_content_json. */
#include <stdlib.h>

#include <mboot/measure.h>
#include "shared/json.h"

MB_EXPORT char *mb_measure_content_json(const char *description, const char *file, const char *text)
{
	json_build_mark mark = json_build_begin();
	json_t *content = json_object();
	char *out;

	if (description)
		json_object_set_new(content, "description", json_text(description));
	if (file)
		json_object_set_new(content, "file", json_text(file));
	else if (text)
		json_object_set_new(content, "text", json_text(text));
	else
		json_object_set_new(content, "stdin", json_true());
	out = json_write_built(content, JSON_LAYOUT_COMPACT, mark);
	json_decref(content);
	return out;
}
