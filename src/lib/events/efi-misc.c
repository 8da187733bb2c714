/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Firmware-side EFI events: UEFI_IMAGE_LOAD_EVENT (TCG PFP §10.4.3.3),
 * UEFI_PLATFORM_FIRMWARE_BLOB(2) (§10.4.3.4/5) and UEFI_HANDOFF_TABLE_POINTERS(2)
 * (§10.4.3.6/7).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode-internal.h"

int efi_image_load_parse(const uint8_t *p, size_t n, efi_image_load *ret, dec_why *why)
{
	byte_reader r;
	uint64_t dp_len;

	memset(ret, 0, sizeof(*ret));
	reader_init(&r, p, n, 0);
	if (read_u64le(&r, &ret->location) < 0 || read_u64le(&r, &ret->length) < 0 ||
	    read_u64le(&r, &ret->link_address) < 0 || read_u64le(&r, &dp_len) < 0)
		return dec_fail(why, "UEFI_IMAGE_LOAD_EVENT: %zu bytes, shorter than its 32-byte header", n);
	if (dp_len > reader_left(&r))
		return dec_fail(why, "UEFI_IMAGE_LOAD_EVENT: LengthOfDevicePath %" PRIu64 " overruns the event (%zu bytes left)",
				dp_len, reader_left(&r));
	if (read_bytes(&r, (size_t) dp_len, &ret->device_path) < 0)
		return dec_fail(why, "UEFI_IMAGE_LOAD_EVENT: truncated device path");
	ret->device_path_len = (size_t) dp_len;
	ret->trailing = reader_left(&r);
	return 0;
}

int dec_efi_image_load(const mb_event *ev, mb_decoded_node *o, dec_why *why)
{
	efi_image_load il;
	char *path = NULL;
	int rc;

	if ((rc = efi_image_load_parse(ev->data, ev->data_size, &il, why)) < 0)
		return rc;
	rc = devpath_to_text(il.device_path, il.device_path_len, &path, why);
	if (rc < 0)
		return rc;
	dec_set_kind(o, "efi_image_load");
	dec_add_addr(o, "image_location", il.location);
	dec_add_u64(o, "image_length", il.length);
	dec_add_addr(o, "link_time_address", il.link_address);
	dec_add_u64(o, "device_path_length", il.device_path_len);
	dec_add_str(o, "device_path", path);
	if (il.trailing > 0)
		dec_add_u64(o, "trailing_bytes", il.trailing);
	if (path[0])
		dec_set_desc(o, "%s", path);
	else
		dec_set_desc(o, "image at 0x%" PRIx64 ", %" PRIu64 " bytes (no device path)", il.location, il.length);
	free(path);
	return 0;
}

/* A u8-length-prefixed description (BLOB2, TABLES2): printable or hex. */
static int short_description(byte_reader *r, mb_decoded_node *o, const char *key, char *out, size_t out_size, dec_why *why)
{
	uint8_t n;
	const uint8_t *p;
	size_t len, i;

	if (read_u8(r, &n) < 0 || read_bytes(r, n, &p) < 0)
		return dec_fail(why, "description size overruns the event");
	len = strip_nuls(p, n);
	if (looks_text(p, n)) {
		dec_add_strn(o, key, (const char *) p, len);
		for (i = 0; i < len && i + 1 < out_size; i++)
			out[i] = (char) p[i];
		out[i] = 0;
	} else {
		dec_add_hex(o, "description_hex", p, n);
		snprintf(out, out_size, "(%u bytes of binary description)", n);
	}
	return 0;
}

int dec_firmware_blob(const mb_event *ev, mb_decoded_node *o, dec_why *why)
{
	byte_reader r;
	uint64_t base, len;
	char desc[256] = "";
	int rc;

	reader_init(&r, ev->data, ev->data_size, 0);
	if (ev->type == MB_EV_EFI_PLATFORM_FIRMWARE_BLOB2) {
		rc = short_description(&r, o, "blob_description", desc, sizeof(desc), why);
		if (rc < 0)
			return dec_fail(why, "UEFI_PLATFORM_FIRMWARE_BLOB2: BlobDescriptionSize overruns the event");
	}
	if (read_u64le(&r, &base) < 0 || read_u64le(&r, &len) < 0)
		return dec_fail(why, "UEFI_PLATFORM_FIRMWARE_BLOB: truncated (%u bytes)", ev->data_size);
	if (reader_left(&r) > 0)
		return dec_fail(why, "UEFI_PLATFORM_FIRMWARE_BLOB: %zu bytes after BlobLength", reader_left(&r));
	dec_set_kind(o, "firmware_blob");
	dec_add_addr(o, "blob_base", base);
	dec_add_u64(o, "blob_length", len);
	if (desc[0])
		dec_set_desc(o, "%s: %" PRIu64 " bytes at 0x%" PRIx64, desc, len, base);
	else
		dec_set_desc(o, "firmware blob: %" PRIu64 " bytes at 0x%" PRIx64, len, base);
	return 0;
}

