/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What mboot seal, unseal and reseal share (docs/seal.md): one option parser, and the
 * secret's buffer. The secret lives only in one locked buffer of ours (and, unavoidably,
 * in tpm2-tss's command buffers): never in argv, a temp file or a core dump, and it is
 * wiped on every path.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shared/fileio.h"
#include "tool/options.h"
#include "tool/seal-common.h"
#include "tool/tool.h"

/* --pcrs LIST, or "none" (with --force: sealed to no PCR at all). */
static int pcrs_option(void *target, const char *arg, const char *verb)
{
	seal_args *a = target;

	a->have_pcrs = true;
	a->mask = 0;
	if (strcmp(arg, "none") != 0 && tool_parse_pcr_list(arg, &a->mask) < 0)
		return tool_usage_error(verb, "bad PCR list '%s' (e.g. 0,2,4-7)", arg);
	return EXIT_OK;
}

static int signature_option(void *target, const char *arg, const char *verb)
{
	seal_args *a = target;

	if (a->n_sigs == MAX_SIGNATURES)
		return tool_usage_error(verb, "at most %d --signature", MAX_SIGNATURES);
	a->sigs[a->n_sigs++] = (char *) arg;
	return EXIT_OK;
}

int nv_index_option(void *target, const char *arg, const char *verb)
{
	uint32_t *index = target;
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(arg, &end, 16);
	if (strncmp(arg, "0x", 2) != 0 || *end || errno || x < MB_NV_OWNER_FIRST || x > MB_NV_OWNER_LAST)
		return tool_usage_error(verb, "--nv-index wants an NV index of the owner range, 0x%08x to 0x%08x",
					MB_NV_OWNER_FIRST, MB_NV_OWNER_LAST);
	*index = (uint32_t) x;
	return EXIT_OK;
}

int seal_values_append(const char **list, size_t *n, const char **first, const char *arg, const char *verb)
{
	if (*n == SEAL_MAX_VALUES)
		return tool_usage_error(verb, "at most %d --values", SEAL_MAX_VALUES);
	list[(*n)++] = arg;
	if (!*first)
		*first = arg;
	return EXIT_OK;
}

/* --values FILE, repeatable: the verb says whether it takes more than one (reseal). */
static int values_option(void *target, const char *arg, const char *verb)
{
	seal_args *a = target;

	return seal_values_append(a->values_list, &a->n_values, &a->values, arg, verb);
}

/* Returns -1 when --help was shown, EXIT_OK, or a usage error's exit code. */
int parse_seal_args(int argc, char **argv, const char *verb, const char *help, unsigned takes, seal_args *a)
{
	/* Every option, and the TAKES_ bit a verb needs for it (0: every verb takes it). */
	const struct {
		unsigned need;
		tool_option opt;
	} all[] = {
		{ TAKES_PCRS, TOOL_OPT_FN("pcrs", 0, a, pcrs_option) },
		{ TAKES_BANK, TOOL_OPT_ONE_BANK("bank", 0, &a->bank) },
		{ TAKES_VALUES, TOOL_OPT_FN("values", 0, a, values_option) },
		{ 0, TOOL_OPT_STR("log", 0, &a->log) },
		{ 0, TOOL_OPT_STR("tcti", 0, &a->tcti) },
		{ TAKES_FORCE, TOOL_OPT_BOOL("force", 0, &a->force) },
		{ TAKES_AUTHORIZED_BY, TOOL_OPT_STR("authorized-by", 0, &a->authority) },
		{ TAKES_SIGNATURE, TOOL_OPT_FN("signature", 0, a, signature_option) },
		{ TAKES_JSON, TOOL_OPT_JSON(&a->json) },
		{ TAKES_JSON, TOOL_OPT_COMPACT(&a->json) },
		{ 0, TOOL_OPT_STR("input", 'i', &a->in) },
		{ 0, TOOL_OPT_STR("output", 'o', &a->out) },
		{ TAKES_WINDOW, TOOL_OPT_BOOL("firmware-update", 0, &a->firmware_update) },
		{ TAKES_WINDOW, TOOL_OPT_BOOL("keep-window", 0, &a->keep_window) },
		{ TAKES_WINDOW, TOOL_OPT_BOOL("close-window", 0, &a->close_window) },
		{ TAKES_WINDOW, TOOL_OPT_FN("nv-index", 0, &a->nv_index, nv_index_option) },
		{ TAKES_PIN, TOOL_OPT_BOOL("pin", 0, &a->pin) },
		{ TAKES_PIN, TOOL_OPT_STR("pin-file", 0, &a->pin_file) },
	};
	tool_option opts[sizeof(all) / sizeof(all[0]) + 1];
	size_t i, n = 0;
	int rc;

	memset(a, 0, sizeof(*a));
	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (!all[i].need || (takes & all[i].need))
			opts[n++] = all[i].opt;
	opts[n] = (tool_option) TOOL_OPT_END;
	rc = tool_parse_options(verb, help, opts, argc, argv, INT_MAX);
	if (rc != TOOL_OPTS_GO_ON)
		return rc == EXIT_OK ? -1 : rc; /* -1: --help was shown */
	if (a->pin_file)
		a->pin = true;
	if (optind < argc)
		/* not echoed: it may be a secret typed where it does not belong */
		return tool_usage_error(verb, "unexpected argument (a secret is read with -i FILE or -i -, never from "
					"the command line)");
	return EXIT_OK;
}

