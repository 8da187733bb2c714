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
	mb_decoded_node *a = dec_new_array(o);
	size_t i;

	if (!a)
		return;
	for (i = 0; i < n; i++) {
		mb_decoded_node *e = dec_new_object(o);
		const mb_digest_info *info = mb_digest_by_alg(algs[i].alg);

		if (!e)
			break;
		dec_append(a, e);
		dec_add_u64(e, "algorithm_id", algs[i].alg);
		if (info)
			dec_add_str(e, "algorithm", info->name);
		dec_add_u64(e, "digest_size", algs[i].size);
	}
	dec_add(o, "algorithms", a);
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
		dec_set_desc(o, "%s (%s)", sig, names);
	else
		dec_set_desc(o, "%s", sig);
}

/* TCG_EfiSpecIDEventStruct, parsed here for SHA-1 logs and stray copies. */
static int spec_id(const mb_event_log *log, const mb_event *ev, mb_decoded_node *o, dec_why *why)
{
	const mb_spec_id *sid = log ? mb_event_log_spec_id(log) : NULL;
	mb_spec_id_alg algs[MB_MAX_BANKS];
	char sig[17];
	uint32_t platform_class, n_algs = 0, i;
	uint8_t minor, major, errata, uintn, vsize;
	const uint8_t *vinfo, *s;
	byte_reader r;
	bool agile;

	dec_set_kind(o, "spec_id");
	/* The header of a crypto-agile log: the parser already checked it against the log. */
	if (sid && ev->number == 0 && ev->sha1_format) {
		dec_add_str(o, "signature", sid->signature);
		dec_add_u64(o, "platform_class", sid->platform_class);
		dec_add_u64(o, "spec_version_major", sid->version_major);
		dec_add_u64(o, "spec_version_minor", sid->version_minor);
		dec_add_u64(o, "spec_errata", sid->errata);
		dec_add_u64(o, "uintn_size", sid->uintn_size);
		dec_add_u64(o, "number_of_algorithms", sid->n_algs);
		add_algs(o, sid->algs, sid->n_algs);
		dec_add_u64(o, "vendor_info_size", sid->vendor_info_size);
		dec_add_hex(o, "vendor_info", sid->vendor_info, sid->vendor_info_size);
		spec_id_desc(o, sid->signature, sid->algs, sid->n_algs);
		return 0;
	}
	reader_init(&r, ev->data, ev->data_size, 0);
	if (read_bytes(&r, 16, &s) < 0 || read_u32le(&r, &platform_class) < 0 || read_u8(&r, &minor) < 0 ||
	    read_u8(&r, &major) < 0 || read_u8(&r, &errata) < 0 || read_u8(&r, &uintn) < 0)
		return dec_fail(why, "Spec ID event: truncated header");
	memcpy(sig, s, 16);
	sig[16] = 0;
	agile = strcmp(sig, "Spec ID Event03") == 0;
	if (agile) {
		if (read_u32le(&r, &n_algs) < 0)
			return dec_fail(why, "Spec ID event: no numberOfAlgorithms");
		if (n_algs == 0 || n_algs > MB_MAX_BANKS)
			return dec_fail(why, "Spec ID event: numberOfAlgorithms %" PRIu32 " out of range", n_algs);
		for (i = 0; i < n_algs; i++)
			if (read_u16le(&r, &algs[i].alg) < 0 || read_u16le(&r, &algs[i].size) < 0)
				return dec_fail(why, "Spec ID event: truncated algorithm table");
	}
	if (read_u8(&r, &vsize) < 0 || read_bytes(&r, vsize, &vinfo) < 0)
		return dec_fail(why, "Spec ID event: vendorInfoSize overruns the event");
	dec_add_str(o, "signature", sig);
	dec_add_u64(o, "platform_class", platform_class);
	dec_add_u64(o, "spec_version_major", major);
	dec_add_u64(o, "spec_version_minor", minor);
	dec_add_u64(o, "spec_errata", errata);
	dec_add_u64(o, "uintn_size", uintn);
	if (agile) {
		dec_add_u64(o, "number_of_algorithms", n_algs);
		add_algs(o, algs, n_algs);
	}
	dec_add_u64(o, "vendor_info_size", vsize);
	dec_add_hex(o, "vendor_info", vinfo, vsize);
	if (reader_left(&r) > 0)
		dec_add_u64(o, "trailing_bytes", reader_left(&r));
	spec_id_desc(o, sig, algs, n_algs);
	return 0;
}

