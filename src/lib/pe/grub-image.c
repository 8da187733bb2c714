/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a GRUB EFI core image (grub-mkimage, the signed images distributions ship) runs before
 * any file: its "mods" section holds a module info header (u32 magic "mimg", u32 padding, u64
 * offset of the first module from the header, u64 size of the whole area) and modules (u32
 * type, u32 size including those 8 bytes). The built-in config (-c), the prefix (-p) and the
 * memdisk (-m) decide which commands GRUB measures into PCR 8 and which config file it reads
 * (PCR 9) before the files of /boot: two images with the same three run the same way.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <mboot/pe.h>
#include "pe-internal.h"

#include "shared/fail.h"
#include "shared/reader.h"

#define GRUB_MODULE_MAGIC 0x676d696du /* "mimg" little-endian */

enum { OBJ_TYPE_ELF, OBJ_TYPE_MEMDISK, OBJ_TYPE_CONFIG, OBJ_TYPE_PREFIX };

MB_EXPORT int mb_grub_image_parse(const mb_pe_info *pe, const void *data, size_t size, mb_grub_image *ret,
				  mb_error *err)
{
	const mb_pe_section *mods = NULL;
	byte_reader whole, sec, r;
	uint32_t magic, padding;
	uint64_t offset, area;

	memset(ret, 0, sizeof(*ret));
	for (size_t i = 0; i < pe->n_sections; i++)
		if (strcmp(pe->sections[i].name, "mods") == 0)
			mods = &pe->sections[i];
	if (!mods)
		return set_error(err, -ENOENT, "no \"mods\" section: not a GRUB core image");
	reader_init(&whole, data, size, 0);
	if (read_skip(&whole, mods->raw_offset) < 0 || read_sub(&whole, mods->raw_size, &sec) < 0)
		return set_error_at(err, -EBADMSG, mods->raw_offset, "the mods section is outside the file");
	r = sec;
	if (read_u32le(&r, &magic) < 0 || read_u32le(&r, &padding) < 0 || read_u64le(&r, &offset) < 0 ||
	    read_u64le(&r, &area) < 0)
		return set_error_at(err, -EBADMSG, reader_offset(&r), "the module info header is truncated");
	if (magic != GRUB_MODULE_MAGIC)
		return set_error_at(err, -EBADMSG, mods->raw_offset, "the mods section does not start with \"mimg\"");
	/* offset counts from the header's start, 24 bytes back; area covers header and modules */
	if (offset < 24 || area < offset || area > mods->raw_size)
		return set_error_at(err, -EBADMSG, mods->raw_offset + 8,
				    "module info: offset %" PRIu64 " and size %" PRIu64 " do not fit the %u-byte section",
				    offset, area, mods->raw_size);
	/* the area, from the section's start: the header again, then the modules */
	if (read_sub(&sec, (size_t) area, &r) < 0 || read_skip(&r, (size_t) offset) < 0)
		return set_error_at(err, -EBADMSG, mods->raw_offset, "module info offset past the area");
	while (reader_left(&r) > 0) {
		uint64_t at = reader_offset(&r);
		uint32_t type, msize;
		const uint8_t *body;

		if (read_u32le(&r, &type) < 0 || read_u32le(&r, &msize) < 0)
			return set_error_at(err, -EBADMSG, at, "module header truncated");
		if (msize < 8 || read_bytes(&r, msize - 8, &body) < 0)
			return set_error_at(err, -EBADMSG, at + 4, "module of %u bytes does not fit the area", msize);
		ret->n_modules++;
		const uint8_t **field = NULL;
		size_t *field_size = NULL;

		switch (type) {
		case OBJ_TYPE_CONFIG: field = &ret->config, field_size = &ret->config_size; break;
		case OBJ_TYPE_PREFIX: field = &ret->prefix, field_size = &ret->prefix_size; break;
		case OBJ_TYPE_MEMDISK: field = &ret->memdisk, field_size = &ret->memdisk_size; break;
		default: continue;
		}
		if (*field)
			return set_error_at(err, -EBADMSG, at, "a second module of type %u", type);
		*field = body;
		*field_size = msize - 8;
	}
	/* Text modules are NUL-padded to the module alignment: compare them up to the NUL. */
	if (ret->config)
		ret->config_size = strnlen((const char *) ret->config, ret->config_size);
	if (ret->prefix)
		ret->prefix_size = strnlen((const char *) ret->prefix, ret->prefix_size);
	return 0;
}

static bool same_bytes(const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
	return na == nb && (na == 0 || memcmp(a, b, na) == 0);
}

MB_EXPORT const char *mb_grub_image_difference(const mb_grub_image *a, const mb_grub_image *b)
{
	if (!same_bytes(a->prefix, a->prefix_size, b->prefix, b->prefix_size))
		return "prefix";
	if (!same_bytes(a->config, a->config_size, b->config, b->config_size))
		return "built-in config";
	if (!same_bytes(a->memdisk, a->memdisk_size, b->memdisk, b->memdisk_size))
		return "memdisk";
	return NULL;
}
