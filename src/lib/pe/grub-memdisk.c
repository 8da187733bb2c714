/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A GRUB memdisk's files (grub-memdisk.h): FAT12/16 through the boot sector's BIOS parameter
 * block (root directory after the FATs, clusters from 2 after it, 12- or 16-bit FAT entries by
 * the cluster count, as Microsoft's FAT specification decides the type), or ustar/v7 tar
 * (512-byte headers, octal sizes). Nothing is trusted: every table, cluster and size is
 * checked against the image, chains are cut at the cluster count (a loop ends there).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/pe/grub-memdisk.h"
#include "shared/fail.h"
#include "shared/reader.h"

typedef struct fat {
	const uint8_t *img;
	size_t size;
	uint32_t bps, spc, fat_off, fat_size, root_off, root_size, data_off, clusters;
	bool fat12;
} fat;

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char) (c - 'A' + 'a') : c;
}

static bool same_nocase(const char *a, size_t na, const char *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (lower(a[i]) != lower(b[i]))
			return false;
	return true;
}

/* The BIOS parameter block, checked: -EBADMSG when this is no FAT12/16 image. */
static int fat_open(fat *f, const uint8_t *img, size_t size, mb_error *err)
{
	byte_reader r;
	uint16_t bps, reserved, root_entries, tot16, fatsz;
	uint8_t spc, nfats;
	uint32_t tot32, total, root_secs, meta;

	reader_init(&r, img, size, 0);
	if (read_skip(&r, 11) < 0 || read_u16le(&r, &bps) < 0 || read_u8(&r, &spc) < 0 ||
	    read_u16le(&r, &reserved) < 0 || read_u8(&r, &nfats) < 0 || read_u16le(&r, &root_entries) < 0 ||
	    read_u16le(&r, &tot16) < 0 || read_skip(&r, 1) < 0 || read_u16le(&r, &fatsz) < 0 ||
	    read_skip(&r, 8) < 0 || read_u32le(&r, &tot32) < 0)
		return set_error_at(err, -EBADMSG, 0, "memdisk: the FAT boot sector is truncated");
	if ((bps != 512 && bps != 1024 && bps != 2048 && bps != 4096) || !spc || (spc & (spc - 1)) || !reserved ||
	    !nfats || !fatsz)
		return set_error_at(err, -EBADMSG, 11, "memdisk: no FAT12/16 parameter block (sector size %u, %u sectors a "
				    "cluster, %u FATs of %u sectors)", bps, spc, nfats, fatsz);
	total = tot16 ? tot16 : tot32;
	root_secs = ((uint32_t) root_entries * 32 + bps - 1) / bps;
	meta = reserved + (uint32_t) nfats * fatsz + root_secs;
	if ((uint64_t) total * bps > size || total <= meta)
		return set_error_at(err, -EBADMSG, 19, "memdisk: %u sectors of %u bytes do not fit its %zu bytes", total, bps,
				    size);
	f->img = img;
	f->size = size;
	f->bps = bps;
	f->spc = spc;
	f->fat_off = (uint32_t) reserved * bps;
	f->fat_size = (uint32_t) fatsz * bps;
	f->root_off = f->fat_off + (uint32_t) nfats * f->fat_size;
	f->root_size = (uint32_t) root_entries * 32;
	f->data_off = meta * bps;
	f->clusters = (total - meta) / spc;
	if (f->clusters >= 65525)
		return set_error_at(err, -EBADMSG, 19, "memdisk: %u clusters is FAT32, which is not read", f->clusters);
	f->fat12 = f->clusters < 4085;
	/* the FAT must hold an entry for every cluster */
	if ((uint64_t) (f->clusters + 2) * (f->fat12 ? 3 : 4) / 2 + 2 > f->fat_size)
		return set_error_at(err, -EBADMSG, 22, "memdisk: a FAT of %u bytes for %u clusters", f->fat_size, f->clusters);
	return 0;
}

/* The FAT entry of cluster n (2 <= n < clusters + 2, checked by the caller). */
static uint32_t fat_next(const fat *f, uint32_t n)
{
	const uint8_t *t = f->img + f->fat_off;

	if (f->fat12) {
		uint32_t at = n + n / 2, v = t[at] | (uint32_t) t[at + 1] << 8;

		return n & 1 ? v >> 4 : v & 0xfff;
	}
	return t[2 * n] | (uint32_t) t[2 * n + 1] << 8;
}

static bool fat_end(const fat *f, uint32_t n)
{
	return n >= (f->fat12 ? 0xff8u : 0xfff8u);
}

