/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * systemd-stub's drop-ins (systemd 252, src/boot/efi/cpio.c and stub.c at v252): the files of
 * <UKI path>.extra.d/ on the ESP. The stub picks them by suffix, sorts their names, packs each
 * kind into a "newc" cpio archive of its own with fixed metadata (inodes counted from 1, mtime
 * 0, owner 0, one link), measures the whole archive as one EV_IPL event, and hands the kernel
 * .initrd followed by the archives. Reproducing the archive byte for byte is what makes the
 * event predictable; the real boot in tests/vm (uki scenario) holds it to the TPM.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <mboot/pe.h>

#include "shared/fail.h"
#include "shared/fileio.h"

#define CPIO_HEADER_SIZE (6 + 13 * 8)
#define NAME_MAX_STUB    255 /* the stub skips longer names (Linux's limit) */

typedef struct dropin_kind_info {
	const char *suffix;      /* matched without regard to case */
	const char *prefix;      /* the folder the archive creates */
	uint32_t dir_mode, file_mode;
	uint32_t pcr;
	const char *description; /* the event's text (UTF-16 in the log) */
} dropin_kind_info;

static const dropin_kind_info kinds[] = {
	[MB_UKI_DROPIN_CREDENTIALS] = { ".cred", ".extra/credentials", 0500, 0400, 12, "Credentials initrd" },
	[MB_UKI_DROPIN_SYSEXTS] = { ".raw", ".extra/sysext", 0555, 0444, 13, "System extension initrd" },
};

static const dropin_kind_info *kind_info(mb_uki_dropin_kind kind)
{
	return (unsigned) kind < sizeof(kinds) / sizeof(kinds[0]) ? &kinds[kind] : NULL;
}

MB_EXPORT uint32_t mb_uki_dropin_pcr(mb_uki_dropin_kind kind)
{
	const dropin_kind_info *k = kind_info(kind);

	return k ? k->pcr : UINT32_MAX;
}

MB_EXPORT const char *mb_uki_dropin_description(mb_uki_dropin_kind kind)
{
	const dropin_kind_info *k = kind_info(kind);

	return k ? k->description : NULL;
}

static bool ends_with_nocase(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	if (n < m)
		return false;
	for (size_t i = 0; i < m; i++) {
		char a = s[n - m + i], b = suffix[i];

		if (a >= 'A' && a <= 'Z')
			a = (char) (a - 'A' + 'a');
		if (a != b)
			return false;
	}
	return true;
}

MB_EXPORT int mb_uki_dropin_kind_of(const char *name, mb_error *err)
{
	if (!name || !*name || strchr(name, '/'))
		return set_error(err, -EINVAL, "'%s' is not a file name", name ? name : "");
	if (name[0] == '.')
		return set_error(err, -ENOENT, "%s: systemd-stub skips names starting with '.'", name);
	if (strlen(name) > NAME_MAX_STUB)
		return set_error(err, -ENOENT, "%.40s...: systemd-stub skips names longer than %d characters", name,
				 NAME_MAX_STUB);
	for (const unsigned char *p = (const unsigned char *) name; *p; p++)
		if (*p >= 0x80)
			return set_error(err, -ENOENT, "%s: systemd-stub skips names that are not ASCII", name);
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (ends_with_nocase(name, kinds[i].suffix))
			return (int) i;
	return set_error(err, -ENOENT, "%s: systemd-stub picks only *.cred (credentials) and *.raw (system "
			 "extensions)", name);
}

/* The 13 header words as 8 lowercase hex digits each. */
static void put_word(uint8_t *p, uint32_t v)
{
	static const char hex[] = "0123456789abcdef";

	for (int i = 7; i >= 0; i--, v >>= 4)
		p[i] = (uint8_t) hex[v & 0xf];
}

static size_t align4(size_t n)
{
	return (n + 3) & ~(size_t) 3;
}

typedef struct archive {
	uint8_t *data;
	size_t size;
	uint32_t inode;
} archive;

/* The bytes of one entry: header, path with NUL, padding, contents, padding (the kernel's
 * unpacker reads the header and the contents at 4-byte boundaries); 0 past cpio's 32-bit sizes. */
