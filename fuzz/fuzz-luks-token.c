/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Input: any bytes, taken as the JSON of a LUKS2 "mboot" token (docs/luks.md): what
 * libcryptsetup hands the token plugin from a disk's header. Parses it (strict JSON, the
 * token's fields, the sealed object as a sealed file; no TPM, no device) and, when it
 * parses, describes it as `cryptsetup luksDump` shows it; what it says must hold together
 * (also of its event summary, "mboot.events").
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
	uint32_t events_pcrs = 0;
	int n_events;
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
	/* an event summary: only of PCRs sealed to, within the cap, never with signed policies */
	n_events = mb_luks_token_events(t, &events_pcrs);
	if (n_events < -1 || n_events > MB_EVENT_SUMMARY_MAX_EVENTS || (events_pcrs & ~mb_luks_token_pcrs(t)) ||
	    (n_events < 0 && events_pcrs) || (n_events >= 0 && strcmp(policy, "authorize") == 0))
		abort();
	text = mb_luks_token_describe(t);
	if (!text || !strstr(text, "keyslot: ") || (n_events >= 0 && !strstr(text, "\tevents: ")))
		abort();
	free(text);
	mb_luks_token_free(t);
	return 0;
}
