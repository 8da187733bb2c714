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

static bool same_bytes(const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
	return na == nb && (!na || memcmp(a, b, na) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	mb_sealed *s = NULL, *t = NULL;
	const uint8_t *p, *q;
	size_t np, nq;
	char *json;

	if (size > (4u << 20) || mb_sealed_parse((const char *) data, size, &s, NULL) < 0)
		return 0;
	json = mb_sealed_to_json(s);
	if (!json)
		abort();
	if (mb_sealed_parse(json, strlen(json), &t, NULL) < 0 || mb_sealed_mask(t) != mb_sealed_mask(s) ||
	    mb_sealed_policy_kind(t) != mb_sealed_policy_kind(s) || mb_sealed_n_branches(t) != mb_sealed_n_branches(s) ||
	    memcmp(mb_sealed_policy_digest(t), mb_sealed_policy_digest(s), MB_POLICY_DIGEST_SIZE) != 0)
		abort();
	p = mb_sealed_public(s, &np);
	q = mb_sealed_public(t, &nq);
	if (!same_bytes(p, np, q, nq))
		abort();
	p = mb_sealed_private(s, &np);
	q = mb_sealed_private(t, &nq);
	if (!same_bytes(p, np, q, nq))
		abort();
	p = mb_sealed_eventlog(s, &np);
	q = mb_sealed_eventlog(t, &nq);
	if (!same_bytes(p, np, q, nq))
		abort();
	p = mb_sealed_auth_key(s, &np);
	q = mb_sealed_auth_key(t, &nq);
	if (!same_bytes(p, np, q, nq) || (!p) != (!mb_sealed_auth_key_name(t)) ||
	    (p && memcmp(mb_sealed_auth_key_name(t), mb_sealed_auth_key_name(s), MB_TPM_NAME_SIZE) != 0))
		abort();
	mb_sealed_free(t);
	mb_sealed_free(s);
	free(json);
	return 0;
}
