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
	mb_pcr_values *v = malloc(sizeof(*v)), *again = malloc(sizeof(*again));
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
	if (!json || mb_pcr_values_parse(json, strlen(json), again, &err) < 0 || again->n_banks != v->n_banks)
		abort();
	for (b = 0; b < v->n_banks; b++) {
		const mb_pcr_bank *x = &v->banks[b], *y = mb_pcr_values_bank_const(again, x->alg);
		uint32_t p;

		if (!y || y->present != x->present || y->size != x->size)
			abort();
		for (p = 0; p < MB_PCR_COUNT; p++)
			if ((x->present & (1u << p)) && memcmp(x->value[p], y->value[p], x->size) != 0)
				abort();
	}
	free(json);
out:
	free(v);
	free(again);
	return 0;
}
