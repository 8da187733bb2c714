/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Input: any bytes, taken as a PE/COFF image. Parses it with and without 8-byte
 * padding and, when it parses, computes its Authenticode digest (every range the
 * parser accepted is read) and looks at what the parser extracted.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/mboot.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static mb_pe_info pe;
	uint8_t out[MB_DIGEST_MAX];
	mb_error err = { 0 };

	if (size > (4u << 20))
		return 0;
	for (unsigned flags = 0; flags <= MB_PE_PAD_TO_8; flags += MB_PE_PAD_TO_8) {
		if (mb_pe_parse(data, size, flags, &pe, &err) < 0)
			continue;
		if (mb_pe_hash(&pe, data, size, flags ? MB_ALG_SHA256 : MB_ALG_SHA1, out) < 0)
			abort(); /* a parsed image must always hash */
		for (size_t i = 0; i < pe.n_sections; i++)
			if (strlen(pe.sections[i].name) > 8)
				abort();
		(void) mb_pe_machine_name(pe.machine);
	}
	return 0;
}
