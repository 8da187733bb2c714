/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target for the files `mboot predict --efi-var` reads (src/lib/predict/efivar.c):
 * the input is a Secure Boot variable update, signature lists alone or behind an
 * EFI_VARIABLE_AUTHENTICATION_2 header. What is accepted must append as UEFI says: onto
 * nothing it is itself, onto itself nothing is added (every entry is already there).
 * A refusal must come with a message.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/predict/efivar.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	mb_error err = { 0 };
	size_t offset = 0, n, dropped;
	const uint8_t *value;
	uint8_t *out = NULL;

	if (efivar_secdb_value(data, size, "fuzz", &offset, &err) < 0) {
		if (!err.message[0])
			abort();
		return 0;
	}
	if (offset > size)
		abort();
	value = data + offset;
	size -= offset;
	if (efivar_append(NULL, 0, value, size, &out, &n, &dropped) < 0 || n != size || dropped != 0 ||
	    (n && memcmp(out, value, n) != 0))
		abort();
	free(out);
	if (efivar_append(value, size, value, size, &out, &n, &dropped) < 0 || n != size || (n && memcmp(out, value, n) != 0))
		abort();
	free(out);
	return 0;
}
