/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Input: any bytes, taken as a userspace measurement log (CEL-JSON records in a JSON
 * text sequence). Parses it; when it parses, formats every record again and checks
 * that the formatted record parses to the same PCR and digests.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/mboot.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	mb_cel_log *log = NULL;
	mb_error err = { 0 };
	size_t i;

	if (size > (1u << 20))
		return 0;
	if (mb_cel_log_parse(data, size, &log, &err) < 0)
		return 0;
	for (i = 0; i < mb_cel_log_count(log); i++) {
		const mb_cel_record *rec = mb_cel_log_record(log, i);
		mb_cel_log *again = NULL;
		char *text = NULL;
		size_t n = 0;

		if (rec->n_digests == 0)
			continue;
		if (mb_cel_format_record(rec->pcr, rec->digests, rec->n_digests, "mboot", NULL, &text, &n) < 0)
			abort();
		if (mb_cel_log_parse(text, n, &again, &err) < 0 || mb_cel_log_count(again) != 1)
			abort();
		{
			const mb_cel_record *r2 = mb_cel_log_record(again, 0);
			uint32_t k;

			if (r2->pcr != rec->pcr || r2->n_digests != rec->n_digests)
				abort();
			for (k = 0; k < rec->n_digests; k++)
				if (r2->digests[k].alg != rec->digests[k].alg ||
				    memcmp(r2->digests[k].bytes, rec->digests[k].bytes, rec->digests[k].size) != 0)
					abort();
		}
		mb_cel_log_free(again);
		free(text);
	}
	mb_cel_log_free(log);
	return 0;
}
