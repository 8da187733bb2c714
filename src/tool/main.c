/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <string.h>

#include <mboot/version.h>
#include "tool/tool.h"
#include "tool/verbs.h"

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} verbs[] = {
	{ "log", verb_log, "show, replay, diff a firmware event log; extend it into a TPM" },
	{ "pcrs", verb_pcrs, "PCR values the TPM holds now" },
	{ "measure", verb_measure, "extend a PCR with a file or text and log it (userspace log)" },
	{ "ima", verb_ima, "the kernel's IMA runtime measurement list: show it, replay it into PCR 10" },
	{ "verify", verb_verify, "check the event log against the TPM's PCRs (or given values)" },
	{ "policy", verb_policy, "generate, check and sign policies: what a good boot is" },
	{ "totp", verb_totp, "a TOTP code only a good boot can show (tpmtotp on TPM 2.0)" },
	{ "predict", verb_predict, "the PCR values of the next boot after an update" },
	{ "initramfs", verb_initramfs, "pack, list, verify a deterministic initramfs" },
	{ "seal", verb_seal, "seal a secret to PCR values, or to signed policies, with the TPM" },
	{ "unseal", verb_unseal, "unseal it, or say which PCRs and events changed" },
	{ "reseal", verb_reseal, "seal again to the current and the predicted PCR values (PolicyOR)" },
	{ "ssh-hostkey", verb_ssh_hostkey, "SSH host keys sealed to a good boot, unsealed into tmpfs for sshd" },
	{ "luks", verb_luks, "disk keys sealed into LUKS2 tokens: enroll, list, remove, unlock" },
	{ "attest", verb_attest, "remote attestation: enroll, prove a boot to a verifier, verify the proof" },
	{ "fleet", verb_fleet, "a fleet verifier's machines: list, show, set their policy, revoke, forget" },
	{ "quote", verb_quote, "a TPM quote of the PCRs with the logs: the evidence 'attest verify' judges" },
	{ "hash", verb_hash, "digest of a file as a measuring stage computes it (--authenticode for EFI binaries)" },
	{ "grub", verb_grub, "keep copies of the GRUB configs this boot measured, for predict" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "Usage: mboot COMMAND [ARGS...]\n\n"
		   "Measured boot for Linux: read and replay TPM event logs, check them against\n"
		   "the TPM and a policy, seal secrets to a good boot.\n\nCommands:\n");
	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		fprintf(f, "  %-12s %s\n", verbs[i].name, verbs[i].summary);
	fprintf(f, "  %-12s %s\n", "help", "help COMMAND [SUBCOMMAND]: the same as 'mboot COMMAND --help'");
	fprintf(f, "  %-12s %s\n", "version", "the version of mboot (also --version, -V)");
	fprintf(f, "\n'mboot COMMAND --help' (or 'mboot help COMMAND') describes each command.\n"
		   "Exit codes: 0 success, 1 verification failed, 2 usage or input error, 3 TPM error.\n");
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    (strcmp(argv[1], "help") == 0 && (argc == 2 || argv[2][0] == '-' || strcmp(argv[2], "help") == 0))) {
		usage(stdout);
		return EXIT_OK;
	}
	if (strcmp(argv[1], "help") == 0) {
		/* help COMMAND [SUB...] is COMMAND [SUB...] --help: the words move left, --help goes last */
		static char help_opt[] = "--help";

		for (i = 2; i < (size_t) argc; i++)
			argv[i - 1] = argv[i];
		argv[argc - 1] = help_opt;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0 || strcmp(argv[1], "-V") == 0) {
		/* the library's version: the tool runs with whichever libmboot.so is installed */
		printf("mboot %s\n", mb_version());
		return EXIT_OK;
	}
	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (strcmp(argv[1], verbs[i].name) == 0)
			return verbs[i].run(argc - 1, argv + 1);
	fprintf(stderr, "mboot: unknown command '%s' (see 'mboot --help')\n", argv[1]);
	return EXIT_USAGE;
}
