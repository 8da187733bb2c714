/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Input: any bytes, taken as a PCR-values file (`--pcrs FILE`: the PCR-values JSON or
 * tpm2_pcrread YAML). What parses must print as JSON and read back to the same values; a
 * failure must come with a message.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/mboot.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	mb_pcr_values *v = mb_pcr_values_new(), *again = mb_pcr_values_new();
	mb_error err = { 0 };
	char *json;
	size_t b;

	if (!v || !again)
		abort();
	if (mb_pcr_values_parse((const char *) data, size, v, &err) < 0) {
		if (!err.message[0])
			abort();
		goto out;
	}
	json = mb_pcr_values_to_json(v, false);
	if (!json || mb_pcr_values_parse(json, strlen(json), again, &err) < 0 ||
	    mb_pcr_values_n_banks(again) != mb_pcr_values_n_banks(v))
		abort();
	for (b = 0; b < mb_pcr_values_n_banks(v); b++) {
		uint16_t alg = mb_pcr_values_bank_alg(v, b);
		size_t digest_size = mb_digest_by_alg(alg)->size;
		uint32_t p;

		if (mb_pcr_values_present(again, alg) != mb_pcr_values_present(v, alg))
			abort();
		for (p = 0; p < MB_PCR_COUNT; p++) {
			const uint8_t *x = mb_pcr_values_get(v, alg, p), *y = mb_pcr_values_get(again, alg, p);

			if (x && memcmp(x, y, digest_size) != 0)
				abort();
		}
	}
	free(json);
out:
	mb_pcr_values_free(v);
	mb_pcr_values_free(again);
	return 0;
}
