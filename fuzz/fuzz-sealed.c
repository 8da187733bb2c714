/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Input: any bytes, taken as a sealed file (docs/seal.md). Parses it (JSON, base64,
 * TPM2B_PUBLIC / TPM2B_PRIVATE unmarshalling, the policy digest check; no TPM) and,
 * when it parses, writes it out again and parses that: it must parse the same.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/mboot.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	mb_sealed s, t;
	char *json;

	if (size > (4u << 20) || mb_sealed_parse((const char *) data, size, &s, NULL) < 0)
		return 0;
	json = mb_sealed_to_json(&s);
	if (!json)
		abort();
	if (mb_sealed_parse(json, strlen(json), &t, NULL) < 0 || t.mask != s.mask || t.pub_size != s.pub_size ||
	    memcmp(t.pub, s.pub, s.pub_size) != 0 || t.priv_size != s.priv_size ||
	    memcmp(t.priv, s.priv, s.priv_size) != 0 || memcmp(t.policy, s.policy, sizeof(s.policy)) != 0 ||
	    t.eventlog_size != s.eventlog_size || t.authorized != s.authorized || t.auth_key_size != s.auth_key_size ||
	    memcmp(t.auth_key_name, s.auth_key_name, sizeof(s.auth_key_name)) != 0)
		abort();
	mb_sealed_done(&t);
	mb_sealed_done(&s);
	free(json);
	return 0;
}
