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

/* One way an event's digest may have been computed: rule, over the bytes p[0..n) when usable. */
typedef struct hash_form {
	const char *rule;
	const uint8_t *p;
	size_t n;
	bool usable;
} hash_form;

/*
 * The spec's form first, then a form some firmware or bootloader uses instead; a mismatch
 * reports the digests that differ under the form report_alt says.
 */
static void judge(const mb_event *ev, hash_form spec, hash_form alt, bool report_alt, mb_digest_check *ret)
{
	uint32_t bad = 0, bad_alt = 0;
	bool any = false;

	ret->rule = spec.rule;
	if (spec.usable && digests_equal(ev, spec.p, spec.n, &bad, &any)) {
		ret->status = MB_DIGEST_MATCH;
		return;
	}
	if (alt.usable && digests_equal(ev, alt.p, alt.n, &bad_alt, &any)) {
		ret->status = MB_DIGEST_MATCH_ALTERNATE;
		ret->rule = alt.rule;
		return;
	}
	ret->status = any ? MB_DIGEST_MISMATCH : MB_DIGEST_UNCHECKABLE;
	ret->mismatched_digests = report_alt ? bad_alt : bad;
}

/*
 * An EV_IPL that is not a GRUB string: systemd-boot and the UKI stub log what they hash (the
 * command line as UTF-16 with its NUL), so every bank equal to H(data) proves the text; GRUB's
 * files, shim's MokList and a UKI's sections hash what is not in the log, so no bank equal says
 * nothing. Some banks equal and others not is no innocent form: a mismatch.
 */
static void judge_logged_or_elsewhere(const mb_event *ev, mb_digest_check *ret)
{
	uint32_t bad = 0, computed = 0, i;
	bool any;

	for (i = 0; i < ev->n_digests; i++) {
		const mb_digest_info *info = mb_digest_by_alg(ev->digests[i].alg);

		if (info && info->size == ev->digests[i].size)
			computed |= 1u << i;
	}
	if (digests_equal(ev, ev->data, ev->data_size, &bad, &any)) {
		ret->status = MB_DIGEST_MATCH;
		ret->rule = "H(event data)";
	} else if (any && bad != computed) {
		ret->status = MB_DIGEST_MISMATCH;
		ret->rule = "H(event data)";
		ret->mismatched_digests = bad;
	}
}

MB_EXPORT int mb_event_check_digest(const mb_event *ev, mb_digest_check *ret)
{
	const hash_form data = { "H(event data)", ev->data, ev->data_size, true }, none = { 0 };
	hash_form var = { "H(VariableData)", NULL, 0, false }, text, text_nul;

	memset(ret, 0, sizeof(*ret));
	switch (ev->type) {
	case MB_EV_NO_ACTION:
		ret->status = MB_DIGEST_NOT_EXTENDED;
		return 0;
	case MB_EV_EFI_ACTION:
	case MB_EV_EFI_GPT_EVENT:
	case MB_EV_EFI_VARIABLE_BOOT2:
	case MB_EV_EFI_VARIABLE_AUTHORITY:
	case MB_EV_SEPARATOR:
	case MB_EV_S_CRTM_VERSION:
		judge(ev, data, none, false, ret);
		return 0;
	case MB_EV_EFI_VARIABLE_DRIVER_CONFIG:
		/* By the spec H(whole UEFI_VARIABLE_DATA); some firmware hashes VariableData only. */
		var.usable = variable_data(ev, &var.p, &var.n);
		judge(ev, data, var, false, ret);
		return 0;
	case MB_EV_EFI_VARIABLE_BOOT:
		/* By the spec H(VariableData); some Dell firmware hashes the whole event (pcr-oracle). */
		var.usable = variable_data(ev, &var.p, &var.n);
		judge(ev, var, data, true, ret);
		return 0;
	case MB_EV_IPL:
		if (grub_string_split(ev, &text.p, &text.n) == GRUB_STRING_NONE) {
			judge_logged_or_elsewhere(ev, ret);
			return 0;
		}
		text.rule = "H(text after prefix, without NUL)";
		text.usable = true;
		/* Older distribution patches hashed the trailing NUL too (tpm2-tools verify_digests). */
		text_nul = (hash_form) { "H(text after prefix, with NUL)", text.p, text.n + 1,
					 text.p + text.n < ev->data + ev->data_size };
		judge(ev, text, text_nul, false, ret);
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
