/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SSH host keys sealed to a good boot (docs/ssh.md): each clear host key into an envelope
 * (mb_envelope_seal: AES-256-GCM under a TPM-sealed data key), checked to unseal before the
 * clear key is removed; unsealed into a tmpfs folder for sshd, or nothing at all when the boot
 * is not the sealed one. The clear keys live in locked pages out of core dumps, wiped.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <mboot/ssh-hostkey.h>
#include "shared/fail.h"
#include "shared/options.h"
#include "shared/fileio.h"
#include "shared/secret-page.h"

#define SUFFIX MB_SSH_HOSTKEY_SUFFIX
typedef struct key_names {
	char *name[MB_SSH_HOSTKEYS_MAX];
	size_t n;
} key_names;

/* ssh_host_<type>_key (sealed: with SUFFIX), <type> lowercase letters and digits. */
static bool hostkey_name(const char *name, bool sealed)
{
	static const char prefix[] = "ssh_host_", suffix[] = "_key";
	size_t n = strlen(name), tail = strlen(suffix) + (sealed ? strlen(SUFFIX) : 0), i;

	if (n <= strlen(prefix) + tail || strncmp(name, prefix, strlen(prefix)) != 0 ||
	    strncmp(name + n - tail, suffix, strlen(suffix)) != 0 ||
	    (sealed && strcmp(name + n - strlen(SUFFIX), SUFFIX) != 0))
		return false;
	for (i = strlen(prefix); i < n - tail; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9')))
			return false;
	return true;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static void names_free(key_names *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->name[i]);
	k->n = 0;
}

/* The host key files of dir (clear or sealed), sorted. */
static int list_hostkeys(const char *dir, bool sealed, key_names *k, mb_error *err)
{
	struct dirent **ents = NULL;
	int m = scandir(dir, &ents, NULL, by_name), rc = 0;

	k->n = 0;
	if (m < 0)
		return set_error(err, -errno, "%s: %s", dir, strerror(errno));
	for (int i = 0; i < m; i++) {
		if (rc == 0 && hostkey_name(ents[i]->d_name, sealed)) {
			if (k->n == MB_SSH_HOSTKEYS_MAX)
				rc = set_error(err, -E2BIG, "%s: more than %d host keys", dir, MB_SSH_HOSTKEYS_MAX);
			else if (!(k->name[k->n] = strdup(ents[i]->d_name)))
				rc = set_error(err, -ENOMEM, "out of memory");
			else
				k->n++;
		}
		free(ents[i]);
	}
	free(ents);
	if (rc == 0 && k->n == 0)
		rc = set_error(err, -ENOENT, "%s: no %s", dir,
			       sealed ? "sealed host keys (ssh_host_*_key" SUFFIX ")"
				      : "clear host keys (ssh_host_*_key): nothing to seal");
	if (rc < 0)
		names_free(k);
	return rc;
}

/* A clear host key: a regular file (not a link), 1 to MB_SSH_HOSTKEY_MAX bytes, a PEM-armoured private key. */
static int read_hostkey(int dirfd, const char *dir, const char *name, secret_page *k, mb_error *err)
{
	struct stat st;
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK), rc = -EINVAL;

	if (fd < 0)
		return set_error(err, -errno, "%s/%s: %s", dir, name, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 || (uint64_t) st.st_size > MB_SSH_HOSTKEY_MAX) {
		set_error(err, rc, "%s/%s: not a regular file of 1 to %u bytes", dir, name, MB_SSH_HOSTKEY_MAX);
		goto out;
	}
	/* one byte more than the size: a file that grows meanwhile is seen */
	if (secret_page_alloc(k, (size_t) st.st_size + 1) < 0) {
		rc = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (;;) {
		ssize_t r = fd_read_some(fd, k->p + k->size, k->cap - k->size);

		if (r < 0) {
			rc = set_error(err, (int) r, "%s/%s: %s", dir, name, strerror((int) -r));
			goto out;
		}
		if (r == 0 || (k->size += (size_t) r) == k->cap)
			break;
	}
	if (k->size != (size_t) st.st_size)
		set_error(err, rc, "%s/%s: changed while read", dir, name);
	else if (k->size < 11 || memcmp(k->p, "-----BEGIN ", 11) != 0)
		set_error(err, rc, "%s/%s: not a PEM-armoured private key (-----BEGIN ...)", dir, name);
	else
		rc = 0;
out:
	close(fd);
	return rc;
}

/* The first line of NAME.pub, the label of NAME's envelope ("" when there is none); NULL on ENOMEM. */
static char *public_label(const char *dir, const char *name)
{
	char path[4096];
	uint8_t *text = NULL;
	size_t size = 0, n = 0;
	mb_error err = { 0 };
	char *label;

	snprintf(path, sizeof(path), "%s/%s.pub", dir, name);
	if (file_read(path, MB_ENVELOPE_MAX_LABEL, &text, &size, &err) < 0)
		return strdup("");
	while (n < size && text[n] >= 0x20 && text[n] != 0x7f)
		n++;
	label = strndup((const char *) text, n);
	free(text);
	return label;
}

/* Overwrite, flush, remove: the clear key's blocks get zeros where the file system writes in place. */
static int wipe_file(int dirfd, const char *dir, const char *name, mb_error *err)
{
	static const uint8_t zeros[4096];
	struct stat st;
	int fd = openat(dirfd, name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC), e;
	off_t done = 0;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		e = errno;
		if (fd >= 0)
			close(fd);
		return set_error(err, e ? -e : -EINVAL, "%s/%s: cannot overwrite: %s", dir, name, strerror(e));
	}
	while (done < st.st_size) {
		size_t chunk = (size_t) (st.st_size - done) < sizeof(zeros) ? (size_t) (st.st_size - done) : sizeof(zeros);

		if (fd_write_all(fd, zeros, chunk) < 0)
			break;
		done += (off_t) chunk;
	}
	if (done < st.st_size || fsync(fd) < 0) {
		e = errno;
		close(fd);
		return set_error(err, -EIO, "%s/%s: overwriting failed: %s", dir, name, strerror(e));
	}
	close(fd);
	if (unlinkat(dirfd, name, 0) < 0)
		return set_error(err, -errno, "%s/%s: %s", dir, name, strerror(errno));
	(void) fsync(dirfd);
	return 0;
}

