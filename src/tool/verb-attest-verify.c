/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mboot attest verify: the verifier's judgement of a machine's evidence (docs/attest.md). No TPM. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/attest.h>
#include <mboot/policy.h>

#include "shared/fileio.h"
#include "shared/hex.h"
#include "shared/text-escape.h"
#include "tool/options.h"
#include "tool/tool.h"
#include "tool/verbs.h"

static const char attest_verify_help[] =
	"Usage: mboot attest verify EVIDENCE --machine MACHINE --nonce HEX [--policy POLICY]\n"
	"                           [--baseline EVIDENCE] [--userspace-pcrs LIST]\n"
	"                           [--min-bank NAME] [--ima-state FILE] [--ima-state-out FILE]\n"
	"                           [--json] [--compact]\n\n"
	"Judge a machine's evidence ('mboot quote', or assembled from tpm2_quote output) without a TPM:\n"
	"the quote's signature with the AK enrolled in MACHINE ('mboot attest challenge'), its magic\n"
	"and type, the nonce, that the PCR selection it signs is exactly the PCR values carried and that\n"
	"pcrDigest is their hash; then the firmware and userspace logs are replayed against the quoted\n"
	"values bank by bank, failing closed as 'mboot verify' does, and judged by the policy. An IMA\n"
	"list the evidence carries is replayed against the quoted PCR 10 (entries the quote does not\n"
	"cover yet are left for the next evidence) and judged by the policy's \"ima\" section.\n"
	"Each failed check is a named reason:\n"
	"  ak-not-enrolled       the evidence's AK is not the machine's\n"
	"  signature-invalid     the signature does not verify with the machine's AK\n"
	"  signature-scheme      a signature of another kind than the AK makes\n"
	"  not-tpm-generated     no TPM_GENERATED_VALUE: data the AK signed, not a TPM quote\n"
	"  not-quote             a TPMS_ATTEST of another type than a quote\n"
	"  nonce-mismatch        extraData is not the nonce (an old or another verifier's quote)\n"
	"  selection-mismatch    the PCRs quoted are not exactly the PCR values carried\n"
	"  pcr-digest-mismatch   pcrDigest is not the hash of the values carried\n"
	"  log-not-verified      the logs do not replay to the quoted values (the PCRs named)\n"
	"  policy-violated       the policy refuses the boot (the events named)\n"
	"  bank-too-weak         no quoted bank that verified is as strong as the strongest bank the\n"
	"                        firmware log lists (a sha1-only quote of a TPM with sha256 active),\n"
	"                        --min-bank or the policy's \"min_bank\"\n\n"
	"  --machine MACHINE     the machine record of the enrolled AK\n"
	"  --nonce HEX           the nonce sent to the machine: 0 to 64 bytes, as extraData holds\n"
	"                        ('' for an empty one; evidence made by other tools)\n"
	"  --policy POLICY       judge the verified logs with this policy (docs/policy.md)\n"
	"  --baseline EVIDENCE   an earlier good evidence of the machine (signed by its AK): report what\n"
	"                        changed since (events, firmwareVersion, resetCount/restartCount: a\n"
	"                        reboot); a report, not a reason to refuse\n"
	"  --userspace-pcrs LIST the PCRs userspace records may extend (default 11-15)\n"
	"  --min-bank NAME       a quoted bank at least as strong as NAME (sha1, sha256, sha384,\n"
	"                        sha512, sm3_256; strength by digest size) must verify, besides the\n"
	"                        strongest bank the firmware log lists (always required)\n"
	"  --ima-state FILE      the IMA state of this boot after the machine's last evidence\n"
	"                        (--ima-state-out): needed for evidence whose IMA list starts past\n"
	"                        entry 0 ('mboot quote --ima-start')\n"
	"  --ima-state-out FILE  write the IMA state after this evidence (nothing when none: no list,\n"
	"                        or one that does not replay); valid under this policy only\n"
	"  --json                the verdict as JSON: {\"trusted\", \"reasons\": [{\"name\", \"detail\"}],\n"
	"                        \"quote\", \"logs\", \"policy\", \"ima\", \"baseline\"} (docs/attest.md)\n"
	"  --compact             the JSON on one line (implies --json)\n\n"
	"Exit: 0 trusted, 1 not trusted, 2 usage or malformed input.\n";

