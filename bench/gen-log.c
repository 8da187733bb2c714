/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gen-log N OUT: write a crypto-agile event log (SHA-1 + SHA-256) of N events shaped like a
 * real boot: EFI variables, image loads, GRUB strings, separators, spread over PCRs 0-9.
 * Deterministic: the same N gives the same bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/mboot.h>
#include "shared/fileio.h"

int main(int argc, char **argv)
{
	static const mb_spec_id_alg algs[] = { { MB_ALG_SHA1, 20 }, { MB_ALG_SHA256, 32 } };
	mb_log_writer *w;
	mb_error err = { 0 };
	const uint8_t *bytes;
	size_t size;
	long n, i;

	if (argc != 3 || (n = atol(argv[1])) <= 0) {
		fprintf(stderr, "usage: gen-log N OUT\n");
		return 2;
	}
	if (mb_log_writer_new(&w) < 0 || mb_log_writer_add_spec_id(w, algs, 2) < 0)
		return 1;
	for (i = 1; i < n; i++) {
		char text[160];
		uint8_t var[96] = { 0x61, 0xdf, 0xe4, 0x8b, 0xca, 0x93, 0xd2, 0x11, 0xaa, 0x0d, 0x00, 0xe0, 0x98, 0x03, 0x2b, 0x8c,
				    8, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0,
				    'B', 0, 'o', 0, 'o', 0, 't', 0, '0', 0, '0', 0, '0', 0, '1', 0 };
		int rc;

		switch (i % 5) {
		case 0:
			snprintf(text, sizeof(text), "grub_cmd: linux /vmlinuz-6.1.0-%ld root=UUID=0d7c1c5e ro quiet", i);
			rc = mb_log_writer_add_hashed(w, 8, MB_EV_IPL, text + 10, strlen(text) - 10, text, strlen(text) + 1);
			break;
		case 1:
			snprintf(text, sizeof(text), "(hd0,gpt2)/boot/module-%ld.mod", i);
			rc = mb_log_writer_add_hashed(w, 9, MB_EV_IPL, &i, sizeof(i), text, strlen(text) + 1);
			break;
		case 2:
			memcpy(var + 48, &i, sizeof(i));
			rc = mb_log_writer_add_hashed(w, 1, MB_EV_EFI_VARIABLE_BOOT2, var, 56, var, 56);
			break;
		case 3:
			rc = mb_log_writer_add_hashed(w, (uint32_t) (i % 8), MB_EV_SEPARATOR, "\0\0\0\0", 4, "\0\0\0\0", 4);
			break;
		default:
			snprintf(text, sizeof(text), "Calling EFI Application from Boot Option %ld", i);
			rc = mb_log_writer_add_hashed(w, 4, MB_EV_EFI_ACTION, text, strlen(text), text, strlen(text));
			break;
		}
		if (rc < 0) {
			fprintf(stderr, "gen-log: %s\n", mb_strerror(rc));
			return 1;
		}
	}
	bytes = mb_log_writer_data(w, &size);
	if (file_write(argv[2], bytes, size, 0644, true, &err) < 0) {
		fprintf(stderr, "gen-log: %s\n", err.message);
		return 1;
	}
	mb_log_writer_free(w);
	return 0;
}
