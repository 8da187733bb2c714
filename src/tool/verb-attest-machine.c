/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mboot attest enroll and mboot attest activate: the machine's side of enrollment
 * (docs/attest.md). The TPM work and the formats are the library's (mb_tpm_attest_*).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "shared/fileio.h"
#include "tool/options.h"
#include "tool/tool.h"
#include "tool/verbs.h"

#define AK_FILE_READ_MAX (64u << 10)

static const char enroll_help[] =
	"Usage: mboot attest enroll [--ak-alg ecc|rsa] [--ak-file FILE] [-o REQUEST] [--force]\n"
	"                           [--tcti TCTI]\n\n"
	"Create the Endorsement Key from the TCG EK Credential Profile's templates (the one whose\n"
	"certificate the TPM holds: RSA 2048 at NV 0x01c00002, ECC P-256 at 0x01c0000a, ECC P-384\n"
	"at 0x01c00016; none: RSA 2048), read its certificate, create an Attestation Key (a\n"
	"restricted signing key) under the storage key seal uses, keep the AK in a file and write\n"
	"the enrollment request a verifier answers with 'mboot attest challenge'.\n\n"
	"  --ak-alg ecc|rsa  the AK: ECC P-256 with ECDSA-SHA256 (default), or RSA 2048 with\n"
	"                    RSASSA-SHA256\n"
	"  --ak-file FILE    where the AK is kept (JSON, 0600, written atomically; its private\n"
	"                    part is wrapped by the TPM); default " MB_AK_FILE_DEFAULT "\n"
	"  -o REQUEST        the enrollment request (JSON: EK public and certificate, AK public\n"
	"                    and name); default standard output\n"
	"  --force           replace an existing AK file or REQUEST (the old AK is lost)\n"
	"  --tcti TCTI       the TPM; default $TPM2TOOLS_TCTI, else " MB_TPM_DEFAULT_TCTI "\n\n"
	"Exit: 0 enrolled, 2 usage or input error, 3 TPM error.\n";

static const char activate_help[] =
	"Usage: mboot attest activate -i CHALLENGE [-o RESPONSE] [--ak-file FILE] [--force]\n"
	"                             [--tcti TCTI]\n\n"
	"Answer a verifier's challenge: TPM2_ActivateCredential with the AK and the EK (its\n"
	"policy: PolicySecret on the endorsement hierarchy). Only the TPM holding that EK can\n"
	"open a credential made for that AK's name; the response carries what it opened.\n\n"
	"  -i CHALLENGE      the challenge ('mboot attest challenge'), or - for standard input\n"
	"  -o RESPONSE       the response (JSON); default standard output\n"
	"  --ak-file FILE    the AK 'mboot attest enroll' kept; default " MB_AK_FILE_DEFAULT "\n"
	"  --force           replace an existing RESPONSE\n"
	"  --tcti TCTI       the TPM; default $TPM2TOOLS_TCTI, else " MB_TPM_DEFAULT_TCTI "\n\n"
	"Exit: 0 activated, 1 refused (the challenge is for another AK, or the TPM cannot open\n"
	"it: made for another AK or another TPM's EK), 2 usage or malformed input, 3 TPM error.\n";

int attest_machine_exit(const char *what, const mb_error *err)
{
	tool_report(what, err);
	if (err->code == MB_ERR_ATTEST_REFUSED)
		return EXIT_FAILED;
	if (err->code == -EBADMSG || err->code == -E2BIG || err->code == -EINVAL)
		return EXIT_USAGE;
	return EXIT_TPM; /* the TPM's errors, and running out of memory on the way */
}

int attest_read_ak_file(const char *path, char **ret, size_t *ret_size)
{
	mb_error err = { 0 };
	uint8_t *buf = NULL;
	int r = file_read(path, AK_FILE_READ_MAX, &buf, ret_size, &err);

	if (r == -ENOENT) {
		tool_errorf("%s: no AK file (run 'mboot attest enroll' first, or give --ak-file)", path);
		return EXIT_USAGE;
	}
	if (r < 0) {
		tool_report(path, &err);
		return EXIT_USAGE;
	}
	*ret = (char *) buf;
	return EXIT_OK;
}

