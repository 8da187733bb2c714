/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>

#include <json-c/json.h>

#include <mboot/events.h>
#include "shared/hex.h"

MB_EXPORT struct json_object *mb_event_decode(const mb_event_log *log, const mb_event *ev)
{
	json_object *o = json_object_new_object();
	const char *name = mb_event_type_name(ev->type);
	char *hex;

	(void) log;
	if (!o)
		return NULL;
	json_object_object_add(o, "kind", json_object_new_string("raw"));
	json_object_object_add(o, "description", json_object_new_string(name ? name : "unknown event type"));
	hex = mb_hex_dup(ev->data, ev->data_size);
	if (hex) {
		json_object_object_add(o, "hex", json_object_new_string(hex));
		free(hex);
	}
	return o;
}
