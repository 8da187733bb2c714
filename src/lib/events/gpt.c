/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * EV_EFI_GPT_EVENT: UEFI_GPT_DATA (TCG PFP §10.4.3.2): the GPT header
 * (UEFI spec §5.3.2, 92 bytes), u64 NumberOfPartitions, then that many
 * partition entries of the header's SizeOfPartitionEntry (UEFI spec §5.3.3).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "decode-internal.h"

#define GPT_HEADER_SIZE 92
#define GPT_ENTRY_MIN 128

int dec_efi_gpt(const mb_event *ev, mb_decoded_node *o, dec_why *why)
{
	byte_reader r, h;
	const uint8_t *sig, *disk;
	uint32_t revision, header_size, header_crc, reserved, n_entries, entry_size, array_crc;
	uint64_t my_lba, alt_lba, first, last, entries_lba, n_parts, i;
	mb_decoded_node *hdr, *parts;
	char gtext[MB_GUID_STR];

	reader_init(&r, ev->data, ev->data_size, 0);
	if (read_sub(&r, GPT_HEADER_SIZE, &h) < 0)
		return dec_fail(why, "UEFI_GPT_DATA: %u bytes, shorter than the 92-byte GPT header", ev->data_size);
	if (read_bytes(&h, 8, &sig) < 0 || read_u32le(&h, &revision) < 0 || read_u32le(&h, &header_size) < 0 ||
	    read_u32le(&h, &header_crc) < 0 || read_u32le(&h, &reserved) < 0 || read_u64le(&h, &my_lba) < 0 ||
	    read_u64le(&h, &alt_lba) < 0 || read_u64le(&h, &first) < 0 || read_u64le(&h, &last) < 0 ||
	    read_bytes(&h, 16, &disk) < 0 || read_u64le(&h, &entries_lba) < 0 || read_u32le(&h, &n_entries) < 0 ||
	    read_u32le(&h, &entry_size) < 0 || read_u32le(&h, &array_crc) < 0)
		return dec_fail(why, "UEFI_GPT_DATA: truncated header");
	if (memcmp(sig, "EFI PART", 8) != 0)
		return dec_fail(why, "UEFI_GPT_DATA: header signature is not \"EFI PART\"");
	if (read_u64le(&r, &n_parts) < 0)
		return dec_fail(why, "UEFI_GPT_DATA: no NumberOfPartitions");
	if (entry_size < GPT_ENTRY_MIN || entry_size % 8)
		return dec_fail(why, "UEFI_GPT_DATA: SizeOfPartitionEntry %" PRIu32 " invalid", entry_size);
	if (n_parts > reader_left(&r) / entry_size)
		return dec_fail(why, "UEFI_GPT_DATA: %" PRIu64 " partitions of %" PRIu32 " bytes overrun the event (%zu bytes left)",
				   n_parts, entry_size, reader_left(&r));

	hdr = dec_new_object(o);
	parts = dec_new_array(o);
	if (!hdr || !parts) {
		return -ENOMEM;
	}
	dec_set_kind(o, "efi_gpt");
	dec_add(o, "header", hdr);
	dec_add_u64(hdr, "revision", revision);
	dec_add_u64(hdr, "header_size", header_size);
	dec_add_u64(hdr, "header_crc32", header_crc);
	dec_add_u64(hdr, "my_lba", my_lba);
	dec_add_u64(hdr, "alternate_lba", alt_lba);
	dec_add_u64(hdr, "first_usable_lba", first);
	dec_add_u64(hdr, "last_usable_lba", last);
	dec_add_guid(hdr, "disk_guid", disk);
	dec_add_u64(hdr, "partition_entry_lba", entries_lba);
	dec_add_u64(hdr, "number_of_partition_entries", n_entries);
	dec_add_u64(hdr, "size_of_partition_entry", entry_size);
	dec_add_u64(hdr, "partition_entry_array_crc32", array_crc);
	dec_add_guid(o, "disk_guid", disk);
	dec_add_u64(o, "number_of_partitions", n_parts);
	dec_add(o, "partitions", parts);
	for (i = 0; i < n_parts; i++) {
		const uint8_t *type, *uniq, *uname;
		uint64_t start, end, attrs;
		mb_decoded_node *p;
		byte_reader e;
		char *name;

		if (read_sub(&r, entry_size, &e) < 0 || read_bytes(&e, 16, &type) < 0 ||
		    read_bytes(&e, 16, &uniq) < 0 || read_u64le(&e, &start) < 0 || read_u64le(&e, &end) < 0 ||
		    read_u64le(&e, &attrs) < 0 || read_bytes(&e, 72, &uname) < 0)
			return dec_fail(why, "UEFI_GPT_DATA: truncated partition entry %" PRIu64, i);
		if (i >= MB_DEC_MAX_LIST_ITEMS)
			continue;
		p = dec_new_object(o);
		name = utf16le_to_utf8(uname, 72);
		if (!p || !name) {
			free(name);
			return -ENOMEM;
		}
		dec_append(parts, p);
		dec_add_guid(p, "type_guid", type);
		if (guid_name(type))
			dec_add_str(p, "type_name", guid_name(type));
		dec_add_guid(p, "unique_guid", uniq);
		dec_add_u64(p, "starting_lba", start);
		dec_add_u64(p, "ending_lba", end);
		dec_add_u64(p, "attributes", attrs);
		dec_add_str(p, "name", name);
		free(name);
	}
	if (reader_left(&r) > 0)
		dec_add_u64(o, "trailing_bytes", reader_left(&r));
	dec_set_desc(o, "GPT disk %s, %" PRIu64 " partition%s", guid_format(disk, gtext), n_parts,
			n_parts == 1 ? "" : "s");
	return 0;
}
