/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which digests can be recomputed from the log (MEASUREMENTS.md §0, after systemd's
 * event_log_record_validate_hash_firmware): H(event data) for the strict list,
 * H(VariableData) for EV_EFI_VARIABLE_BOOT, and GRUB's PCR 8 strings hashed
 * without their prefix and NUL.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/digest.h>
#include <mboot/events.h>
#include "lib/eventlog/eventlog-internal.h"
#include "lib/events/digest-check.h"
#include "lib/grub/grub.h"
#include "shared/reader.h"

/* Does every known bank of ev equal H(p, n)? Sets *mismatched to the failing digests. */
static bool digests_equal(const mb_event *ev, const uint8_t *p, size_t n, uint32_t *mismatched, bool *any)
{
	uint32_t i, bad = 0;

	*any = false;
	for (i = 0; i < ev->n_digests; i++) {
		uint8_t md[MB_DIGEST_MAX];
		const mb_digest_info *info = mb_digest_by_alg(ev->digests[i].alg);

		if (!info || info->size != ev->digests[i].size || mb_digest(info->alg, p, n, md) < 0)
			continue;
		*any = true;
		if (memcmp(md, ev->digests[i].bytes, info->size) != 0)
			bad |= 1u << i;
	}
	*mismatched = bad;
	return *any && bad == 0;
}

/* UEFI_VARIABLE_DATA (PFP §10.4.3.1): the VariableData part, if the header parses. */
static bool variable_data(const mb_event *ev, const uint8_t **ret, size_t *ret_size)
{
	byte_reader r;
	uint64_t name_len, data_len;

	reader_init(&r, ev->data, ev->data_size, 0);
	if (read_skip(&r, 16) < 0 || read_u64le(&r, &name_len) < 0 || read_u64le(&r, &data_len) < 0)
		return false;
	if (name_len > reader_left(&r) / 2 || read_skip(&r, (size_t) name_len * 2) < 0)
		return false;
	if (data_len > reader_left(&r))
		return false;
	return read_bytes(&r, (size_t) data_len, ret) == 0 && (*ret_size = (size_t) data_len, true);
}

MB_EXPORT int mb_event_check_digest(const mb_event *ev, mb_digest_check *ret)
{
	const uint8_t *p;
	size_t n;
	uint32_t bad = 0, bad2 = 0;
	bool any;

	memset(ret, 0, sizeof(*ret));
	if (ev->type == MB_EV_NO_ACTION) {
		ret->status = MB_DIGEST_NOT_EXTENDED;
		return 0;
	}
	switch (ev->type) {
	case MB_EV_EFI_ACTION:
	case MB_EV_EFI_GPT_EVENT:
	case MB_EV_EFI_VARIABLE_BOOT2:
	case MB_EV_EFI_VARIABLE_AUTHORITY:
	case MB_EV_SEPARATOR:
	case MB_EV_S_CRTM_VERSION:
		ret->rule = "H(event data)";
		ret->status = digests_equal(ev, ev->data, ev->data_size, &bad, &any) ? MB_DIGEST_MATCH :
			any ? MB_DIGEST_MISMATCH : MB_DIGEST_UNCHECKABLE;
		ret->mismatched_digests = bad;
		return 0;
	case MB_EV_EFI_VARIABLE_DRIVER_CONFIG:
		/* By the spec H(whole UEFI_VARIABLE_DATA); some firmware hashes VariableData only. */
		ret->rule = "H(event data)";
		if (digests_equal(ev, ev->data, ev->data_size, &bad, &any)) {
			ret->status = MB_DIGEST_MATCH;
			return 0;
		}
		if (variable_data(ev, &p, &n) && digests_equal(ev, p, n, &bad2, &any)) {
			ret->status = MB_DIGEST_MATCH_ALTERNATE;
			ret->rule = "H(VariableData)";
			return 0;
		}
		ret->status = any ? MB_DIGEST_MISMATCH : MB_DIGEST_UNCHECKABLE;
		ret->mismatched_digests = bad;
		return 0;
	case MB_EV_EFI_VARIABLE_BOOT:
		/* By the spec H(VariableData); some Dell firmware hashes the whole event (pcr-oracle). */
		ret->rule = "H(VariableData)";
		if (variable_data(ev, &p, &n) && digests_equal(ev, p, n, &bad, &any)) {
			ret->status = MB_DIGEST_MATCH;
			return 0;
		}
		if (digests_equal(ev, ev->data, ev->data_size, &bad2, &any)) {
			ret->status = MB_DIGEST_MATCH_ALTERNATE;
			ret->rule = "H(event data)";
			return 0;
		}
		ret->status = any ? MB_DIGEST_MISMATCH : MB_DIGEST_UNCHECKABLE;
		ret->mismatched_digests = bad2;
		return 0;
	case MB_EV_IPL:
		if (grub_string_split(ev, &p, &n) == GRUB_STRING_NONE)
			return 0; /* files, shim's MokList, sd-boot sections: H(something not in the log) */
		ret->rule = "H(text after prefix, without NUL)";
		if (digests_equal(ev, p, n, &bad, &any)) {
			ret->status = MB_DIGEST_MATCH;
			return 0;
		}
		/* Older distribution patches hashed the trailing NUL too (tpm2-tools verify_digests). */
		if (p + n < ev->data + ev->data_size && digests_equal(ev, p, n + 1, &bad2, &any)) {
			ret->status = MB_DIGEST_MATCH_ALTERNATE;
			ret->rule = "H(text after prefix, with NUL)";
			return 0;
		}
		ret->status = any ? MB_DIGEST_MISMATCH : MB_DIGEST_UNCHECKABLE;
		ret->mismatched_digests = bad;
		return 0;
	default:
		return 0;
	}
}

const mb_digest_check *event_log_digest_checks(const mb_event_log *log)
{
	mb_digest_check *checks, *expected = NULL;
	size_t i;

	checks = __atomic_load_n(&log->digest_checks, __ATOMIC_ACQUIRE);
	if (checks || log->n_events == 0)
		return checks;
	checks = calloc(log->n_events, sizeof(*checks));
	if (!checks)
		return NULL;
	for (i = 0; i < log->n_events; i++)
		if (mb_event_check_digest(&log->events[i], &checks[i]) < 0)
			checks[i] = (mb_digest_check) { .status = MB_DIGEST_UNCHECKABLE };
	/* Two threads judging one log may both compute it: the first to publish wins. */
	if (!__atomic_compare_exchange_n(&((mb_event_log *) log)->digest_checks, &expected, checks, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		free(checks);
		return expected;
	}
	return checks;
}

MB_EXPORT const char *mb_digest_status_name(mb_digest_status s)
{
	switch (s) {
	case MB_DIGEST_UNCHECKABLE: return "uncheckable";
	case MB_DIGEST_MATCH: return "match";
	case MB_DIGEST_MATCH_ALTERNATE: return "match-alternate";
	case MB_DIGEST_MISMATCH: return "mismatch";
	case MB_DIGEST_NOT_EXTENDED: return "not-extended";
	}
	return "unknown";
}