int attest_ak_dir(const char *ak_path)
{
	if (strcmp(ak_path, MB_AK_FILE_DEFAULT) == 0 && mkdir(MB_AK_DIR_DEFAULT, 0700) < 0 && errno != EEXIST) {
		tool_errorf("%s: cannot create: %s", MB_AK_DIR_DEFAULT, strerror(errno));
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

int attest_enroll(int argc, char **argv)
{
	static const char *const ak_algs[] = { "ecc", "rsa", NULL };
	const char *ak_path = MB_AK_FILE_DEFAULT, *out = "-", *tcti = NULL;
	int alg_index = 0;
	bool force = false;
	const tool_option opts[] = {
		TOOL_OPT_ONE_OF("ak-alg", 0, &alg_index, ak_algs),
		TOOL_OPT_STR("ak-file", 0, &ak_path),
		TOOL_OPT_STR("output", 'o', &out),
		TOOL_OPT_BOOL("force", 0, &force),
		TOOL_OPT_STR("tcti", 0, &tcti),
		TOOL_OPT_END,
	};
	mb_attest_key_alg alg;
	char *ak = NULL, *request = NULL;
	mb_error err = { 0 };
	mb_tpm *tpm = NULL;
	int rc;

	rc = tool_parse_options("attest enroll", enroll_help, opts, argc, argv, 0);
	if (rc != TOOL_OPTS_GO_ON)
		return rc;
	alg = alg_index == 0 ? MB_ATTEST_KEY_ECC : MB_ATTEST_KEY_RSA;
	if (strcmp(ak_path, "-") == 0)
		return tool_usage_error("attest enroll", "the AK is kept in a file, not written to standard output");
	if (strcmp(ak_path, out) == 0)
		return tool_usage_error("attest enroll", "--ak-file and -o name the same file");
	/* Both outputs checked before any TPM work: an existing AK is kept unless --force. */
	rc = tool_check_output("attest enroll", ak_path, force);
	if (rc == EXIT_OK)
		rc = tool_check_output("attest enroll", out, force);
	if (rc != EXIT_OK)
		return rc;
	rc = attest_ak_dir(ak_path);
	if (rc != EXIT_OK)
		return rc;

	rc = tool_tpm_open(tcti, &tpm);
	if (rc != EXIT_OK)
		return rc;
	if (mb_tpm_attest_enroll(tpm, alg, &ak, &request, &err) < 0) {
		rc = attest_machine_exit("TPM", &err);
		goto out;
	}
	rc = tool_write_output("attest enroll", ak_path, ak, strlen(ak), 0600, force);
	if (rc == EXIT_OK)
		rc = tool_write_output("attest enroll", out, request, strlen(request), 0644, force);
out:
	if (ak)
		explicit_bzero(ak, strlen(ak));
	free(ak);
	free(request);
	mb_tpm_free(tpm);
	return rc;
}

int attest_activate(int argc, char **argv)
{
	const char *ak_path = MB_AK_FILE_DEFAULT, *in = NULL, *out = "-", *tcti = NULL;
	bool force = false;
	const tool_option opts[] = {
		TOOL_OPT_STR("input", 'i', &in),
		TOOL_OPT_STR("output", 'o', &out),
		TOOL_OPT_STR("ak-file", 0, &ak_path),
		TOOL_OPT_BOOL("force", 0, &force),
		TOOL_OPT_STR("tcti", 0, &tcti),
		TOOL_OPT_END,
	};
	char *ak = NULL, *response = NULL;
	uint8_t *challenge = NULL;
	size_t ak_size = 0, challenge_size = 0;
	mb_error err = { 0 };
	mb_tpm *tpm = NULL;
	int rc;

	rc = tool_parse_options("attest activate", activate_help, opts, argc, argv, 0);
	if (rc != TOOL_OPTS_GO_ON)
		return rc;
	if (!in)
		return tool_usage_error("attest activate", "needs -i CHALLENGE");
	rc = tool_check_output("attest activate", out, force);
	if (rc != EXIT_OK)
		return rc;
	rc = attest_read_ak_file(ak_path, &ak, &ak_size);
	if (rc != EXIT_OK)
		return rc;
	if (file_read(in, MB_ATTEST_FILE_MAX, &challenge, &challenge_size, &err) < 0) {
		tool_report(in, &err);
		rc = EXIT_USAGE;
		goto out;
	}
	rc = tool_tpm_open(tcti, &tpm);
	if (rc != EXIT_OK)
		goto out;
	if (mb_tpm_attest_activate(tpm, ak, ak_size, (const char *) challenge, challenge_size, &response, &err) < 0) {
		rc = attest_machine_exit("attest activate", &err);
		goto out;
	}
	rc = tool_write_output("attest activate", out, response, strlen(response), 0600, force);
out:
	if (ak)
		explicit_bzero(ak, ak_size);
	free(ak);
	free(challenge);
	free(response);
	mb_tpm_free(tpm);
	return rc;
}
