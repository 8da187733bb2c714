/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Input: any bytes, taken as an IMA runtime measurement list (binary or ASCII, told from the
 * first byte; the template-hash size detected, then forced to SHA-256's). When it parses,
 * every entry is read, the list replayed into every bank both ways, its document written, and
 * boot_aggregate checked against the replayed values.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/mboot.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one(const uint8_t *data, size_t size, uint16_t alg)
{
	mb_ima_log *log = NULL;
	mb_pcr_values *rec, *pad;
	mb_error err = { 0 };
	char *json;

	if (mb_ima_log_parse(data, size, alg, &log, &err) < 0)
		return;
	for (size_t i = 0; i < mb_ima_log_count(log); i++) {
		const mb_ima_entry *e = mb_ima_log_entry(log, i);

		if (!e || e->pcr > 23 || !e->template_name || strlen(e->template_name) > MB_IMA_MAX_TEMPLATE_NAME)
			abort();
		for (size_t k = 0; k < e->n_fields; k++)
			if (e->fields[k].size && !e->fields[k].data)
				abort();
	}
	rec = mb_pcr_values_new();
	pad = mb_pcr_values_new();
	if (rec && pad && mb_ima_replay(log, rec, pad, &err) == 0) {
		json = mb_ima_replay_to_json(log, rec, pad, rec, false);
		free(json);
		(void) mb_ima_boot_aggregate_check(log, rec);
	}
	json = mb_ima_log_to_json(log, true);
	free(json);
	mb_pcr_values_free(rec);
	mb_pcr_values_free(pad);
	mb_ima_log_free(log);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > (1u << 20))
		return 0;
	one(data, size, 0);
	one(data, size, MB_ALG_SHA256);
	return 0;
}
