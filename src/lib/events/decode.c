/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mb_event_decode(): pick the decoder for the event type (TCG PFP §10.4.1) and
 * fall back to the raw form, with the reason, when the data does not parse as
 * the type says. The type is untrusted (no digest covers it), so every decoder
 * expects arbitrary bytes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/events.h>
#include "decode-internal.h"


static void raw(mb_decoded_node *o, const mb_event *ev, const char *error)
{
	char buf[MB_EVENT_TYPE_LABEL_SIZE];

	dec_set_kind(o, "raw");
	if (error) {
		dec_add_str(o, "error", error);
		dec_set_desc(o, "malformed %s: %s", mb_event_type_label(ev->type, buf), error);
	} else {
		dec_set_desc(o, "%s, %u bytes", mb_event_type_label(ev->type, buf), ev->data_size);
	}
	dec_add_hex(o, "hex", ev->data, ev->data_size);
}

/* EV_SEPARATOR (PFP §10.4.1, §3.3.2): 00000000 when all went well, FFFFFFFF or 00000001 on error. */
static int separator(const mb_event *ev, mb_decoded_node *o, dec_why *why)
{
	byte_reader r;
	uint32_t v;

	reader_init(&r, ev->data, ev->data_size, 0);
	if (ev->data_size != 4 || read_u32le(&r, &v) < 0)
		return dec_fail(why, "separator of %u bytes, 4 expected", ev->data_size);
	dec_set_kind(o, "separator");
	dec_add_hex(o, "value", ev->data, 4);
	if (v == 0) {
		dec_add_str(o, "result", "success");
		dec_set_desc(o, "separator (success)");
	} else if (v == 0xffffffffu || v == 1) {
		dec_add_str(o, "result", "error");
		dec_set_desc(o, "separator (ERROR: 0x%08" PRIx32 ")", v);
	} else {
		dec_add_str(o, "result", "unknown");
		dec_set_desc(o, "separator (unexpected value 0x%08" PRIx32 ")", v);
	}
	return 0;
}

/* EV_EFI_ACTION / EV_ACTION: an ASCII string, no NUL (PFP §10.4.1). */
static int action(const mb_event *ev, mb_decoded_node *o, dec_why *why)
{
	const char *text;

	if (!looks_text(ev->data, ev->data_size))
		return dec_fail(why, "action data is not a string");
	dec_set_kind(o, "action");
	dec_add_text_or_hex(o, ev->data, ev->data_size, &text);
	dec_set_desc(o, "%.200s", text ? text : "");
	return 0;
}

/* Types whose data is a free-form string or opaque bytes: "string" when it reads as text. */
static int string_or_raw(const mb_event *ev, mb_decoded_node *o, const char *label)
{
	const char *text;

	if (ev->data_size > 0 && (looks_text(ev->data, ev->data_size) || looks_utf16(ev->data, ev->data_size))) {
		dec_set_kind(o, "string");
		dec_add_text_or_hex(o, ev->data, ev->data_size, &text);
		dec_set_desc(o, "%s%s\"%.200s\"", label ? label : "", label ? ": " : "", text ? text : "");
		return 0;
	}
	dec_set_kind(o, "raw");
	dec_add_hex(o, "hex", ev->data, ev->data_size);
	dec_set_desc(o, "%s%s%u bytes", label ? label : "", label ? ": " : "", ev->data_size);
	return 0;
}

/* EV_S_CRTM_VERSION: a UTF-16 version string by the spec; some firmware logs a GUID. */
static int crtm_version(const mb_event *ev, mb_decoded_node *o)
{
	const char *text;

	dec_set_kind(o, "crtm_version");
	if (ev->data_size > 0 && strip_nuls(ev->data, ev->data_size) == 0) {
		/* An empty string: a lone NUL (UTF-16 or ASCII). */
		dec_add_str(o, "text", "");
		dec_add_str(o, "encoding", ev->data_size % 2 ? "utf-8" : "utf-16");
		dec_set_desc(o, "S-CRTM version \"\"");
	} else if (dec_add_text_or_hex(o, ev->data, ev->data_size, &text)) {
		dec_set_desc(o, "S-CRTM version \"%.100s\"", text ? text : "");
	} else if (ev->data_size == 16) {
		char g[MB_GUID_STR];

		dec_add_guid(o, "guid", ev->data);
		dec_set_desc(o, "S-CRTM version %s", guid_format(ev->data, g));
	} else {
		dec_set_desc(o, "S-CRTM version, %u bytes", ev->data_size);
	}
	return 0;
}

