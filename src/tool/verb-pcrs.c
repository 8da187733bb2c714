/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "tool/tool.h"
#include "tool/verbs.h"

static const char pcrs_help[] =
	"Usage: mboot pcrs [--bank NAME] [--pcr LIST] [--json [--compact]] [--tcti TCTI]\n\n"
	"Print the PCR values the TPM holds now: every PCR of every active bank (found with\n"
	"TPM2_GetCapability), read in as few TPM2_PCR_Read calls as the TPM allows.\n\n"
	"  --bank NAME   only this bank (sha1, sha256, sha384, sha512, sm3_256); may be repeated\n"
	"  --pcr LIST    only these PCRs, e.g. 0,2,4-7\n"
	"  --json        {\"banks\": {\"sha256\": {\"0\": \"<hex>\", ...}}} (the PCR-values format that\n"
	"                'mboot verify --pcrs' reads); otherwise tpm2_pcrread's layout, byte for\n"
	"                byte, as 'mboot log replay' and 'mboot predict' print it\n"
	"  --compact     the JSON on one line (implies --json)\n"
	"  --tcti TCTI   the TPM, e.g. swtpm:path=/tmp/sock; default $TPM2TOOLS_TCTI, else\n"
	"                " MB_TPM_DEFAULT_TCTI "\n\n"
	"Exit: 0 read, 2 usage error, 3 TPM error.\n";

enum { OPT_PCR = 0x100, OPT_BANK, OPT_TCTI };

static const struct option pcrs_options[] = {
	TOOL_JSON_OPTIONS,
	{ "pcr", required_argument, NULL, OPT_PCR },
	{ "bank", required_argument, NULL, OPT_BANK },
	{ "tcti", required_argument, NULL, OPT_TCTI },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

int verb_pcrs(int argc, char **argv)
{
	const char *tcti = NULL;
	uint16_t algs[MB_MAX_BANKS];
	size_t n_algs = 0;
	uint32_t mask = (1u << MB_PCR_COUNT) - 1;
	tool_json json = TOOL_JSON_OFF;
	mb_pcr_values *v = NULL;
	mb_error err = { 0 };
	mb_tpm *tpm = NULL;
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", pcrs_options, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(pcrs_help, stdout);
			return EXIT_OK;
		case TOOL_OPT_JSON:
		case TOOL_OPT_COMPACT:
			tool_json_option(c, &json);
			break;
		case OPT_PCR:
			if (tool_parse_pcr_list(optarg, &mask) < 0)
				return tool_usage_error("pcrs", "bad PCR list '%s' (e.g. 0,2,4-7)", optarg);
			break;
		case OPT_BANK:
			if (tool_bank_list_add("pcrs", optarg, algs, &n_algs) != EXIT_OK)
				return EXIT_USAGE;
			break;
		case OPT_TCTI:
			tcti = optarg;
			break;
		default:
			return tool_usage_error("pcrs", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return tool_usage_error("pcrs", "unexpected argument '%s'", argv[optind]);

	rc = tool_tpm_open(tcti, &tpm);
	if (rc != EXIT_OK)
		return rc;
	v = tool_pcr_values_new();
	if (!v) {
		rc = EXIT_USAGE;
		goto out;
	}
	if (mb_tpm_read_pcrs(tpm, n_algs ? algs : NULL, n_algs, mask, v, NULL, &err) < 0) {
		rc = tool_tpm_exit(&err);
		goto out;
	}
	if (json) {
		char *s = mb_pcr_values_to_json(v, json != TOOL_JSON_COMPACT);

		if (!s) {
			tool_errorf("out of memory");
			rc = EXIT_USAGE;
			goto out;
		}
		printf("%s\n", s);
		free(s);
		rc = EXIT_OK;
	} else {
		rc = tool_print_pcr_values(v);
	}
out:
	mb_pcr_values_free(v);
	mb_tpm_free(tpm);
	return rc;
}
