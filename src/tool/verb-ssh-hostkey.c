/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mboot ssh-hostkey: SSH host keys sealed to a good boot (docs/ssh.md). The options, the
 * files they name (values, authority key, signatures, the log kept) and the printing; the
 * sealing, round trip, wiping and unsealing into tmpfs are mb_ssh_hostkey_seal/_unseal
 * (src/lib/sshkey).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include <mboot/ssh-hostkey.h>
#include "tool/options.h"
#include "tool/seal-common.h"
#include "tool/tool.h"
#include "tool/verbs.h"

#define SSH_DIR_DEFAULT "/etc/ssh"
#define SSH_TO_DEFAULT "/run/mboot/ssh"

#define SEAL_USAGE \
	"Usage: mboot ssh-hostkey seal [--dir DIR] --pcrs LIST [--bank NAME] [--values current|FILE]\n" \
	"                              [--log LOG] [--force] [--tcti TCTI]\n" \
	"       mboot ssh-hostkey seal [--dir DIR] --authorized-by PUBKEY --signature SIG [--tcti TCTI]\n"
#define UNSEAL_USAGE \
	"       mboot ssh-hostkey unseal [--dir DIR] [--to FOLDER] [--signature SIG ...] [--log LOG]\n" \
	"                                [--tcti TCTI]\n"
#define SEAL_TEXT \
	"seal: for each clear host key DIR/ssh_host_*_key, write DIR/ssh_host_*_key.mboot (JSON,\n" \
	"0600, atomically): the key encrypted with AES-256-GCM under a fresh data key that the TPM\n" \
	"seals to the PCRs (as 'mboot seal' does), and the .pub line as its label. Each sealed\n" \
	"file is read back and unsealed before the clear key is overwritten and removed; the .pub\n" \
	"files stay. Overwriting does not reach old copies on SSDs or journaling file systems: a\n" \
	"disk that was ever copied has exposed the old keys (make new ones first: ssh-keygen -A).\n"
#define UNSEAL_TEXT \
	"unseal: put each DIR/ssh_host_*_key.mboot's key into FOLDER (made 0700 when missing,\n" \
	"files 0600), which must be on tmpfs or ramfs: a host key never touches the disk in\n" \
	"clear. When the PCRs are not a sealed state: exit 1 naming the PCRs (and, with the\n" \
	"event logs, the events) that differ, and FOLDER holds none of the keys.\n"
#define TCTI_TEXT "  --tcti TCTI        the TPM; default $TPM2TOOLS_TCTI, else " MB_TPM_DEFAULT_TCTI "\n"

static const char ssh_hostkey_help[] =
	SEAL_USAGE UNSEAL_USAGE "\n"
	"SSH host keys that only a good boot has (docs/ssh.md).\n\n" SEAL_TEXT "\n" UNSEAL_TEXT "\n"
	"'mboot ssh-hostkey seal --help' and 'unseal --help' list the options.\n\n"
	"Exit: 0 done, 1 the PCRs are not the sealed ones (seal: the clear keys are kept),\n"
	"2 usage or input error, 3 TPM error.\n";

static const char ssh_seal_help[] =
	SEAL_USAGE "\n" SEAL_TEXT "\n"
	"  --dir DIR          the host keys' folder (default " SSH_DIR_DEFAULT ")\n"
	"  --pcrs LIST        the PCRs to seal to, e.g. 0,2,4,7\n"
	"  --bank NAME        their bank (default sha256)\n"
	"  --values current|FILE  the PCR values (default: the TPM's now); FILE: PCR-values JSON.\n"
	"                     Values of another boot cannot be checked here: the sealed files\n"
	"                     are written, the clear keys kept, exit 1\n"
	"  --authorized-by PUBKEY  instead of PCR values: any PCR state the owner of PUBKEY signs\n"
	"                     ('mboot policy sign'; docs/seal.md)\n"
	"  --signature SIG    with --authorized-by: a signed policy for this boot (the round trip)\n"
	"  --log LOG          the event log kept in each sealed file, to explain a refused unseal\n"
	"                     (default " MB_DEFAULT_LOG " when readable)\n"
	"  --force            replace an existing ssh_host_*_key.mboot\n"
	TCTI_TEXT "\n"
	"Exit: 0 sealed (every clear key removed), 1 a sealed file does not unseal on this boot\n"
	"(the clear key is kept), 2 usage or input error, 3 TPM error.\n";