/* A u8-size-prefixed string field of the SP800-155 events. */
static int sp_string(byte_reader *r, mb_decoded_node *o, const char *key)
{
	uint8_t n;
	const uint8_t *p;

	if (read_u8(r, &n) < 0 || read_bytes(r, n, &p) < 0)
		return -EBADMSG;
	if (n == 0 || strip_nuls(p, n) == 0 || looks_text(p, n))
		dec_add_strn(o, key, (const char *) p, strip_nuls(p, n));
	else {
		char k[64];

		snprintf(k, sizeof(k), "%s_hex", key);
		/* The key is built here: the tree keeps a copy. */
		dec_add_hex(o, dec_key_copy(o, k), p, n);
	}
	return 0;
}

/* Locator in Event3: u32 type, u32 length, data (0 none, 1 raw URI, 2 device path, 3 UEFI variable). */
static int sp_locator(byte_reader *r, mb_decoded_node *o, const char *key, dec_why *why)
{
	uint32_t type, len;
	const uint8_t *p;
	mb_decoded_node *l;
	char *s = NULL;

	if (read_u32le(r, &type) < 0 || read_u32le(r, &len) < 0 || read_bytes(r, len, &p) < 0)
		return dec_fail(why, "SP800-155 event: %s overruns the event", key);
	l = dec_new_object(o);
	if (!l)
		return -ENOMEM;
	dec_add(o, key, l);
	dec_add_u64(l, "type", type);
	if (type == 1 && looks_text(p, len)) {
		dec_add_str(l, "type_name", "uri");
		dec_add_strn(l, "uri", (const char *) p, strip_nuls(p, len));
	} else if (type == 2 && len > 0 && devpath_to_text(p, len, &s, why) == 0) {
		dec_add_str(l, "type_name", "device_path");
		dec_add_str(l, "device_path", s);
		free(s);
	} else if (type == 3 && len >= 16 && (len - 16) % 2 == 0) {
		dec_add_str(l, "type_name", "uefi_variable");
		dec_add_guid(l, "variable_guid", p);
		s = utf16le_to_utf8(p + 16, len - 16);
		if (s)
			dec_add_str(l, "variable_name", s);
		free(s);
	} else if (len > 0) {
		dec_add_hex(l, "hex", p, len);
	}
	return 0;
}

