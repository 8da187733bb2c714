/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Input: any bytes, taken two ways. As a PCR-values file (`--pcrs FILE`: the PCR-values JSON
 * or tpm2_pcrread YAML); and as a PCR selection followed by tpm2_pcrread -o digests
 * (`--pcrs SELECTION@FILE`): byte 0 the number of banks (up to 9, one more than allowed), then
 * per bank its algorithm (2 bytes, little endian, the low 3 bits of an index into the known
 * ones and otherwise unknown) and its PCR mask (4 bytes, little endian), then the digests.
 * What parses must print as JSON and as text and read back to the same values; a failure
 * must come with a message.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/mboot.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same(const mb_pcr_values *v, const mb_pcr_values *again)
{
	size_t b;

	if (mb_pcr_values_n_banks(again) > mb_pcr_values_n_banks(v))
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
}

/* What parsed reads back from its JSON and from its text (which leaves out empty banks). */
static void round_trip(const mb_pcr_values *v)
{
	mb_pcr_values *again = mb_pcr_values_new();
	mb_error err = { 0 };
	char *json = mb_pcr_values_to_json(v, false), *text = mb_pcr_values_to_text(v);

	if (!again || !json || !text)
		abort();
	if (mb_pcr_values_parse(json, strlen(json), again, &err) < 0 ||
	    mb_pcr_values_n_banks(again) != mb_pcr_values_n_banks(v))
		abort();
	same(v, again);
	if (text[0]) {
		if (mb_pcr_values_parse(text, strlen(text), again, &err) < 0)
			abort();
		same(v, again);
	}
	free(json);
	free(text);
	mb_pcr_values_free(again);
}

static void digests(const uint8_t *data, size_t size)
{
	uint16_t algs[9];
	uint32_t pcrs[9];
	size_t n, i, at = 1;
	mb_pcr_values *v = mb_pcr_values_new();
	mb_error err = { 0 };

	if (!v)
		abort();
	if (size < 1)
		goto out;
	n = data[0] % 10;
	if (size < 1 + 6 * n)
		goto out;
	for (i = 0; i < n; i++, at += 6) {
		uint16_t a = (uint16_t) (data[at] | data[at + 1] << 8);
		size_t k = a & 7;

		algs[i] = k < mb_digest_count() && !(a & 0xfff8) ? mb_digest_at(k)->alg : a;
		pcrs[i] = (uint32_t) data[at + 2] | (uint32_t) data[at + 3] << 8 | (uint32_t) data[at + 4] << 16 |
			  (uint32_t) data[at + 5] << 24;
	}
	if (mb_pcr_values_parse_digests(data + at, size - at, algs, pcrs, n, v, &err) < 0) {
		if (!err.message[0])
			abort();
		goto out;
	}
	round_trip(v);
out:
	mb_pcr_values_free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	mb_pcr_values *v = mb_pcr_values_new();
	mb_error err = { 0 };

	if (!v)
		abort();
	if (mb_pcr_values_parse((const char *) data, size, v, &err) < 0) {
		if (!err.message[0])
			abort();
	} else {
		round_trip(v);
	}
	mb_pcr_values_free(v);
	digests(data, size);
	return 0;
}
