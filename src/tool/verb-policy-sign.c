/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mboot policy sign: approve PCR values for secrets sealed with
 * `mboot seal --authorized-by` (TPM2_PolicyAuthorize; docs/seal.md). No TPM is needed:
 * a release signs the values `mboot predict` computes for its new kernel, and every
 * machine unseals with the new signature without resealing.
 */
#include <stdlib.h>
#include <string.h>

#include <mboot/mboot.h>
#include "shared/fileio.h"
#include "shared/hex.h"
#include "tool/options.h"
#include "tool/tool.h"
#include "tool/verbs.h"

static const char sign_help[] =
	"Usage: mboot policy sign --key KEY --pcrs LIST [--bank NAME] --values FILE -o SIG [--force]\n\n"
	"Sign the values of the PCRs in LIST, read from FILE, with the private key KEY, for\n"
	"secrets sealed with 'mboot seal --authorized-by PUBKEY' (TPM2_PolicyAuthorize):\n"
	"'mboot unseal --signature SIG' releases them on a machine whose PCRs hold exactly\n"
	"these values. What is signed is SHA-256 of the PolicyPCR digest of the values, the\n"
	"same bytes 'openssl dgst -sha256 -sign KEY' signs.\n\n"
	"  --key KEY      unencrypted PEM private key: RSA 2048/3072/4096 (PKCS#1 v1.5) or\n"
	"                 ECC NIST P-256 (ECDSA); its public half is the PUBKEY of seal\n"
	"  --pcrs LIST    the PCRs whose values are approved, e.g. 4,8,9 (not empty)\n"
	"  --bank NAME    the PCR bank (default sha256)\n"
	"  --values FILE  PCR values: 'mboot predict --json', 'mboot pcrs --json',\n"
	"                 'mboot log replay --json' or tpm2_pcrread YAML\n"
	"  -o SIG         the signature file (JSON, written atomically); an existing one is\n"
	"                 kept, exit 2, unless --force\n"
	"  --force        replace an existing SIG\n\n"
	"Exit: 0 signed, 2 usage or input error.\n";

int policy_sign(int argc, char **argv)
{
	const char *key_path = NULL, *values = NULL, *out = NULL;
	const mb_digest_info *bank = mb_digest_by_alg(MB_ALG_SHA256);
	uint32_t mask = 0;
	bool force = false;
	const tool_option options[] = {
		TOOL_OPT_STR("key", 0, &key_path),
		TOOL_OPT_PCR_LIST("pcrs", 0, &mask),
		TOOL_OPT_ONE_BANK("bank", 0, &bank),
		TOOL_OPT_STR("values", 0, &values),
		TOOL_OPT_STR("output", 'o', &out),
		TOOL_OPT_BOOL("force", 0, &force),
		TOOL_OPT_END,
	};
	mb_policy_signature sig = { 0 };
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
	rc = tool_check_output("policy sign", out, force);
	if (rc)
		return rc;

	rc = tool_load_pcr_bank(values, bank->alg, mask, "PCRs to sign", &sig.pcrs);
	if (rc)
		return rc;
	rc = EXIT_USAGE;
	sig.pcrs.present &= mask;
	sig.mask = mask;
	if (mb_policy_pcr_digest(NULL, &sig.pcrs, mask, sig.approved, &err) < 0) {
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
