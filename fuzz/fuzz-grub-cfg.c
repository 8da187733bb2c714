/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Input: any bytes, taken as a grub.cfg (what `predict --grub-cfg` and `policy generate
 * --grub-cfg` read). The default entry's linux and initrd lines are split into words and joined
 * back as GRUB measures them; the input is also split as one line.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/mboot.h>
#include "lib/grub/grub.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Joined whole, without the command, and empty (as predict joins them). */
static void join_all(const grub_words *ws)
{
	size_t froms[] = { 0, ws->n ? 1 : 0, ws->n }, i;

	for (i = 0; i < 3; i++) {
		char *j = grub_join(ws, froms[i]);

		if (!j)
			abort();
		free(j);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *) data;
	grub_entry e = { 0 };
	grub_words ws = { 0 };
	mb_error err = { 0 };

	if (size > GRUB_CFG_MAX)
		return 0;
	if (grub_parse_cfg_entry(text, size, "fuzz.cfg", &e, &err) == 0) {
		/* The entry's kernel line is a linux command with a path. */
		if (e.linux_line.n < 2 || !grub_is_cmd(e.linux_line.w[0], "linux"))
			abort();
		join_all(&e.linux_line);
		join_all(&e.initrd_line);
		grub_entry_done(&e);
	} else if (!err.message[0] || e.linux_line.n || e.initrd_line.n) {
		abort();
	}
	/* The splitter alone, over bytes it is never given whole by the reader (newlines, NULs);
	 * each word allocates the rest of its input, so only short inputs. */
	if (size <= 4096 && grub_split_words(text, text + size, &ws) == 0)
		join_all(&ws);
	grub_words_done(&ws);
	return 0;
}