static const char ssh_unseal_help[] =
	"Usage: mboot ssh-hostkey unseal [--dir DIR] [--to FOLDER] [--signature SIG ...] [--log LOG]\n"
	"                                [--tcti TCTI]\n\n" UNSEAL_TEXT "\n"
	"  --dir DIR          the sealed keys' folder (default " SSH_DIR_DEFAULT ")\n"
	"  --to FOLDER        where the keys go (default " SSH_TO_DEFAULT ")\n"
	"  --signature SIG    for keys sealed --authorized-by: a signed policy; up to 8, the one\n"
	"                     whose values the PCRs hold is used\n"
	"  --log LOG          today's event log, to name the events that differ (default\n"
	"                     " MB_DEFAULT_LOG ")\n"
	TCTI_TEXT "\n"
	"Exit: 0 unsealed, 1 the PCRs are not the sealed ones (FOLDER holds no key), 2 usage or\n"
	"input error (also a changed sealed file, a FOLDER not on tmpfs), 3 TPM error.\n";

typedef struct hostkey_args {
	const char *dir, *to, *tcti, *log, *values, *authority;
	const mb_digest_info *bank;
	uint32_t mask;
	bool force;
	char *sigs[MAX_SIGNATURES];
	size_t n_sigs;
} hostkey_args;

static int signature_option(void *target, const char *arg, const char *verb)
{
	hostkey_args *a = target;

	if (a->n_sigs == MAX_SIGNATURES)
		return tool_usage_error(verb, "at most %d --signature", MAX_SIGNATURES);
	a->sigs[a->n_sigs++] = (char *) arg;
	return EXIT_OK;
}

/* The signatures of args, parsed; reports and returns EXIT_USAGE. */
static int load_signatures(const hostkey_args *a, mb_policy_signature *sigs)
{
	for (size_t i = 0; i < a->n_sigs; i++) {
		uint8_t *text = NULL;
		size_t size = 0;
		mb_error err = { 0 };
		int r;

		if (read_whole(a->sigs[i], 1u << 20, &text, &size))
			return EXIT_USAGE;
		r = mb_policy_signature_parse((const char *) text, size, &sigs[i], &err);
		free(text);
		if (r < 0) {
			tool_report(a->sigs[i], &err);
			return EXIT_USAGE;
		}
	}
	return EXIT_OK;
}

/* The exit code of a failed mb_ssh_hostkey_* call, reported. */
static int hostkey_exit(const char *verb, const mb_error *err)
{
	if (err->code == MB_ERR_TPM_POLICY) {
		/* seal: --values of another boot, sealed for it but not checkable here; unseal: not this boot */
		tool_errorf("%s", err->message);
		return EXIT_FAILED;
	}
	if ((err->code <= MB_ERR_TPM && err->code > MB_ERR_TPM - 100) || err->code == -EOPNOTSUPP)
		return tpm_error_exit(err);
	tool_report(verb, err);
	return EXIT_USAGE;
}

static void sealed_one(const char *from, const char *to, void *userdata)
{
	(void) userdata;
	printf("%s -> %s (clear key overwritten and removed)\n", from, to);
}