/* Equal without a data-dependent early exit. */
static bool same_bytes(const uint8_t *a, const uint8_t *b, size_t n)
{
	uint8_t d = 0;

	for (size_t i = 0; i < n; i++)
		d |= a[i] ^ b[i];
	return d == 0;
}

/* Read and parse a sealed host key file. */
static int load_envelope(const char *path, mb_envelope **ret, mb_error *err)
{
	uint8_t *text = NULL;
	size_t size = 0;
	int rc = file_read(path, MB_ENVELOPE_MAX_FILE, &text, &size, err);

	if (rc < 0)
		return prefix_error(err, rc, path);
	rc = mb_envelope_parse((const char *) text, size, ret, err);
	free(text);
	return rc < 0 ? prefix_error(err, rc, path) : 0;
}

/* Read back what was written and unseal it: the clear key goes only when this gives it back. */
static int round_trip(mb_tpm *tpm, const char *path, const mb_unseal_options *uopt, const secret_page *key,
		      mb_error *err)
{
	static const mb_unseal_options none = MB_OPTIONS_INIT(mb_unseal_options);
	mb_envelope *e = NULL;
	secret_page back = { 0 };
	int rc = load_envelope(path, &e, err);

	if (rc < 0)
		return rc;
	if (secret_page_alloc(&back, mb_envelope_data_size(e)) < 0) {
		rc = set_error(err, -ENOMEM, "out of memory");
	} else {
		rc = mb_envelope_unseal(tpm, e, uopt ? uopt : &none, back.p, back.cap, NULL, err);
		if (rc < 0) {
			char msg[sizeof(err->message)];

			/* --values of another boot: sealed for it, but not checkable here */
			snprintf(msg, sizeof(msg), "%s", err->message);
			set_error(err, rc, "%s: does not unseal on this boot, so the clear key is kept: %s", path, msg);
		} else if (mb_envelope_data_size(e) != key->size || !same_bytes(back.p, key->p, key->size)) {
			rc = set_error(err, -EIO, "%s: unseals to other bytes than the key; the clear key is kept", path);
		}
	}
	secret_page_free(&back);
	mb_envelope_free(e);
	return rc;
}

