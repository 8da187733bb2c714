/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Input: any bytes, taken as an envelope file (docs/ssh.md: an SSH host key sealed by
 * `mboot ssh-hostkey seal`). Parses it (JSON, caps, hex, base64, the sealed object inside;
 * no TPM) and, when it parses: written out again it must parse to the same text, and
 * opening it with a key that is not its own must be refused with nothing handed out.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/mboot.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t zero_key[MB_ENVELOPE_KEY_SIZE];
	mb_envelope *e = NULL, *f = NULL;
	char *json, *again;
	uint8_t *out;
	size_t n;

	if (size > (4u << 20) || mb_envelope_parse((const char *) data, size, &e, NULL) < 0)
		return 0;
	json = mb_envelope_to_json(e);
	if (!json || mb_envelope_parse(json, strlen(json), &f, NULL) < 0)
		abort();
	again = mb_envelope_to_json(f);
	if (!again || strcmp(json, again) != 0 || strcmp(mb_envelope_label(e), mb_envelope_label(f)) != 0 ||
	    mb_envelope_data_size(e) != mb_envelope_data_size(f))
		abort();
	n = mb_envelope_data_size(e);
	out = malloc(n);
	if (!out)
		abort();
	memset(out, 0xee, n);
	/* a random data key is never all zeros: the tag cannot check, and out must be wiped */
	if (mb_envelope_open(e, zero_key, out, n, NULL) != -EBADMSG)
		abort();
	for (size_t i = 0; i < n; i++)
		if (out[i])
			abort();
	free(out);
	free(again);
	free(json);
	mb_envelope_free(f);
	mb_envelope_free(e);
	return 0;
}