static int load(const char *path, uint8_t **ret, size_t *ret_size)
{
	mb_error err = { 0 };

	if (file_read(path, MB_ATTEST_FILE_MAX, ret, ret_size, &err) < 0) {
		tool_report(path, &err);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

void attest_print_verdict(bool trusted, bool with_policy, const attest_reason_text *reasons, size_t n)
{
	size_t i;

	if (trusted) {
		printf("trusted: the quote is the enrolled AK's, for this nonce; the logs replay to the quoted values%s\n",
		       with_policy ? " and meet the policy" : "");
		return;
	}
	printf("NOT TRUSTED:\n");
	/* The library's details are escaped already; a verifier's answer (attest push) is escaped here. */
	for (i = 0; i < n; i++) {
		char *name = text_escape_str(reasons[i].name), *detail = text_escape_str(reasons[i].detail);

		printf("  %s: %s\n", name ? name : "?", detail ? detail : "");
		free(name);
		free(detail);
	}
}

int attest_verify(int argc, char **argv)
{
	const char *machine_path = NULL, *nonce_hex = NULL, *policy_path = NULL, *baseline_path = NULL;
	const char *state_path = NULL, *state_out = NULL, *state_text;
	uint8_t *state = NULL;
	size_t state_size = 0;
	mb_attest_verify_options opts = MB_OPTIONS_INIT(mb_attest_verify_options);
	const mb_digest_info *min_bank = NULL;
	uint8_t nonce[MB_ATTEST_EXTRA_DATA_MAX], *evidence = NULL, *machine = NULL, *baseline = NULL;
	size_t evidence_size = 0, machine_size = 0, baseline_size = 0, len, i;
	mb_policy *policy = NULL;
	mb_attest_verdict *v = NULL;
	mb_error err = { 0 };
	tool_json json = TOOL_JSON_OFF;
	const tool_option options[] = {
		TOOL_OPT_STR("machine", 0, &machine_path),
		TOOL_OPT_STR("nonce", 0, &nonce_hex),
		TOOL_OPT_STR("policy", 0, &policy_path),
		TOOL_OPT_STR("baseline", 0, &baseline_path),
		TOOL_OPT_PCR_LIST("userspace-pcrs", 0, &opts.userspace_pcrs),
		TOOL_OPT_ONE_BANK("min-bank", 0, &min_bank),
		TOOL_OPT_STR("ima-state", 0, &state_path),
		TOOL_OPT_STR("ima-state-out", 0, &state_out),
		TOOL_OPT_JSON_STYLE(&json),
		TOOL_OPT_END,
	};
	int rc;

	rc = tool_parse_options("attest verify", attest_verify_help, options, argc, argv, 1);
	if (rc != TOOL_OPTS_GO_ON)
		return rc;
	if (optind == argc)
		return tool_usage_error("attest verify", "no EVIDENCE given");
	if (!machine_path)
		return tool_usage_error("attest verify", "--machine MACHINE is required");
	if (!nonce_hex)
		return tool_usage_error("attest verify", "--nonce HEX is required");
	len = strlen(nonce_hex);
	/* Any extraData a TPM takes (evidence made elsewhere), '' for the empty one. */
	if (len % 2 || len / 2 > MB_ATTEST_EXTRA_DATA_MAX || hex_parse(nonce_hex, len, nonce, len / 2) < 0)
		return tool_usage_error("attest verify", "--nonce: not 0 to %d bytes of hex", MB_ATTEST_EXTRA_DATA_MAX);
	opts.nonce = nonce;
	opts.nonce_size = len / 2;
	opts.min_bank = min_bank ? min_bank->alg : 0;

	if (policy_path && (rc = tool_load_policy(policy_path, &policy)) != EXIT_OK)
		return rc;
	opts.policy = policy;
	rc = load(argv[optind], &evidence, &evidence_size);
	if (rc == EXIT_OK)
		rc = load(machine_path, &machine, &machine_size);
	if (rc == EXIT_OK && baseline_path)
		rc = load(baseline_path, &baseline, &baseline_size);
	if (rc == EXIT_OK && state_path)
		rc = load(state_path, &state, &state_size);
	if (rc == EXIT_OK && state_out)
		rc = tool_check_output("attest verify", state_out, true);
	if (rc != EXIT_OK)
		goto out;
	opts.ima_state = (const char *) state;
	opts.ima_state_size = state_size;
	opts.baseline = (const char *) baseline;
	opts.baseline_size = baseline_size;
	if (mb_attest_verify((const char *) evidence, evidence_size, (const char *) machine, machine_size, &opts, &v,
			     &err) < 0) {
		tool_report(argv[optind], &err);
		rc = EXIT_USAGE;
		goto out;
	}
	if (json) {
		rc = tool_json_text_print(mb_attest_verdict_to_json(v, json != TOOL_JSON_COMPACT));
		if (rc != EXIT_OK)
			goto out;
	} else {
		size_t n = mb_attest_verdict_n_reasons(v);
		attest_reason_text *reasons = calloc(n ? n : 1, sizeof(*reasons));

		if (!reasons) {
			tool_errorf("out of memory");
			rc = EXIT_USAGE;
			goto out;
		}
		for (i = 0; i < n; i++)
			reasons[i].name = mb_attest_reason_name(mb_attest_verdict_reason(v, i, &reasons[i].detail));
		attest_print_verdict(mb_attest_verdict_trusted(v), policy != NULL, reasons, n);
		free(reasons);
	}
	rc = mb_attest_verdict_trusted(v) ? EXIT_OK : EXIT_FAILED;
	if (state_out && (state_text = mb_attest_verdict_ima_state(v)) &&
	    tool_write_output("attest verify", state_out, state_text, strlen(state_text), 0644, true) != EXIT_OK)
		rc = EXIT_USAGE;
out:
	mb_attest_verdict_free(v);
	mb_policy_free(policy);
	free(evidence);
	free(machine);
	free(baseline);
	free(state);
	return rc;
}
