/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mboot log extend: replay a recorded boot into a (software) TPM, event by event. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool/options.h"
#include "tool/tool.h"
#include "tool/verbs.h"

static const char extend_help[] =
	"Usage: mboot log extend LOG [--bank NAME]... [--force] [--tcti TCTI]\n\n"
	"Replay a recorded boot log into a TPM: every event that a replay extends (not\n"
	"EV_NO_ACTION, PCR 0-23) becomes a TPM2_PCR_Extend with the event's own digests, in\n"
	"log order. On a fresh software TPM this rebuilds the PCRs of the machine that wrote\n"
	"the log. It never changes a real machine's boot evidence unless forced.\n\n"
	"Checks before the first extend (each failure exits 1 and extends nothing):\n"
	"  - every active bank of the TPM must be in the log: a bank the log does not carry\n"
	"    could not be rebuilt. --bank limits the extends to the banks named (the other\n"
	"    TPM banks are left in reset state). Log banks the TPM lacks are skipped.\n"
	"  - the TPM's PCRs must be in reset state (0-16 and 23 zero, 17-22 all ones; PCR 0\n"
	"    0...0L for a log whose StartupLocality event says L); --force skips this check.\n"
	"  - a log with an H-CRTM start (EV_EFI_HCRTM_EVENT) cannot be rebuilt: its PCR 0\n"
	"    begins with a hash sequence at locality 4 whose input the log does not hold.\n\n"
	"A TPM that waits for TPM2_Startup (a swtpm after 'swtpm_ioctl -i', or started\n"
	"without startup-clear) is started here, at the log's StartupLocality (0 unless the\n"
	"log says otherwise); this needs a TCTI that carries a locality (swtpm, mssim).\n\n"
	"  --bank NAME   extend only this bank (sha1, sha256, sha384, sha512); may be repeated\n"
	"  --force       extend even if the PCRs are not in reset state\n"
	"  --tcti TCTI   the TPM, e.g. swtpm:path=/tmp/sock; default $TPM2TOOLS_TCTI, else\n"
	"                " MB_TPM_DEFAULT_TCTI "\n\n"
	"Exit: 0 every event extended, 1 refused (see above), 2 usage or unreadable log,\n"
	"3 TPM error.\n";

int log_extend(int argc, char **argv)
{
	const char *tcti = NULL, *path;
	tool_banks only = { 0 };
	bool force = false;
	const tool_option options[] = {
		TOOL_OPT_BANK_LIST("bank", 0, &only),
		TOOL_OPT_BOOL("force", 0, &force),
		TOOL_OPT_STR("tcti", 0, &tcti),
		TOOL_OPT_END,
	};
	uint16_t used[MB_MAX_BANKS];
	mb_log_extend_options opts = { .size = sizeof(opts) };
	mb_log_extend_result res = { .size = sizeof(res), .banks = used, .max_banks = MB_MAX_BANKS };
	mb_event_log *log = NULL;
	mb_error err = { 0 };
	char what[300];
	size_t b;
	int rc;

	rc = tool_parse_options("log extend", extend_help, options, argc, argv, 1);
	if (rc != TOOL_OPTS_GO_ON)
		return rc;
	if (optind == argc)
		return tool_usage_error("log extend", "LOG missing");
	path = argv[optind];

	rc = tool_load_log(path, &log);
	if (rc != EXIT_OK)
		return rc;
	opts.banks = only.n ? only.alg : NULL;
	opts.n_banks = only.n;
	opts.force = force;
	/* tpm2-tss logs warnings to stderr by default; mboot reports errors itself, once */
	setenv("TSS2_LOG", "all+none", 0);
	rc = mb_tpm_extend_log(tcti, log, &opts, &res, &err);
	if (res.started)
		fprintf(stderr, "mboot: log extend: started the TPM (TPM2_Startup(CLEAR)) at locality %u\n",
			res.startup_locality);
	if (rc < 0) {
		snprintf(what, sizeof(what), "log extend %s", path);
		tool_report(what, &err);
		rc = err.code == MB_ERR_LOG_EXTEND_REFUSED		? EXIT_FAILED
		     : err.code == MB_ERR_TPM || err.code == -EOPNOTSUPP ? EXIT_TPM
									 : EXIT_USAGE;
		goto out;
	}
	printf("extended %u events into %zu bank%s", res.extended, res.n_banks, res.n_banks == 1 ? "" : "s");
	for (b = 0; b < res.n_banks; b++) {
		char name[8];

		printf("%s%s", b ? ", " : " (", mb_digest_alg_name(res.banks[b], name));
	}
	printf(")\n");
	if (res.skipped_digests)
		fprintf(stderr, "mboot: log extend: %u digests of banks the TPM does not have (or --bank "
			"left out) were not extended\n", res.skipped_digests);
	rc = EXIT_OK;
out:
	mb_event_log_free(log);
	return rc;
}
