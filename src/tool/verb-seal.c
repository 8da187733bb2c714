/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mboot seal: a secret released only when the chosen PCRs hold the chosen values, or
 * in any PCR state a key's owner signs (docs/seal.md). The sealing is the library's
 * (mb_seal_secret); this is the command line, and the reading of files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "tool/pin.h"
#include "tool/seal-common.h"
#include "tool/tool.h"
#include "tool/verbs.h"

static const char seal_help[] =
	"Usage: mboot seal --pcrs LIST [--bank NAME] [--values current|FILE] -i SECRET|- -o SEALED\n"
	"                  [--pin [--pin-file F]] [--log LOG] [--tcti TCTI] [--force]\n"
	"       mboot seal --authorized-by PUBKEY -i SECRET|- -o SEALED [--log LOG] [--tcti TCTI] [--force]\n\n"
	"Seal a secret (1-128 bytes) with the TPM so that it is released only when the PCRs in\n"
	"LIST of bank NAME hold the given values (a TPM2_PolicyPCR policy). The parent key is the\n"
	"persistent SRK at 0x81000001 when the TPM has one, else the TCG ECC P-256 SRK, created\n"
	"from its template in the owner hierarchy each time.\n\n"
	"  --pcrs LIST       e.g. 0,2,4,7 (required; sealing to no PCRs needs --force)\n"
	"  --bank NAME       the PCR bank (default sha256)\n"
	"  --values current  the values the TPM holds now (default)\n"
	"  --values FILE     predicted values: a PCR-values file (JSON, or the text of mboot pcrs,\n"
	"                    log replay, predict and tpm2_pcrread), or SELECTION@FILE for the\n"
	"                    digests of tpm2_pcrread -o (e.g. sha256:0,4,7@pcrs.bin)\n"
	"  -i SECRET|-       the secret, from a file or stdin (never from the command line)\n"
	"  -o SEALED         the sealed file (JSON, 0600, written atomically); an existing\n"
	"                    one is kept, exit 2, unless --force\n"
	"  --log LOG         keep this event log in the sealed file, to explain a failed unseal\n"
	"                    (default " MB_DEFAULT_LOG " when readable)\n"
	"  --force           replace an existing SEALED; and allow sealing to no PCRs (--pcrs none)\n"
	"  --pin             TPM + PIN: unsealing also needs a PIN (PolicyPCR then PolicyAuthValue;\n"
	"                    the object's authValue is SHA-256 of the PIN; the TPM counts wrong PINs\n"
	"                    toward its dictionary-attack lockout). Asked twice on the terminal, no\n"
	"                    echo; one line of stdin when stdin is no terminal\n"
	"  --pin-file F      the PIN from file F ('-': stdin), one trailing newline dropped\n"
	"  --authorized-by PUBKEY\n"
	"                    instead of PCR values: a TPM2_PolicyAuthorize policy. The secret is\n"
	"                    released in any PCR state the owner of PUBKEY (PEM, RSA or ECC P-256)\n"
	"                    signs with 'mboot policy sign'; unseal with --signature SIG\n"
	"  --tcti TCTI       the TPM; default $TPM2TOOLS_TCTI, else " MB_TPM_DEFAULT_TCTI "\n\n"
	"Exit: 0 sealed, 2 usage or input error, 3 TPM error.\n";


