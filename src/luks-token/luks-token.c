/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libcryptsetup-token-mboot.so: the cryptsetup token plugin for "mboot" LUKS2 tokens
 * (docs/luks.md), so that `cryptsetup open` and `systemd-cryptsetup` unseal the disk key
 * with no mboot on the command line. ABI: libcryptsetup.h "CRYPTSETUP_TOKEN_1.0" (the
 * symbols are versioned by luks-token.sym). The work is libmboot's (mb_luks_token_*); this
 * is the glue: the TPM is $TPM2TOOLS_TCTI, else device:/dev/tpmrm0, as for mboot, and a
 * refusal is logged with crypt_log (which PCRs and events differ), before cryptsetup
 * falls back to asking for a passphrase.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <libcryptsetup.h>
#include <openssl/crypto.h>

#include <mboot/luks.h>
#include <mboot/seal.h>
#include <mboot/tpm.h>
#include <mboot/version.h>
#include "shared/fail.h"
#include "shared/fileio.h"

#define PLUGIN_EXPORT __attribute__((visibility("default")))

/* The firmware event log of this boot, to say which events changed. */
#define SYSTEM_LOG "/sys/kernel/security/tpm0/binary_bios_measurements"

/*
 * A key sealed --authorized-by needs a release's signed policy: the plugin tries every
 * "*.sig" file of this folder ($MBOOT_SIGNATURE_DIR overrides it), in name order, at most
 * SIGNATURES_MAX of at most SIGNATURE_FILE_MAX bytes each (they are untrusted input).
 */
#ifndef MBOOT_SIGNATURE_DIR
#define MBOOT_SIGNATURE_DIR "/etc/mboot/signatures"
#endif
#define SIGNATURES_MAX 32
#define SIGNATURE_FILE_MAX (64u << 10)

PLUGIN_EXPORT const char *cryptsetup_token_version(void);
PLUGIN_EXPORT int cryptsetup_token_open(struct crypt_device *cd, int token, char **buffer, size_t *buffer_len,
					void *usrptr);
PLUGIN_EXPORT int cryptsetup_token_open_pin(struct crypt_device *cd, int token, const char *pin, size_t pin_size,
					    char **buffer, size_t *buffer_len, void *usrptr);
PLUGIN_EXPORT void cryptsetup_token_buffer_free(void *buffer, size_t buffer_len);
PLUGIN_EXPORT int cryptsetup_token_validate(struct crypt_device *cd, const char *json);
PLUGIN_EXPORT void cryptsetup_token_dump(struct crypt_device *cd, const char *json);

const char *cryptsetup_token_version(void)
{
	return mb_version();
}

static size_t page_size(void)
{
	long n = sysconf(_SC_PAGESIZE);

	return n > 0 ? (size_t) n : 4096;
}

/* text without its last newline (libcryptsetup's log ends each message with one); "" for NULL */
static const char *chomp(char *text)
{
	size_t n = text ? strlen(text) : 0;

	if (n && text[n - 1] == '\n')
		text[n - 1] = '\0';
	return text ? text : "";
}

static int token_get(struct crypt_device *cd, int token, mb_luks_token **ret)
{
	const char *json = NULL;
	mb_error err = { 0 };
	int r = crypt_token_json_get(cd, token, &json);

	*ret = NULL;
	if (r < 0)
		return r;
	r = mb_luks_token_parse(json, strlen(json), ret, &err);
	if (r < 0) {
		crypt_logf(cd, CRYPT_LOG_ERROR, "mboot: token %d is malformed: %s\n", token, err.message);
		return r == -ENOMEM ? r : -EINVAL;
	}
	return 0;
}

typedef struct signature_set {
	mb_policy_signature sigs[SIGNATURES_MAX];
	char *names[SIGNATURES_MAX];
	size_t n;
} signature_set;

static int is_signature_file(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return d->d_name[0] != '.' && n > 4 && strcmp(d->d_name + n - 4, ".sig") == 0;
}

/* The whole of dir/name, at most SIGNATURE_FILE_MAX bytes (not following a link). */
static int read_signature_file(int dir_fd, const char *name, uint8_t **ret, size_t *ret_size, mb_error *err)
{
	int fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK), r;

	if (fd < 0)
		return set_error(err, -errno, "%s", strerror(errno));
	r = file_read_fd(fd, SIGNATURE_FILE_MAX, ret, ret_size, err);
	close(fd);
	return r;
}

