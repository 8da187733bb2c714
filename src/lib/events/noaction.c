/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * EV_NO_ACTION events (TCG PFP §10.4.5): identified by a 16-byte signature at
 * the start of the data. The Spec ID event (TCG_EfiSpecIDEventStruct,
 * §10.4.5.1; the TPM 1.2 "Spec ID Event00/02" form has no algorithm table),
 * StartupLocality (§10.4.5.3), SP800-155 reference manifest events (§10.4.5.2,
 * TCG_Sp800_155_PlatformId_Event and Event3) and the NV index events (§10.4.5.4/5).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/digest.h>
#include "decode-internal.h"

static bool signature_is(const mb_event *ev, const char *sig)
{
	/* 16-byte fields, NUL-terminated unless the text fills them ("SP800-155 Event3"). */
	size_t n = strlen(sig) + 1 > 16 ? 16 : strlen(sig) + 1;

	return ev->data_size >= n && memcmp(ev->data, sig, n) == 0;
}

static void add_algs(mb_decoded_node *o, const mb_spec_id_alg *algs, size_t n)
{
	mb_decoded_node *a = mb_dec_new_array(o);
	size_t i;

	if (!a)
		return;
	for (i = 0; i < n; i++) {
		mb_decoded_node *e = mb_dec_new_object(o);
		const mb_digest_info *info = mb_digest_by_alg(algs[i].alg);

		if (!e)
			break;
		mb_dec_append(a, e);
		mb_dec_add_u64(e, "algorithm_id", algs[i].alg);
		if (info)
			mb_dec_add_str(e, "algorithm", info->name);
		mb_dec_add_u64(e, "digest_size", algs[i].size);
	}
	mb_dec_add(o, "algorithms", a);
}

static void spec_id_desc(mb_decoded_node *o, const char *sig, const mb_spec_id_alg *algs, size_t n)
{
	char names[128] = "";
	size_t i, l = 0;

	for (i = 0; i < n && l + 12 < sizeof(names); i++) {
		const mb_digest_info *info = mb_digest_by_alg(algs[i].alg);

		if (info)
			l += (size_t) snprintf(names + l, sizeof(names) - l, "%s%s", i ? ", " : "", info->name);
		else
			l += (size_t) snprintf(names + l, sizeof(names) - l, "%s0x%04x", i ? ", " : "", algs[i].alg);
	}
	if (n)
		mb_dec_set_desc(o, "%s (%s)", sig, names);
	else
		mb_dec_set_desc(o, "%s", sig);
}

/* TCG_EfiSpecIDEventStruct, parsed here for SHA-1 logs and stray copies. */
static int spec_id(const mb_event_log *log, const mb_event *ev, mb_decoded_node *o, mb_dec_why *why)
{
	const mb_spec_id *sid = log ? mb_event_log_spec_id(log) : NULL;
	mb_spec_id_alg algs[MB_MAX_BANKS];
	char sig[17];
	uint32_t platform_class, n_algs = 0, i;
	uint8_t minor, major, errata, uintn, vsize;
	const uint8_t *vinfo, *s;
	mb_reader r;
	bool agile;

	mb_dec_set_kind(o, "spec_id");
	/* The header of a crypto-agile log: the parser already checked it against the log. */
	if (sid && ev->number == 0 && ev->sha1_format) {
		mb_dec_add_str(o, "signature", sid->signature);
		mb_dec_add_u64(o, "platform_class", sid->platform_class);
		mb_dec_add_u64(o, "spec_version_major", sid->version_major);
		mb_dec_add_u64(o, "spec_version_minor", sid->version_minor);
		mb_dec_add_u64(o, "spec_errata", sid->errata);
		mb_dec_add_u64(o, "uintn_size", sid->uintn_size);
		mb_dec_add_u64(o, "number_of_algorithms", sid->n_algs);
		add_algs(o, sid->algs, sid->n_algs);
		mb_dec_add_u64(o, "vendor_info_size", sid->vendor_info_size);
		mb_dec_add_hex(o, "vendor_info", sid->vendor_info, sid->vendor_info_size);
		spec_id_desc(o, sid->signature, sid->algs, sid->n_algs);
		return 0;
	}
	mb_reader_init(&r, ev->data, ev->data_size, 0);
	if (mb_read_bytes(&r, 16, &s) < 0 || mb_read_u32le(&r, &platform_class) < 0 || mb_read_u8(&r, &minor) < 0 ||
	    mb_read_u8(&r, &major) < 0 || mb_read_u8(&r, &errata) < 0 || mb_read_u8(&r, &uintn) < 0)
		return mb_dec_fail(why, "Spec ID event: truncated header");
	memcpy(sig, s, 16);
	sig[16] = 0;
	agile = strcmp(sig, "Spec ID Event03") == 0;
	if (agile) {
		if (mb_read_u32le(&r, &n_algs) < 0)
			return mb_dec_fail(why, "Spec ID event: no numberOfAlgorithms");
		if (n_algs == 0 || n_algs > MB_MAX_BANKS)
			return mb_dec_fail(why, "Spec ID event: numberOfAlgorithms %" PRIu32 " out of range", n_algs);
		for (i = 0; i < n_algs; i++)
			if (mb_read_u16le(&r, &algs[i].alg) < 0 || mb_read_u16le(&r, &algs[i].size) < 0)
				return mb_dec_fail(why, "Spec ID event: truncated algorithm table");
	}
	if (mb_read_u8(&r, &vsize) < 0 || mb_read_bytes(&r, vsize, &vinfo) < 0)
		return mb_dec_fail(why, "Spec ID event: vendorInfoSize overruns the event");
	mb_dec_add_str(o, "signature", sig);
	mb_dec_add_u64(o, "platform_class", platform_class);
	mb_dec_add_u64(o, "spec_version_major", major);
	mb_dec_add_u64(o, "spec_version_minor", minor);
	mb_dec_add_u64(o, "spec_errata", errata);
	mb_dec_add_u64(o, "uintn_size", uintn);
	if (agile) {
		mb_dec_add_u64(o, "number_of_algorithms", n_algs);
		add_algs(o, algs, n_algs);
	}
	mb_dec_add_u64(o, "vendor_info_size", vsize);
	mb_dec_add_hex(o, "vendor_info", vinfo, vsize);
	if (mb_reader_left(&r) > 0)
		mb_dec_add_u64(o, "trailing_bytes", mb_reader_left(&r));
	spec_id_desc(o, sig, algs, n_algs);
	return 0;
}