static size_t entry_size(const char *dir, const char *name, size_t size)
{
	size_t path_len = strlen(dir) + (name ? strlen(name) + 1 : 0);

	if (size > UINT32_MAX || path_len >= UINT32_MAX)
		return 0;
	return align4(CPIO_HEADER_SIZE + path_len + 1) + align4(size);
}

/* One entry into the room the caller sized with entry_size. */
static void put_entry(archive *a, uint32_t mode, const char *dir, const char *name, const void *data, size_t size)
{
	size_t dir_len = strlen(dir), path_len = dir_len + (name ? strlen(name) + 1 : 0);
	size_t head = align4(CPIO_HEADER_SIZE + path_len + 1), need = head + align4(size);
	uint8_t *h = a->data + a->size;
	const uint32_t words[13] = { a->inode++, mode, 0, 0, 1, 0, (uint32_t) size, 0, 0, 0, 0,
				     (uint32_t) (path_len + 1), 0 };

	memset(h, 0, need);
	memcpy(h, "070701", 6);
	for (size_t i = 0; i < 13; i++)
		put_word(h + 6 + 8 * i, words[i]);
	memcpy(h + CPIO_HEADER_SIZE, dir, dir_len);
	if (name) {
		h[CPIO_HEADER_SIZE + dir_len] = '/';
		memcpy(h + CPIO_HEADER_SIZE + dir_len + 1, name, path_len - dir_len - 1);
	}
	if (size)
		memcpy(h + head, data, size);
	a->size += need;
}

/* *total += n, refused past SIZE_MAX or for an entry of no size (too large for cpio). */
static bool add_size(size_t *total, size_t n)
{
	if (!n || n > SIZE_MAX - *total)
		return false;
	*total += n;
	return true;
}

static int compare_names(const void *x, const void *y)
{
	const mb_uki_dropin *a = *(const mb_uki_dropin *const *) x, *b = *(const mb_uki_dropin *const *) y;

	/* the stub compares UTF-16 code units; for ASCII names that is strcmp's byte order */
	return strcmp(a->name, b->name);
}

