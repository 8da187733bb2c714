/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Input: any bytes, taken as the two files the machine's side of attestation reads before it
 * talks to the TPM: a challenge from the verifier (attest_challenge_read) and an AK file
 * (attest_ak_file_read). A failure must come with a message; a success must hold a name of a
 * known size and non-empty structures.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/tpm/attest-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	attest_challenge ch;
	ak_file ak;
	mb_error err;

	mb_error_clear(&err);
	if (attest_challenge_read((const char *) data, size, &ch, &err) < 0) {
		if (!err.message[0])
			abort();
	} else if (ch.name_size == 0 || ch.name_size > sizeof(ch.name) || ch.blob.size == 0 || ch.secret.size == 0) {
		abort();
	}
	mb_error_clear(&err);
	if (attest_ak_file_read((const char *) data, size, &ak, &err) < 0 && !err.message[0])
		abort();
	return 0;
}