/* The signed policies of the folder, each that parses; the others are logged and skipped. */
static void signatures_load(struct crypt_device *cd, int token, signature_set *set)
{
	const char *dir = getenv("MBOOT_SIGNATURE_DIR");
	struct dirent **list = NULL;
	int dir_fd, n, i;

	if (!dir || !*dir)
		dir = MBOOT_SIGNATURE_DIR;
	dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	n = dir_fd < 0 ? -1 : scandir(dir, &list, is_signature_file, alphasort);
	if (n < 0) {
		crypt_logf(cd, CRYPT_LOG_ERROR, "mboot: token %d is sealed to signed policies, and %s cannot be read: %s\n",
			   token, dir, strerror(errno));
		if (dir_fd >= 0)
			close(dir_fd);
		return;
	}
	for (i = 0; i < n; i++) {
		mb_error err = { 0 };
		size_t size = 0;
		uint8_t *text = NULL;

		if (set->n == SIGNATURES_MAX)
			crypt_logf(cd, CRYPT_LOG_ERROR, "mboot: %s/%s: over %d signatures, not tried\n", dir,
				   list[i]->d_name, SIGNATURES_MAX);
		else if (read_signature_file(dir_fd, list[i]->d_name, &text, &size, &err) < 0 ||
			 mb_policy_signature_parse((const char *) text, size, &set->sigs[set->n], &err) < 0)
			crypt_logf(cd, CRYPT_LOG_ERROR, "mboot: %s/%s: %s\n", dir, list[i]->d_name, err.message);
		else if (!(set->names[set->n] = strdup(list[i]->d_name)))
			mb_policy_signature_done(&set->sigs[set->n]);
		else
			set->n++;
		free(text);
		free(list[i]);
	}
	free(list);
	close(dir_fd);
	if (set->n == 0)
		crypt_logf(cd, CRYPT_LOG_ERROR, "mboot: token %d is sealed to signed policies, and %s holds no valid "
			   "*.sig file\n", token, dir);
}

static void signatures_free(signature_set *set)
{
	for (size_t i = 0; i < set->n; i++) {
		mb_policy_signature_done(&set->sigs[i]);
		free(set->names[i]);
	}
	set->n = 0;
}

/*
 * The key goes into one locked page of ours, given to libcryptsetup as the passphrase;
 * it hands the page back to cryptsetup_token_buffer_free, which wipes it. pin: the PIN
 * cryptsetup asked for (open_pin), or NULL.
 */