/* seal with args; the secret is preset's (wiped and freed here), else read from args->in. */
static int seal_main(const seal_args *a, secret_buf *preset)
{
	const char *values, *in, *out, *log_path, *authority;
	const mb_digest_info *bank;
	uint32_t mask;
	seal_args args = *a;
	secret_buf own = { 0 }, *secret = preset ? preset : &own;
	mb_seal_options opt = MB_OPTIONS_INIT(mb_seal_options);
	mb_pcr_bank given;
	uint8_t *auth_key = NULL, *log = NULL;
	size_t auth_key_size = 0, log_size = 0;
	mb_tpm *tpm = NULL;
	secret_buf pin = { 0 };
	int rc;

	if (args.n_values > 1)
		return tool_usage_error("seal", "one --values: a secret is sealed to one PCR state ('mboot reseal' adds "
					"predicted ones)");
	values = args.values ? args.values : "current";
	in = args.in;
	out = args.out;
	log_path = args.log;
	authority = args.authority;
	bank = args.bank ? args.bank : mb_digest_by_alg(MB_ALG_SHA256);
	mask = args.mask;
	if ((!in && !preset) || !out) {
		rc = tool_usage_error("seal", "needs -i SECRET (or -i - for stdin) and -o SEALED");
		goto out;
	}
	if (authority && (args.have_pcrs || args.values || args.bank)) {
		rc = tool_usage_error("seal", "--authorized-by takes no --pcrs, --values or --bank: the "
				      "signatures name the PCRs and their values");
		goto out;
	}
	if (mask & ((1u << 16) | (1u << 23)))
		/* PC Client PTP: PCRs 16 (debug) and 23 (application) are resettable at locality 0 */
		fprintf(stderr, "mboot: note: PCRs 16 and 23 can be reset by any program that can use the TPM: "
			"sealing to them protects nothing\n");
	if (!authority && (!args.have_pcrs || (mask == 0 && !args.force))) {
		rc = tool_usage_error("seal", "refusing to seal to no PCRs: give --pcrs LIST (or --pcrs none --force)");
		goto out;
	}
	if (args.pin && authority) {
		rc = tool_usage_error("seal", "--pin is for secrets sealed to PCR values, not --authorized-by");
		goto out;
	}
	if (args.pin && !preset && strcmp(in, "-") == 0 && pin_reads_stdin(args.pin_file)) {
		rc = tool_usage_error("seal", "the secret and the PIN cannot both come from stdin: give --pin-file F");
		goto out;
	}
	rc = tool_check_output("seal", out, args.force);
	if (rc)
		goto out;

	/* The files first: a bad values file, key or log is an input error before any TPM work. */
	if (authority) {
		rc = read_authority_key(authority, &auth_key, &auth_key_size);
		if (rc)
			goto out;
		opt.authority_public = auth_key;
		opt.authority_public_size = auth_key_size;
	} else {
		opt.pcr_mask = mask;
		opt.bank = bank->alg;
		if (strcmp(values, "current") != 0) {
			rc = tool_load_pcr_bank(values, bank->alg, mask, "PCRs to seal to", &given);
			if (rc)
				goto out;
			opt.values = &given;
		}
	}
	rc = read_kept_log(log_path, &log, &log_size);
	if (rc)
		goto out;
	opt.eventlog = log;
	opt.eventlog_size = log_size;

	if (!preset) {
		rc = secret_alloc(secret);
		if (rc)
			goto out;
		rc = secret_read(in, secret);
		if (rc)
			goto out;
	}

	if (args.pin) {
		rc = pin_read("seal", args.pin_file, true, &pin);
		if (rc)
			goto out;
		opt.pin = pin.p;
		opt.pin_size = pin.size;
	}

	rc = tool_tpm_open(args.tcti, &tpm);
	if (rc)
		goto out;
	rc = seal_write(tpm, secret, &opt, out, args.force, "seal", NULL);
out:
	secret_free(secret);
	secret_free(&pin);
	free(auth_key);
	free(log);
	mb_tpm_free(tpm);
	return rc;
}

int seal_with_secret(const seal_args *args, secret_buf *secret)
{
	return seal_main(args, secret);
}

int verb_seal(int argc, char **argv)
{
	seal_args args;
	int rc;

	(void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	rc = parse_seal_args(argc, argv, "seal", seal_help,
			     TAKES_PCRS | TAKES_BANK | TAKES_VALUES | TAKES_FORCE | TAKES_AUTHORIZED_BY | TAKES_PIN,
			     &args);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	return seal_main(&args, NULL);
}
