/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Input: any bytes, taken as the JSON of a LUKS2 "mboot" token (docs/luks.md): what
 * libcryptsetup hands the token plugin from a disk's header. Parses it (strict JSON, the
 * token's fields, the sealed object as a sealed file; no TPM, no device) and, when it
 * parses, describes it as `cryptsetup luksDump` shows it; what it says must hold together.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/mboot.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	mb_luks_token *t = NULL;
	const char *policy;
	char *text;

	if (mb_luks_token_parse((const char *) data, size, &t, NULL) < 0) {
		if (t)
			abort();
		return 0;
	}
	policy = mb_luks_token_policy(t);
	if (mb_luks_token_keyslot(t) < 0 || mb_luks_token_keyslot(t) > 31 ||
	    (strcmp(policy, "pcr") != 0 && strcmp(policy, "or") != 0 && strcmp(policy, "authorize") != 0) ||
	    (strcmp(policy, "authorize") == 0) != (mb_luks_token_bank(t) == 0))
		abort();
	text = mb_luks_token_describe(t);
	if (!text || !strstr(text, "keyslot: "))
		abort();
	free(text);
	mb_luks_token_free(t);
	return 0;
}
