/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mboot ssh-hostkey: SSH host keys sealed to a good boot (docs/ssh.md). `seal` puts each
 * clear host key into an envelope (mb_envelope_seal: AES-256-GCM under a TPM-sealed data
 * key), checks that it unseals, then removes the clear key; `unseal` puts the keys into a
 * tmpfs folder for sshd, or nothing at all when the boot is not the sealed one.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <nettle/memops.h>

#include "shared/secret-page.h"
#include "shared/fileio.h"
#include "tool/options.h"
#include "tool/seal-common.h"
#include "tool/tool.h"
#include "tool/verbs.h"

#define SSH_DIR_DEFAULT "/etc/ssh"
#define SSH_TO_DEFAULT "/run/mboot/ssh"
#define SEALED_SUFFIX ".mboot"
/* A host key file: OpenSSH's own are under 4 KiB (RSA 4096); 64 KiB leaves room for RSA 16384. */
#define HOSTKEY_MAX (64u << 10)
#define HOSTKEYS_MAX 16

#define SEAL_USAGE \
	"Usage: mboot ssh-hostkey seal [--dir DIR] --pcrs LIST [--bank NAME] [--values current|FILE]\n" \
	"                              [--log LOG] [--force] [--tcti TCTI]\n" \
	"       mboot ssh-hostkey seal [--dir DIR] --authorized-by PUBKEY --signature SIG [--tcti TCTI]\n"
#define UNSEAL_USAGE \
	"       mboot ssh-hostkey unseal [--dir DIR] [--to FOLDER] [--signature SIG ...] [--log LOG]\n" \
	"                                [--tcti TCTI]\n"
#define SEAL_TEXT \
	"seal: for each clear host key DIR/ssh_host_*_key, write DIR/ssh_host_*_key.mboot (JSON,\n" \
	"0600, atomically): the key encrypted with AES-256-GCM under a fresh data key that the TPM\n" \
	"seals to the PCRs (as 'mboot seal' does), and the .pub line as its label. Each sealed\n" \
	"file is read back and unsealed before the clear key is overwritten and removed; the .pub\n" \
	"files stay. Overwriting does not reach old copies on SSDs or journaling file systems: a\n" \
	"disk that was ever copied has exposed the old keys (make new ones first: ssh-keygen -A).\n"
#define UNSEAL_TEXT \
	"unseal: put each DIR/ssh_host_*_key.mboot's key into FOLDER (made 0700 when missing,\n" \
	"files 0600), which must be on tmpfs or ramfs: a host key never touches the disk in\n" \
	"clear. When the PCRs are not a sealed state: exit 1 naming the PCRs (and, with the\n" \
	"event logs, the events) that differ, and FOLDER holds none of the keys.\n"
#define TCTI_TEXT "  --tcti TCTI        the TPM; default $TPM2TOOLS_TCTI, else " MB_TPM_DEFAULT_TCTI "\n"

static const char ssh_hostkey_help[] =
	SEAL_USAGE UNSEAL_USAGE "\n"
	"SSH host keys that only a good boot has (docs/ssh.md).\n\n" SEAL_TEXT "\n" UNSEAL_TEXT "\n"
	"'mboot ssh-hostkey seal --help' and 'unseal --help' list the options.\n\n"
	"Exit: 0 done, 1 the PCRs are not the sealed ones (seal: the clear keys are kept),\n"
	"2 usage or input error, 3 TPM error.\n";

static const char ssh_seal_help[] =
	SEAL_USAGE "\n" SEAL_TEXT "\n"
	"  --dir DIR          the host keys' folder (default " SSH_DIR_DEFAULT ")\n"
	"  --pcrs LIST        the PCRs to seal to, e.g. 0,2,4,7\n"
	"  --bank NAME        their bank (default sha256)\n"
	"  --values current|FILE  the PCR values (default: the TPM's now); FILE: PCR-values JSON.\n"
	"                     Values of another boot cannot be checked here: the sealed files\n"
	"                     are written, the clear keys kept, exit 1\n"
	"  --authorized-by PUBKEY  instead of PCR values: any PCR state the owner of PUBKEY signs\n"
	"                     ('mboot policy sign'; docs/seal.md)\n"
	"  --signature SIG    with --authorized-by: a signed policy for this boot (the round trip)\n"
	"  --log LOG          the event log kept in each sealed file, to explain a refused unseal\n"
	"                     (default " MB_DEFAULT_LOG " when readable)\n"
	"  --force            replace an existing ssh_host_*_key.mboot\n"
	TCTI_TEXT "\n"
	"Exit: 0 sealed (every clear key removed), 1 a sealed file does not unseal on this boot\n"
	"(the clear key is kept), 2 usage or input error, 3 TPM error.\n";