int secret_alloc(secret_buf *s)
{
	if (secret_page_alloc(s, 0) < 0) {
		tool_errorf("out of memory");
		return EXIT_USAGE;
	}
	return 0;
}

int unseal_new_secret(const char *tcti, const mb_sealed *s, const char *log_path, char **sig_paths, size_t n_sigs,
		      const secret_buf *pin, mb_tpm **tpm, secret_buf *secret, unseal_report *report)
{
	int rc = secret_alloc(secret);

	if (rc == EXIT_OK)
		rc = tool_tpm_open(tcti, tpm);
	if (rc == EXIT_OK)
		rc = unseal_to_secret(*tpm, s, log_path, sig_paths, n_sigs, pin, secret, report);
	return rc;
}

void secret_free(secret_buf *s)
{
	secret_page_free(s);
}

/* Read at most MB_SEAL_MAX_SECRET + 1 bytes (to see an oversized secret) with read(2): no stdio buffer. */
int secret_read(const char *path, secret_buf *s)
{
	int fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		tool_errorf("%s: %s", path, strerror(errno));
		return EXIT_USAGE;
	}
	for (;;) {
		ssize_t n = fd_read_some(fd, s->p + s->size, s->cap - s->size);

		if (n < 0) {
			tool_errorf("%s: %s", path, strerror((int) -n));
			break;
		}
		if (n == 0)
			break;
		s->size += (size_t) n;
		if (s->size > MB_SEAL_MAX_SECRET)
			break;
	}
	if (fd != STDIN_FILENO)
		close(fd);
	if (s->size > MB_SEAL_MAX_SECRET) {
		tool_errorf("%s: the secret is larger than %u bytes, the most a TPM seals (MAX_SYM_DATA); "
			    "seal a key to the secret instead", path, MB_SEAL_MAX_SECRET);
		return EXIT_USAGE;
	}
	if (s->size == 0) {
		tool_errorf("%s: the secret is empty", path);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

int read_whole(const char *path, size_t max, uint8_t **buf, size_t *size)
{
	mb_error err = { 0 };

	if (file_read(path, max, buf, size, &err) < 0) {
		tool_report(path, &err);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

int read_authority_key(const char *path, uint8_t **ret, size_t *ret_size)
{
	uint8_t *pem = NULL, name[MB_TPM_NAME_SIZE];
	size_t pem_size = 0;
	mb_error err = { 0 };
	int rc = read_whole(path, 64u << 10, &pem, &pem_size);

	if (rc)
		return rc;
	rc = mb_tpm_key_public(pem, pem_size, ret, ret_size, name, &err);
	explicit_bzero(pem, pem_size); /* in case a private key was given */
	free(pem);
	if (rc < 0) {
		tool_report(path, &err);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/*
 * The event log to keep in a sealed file, to explain a later failed unseal: log_path
 * (which must parse), else the system log when it is readable and parses (else none:
 * it is an extra). *ret is NULL when there is none.
 */
int read_kept_log(const char *log_path, uint8_t **ret, size_t *ret_size)
{
	const char *p = log_path ? log_path : MB_DEFAULT_LOG;
	mb_event_log *log = NULL;
	mb_error err = { 0 };
	int rc;

	*ret = NULL;
	*ret_size = 0;
	if (!log_path && access(MB_DEFAULT_LOG, R_OK) != 0)
		return EXIT_OK;
	rc = read_whole(p, MB_SEALED_MAX_LOG, ret, ret_size);
	if (rc == EXIT_OK && mb_event_log_parse(*ret, *ret_size, &log, &err) < 0) {
		tool_report(p, &err);
		rc = EXIT_USAGE;
	}
	mb_event_log_free(log);
	if (rc) {
		free(*ret);
		*ret = NULL;
		*ret_size = 0;
	}
	return log_path ? rc : EXIT_OK;
}

/* Read and check a sealed file (untrusted input); reports and returns EXIT_USAGE on failure. */
int load_sealed(const char *path, mb_sealed **s)
{
	mb_error err = { 0 };
	uint8_t *text = NULL;
	size_t size = 0;
	int rc = read_whole(path, MB_SEALED_MAX_FILE, &text, &size);

	*s = NULL;
	if (rc)
		return rc;
	rc = mb_sealed_parse((const char *) text, size, s, &err);
	free(text);
	if (rc < 0) {
		tool_report(path, &err);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/* A TPM error, said as dictionary-attack lockout when it is one; exit 3. */
int tpm_error_exit(const mb_error *err)
{
	if (err->code != MB_ERR_TPM_LOCKOUT)
		return tool_tpm_exit(err);
	tool_errorf("TPM: in dictionary-attack lockout: %s; wait for it to recover, or clear it with the lockout "
		    "authorisation (tpm2_dictionarylockout -c)", err->message);
	return EXIT_TPM;
}

/*
 * Seal the secret as opt says (mb_seal_secret) and write the sealed file to out (0600,
 * atomically; an existing out only when replace). The secret is wiped and freed either way.
 */
int seal_write(mb_tpm *tpm, secret_buf *secret, const mb_seal_options *opt, const char *out, bool replace,
	       const char *verb, mb_sealed **ret)
{
	mb_sealed *s = NULL;
	mb_error err = { 0 };
	char *json;
	int r = mb_seal_secret(tpm, secret->p, secret->size, opt, &s, &err);

	secret_free(secret);
	if (ret)
		*ret = NULL;
	if (r < 0) {
		/* the tool's own checks come first: a refusal left here is the TPM's, or the policy's */
		/* -EEXIST: the NV index of a firmware-update window is not mboot's counter */
		if (mb_error_is_tpm(r) || r == -EEXIST)
			return tpm_error_exit(&err);
		tool_report("policy", &err);
		return EXIT_USAGE;
	}
	if (mb_sealed_parent_fallback(s))
		fprintf(stderr, "mboot: note: the persistent key at 0x%08x is not a storage key; sealed under the "
			"ECC P-256 SRK from its template instead\n", MB_TPM_SRK_HANDLE);
	json = mb_sealed_to_json(s);
	if (!json) {
		mb_sealed_free(s);
		tool_errorf("out of memory");
		return EXIT_USAGE;
	}
	r = tool_write_output(verb, out, json, strlen(json), 0600, replace);
	free(json);
	if (ret && r == EXIT_OK)
		*ret = s;
	else
		mb_sealed_free(s);
	return r;
}
