/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PCR 11 of a unified kernel image, as systemd-stub 252 measures it (src/boot/efi/stub.c at
 * v252): for each section of its list the image has, in the list's order, an EV_IPL of the
 * name with its NUL and an EV_IPL of the section's bytes in the loaded image. The stub finds
 * a section by comparing the 8-byte name of every section table entry, so a later entry of
 * the same name wins, and one with VirtualSize 0 counts as absent. systemd-measure calculate
 * (src/boot/measure.c) computes the same value from the section files.
 */
#include <errno.h>
#include <string.h>

#include <mboot/pe.h>
#include "pe-internal.h"

#include "shared/fail.h"
#include "shared/reader.h"

#define SECTION_HEADER_SIZE 40

/* systemd 252's unified_sections[] without .pcrsig, which the stub does not measure. */
static const char *const stub_order[MB_UKI_MAX_SECTIONS] = {
	".linux", ".osrel", ".cmdline", ".initrd", ".splash", ".dtb", ".pcrpkey",
};

/* The bytes a section occupies once loaded: VirtualSize, or the raw size when that is 0 (EDK2). */
static uint64_t memory_size(const mb_pe_section *s)
{
	return s->virtual_size ? s->virtual_size : s->raw_size;
}

static bool overlap(const mb_pe_section *a, const mb_pe_section *b)
{
	uint64_t a_end = (uint64_t) a->virtual_address + memory_size(a);
	uint64_t b_end = (uint64_t) b->virtual_address + memory_size(b);

	return memory_size(a) && memory_size(b) && a->virtual_address < b_end && b->virtual_address < a_end;
}

MB_EXPORT int mb_uki_sections(const mb_pe_info *pe, mb_uki_section *out, size_t *ret_n, mb_error *err)
{
	size_t n = 0;

	*ret_n = 0;
	for (size_t k = 0; k < MB_UKI_MAX_SECTIONS; k++) {
		const mb_pe_section *s = NULL;
		size_t at = 0;

		for (size_t i = 0; i < pe->n_sections; i++)
			if (strcmp(pe->sections[i].name, stub_order[k]) == 0) {
				s = &pe->sections[i];
				at = i;
			}
		if (!s || !s->virtual_size)
			continue; /* the stub skips a section it did not find, or found empty */
		uint64_t hdr = pe->section_table_offset + (uint64_t) at * SECTION_HEADER_SIZE;
		/* A larger VirtualSize is zero-filled by the loader and measured so; refuse rather
		 * than compute bytes that are not in the file (ukify and objcopy never do this). */
		if (s->virtual_size > s->raw_size)
			return set_error_at(err, -EBADMSG, hdr + 8,
					    "section %s: VirtualSize %u is larger than its %u bytes in the file", s->name,
					    s->virtual_size, s->raw_size);
		for (size_t j = 0; j < pe->n_sections; j++)
			if (j != at && overlap(s, &pe->sections[j]))
				return set_error_at(err, -EBADMSG, hdr + 12,
						    "section %s overlaps section %zu (%s) in memory: the bytes measured "
						    "are not the file's", s->name, j, pe->sections[j].name);
		out[n].name = stub_order[k];
		out[n].table_index = (uint32_t) at;
		out[n].raw_offset = s->raw_offset;
		out[n].size = s->virtual_size;
		n++;
	}
	if (!n || strcmp(out[0].name, ".linux") != 0)
		return set_error_at(err, -EBADMSG, pe->section_table_offset,
				    "no .linux section: not a unified kernel image");
	*ret_n = n;
	return 0;
}

MB_EXPORT int mb_uki_section_digests(const mb_uki_section *s, const void *data, size_t size, uint16_t alg,
				     uint8_t *name_digest, uint8_t *content_digest)
{
	byte_reader whole, sec;
	const uint8_t *p;
	int rc;

	reader_init(&whole, data, size, 0);
	/* mb_uki_sections checked this against the parsed image; this keeps a forged one in bounds */
	if (read_skip(&whole, s->raw_offset) < 0 || read_sub(&whole, s->size, &sec) < 0 ||
	    read_bytes(&sec, s->size, &p) < 0)
		return -EINVAL;
	rc = mb_digest(alg, s->name, strlen(s->name) + 1, name_digest);
	if (rc >= 0)
		rc = mb_digest(alg, p, s->size, content_digest);
	return rc;
}

/* pcr = H(pcr || digest), as TPM2_PCR_Extend does. */
static int extend(uint16_t alg, size_t dsize, uint8_t *pcr, const uint8_t *digest)
{
	uint8_t buf[2 * MB_DIGEST_MAX];

	memcpy(buf, pcr, dsize);
	memcpy(buf + dsize, digest, dsize);
	return mb_digest(alg, buf, 2 * dsize, pcr);
}

MB_EXPORT int mb_uki_pcr11(const mb_pe_info *pe, const void *data, size_t size, const uint16_t *algs,
			   size_t n_algs, uint8_t (*out)[MB_DIGEST_MAX], mb_error *err)
{
	mb_uki_section secs[MB_UKI_MAX_SECTIONS];
	size_t n;
	int rc = mb_uki_sections(pe, secs, &n, err);

	if (rc < 0)
		return rc;
	for (size_t a = 0; a < n_algs; a++) {
		const mb_digest_info *di = mb_digest_by_alg(algs[a]);

		if (!di)
			return set_error(err, -EINVAL, "unknown algorithm 0x%04x", algs[a]);
		memset(out[a], 0, MB_DIGEST_MAX);
		for (size_t i = 0; i < n; i++) {
			uint8_t name_d[MB_DIGEST_MAX], content_d[MB_DIGEST_MAX];

			rc = mb_uki_section_digests(&secs[i], data, size, algs[a], name_d, content_d);
			if (rc >= 0)
				rc = extend(algs[a], di->size, out[a], name_d);
			if (rc >= 0)
				rc = extend(algs[a], di->size, out[a], content_d);
			if (rc < 0)
				return set_error(err, rc, "hashing section %s: %s", secs[i].name, mb_strerror(rc));
		}
	}
	return 0;
}
