/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What mboot seal, unseal and reseal share (docs/seal.md): one option parser, and the
 * secret's buffer. The secret lives only in one locked buffer of ours (and, unavoidably,
 * in tpm2-tss's command buffers): never in argv, a temp file or a core dump, and it is
 * wiped on every path.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shared/fileio.h"
#include "tool/seal-common.h"
#include "tool/tool.h"

enum { OPT_PCRS = 0x100, OPT_BANK, OPT_VALUES, OPT_LOG, OPT_TCTI, OPT_FORCE, OPT_AUTHORIZED_BY, OPT_SIGNATURE };

static const struct option seal_options[] = {
	{ "pcrs", required_argument, NULL, OPT_PCRS },
	{ "bank", required_argument, NULL, OPT_BANK },
	{ "values", required_argument, NULL, OPT_VALUES },
	{ "log", required_argument, NULL, OPT_LOG },
	{ "tcti", required_argument, NULL, OPT_TCTI },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "authorized-by", required_argument, NULL, OPT_AUTHORIZED_BY },
	{ "signature", required_argument, NULL, OPT_SIGNATURE },
	TOOL_JSON_OPTIONS,
	{ "input", required_argument, NULL, 'i' },
	{ "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

/* Returns -1 when --help was shown, EXIT_OK, or a usage error's exit code. */
int parse_seal_args(int argc, char **argv, const char *verb, const char *help, unsigned takes, seal_args *a)
{
	int c, idx = 0;

	memset(a, 0, sizeof(*a));
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "hi:o:", seal_options, &idx)) != -1) {
		unsigned need = c == OPT_PCRS ? TAKES_PCRS : c == OPT_BANK ? TAKES_BANK : c == OPT_VALUES ? TAKES_VALUES :
				c == OPT_FORCE ? TAKES_FORCE : c == OPT_AUTHORIZED_BY ? TAKES_AUTHORIZED_BY :
				c == OPT_SIGNATURE ? TAKES_SIGNATURE :
				c == TOOL_OPT_JSON || c == TOOL_OPT_COMPACT ? TAKES_JSON : 0;

		if (need && !(takes & need))
			return tool_usage_error(verb, "--%s does not apply here", seal_options[idx].name);
		switch (c) {
		case 'h':
			fputs(help, stdout);
			return -1;
		case OPT_PCRS:
			a->have_pcrs = true;
			a->mask = 0;
			if (strcmp(optarg, "none") != 0 && tool_parse_pcr_list(optarg, &a->mask) < 0)
				return tool_usage_error(verb, "bad PCR list '%s' (e.g. 0,2,4-7)", optarg);
			break;
		case OPT_BANK:
			if (tool_bank_arg(verb, optarg, &a->bank) != EXIT_OK)
				return EXIT_USAGE;
			break;
		case OPT_VALUES: a->values = optarg; break;
		case OPT_LOG: a->log = optarg; break;
		case OPT_TCTI: a->tcti = optarg; break;
		case OPT_FORCE: a->force = true; break;
		case OPT_AUTHORIZED_BY: a->authority = optarg; break;
		case TOOL_OPT_JSON:
		case TOOL_OPT_COMPACT: tool_json_option(c, &a->json); break;
		case OPT_SIGNATURE:
			if (a->n_sigs == MAX_SIGNATURES)
				return tool_usage_error(verb, "at most %d --signature", MAX_SIGNATURES);
			a->sigs[a->n_sigs++] = optarg;
			break;
		case 'i': a->in = optarg; break;
		case 'o': a->out = optarg; break;
		default:
			return tool_usage_error(verb, "unknown option or missing argument '%s'", argv[optind - 1]);
		}
	}
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
		ssize_t n = read(fd, s->p + s->size, s->cap - s->size);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			tool_errorf("%s: %s", path, strerror(errno));
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
		if (r <= MB_ERR_TPM && r > MB_ERR_TPM - 100)
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