/* A u8-size-prefixed string field of the SP800-155 events. */
static int sp_string(mb_reader *r, mb_decoded_node *o, const char *key)
{
	uint8_t n;
	const uint8_t *p;

	if (mb_read_u8(r, &n) < 0 || mb_read_bytes(r, n, &p) < 0)
		return -EBADMSG;
	if (n == 0 || mb_strip_nuls(p, n) == 0 || mb_looks_text(p, n))
		mb_dec_add_strn(o, key, (const char *) p, mb_strip_nuls(p, n));
	else {
		char k[64];

		snprintf(k, sizeof(k), "%s_hex", key);
		/* The key is built here: the tree keeps a copy. */
		mb_dec_add_hex(o, mb_dec_key_copy(o, k), p, n);
	}
	return 0;
}

/* Locator in Event3: u32 type, u32 length, data (0 none, 1 raw URI, 2 device path, 3 UEFI variable). */
static int sp_locator(mb_reader *r, mb_decoded_node *o, const char *key, mb_dec_why *why)
{
	uint32_t type, len;
	const uint8_t *p;
	mb_decoded_node *l;
	char *s = NULL;

	if (mb_read_u32le(r, &type) < 0 || mb_read_u32le(r, &len) < 0 || mb_read_bytes(r, len, &p) < 0)
		return mb_dec_fail(why, "SP800-155 event: %s overruns the event", key);
	l = mb_dec_new_object(o);
	if (!l)
		return -ENOMEM;
	mb_dec_add(o, key, l);
	mb_dec_add_u64(l, "type", type);
	if (type == 1 && mb_looks_text(p, len)) {
		mb_dec_add_str(l, "type_name", "uri");
		mb_dec_add_strn(l, "uri", (const char *) p, mb_strip_nuls(p, len));
	} else if (type == 2 && len > 0 && mb_devpath_to_text(p, len, &s, why) == 0) {
		mb_dec_add_str(l, "type_name", "device_path");
		mb_dec_add_str(l, "device_path", s);
		free(s);
	} else if (type == 3 && len >= 16 && (len - 16) % 2 == 0) {
		mb_dec_add_str(l, "type_name", "uefi_variable");
		mb_dec_add_guid(l, "variable_guid", p);
		s = mb_utf16_to_utf8(p + 16, len - 16);
		if (s)
			mb_dec_add_str(l, "variable_name", s);
		free(s);
	} else if (len > 0) {
		mb_dec_add_hex(l, "hex", p, len);
	}
	return 0;
}

