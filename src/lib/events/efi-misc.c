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

/* UEFI_IMAGE_LOAD_EVENT: u64 ImageLocationInMemory, ImageLengthInMemory,
 * ImageLinkTimeAddress, LengthOfDevicePath; DevicePath[]. */
int mb_dec_efi_image_load(const mb_event *ev, mb_decoded_node *o, mb_dec_why *why)
{
	mb_reader r;
	uint64_t loc, len, link, dp_len;
	const uint8_t *dp;
	char *path = NULL;
	int rc;

	mb_reader_init(&r, ev->data, ev->data_size, 0);
	if (mb_read_u64le(&r, &loc) < 0 || mb_read_u64le(&r, &len) < 0 || mb_read_u64le(&r, &link) < 0 ||
	    mb_read_u64le(&r, &dp_len) < 0)
		return mb_dec_fail(why, "UEFI_IMAGE_LOAD_EVENT: %u bytes, shorter than its 32-byte header", ev->data_size);
	if (dp_len > mb_reader_left(&r))
		return mb_dec_fail(why, "UEFI_IMAGE_LOAD_EVENT: LengthOfDevicePath %" PRIu64 " overruns the event (%zu bytes left)",
				   dp_len, mb_reader_left(&r));
	if (mb_read_bytes(&r, (size_t) dp_len, &dp) < 0)
		return mb_dec_fail(why, "UEFI_IMAGE_LOAD_EVENT: truncated device path");
	rc = mb_devpath_to_text(dp, (size_t) dp_len, &path, why);
	if (rc < 0)
		return rc;
	mb_dec_set_kind(o, "efi_image_load");
	mb_dec_add_addr(o, "image_location", loc);
	mb_dec_add_u64(o, "image_length", len);
	mb_dec_add_addr(o, "link_time_address", link);
	mb_dec_add_u64(o, "device_path_length", dp_len);
	mb_dec_add_str(o, "device_path", path);
	if (mb_reader_left(&r) > 0)
		mb_dec_add_u64(o, "trailing_bytes", mb_reader_left(&r));
	if (path[0])
		mb_dec_set_desc(o, "%s", path);
	else
		mb_dec_set_desc(o, "image at 0x%" PRIx64 ", %" PRIu64 " bytes (no device path)", loc, len);
	free(path);
	return 0;
}

/* A u8-length-prefixed description (BLOB2, TABLES2): printable or hex. */
static int short_description(mb_reader *r, mb_decoded_node *o, const char *key, char *out, size_t out_size, mb_dec_why *why)
{
	uint8_t n;
	const uint8_t *p;
	size_t len, i;

	if (mb_read_u8(r, &n) < 0 || mb_read_bytes(r, n, &p) < 0)
		return mb_dec_fail(why, "description size overruns the event");
	len = mb_strip_nuls(p, n);
	if (mb_looks_text(p, n)) {
		mb_dec_add_strn(o, key, (const char *) p, len);
		for (i = 0; i < len && i + 1 < out_size; i++)
			out[i] = (char) p[i];
		out[i] = 0;
	} else {
		mb_dec_add_hex(o, "description_hex", p, n);
		snprintf(out, out_size, "(%u bytes of binary description)", n);
	}
	return 0;
}

int mb_dec_firmware_blob(const mb_event *ev, mb_decoded_node *o, mb_dec_why *why)
{
	mb_reader r;
	uint64_t base, len;
	char desc[256] = "";
	int rc;

	mb_reader_init(&r, ev->data, ev->data_size, 0);
	if (ev->type == MB_EV_EFI_PLATFORM_FIRMWARE_BLOB2) {
		rc = short_description(&r, o, "blob_description", desc, sizeof(desc), why);
		if (rc < 0)
			return mb_dec_fail(why, "UEFI_PLATFORM_FIRMWARE_BLOB2: BlobDescriptionSize overruns the event");
	}
	if (mb_read_u64le(&r, &base) < 0 || mb_read_u64le(&r, &len) < 0)
		return mb_dec_fail(why, "UEFI_PLATFORM_FIRMWARE_BLOB: truncated (%u bytes)", ev->data_size);
	if (mb_reader_left(&r) > 0)
		return mb_dec_fail(why, "UEFI_PLATFORM_FIRMWARE_BLOB: %zu bytes after BlobLength", mb_reader_left(&r));
	mb_dec_set_kind(o, "firmware_blob");
	mb_dec_add_addr(o, "blob_base", base);
	mb_dec_add_u64(o, "blob_length", len);
	if (desc[0])
		mb_dec_set_desc(o, "%s: %" PRIu64 " bytes at 0x%" PRIx64, desc, len, base);
	else
		mb_dec_set_desc(o, "firmware blob: %" PRIu64 " bytes at 0x%" PRIx64, len, base);
	return 0;
}