static int seal_one(mb_tpm *tpm, int dirfd, const char *dir, const char *name, const mb_ssh_hostkey_seal_options *o,
		    mb_error *err)
{
	static const mb_seal_options no_seal = MB_OPTIONS_INIT(mb_seal_options);
	const mb_seal_options *sopt = o->seal ? o->seal : &no_seal;
	secret_page key = { 0 };
	mb_envelope *e = NULL;
	char out[4096], *label = NULL, *json = NULL;
	int rc;

	snprintf(out, sizeof(out), "%s/%s" SUFFIX, dir, name);
	rc = read_hostkey(dirfd, dir, name, &key, err);
	if (rc == 0 && !(label = public_label(dir, name)))
		rc = set_error(err, -ENOMEM, "out of memory");
	if (rc == 0 && (rc = mb_envelope_seal(tpm, key.p, key.size, label, sopt, &e, err)) < 0)
		prefix_error(err, rc, name);
	if (rc == 0 && !(json = mb_envelope_to_json(e)))
		rc = set_error(err, -ENOMEM, "out of memory");
	if (rc == 0 && (rc = file_write(out, json, strlen(json), 0600, o->force, err)) < 0) {
		if (rc == -EEXIST) /* made by someone else since the check */
			set_error(err, rc, "%s already exists; not replaced (give --force to replace it)", out);
		else
			prefix_error(err, rc, out);
	}
	if (rc == 0)
		rc = round_trip(tpm, out, o->unseal, &key, err);
	if (rc == 0)
		rc = wipe_file(dirfd, dir, name, err);
	if (rc == 0 && o->done) {
		char from[4096];

		snprintf(from, sizeof(from), "%s/%s", dir, name);
		o->done(from, out, o->userdata);
	}
	free(json);
	free(label);
	mb_envelope_free(e);
	secret_page_free(&key);
	return rc;
}

int mb_ssh_hostkey_seal(const char *tcti, const char *dir, const mb_ssh_hostkey_seal_options *opts_in,
			mb_error *err)
{
	mb_ssh_hostkey_seal_options opts;
	key_names k = { .n = 0 };
	mb_tpm *tpm = NULL;
	int rc, dirfd = -1;
	size_t i;

	rc = OPTIONS_TAKE(opts, opts_in, err);
	if (rc < 0 || (rc = list_hostkeys(dir, false, &k, err)) < 0)
		return rc;
	for (i = 0; i < k.n && !opts.force; i++) {
		char out[4096];
		struct stat st;

		snprintf(out, sizeof(out), "%s/%s" SUFFIX, dir, k.name[i]);
		if (lstat(out, &st) == 0) {
			rc = set_error(err, -EEXIST, "%s already exists; not replaced (give --force to replace it)", out);
			goto out;
		}
	}
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		rc = set_error(err, -errno, "%s: %s", dir, strerror(errno));
		goto out;
	}
	rc = mb_tpm_open(tcti, &tpm, err);
	for (i = 0; i < k.n && rc == 0; i++)
		rc = seal_one(tpm, dirfd, dir, k.name[i], &opts, err);
out:
	if (dirfd >= 0)
		close(dirfd);
	names_free(&k);
	mb_tpm_free(tpm);
	return rc;
}

