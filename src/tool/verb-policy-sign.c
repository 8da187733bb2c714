/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mboot policy sign: approve PCR values for secrets sealed with
 * `mboot seal --authorized-by` (TPM2_PolicyAuthorize; docs/seal.md). No TPM is needed:
 * a release signs the values `mboot predict` computes for its new kernel, and every
 * machine unseals with the new signature without resealing.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/mboot.h>
#include "shared/fileio.h"
#include "shared/hex.h"
#include "tool/options.h"
#include "tool/seal-common.h"
#include "tool/tool.h"
#include "tool/verbs.h"

static const char sign_help[] =
	"Usage: mboot policy sign --key KEY --pcrs LIST [--bank NAME] --values FILE\n"
	"                         [--counter-value N [--nv-index INDEX]] -o SIG [--force]\n\n"
	"Sign the values of the PCRs in LIST, read from FILE, with the private key KEY, for\n"
	"secrets sealed with 'mboot seal --authorized-by PUBKEY' (TPM2_PolicyAuthorize):\n"
	"'mboot unseal --signature SIG' releases them on a machine whose PCRs hold exactly\n"
	"these values. What is signed is SHA-256 of the PolicyPCR digest of the values, the\n"
	"same bytes 'openssl dgst -sha256 -sign KEY' signs.\n\n"
	"  --key KEY      unencrypted PEM private key: RSA 2048/3072/4096 (PKCS#1 v1.5) or\n"
	"                 ECC NIST P-256 (ECDSA); its public half is the PUBKEY of seal\n"
	"  --pcrs LIST    the PCRs whose values are approved, e.g. 4,8,9 (not empty)\n"
	"  --bank NAME    the PCR bank (default sha256)\n"
	"  --values FILE  PCR values: what 'mboot predict', 'mboot pcrs' or 'mboot log replay'\n"
	"                 print (text or --json), tpm2_pcrread's text, or SELECTION@FILE for the\n"
	"                 digests of tpm2_pcrread -o (e.g. sha256:4,8,9@pcrs.bin)\n"
	"  -o SIG         the signature file (JSON, written atomically); an existing one is\n"
	"                 kept, exit 2, unless --force\n"
	"  --force        replace an existing SIG\n"
	"  --counter-value N\n"
	"                 revocable: also approve only while the machine's mboot NV counter\n"
	"                 holds N (PolicyNV, equal), as 'mboot policy counter' prints it there;\n"
	"                 'mboot policy revoke' moves it on, retiring this signature\n"
	"  --nv-index INDEX\n"
	"                 that counter (default 0x01800b01)\n\n"
	"Exit: 0 signed, 2 usage or input error.\n";

static int counter_value_option(void *target, const char *arg, const char *verb)
{
	mb_policy_signature *sig = target;
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (*arg < '0' || *arg > '9' || *end || errno || v >= INT64_MAX)
		return tool_usage_error(verb, "--counter-value wants a decimal number (the counter's value)");
	sig->counter = true;
	sig->counter_value = v;
	return EXIT_OK;
}