/* UEFI_HANDOFF_TABLE_POINTERS(2): [u8 size, description,] u64 NumberOfTables,
 * EFI_CONFIGURATION_TABLE { EFI_GUID VendorGuid; VOID *VendorTable; }[]. */
int mb_dec_handoff_tables(const mb_event_log *log, const mb_event *ev, mb_decoded_node *o, mb_dec_why *why)
{
	const mb_spec_id *sid = log ? mb_event_log_spec_id(log) : NULL;
	mb_reader r;
	uint64_t n, i;
	size_t ptr_size = 8;
	char desc[256] = "", names[200] = "";
	size_t nl = 0;
	mb_decoded_node *tables;
	int rc;

	mb_reader_init(&r, ev->data, ev->data_size, 0);
	if (ev->type == MB_EV_EFI_HANDOFF_TABLES2) {
		rc = short_description(&r, o, "table_description", desc, sizeof(desc), why);
		if (rc < 0)
			return mb_dec_fail(why, "UEFI_HANDOFF_TABLE_POINTERS2: TableDescriptionSize overruns the event");
	}
	if (mb_read_u64le(&r, &n) < 0)
		return mb_dec_fail(why, "UEFI_HANDOFF_TABLE_POINTERS: no NumberOfTables");
	/* VendorTable is a UINTN: 4 bytes when the Spec ID says uintnSize 1 (32-bit firmware). */
	if ((sid && sid->uintn_size == 1) || (n > 0 && mb_reader_left(&r) == n * 20))
		ptr_size = 4;
	if (n > mb_reader_left(&r) / (16 + ptr_size))
		return mb_dec_fail(why, "UEFI_HANDOFF_TABLE_POINTERS: NumberOfTables %" PRIu64 " overruns the event", n);
	tables = mb_dec_new_array(o);
	if (!tables)
		return -ENOMEM;
	mb_dec_set_kind(o, "handoff_tables");
	mb_dec_add_u64(o, "number_of_tables", n);
	mb_dec_add(o, "tables", tables);
	for (i = 0; i < n; i++) {
		const uint8_t *g;
		uint64_t ptr;
		uint32_t p32;
		mb_decoded_node *t;
		const char *gname;

		if (mb_read_bytes(&r, 16, &g) < 0)
			return mb_dec_fail(why, "UEFI_HANDOFF_TABLE_POINTERS: truncated table %" PRIu64, i);
		if (ptr_size == 4) {
			if (mb_read_u32le(&r, &p32) < 0)
				return mb_dec_fail(why, "UEFI_HANDOFF_TABLE_POINTERS: truncated table %" PRIu64, i);
			ptr = p32;
		} else if (mb_read_u64le(&r, &ptr) < 0) {
			return mb_dec_fail(why, "UEFI_HANDOFF_TABLE_POINTERS: truncated table %" PRIu64, i);
		}
		if (i >= MB_DEC_MAX_LIST_ITEMS)
			continue;
		t = mb_dec_new_object(o);
		if (!t)
			return -ENOMEM;
		mb_dec_append(tables, t);
		mb_dec_add_guid(t, "vendor_guid", g);
		gname = mb_guid_name(g);
		if (gname)
			mb_dec_add_str(t, "name", gname);
		mb_dec_add_addr(t, "vendor_table", ptr);
		if (nl + 40 < sizeof(names)) {
			char gt[MB_GUID_STR];

			nl += (size_t) snprintf(names + nl, sizeof(names) - nl, "%s%s at 0x%" PRIx64, i ? ", " : "",
						gname ? gname : mb_guid_format(g, gt), ptr);
		}
	}
	if (mb_reader_left(&r) > 0)
		mb_dec_add_u64(o, "trailing_bytes", mb_reader_left(&r));
	mb_dec_set_desc(o, "%s%s%" PRIu64 " table%s: %s", desc, desc[0] ? ": " : "", n, n == 1 ? "" : "s", names);
	return 0;
}