/* EV_POST_CODE: an ASCII tag ("ACPI DATA", "SMM CODE", ...) or, per PFP, a 16-byte blob. */
static int post_code(const mb_event *ev, mb_decoded_node *o)
{
	const char *text;
	byte_reader r;
	uint64_t base, len;

	dec_set_kind(o, "post_code");
	if (looks_text(ev->data, ev->data_size)) {
		dec_add_text_or_hex(o, ev->data, ev->data_size, &text);
		dec_set_desc(o, "POST code \"%.100s\"", text ? text : "");
		return 0;
	}
	reader_init(&r, ev->data, ev->data_size, 0);
	if (ev->data_size == 16 && read_u64le(&r, &base) == 0 && read_u64le(&r, &len) == 0) {
		dec_add_addr(o, "blob_base", base);
		dec_add_u64(o, "blob_length", len);
		dec_set_desc(o, "POST code: %" PRIu64 " bytes at 0x%" PRIx64, len, base);
		return 0;
	}
	dec_add_hex(o, "hex", ev->data, ev->data_size);
	dec_set_desc(o, "POST code, %u bytes", ev->data_size);
	return 0;
}

static int dispatch(const mb_event_log *log, const mb_event *ev, mb_decoded_node *o, dec_why *why)
{
	switch (ev->type) {
	case MB_EV_EFI_VARIABLE_DRIVER_CONFIG:
	case MB_EV_EFI_VARIABLE_BOOT:
	case MB_EV_EFI_VARIABLE_BOOT2:
	case MB_EV_EFI_VARIABLE_AUTHORITY:
		return dec_efi_variable(ev, o, why);
	case MB_EV_EFI_BOOT_SERVICES_APPLICATION:
	case MB_EV_EFI_BOOT_SERVICES_DRIVER:
	case MB_EV_EFI_RUNTIME_SERVICES_DRIVER:
		return dec_efi_image_load(ev, o, why);
	case MB_EV_EFI_GPT_EVENT:
	case MB_EV_EFI_GPT_EVENT2:
		return dec_efi_gpt(ev, o, why);
	case MB_EV_EFI_PLATFORM_FIRMWARE_BLOB:
	case MB_EV_EFI_PLATFORM_FIRMWARE_BLOB2:
		return dec_firmware_blob(ev, o, why);
	case MB_EV_EFI_HANDOFF_TABLES:
	case MB_EV_EFI_HANDOFF_TABLES2:
		return dec_handoff_tables(log, ev, o, why);
	case MB_EV_EFI_ACTION:
	case MB_EV_ACTION:
		return action(ev, o, why);
	case MB_EV_SEPARATOR:
		return separator(ev, o, why);
	case MB_EV_S_CRTM_VERSION:
		return crtm_version(ev, o);
	case MB_EV_POST_CODE:
		return post_code(ev, o);
	case MB_EV_IPL:
		return dec_ipl(ev, o, why);
	case MB_EV_EVENT_TAG:
		return dec_event_tag(ev, o, why);
	case MB_EV_NO_ACTION:
		return dec_no_action(log, ev, o, why);
	case MB_EV_S_CRTM_CONTENTS:
		return string_or_raw(ev, o, "S-CRTM contents");
	case MB_EV_EFI_HCRTM_EVENT:
		return string_or_raw(ev, o, "H-CRTM");
	case MB_EV_OMIT_BOOT_DEVICE_EVENTS:
		return string_or_raw(ev, o, "boot device events omitted");
	case MB_EV_COMPACT_HASH:
		return string_or_raw(ev, o, "compact hash");
	case MB_EV_PLATFORM_CONFIG_FLAGS:
		return string_or_raw(ev, o, "platform configuration flags");
	case MB_EV_CPU_MICROCODE:
		return string_or_raw(ev, o, "CPU microcode");
	case MB_EV_TABLE_OF_DEVICES:
		return string_or_raw(ev, o, "table of devices");
	case MB_EV_NONHOST_CODE:
	case MB_EV_NONHOST_CONFIG:
	case MB_EV_NONHOST_INFO:
	case MB_EV_POST_CODE2:
		return string_or_raw(ev, o, mb_event_type_name(ev->type));
	}
	return 1; /* no decoder: raw */
}

MB_EXPORT int mb_event_decode(const mb_event_log *log, const mb_event *ev, mb_event_decoded *d)
{
	mb_decoded_node *o;
	dec_why why = { .text = "" };
	int rc;

	if (!d)
		return -EINVAL;
	o = dec_begin(d);
	if (!ev)
		return dec_end(d, -EINVAL);
	if (!o)
		return dec_end(d, -ENOMEM);
	rc = dispatch(log, ev, o, &why);
	if (rc == 0 || rc == -ENOMEM)
		return dec_end(d, rc);
	/* The half-built tree goes: the raw form, with the reason, replaces it. */
	o = dec_begin(d);
	if (o)
		raw(o, ev, rc > 0 ? NULL : why.text[0] ? why.text : "malformed data");
	return dec_end(d, 0);
}
