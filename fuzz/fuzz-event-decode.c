/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target for the event-data decoder (and its typed parsers, event-data.h, through
 * it), the text a policy judges and the digest check: byte 0 is the
 * PCR, byte 1 picks the event type from the table below, the rest is the event
 * data. Each input gets SHA-1 and SHA-256 digests of the data so the digest
 * checker runs its comparisons too.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shared/json.h"

#include <mboot/digest.h>
#include <mboot/eventlog.h>
#include <mboot/events.h>
#include <mboot/policy.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint32_t types[] = {
	MB_EV_PREBOOT_CERT, MB_EV_POST_CODE, MB_EV_NO_ACTION, MB_EV_SEPARATOR, MB_EV_ACTION, MB_EV_EVENT_TAG,
	MB_EV_S_CRTM_CONTENTS, MB_EV_S_CRTM_VERSION, MB_EV_CPU_MICROCODE, MB_EV_PLATFORM_CONFIG_FLAGS,
	MB_EV_TABLE_OF_DEVICES, MB_EV_COMPACT_HASH, MB_EV_IPL, MB_EV_IPL_PARTITION_DATA, MB_EV_NONHOST_CODE,
	MB_EV_NONHOST_CONFIG, MB_EV_NONHOST_INFO, MB_EV_OMIT_BOOT_DEVICE_EVENTS, MB_EV_POST_CODE2,
	MB_EV_EFI_VARIABLE_DRIVER_CONFIG, MB_EV_EFI_VARIABLE_BOOT, MB_EV_EFI_BOOT_SERVICES_APPLICATION,
	MB_EV_EFI_BOOT_SERVICES_DRIVER, MB_EV_EFI_RUNTIME_SERVICES_DRIVER, MB_EV_EFI_GPT_EVENT, MB_EV_EFI_ACTION,
	MB_EV_EFI_PLATFORM_FIRMWARE_BLOB, MB_EV_EFI_HANDOFF_TABLES, MB_EV_EFI_PLATFORM_FIRMWARE_BLOB2,
	MB_EV_EFI_HANDOFF_TABLES2, MB_EV_EFI_VARIABLE_BOOT2, MB_EV_EFI_GPT_EVENT2, MB_EV_EFI_HCRTM_EVENT,
	MB_EV_EFI_VARIABLE_AUTHORITY, MB_EV_EFI_SPDM_FIRMWARE_BLOB, MB_EV_EFI_SPDM_FIRMWARE_CONFIG,
	MB_EV_EFI_SPDM_DEVICE_POLICY, MB_EV_EFI_SPDM_DEVICE_AUTHORITY, 0x12345678u,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint16_t algs[] = { 0x0004, 0x000b }; /* sha1, sha256 */
	uint8_t md[2][64];
	mb_event_digest digests[2];
	mb_event ev;
	mb_digest_check check;
	mb_event_decoded *dec;
	uint8_t *copy;
	size_t i;

	if (size < 2 || size - 2 > MB_EVENT_MAX_DATA)
		return 0;
	/* A private copy of exactly the data, so ASan sees any read past it. */
	copy = malloc(size - 2 ? size - 2 : 1);
	if (!copy)
		return 0;
	memcpy(copy, data + 2, size - 2);
	memset(&ev, 0, sizeof(ev));
	ev.pcr = data[0];
	ev.type = types[data[1] % (sizeof(types) / sizeof(types[0]))];
	ev.data = copy;
	ev.data_size = (uint32_t) (size - 2);
	ev.digests = digests;
	for (i = 0; i < 2; i++) {
		const mb_digest_info *info = mb_digest_by_alg(algs[i]);

		if (!info || mb_digest(algs[i], copy, size - 2, md[i]) < 0)
			continue;
		/* Half the time the digests match the data, half the time they do not. */
		if (data[1] & 0x80)
			md[i][0] ^= 1;
		digests[ev.n_digests].alg = algs[i];
		digests[ev.n_digests].size = (uint16_t) info->size;
		digests[ev.n_digests].bytes = md[i];
		ev.n_digests++;
	}

	dec = mb_event_decoded_new();
	if (dec && mb_event_decode(NULL, &ev, dec) == 0) {
		const mb_decoded_node *root = mb_event_decoded_root(dec);

		/* The contract: every decoded result says what it is, in one line. */
		if (!mb_decoded_string(mb_decoded_get(root, "kind")) ||
		    !mb_decoded_string(mb_decoded_get(root, "description")))
			abort();
		free(mb_event_decoded_json(dec));
	}
	mb_event_decoded_free(dec);
	/* the text policy rules judge: the events module's too (text_judged) */
	free(mb_event_text(&ev));
	if (mb_event_check_digest(&ev, &check) < 0)
		abort();
	(void) mb_digest_status_name(check.status);
	free(copy);
	return 0;
}