/*
 * The bytes of a cluster chain from first, at most want of them (want: the file's size; for a
 * directory UINT32_MAX, the chain's length). *out malloc()ed with a NUL after *len bytes.
 */
static int fat_chain(const fat *f, uint32_t first, uint32_t want, bool dir, uint8_t **out, size_t *len, mb_error *err)
{
	size_t csize = (size_t) f->bps * f->spc, have = 0, cap = 0;
	uint32_t n = first, steps = 0;
	uint8_t *buf = NULL;

	*out = NULL;
	*len = 0;
	while (dir ? !fat_end(f, n) : have < want) {
		size_t take, off;
		uint8_t *grown;

		if (n < 2 || n >= f->clusters + 2 || ++steps > f->clusters) {
			free(buf);
			return set_error_at(err, -EBADMSG, f->fat_off, "memdisk: cluster %u in a chain (of %u clusters)", n,
					    f->clusters);
		}
		off = f->data_off + (size_t) (n - 2) * csize;
		if (off > f->size || f->size - off < csize) {
			free(buf);
			return set_error_at(err, -EBADMSG, off, "memdisk: cluster %u is outside the image", n);
		}
		take = dir ? csize : (want - have < csize ? want - have : csize);
		if (have + take + 1 > cap) {
			cap = dir ? 2 * (have + take) + 1 : (size_t) want + 1;
			if (!(grown = realloc(buf, cap))) {
				free(buf);
				return -ENOMEM;
			}
			buf = grown;
		}
		memcpy(buf + have, f->img + off, take);
		have += take;
		if (dir && have / 32 > GRUB_MEMDISK_MAX_DIR_ENTRIES)
			break;
		n = fat_next(f, n);
		if (!dir && have < want && fat_end(f, n)) {
			free(buf);
			return set_error_at(err, -EBADMSG, f->fat_off, "memdisk: a file's clusters end before its %u bytes", want);
		}
	}
	if (!buf && !(buf = malloc(1)))
		return -ENOMEM;
	buf[have] = 0;
	*out = buf;
	*len = have;
	return 0;
}

/* The 8.3 entry named name[0..nl) in a directory's entries: 1 with *ent, 0 when none. */
static int dir_find(const uint8_t *d, size_t size, const char *name, size_t nl, const uint8_t **ent)
{
	for (size_t at = 0; at + 32 <= size; at += 32) {
		const uint8_t *e = d + at;
		char full[13];
		size_t k = 0, i;

		if (e[0] == 0)
			break;
		if (e[0] == 0xe5 || e[11] == 0x0f || (e[11] & 0x08))
			continue; /* deleted, a long name's part, the volume label */
		for (i = 0; i < 8 && e[i] != ' '; i++)
			full[k++] = (char) (i == 0 && e[0] == 0x05 ? 0xe5 : e[i]);
		if (e[8] != ' ')
			full[k++] = '.';
		for (i = 8; i < 11 && e[i] != ' '; i++)
			full[k++] = (char) e[i];
		if (same_nocase(full, k, name, nl)) {
			*ent = e;
			return 1;
		}
	}
	return 0;
}

static int fat_read(const uint8_t *img, size_t size, const char *path, size_t max, uint8_t **data, size_t *len,
		    mb_error *err)
{
	fat f;
	uint8_t *dir = NULL;
	size_t dir_size;
	int rc = fat_open(&f, img, size, err);

	if (rc < 0)
		return rc;
	if (f.root_off > size || size - f.root_off < f.root_size)
		return set_error_at(err, -EBADMSG, f.root_off, "memdisk: the root directory is outside the image");
	if (!(dir = malloc(f.root_size + 1)))
		return -ENOMEM;
	memcpy(dir, img + f.root_off, f.root_size);
	dir_size = f.root_size;
	for (;;) {
		const char *end;
		const uint8_t *e = NULL;
		uint32_t first, fsize;
		bool last;

		while (*path == '/')
			path++;
		end = strchr(path, '/');
		last = !end;
		if (!end)
			end = path + strlen(path);
		if (end == path || !dir_find(dir, dir_size, path, (size_t) (end - path), &e)) {
			free(dir);
			return -ENOENT;
		}
		first = e[26] | (uint32_t) e[27] << 8;
		fsize = e[28] | (uint32_t) e[29] << 8 | (uint32_t) e[30] << 16 | (uint32_t) e[31] << 24;
		if (last) {
			bool is_dir = e[11] & 0x10;

			free(dir);
			if (is_dir)
				return -ENOENT;
			if (fsize > max)
				return set_error(err, -EFBIG, "memdisk: the file is %u bytes, more than %zu", fsize, max);
			if (fsize == 0) {
				if (!(*data = calloc(1, 1)))
					return -ENOMEM;
				*len = 0;
				return 0;
			}
			return fat_chain(&f, first, fsize, false, data, len, err);
		}
		if (!(e[11] & 0x10)) {
			free(dir);
			return -ENOENT;
		}
		free(dir);
		rc = fat_chain(&f, first, UINT32_MAX, true, &dir, &dir_size, err);
		if (rc < 0)
			return rc;
		path = end;
	}
}