/* TCG_Sp800_155_PlatformId_Event(3) (PFP §10.4.5.2). */
static int sp800_155(const mb_event *ev, mb_decoded_node *o, bool event3, dec_why *why)
{
	byte_reader r;
	uint32_t vendor, fw_vendor;
	const uint8_t *g;
	const mb_decoded_node *v;
	int rc;

	reader_init(&r, ev->data, ev->data_size, 0);
	if (read_skip(&r, 16) < 0 || read_u32le(&r, &vendor) < 0 || read_bytes(&r, 16, &g) < 0)
		return dec_fail(why, "SP800-155 event: truncated header");
	dec_set_kind(o, "sp800_155_reference");
	dec_add_str(o, "signature", event3 ? "SP800-155 Event3" : "SP800-155 Event");
	dec_add_u64(o, "platform_manufacturer_id", vendor);
	dec_add_guid(o, "reference_manifest_guid", g);
	if (sp_string(&r, o, "platform_manufacturer") < 0 || sp_string(&r, o, "platform_model") < 0 ||
	    sp_string(&r, o, "platform_version") < 0 || sp_string(&r, o, "firmware_manufacturer") < 0 ||
	    read_u32le(&r, &fw_vendor) < 0)
		return dec_fail(why, "SP800-155 event: a string size overruns the event");
	dec_add_u64(o, "firmware_manufacturer_id", fw_vendor);
	if (sp_string(&r, o, "firmware_version") < 0)
		return dec_fail(why, "SP800-155 event: firmware version overruns the event");
	if (event3) {
		rc = sp_locator(&r, o, "rim_locator", why);
		if (rc < 0)
			return rc;
		rc = sp_locator(&r, o, "platform_cert_locator", why);
		if (rc < 0)
			return rc;
	}
	/* GCE pads these events with zeros; anything else after the fields is suspicious. */
	if (reader_left(&r) > 0) {
		if (!reader_rest_is(&r, 0))
			return dec_fail(why, "SP800-155 event: %zu unexplained bytes after the last field", reader_left(&r));
		dec_add_u64(o, "trailing_zero_bytes", reader_left(&r));
	}
	v = mb_decoded_get(o, "platform_model");
	if (v)
		dec_set_desc(o, "SP800-155 reference manifest: %s %s",
				mb_decoded_string(mb_decoded_get(o, "platform_manufacturer")) ?: "",
				mb_decoded_string(v) ?: "");
	else
		dec_set_desc(o, "SP800-155 reference manifest");
	return 0;
}

int startup_locality_parse(const uint8_t *p, size_t n, uint8_t *ret, dec_why *why)
{
	static const char sig[16] = "StartupLocality";
	byte_reader r;
	const uint8_t *s;
	uint8_t locality;

	reader_init(&r, p, n, 0);
	if (read_bytes(&r, sizeof(sig), &s) < 0 || memcmp(s, sig, sizeof(sig)) != 0)
		return -ENOENT;
	if (read_u8(&r, &locality) < 0 || reader_left(&r) > 0)
		return dec_fail(why, "StartupLocality event: %zu bytes, 17 expected", n);
	*ret = locality;
	return 0;
}

int dec_no_action(const mb_event_log *log, const mb_event *ev, mb_decoded_node *o, dec_why *why)
{
	const char *text;
	uint8_t locality;
	int rc;

	if (signature_is(ev, "Spec ID Event03") || signature_is(ev, "Spec ID Event00") ||
	    signature_is(ev, "Spec ID Event02"))
		return spec_id(log, ev, o, why);
	rc = startup_locality_parse(ev->data, ev->data_size, &locality, why);
	if (rc != -ENOENT) {
		if (rc < 0)
			return rc;
		dec_set_kind(o, "startup_locality");
		dec_add_u64(o, "locality", locality);
		dec_set_desc(o, "StartupLocality %u", locality);
		return 0;
	}
	if (signature_is(ev, "SP800-155 Event"))
		return sp800_155(ev, o, false, why);
	if (signature_is(ev, "SP800-155 Event3"))
		return sp800_155(ev, o, true, why);
	if ((signature_is(ev, "NvIndexInstance") || signature_is(ev, "NvIndexDynamic")) && ev->data_size >= 16) {
		bool inst = ev->data[7] == 'I';

		dec_set_kind(o, inst ? "nv_index_instance" : "nv_index_dynamic");
		dec_add_hex(o, "hex", ev->data + 16, ev->data_size - 16);
		dec_set_desc(o, "%s, %u bytes", inst ? "NvIndexInstance" : "NvIndexDynamic", ev->data_size - 16);
		return 0;
	}
	dec_set_kind(o, "no_action");
	if (dec_add_text_or_hex(o, ev->data, ev->data_size, &text))
		dec_set_desc(o, "\"%.80s\"", text);
	else
		dec_set_desc(o, "%u bytes", ev->data_size);
	return 0;
}
