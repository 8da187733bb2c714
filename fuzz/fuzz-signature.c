/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Input: any bytes, taken as a signed-policy file (`mboot policy sign`, docs/seal.md).
 * Parses it (JSON, hex, base64, the approved policy checked against the values; no
 * TPM) and, when it parses, writes it out again and parses that: it must parse the same.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/mboot.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	mb_policy_signature s, t;
	char *json;

	if (size > (2u << 20) || mb_policy_signature_parse((const char *) data, size, &s, NULL) < 0)
		return 0;
	json = mb_policy_signature_to_json(&s);
	if (!json)
		abort();
	if (mb_policy_signature_parse(json, strlen(json), &t, NULL) < 0 || t.mask != s.mask || t.scheme != s.scheme ||
	    memcmp(t.approved, s.approved, sizeof(s.approved)) != 0 ||
	    memcmp(t.key_name, s.key_name, sizeof(s.key_name)) != 0 || t.sig_size != s.sig_size ||
	    memcmp(t.sig, s.sig, s.sig_size) != 0)
		abort();
	mb_policy_signature_done(&t);
	mb_policy_signature_done(&s);
	free(json);
	return 0;
}
