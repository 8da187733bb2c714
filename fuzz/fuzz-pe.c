/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Input: any bytes, taken as a PE/COFF image. Parses it with and without 8-byte
 * padding and, when it parses, computes its Authenticode digest (every range the
 * parser accepted is read) and looks at what the parser extracted; its PCR 11 as a UKI
 * (every section the UKI walker accepts is read, within the image); and its modules as a GRUB
 * core image (each within the image).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/mboot.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	mb_pe_info *pe;
	uint8_t out[MB_DIGEST_MAX];
	mb_error err = { 0 };

	if (size > (4u << 20))
		return 0;
	for (unsigned flags = 0; flags <= MB_PE_PAD_TO_8; flags += MB_PE_PAD_TO_8) {
		mb_pe_summary sum;

		if (mb_pe_parse(data, size, flags, &pe, &err) < 0)
			continue;
		if (mb_pe_hash(pe, data, size, flags ? MB_ALG_SHA256 : MB_ALG_SHA1, out) < 0)
			abort(); /* a parsed image must always hash */
		for (size_t i = 0; i < mb_pe_info_n_sections(pe); i++)
			if (strlen(mb_pe_info_section(pe, i)->name) > 8)
				abort();
		mb_pe_info_summary(pe, &sum);
		(void) mb_pe_machine_name(sum.machine);
		if (!flags) {
			mb_uki_section secs[MB_UKI_MAX_SECTIONS];
			uint8_t pcr11[1][MB_DIGEST_MAX];
			const uint16_t alg = MB_ALG_SHA256;
			size_t n;

			if (mb_uki_sections(pe, secs, &n, &err) == 0) {
				if (n == 0 || n > MB_UKI_MAX_SECTIONS || strcmp(secs[0].name, ".linux") != 0)
					abort();
				for (size_t i = 0; i < n; i++)
					if ((uint64_t) secs[i].raw_offset + secs[i].size > size)
						abort(); /* a measured section lies in the file */
				if (mb_uki_pcr11(pe, data, size, &alg, 1, pcr11, &err) < 0)
					abort(); /* a walked UKI must always hash */
			}
			mb_grub_image grub;
			if (mb_grub_image_parse(pe, data, size, &grub, &err) == 0) {
				const uint8_t *end = data + size;

				/* every module found lies in the image */
				if ((grub.config && grub.config + grub.config_size > end) ||
				    (grub.prefix && grub.prefix + grub.prefix_size > end) ||
				    (grub.memdisk && grub.memdisk + grub.memdisk_size > end))
					abort();
				if (mb_grub_image_difference(&grub, &grub))
					abort();
			}
		}
		mb_pe_info_free(pe);
	}
	return 0;
}
