/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mboot quote: the evidence of this boot for a verifier (docs/attest.md): a TPM2_Quote of
 * the PCRs with the AK, the PCR values, and the logs that explain them (mb_tpm_quote).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "shared/fileio.h"
#include "shared/hex.h"
#include "tool/options.h"
#include "tool/tool.h"
#include "tool/verbs.h"

static const char quote_help[] =
	"Usage: mboot quote --nonce HEX [--pcrs LIST] [--bank NAME]... [--ak-file FILE]\n"
	"                   [--log LOG] [--userspace-log FILE] [--ima-log FILE | --no-ima-log]\n"
	"                   [--ima-start N [--ima-last HEX]] [--eventlog-sha256 HEX]\n"
	"                   [-o EVIDENCE] [--force] [--tcti TCTI]\n\n"
	"Quote the PCRs with the Attestation Key ('mboot attest enroll') over the verifier's\n"
	"nonce, and write the evidence 'mboot attest verify' judges: the quote (TPMS_ATTEST and\n"
	"its signature, as the TPM returned them), the PCR values quoted, the AK's public part,\n"
	"the firmware event log, the userspace log and the kernel's IMA list. The values are read\n"
	"in one snapshot with the quote: if a PCR is extended meanwhile (the update counter moves,\n"
	"or the quote's pcrDigest is not the hash of the values read) the quote is made again.\n\n"
	"  --nonce HEX         the verifier's nonce, 0 to 64 bytes ('' empty; required)\n"
	"  --pcrs LIST         the PCRs to quote, e.g. 0-7,11 (default: all 24)\n"
	"  --bank NAME         a bank to quote (may be repeated; default: every active bank)\n"
	"  --ak-file FILE      the AK; default " MB_AK_FILE_DEFAULT "\n"
	"  --log LOG           the firmware event log (default " MB_DEFAULT_LOG ";\n"
	"                      left out when that does not exist)\n"
	"  --userspace-log FILE  the userspace measurement log; default " MB_CEL_DEFAULT_PATH "\n"
	"                      when it exists. Read under a shared lock held until the quote is\n"
	"                      made, so no measurement slips in between.\n"
	"  --ima-log FILE      the kernel's binary IMA list; default\n"
	"                      " MB_IMA_DEFAULT_PATH "\n"
	"                      when it can be read, PCR 10 is quoted and the TPM is the system's\n"
	"                      (no TCTI but a device one). Read after the quote: it then holds\n"
	"                      every entry the quoted PCR 10 covers (docs/attest.md, \"IMA\")\n"
	"  --no-ima-log        carry no IMA list\n"
	"  --ima-start N       leave out the list's first N entries, which the verifier judged\n"
	"                      already (it keeps their state); the whole list when it has fewer\n"
	"  --ima-last HEX      entry N-1's template hash as the verifier has it (SHA-1): the whole\n"
	"                      list when this boot's differs (a reboot)\n"
	"  --eventlog-sha256 HEX  the SHA-256 of the firmware log whose judgment the verifier\n"
	"                      keeps: when the log's is this, the evidence names the log by it\n"
	"                      instead of carrying it (docs/attest.md)\n"
	"  -o EVIDENCE         the evidence (JSON); default standard output\n"
	"  --force             replace an existing EVIDENCE\n"
	"  --tcti TCTI         the TPM; default $TPM2TOOLS_TCTI, else " MB_TPM_DEFAULT_TCTI "\n\n"
	"Exit: 0 quoted, 2 usage or input error, 3 TPM error.\n";