MB_EXPORT int mb_uki_dropin_cpio(mb_uki_dropin_kind kind, const mb_uki_dropin *files, size_t n, uint8_t **ret,
				 size_t *ret_size, mb_error *err)
{
	const dropin_kind_info *k = kind_info(kind);
	const mb_uki_dropin **picked = NULL;
	archive a = { .inode = 1 };
	size_t n_picked = 0, total = 0, n_dirs = 0, at;
	char dirs[4][32]; /* the prefix's folders: ".extra", ".extra/sysext" */
	bool fits = true;
	int rc = 0;

	*ret = NULL;
	*ret_size = 0;
	if (!k)
		return set_error(err, -EINVAL, "unknown drop-in kind %d", (int) kind);
	if (n && !(picked = calloc(n, sizeof(*picked))))
		return set_error(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		int got = mb_uki_dropin_kind_of(files[i].name, err);

		if (got == -EINVAL) {
			rc = got;
			goto out;
		}
		if (got == (int) kind)
			picked[n_picked++] = &files[i];
	}
	if (!n_picked)
		goto out; /* the stub builds and measures nothing */
	qsort(picked, n_picked, sizeof(*picked), compare_names);
	for (size_t i = 1; i < n_picked; i++)
		if (strcmp(picked[i - 1]->name, picked[i]->name) == 0) {
			rc = set_error(err, -EINVAL, "%s given twice: a folder holds one file of a name",
				       picked[i]->name);
			goto out;
		}

	/* The archive's size first, so that it is one allocation (no copy of a credential is left
	 * behind by a realloc): every folder of the prefix, the files, the trailer. */
	for (const char *p = k->prefix;; p++)
		if (*p == '/' || !*p) {
			size_t len = (size_t) (p - k->prefix);

			memcpy(dirs[n_dirs], k->prefix, len);
			dirs[n_dirs][len] = '\0';
			fits &= add_size(&total, entry_size(dirs[n_dirs++], NULL, 0));
			if (!*p)
				break;
		}
	for (size_t i = 0; i < n_picked; i++)
		fits &= add_size(&total, entry_size(k->prefix, picked[i]->name, picked[i]->size));
	fits &= add_size(&total, entry_size("TRAILER!!!", NULL, 0));
	if (!fits) {
		rc = set_error(err, -E2BIG, "packing the %s: past cpio's 32-bit sizes", k->description);
		goto out;
	}
	a.data = malloc(total);
	if (!a.data) {
		rc = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	/* mkdir -p: the leading folders 0555, the last one dir_mode */
	for (size_t i = 0; i < n_dirs; i++)
		put_entry(&a, 0040000 | (i + 1 < n_dirs ? 0555 : k->dir_mode), dirs[i], NULL, NULL, 0);
	for (size_t i = 0; i < n_picked; i++)
		put_entry(&a, 0100000 | k->file_mode, k->prefix, picked[i]->name, picked[i]->data, picked[i]->size);
	/* The trailer (inode 0, mode 0, one link, "TRAILER!!!"): the stub copies a fixed string
	 * whose name size reads "0000000B", in capitals unlike every other word. */
	at = a.size;
	a.inode = 0;
	put_entry(&a, 0, "TRAILER!!!", NULL, NULL, 0);
	a.data[at + 6 + 8 * 11 + 7] = 'B';
	*ret = a.data;
	*ret_size = a.size;
	a.data = NULL;
out:
	free(a.data);
	free(picked);
	return rc;
}

#define MAX_DROPINS 64

MB_EXPORT int mb_uki_dropin_dir_cpio(const char *dir, mb_uki_dropin_kind kind, uint8_t **ret, size_t *ret_size,
				     mb_error *err)
{
	mb_uki_dropin files[MAX_DROPINS];
	size_t n = 0;
	struct dirent *de;
	DIR *d;
	int rc = 0;

	*ret = NULL;
	*ret_size = 0;
	d = opendir(dir);
	if (!d) {
		rc = -errno;
		return set_error(err, rc, "%s: cannot open the drop-in folder: %s", dir, mb_strerror(rc));
	}
	while (rc >= 0 && (de = readdir(d))) {
		char path[4096];
		struct stat st;
		uint8_t *data = NULL;

		/* what the stub skips, and folders, are left out as it leaves them */
		if (mb_uki_dropin_kind_of(de->d_name, NULL) != (int) kind)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int) sizeof(path) || stat(path, &st) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (n == MAX_DROPINS) {
			rc = set_error(err, -E2BIG, "%s: more than %d drop-ins of a kind", dir, MAX_DROPINS);
			break;
		}
		files[n].name = strdup(de->d_name);
		files[n].data = NULL;
		files[n].size = 0;
		if (!files[n].name) {
			rc = set_error(err, -ENOMEM, "out of memory");
			break;
		}
		rc = file_read(path, MB_PE_MAX_FILE, &data, &files[n].size, err);
		files[n++].data = data;
	}
	closedir(d);
	if (rc >= 0)
		rc = mb_uki_dropin_cpio(kind, files, n, ret, ret_size, err);
	for (size_t i = 0; i < n; i++) {
		free((char *) files[i].name);
		/* credentials may be secrets: no copy of them is left in freed memory */
		if (kind == MB_UKI_DROPIN_CREDENTIALS && files[i].data)
			explicit_bzero((void *) files[i].data, files[i].size);
		free((void *) files[i].data);
	}
	return rc;
}

MB_EXPORT int mb_uki_dropin_appended(const char *dir, unsigned *ret_kinds, mb_error *err)
{
	static const mb_uki_dropin_kind appended_kinds[] = { MB_UKI_DROPIN_CREDENTIALS, MB_UKI_DROPIN_SYSEXTS };
	int rc = 0;

	*ret_kinds = 0;
	for (size_t i = 0; dir && rc >= 0 && i < sizeof(appended_kinds) / sizeof(appended_kinds[0]); i++) {
		uint8_t *cpio = NULL;
		size_t size = 0;

		rc = mb_uki_dropin_dir_cpio(dir, appended_kinds[i], &cpio, &size, err);
		if (cpio) {
			*ret_kinds |= 1u << appended_kinds[i];
			explicit_bzero(cpio, size); /* a credentials archive holds the credentials */
		}
		free(cpio);
	}
	return rc < 0 ? rc : 0;
}