/* The folder for the clear keys: ours, 0700 (made so when missing), not a link, on tmpfs or ramfs. */
static int open_keys_folder(const char *to, mb_error *err)
{
	struct statfs sf;
	struct stat st;
	int fd;

	if (mkdir(to, 0700) < 0 && errno != EEXIST)
		return set_error(err, -errno, "%s: %s", to, strerror(errno));
	fd = open(to, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return set_error(err, -EINVAL, "%s: %s", to,
				 errno == ENOTDIR || errno == ELOOP ? "not a folder (or a symbolic link)" : strerror(errno));
	if (fstat(fd, &st) < 0 || fstatfs(fd, &sf) < 0)
		set_error(err, -errno, "%s: %s", to, strerror(errno));
	else if (st.st_uid != geteuid() || (st.st_mode & 077))
		set_error(err, -EINVAL, "%s: must be ours and closed to others (mode 0700); it is mode %04o, owner %u", to,
			  (unsigned) (st.st_mode & 07777), (unsigned) st.st_uid);
	else if ((unsigned long) sf.f_type != TMPFS_MAGIC && (unsigned long) sf.f_type != RAMFS_MAGIC)
		set_error(err, -EINVAL, "%s: not on tmpfs or ramfs: a host key must never reach the disk in clear", to);
	else
		return fd;
	close(fd);
	return err && err->code ? err->code : -EINVAL;
}

/* NAME.mboot's clear name into clear (size > 0). */
static void clear_name(const char *sealed, char *clear, size_t size)
{
	snprintf(clear, size, "%.*s", (int) (strlen(sealed) - strlen(SUFFIX)), sealed);
}

/* Remove the keys of names from the folder: on a bad boot it holds none of them. */
static void remove_keys(int tofd, const key_names *k)
{
	for (size_t i = 0; i < k->n; i++) {
		char clear[256];

		if (strlen(k->name[i]) - strlen(SUFFIX) < sizeof(clear)) {
			clear_name(k->name[i], clear, sizeof(clear));
			(void) unlinkat(tofd, clear, 0);
		}
	}
}

static int unseal_one(mb_tpm *tpm, const char *dir, const char *name, const char *to, int tofd,
		      const mb_ssh_hostkey_unseal_options *o, mb_error *err)
{
	static const mb_unseal_options none = MB_OPTIONS_INIT(mb_unseal_options);
	const mb_unseal_options *uopt = o->unseal ? o->unseal : &none;
	mb_unseal_explanation **why = o->explanation;
	char path[4096], clear[256];
	mb_envelope *e = NULL;
	secret_page key = { 0 };
	int rc, fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	clear_name(name, clear, sizeof(clear));
	rc = load_envelope(path, &e, err);
	if (rc < 0)
		return rc;
	if ((mb_sealed_policy_kind(mb_envelope_sealed(e)) == MB_SEAL_POLICY_AUTHORIZE) != (uopt->n_signatures > 0)) {
		rc = set_error(err, -EINVAL, uopt->n_signatures ? "%s is sealed to PCR values: --signature does not apply"
								 : "%s is sealed to signed policies: give --signature SIG",
			       path);
		goto out;
	}
	if (secret_page_alloc(&key, mb_envelope_data_size(e)) < 0) {
		rc = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	rc = mb_envelope_unseal(tpm, e, uopt, key.p, key.cap, why, err);
	if (rc == MB_ERR_TPM_POLICY) {
		set_error(err, rc, "%s: not unsealed: this boot is not the one it is sealed to", path);
		goto out;
	}
	if (rc < 0) {
		prefix_error(err, rc, path);
		goto out;
	}
	key.size = mb_envelope_data_size(e);
	(void) unlinkat(tofd, clear, 0);
	fd = openat(tofd, clear, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || fd_write_all(fd, key.p, key.size) < 0 || close(fd) < 0) {
		rc = set_error(err, -EIO, "%s/%s: %s", to, clear, strerror(errno));
		if (fd >= 0)
			(void) unlinkat(tofd, clear, 0);
		goto out;
	}
	if (o->done) {
		char dest[4096];

		snprintf(dest, sizeof(dest), "%s/%s", to, clear);
		o->done(path, dest, o->userdata);
	}
out:
	secret_page_free(&key);
	mb_envelope_free(e);
	return rc;
}

int mb_ssh_hostkey_unseal(const char *tcti, const char *dir, const char *to,
			  const mb_ssh_hostkey_unseal_options *opts_in, mb_error *err)
{
	mb_ssh_hostkey_unseal_options opts;
	key_names k = { .n = 0 };
	mb_tpm *tpm = NULL;
	int rc, tofd;
	size_t i;

	rc = OPTIONS_TAKE(opts, opts_in, err);
	if (rc < 0)
		return rc;
	if (opts.explanation)
		*opts.explanation = NULL;
	rc = list_hostkeys(dir, true, &k, err);
	if (rc < 0)
		return rc;
	tofd = open_keys_folder(to, err);
	if (tofd < 0) {
		names_free(&k);
		return tofd;
	}
	rc = mb_tpm_open(tcti, &tpm, err);
	for (i = 0; i < k.n && rc == 0; i++)
		rc = unseal_one(tpm, dir, k.name[i], to, tofd, &opts, err);
	if (rc < 0)
		remove_keys(tofd, &k);
	close(tofd);
	names_free(&k);
	mb_tpm_free(tpm);
	return rc;
}
