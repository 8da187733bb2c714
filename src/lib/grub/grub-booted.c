/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Copies of the GRUB configs that booted: find them by their measured digests, keep them. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/json.h"

#include <mboot/digest.h>
#include <mboot/grub-booted.h>
#include "lib/grub/grub.h"
#include "shared/fail.h"
#include "shared/fileio.h"
#include "shared/hex.h"

void mb_grub_booted_free(mb_grub_booted *b, size_t n)
{
	size_t i;

	if (!b)
		return;
	for (i = 0; i < n; i++) {
		free(b[i].measured_path);
		free(b[i].file);
		free(b[i].content);
	}
	free(b);
}

int mb_grub_booted_name(const char *measured_path, char out[MB_GRUB_BOOTED_NAME_SIZE])
{
	uint8_t md[32];

	if (mb_digest(MB_ALG_SHA256, measured_path, strlen(measured_path), md) < 0)
		return -EIO;
	hex_format(md, sizeof(md), out);
	return 0;
}

/*
 * The part after "(DEVICE)" when the path is one a file may be looked up by: it starts with
 * "/", and has no ".." component (a forged log must not name files outside the mount), no
 * control character; *dev_len is the length of "(DEVICE)". NULL otherwise.
 */
static const char *safe_path_after_device(const char *p, size_t *dev_len)
{
	const char *close = strchr(p, ')'), *c;

	if (p[0] != '(' || !close || close[1] != '/')
		return NULL;
	for (c = p; *c; c++)
		if ((unsigned char) *c < 0x20 || *c == 0x7f)
			return NULL;
	for (c = close + 1; (c = strstr(c, "/..")) != NULL; c += 3)
		if (c[3] == '/' || c[3] == 0)
			return NULL;
	*dev_len = (size_t) (close + 1 - p);
	return close + 1;
}

/* A regular file's bytes (GRUB_CFG_MAX at most), never blocking on a FIFO or a device:
 * 0, -ENOENT for anything that cannot serve as a candidate, -ENOMEM. */
static int read_candidate(const char *path, uint8_t **ret, size_t *ret_size)
{
	mb_error ignored = { 0 };
	struct stat st;
	int fd, r;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -ENOENT;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -ENOENT;
	}
	r = file_read_fd(fd, GRUB_CFG_MAX, ret, ret_size, &ignored);
	close(fd);
	return r == -ENOMEM ? r : r < 0 ? -ENOENT : 0;
}

/* Does data have ev's digest in every bank of the event (and is there one)? */
static bool matches_event(const mb_event *ev, const uint8_t *data, size_t size)
{
	uint8_t md[MB_DIGEST_MAX];
	uint32_t i;

	if (ev->n_digests == 0)
		return false;
	for (i = 0; i < ev->n_digests; i++) {
		const mb_event_digest *d = &ev->digests[i];
		const mb_digest_info *info = mb_digest_by_alg(d->alg);

		/* a bank mboot cannot hash cannot be checked: not a match */
		if (!info || info->size != d->size || mb_digest(d->alg, data, size, md) < 0 ||
		    memcmp(md, d->bytes, d->size) != 0)
			return false;
	}
	return true;
}

/* Try one candidate file for b; 1 when it matched (b filled), 0 not, -ENOMEM. */
static int try_candidate(mb_grub_booted *b, const mb_event *ev, char *file)
{
	uint8_t *data = NULL;
	size_t size = 0;
	int r = read_candidate(file, &data, &size);

	if (r == -ENOENT) {
		free(file);
		return 0;
	}
	if (r < 0) {
		free(file);
		return r;
	}
	if (!matches_event(ev, data, size)) {
		free(data);
		/* the first file that is there names it: the one the most specific mount holds */
		if (b->status == MB_GRUB_BOOTED_CHANGED) {
			free(file);
		} else {
			b->file = file;
			b->status = MB_GRUB_BOOTED_CHANGED;
		}
		return 0;
	}
	free(b->file);
	b->file = file;
	if (mb_digest(MB_ALG_SHA256, data, size, b->sha256) < 0) {
		free(data);
		return -ENOMEM;
	}
	b->content = data;
	b->size = size;
	b->status = MB_GRUB_BOOTED_FOUND;
	return 1;
}

static int find_one(mb_grub_booted *b, const mb_event *ev, const mb_grub_mount *mounts, size_t n_mounts,
		    const char *copies_dir)
{
	const char *rest;
	size_t dev_len = 0, i, data_len = ev->data_size;
	bool named = false;
	int r;

	b->status = MB_GRUB_BOOTED_UNSAFE;
	/* an event whose data has a NUL inside names more than the string: no file is that */
	while (data_len > 0 && ev->data[data_len - 1] == 0)
		data_len--;
	if (strlen(b->measured_path) != data_len)
		return 0;
	rest = safe_path_after_device(b->measured_path, &dev_len);
	if (!rest)
		return 0;
	b->status = MB_GRUB_BOOTED_MISSING;
	for (i = 0; i < n_mounts; i++)
		if (mounts[i].device && strlen(mounts[i].device) == dev_len &&
		    strncmp(mounts[i].device, b->measured_path, dev_len) == 0)
			named = true;
	for (i = 0; i < n_mounts; i++) {
		const mb_grub_mount *m = &mounts[i];
		size_t dl = strlen(m->dir);
		char *file;

		if (named ? !(m->device && strlen(m->device) == dev_len &&
			      strncmp(m->device, b->measured_path, dev_len) == 0)
			  : m->device != NULL)
			continue;
		while (dl > 0 && m->dir[dl - 1] == '/') /* "/" + "/boot/..." is "/boot/..." */
			dl--;
		if (asprintf(&file, "%.*s%s", (int) dl, m->dir, rest) < 0)
			return -ENOMEM;
		r = try_candidate(b, ev, file);
		if (r != 0)
			return r < 0 ? r : 0;
	}
	if (copies_dir) {
		char name[MB_GRUB_BOOTED_NAME_SIZE], *file;

		if (mb_grub_booted_name(b->measured_path, name) < 0 || asprintf(&file, "%s/%s", copies_dir, name) < 0)
			return -ENOMEM;
		r = try_candidate(b, ev, file);
		if (r < 0)
			return r;
	}
	return 0;
}