/* UEFI_HANDOFF_TABLE_POINTERS(2): [u8 size, description,] u64 NumberOfTables,
 * EFI_CONFIGURATION_TABLE { EFI_GUID VendorGuid; VOID *VendorTable; }[]. */
int dec_handoff_tables(const mb_event_log *log, const mb_event *ev, mb_decoded_node *o, dec_why *why)
{
	const mb_spec_id *sid = log ? mb_event_log_spec_id(log) : NULL;
	byte_reader r;
	uint64_t n, i;
	size_t ptr_size = 8;
	char desc[256] = "", names[200] = "";
	size_t nl = 0;
	mb_decoded_node *tables;
	int rc;

	reader_init(&r, ev->data, ev->data_size, 0);
	if (ev->type == MB_EV_EFI_HANDOFF_TABLES2) {
		rc = short_description(&r, o, "table_description", desc, sizeof(desc), why);
		if (rc < 0)
			return dec_fail(why, "UEFI_HANDOFF_TABLE_POINTERS2: TableDescriptionSize overruns the event");
	}
	if (read_u64le(&r, &n) < 0)
		return dec_fail(why, "UEFI_HANDOFF_TABLE_POINTERS: no NumberOfTables");
	/* VendorTable is a UINTN: 4 bytes when the Spec ID says uintnSize 1 (32-bit firmware). */
	if ((sid && sid->uintn_size == 1) || (n > 0 && reader_left(&r) == n * 20))
		ptr_size = 4;
	if (n > reader_left(&r) / (16 + ptr_size))
		return dec_fail(why, "UEFI_HANDOFF_TABLE_POINTERS: NumberOfTables %" PRIu64 " overruns the event", n);
	tables = dec_new_array(o);
	if (!tables)
		return -ENOMEM;
	dec_set_kind(o, "handoff_tables");
	dec_add_u64(o, "number_of_tables", n);
	dec_add(o, "tables", tables);
	for (i = 0; i < n; i++) {
		const uint8_t *g;
		uint64_t ptr;
		uint32_t p32;
		mb_decoded_node *t;
		const char *gname;

		if (read_bytes(&r, 16, &g) < 0)
			return dec_fail(why, "UEFI_HANDOFF_TABLE_POINTERS: truncated table %" PRIu64, i);
		if (ptr_size == 4) {
			if (read_u32le(&r, &p32) < 0)
				return dec_fail(why, "UEFI_HANDOFF_TABLE_POINTERS: truncated table %" PRIu64, i);
			ptr = p32;
		} else if (read_u64le(&r, &ptr) < 0) {
			return dec_fail(why, "UEFI_HANDOFF_TABLE_POINTERS: truncated table %" PRIu64, i);
		}
		if (i >= MB_DEC_MAX_LIST_ITEMS)
			continue;
		t = dec_new_object(o);
		if (!t)
			return -ENOMEM;
		dec_append(tables, t);
		dec_add_guid(t, "vendor_guid", g);
		gname = guid_name(g);
		if (gname)
			dec_add_str(t, "name", gname);
		dec_add_addr(t, "vendor_table", ptr);
		if (nl + 40 < sizeof(names)) {
			char gt[MB_GUID_STR];

			nl += (size_t) snprintf(names + nl, sizeof(names) - nl, "%s%s at 0x%" PRIx64, i ? ", " : "",
						gname ? gname : guid_format(g, gt), ptr);
		}
	}
	if (reader_left(&r) > 0)
		dec_add_u64(o, "trailing_bytes", reader_left(&r));
	dec_set_desc(o, "%s%s%" PRIu64 " table%s: %s", desc, desc[0] ? ": " : "", n, n == 1 ? "" : "s", names);
	return 0;
}