/* An octal tar number field (NUL- or space-terminated). */
static bool tar_octal(const uint8_t *p, size_t n, uint64_t *v)
{
	size_t i = 0;

	*v = 0;
	while (i < n && p[i] == ' ')
		i++;
	for (; i < n && p[i] >= '0' && p[i] <= '7'; i++) {
		if (*v > (UINT64_MAX >> 3))
			return false;
		*v = *v * 8 + (uint64_t) (p[i] - '0');
	}
	return i == n || p[i] == 0 || p[i] == ' ';
}

static const char *strip_lead(const char *p, size_t *n)
{
	for (;;) {
		if (*n >= 2 && p[0] == '.' && p[1] == '/') {
			p += 2, *n -= 2;
		} else if (*n >= 1 && p[0] == '/') {
			p++, (*n)--;
		} else {
			return p;
		}
	}
}

static int tar_read(const uint8_t *img, size_t size, const char *path, size_t max, uint8_t **data, size_t *len,
		    mb_error *err)
{
	byte_reader r;
	size_t pl = strlen(path);

	path = strip_lead(path, &pl);
	reader_init(&r, img, size, 0);
	while (reader_left(&r) >= 512) {
		uint64_t at = reader_offset(&r), fsize;
		const uint8_t *h, *body;
		char name[256];
		size_t nl = 0, pre;
		const char *nm;

		if (read_bytes(&r, 512, &h) < 0)
			break;
		if (h[0] == 0)
			break; /* the end blocks */
		if (!tar_octal(h + 124, 12, &fsize))
			return set_error_at(err, -EBADMSG, at + 124, "memdisk: a tar header's size is not octal");
		if (fsize > reader_left(&r))
			return set_error_at(err, -EBADMSG, at + 124, "memdisk: a tar member of %llu bytes past the archive",
					    (unsigned long long) fsize);
		/* ustar: prefix "/" name */
		pre = memcmp(h + 257, "ustar", 5) == 0 ? strnlen((const char *) h + 345, 155) : 0;
		if (pre) {
			memcpy(name, h + 345, pre);
			name[pre] = '/';
			nl = pre + 1;
		}
		memcpy(name + nl, h, strnlen((const char *) h, 100));
		nl += strnlen((const char *) h, 100);
		nm = strip_lead(name, &nl);
		if (read_bytes(&r, (size_t) fsize, &body) < 0 || read_skip(&r, (size_t) ((512 - fsize % 512) % 512)) < 0)
			return set_error_at(err, -EBADMSG, at, "memdisk: a tar member past the archive");
		if ((h[156] == '0' || h[156] == 0) && nl == pl && memcmp(nm, path, pl) == 0) {
			if (fsize > max)
				return set_error(err, -EFBIG, "memdisk: the file is %llu bytes, more than %zu",
						 (unsigned long long) fsize, max);
			if (!(*data = malloc((size_t) fsize + 1)))
				return -ENOMEM;
			memcpy(*data, body, (size_t) fsize);
			(*data)[fsize] = 0;
			*len = (size_t) fsize;
			return 0;
		}
	}
	return -ENOENT;
}

int grub_memdisk_read(const void *img, size_t img_size, const char *path, size_t max, uint8_t **data, size_t *size,
		      mb_error *err)
{
	const uint8_t *b = img;

	*data = NULL;
	*size = 0;
	if (strncmp(path, "(memdisk)", 9) == 0)
		path += 9;
	if (img_size >= 512 && memcmp(b + 257, "ustar", 5) == 0)
		return tar_read(b, img_size, path, max, data, size, err);
	if (img_size >= 512 && b[510] == 0x55 && b[511] == 0xaa)
		return fat_read(b, img_size, path, max, data, size, err);
	return set_error_at(err, -EBADMSG, 0, "memdisk: neither a FAT image (no 55 AA at 510) nor a tar archive");
}
