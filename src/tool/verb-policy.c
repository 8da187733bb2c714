/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/pe.h>
#include <mboot/policy.h>
#include "shared/fileio.h"
#include "tool/tool.h"
#include "tool/verbs.h"

static const char policy_help[] =
	"Usage: mboot policy COMMAND [OPTIONS]\n\n"
	"  generate --from-log LOG [--pcrs LIST] [--firmware-pcrs LIST] [-o FILE [--force]]\n"
	"                       write a policy from a boot known to be good\n"
	"  generate --kernel K --initrd I (--cmdline S | --grub-cfg F) [--from-log LOG]\n"
	"           [--kernel-path P] [--initrd-path P] [--allow-text REGEX ...] [--efi FILE ...]\n"
	"           [-o FILE [--force]]\n"
	"                       write a policy from release artifacts (the next boot's kernel, initrd\n"
	"                       and command line, EFI binaries)\n"
	"  lint POLICY          check that a policy file loads (exit 0), or say where it is wrong (exit 2)\n"
	"  sign --key KEY --pcrs LIST --values FILE -o SIG [--force]\n"
	"                       sign PCR values for secrets sealed with 'mboot seal --authorized-by'\n\n"
	"A policy is checked with 'mboot verify --policy POLICY'. Its format is in docs/policy.md.\n";

static const char generate_help[] =
	"Usage: mboot policy generate --from-log LOG [--pcrs LIST] [--firmware-pcrs LIST] [-o FILE [--force]]\n"
	"       mboot policy generate --kernel K --initrd I (--cmdline S | --grub-cfg F) [--from-log LOG]\n"
	"                             [--kernel-path P] [--initrd-path P] [--allow-text REGEX ...]\n"
	"                             [--efi FILE ...] [-o FILE [--force]]\n\n"
	"From a machine known to be good (--from-log alone): the exact values of the firmware PCRs\n"
	"(--firmware-pcrs, default 0-7), and for the other PCRs of --pcrs (default 0-15) a rule for\n"
	"every event seen there: a text rule (the exact text, as an anchored regular expression) where\n"
	"the event's text hashes to its digest, a digest rule otherwise. Each rule is required and\n"
	"limited to the number of times it was seen.\n\n"
	"From release artifacts (--kernel ...): PCR 9 digest rules for the kernel, initrd and\n"
	"grub.cfg as GRUB reads them (and the EFI stub's initrd tag), PCR 8 text rules for the\n"
	"command that loads the kernel, the kernel_cmdline and the initrd command. --cmdline is the\n"
	"kernel's arguments as the boot entry gives them, without the kernel path; with --grub-cfg\n"
	"the path and commands come from its first entry ($variables match any text). With\n"
	"--from-log, the firmware PCRs come from the log, and GRUB's other commands and files are\n"
	"carried over from it (GRUB measures commands after variable expansion). --allow-text adds\n"
	"a PCR 8 text rule for what legitimately varies. --efi FILE (shim, GRUB, systemd-boot, a\n"
	"kernel with an EFI stub) adds a PCR 4 rule with its PE/COFF Authenticode digest; PCR 4 then\n"
	"comes from the artifacts, not from the log.\n\n"
	"  -o, --output FILE    write there (default: stdout), atomically; an existing FILE (a\n"
	"                       policy perhaps edited by hand) is kept, exit 2, unless --force\n"
	"  --force              replace an existing FILE\n";

#define MAX_ALLOW 64