static int token_open(struct crypt_device *cd, int token, const char *pin, size_t pin_size, char **buffer,
		      size_t *buffer_len, void *usrptr)
{
	mb_unseal_options opt = { .size = sizeof(mb_unseal_options), .log_path = SYSTEM_LOG, .pin = (const uint8_t *) pin, .pin_size = pin_size };
	mb_unseal_explanation *e = NULL;
	mb_luks_token *t = NULL;
	signature_set sigs = { .n = 0 };
	mb_error err = { 0 };
	mb_tpm *tpm = NULL;
	size_t size = 0, cap = page_size();
	uint8_t *key = NULL;
	char *text;
	int r;

	(void) usrptr;
	*buffer = NULL;
	*buffer_len = 0;
	r = token_get(cd, token, &t);
	if (r < 0)
		return r;
	/* TPM + PIN: libcryptsetup asks for the PIN ("Enter token PIN:") and calls open_pin */
	if (mb_luks_token_pin(t) && (!pin || !pin_size)) {
		mb_luks_token_free(t);
		return -ENOANO;
	}
	key = aligned_alloc(cap, cap);
	if (!key) {
		mb_luks_token_free(t);
		return -ENOMEM;
	}
	(void) mlock(key, cap);
	(void) madvise(key, cap, MADV_DONTDUMP);
	/* tpm2-tss's own log lines would land between cryptsetup's; the refusal is said below */
	setenv("TSS2_LOG", "all+none", 0);
	r = mb_tpm_open(NULL, &tpm, &err);
	if (r < 0) {
		/* no TPM here: "requires additional hardware not present" */
		crypt_logf(cd, CRYPT_LOG_ERROR, "mboot: token %d: %s\n", token, err.message);
		r = -EAGAIN;
		goto fail;
	}
	if (strcmp(mb_luks_token_policy(t), "authorize") == 0) {
		signatures_load(cd, token, &sigs);
		opt.signatures = sigs.sigs;
		opt.signature_names = (const char *const *) sigs.names;
		opt.n_signatures = sigs.n;
	}
	r = mb_luks_token_unseal(tpm, t, &opt, key, &size, &e, &err);
	if (r == MB_ERR_TPM_POLICY) {
		text = mb_luks_explanation_text(e);
		crypt_logf(cd, CRYPT_LOG_ERROR, "mboot: token %d: the disk key is not released on this boot.\n%s", token,
			   chomp(text));
		free(text);
		r = -EPERM;
		goto fail;
	}
	if (r == MB_ERR_TPM_AUTH) {
		mb_tpm_da_status da;

		/* -ENOANO: the PIN was wrong (libcryptsetup.h, crypt_token_open_pin_func) */
		if (mb_tpm_da_status_read(tpm, &da, NULL) == 0 && !da.in_lockout && da.counter < da.max_tries)
			crypt_logf(cd, CRYPT_LOG_ERROR, "mboot: token %d: wrong PIN (the TPM counts failed attempts: %u "
				   "more before lockout)\n", token, da.max_tries - da.counter);
		else
			crypt_logf(cd, CRYPT_LOG_ERROR, "mboot: token %d: wrong PIN (the TPM counts failed attempts "
				   "toward its dictionary-attack lockout)\n", token);
		r = -ENOANO;
		goto fail;
	}
	if (r < 0) {
		text = e ? mb_luks_explanation_text(e) : NULL;
		crypt_logf(cd, CRYPT_LOG_ERROR, "mboot: token %d: %s\n%s", token, err.message, chomp(text));
		free(text);
		r = r == -ENOMEM ? r : -EIO;
		goto fail;
	}
	mb_unseal_explanation_free(e);
	signatures_free(&sigs);
	mb_luks_token_free(t);
	mb_tpm_free(tpm);
	*buffer = (char *) key;
	*buffer_len = size;
	return 0;
fail:
	mb_unseal_explanation_free(e);
	signatures_free(&sigs);
	mb_luks_token_free(t);
	mb_tpm_free(tpm);
	cryptsetup_token_buffer_free(key, size);
	return r;
}

int cryptsetup_token_open(struct crypt_device *cd, int token, char **buffer, size_t *buffer_len, void *usrptr)
{
	return token_open(cd, token, NULL, 0, buffer, buffer_len, usrptr);
}

int cryptsetup_token_open_pin(struct crypt_device *cd, int token, const char *pin, size_t pin_size, char **buffer,
			      size_t *buffer_len, void *usrptr)
{
	return token_open(cd, token, pin, pin_size, buffer, buffer_len, usrptr);
}

void cryptsetup_token_buffer_free(void *buffer, size_t buffer_len)
{
	size_t cap = page_size();

	(void) buffer_len;
	if (!buffer)
		return;
	/* the whole page: it is ours, and what the TPM returned is in it */
	OPENSSL_cleanse(buffer, cap);
	(void) munlock(buffer, cap);
	free(buffer);
}

int cryptsetup_token_validate(struct crypt_device *cd, const char *json)
{
	mb_luks_token *t = NULL;
	mb_error err = { 0 };
	int r = mb_luks_token_parse(json, strlen(json), &t, &err);

	if (r < 0) {
		crypt_logf(cd, CRYPT_LOG_ERROR, "mboot: malformed token: %s\n", err.message);
		return r == -ENOMEM ? r : -EINVAL;
	}
	mb_luks_token_free(t);
	return 0;
}

void cryptsetup_token_dump(struct crypt_device *cd, const char *json)
{
	mb_luks_token *t = NULL;
	mb_error err = { 0 };
	char *text;

	if (mb_luks_token_parse(json, strlen(json), &t, &err) < 0) {
		crypt_logf(cd, CRYPT_LOG_NORMAL, "\tmalformed mboot token: %s\n", err.message);
		return;
	}
	text = mb_luks_token_describe(t);
	if (text)
		crypt_log(cd, CRYPT_LOG_NORMAL, text);
	free(text);
	mb_luks_token_free(t);
}
