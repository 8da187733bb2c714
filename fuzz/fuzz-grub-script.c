/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Input: any bytes, taken as a grub.cfg the GRUB model runs (predict's --grub-cfg and
 * --grub-cfg-booted): under the first path GRUB reads and under the path a configfile may load,
 * so that configs load each other. The run ends, bounded, with strings or a reason; and what it
 * measures without needing today's log, its own self-check reproduces exactly.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/mboot.h>
#include "lib/grub/grub-script.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	grub_model_config c[2] = {
		{ "(hd0,gpt1)/EFI/BOOT/grub.cfg", (const char *) data, size },
		{ "(hd0,gpt1)/boot/grub/grub.cfg", (const char *) data, size },
	};
	grub_model *m, *again;
	grub_model_run run, check;
	size_t i;

	if (size > (64u << 10))
		return 0;
	m = grub_model_new();
	again = grub_model_new();
	if (!m || !again)
		abort();
	if (grub_model_predict(m, c, 2, true, NULL, &run) < 0)
		goto out;
	if (run.n > GRUB_MODEL_MAX_STRINGS || (!run.why && !run.n))
		abort();
	for (i = 0; i < run.n; i++)
		if (!run.s[i].text || strlen(run.s[i].text) >= GRUB_MODEL_MAX_STRING)
			abort();
	if (!run.why) {
		/* nothing unknown was needed: the self-check on its own strings must agree */
		if (grub_model_check(again, c, 2, run.s, run.n, true, &check) == 0) {
			if (check.why || check.n != run.n)
				abort();
			for (i = 0; i < run.n; i++)
				if (strcmp(check.s[i].text, run.s[i].text))
					abort();
			grub_model_run_done(&check);
		}
	}
	grub_model_run_done(&run);
	/* a menu entry picked by hand, by spec and by the kernel it loads (grub_model_choice) */
	{
		static const grub_model_choice choices[] = { { "1>1", NULL }, { "a>>b>0", NULL }, { NULL, "/vmlinuz" } };

		for (i = 0; i < sizeof(choices) / sizeof(choices[0]); i++) {
			if (grub_model_predict(m, c, 2, true, &choices[i], &run) < 0)
				goto out;
			if (run.n > GRUB_MODEL_MAX_STRINGS || (!run.why && !run.n) || (run.no_entry && !run.why))
				abort();
			grub_model_run_done(&run);
		}
	}
out:
	grub_model_free(m);
	grub_model_free(again);
	return 0;
}