int policy_sign(int argc, char **argv)
{
	const char *key_path = NULL, *values = NULL, *out = NULL;
	const mb_digest_info *bank = mb_digest_by_alg(MB_ALG_SHA256);
	uint32_t mask = 0;
	bool force = false;
	mb_policy_signature sig = { 0 };
	uint32_t nv_index = 0;
	const tool_option options[] = {
		TOOL_OPT_FN("counter-value", 0, &sig, counter_value_option),
		TOOL_OPT_FN("nv-index", 0, &nv_index, nv_index_option),
		TOOL_OPT_STR("key", 0, &key_path),
		TOOL_OPT_PCR_LIST("pcrs", 0, &mask),
		TOOL_OPT_ONE_BANK("bank", 0, &bank),
		TOOL_OPT_STR("values", 0, &values),
		TOOL_OPT_STR("output", 'o', &out),
		TOOL_OPT_BOOL("force", 0, &force),
		TOOL_OPT_END,
	};
	mb_error err = { 0 };
	uint8_t *key = NULL, *pub = NULL;
	size_t key_size = 0, pub_size = 0;
	char *json = NULL, name[2 * MB_TPM_NAME_SIZE + 1];
	int rc;

	rc = tool_parse_options("policy sign", sign_help, options, argc, argv, 0);
	if (rc != TOOL_OPTS_GO_ON)
		return rc;
	if (!key_path || !mask || !values || !out)
		return tool_usage_error("policy sign", "needs --key KEY, --pcrs LIST, --values FILE and -o SIG");
	if (nv_index && !sig.counter)
		return tool_usage_error("policy sign", "--nv-index goes with --counter-value");
	rc = tool_check_output("policy sign", out, force);
	if (rc)
		return rc;
	sig.counter_index = nv_index ? nv_index : MB_NV_REVOCATION_DEFAULT;

	rc = tool_load_pcr_bank(values, bank->alg, mask, "PCRs to sign", &sig.pcrs);
	if (rc)
		return rc;
	rc = EXIT_USAGE;
	sig.pcrs.present &= mask;
	sig.mask = mask;
	if (mb_policy_signature_approve(&sig, &err) < 0) {
		tool_report("policy", &err);
		goto out;
	}
	if (file_read(key_path, 64u << 10, &key, &key_size, &err) < 0) {
		tool_report(key_path, &err);
		goto out;
	}
	if (mb_tpm_key_public(key, key_size, &pub, &pub_size, sig.key_name, &err) < 0 ||
	    mb_policy_sign(key, key_size, &sig, &err) < 0) {
		tool_report(key_path, &err);
		goto out;
	}
	json = mb_policy_signature_to_json(&sig);
	if (!json) {
		tool_errorf("out of memory");
		goto out;
	}
	if (tool_write_output("policy sign", out, json, strlen(json), 0644, force) != EXIT_OK)
		goto out;
	printf("Signed %s PCRs", bank->name);
	for (unsigned p = 0; p < MB_PCR_COUNT; p++)
		if (mask & (1u << p))
			printf(" %u", p);
	printf(" with key %s: %s\n", hex_format(sig.key_name, MB_TPM_NAME_SIZE, name), out);
	if (sig.counter)
		printf("Valid while NV counter 0x%08x is at %llu ('mboot policy revoke' retires it).\n", sig.counter_index,
		       (unsigned long long) sig.counter_value);
	rc = EXIT_OK;
out:
	if (key) {
		explicit_bzero(key, key_size);
		free(key);
	}
	free(pub);
	free(json);
	mb_policy_signature_done(&sig);
	return rc;
}

static const char counter_help[] =
	"Usage: mboot policy counter [--nv-index INDEX] [--tcti TCTI]\n"
	"       mboot policy revoke [--nv-index INDEX] [--tcti TCTI]\n\n"
	"The revocation counter of signed policies (docs/seal.md): a TPM NV counter (default\n"
	"0x01800b01) that 'mboot policy sign --counter-value N' binds a signature to. 'counter'\n"
	"prints its value (defining it when absent, owner authorization empty): the N for new\n"
	"signatures. 'revoke' increments it: every signature issued for an earlier value stops\n"
	"unsealing on this machine; sign again with the new value.\n\n"
	"  --nv-index INDEX  the counter (owner range, 0x01800000 to 0x01bfffff)\n"
	"  --tcti TCTI       the TPM; default $TPM2TOOLS_TCTI, else " MB_TPM_DEFAULT_TCTI "\n\n"
	"Exit: 0 done, 2 usage error, 3 TPM error (also: the index holds no mboot counter).\n";

static int counter_command(int argc, char **argv, const char *verb, bool revoke)
{
	const char *tcti = NULL;
	uint32_t index = 0;
	const tool_option options[] = {
		TOOL_OPT_FN("nv-index", 0, &index, nv_index_option),
		TOOL_OPT_STR("tcti", 0, &tcti),
		TOOL_OPT_END,
	};
	mb_tpm *tpm = NULL;
	mb_error err = { 0 };
	uint64_t v = 0;
	int rc = tool_parse_options(verb, counter_help, options, argc, argv, 0);

	if (rc != TOOL_OPTS_GO_ON)
		return rc;
	if (!index)
		index = MB_NV_REVOCATION_DEFAULT;
	rc = tool_tpm_open(tcti, &tpm);
	if (rc)
		return rc;
	/* revoke defines an absent counter too: then it is at its first value + 1, and no signature bound to it exists */
	if (mb_tpm_counter_read(tpm, index, true, &v, &err) < 0 ||
	    (revoke && mb_tpm_counter_increment(tpm, index, &v, &err) < 0))
		rc = tpm_error_exit(&err);
	else if (revoke)
		printf("Revoked: NV counter 0x%08x is now at %llu; signatures for earlier values no longer unseal. "
		       "Sign with --counter-value %llu.\n", index, (unsigned long long) v, (unsigned long long) v);
	else
		printf("%llu\n", (unsigned long long) v);
	mb_tpm_free(tpm);
	return rc;
}

int policy_counter(int argc, char **argv)
{
	return counter_command(argc, argv, "policy counter", false);
}

int policy_revoke(int argc, char **argv)
{
	return counter_command(argc, argv, "policy revoke", true);
}