/* TCG_Sp800_155_PlatformId_Event(3) (PFP §10.4.5.2). */
static int sp800_155(const mb_event *ev, mb_decoded_node *o, bool event3, mb_dec_why *why)
{
	mb_reader r;
	uint32_t vendor, fw_vendor;
	const uint8_t *g;
	const mb_decoded_node *v;
	int rc;

	mb_reader_init(&r, ev->data, ev->data_size, 0);
	if (mb_read_skip(&r, 16) < 0 || mb_read_u32le(&r, &vendor) < 0 || mb_read_bytes(&r, 16, &g) < 0)
		return mb_dec_fail(why, "SP800-155 event: truncated header");
	mb_dec_set_kind(o, "sp800_155_reference");
	mb_dec_add_str(o, "signature", event3 ? "SP800-155 Event3" : "SP800-155 Event");
	mb_dec_add_u64(o, "platform_manufacturer_id", vendor);
	mb_dec_add_guid(o, "reference_manifest_guid", g);
	if (sp_string(&r, o, "platform_manufacturer") < 0 || sp_string(&r, o, "platform_model") < 0 ||
	    sp_string(&r, o, "platform_version") < 0 || sp_string(&r, o, "firmware_manufacturer") < 0 ||
	    mb_read_u32le(&r, &fw_vendor) < 0)
		return mb_dec_fail(why, "SP800-155 event: a string size overruns the event");
	mb_dec_add_u64(o, "firmware_manufacturer_id", fw_vendor);
	if (sp_string(&r, o, "firmware_version") < 0)
		return mb_dec_fail(why, "SP800-155 event: firmware version overruns the event");
	if (event3) {
		rc = sp_locator(&r, o, "rim_locator", why);
		if (rc < 0)
			return rc;
		rc = sp_locator(&r, o, "platform_cert_locator", why);
		if (rc < 0)
			return rc;
	}
	/* GCE pads these events with zeros; anything else after the fields is suspicious. */
	if (mb_reader_left(&r) > 0) {
		if (!mb_reader_rest_is(&r, 0))
			return mb_dec_fail(why, "SP800-155 event: %zu unexplained bytes after the last field", mb_reader_left(&r));
		mb_dec_add_u64(o, "trailing_zero_bytes", mb_reader_left(&r));
	}
	v = mb_decoded_get(o, "platform_model");
	if (v)
		mb_dec_set_desc(o, "SP800-155 reference manifest: %s %s",
				mb_decoded_string(mb_decoded_get(o, "platform_manufacturer")) ?: "",
				mb_decoded_string(v) ?: "");
	else
		mb_dec_set_desc(o, "SP800-155 reference manifest");
	return 0;
}

int mb_dec_no_action(const mb_event_log *log, const mb_event *ev, mb_decoded_node *o, mb_dec_why *why)
{
	const char *text;

	if (signature_is(ev, "Spec ID Event03") || signature_is(ev, "Spec ID Event00") ||
	    signature_is(ev, "Spec ID Event02"))
		return spec_id(log, ev, o, why);
	if (signature_is(ev, "StartupLocality")) {
		if (ev->data_size != 17)
			return mb_dec_fail(why, "StartupLocality event: %u bytes, 17 expected", ev->data_size);
		mb_dec_set_kind(o, "startup_locality");
		mb_dec_add_u64(o, "locality", ev->data[16]);
		mb_dec_set_desc(o, "StartupLocality %u", ev->data[16]);
		return 0;
	}
	if (signature_is(ev, "SP800-155 Event"))
		return sp800_155(ev, o, false, why);
	if (signature_is(ev, "SP800-155 Event3"))
		return sp800_155(ev, o, true, why);
	if ((signature_is(ev, "NvIndexInstance") || signature_is(ev, "NvIndexDynamic")) && ev->data_size >= 16) {
		bool inst = ev->data[7] == 'I';

		mb_dec_set_kind(o, inst ? "nv_index_instance" : "nv_index_dynamic");
		mb_dec_add_hex(o, "hex", ev->data + 16, ev->data_size - 16);
		mb_dec_set_desc(o, "%s, %u bytes", inst ? "NvIndexInstance" : "NvIndexDynamic", ev->data_size - 16);
		return 0;
	}
	mb_dec_set_kind(o, "no_action");
	if (mb_dec_add_text_or_hex(o, ev->data, ev->data_size, &text))
		mb_dec_set_desc(o, "\"%.80s\"", text);
	else
		mb_dec_set_desc(o, "%u bytes", ev->data_size);
	return 0;
}
