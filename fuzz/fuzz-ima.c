/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Input: any bytes, taken as an IMA runtime measurement list (binary or ASCII, told from the
 * first byte; the template-hash size detected, then forced to SHA-256's). When it parses,
 * every entry is read, the list replayed into every bank both ways, its document written, and
 * boot_aggregate checked against the replayed values; and judged by a policy whose "keys" hold
 * the certificate below (ima-sig signatures, ima-modsig's PKCS#7: the seeds modsig-* hold
 * appended signatures by its key, cut and flipped ones; its private key was not kept).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/mboot.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char policy_text[] =
	"{\"version\": 1, \"pcrs\": {}, \"ima\": {\"digests\": {\"/init\": [\"sha256:"
	"0000000000000000000000000000000000000000000000000000000000000000\"]}, \"keys\": [\""
	"-----BEGIN CERTIFICATE-----\\n"
	"MIIBgzCCASmgAwIBAgIUNgY1s28h3zUnDfZWnOLHRj212WswCgYIKoZIzj0EAwIw\\n"
	"FjEUMBIGA1UEAwwLZnV6ei1tb2RzaWcwIBcNMjYxMjA3MDU0MzAxWhgPMjEyNjEx\\n"
	"MTMwNTQzMDFaMBYxFDASBgNVBAMMC2Z1enotbW9kc2lnMFkwEwYHKoZIzj0CAQYI\\n"
	"KoZIzj0DAQcDQgAErPHklGNsFgMpiuNlAEdnY4cczKDK5d8s/1cWFKWR9ZqojBmZ\\n"
	"PIq+UCnyUbk9cTnYoKWWtktl1MN90POqz/OupaNTMFEwHQYDVR0OBBYEFOyqqyhC\\n"
	"YWYQc5BNUhSEdrEn6fwqMB8GA1UdIwQYMBaAFOyqqyhCYWYQc5BNUhSEdrEn6fwq\\n"
	"MA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSAAwRQIgDRz0gzi4tbhcGYsL\\n"
	"Hb4/AJfejAFzFj9ZYl0lubkvmaUCIQD6q63zgeJxa8cNF8auXxOqYvk/hmxQN+0f\\n"
	"pDiYa5UqKg==\\n"
	"-----END CERTIFICATE-----\\n\"]}}";

static mb_policy *policy(void)
{
	static mb_policy *p;

	if (!p && mb_policy_parse(policy_text, sizeof(policy_text) - 1, &p, NULL) < 0)
		abort();
	return p;
}

static void one(const uint8_t *data, size_t size, uint16_t alg)
{
	mb_ima_log *log = NULL;
	mb_pcr_values *rec, *pad;
	mb_error err = { 0 };
	char *json;

	if (mb_ima_log_parse(data, size, alg, &log, &err) < 0)
		return;
	for (size_t i = 0; i < mb_ima_log_count(log); i++) {
		const mb_ima_entry *e = mb_ima_log_entry(log, i);

		if (!e || e->pcr > 23 || !e->template_name || strlen(e->template_name) > MB_IMA_MAX_TEMPLATE_NAME)
			abort();
		for (size_t k = 0; k < e->n_fields; k++)
			if (e->fields[k].size && !e->fields[k].data)
				abort();
	}
	rec = mb_pcr_values_new();
	pad = mb_pcr_values_new();
	if (rec && pad && mb_ima_replay(log, rec, pad, &err) == 0) {
		json = mb_ima_replay_to_json(log, rec, pad, rec, false);
		free(json);
		(void) mb_ima_boot_aggregate_check(log, rec);
	}
	json = mb_ima_log_to_json(log, true);
	free(json);
	{
		mb_ima_policy_result r;

		if (mb_policy_check_ima(policy(), log, NULL, &r, &err) == 0)
			mb_ima_policy_result_done(&r);
	}
	mb_pcr_values_free(rec);
	mb_pcr_values_free(pad);
	mb_ima_log_free(log);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > (1u << 20))
		return 0;
	one(data, size, 0);
	one(data, size, MB_ALG_SHA256);
	return 0;
}