/* A log's bytes; a missing default log is no log, a missing named one an error. */
static int read_log(const char *path, bool named, size_t max, uint8_t **ret, size_t *ret_size)
{
	mb_error err = { 0 };
	int r = file_read(path, max, ret, ret_size, &err);

	if (r == -ENOENT && !named) {
		*ret = NULL;
		*ret_size = 0;
		return EXIT_OK;
	}
	if (r < 0) {
		tool_report(path, &err);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/* A firmware log the verifier would refuse as malformed is refused here, before the quote. */
static int check_log(const char *path, const uint8_t *data, size_t size)
{
	mb_event_log *log = NULL;
	mb_error err = { 0 };

	if (mb_event_log_parse(data, size, &log, &err) < 0) {
		tool_report(path, &err);
		return EXIT_USAGE;
	}
	mb_event_log_free(log);
	return EXIT_OK;
}

/* The kernel's IMA list is of the kernel's TPM: a TCTI naming another (swtpm, mssim) is not it. */
static bool system_tpm(const char *tcti)
{
	if (!tcti)
		tcti = getenv("TPM2TOOLS_TCTI");
	return !tcti || !*tcti || strncmp(tcti, "device", 6) == 0;
}

int quote_logs_defaults(quote_logs *l, uint32_t pcr_mask, const char *tcti, const char *verb)
{
	l->log_named = l->log_path != NULL;
	l->us_named = l->us_path != NULL;
	l->ima_named = l->ima_path != NULL;
	if (!l->log_path)
		l->log_path = MB_DEFAULT_LOG;
	if (!l->us_path)
		l->us_path = MB_CEL_DEFAULT_PATH;
	if (l->ima_named && l->no_ima) {
		tool_usage_error(verb, "--ima-log and --no-ima-log: one or the other");
		return -1;
	}
	/* the list explains PCR 10 alone: without it quoted, it is no evidence of anything */
	if (!l->ima_named && !l->no_ima && (!pcr_mask || (pcr_mask & (1u << 10))) && system_tpm(tcti) &&
	    access(MB_IMA_DEFAULT_PATH, R_OK) == 0)
		l->ima_path = MB_IMA_DEFAULT_PATH;
	if (l->no_ima)
		l->ima_path = NULL;
	return 0;
}

int attest_nonce_option(void *target, const char *arg, const char *verb)
{
	attest_nonce *n = target;
	size_t len = strlen(arg);

	/* What the TPM takes as qualifyingData: 0 to 64 bytes ('' the empty one). */
	if (len % 2 || len / 2 > MB_ATTEST_EXTRA_DATA_MAX || hex_parse(arg, len, n->bytes, len / 2) < 0)
		return tool_usage_error(verb, "--nonce is 0 to %u bytes of hex", MB_ATTEST_EXTRA_DATA_MAX);
	n->size = len / 2;
	n->given = true;
	return EXIT_OK;
}

typedef struct ima_hash {
	uint8_t bytes[20];
	bool given;
} ima_hash;

typedef struct log_hash {
	uint8_t bytes[32];
	bool given;
} log_hash;

static int log_sha256_option(void *target, const char *arg, const char *verb)
{
	log_hash *h = target;

	if (strlen(arg) != 64 || hex_parse(arg, 64, h->bytes, 32) < 0)
		return tool_usage_error(verb, "--eventlog-sha256 is a SHA-256: 64 hex digits");
	h->given = true;
	return EXIT_OK;
}

static int ima_last_option(void *target, const char *arg, const char *verb)
{
	ima_hash *h = target;

	if (strlen(arg) != 40 || hex_parse(arg, 40, h->bytes, 20) < 0)
		return tool_usage_error(verb, "--ima-last is a SHA-1 template hash: 40 hex digits");
	h->given = true;
	return EXIT_OK;
}

int quote_evidence(const char *tcti, mb_tpm **tpm, const char *ak, size_t ak_size, const quote_logs *logs,
		   mb_quote_input *in, char **ret_evidence)
{
	uint8_t *log = NULL, *us = NULL;
	mb_error err = { 0 };
	int us_fd = -1, rc;

	rc = read_log(logs->log_path, logs->log_named, MB_ATTEST_FILE_MAX / 2, &log, &in->eventlog_size);
	if (rc == EXIT_OK && log)
		rc = check_log(logs->log_path, log, in->eventlog_size);
	if (rc != EXIT_OK)
		goto out;
	in->eventlog = log;

	/* The userspace log stays locked until the quote: a measurement cannot fall between the two. */
	rc = file_open_locked(logs->us_path, O_RDONLY, 0, LOCK_SH, TOOL_LOCK_TIMEOUT_MS, &us_fd, &err);
	if (rc == -ENOENT && !logs->us_named) {
		rc = EXIT_OK;
	} else if (rc < 0) {
		tool_report(logs->us_path, &err);
		rc = EXIT_USAGE;
		goto out;
	} else {
		rc = file_read_fd(us_fd, MB_ATTEST_FILE_MAX / 4, &us, &in->userspace_log_size, &err);
		if (rc < 0) {
			tool_report(logs->us_path, &err);
			rc = EXIT_USAGE;
			goto out;
		}
		in->userspace_log = us;
	}

	in->ima_log_path = logs->ima_path;
	if (!*tpm && (rc = tool_tpm_open(tcti, tpm)) != EXIT_OK)
		goto out;
	if (mb_tpm_quote(*tpm, ak, ak_size, in, ret_evidence, &err) < 0)
		rc = attest_machine_exit("quote", &err);
out:
	if (us_fd >= 0)
		close(us_fd);
	in->eventlog = in->userspace_log = NULL;
	in->ima_log_path = NULL;
	free(log);
	free(us);
	return rc;
}

int verb_quote(int argc, char **argv)
{
	const char *ak_path = MB_AK_FILE_DEFAULT, *out = "-", *tcti = NULL;
	quote_logs logs = { 0 };
	attest_nonce nonce = { 0 };
	ima_hash ima_last = { 0 };
	log_hash log_known = { 0 };
	unsigned ima_start = 0;
	tool_banks banks = { 0 };
	bool force = false;
	mb_quote_input in = MB_OPTIONS_INIT(mb_quote_input);
	const tool_option options[] = {
		TOOL_OPT_FN("nonce", 0, &nonce, attest_nonce_option),
		TOOL_OPT_PCR_LIST("pcrs", 0, &in.pcr_mask),
		TOOL_OPT_BANK_LIST("bank", 0, &banks),
		TOOL_OPT_STR("ak-file", 0, &ak_path),
		QUOTE_LOG_OPTIONS(&logs),
		TOOL_OPT_NUMBER("ima-start", 0, &ima_start, 0, UINT_MAX),
		TOOL_OPT_FN("ima-last", 0, &ima_last, ima_last_option),
		TOOL_OPT_FN("eventlog-sha256", 0, &log_known, log_sha256_option),
		TOOL_OPT_STR("output", 'o', &out),
		TOOL_OPT_BOOL("force", 0, &force),
		TOOL_OPT_STR("tcti", 0, &tcti),
		TOOL_OPT_END,
	};
	char *ak = NULL, *evidence = NULL;
	size_t ak_size = 0;
	int rc;
	mb_tpm *tpm = NULL;

	rc = tool_parse_options("quote", quote_help, options, argc, argv, 0);
	if (rc != TOOL_OPTS_GO_ON)
		return rc;
	if (!nonce.given)
		return tool_usage_error("quote", "needs --nonce HEX (the verifier's)");
	in.nonce = nonce.bytes;
	in.nonce_size = nonce.size;
	if (banks.n) {
		in.algs = banks.alg;
		in.n_algs = banks.n;
	}
	if (quote_logs_defaults(&logs, in.pcr_mask, tcti, "quote") < 0)
		return EXIT_USAGE;
	if (ima_last.given && !ima_start)
		return tool_usage_error("quote", "--ima-last goes with --ima-start");
	in.ima_start = ima_start;
	in.ima_last = ima_last.given ? ima_last.bytes : NULL;
	in.eventlog_known = log_known.given ? log_known.bytes : NULL;
	rc = tool_check_output("quote", out, force);
	if (rc != EXIT_OK)
		return rc;
	rc = attest_read_ak_file(ak_path, &ak, &ak_size);
	if (rc != EXIT_OK)
		return rc;
	rc = quote_evidence(tcti, &tpm, ak, ak_size, &logs, &in, &evidence);
	if (rc == EXIT_OK)
		rc = tool_write_output("quote", out, evidence, strlen(evidence), 0644, force);
	explicit_bzero(ak, ak_size);
	free(ak);
	free(evidence);
	mb_tpm_free(tpm);
	return rc;
}
