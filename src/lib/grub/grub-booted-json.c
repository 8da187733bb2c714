/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* `mboot grub keep-booted --json`'s document (docs/grub.md): mb_grub_booted_to_json. */
#include <stdlib.h>

#include <mboot/grub-booted.h>
#include "shared/json.h"

static const char *status_name(mb_grub_booted_status s)
{
	switch (s) {
	case MB_GRUB_BOOTED_FOUND:
		return "kept";
	case MB_GRUB_BOOTED_CHANGED:
		return "changed";
	case MB_GRUB_BOOTED_MISSING:
		return "missing";
	case MB_GRUB_BOOTED_UNSAFE:
		return "unsafe";
	}
	return "unknown";
}

static json_t *config_json(const mb_grub_booted *b)
{
	char name[MB_GRUB_BOOTED_NAME_SIZE] = "";
	bool kept = b->status == MB_GRUB_BOOTED_FOUND;
	json_t *c = json_object();

	if (kept && mb_grub_booted_name(b->measured_path, name) < 0)
		name[0] = 0;
	json_object_set_new(c, "path", json_text(b->measured_path));
	json_object_set_new(c, "status", json_text(status_name(b->status)));
	json_object_set_new(c, "file", b->file ? json_text(b->file) : json_null());
	json_object_set_new(c, "copy", name[0] ? json_text(name) : json_null());
	json_object_set_new(c, "sha256", kept ? json_hex(b->sha256, sizeof(b->sha256)) : json_null());
	return c;
}

MB_EXPORT char *mb_grub_booted_to_json(const char *dir, const mb_grub_booted *b, size_t n, bool pretty)
{
	json_build_mark mark = json_build_begin();
	json_t *root = json_object(), *configs = json_array();
	char *out;

	json_object_set_new(root, "dir", json_text(dir));
	json_object_set_new(root, "configs", configs);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(configs, config_json(&b[i]));
	out = json_write_built(root, pretty ? JSON_LAYOUT_PRETTY : JSON_LAYOUT_COMPACT, mark);
	json_decref(root);
	return out;
}