static int policy_generate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "from-log", required_argument, NULL, 'l' },
		{ "pcrs", required_argument, NULL, 'p' },
		{ "firmware-pcrs", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "kernel", required_argument, NULL, 'k' },
		{ "initrd", required_argument, NULL, 'i' },
		{ "cmdline", required_argument, NULL, 'c' },
		{ "grub-cfg", required_argument, NULL, 'g' },
		{ "kernel-path", required_argument, NULL, 'K' },
		{ "initrd-path", required_argument, NULL, 'I' },
		{ "allow-text", required_argument, NULL, 'a' },
		{ "efi", required_argument, NULL, 'e' },
		{ "force", no_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *log_path = NULL, *out = "-", *allow[MAX_ALLOW];
	static mb_efi_binary efi[MAX_ALLOW];
	static tool_efi_digests efi_digests[MAX_ALLOW]; /* what efi[] points at */
	mb_policy_artifacts art = { 0 };
	uint32_t pcrs = 0xffff, firmware = 0xff;
	bool firmware_given = false, force = false;
	mb_event_log *log = NULL;
	mb_error err = { 0 };
	char *json = NULL;
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		if (tool_artifact_option(c, optarg, &art.boot))
			continue;
		switch (c) {
		case 'h':
			fputs(generate_help, stdout);
			return EXIT_OK;
		case 'l':
			log_path = optarg;
			break;
		case 'p':
			if (tool_parse_pcr_list(optarg, &pcrs) < 0)
				return tool_usage_error("policy generate", "bad PCR list '%s'", optarg);
			break;
		case 'f':
			firmware_given = true;
			if (strcmp(optarg, "none") == 0)
				firmware = 0;
			else if (tool_parse_pcr_list(optarg, &firmware) < 0)
				return tool_usage_error("policy generate", "bad PCR list '%s'", optarg);
			break;
		case 'o':
			out = optarg;
			break;
		case 'F':
			force = true;
			break;
		case 'a':
			if (art.n_allow_text >= MAX_ALLOW)
				return tool_usage_error("policy generate", "at most %d --allow-text", MAX_ALLOW);
			allow[art.n_allow_text++] = optarg;
			break;
		case 'e':
			if (art.boot.n_efi >= MAX_ALLOW)
				return tool_usage_error("policy generate", "at most %d --efi", MAX_ALLOW);
			if (tool_efi_binary("policy generate", optarg, false, &efi[art.boot.n_efi],
					    &efi_digests[art.boot.n_efi]) != EXIT_OK)
				return EXIT_USAGE;
			art.boot.n_efi++;
			break;
		default:
			return tool_usage_error("policy generate", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return tool_usage_error("policy generate", "unexpected argument '%s'", argv[optind]);
	art.boot.efi = efi;
	if (!log_path && !art.boot.kernel)
		return tool_usage_error("policy generate", "needs --from-log LOG, or --kernel K --initrd I ...");
	if (art.boot.kernel && (!art.boot.initrd || (!art.boot.cmdline && !art.boot.grub_cfg)))
		return tool_usage_error("policy generate", "--kernel needs --initrd and --cmdline or --grub-cfg");
	if (!art.boot.kernel && (art.boot.initrd || art.boot.cmdline || art.boot.grub_cfg || art.n_allow_text))
		return tool_usage_error("policy generate", "--initrd, --cmdline, --grub-cfg, --allow-text go with --kernel");
	rc = tool_check_output("policy generate", out, force);
	if (rc)
		return rc;
	if (log_path) {
		rc = tool_load_log(log_path, &log);
		if (rc)
			return rc;
	}
	if (art.boot.kernel) {
		art.log = log;
		art.allow_text = allow;
		art.firmware_pcrs = firmware_given ? firmware : 0;
		rc = mb_policy_generate_from_artifacts(&art, &json, &err);
	} else {
		rc = mb_policy_generate_from_log(log, pcrs | firmware, firmware, &json, &err);
	}
	if (rc < 0) {
		tool_report("policy generate", &err);
		rc = EXIT_USAGE;
	} else {
		size_t len = strlen(json);

		json[len] = '\n';
		rc = tool_write_output("policy generate", out, json, len + 1, 0644, force);
	}
	free(json);
	mb_event_log_free(log);
	return rc;
}

int tool_load_policy(const char *path, mb_policy **ret)
{
	mb_error err = { 0 };
	uint8_t *text = NULL;
	size_t size;

	if (file_read(path, MB_POLICY_MAX_SIZE, &text, &size, &err) < 0 ||
	    mb_policy_parse((const char *) text, size, ret, &err) < 0) {
		tool_report(path, &err);
		free(text);
		return EXIT_USAGE;
	}
	free(text);
	return EXIT_OK;
}

static int policy_lint(int argc, char **argv)
{
	mb_policy *p = NULL;
	uint32_t m, i;
	int rc;

	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("Usage: mboot policy lint POLICY\n\nLoad a policy as verify would: exit 0 when it loads, "
		       "2 with the line and field that is wrong.\n");
		return EXIT_OK;
	}
	if (argc != 2)
		return tool_usage_error("policy lint", "needs one POLICY file");
	rc = tool_load_policy(argv[1], &p);
	if (rc)
		return rc;
	m = mb_policy_pcrs(p);
	printf("%s: policy version 1, governs PCRs", argv[1]);
	for (i = 0; i < MB_PCR_COUNT; i++)
		if (m & (1u << i))
			printf(" %u", i);
	putchar('\n');
	mb_policy_free(p);
	return EXIT_OK;
}

static const tool_command policy_commands[] = {
	{ "generate", policy_generate },
	{ "lint", policy_lint },
	{ "sign", policy_sign },
	{ NULL, NULL },
};

int verb_policy(int argc, char **argv)
{
	return tool_dispatch("policy", policy_help, policy_commands, argc, argv);
}