static int ssh_seal(int argc, char **argv)
{
	hostkey_args a = { .dir = SSH_DIR_DEFAULT };
	const tool_option options[] = {
		TOOL_OPT_STR("dir", 0, &a.dir),
		TOOL_OPT_PCR_LIST("pcrs", 0, &a.mask),
		TOOL_OPT_ONE_BANK("bank", 0, &a.bank),
		TOOL_OPT_STR("values", 0, &a.values),
		TOOL_OPT_STR("authorized-by", 0, &a.authority),
		TOOL_OPT_FN("signature", 0, &a, signature_option),
		TOOL_OPT_STR("log", 0, &a.log),
		TOOL_OPT_BOOL("force", 0, &a.force),
		TOOL_OPT_STR("tcti", 0, &a.tcti),
		TOOL_OPT_END,
	};
	mb_policy_signature sigs[MAX_SIGNATURES];
	mb_unseal_options uopt = MB_OPTIONS_INIT(mb_unseal_options);
	mb_seal_options opt = MB_OPTIONS_INIT(mb_seal_options);
	mb_ssh_hostkey_seal_options hopt = { .size = sizeof(hopt), .seal = &opt, .unseal = &uopt, .done = sealed_one };
	mb_pcr_bank given;
	mb_error err = { 0 };
	uint8_t *auth_key = NULL, *log = NULL;
	size_t auth_key_size = 0, log_size = 0, i;
	int rc;

	memset(sigs, 0, sizeof(sigs));
	rc = tool_parse_options("ssh-hostkey seal", ssh_seal_help, options, argc, argv, 0);
	if (rc != TOOL_OPTS_GO_ON)
		return rc;
	if (a.authority && (a.mask || a.values || a.bank))
		return tool_usage_error("ssh-hostkey seal", "--authorized-by takes no --pcrs, --values or --bank");
	if (!a.authority && !a.mask)
		return tool_usage_error("ssh-hostkey seal", "give --pcrs LIST (or --authorized-by PUBKEY)");
	if (!a.authority && a.n_sigs)
		return tool_usage_error("ssh-hostkey seal", "--signature goes with --authorized-by");
	if (a.authority && !a.n_sigs)
		return tool_usage_error("ssh-hostkey seal", "--authorized-by needs --signature SIG, a signed policy "
					"for this boot: each key is unsealed before its clear file is removed");

	/* The files first: a bad values file, key or log is an input error before any TPM work. */
	if (a.authority) {
		rc = read_authority_key(a.authority, &auth_key, &auth_key_size);
		if (rc)
			goto out;
		opt.authority_public = auth_key;
		opt.authority_public_size = auth_key_size;
		rc = load_signatures(&a, sigs);
		if (rc)
			goto out;
		uopt.signatures = sigs;
		uopt.signature_names = (const char *const *) a.sigs;
		uopt.n_signatures = a.n_sigs;
	} else {
		opt.pcr_mask = a.mask;
		opt.bank = a.bank ? a.bank->alg : MB_ALG_SHA256;
		if (a.values && strcmp(a.values, "current") != 0) {
			rc = tool_load_pcr_bank(a.values, opt.bank, a.mask, "PCRs to seal to", &given);
			if (rc)
				goto out;
			opt.values = &given;
		}
	}
	rc = read_kept_log(a.log, &log, &log_size);
	if (rc)
		goto out;
	opt.eventlog = log;
	opt.eventlog_size = log_size;
	hopt.force = a.force;
	/* tpm2-tss logs warnings to stderr by default; mboot reports errors itself, once */
	setenv("TSS2_LOG", "all+none", 0);
	rc = mb_ssh_hostkey_seal(a.tcti, a.dir, &hopt, &err) < 0 ? hostkey_exit("ssh-hostkey seal", &err) : EXIT_OK;
out:
	for (i = 0; i < a.n_sigs; i++)
		mb_policy_signature_done(&sigs[i]);
	free(auth_key);
	free(log);
	return rc;
}

static void unsealed_one(const char *from, const char *to, void *userdata)
{
	(void) userdata;
	printf("%s -> %s\n", from, to);
}

static int ssh_unseal(int argc, char **argv)
{
	hostkey_args a = { .dir = SSH_DIR_DEFAULT, .to = SSH_TO_DEFAULT };
	const tool_option options[] = {
		TOOL_OPT_STR("dir", 0, &a.dir),
		TOOL_OPT_STR("to", 0, &a.to),
		TOOL_OPT_FN("signature", 0, &a, signature_option),
		TOOL_OPT_STR("log", 0, &a.log),
		TOOL_OPT_STR("tcti", 0, &a.tcti),
		TOOL_OPT_END,
	};
	mb_policy_signature sigs[MAX_SIGNATURES];
	mb_unseal_explanation *why = NULL;
	mb_unseal_options uopt = MB_OPTIONS_INIT(mb_unseal_options);
	mb_ssh_hostkey_unseal_options hopt = { .size = sizeof(hopt), .unseal = &uopt, .done = unsealed_one,
					       .explanation = &why };
	mb_error err = { 0 };
	size_t i;
	int rc;

	memset(sigs, 0, sizeof(sigs));
	rc = tool_parse_options("ssh-hostkey unseal", ssh_unseal_help, options, argc, argv, 0);
	if (rc != TOOL_OPTS_GO_ON)
		return rc;
	rc = load_signatures(&a, sigs);
	if (rc)
		goto out;
	uopt.log_path = a.log ? a.log : MB_DEFAULT_LOG;
	uopt.signatures = sigs;
	uopt.signature_names = (const char *const *) a.sigs;
	uopt.n_signatures = a.n_sigs;
	setenv("TSS2_LOG", "all+none", 0);
	if (mb_ssh_hostkey_unseal(a.tcti, a.dir, a.to, &hopt, &err) < 0) {
		/* the library explains a refusal (which PCRs, which events) */
		if (why)
			unseal_explain(why);
		rc = hostkey_exit("ssh-hostkey unseal", &err);
	}
out:
	mb_unseal_explanation_free(why);
	for (i = 0; i < a.n_sigs; i++)
		mb_policy_signature_done(&sigs[i]);
	return rc;
}

static const tool_command ssh_hostkey_commands[] = {
	{ "seal", ssh_seal },
	{ "unseal", ssh_unseal },
	{ NULL, NULL },
};

int verb_ssh_hostkey(int argc, char **argv)
{
	(void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	return tool_dispatch("ssh-hostkey", ssh_hostkey_help, ssh_hostkey_commands, argc, argv);
}