static const char ssh_unseal_help[] =
	"Usage: mboot ssh-hostkey unseal [--dir DIR] [--to FOLDER] [--signature SIG ...] [--log LOG]\n"
	"                                [--tcti TCTI]\n\n" UNSEAL_TEXT "\n"
	"  --dir DIR          the sealed keys' folder (default " SSH_DIR_DEFAULT ")\n"
	"  --to FOLDER        where the keys go (default " SSH_TO_DEFAULT ")\n"
	"  --signature SIG    for keys sealed --authorized-by: a signed policy; up to 8, the one\n"
	"                     whose values the PCRs hold is used\n"
	"  --log LOG          today's event log, to name the events that differ (default\n"
	"                     " MB_DEFAULT_LOG ")\n"
	TCTI_TEXT "\n"
	"Exit: 0 unsealed, 1 the PCRs are not the sealed ones (FOLDER holds no key), 2 usage or\n"
	"input error (also a changed sealed file, a FOLDER not on tmpfs), 3 TPM error.\n";

/* A clear host key's buffer (shared/secret-page.h): locked, out of core dumps, wiped. */
typedef secret_page key_buf;

static int key_alloc(key_buf *k, size_t size)
{
	if (secret_page_alloc(k, size) < 0) {
		tool_errorf("out of memory");
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/* ssh_host_<type>_key (sealed: with SEALED_SUFFIX), <type> lowercase letters and digits. */
static bool hostkey_name(const char *name, bool sealed)
{
	static const char prefix[] = "ssh_host_", suffix[] = "_key";
	size_t n = strlen(name), tail = strlen(suffix) + (sealed ? strlen(SEALED_SUFFIX) : 0), i;

	if (n <= strlen(prefix) + tail || strncmp(name, prefix, strlen(prefix)) != 0 ||
	    strncmp(name + n - tail, suffix, strlen(suffix)) != 0 ||
	    (sealed && strcmp(name + n - strlen(SEALED_SUFFIX), SEALED_SUFFIX) != 0))
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

/* The host key files of dir (clear or sealed), sorted; reports and returns EXIT_USAGE on failure. */
static int list_hostkeys(const char *dir, bool sealed, char *names[HOSTKEYS_MAX], size_t *n)
{
	struct dirent **ents = NULL;
	int m = scandir(dir, &ents, NULL, by_name), rc = EXIT_OK;

	*n = 0;
	if (m < 0) {
		tool_errorf("%s: %s", dir, strerror(errno));
		return EXIT_USAGE;
	}
	for (int i = 0; i < m; i++) {
		if (rc == EXIT_OK && hostkey_name(ents[i]->d_name, sealed)) {
			if (*n == HOSTKEYS_MAX) {
				tool_errorf("%s: more than %d host keys", dir, HOSTKEYS_MAX);
				rc = EXIT_USAGE;
			} else if (!(names[(*n)++] = strdup(ents[i]->d_name))) {
				(*n)--;
				tool_errorf("out of memory");
				rc = EXIT_USAGE;
			}
		}
		free(ents[i]);
	}
	free(ents);
	if (rc == EXIT_OK && *n == 0) {
		tool_errorf("%s: no %s", dir, sealed ? "sealed host keys (ssh_host_*_key" SEALED_SUFFIX ")"
						      : "clear host keys (ssh_host_*_key): nothing to seal");
		rc = EXIT_USAGE;
	}
	return rc;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
}

/* A clear host key: a regular file (not a link), 1 to HOSTKEY_MAX bytes, a PEM-armoured private key. */
static int read_hostkey(int dirfd, const char *dir, const char *name, key_buf *k)
{
	struct stat st;
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK), rc = EXIT_USAGE;

	if (fd < 0) {
		tool_errorf("%s/%s: %s", dir, name, strerror(errno));
		return EXIT_USAGE;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 || (uint64_t) st.st_size > HOSTKEY_MAX) {
		tool_errorf("%s/%s: not a regular file of 1 to %u bytes", dir, name, HOSTKEY_MAX);
		goto out;
	}
	/* one byte more than the size: a file that grows meanwhile is seen */
	if (key_alloc(k, (size_t) st.st_size + 1))
		goto out;
	for (;;) {
		ssize_t r = fd_read_some(fd, k->p + k->size, k->cap - k->size);

		if (r < 0) {
			tool_errorf("%s/%s: %s", dir, name, strerror((int) -r));
			goto out;
		}
		if (r == 0 || (k->size += (size_t) r) == k->cap)
			break;
	}
	if (k->size != (size_t) st.st_size) {
		tool_errorf("%s/%s: changed while read", dir, name);
		goto out;
	}
	if (k->size < 11 || memcmp(k->p, "-----BEGIN ", 11) != 0) {
		tool_errorf("%s/%s: not a PEM-armoured private key (-----BEGIN ...)", dir, name);
		goto out;
	}
	rc = EXIT_OK;
out:
	close(fd);
	return rc;
}

/* The first line of NAME.pub, the label of NAME's envelope ("" when there is none). */
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
static int wipe_file(int dirfd, const char *dir, const char *name)
{
	static const uint8_t zeros[4096];
	struct stat st;
	int fd = openat(dirfd, name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	off_t done = 0;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		tool_errorf("%s/%s: cannot overwrite: %s", dir, name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return EXIT_USAGE;
	}
	while (done < st.st_size) {
		size_t chunk = (size_t) (st.st_size - done) < sizeof(zeros) ? (size_t) (st.st_size - done) : sizeof(zeros);

		if (fd_write_all(fd, zeros, chunk) < 0)
			break;
		done += (off_t) chunk;
	}
	if (done < st.st_size || fsync(fd) < 0) {
		tool_errorf("%s/%s: overwriting failed: %s", dir, name, strerror(errno));
		close(fd);
		return EXIT_USAGE;
	}
	close(fd);
	if (unlinkat(dirfd, name, 0) < 0) {
		tool_errorf("%s/%s: %s", dir, name, strerror(errno));
		return EXIT_USAGE;
	}
	(void) fsync(dirfd);
	return EXIT_OK;
}

typedef struct hostkey_args {
	const char *dir, *to, *tcti, *log, *values, *authority;
	const mb_digest_info *bank;
	uint32_t mask;
	bool force;
	char *sigs[MAX_SIGNATURES];
	size_t n_sigs;
} hostkey_args;

static int signature_option(void *target, const char *arg, const char *verb)
{
	hostkey_args *a = target;

	if (a->n_sigs == MAX_SIGNATURES)
		return tool_usage_error(verb, "at most %d --signature", MAX_SIGNATURES);
	a->sigs[a->n_sigs++] = (char *) arg;
	return EXIT_OK;
}

/* The signatures of args, parsed; reports and returns EXIT_USAGE. */
static int load_signatures(const hostkey_args *a, mb_policy_signature *sigs)
{
	for (size_t i = 0; i < a->n_sigs; i++) {
		uint8_t *text = NULL;
		size_t size = 0;
		mb_error err = { 0 };
		int r;

		if (read_whole(a->sigs[i], 1u << 20, &text, &size))
			return EXIT_USAGE;
		r = mb_policy_signature_parse((const char *) text, size, &sigs[i], &err);
		free(text);
		if (r < 0) {
			tool_report(a->sigs[i], &err);
			return EXIT_USAGE;
		}
	}
	return EXIT_OK;
}

/* Read and parse a sealed host key file; reported, EXIT_USAGE, on failure. */
static int load_envelope(const char *path, mb_envelope **ret)
{
	uint8_t *text = NULL;
	size_t size = 0;
	mb_error err = { 0 };
	int rc = read_whole(path, MB_ENVELOPE_MAX_FILE, &text, &size), r;

	if (rc)
		return rc;
	r = mb_envelope_parse((const char *) text, size, ret, &err);
	free(text);
	if (r < 0) {
		tool_report(path, &err);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/* Read back what was written and unseal it: the clear key goes only when this gives it back. */
static int round_trip(mb_tpm *tpm, const char *path, const mb_unseal_options *uopt, const key_buf *key)
{
	mb_envelope *e = NULL;
	mb_error err = { 0 };
	key_buf back = { 0 };
	int rc = load_envelope(path, &e), r;

	if (rc)
		return rc;
	rc = key_alloc(&back, mb_envelope_data_size(e));
	if (rc == EXIT_OK) {
		r = mb_envelope_unseal(tpm, e, uopt, back.p, back.cap, NULL, &err);
		if (r < 0) {
			tool_errorf("%s: does not unseal on this boot, so the clear key is kept: %s", path, err.message);
			/* --values of another boot: sealed for it, but not checkable here (exit 1) */
			rc = r == MB_ERR_TPM_POLICY ? EXIT_FAILED
			     : mb_error_is_tpm(r) ? EXIT_TPM : EXIT_USAGE;
		} else if (mb_envelope_data_size(e) != key->size || !memeql_sec(back.p, key->p, key->size)) {
			tool_errorf("%s: unseals to other bytes than the key; the clear key is kept", path);
			rc = EXIT_USAGE;
		}
	}
	secret_page_free(&back);
	mb_envelope_free(e);
	return rc;
}

static int ssh_seal(int argc, char **argv)
{
	hostkey_args a = { .dir = SSH_DIR_DEFAULT };
	const tool_option options[] = {
		TOOL_OPT_STR("dir", 0, &a.dir),
		TOOL_OPT_PCR_LIST("pcrs", 0, &a.mask),
		TOOL_OPT_ONE_BANK("bank", 0, &a.bank),
		TOOL_OPT_STR("values", 0, &a.values),
		TOOL_OPT_STR("authorized-by", 0, &a.authority),
		TOOL_OPT_FN("signature", 0, &a, signature_option),
		TOOL_OPT_STR("log", 0, &a.log),
		TOOL_OPT_BOOL("force", 0, &a.force),
		TOOL_OPT_STR("tcti", 0, &a.tcti),
		TOOL_OPT_END,
	};
	mb_policy_signature sigs[MAX_SIGNATURES];
	mb_unseal_options uopt = MB_OPTIONS_INIT(mb_unseal_options);
	mb_seal_options opt = MB_OPTIONS_INIT(mb_seal_options);
	mb_pcr_bank given;
	char *names[HOSTKEYS_MAX];
	size_t n = 0, i;
	uint8_t *auth_key = NULL, *log = NULL;
	size_t auth_key_size = 0, log_size = 0;
	mb_tpm *tpm = NULL;
	int rc, dirfd = -1;

	memset(sigs, 0, sizeof(sigs));
	rc = tool_parse_options("ssh-hostkey seal", ssh_seal_help, options, argc, argv, 0);
	if (rc != TOOL_OPTS_GO_ON)
		return rc;
	if (a.authority && (a.mask || a.values || a.bank))
		return tool_usage_error("ssh-hostkey seal", "--authorized-by takes no --pcrs, --values or --bank");
	if (!a.authority && !a.mask)
		return tool_usage_error("ssh-hostkey seal", "give --pcrs LIST (or --authorized-by PUBKEY)");
	if (!a.authority && a.n_sigs)
		return tool_usage_error("ssh-hostkey seal", "--signature goes with --authorized-by");
	if (a.authority && !a.n_sigs)
		return tool_usage_error("ssh-hostkey seal", "--authorized-by needs --signature SIG, a signed policy "
					"for this boot: each key is unsealed before its clear file is removed");

	/* The files first: a bad values file, key or log is an input error before any TPM work. */
	if (a.authority) {
		rc = read_authority_key(a.authority, &auth_key, &auth_key_size);
		if (rc)
			goto out;
		opt.authority_public = auth_key;
		opt.authority_public_size = auth_key_size;
		rc = load_signatures(&a, sigs);
		if (rc)
			goto out;
		uopt.signatures = sigs;
		uopt.signature_names = (const char *const *) a.sigs;
		uopt.n_signatures = a.n_sigs;
	} else {
		opt.pcr_mask = a.mask;
		opt.bank = a.bank ? a.bank->alg : MB_ALG_SHA256;
		if (a.values && strcmp(a.values, "current") != 0) {
			rc = tool_load_pcr_bank(a.values, opt.bank, a.mask, "PCRs to seal to", &given);
			if (rc)
				goto out;
			opt.values = &given;
		}
	}
	rc = read_kept_log(a.log, &log, &log_size);
	if (rc)
		goto out;
	opt.eventlog = log;
	opt.eventlog_size = log_size;

	rc = list_hostkeys(a.dir, false, names, &n);
	if (rc)
		goto out;
	for (i = 0; i < n; i++) {
		char out[4096];

		snprintf(out, sizeof(out), "%s/%s" SEALED_SUFFIX, a.dir, names[i]);
		rc = tool_check_output("ssh-hostkey seal", out, a.force);
		if (rc)
			goto out;
	}
	dirfd = open(a.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		tool_errorf("%s: %s", a.dir, strerror(errno));
		rc = EXIT_USAGE;
		goto out;
	}
	rc = tool_tpm_open(a.tcti, &tpm);
	if (rc)
		goto out;
	for (i = 0; i < n && rc == EXIT_OK; i++) {
		key_buf key = { 0 };
		mb_envelope *e = NULL;
		mb_error err = { 0 };
		char out[4096], *label = NULL, *json = NULL;
		int r;

		snprintf(out, sizeof(out), "%s/%s" SEALED_SUFFIX, a.dir, names[i]);
		rc = read_hostkey(dirfd, a.dir, names[i], &key);
		if (rc == EXIT_OK && !(label = public_label(a.dir, names[i]))) {
			tool_errorf("out of memory");
			rc = EXIT_USAGE;
		}
		if (rc == EXIT_OK) {
			r = mb_envelope_seal(tpm, key.p, key.size, label, &opt, &e, &err);
			if (r < 0)
				rc = mb_error_is_tpm(r) ? tpm_error_exit(&err)
									    : (tool_report(names[i], &err), EXIT_USAGE);
		}
		if (rc == EXIT_OK && !(json = mb_envelope_to_json(e))) {
			tool_errorf("out of memory");
			rc = EXIT_USAGE;
		}
		if (rc == EXIT_OK)
			rc = tool_write_output("ssh-hostkey seal", out, json, strlen(json), 0600, a.force);
		if (rc == EXIT_OK)
			rc = round_trip(tpm, out, &uopt, &key);
		if (rc == EXIT_OK)
			rc = wipe_file(dirfd, a.dir, names[i]);
		if (rc == EXIT_OK)
			printf("%s/%s -> %s (clear key overwritten and removed)\n", a.dir, names[i], out);
		free(json);
		free(label);
		mb_envelope_free(e);
		secret_page_free(&key);
	}
out:
	if (dirfd >= 0)
		close(dirfd);
	for (i = 0; i < a.n_sigs; i++)
		mb_policy_signature_done(&sigs[i]);
	free_names(names, n);
	free(auth_key);
	free(log);
	mb_tpm_free(tpm);
	return rc;
}

/* FOLDER for the clear keys: ours, 0700 (made so when missing), not a link, on tmpfs or ramfs. */
static int open_keys_folder(const char *to)
{
	struct statfs sf;
	struct stat st;
	int fd;

	if (mkdir(to, 0700) < 0 && errno != EEXIST) {
		tool_errorf("%s: %s", to, strerror(errno));
		return -1;
	}
	fd = open(to, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		tool_errorf("%s: %s", to, errno == ENOTDIR || errno == ELOOP ? "not a folder (or a symbolic link)"
									      : strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || fstatfs(fd, &sf) < 0) {
		tool_errorf("%s: %s", to, strerror(errno));
	} else if (st.st_uid != geteuid() || (st.st_mode & 077)) {
		tool_errorf("%s: must be ours and closed to others (mode 0700); it is mode %04o, owner %u", to,
			    (unsigned) (st.st_mode & 07777), (unsigned) st.st_uid);
	} else if ((unsigned long) sf.f_type != TMPFS_MAGIC && (unsigned long) sf.f_type != RAMFS_MAGIC) {
		tool_errorf("%s: not on tmpfs or ramfs: a host key must never reach the disk in clear", to);
	} else {
		return fd;
	}
	close(fd);
	return -1;
}

/* Remove the keys of names from the folder: on a bad boot it holds none of them. */
static void remove_keys(int tofd, char **names, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(names[i]) - strlen(SEALED_SUFFIX);
		char clear[256];

		if (len < sizeof(clear)) {
			memcpy(clear, names[i], len);
			clear[len] = '\0';
			(void) unlinkat(tofd, clear, 0);
		}
	}
}

static int unseal_one(mb_tpm *tpm, const hostkey_args *a, const char *name, int tofd)
{
	char path[4096], clear[256];
	size_t len = strlen(name) - strlen(SEALED_SUFFIX);
	mb_envelope *e = NULL;
	mb_error err = { 0 };
	secret_buf dkey = { 0 };
	key_buf key = { 0 };
	int rc, fd;

	snprintf(path, sizeof(path), "%s/%s", a->dir, name);
	snprintf(clear, sizeof(clear), "%.*s", (int) len, name);
	rc = load_envelope(path, &e);
	if (rc)
		return rc;
	if ((mb_sealed_policy_kind(mb_envelope_sealed(e)) == MB_SEAL_POLICY_AUTHORIZE) != (a->n_sigs > 0)) {
		rc = tool_usage_error("ssh-hostkey unseal", a->n_sigs ? "%s is sealed to PCR values: --signature does not apply"
								     : "%s is sealed to signed policies: give --signature SIG",
				      path);
		mb_envelope_free(e);
		return rc;
	}
	rc = secret_alloc(&dkey);
	if (rc == EXIT_OK)
		rc = key_alloc(&key, mb_envelope_data_size(e));
	if (rc == EXIT_OK) {
		/* the library explains a refusal (which PCRs, which events); unseal_to_secret says it */
		rc = unseal_to_secret(tpm, mb_envelope_sealed(e), a->log ? a->log : MB_DEFAULT_LOG, (char **) a->sigs,
				      a->n_sigs, NULL, &dkey, NULL);
		if (rc == EXIT_FAILED)
			tool_errorf("%s: not unsealed: this boot is not the one it is sealed to", path);
	}
	if (rc == EXIT_OK && (dkey.size != MB_ENVELOPE_KEY_SIZE ||
			      mb_envelope_open(e, dkey.p, key.p, key.cap, &err) < 0)) {
		tool_errorf("%s: %s", path, dkey.size != MB_ENVELOPE_KEY_SIZE ? "the sealed data key is not 32 bytes"
										: err.message);
		rc = EXIT_USAGE;
	}
	if (rc == EXIT_OK) {
		key.size = mb_envelope_data_size(e);
		(void) unlinkat(tofd, clear, 0);
		fd = openat(tofd, clear, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 || fd_write_all(fd, key.p, key.size) < 0 || close(fd) < 0) {
			tool_errorf("%s/%s: %s", a->to, clear, strerror(errno));
			if (fd >= 0)
				(void) unlinkat(tofd, clear, 0);
			rc = EXIT_USAGE;
		} else {
			printf("%s -> %s/%s\n", path, a->to, clear);
		}
	}
	secret_page_free(&key);
	secret_free(&dkey);
	mb_envelope_free(e);
	return rc;
}

static int ssh_unseal(int argc, char **argv)
{
	hostkey_args a = { .dir = SSH_DIR_DEFAULT, .to = SSH_TO_DEFAULT };
	const tool_option options[] = {
		TOOL_OPT_STR("dir", 0, &a.dir),
		TOOL_OPT_STR("to", 0, &a.to),
		TOOL_OPT_FN("signature", 0, &a, signature_option),
		TOOL_OPT_STR("log", 0, &a.log),
		TOOL_OPT_STR("tcti", 0, &a.tcti),
		TOOL_OPT_END,
	};
	char *names[HOSTKEYS_MAX];
	size_t n = 0, i;
	mb_tpm *tpm = NULL;
	int rc, tofd = -1;

	rc = tool_parse_options("ssh-hostkey unseal", ssh_unseal_help, options, argc, argv, 0);
	if (rc != TOOL_OPTS_GO_ON)
		return rc;
	rc = list_hostkeys(a.dir, true, names, &n);
	if (rc)
		goto out;
	tofd = open_keys_folder(a.to);
	if (tofd < 0) {
		rc = EXIT_USAGE;
		goto out;
	}
	rc = tool_tpm_open(a.tcti, &tpm);
	for (i = 0; i < n && rc == EXIT_OK; i++)
		rc = unseal_one(tpm, &a, names[i], tofd);
	if (rc != EXIT_OK)
		remove_keys(tofd, names, n);
out:
	if (tofd >= 0)
		close(tofd);
	free_names(names, n);
	mb_tpm_free(tpm);
	return rc;
}

static const tool_command ssh_hostkey_commands[] = {
	{ "seal", ssh_seal },
	{ "unseal", ssh_unseal },
	{ NULL, NULL },
};

int verb_ssh_hostkey(int argc, char **argv)
{
	(void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	return tool_dispatch("ssh-hostkey", ssh_hostkey_help, ssh_hostkey_commands, argc, argv);
}
