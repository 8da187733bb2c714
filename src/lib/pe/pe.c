/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PE/COFF Authenticode digest.
 *
 * Structures: Microsoft "PE Format" (the PE/COFF specification): MS-DOS stub
 * (e_lfanew at 0x3c), signature "PE\0\0", COFF file header (20 bytes),
 * optional header (magic 0x10b PE32 / 0x20b PE32+), section table (40-byte
 * entries), attribute certificate table (data directory 4, a FILE offset).
 * Hashing: "Windows Authenticode Portable Executable Signature Format",
 * "Calculating the PE Image Hash", steps 1-15, as EDK2's Tcg2Dxe
 * (MeasureBootPeCoff.c) implements them for EV_EFI_BOOT_SERVICES_APPLICATION:
 * the extra data after the sections starts at SUM_OF_BYTES_HASHED (headers
 * plus every section's SizeOfRawData) and ends Certificate-Table-size bytes
 * before the end of the file. docs/pe.md lists where other tools differ.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/pe.h>
#include "pe-internal.h"

#include "shared/fail.h"
#include "shared/reader.h"

/* Offsets within the optional header (PE Format, "Optional Header"). */
#define OPT_MAGIC            0
#define OPT_SIZE_OF_HEADERS  60
#define OPT_CHECKSUM         64
#define OPT_SUBSYSTEM        68
#define OPT32_NUM_RVA        92
#define OPT32_DATA_DIRS      96
#define OPT64_NUM_RVA        108
#define OPT64_DATA_DIRS      112
#define DIR_SECURITY         4 /* IMAGE_DIRECTORY_ENTRY_SECURITY: the Certificate Table */

#define COFF_HEADER_SIZE     20
#define SECTION_HEADER_SIZE  40
#define WIN_CERT_HEADER_SIZE 8

/*
 * A reader over [off, off+len) of the image, or -EBADMSG when that range is
 * not inside it. All random access to the image goes through here.
 */
static int reader_at(const uint8_t *data, size_t size, uint64_t off, uint64_t len, byte_reader *r)
{
	byte_reader whole, child;

	reader_init(&whole, data, size, 0);
	if (off > size || len > size - off)
		return -EBADMSG;
	if (read_skip(&whole, (size_t) off) < 0 || read_sub(&whole, (size_t) len, &child) < 0)
		return -EBADMSG;
	*r = child;
	return 0;
}

static int u16_at(const uint8_t *data, size_t size, uint64_t off, uint16_t *v)
{
	byte_reader r;

	if (reader_at(data, size, off, 2, &r) < 0)
		return -EBADMSG;
	return read_u16le(&r, v);
}

static int u32_at(const uint8_t *data, size_t size, uint64_t off, uint32_t *v)
{
	byte_reader r;

	if (reader_at(data, size, off, 4, &r) < 0)
		return -EBADMSG;
	return read_u32le(&r, v);
}

static void add_range(mb_pe_info *pe, uint64_t off, uint64_t size, bool zero)
{
	mb_pe_range *r;

	if (!size)
		return;
	/* Cannot overflow: 3 header ranges + MB_PE_MAX_SECTIONS + extra + padding. */
	r = &pe->ranges[pe->n_ranges++];
	r->offset = off;
	r->size = size;
	r->zero_fill = zero;
}

static int parse_section(const uint8_t *data, size_t size, uint64_t off, mb_pe_section *s, mb_error *err)
{
	byte_reader r;
	const uint8_t *name;

	if (reader_at(data, size, off, SECTION_HEADER_SIZE, &r) < 0 ||
	    read_bytes(&r, 8, &name) < 0 ||
	    read_u32le(&r, &s->virtual_size) < 0 ||
	    read_u32le(&r, &s->virtual_address) < 0 ||
	    read_u32le(&r, &s->raw_size) < 0 ||
	    read_u32le(&r, &s->raw_offset) < 0 ||
	    read_skip(&r, 12) < 0 ||
	    read_u32le(&r, &s->characteristics) < 0)
		return set_error_at(err, -EBADMSG, off, "section header truncated");
	memcpy(s->name, name, 8);
	s->name[8] = '\0';
	/* Names are NUL-padded; keep them printable for messages and JSON. */
	for (size_t i = 0; i < 8 && s->name[i]; i++)
		if ((unsigned char) s->name[i] < 0x20 || (unsigned char) s->name[i] > 0x7e)
			s->name[i] = '?';
	return 0;
}

/* The WIN_CERTIFICATE entries of the attribute certificate table (PE Format, "The
 * Attribute Certificate Table"): quadword-aligned, each dwLength bytes long. They do
 * not change the digest; a malformed entry only ends the list. */
static void list_certs(const uint8_t *data, size_t size, mb_pe_info *pe)
{
	uint64_t off = pe->s.cert_offset, end = (uint64_t) pe->s.cert_offset + pe->s.cert_size;

	while (pe->n_certs < MB_PE_MAX_CERTS && end - off >= WIN_CERT_HEADER_SIZE) {
		mb_pe_cert *c = &pe->certs[pe->n_certs];
		byte_reader r;

		if (reader_at(data, size, off, WIN_CERT_HEADER_SIZE, &r) < 0 ||
		    read_u32le(&r, &c->length) < 0 || read_u16le(&r, &c->revision) < 0 ||
		    read_u16le(&r, &c->type) < 0)
			return;
		if (c->length < WIN_CERT_HEADER_SIZE || c->length > end - off)
			return;
		c->offset = off;
		pe->n_certs++;
		off += ((uint64_t) c->length + 7) & ~(uint64_t) 7;
		if (off >= end)
			return;
	}
}

static void note_section_kinds(mb_pe_info *pe)
{
	for (size_t i = 0; i < pe->n_sections; i++) {
		const char *n = pe->sections[i].name;

		if (strcmp(n, ".linux") == 0)
			pe->s.uki = true;
		else if (strcmp(n, ".sbat") == 0)
			pe->s.has_sbat = true;
		else if (strcmp(n, ".osrel") == 0)
			pe->s.has_osrel = true;
		else if (strcmp(n, ".cmdline") == 0)
			pe->s.has_cmdline = true;
		else if (strcmp(n, ".initrd") == 0)
			pe->s.has_initrd = true;
	}
}

static int parse_into(const void *vdata, size_t size, unsigned flags, mb_pe_info *pe, mb_error *err)
{
	const uint8_t *data = vdata;
	uint64_t pe_off = 0, opt_off, sec_off, sec_end, dd_off, checksum_off, sum, pos;
	uint16_t magic16, n_sections, opt_size, magic;
	uint32_t sig, num_rva, dd_base;
	size_t order[MB_PE_MAX_SECTIONS];
	size_t i, j;

	memset(pe, 0, sizeof(*pe));
	pe->s.file_size = size;
	if (size > MB_PE_MAX_FILE)
		return set_error(err, -E2BIG, "image of %zu bytes is over the %u MiB limit", size,
			       MB_PE_MAX_FILE >> 20);

	/* MS-DOS header: "MZ", e_lfanew at 0x3c. EDK2 also accepts an image that
	 * starts with the PE signature itself (no DOS stub); so do we. */
	if (u16_at(data, size, 0, &magic16) < 0)
		return set_error_at(err, -EBADMSG, 0, "too short for a PE image (%zu bytes)", size);
	if (magic16 == 0x5a4d) { /* "MZ" */
		uint32_t lfanew;

		if (u32_at(data, size, 0x3c, &lfanew) < 0)
			return set_error_at(err, -EBADMSG, 0x3c, "MS-DOS header truncated before e_lfanew");
		pe_off = lfanew;
	}
	if (u32_at(data, size, pe_off, &sig) < 0) {
		if (magic16 == 0x5a4d)
			return set_error_at(err, -EBADMSG, 0x3c, "e_lfanew 0x%llx points past the end of the file (%zu bytes)",
					  (unsigned long long) pe_off, size);
		return set_error_at(err, -EBADMSG, 0, "not a PE image: no MZ or PE signature (file of %zu bytes)", size);
	}
	if (sig != 0x00004550) /* "PE\0\0" */
		return set_error_at(err, -EBADMSG, pe_off, magic16 == 0x5a4d ?
				  "no PE signature at e_lfanew" : "not a PE image: no MZ or PE signature");
	pe->s.pe_offset = pe_off;

	/* COFF file header. */
	if (u16_at(data, size, pe_off + 4, &pe->s.machine) < 0 ||
	    u16_at(data, size, pe_off + 6, &n_sections) < 0 ||
	    u16_at(data, size, pe_off + 20, &opt_size) < 0 ||
	    u16_at(data, size, pe_off + 22, &pe->s.characteristics) < 0)
		return set_error_at(err, -EBADMSG, pe_off + 4, "COFF file header truncated");
	if (n_sections > MB_PE_MAX_SECTIONS)
		return set_error_at(err, -E2BIG, pe_off + 6, "%u sections, over the limit of %d",
				  n_sections, MB_PE_MAX_SECTIONS);

	/* Optional header: where CheckSum, the data directories and their count are
	 * depends on the magic. EDK2 treats an IA-64 image with the PE32 magic as PE32+
	 * (old ELILO); that machine is long gone, so we follow the magic. */
	opt_off = pe_off + 4 + COFF_HEADER_SIZE;
	if (u16_at(data, size, opt_off + OPT_MAGIC, &magic) < 0)
		return set_error_at(err, -EBADMSG, opt_off, "optional header truncated");
	if (magic == 0x10b) {
		pe->s.pe32_plus = false;
		dd_base = OPT32_DATA_DIRS;
	} else if (magic == 0x20b) {
		pe->s.pe32_plus = true;
		dd_base = OPT64_DATA_DIRS;
	} else {
		return set_error_at(err, -EBADMSG, opt_off, "optional header magic 0x%04x is neither PE32 (0x10b) nor PE32+ (0x20b)",
				  magic);
	}
	if (opt_size < dd_base)
		return set_error_at(err, -EBADMSG, pe_off + 20, "SizeOfOptionalHeader %u is too small for a %s header",
				  opt_size, pe->s.pe32_plus ? "PE32+" : "PE32");
	if (reader_at(data, size, opt_off, opt_size, &(byte_reader){ 0 }) < 0)
		return set_error_at(err, -EBADMSG, opt_off, "optional header (%u bytes) runs past the end of the file",
				  opt_size);
	checksum_off = opt_off + OPT_CHECKSUM;
	if (u32_at(data, size, opt_off + OPT_SIZE_OF_HEADERS, &pe->s.size_of_headers) < 0 ||
	    u16_at(data, size, opt_off + OPT_SUBSYSTEM, &pe->s.subsystem) < 0 ||
	    u32_at(data, size, opt_off + dd_base - 4, &num_rva) < 0)
		return set_error_at(err, -EBADMSG, opt_off, "optional header truncated");
	pe->s.number_of_rva_and_sizes = num_rva;
	/* The directories must lie inside the optional header (EDK2's loader rejects
	 * an image whose count does not fit, and so do we). */
	if ((uint64_t) num_rva * 8 > (uint64_t) opt_size - dd_base)
		return set_error_at(err, -EBADMSG, opt_off + dd_base - 4,
				  "NumberOfRvaAndSizes %u does not fit in SizeOfOptionalHeader %u", num_rva, opt_size);
	dd_off = opt_off + dd_base + 8 * DIR_SECURITY;

	/* Section table: right after the optional header, inside SizeOfHeaders (the
	 * headers' hash must cover it, or the section layout is not authenticated). */
	sec_off = opt_off + opt_size;
	sec_end = sec_off + (uint64_t) n_sections * SECTION_HEADER_SIZE;
	if (sec_end > size)
		return set_error_at(err, -EBADMSG, sec_off, "section table (%u entries) runs past the end of the file",
				  n_sections);
	if (pe->s.size_of_headers > size)
		return set_error_at(err, -EBADMSG, opt_off + OPT_SIZE_OF_HEADERS,
				  "SizeOfHeaders %u is beyond the end of the file (%zu bytes)", pe->s.size_of_headers, size);
	if (pe->s.size_of_headers < sec_end)
		return set_error_at(err, -EBADMSG, opt_off + OPT_SIZE_OF_HEADERS,
				  "SizeOfHeaders %u ends before the section table (byte %llu)", pe->s.size_of_headers,
				  (unsigned long long) sec_end);

	pe->n_sections = n_sections;
	pe->section_table_offset = sec_off;
	for (i = 0; i < n_sections; i++) {
		mb_pe_section *s = &pe->sections[i];
		uint64_t hdr = sec_off + (uint64_t) i * SECTION_HEADER_SIZE;
		int rc = parse_section(data, size, hdr, s, err);

		if (rc < 0)
			return rc;
		/* Firmware would read beyond the file buffer here; shim refuses the image
		 * ("Malformed section raw size"); so do we. */
		if (s->raw_size && (uint64_t) s->raw_offset + s->raw_size > size)
			return set_error_at(err, -EBADMSG, hdr + 16,
					  "section %zu (%s): raw data [%u, %llu) beyond the end of the file (%zu bytes)",
					  i, s->name, s->raw_offset, (unsigned long long) s->raw_offset + s->raw_size, size);
	}
	note_section_kinds(pe);

	/* Certificate Table directory entry (absent when NumberOfRvaAndSizes <= 4). */
	if (num_rva > DIR_SECURITY) {
		if (u32_at(data, size, dd_off, &pe->s.cert_offset) < 0 || u32_at(data, size, dd_off + 4, &pe->s.cert_size) < 0)
			return set_error_at(err, -EBADMSG, dd_off, "data directory truncated");
		if (pe->s.cert_size) {
			if ((uint64_t) pe->s.cert_offset + pe->s.cert_size > size)
				return set_error_at(err, -EBADMSG, dd_off,
						  "certificate table [%u, %llu) is outside the file (%zu bytes)",
						  pe->s.cert_offset,
						  (unsigned long long) pe->s.cert_offset + pe->s.cert_size, size);
			pe->s.has_cert_table = true;
			pe->s.cert_at_end = (uint64_t) pe->s.cert_offset + pe->s.cert_size == size;
			list_certs(data, size, pe);
		}
	}

	/* Steps 3-9: the headers without CheckSum and the Certificate Table entry. */
	add_range(pe, 0, checksum_off, false);
	if (num_rva > DIR_SECURITY) {
		add_range(pe, checksum_off + 4, dd_off - (checksum_off + 4), false);
		add_range(pe, dd_off + 8, pe->s.size_of_headers - (dd_off + 8), false);
	} else {
		add_range(pe, checksum_off + 4, pe->s.size_of_headers - (checksum_off + 4), false);
	}

	/* Steps 10-15: sections with raw data, by PointerToRawData; a stable insertion
	 * sort as EDK2's, so equal offsets keep their table order. */
	for (i = 0, j = 0; i < n_sections; i++) {
		size_t k = j++;

		while (k > 0 && pe->sections[i].raw_offset < pe->sections[order[k - 1]].raw_offset) {
			order[k] = order[k - 1];
			k--;
		}
		order[k] = i;
	}
	sum = pe->s.size_of_headers;
	pos = pe->s.size_of_headers;
	for (i = 0; i < n_sections; i++) {
		const mb_pe_section *s = &pe->sections[order[i]];

		if (!s->raw_size)
			continue;
		if (s->raw_offset < pos)
			pe->s.sections_overlap = true;
		add_range(pe, s->raw_offset, s->raw_size, false);
		sum += s->raw_size;
		if ((uint64_t) s->raw_offset + s->raw_size > pos)
			pos = (uint64_t) s->raw_offset + s->raw_size;
	}

	/* Step 16 as firmware does it: data after SUM_OF_BYTES_HASHED up to the file's
	 * end less the certificate table's size. The table's offset is not consulted
	 * (EDK2); an image whose table is not at the end is noted (cert_at_end). */
	if (size > sum) {
		uint64_t cert = pe->s.has_cert_table ? pe->s.cert_size : 0;

		if (size > sum + cert) {
			pe->s.extra_offset = sum;
			pe->s.extra_size = size - cert - sum;
			add_range(pe, pe->s.extra_offset, pe->s.extra_size, false);
		} else if (size < sum + cert) {
			return set_error_at(err, -EBADMSG, dd_off,
					  "certificate table of %u bytes does not fit after the %llu bytes of headers and sections",
					  pe->s.cert_size, (unsigned long long) sum);
		}
	}

	/* Signing tools hash an unsigned image as if padded to 8 bytes, because the
	 * certificate table they append must start 8-aligned. */
	if ((flags & MB_PE_PAD_TO_8) && !pe->s.has_cert_table && size % 8) {
		pe->s.pad_bytes = 8 - size % 8;
		add_range(pe, size, pe->s.pad_bytes, true);
	}
	return 0;
}

MB_EXPORT int mb_pe_parse(const void *data, size_t size, unsigned flags, mb_pe_info **ret, mb_error *err)
{
	mb_pe_info *pe = malloc(sizeof(*pe));
	int rc;

	*ret = NULL;
	if (!pe)
		return set_error(err, -ENOMEM, "out of memory");
	rc = parse_into(data, size, flags, pe, err);
	if (rc < 0) {
		free(pe);
		return rc;
	}
	*ret = pe;
	return 0;
}

MB_EXPORT void mb_pe_info_free(mb_pe_info *pe)
{
	free(pe);
}

MB_EXPORT void mb_pe_info_summary(const mb_pe_info *pe, mb_pe_summary *ret)
{
	*ret = pe->s;
}

MB_EXPORT size_t mb_pe_info_n_sections(const mb_pe_info *pe)
{
	return pe->n_sections;
}

MB_EXPORT const mb_pe_section *mb_pe_info_section(const mb_pe_info *pe, size_t i)
{
	return i < pe->n_sections ? &pe->sections[i] : NULL;
}

MB_EXPORT size_t mb_pe_info_n_certs(const mb_pe_info *pe)
{
	return pe->n_certs;
}

MB_EXPORT const mb_pe_cert *mb_pe_info_cert(const mb_pe_info *pe, size_t i)
{
	return i < pe->n_certs ? &pe->certs[i] : NULL;
}

MB_EXPORT size_t mb_pe_info_n_ranges(const mb_pe_info *pe)
{
	return pe->n_ranges;
}

MB_EXPORT const mb_pe_range *mb_pe_info_range(const mb_pe_info *pe, size_t i)
{
	return i < pe->n_ranges ? &pe->ranges[i] : NULL;
}

MB_EXPORT int mb_pe_hash(const mb_pe_info *pe, const void *vdata, size_t size, uint16_t alg, uint8_t *out)
{
	static const uint8_t zeros[8];
	const uint8_t *data = vdata;
	mb_digest_ctx *ctx = NULL;
	int rc;

	if (pe->s.file_size != size)
		return -EINVAL;
	rc = mb_digest_ctx_new(alg, &ctx);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < pe->n_ranges && rc >= 0; i++) {
		const mb_pe_range *r = &pe->ranges[i];

		if (r->zero_fill) {
			rc = r->size <= sizeof(zeros) ? mb_digest_ctx_update(ctx, zeros, (size_t) r->size) : -EINVAL;
		} else {
			byte_reader rd;
			const uint8_t *p;

			/* mb_pe_parse checked every range; this keeps a forged info from reading out. */
			if (reader_at(data, size, r->offset, r->size, &rd) < 0 ||
			    read_bytes(&rd, (size_t) r->size, &p) < 0)
				rc = -EINVAL;
			else
				rc = mb_digest_ctx_update(ctx, p, (size_t) r->size);
		}
	}
	if (rc >= 0)
		rc = mb_digest_ctx_final(ctx, out);
	mb_digest_ctx_free(ctx);
	return rc;
}

MB_EXPORT const char *mb_pe_machine_name(uint16_t machine)
{
	switch (machine) {
	case MB_PE_MACHINE_I386:
		return "ia32";
	case MB_PE_MACHINE_X64:
		return "x64";
	case MB_PE_MACHINE_ARM:
		return "arm";
	case MB_PE_MACHINE_ARM64:
		return "aa64";
	case MB_PE_MACHINE_RISCV64:
		return "riscv64";
	case MB_PE_MACHINE_LOONGARCH64:
		return "loongarch64";
	case 0x0200:
		return "ia64";
	default:
		return NULL;
	}
}