int mb_grub_find_booted(const mb_event_log *log, const mb_grub_mount *mounts, size_t n_mounts,
			const char *copies_dir, mb_grub_booted **ret, size_t *ret_n, mb_error *err)
{
	grub_words paths = { 0 };
	mb_grub_booted *b = NULL;
	size_t i, k, n = mb_event_log_count(log);
	int r;

	*ret = NULL;
	*ret_n = 0;
	if (grub_measured_configs(log, &paths) < 0)
		goto oom;
	if (paths.n > 0 && !(b = calloc(paths.n, sizeof(*b))))
		goto oom;
	for (k = 0; k < paths.n; k++) {
		const mb_event *first = NULL;

		b[k].measured_path = paths.w[k];
		paths.w[k] = NULL;
		for (i = 0; i < n && !first; i++) {
			const mb_event *ev = mb_event_log_event(log, i);
			char *p = grub_file_event_path(ev);

			if (p && strcmp(p, b[k].measured_path) == 0)
				first = ev;
			free(p);
		}
		if (!first) /* grub_measured_configs found it in this log: only OOM gets here */
			goto oom_b;
		b[k].event_number = first->number;
		r = find_one(&b[k], first, mounts, n_mounts, copies_dir);
		if (r < 0)
			goto oom_b;
	}
	*ret = b;
	*ret_n = paths.n;
	grub_words_done(&paths); /* its words are b's now */
	return 0;
oom_b:
	mb_grub_booted_free(b, paths.n);
oom:
	grub_words_done(&paths);
	return set_error(err, -ENOMEM, "out of memory");
}

/* Is name one of the copies this folder may hold (64 lowercase hex digits)? */
static bool is_copy_name(const char *name)
{
	size_t i;

	for (i = 0; name[i]; i++)
		if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
			return false;
	return i == 64;
}

int mb_grub_booted_store(const char *dir, const mb_grub_booted *b, size_t n, mb_error *err)
{
	json_build_mark mark = json_build_begin();
	json_t *index = json_object(), *configs = json_array();
	char name[MB_GRUB_BOOTED_NAME_SIZE], hex[65], *path = NULL, *text = NULL;
	struct dirent *de;
	DIR *d;
	size_t i;
	int r;

	if (!index || !configs) {
		json_decref(index);
		json_decref(configs);
		return set_error(err, -ENOMEM, "out of memory");
	}
	json_object_set_new(index, "configs", configs);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		r = -errno;
		json_decref(index);
		return set_error(err, r, "%s: %s", dir, strerror(-r));
	}
	for (i = 0; i < n; i++) {
		json_t *c;

		if (b[i].status != MB_GRUB_BOOTED_FOUND)
			continue;
		if (mb_grub_booted_name(b[i].measured_path, name) < 0 || asprintf(&path, "%s/%s", dir, name) < 0)
			goto oom;
		r = file_write(path, b[i].content, b[i].size, 0644, true, err);
		free(path);
		path = NULL;
		if (r < 0) {
			json_decref(index);
			return r;
		}
		c = json_object();
		if (!c || json_array_append_new(configs, c) < 0) {
			json_decref(c);
			goto oom;
		}
		if (json_object_set_new(c, "path", json_text(b[i].measured_path)) < 0 ||
		    json_object_set_new(c, "file", json_text(name)) < 0 ||
		    json_object_set_new(c, "sha256", json_text(hex_format(b[i].sha256, 32, hex))) < 0)
			goto oom;
	}
	text = json_write_built(index, JSON_LAYOUT_PRETTY, mark);
	if (!text || asprintf(&path, "%s/%s", dir, MB_GRUB_BOOTED_INDEX) < 0)
		goto oom;
	r = file_write(path, text, strlen(text), 0644, true, err);
	free(path);
	free(text);
	path = NULL;
	if (r < 0) {
		json_decref(index);
		return r;
	}

	/* the index is the truth; a copy it no longer names is one no boot of today's log read */
	d = opendir(dir);
	while (d && (de = readdir(d)) != NULL) {
		bool listed = false;

		if (!is_copy_name(de->d_name))
			continue;
		for (i = 0; i < json_array_size(configs) && !listed; i++) {
			json_t *f = json_object_get(json_array_get(configs, i), "file");

			listed = strcmp(json_string_value(f), de->d_name) == 0;
		}
		if (!listed)
			(void) unlinkat(dirfd(d), de->d_name, 0);
	}
	if (d)
		closedir(d);
	json_decref(index);
	return 0;
oom:
	free(path);
	free(text);
	json_decref(index);
	return set_error(err, -ENOMEM, "out of memory");
}
