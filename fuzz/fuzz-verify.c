/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Input: any bytes, taken as a firmware event log. When it parses, verify it against
 * its own replay with one PCR value disturbed (the first input byte picks which), so
 * that every mismatch explanation (bad digests, prefixes, single edits, quirks) runs on
 * hostile logs. The undisturbed replay must verify unless the log holds edited data.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/mboot.h>
#include "lib/replay/pcr-values.h" /* reaches into the values: the fuzzers link the static core */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	mb_event_log *log = NULL;
	mb_error err = { 0 };
	mb_pcr_values *v = NULL;
	mb_verify_result *r = NULL;
	size_t b;

	if (size > (1u << 18) || size == 0)
		return 0;
	if (mb_event_log_parse(data, size, &log, &err) < 0)
		return 0;
	v = mb_pcr_values_new();
	if (!v || mb_replay_log(log, SIZE_MAX, v, NULL, &err) < 0)
		goto out;
	/* Every PCR has a value: those the log does not extend hold zeros (not their reset value). */
	for (b = 0; b < v->n_banks; b++)
		v->banks[b].present = (1u << MB_PCR_COUNT) - 1;
	if (mb_verify_log(log, NULL, v, NULL, &r, &err) == 0 && mb_verify_result_n_verified(r) > 0) {
		size_t i;

		for (i = 0; i < mb_verify_result_count(r); i++)
			if (mb_verify_result_entry(r, i)->verdict == MB_PCR_MISMATCH)
				abort(); /* a log must verify against its own replay */
	}
	mb_verify_result_free(r);
	r = NULL;
	if (v->n_banks > 0) {
		mb_pcr_bank *bank = &v->banks[data[0] % v->n_banks];
		mb_verify_options opts = { .size = sizeof(opts), .only_banks = &bank->alg, .n_only = 1,
					   .userspace_pcrs = MB_USERSPACE_PCRS_DEFAULT };

		bank->value[data[0] % MB_PCR_COUNT][0] ^= 0x5a;
		(void) !mb_verify_log(log, NULL, v, &opts, &r, &err);
	}
out:
	mb_pcr_values_free(v);
	mb_verify_result_free(r);
	mb_event_log_free(log);
	return 0;
}
