/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mboot seal / mboot unseal: a secret released only when the chosen PCRs hold the
 * chosen values (docs/seal.md). The secret lives only in one locked buffer of ours
 * (and, unavoidably, in tpm2-tss's command buffers): never in argv, a temp file or a
 * core dump, and it is wiped on every path.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "shared/fileio.h"
#include "shared/hex.h"
#include "tool/tool.h"
#include "tool/verbs.h"

static const char seal_help[] =
	"Usage: mboot seal --pcrs LIST [--bank NAME] [--values current|FILE] -i SECRET|- -o SEALED\n"
	"                  [--log LOG] [--tcti TCTI] [--force]\n"
	"       mboot seal --authorized-by PUBKEY -i SECRET|- -o SEALED [--log LOG] [--tcti TCTI] [--force]\n\n"
	"Seal a secret (1-128 bytes) with the TPM so that it is released only when the PCRs in\n"
	"LIST of bank NAME hold the given values (a TPM2_PolicyPCR policy). The parent key is the\n"
	"persistent SRK at 0x81000001 when the TPM has one, else the TCG ECC P-256 SRK, created\n"
	"from its template in the owner hierarchy each time.\n\n"
	"  --pcrs LIST       e.g. 0,2,4,7 (required; sealing to no PCRs needs --force)\n"
	"  --bank NAME       the PCR bank (default sha256)\n"
	"  --values current  the values the TPM holds now (default)\n"
	"  --values FILE     predicted values: PCR-values JSON or tpm2_pcrread YAML\n"
	"  -i SECRET|-       the secret, from a file or stdin (never from the command line)\n"
	"  -o SEALED         the sealed file (JSON, 0600, written atomically); an existing\n"
	"                    one is kept, exit 2, unless --force\n"
	"  --log LOG         keep this event log in the sealed file, to explain a failed unseal\n"
	"                    (default " MB_DEFAULT_LOG " when readable)\n"
	"  --force           replace an existing SEALED; and allow sealing to no PCRs (--pcrs none)\n"
	"  --authorized-by PUBKEY\n"
	"                    instead of PCR values: a TPM2_PolicyAuthorize policy. The secret is\n"
	"                    released in any PCR state the owner of PUBKEY (PEM, RSA or ECC P-256)\n"
	"                    signs with 'mboot policy sign'; unseal with --signature SIG\n"
	"  --tcti TCTI       the TPM; default $TPM2TOOLS_TCTI, else " MB_TPM_DEFAULT_TCTI "\n\n"
	"Exit: 0 sealed, 2 usage or input error, 3 TPM error.\n";

static const char unseal_help[] =
	"Usage: mboot unseal -i SEALED [-o FILE] [--signature SIG ...] [--log LOG] [--json] [--tcti TCTI]\n\n"
	"Unseal a secret sealed by 'mboot seal': to stdout, or to FILE (created 0600, must not\n"
	"exist). When the PCRs do not hold the sealed values, say which differ and, when the\n"
	"sealed file keeps the event log of sealing and today's log is readable, which events\n"
	"made them differ.\n\n"
	"  --signature SIG  for a secret sealed --authorized-by: a signed policy ('mboot policy\n"
	"                sign'); up to 8, the one whose values the PCRs hold is used\n"
	"  --log LOG     today's event log (default " MB_DEFAULT_LOG ")\n"
	"  --json        when not unsealed (exit 1), the explanation as one JSON object on stdout\n"
	"                {\"unsealed\": false, \"pcrs\": [...], \"events\": [...], \"notes\": [...]}\n"
	"  --tcti TCTI   the TPM; default $TPM2TOOLS_TCTI, else " MB_TPM_DEFAULT_TCTI "\n\n"
	"Exit: 0 unsealed, 1 the PCRs are not the sealed ones, 2 usage or input error\n"
	"(malformed sealed file), 3 TPM error (including dictionary-attack lockout).\n";

enum { OPT_PCRS = 0x100, OPT_BANK, OPT_VALUES, OPT_LOG, OPT_TCTI, OPT_FORCE, OPT_AUTHORIZED_BY, OPT_SIGNATURE, OPT_JSON };

#define MAX_SIGNATURES 8

static const struct option seal_options[] = {
	{ "pcrs", required_argument, NULL, OPT_PCRS },
	{ "bank", required_argument, NULL, OPT_BANK },
	{ "values", required_argument, NULL, OPT_VALUES },
	{ "log", required_argument, NULL, OPT_LOG },
	{ "tcti", required_argument, NULL, OPT_TCTI },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "authorized-by", required_argument, NULL, OPT_AUTHORIZED_BY },
	{ "signature", required_argument, NULL, OPT_SIGNATURE },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "input", required_argument, NULL, 'i' },
	{ "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

/* The options of seal, unseal and reseal, parsed by one function; each verb takes a subset. */
typedef struct seal_args {
	const char *tcti, *in, *out, *log, *values, *authority;
	const mb_digest_info *bank;       /* NULL: not given */
	bool have_pcrs, force, json;
	uint32_t mask;
	char *sigs[MAX_SIGNATURES];
	size_t n_sigs;
} seal_args;

enum {
	TAKES_PCRS = 1u << 0, TAKES_BANK = 1u << 1, TAKES_VALUES = 1u << 2, TAKES_FORCE = 1u << 3,
	TAKES_AUTHORIZED_BY = 1u << 4, TAKES_SIGNATURE = 1u << 5, TAKES_JSON = 1u << 6,
};

/* Returns -1 when --help was shown, EXIT_OK, or a usage error's exit code. */
static int parse_seal_args(int argc, char **argv, const char *verb, const char *help, unsigned takes, seal_args *a)
{
	int c, idx = 0;

	memset(a, 0, sizeof(*a));
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "hi:o:", seal_options, &idx)) != -1) {
		unsigned need = c == OPT_PCRS ? TAKES_PCRS : c == OPT_BANK ? TAKES_BANK : c == OPT_VALUES ? TAKES_VALUES :
				c == OPT_FORCE ? TAKES_FORCE : c == OPT_AUTHORIZED_BY ? TAKES_AUTHORIZED_BY :
				c == OPT_SIGNATURE ? TAKES_SIGNATURE : c == OPT_JSON ? TAKES_JSON : 0;

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
			a->bank = mb_digest_by_name(optarg);
			if (!a->bank)
				return tool_usage_error(verb, "unknown bank '%s'", optarg);
			break;
		case OPT_VALUES: a->values = optarg; break;
		case OPT_LOG: a->log = optarg; break;
		case OPT_TCTI: a->tcti = optarg; break;
		case OPT_FORCE: a->force = true; break;
		case OPT_AUTHORIZED_BY: a->authority = optarg; break;
		case OPT_JSON: a->json = true; break;
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

/* One page, locked when the system lets us: the only place the secret is kept. */
typedef struct secret_buf {
	uint8_t *p;
	size_t size, cap;
	bool locked;
} secret_buf;

static int secret_alloc(secret_buf *s)
{
	long page = sysconf(_SC_PAGESIZE);

	s->cap = page > 0 ? (size_t) page : 4096;
	s->size = 0;
	s->p = aligned_alloc(s->cap, s->cap);
	if (!s->p)
		return -ENOMEM;
	s->locked = mlock(s->p, s->cap) == 0;
	(void) madvise(s->p, s->cap, MADV_DONTDUMP);
	return 0;
}

static void secret_free(secret_buf *s)
{
	if (!s->p)
		return;
	explicit_bzero(s->p, s->cap);
	if (s->locked)
		munlock(s->p, s->cap);
	free(s->p);
	s->p = NULL;
}

/* Read at most MB_SEAL_MAX_SECRET + 1 bytes (to see an oversized secret) with read(2): no stdio buffer. */
static int secret_read(const char *path, secret_buf *s)
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

static int read_whole(const char *path, size_t max, uint8_t **buf, size_t *size)
{
	mb_error err = { 0 };

	if (mb_read_file(path, max, buf, size, &err) < 0) {
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
static int read_kept_log(const char *log_path, uint8_t **ret, size_t *ret_size)
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
static int load_sealed(const char *path, mb_sealed *s)
{
	mb_error err = { 0 };
	uint8_t *text = NULL;
	size_t size = 0;
	int rc = read_whole(path, MB_SEALED_MAX_FILE, &text, &size);

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
static int tpm_error_exit(const mb_error *err)
{
	if (err->code != MB_ERR_TPM_LOCKOUT)
		return tool_tpm_exit(err);
	tool_errorf("TPM: in dictionary-attack lockout: %s; wait for it to recover, or clear it with the lockout "
		    "authorisation (tpm2_dictionarylockout -c)", err->message);
	return EXIT_TPM;
}

/*
 * Seal the secret to s's policy (already computed), fill s's TPM fields, write s to out
 * (0600, atomically; an existing out only when replace). keep_parent (reseal): under the
 * parent s records, not seal's choice, so that a reseal never moves a secret to another key.
 */
static int seal_write(mb_tpm *tpm, secret_buf *secret, mb_sealed *s, bool keep_parent, const char *out,
		      bool replace, const char *verb)
{
	mb_tpm_sealed_blob blob = { 0 };
	mb_error err = { 0 };
	char *json;
	int r = keep_parent ? mb_tpm_seal_under(tpm, secret->p, secret->size, s->policy, s->parent_persistent,
						s->parent_handle, &blob, &err) :
			      mb_tpm_seal(tpm, secret->p, secret->size, s->policy, &blob, &err);

	if (r < 0) {
		secret_free(secret);
		return tpm_error_exit(&err);
	}
	secret_free(secret);
	if (blob.persistent_unusable)
		fprintf(stderr, "mboot: note: the persistent key at 0x%08x is not a storage key; sealed under the "
			"ECC P-256 SRK from its template instead\n", MB_TPM_SRK_HANDLE);
	free(s->pub);
	free(s->priv);
	s->pub = blob.pub;
	s->pub_size = blob.pub_size;
	s->priv = blob.priv;
	s->priv_size = blob.priv_size;
	s->parent_persistent = blob.parent_persistent;
	s->parent_handle = blob.parent_handle;
	json = mb_sealed_to_json(s);
	if (!json) {
		tool_errorf("out of memory");
		return EXIT_USAGE;
	}
	r = tool_write_output(verb, out, json, strlen(json), 0600, replace);
	free(json);
	return r;
}

int verb_seal(int argc, char **argv)
{
	const char *values, *in, *out, *log_path, *authority;
	const mb_digest_info *bank;
	uint32_t mask;
	seal_args args;
	secret_buf secret = { 0 };
	mb_sealed s = { 0 };
	mb_pcr_values v;
	const mb_pcr_bank *b;
	mb_error err = { 0 };
	mb_tpm *tpm = NULL;
	int rc;

	(void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	rc = parse_seal_args(argc, argv, "seal", seal_help,
			     TAKES_PCRS | TAKES_BANK | TAKES_VALUES | TAKES_FORCE | TAKES_AUTHORIZED_BY, &args);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	values = args.values ? args.values : "current";
	in = args.in;
	out = args.out;
	log_path = args.log;
	authority = args.authority;
	bank = args.bank ? args.bank : mb_digest_by_alg(MB_ALG_SHA256);
	mask = args.mask;
	if (!in || !out)
		return tool_usage_error("seal", "needs -i SECRET (or -i - for stdin) and -o SEALED");
	if (authority && (args.have_pcrs || args.values || args.bank))
		return tool_usage_error("seal", "--authorized-by takes no --pcrs, --values or --bank: the "
					"signatures name the PCRs and their values");
	if (mask & ((1u << 16) | (1u << 23)))
		/* PC Client PTP: PCRs 16 (debug) and 23 (application) are resettable at locality 0 */
		fprintf(stderr, "mboot: note: PCRs 16 and 23 can be reset by any program that can use the TPM: "
			"sealing to them protects nothing\n");
	if (!authority && (!args.have_pcrs || (mask == 0 && !args.force)))
		return tool_usage_error("seal", "refusing to seal to no PCRs: give --pcrs LIST (or --pcrs none --force)");
	rc = tool_check_output("seal", out, args.force);
	if (rc)
		return rc;

	s.version = 1;
	/* The values first: a bad values file, key or log is an input error before any TPM work. */
	if (authority) {
		uint8_t *pem = NULL;
		size_t pem_size = 0;

		rc = read_whole(authority, 64u << 10, &pem, &pem_size);
		if (rc)
			return rc;
		rc = mb_tpm_key_public(pem, pem_size, &s.auth_key, &s.auth_key_size, s.auth_key_name, &err);
		explicit_bzero(pem, pem_size); /* in case a private key was given */
		free(pem);
		if (rc < 0 || mb_policy_authorize_digest(s.auth_key_name, s.policy, &err) < 0) {
			tool_report(authority, &err);
			rc = EXIT_USAGE;
			goto out;
		}
		s.authorized = true;
	} else if (strcmp(values, "current") != 0) {
		rc = tool_load_pcr_bank(values, bank->alg, mask, "PCRs to seal to", &s.pcrs);
		if (rc)
			return rc;
	}
	rc = read_kept_log(log_path, &s.eventlog, &s.eventlog_size);
	if (rc)
		goto out;

	if (secret_alloc(&secret) < 0) {
		tool_errorf("out of memory");
		rc = EXIT_USAGE;
		goto out;
	}
	rc = secret_read(in, &secret);
	if (rc)
		goto out;

	rc = tool_tpm_open(args.tcti, &tpm);
	if (rc)
		goto out;
	if (authority) {
		rc = seal_write(tpm, &secret, &s, false, out, args.force, "seal");
		goto out;
	}
	if (strcmp(values, "current") == 0) {
		if (mb_tpm_read_pcrs(tpm, &bank->alg, 1, mask, &v, NULL, &err) < 0) {
			rc = tool_tpm_exit(&err);
			goto out;
		}
		b = mb_pcr_values_bank_const(&v, bank->alg);
		if (!b || (b->present & mask) != mask) {
			tool_errorf("TPM: the %s bank does not have all of the PCRs to seal to", bank->name);
			rc = EXIT_TPM;
			goto out;
		}
		s.pcrs = *b;
	}
	s.pcrs.present &= mask;
	s.mask = mask;
	if (mb_policy_pcr_digest(NULL, &s.pcrs, mask, s.policy, &err) < 0) {
		tool_report("policy", &err);
		rc = EXIT_USAGE;
		goto out;
	}
	rc = seal_write(tpm, &secret, &s, false, out, args.force, "seal");
	goto out;
out:
	secret_free(&secret);
	mb_sealed_done(&s);
	mb_tpm_free(tpm);
	return rc;
}

/*
 * Why an unseal failed: lines on stderr, or with `unseal --json` one JSON object on
 * stdout (stdout carries no secret then): {"unsealed": false, "notes": [...], "pcrs":
 * [{"pcr", "bank", "expected", "now", "signature"?}], "events": [{"pcr", "change",
 * "before"?, "after"?}], "signatures": [{"file", "key", "sealed_key"}]}.
 */
static json_object *report;

static json_object *report_list(const char *key)
{
	json_object *a = NULL;

	if (!json_object_object_get_ex(report, key, &a)) {
		a = json_object_new_array();
		json_object_object_add(report, key, a);
	}
	return a;
}

static void report_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void report_note(const char *fmt, ...)
{
	va_list ap;
	char *line = NULL;

	va_start(ap, fmt);
	if (vasprintf(&line, fmt, ap) < 0)
		line = NULL;
	va_end(ap);
	if (!line)
		return;
	if (report)
		json_object_array_add(report_list("notes"), json_object_new_string(line));
	else
		fprintf(stderr, "%s\n", line);
	free(line);
}

/* PCR p of bank d holds now (NULL: unreadable) instead of expected; sig: the signature file, or NULL. */
static void report_pcr(const char *sig, unsigned p, const mb_digest_info *d, const uint8_t *expected,
		       const uint8_t *now)
{
	char h1[2 * MB_DIGEST_MAX + 1], h2[2 * MB_DIGEST_MAX + 1];
	json_object *o;

	mb_hex(expected, d->size, h1);
	if (now)
		mb_hex(now, d->size, h2);
	if (!report) {
		fprintf(stderr, "%s%sPCR %u (%s) differs: %s %s, now %s\n", sig ? sig : "", sig ? ": " : "", p, d->name,
			sig ? "signed" : "sealed to", h1, now ? h2 : "(not readable)");
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "pcr", json_object_new_int((int) p));
	json_object_object_add(o, "bank", json_object_new_string(d->name));
	json_object_object_add(o, "expected", json_object_new_string(h1));
	json_object_object_add(o, "now", now ? json_object_new_string(h2) : NULL);
	if (sig)
		json_object_object_add(o, "signature", json_object_new_string(sig));
	json_object_array_add(report_list("pcrs"), o);
}

static void report_event(unsigned pcr, const char *change, const char *before, const char *after)
{
	json_object *o;

	if (!report) {
		if (before && after)
			fprintf(stderr, "PCR %u: %s: %s → %s\n", pcr, change, before, after);
		else
			fprintf(stderr, "PCR %u: %s: %s\n", pcr, change, before ? before : after ? after : "?");
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "pcr", json_object_new_int((int) pcr));
	json_object_object_add(o, "change", json_object_new_string(change));
	if (before)
		json_object_object_add(o, "before", json_object_new_string(before));
	if (after)
		json_object_object_add(o, "after", json_object_new_string(after));
	json_object_array_add(report_list("events"), o);
}

static void report_other_key(const char *sig, const uint8_t *key, const uint8_t *sealed_key)
{
	char h1[2 * MB_TPM_NAME_SIZE + 1], h2[2 * MB_TPM_NAME_SIZE + 1];
	json_object *o;

	mb_hex(key, MB_TPM_NAME_SIZE, h1);
	mb_hex(sealed_key, MB_TPM_NAME_SIZE, h2);
	if (!report) {
		fprintf(stderr, "%s: signed by key %s, but the secret is sealed to key %s\n", sig, h1, h2);
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "file", json_object_new_string(sig));
	json_object_object_add(o, "key", json_object_new_string(h1));
	json_object_object_add(o, "sealed_key", json_object_new_string(h2));
	json_object_array_add(report_list("signatures"), o);
}

static char *event_words(const mb_event_log *log, const mb_event *ev)
{
	json_object *dec = mb_event_decode(log, ev), *desc = NULL;
	char tbuf[16], *s = NULL;

	json_object_object_get_ex(dec, "description", &desc);
	if (asprintf(&s, "#%u %s%s%s", ev->number, tool_type_name(ev->type, tbuf), desc ? ": " : "",
		     desc ? json_object_get_string(desc) : "") < 0)
		s = NULL;
	json_object_put(dec);
	return s;
}

/* Which events of today's log made the differing PCRs differ from the log of sealing. */
static void explain_events(const mb_sealed *s, const char *log_path, uint32_t differ)
{
	mb_event_log *then = NULL, *now = NULL;
	mb_diff d = { 0 };
	mb_error err = { 0 };
	size_t i, shown = 0;

	if (!s->eventlog) {
		report_note("The sealed file keeps no event log: cannot say which events changed.");
		return;
	}
	if (mb_event_log_parse(s->eventlog, s->eventlog_size, &then, &err) < 0) {
		report_note("The event log kept in the sealed file does not parse: %s", err.message);
		return;
	}
	if (access(log_path, R_OK) != 0 || tool_load_log(log_path, &now) != EXIT_OK) {
		report_note("Today's event log (%s) is not readable: cannot say which events changed.", log_path);
		mb_event_log_free(then);
		return;
	}
	if (mb_log_diff(then, now, &d, &err) < 0) {
		report_note("Cannot compare the event logs: %s", err.message);
		goto out;
	}
	for (i = 0; i < d.n_entries; i++) {
		const mb_diff_entry *e = &d.entries[i];
		char *a = e->a ? event_words(then, e->a) : NULL, *b = e->b ? event_words(now, e->b) : NULL;

		if (e->pcr < MB_PCR_COUNT && (differ & (1u << e->pcr))) {
			if (e->kind == MB_DIFF_CHANGED)
				report_event(e->pcr, "changed", a ? a : "?", b ? b : "?");
			else if (e->kind == MB_DIFF_ADDED)
				report_event(e->pcr, "added", NULL, b ? b : "?");
			else
				report_event(e->pcr, "removed", a ? a : "?", NULL);
			shown++;
		}
		free(a);
		free(b);
	}
	if (!shown)
		report_note("The event logs show no change in these PCRs (extended outside the logged boot?).");
out:
	mb_diff_done(&d);
	mb_event_log_free(then);
	mb_event_log_free(now);
}

/*
 * The PCRs of mask whose values in the TPM now differ from want's (0: none); *now gets
 * what the TPM holds. -1 on a TPM error (reported; *rc is the exit code).
 */
static int64_t pcrs_differ(mb_tpm *tpm, const mb_pcr_bank *want, uint32_t mask, mb_pcr_bank *now, int *rc)
{
	mb_error err = { 0 };
	mb_pcr_values v;
	const mb_pcr_bank *b;
	uint32_t differ = 0;
	unsigned p;

	if (mb_tpm_read_pcrs(tpm, &want->alg, 1, mask, &v, NULL, &err) < 0) {
		*rc = tool_tpm_exit(&err);
		return -1;
	}
	b = mb_pcr_values_bank_const(&v, want->alg);
	if (b)
		*now = *b;
	else
		memset(now, 0, sizeof(*now));
	for (p = 0; p < MB_PCR_COUNT; p++)
		if ((mask & (1u << p)) &&
		    (!(now->present & (1u << p)) || memcmp(now->value[p], want->value[p], want->size) != 0))
			differ |= 1u << p;
	return differ;
}

/*
 * The PCRs that moved since sealing, read from the TPM; then the events that moved them.
 * On stderr: stdout is where the secret goes, often into a pipe that must not mistake
 * an explanation for a key.
 */
static int explain_failure(mb_tpm *tpm, const mb_sealed *s, const char *log_path)
{
	const mb_digest_info *d = mb_digest_by_alg(s->pcrs.alg);
	mb_pcr_bank now;
	int64_t differ;
	int rc;

	report_note("Not unsealed: the PCRs do not hold the values the secret is sealed to.");
	differ = pcrs_differ(tpm, &s->pcrs, s->mask, &now, &rc);
	if (differ < 0)
		return EXIT_FAILED;
	for (unsigned p = 0; p < MB_PCR_COUNT; p++)
		if (differ & (1u << p))
			report_pcr(NULL, p, d, s->pcrs.value[p], (now.present & (1u << p)) ? now.value[p] : NULL);
	if (!differ)
		report_note("All sealed PCRs hold their sealed values now (they changed during the unseal?).");
	else
		explain_events(s, log_path, differ);
	return EXIT_FAILED;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -errno;
		p += w;
		n -= (size_t) w;
	}
	return 0;
}

/*
 * Unseal s into secret. For a PolicyOR object, the branch whose PCR values the TPM
 * holds now is the one to satisfy; when none does, the failure is explained against
 * the boot of sealing (s->pcrs).
 */
static int unseal_secret(mb_tpm *tpm, const mb_sealed *s, const char *log_path, secret_buf *secret)
{
	const mb_pcr_bank *bank = &s->pcrs;
	uint32_t mask = s->mask;
	mb_error err = { 0 };
	size_t i;

	for (i = 0; i < s->n_branches; i++) {
		mb_pcr_bank now;
		int rc;
		int64_t differ = pcrs_differ(tpm, &s->branch[i], s->branch_mask[i], &now, &rc);

		if (differ < 0)
			return rc;
		if (differ == 0)
			break;
	}
	if (s->n_branches && i == s->n_branches) {
		report_note("None of the %zu PCR states the secret is sealed to holds now.", s->n_branches);
		return explain_failure(tpm, s, log_path);
	}
	if (s->n_branches) {
		bank = &s->branch[i];
		mask = s->branch_mask[i];
	}
	if (mb_tpm_unseal(tpm, s->pub, s->pub_size, s->priv, s->priv_size, s->parent_persistent, s->parent_handle,
			  bank->alg, mask, s->n_branches ? (const uint8_t (*)[32]) s->branch_digest : NULL,
			  s->n_branches, secret->p, &secret->size, &err) < 0) {
		if (err.code == MB_ERR_TPM_POLICY)
			return explain_failure(tpm, s, log_path);
		return tpm_error_exit(&err);
	}
	return EXIT_OK;
}

/*
 * A secret sealed --authorized-by: pick the signature by the sealed key whose values
 * the PCRs hold, and have the TPM check it. When none fits, say for each signature why.
 */
static int unseal_authorized(mb_tpm *tpm, const mb_sealed *s, char **sig_paths, size_t n_sigs, secret_buf *secret)
{
	mb_policy_signature sigs[MAX_SIGNATURES];
	mb_error err = { 0 };
	size_t i, n = 0, tried = 0;
	int rc = EXIT_FAILED;

	memset(sigs, 0, sizeof(sigs));
	for (i = 0; i < n_sigs; i++, n++) {
		uint8_t *text = NULL;
		size_t size = 0;

		rc = read_whole(sig_paths[i], 1u << 20, &text, &size);
		if (rc)
			goto out;
		if (mb_policy_signature_parse((const char *) text, size, &sigs[i], &err) < 0) {
			free(text);
			tool_report(sig_paths[i], &err);
			rc = EXIT_USAGE;
			goto out;
		}
		free(text);
	}
	/*
	 * Every signature by the sealed key for today's values is a candidate, in order: one
	 * the TPM refuses (a corrupt or relabelled file) must not hide a good one after it.
	 */
	for (i = 0; i < n; i++) {
		mb_pcr_bank now;
		int64_t differ;

		if (memcmp(sigs[i].key_name, s->auth_key_name, MB_TPM_NAME_SIZE) != 0)
			continue;
		differ = pcrs_differ(tpm, &sigs[i].pcrs, sigs[i].mask, &now, &rc);
		if (differ < 0)
			goto out;
		if (differ)
			continue;
		tried++;
		memset(&err, 0, sizeof(err));
		if (mb_tpm_unseal_authorized(tpm, s->pub, s->pub_size, s->priv, s->priv_size, s->parent_persistent,
					     s->parent_handle, s->auth_key, s->auth_key_size, &sigs[i], secret->p,
					     &secret->size, &err) == 0) {
			rc = EXIT_OK;
			goto out;
		}
		if (err.code == MB_ERR_TPM_SIGNATURE) {
			report_note("Not unsealed with %s: %s", sig_paths[i], err.message);
			continue;
		}
		if (err.code == MB_ERR_TPM_POLICY) {
			report_note("Not unsealed: the PCRs changed during the unseal: %s", err.message);
			rc = EXIT_FAILED;
		} else if (err.code == -EBADMSG) { /* a malformed signature the parser let through */
			tool_report(sig_paths[i], &err);
			rc = EXIT_USAGE;
		} else
			rc = tpm_error_exit(&err);
		goto out;
	}
	rc = EXIT_FAILED;
	if (tried)
		goto out;
	report_note("Not unsealed: no signature approves the PCR values this machine holds.");
	for (i = 0; i < n; i++) {
		const mb_digest_info *d = mb_digest_by_alg(sigs[i].pcrs.alg);
		mb_pcr_bank now;
		int64_t differ;

		if (memcmp(sigs[i].key_name, s->auth_key_name, MB_TPM_NAME_SIZE) != 0) {
			report_other_key(sig_paths[i], sigs[i].key_name, s->auth_key_name);
			continue;
		}
		differ = pcrs_differ(tpm, &sigs[i].pcrs, sigs[i].mask, &now, &rc);
		if (differ < 0)
			goto out;
		for (unsigned p = 0; p < MB_PCR_COUNT; p++)
			if (differ & (1u << p))
				report_pcr(sig_paths[i], p, d, sigs[i].pcrs.value[p],
					   (now.present & (1u << p)) ? now.value[p] : NULL);
	}
	rc = EXIT_FAILED;
out:
	for (i = 0; i < n_sigs; i++)
		mb_policy_signature_done(&sigs[i]);
	return rc;
}

int verb_unseal(int argc, char **argv)
{
	const char *in, *out, *log_path;
	seal_args args;
	secret_buf secret = { 0 };
	mb_sealed s = { 0 };
	mb_tpm *tpm = NULL;
	int rc, fd;

	(void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	rc = parse_seal_args(argc, argv, "unseal", unseal_help, TAKES_SIGNATURE | TAKES_JSON, &args);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	in = args.in;
	out = args.out;
	log_path = args.log ? args.log : MB_DEFAULT_LOG;
	if (!in)
		return tool_usage_error("unseal", "needs -i SEALED");

	rc = load_sealed(in, &s);
	if (rc)
		return rc;
	if (s.authorized && !args.n_sigs) {
		rc = tool_usage_error("unseal", "%s is sealed to signed policies: give --signature SIG", in);
		goto out;
	}
	if (!s.authorized && args.n_sigs) {
		rc = tool_usage_error("unseal", "%s is sealed to PCR values, not to signed policies: --signature "
				      "does not apply", in);
		goto out;
	}
	if (secret_alloc(&secret) < 0) {
		tool_errorf("out of memory");
		rc = EXIT_USAGE;
		goto out;
	}
	rc = tool_tpm_open(args.tcti, &tpm);
	if (rc)
		goto out;
	if (args.json) {
		report = json_object_new_object();
		if (!report) {
			tool_errorf("out of memory");
			rc = EXIT_USAGE;
			goto out;
		}
		json_object_object_add(report, "unsealed", json_object_new_boolean(0));
	}
	if (s.authorized)
		rc = unseal_authorized(tpm, &s, args.sigs, args.n_sigs, &secret);
	else
		rc = unseal_secret(tpm, &s, log_path, &secret);
	if (report && rc == EXIT_FAILED)
		puts(json_object_to_json_string_ext(report, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
								JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(report);
	report = NULL;
	if (rc)
		goto out;
	if (out) {
		fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0) {
			tool_errorf("%s: %s", out, strerror(errno));
			rc = EXIT_USAGE;
			goto out;
		}
		if (write_all(fd, secret.p, secret.size) < 0 || close(fd) < 0) {
			tool_errorf("%s: write failed", out);
			unlink(out);
			rc = EXIT_USAGE;
			goto out;
		}
	} else if (write_all(STDOUT_FILENO, secret.p, secret.size) < 0) {
		tool_errorf("stdout: write failed");
		rc = EXIT_USAGE;
		goto out;
	}
	rc = EXIT_OK;
out:
	secret_free(&secret);
	mb_sealed_done(&s);
	mb_tpm_free(tpm);
	return rc;
}

static const char reseal_help[] =
	"Usage: mboot reseal -i SEALED [--values FILE] [-o OUT [--force]] [--log LOG] [--tcti TCTI]\n"
	"                    [--predict-args PREDICT-OPTIONS...]\n\n"
	"Unseal under the current boot, then seal the same secret again, to the same bank and\n"
	"PCRs: to the values the TPM holds now and, with --values, also to the predicted values\n"
	"of FILE (a TPM2_PolicyOR of both, so that the next boot and a fallback to this one both\n"
	"unseal). Without --values, the stale branch of an earlier reseal is dropped. The secret is\n"
	"never shown.\n\n"
	"  --values FILE  predicted PCR values ('mboot predict --json' or tpm2_pcrread YAML)\n"
	"  --predict-args PREDICT-OPTIONS...\n"
	"                 predict the values here: the rest of the command line is 'mboot predict'\n"
	"                 options (--kernel K --initrd I --cmdline S --grub-cfg F --efi OLD=NEW\n"
	"                 --log LOG ...); when a sealed PCR cannot be predicted, nothing is resealed\n"
	"                 (exit 1, the PCR and the reason named). It comes last: everything after\n"
	"                 it is predict's\n"
	"  -o OUT         where to write (default: replace SEALED); always atomically: a\n"
	"                 temp file beside it, renamed over it. An existing OUT that is not\n"
	"                 SEALED itself is kept, exit 2, unless --force\n"
	"  --log LOG      the event log kept for explanations (default " MB_DEFAULT_LOG "\n"
	"                 when readable, else the one SEALED keeps)\n"
	"  --tcti TCTI    the TPM; default $TPM2TOOLS_TCTI, else " MB_TPM_DEFAULT_TCTI "\n\n"
	"Exit: 0 resealed, 1 the current boot cannot unseal SEALED, 2 usage or input error,\n"
	"3 TPM error.\n";

static bool same_values(const mb_pcr_bank *a, const mb_pcr_bank *b, uint32_t mask)
{
	unsigned p;

	for (p = 0; p < MB_PCR_COUNT; p++)
		if ((mask & (1u << p)) && memcmp(a->value[p], b->value[p], a->size) != 0)
			return false;
	return true;
}

/*
 * reseal --predict-args: the next boot's values of the sealed PCRs, predicted from today's
 * log and the given updates. A sealed PCR that cannot be predicted stops the reseal: a
 * guess would lock the secret out of the next boot.
 */
static int predict_sealed(const mb_sealed *s, predict_args *pa, mb_predict_result **res, const mb_pcr_bank **pred)
{
	mb_event_log *log = NULL;
	mb_error err = { 0 };
	uint32_t bad;
	int rc = tool_load_log(pa->log_path, &log);

	if (rc)
		return rc;
	pa->in.log = log;
	*res = calloc(1, sizeof(**res));
	if (!*res || mb_predict(&pa->in, *res, &err) < 0) {
		tool_report("predict", &err);
		if (!*res)
			mb_event_log_free(log);
		return EXIT_USAGE;
	}
	bad = (*res)->unpredictable & s->mask;
	if (bad) {
		for (unsigned p = 0; p < MB_PCR_COUNT; p++)
			if (bad & (1u << p))
				fprintf(stderr, "PCR %u cannot be predicted: %s\n", p,
					(*res)->why[p] ? (*res)->why[p] : "unknown");
		fprintf(stderr, "Nothing resealed: the secret is sealed to a PCR the next boot's value of which "
			"is unknown.\n");
		return EXIT_FAILED;
	}
	*pred = mb_pcr_values_bank_const(&(*res)->values, s->pcrs.alg);
	if (!*pred || ((*pred)->present & s->mask) != s->mask) {
		tool_errorf("%s: the log has no %s values for some of the sealed PCRs: they cannot be predicted",
			    pa->log_path, mb_digest_by_alg(s->pcrs.alg)->name);
		return EXIT_FAILED;
	}
	return EXIT_OK;
}

static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int verb_reseal(int argc, char **argv)
{
	const char *in, *out, *values, *log_path;
	seal_args args;
	secret_buf secret = { 0 };
	mb_sealed s = { 0 };
	mb_pcr_values v;
	mb_pcr_bank predicted;
	const mb_pcr_bank *cur, *pred = NULL;
	mb_error err = { 0 };
	mb_tpm *tpm = NULL;
	static predict_args pa;
	mb_predict_result *res = NULL;
	int rc, i, split = 0, full_argc = argc;
	bool replace = false;
	char *own_path = NULL;

	(void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	/* everything after --predict-args is predict's (argv[split] stands as its argv[0]) */
	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--predict-args") == 0) {
			split = i;
			break;
		}
	if (split)
		argc = split;
	rc = parse_seal_args(argc, argv, "reseal", reseal_help, TAKES_VALUES | TAKES_FORCE, &args);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	in = args.in;
	out = args.out;
	values = args.values;
	log_path = args.log;
	if (split) {
		if (values)
			return tool_usage_error("reseal", "--values and --predict-args: give one");
		rc = predict_parse_args(full_argc - split, argv + split, "reseal --predict-args", &pa);
		if (rc)
			return rc < 0 ? EXIT_OK : rc;
		if (pa.json || pa.write_log)
			return tool_usage_error("reseal", "--predict-args takes no --json or --write-log");
	}
	if (!in)
		return tool_usage_error("reseal", "needs -i SEALED");
	if (!out)
		out = in;
	if (out == in || same_file(in, out)) {
		/* Its own input, which is what reseal is for; through a symlink, the file it points at. */
		replace = true;
		if (strcmp(in, "-") != 0 && !(own_path = realpath(in, NULL))) {
			tool_errorf("%s: %s", in, strerror(errno));
			return EXIT_USAGE;
		}
	} else {
		rc = tool_check_output("reseal", out, args.force);
		if (rc)
			return rc;
		replace = args.force;
	}

	rc = load_sealed(in, &s);
	if (rc)
		return rc;
	if (s.authorized) {
		rc = tool_usage_error("reseal", "%s is sealed to signed policies: nothing to reseal, a new release "
				      "ships a new signature ('mboot policy sign')", in);
		goto out;
	}
	if (values) {
		rc = tool_load_pcr_bank(values, s.pcrs.alg, s.mask, "sealed PCRs", &predicted);
		if (rc)
			goto out;
		pred = &predicted;
	}
	if (split) {
		rc = predict_sealed(&s, &pa, &res, &pred);
		if (rc)
			goto out;
	}
	{
		uint8_t *log = NULL;
		size_t log_size = 0;

		rc = read_kept_log(log_path, &log, &log_size);
		if (rc)
			goto out;
		if (log) { /* else the one SEALED keeps stays */
			free(s.eventlog);
			s.eventlog = log;
			s.eventlog_size = log_size;
		}
	}

	if (secret_alloc(&secret) < 0) {
		tool_errorf("out of memory");
		rc = EXIT_USAGE;
		goto out;
	}
	rc = tool_tpm_open(args.tcti, &tpm);
	if (rc)
		goto out;
	rc = unseal_secret(tpm, &s, log_path ? log_path : MB_DEFAULT_LOG, &secret);
	if (rc)
		goto out;

	/* The new policy: the current values, and the predicted ones when they differ. */
	if (mb_tpm_read_pcrs(tpm, &s.pcrs.alg, 1, s.mask, &v, NULL, &err) < 0) {
		rc = tool_tpm_exit(&err);
		goto out;
	}
	cur = mb_pcr_values_bank_const(&v, s.pcrs.alg);
	if (!cur || (cur->present & s.mask) != s.mask) {
		tool_errorf("TPM: cannot read all of the sealed PCRs");
		rc = EXIT_TPM;
		goto out;
	}
	s.pcrs = *cur;
	s.pcrs.present &= s.mask;
	s.n_branches = 0;
	if (pred && !same_values(pred, cur, s.mask)) {
		s.branch[0] = s.pcrs;
		s.branch[1] = *pred;
		s.branch[1].present &= s.mask;
		s.branch_mask[0] = s.branch_mask[1] = s.mask;
		s.n_branches = 2;
		if (mb_policy_pcr_digest(NULL, &s.branch[0], s.mask, s.branch_digest[0], &err) < 0 ||
		    mb_policy_pcr_digest(NULL, &s.branch[1], s.mask, s.branch_digest[1], &err) < 0 ||
		    mb_policy_or_digest((const uint8_t (*)[MB_POLICY_DIGEST_SIZE]) s.branch_digest, 2, s.policy, &err) < 0) {
			tool_report("policy", &err);
			rc = EXIT_USAGE;
			goto out;
		}
	} else if (mb_policy_pcr_digest(NULL, &s.pcrs, s.mask, s.policy, &err) < 0) {
		tool_report("policy", &err);
		rc = EXIT_USAGE;
		goto out;
	}
	rc = seal_write(tpm, &secret, &s, true, own_path ? own_path : out, replace, "reseal");
	if (rc == EXIT_OK)
		printf("Resealed to %s: %s.\n", out,
		       s.n_branches ? "the current values or the predicted ones (PolicyOR)" : "the current values");
out:
	free(own_path);
	secret_free(&secret);
	mb_sealed_done(&s);
	mb_tpm_free(tpm);
	if (res) {
		mb_event_log_free((mb_event_log *) pa.in.log);
		mb_predict_result_done(res);
		free(res);
	}
	return rc;
}
