/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>

#include "tool/options.h"
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

int verb_pcrs(int argc, char **argv)
{
	const char *tcti = NULL;
	tool_banks banks = { 0 };
	uint32_t mask = (1u << MB_PCR_COUNT) - 1;
	tool_json json = TOOL_JSON_OFF;
	const tool_option options[] = {
		TOOL_OPT_JSON_STYLE(&json),
		TOOL_OPT_PCR_LIST("pcr", 0, &mask),
		TOOL_OPT_BANK_LIST("bank", 0, &banks),
		TOOL_OPT_STR("tcti", 0, &tcti),
		TOOL_OPT_END,
	};
	mb_pcr_values *v = NULL;
	mb_error err = { 0 };
	mb_tpm *tpm = NULL;
	int rc;

	rc = tool_parse_options("pcrs", pcrs_help, options, argc, argv, 0);
	if (rc != TOOL_OPTS_GO_ON)
		return rc;

	rc = tool_tpm_open(tcti, &tpm);
	if (rc != EXIT_OK)
		return rc;
	v = tool_pcr_values_new();
	if (!v) {
		rc = EXIT_USAGE;
		goto out;
	}
	if (mb_tpm_read_pcrs(tpm, banks.n ? banks.alg : NULL, banks.n, mask, v, NULL, &err) < 0) {
		rc = tool_tpm_exit(&err);
		goto out;
	}
	if (json) {
		rc = tool_json_text_print(mb_pcr_values_to_json(v, json != TOOL_JSON_COMPACT));
	} else {
		rc = tool_print_pcr_values(v);
	}
out:
	mb_pcr_values_free(v);
	mb_tpm_free(tpm);
	return rc;
}
