/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/pe.h>
#include <mboot/policy.h>
#include "shared/fileio.h"
#include "tool/options.h"
#include "tool/tool.h"
#include "tool/verbs.h"

static const char policy_help[] =
	"Usage: mboot policy COMMAND [OPTIONS]\n\n"
	"  generate --from-log LOG [--pcrs LIST] [--firmware-pcrs LIST] [-o FILE [--force]]\n"
	"                       write a policy from a boot known to be good\n"
	"  generate --from-log LOG --efi-var NAME[+]=FILE ... [--sbat-level FILE] [--mok-list FILE] ...\n"
	"                       the same for the boot after a Secure Boot update (db, dbx, SbatLevel,\n"
	"                       MOK), before it is rolled out\n"
	"  generate --kernel K --initrd I (--cmdline S | --grub-cfg [MEASURED_PATH=]F ...) [--from-log LOG]\n"
	"           [--kernel-path P] [--initrd-path P] [--allow-text REGEX ...] [--efi FILE ...]\n"
	"           [-o FILE [--force]]\n"
	"                       write a policy from release artifacts (the next boot's kernel, initrd\n"
	"                       and command line, EFI binaries)\n"
	"  generate --uki FILE [--uki-extra DIR] [--from-log LOG] [--efi FILE ...] [-o FILE [--force]]\n"
	"                       write a policy for a unified kernel image (PCR 11, PCR 4) booted by\n"
	"                       systemd-boot\n"
	"  generate --from-ima-log LOG | --ima-import-keylime FILE [BOOT OPTIONS] [-o FILE [--force]]\n"
	"                       an \"ima\" section (what may run after the boot) from a known-good IMA\n"
	"                       list or Keylime's runtime policy, alone or added to the boot's policy\n"
	"  lint POLICY          check that a policy file loads (exit 0), or say where it is wrong (exit 2);\n"
	"                       names its firmware sets\n"
	"  add-firmware POLICY --from-log LOG [--name NAME] [--pcrs LIST]\n"
	"                       add the firmware PCR values of a known-good machine's log (after a\n"
	"                       firmware update) to POLICY as one more firmware set\n"
	"  sign --key KEY --pcrs LIST --values FILE [--counter-value N] -o SIG [--force]\n"
	"                       sign PCR values for secrets sealed with 'mboot seal --authorized-by'\n"
	"  counter [--nv-index INDEX] [--tcti TCTI]\n"
	"                       print the revocation counter's value (the N of sign --counter-value)\n"
	"  revoke [--nv-index INDEX] [--tcti TCTI]\n"
	"                       increment it: signatures issued for earlier values stop unsealing\n\n"
	"A policy is checked with 'mboot verify --policy POLICY'. Its format is in docs/policy.md.\n";

static const char generate_help[] =
	"Usage: mboot policy generate --from-log LOG [--pcrs LIST] [--firmware-pcrs LIST] [-o FILE [--force]]\n"
	"       mboot policy generate --kernel K --initrd I (--cmdline S | --grub-cfg [MEASURED_PATH=]F ...)\n"
	"                             [--from-log LOG]\n"
	"                             [--kernel-path P] [--initrd-path P] [--allow-text REGEX ...]\n"
	"                             [--efi FILE ...] [-o FILE [--force]]\n"
	"       mboot policy generate --uki FILE [--uki-extra DIR] [--from-log LOG] [--firmware-pcrs LIST]\n"
	"                             [--efi FILE ...] [-o FILE [--force]]\n"
	"       each with --from-log also: [--efi-var NAME[+]=FILE ...] [--sbat-level FILE] [--mok-list FILE]\n"
	"       mboot policy generate [--from-ima-log LOG] [--ima-import-keylime FILE] [any of the above]\n\n"
	"An \"ima\" section (docs/policy.md, \"IMA\"): --from-ima-log LOG, a known-good IMA runtime\n"
	"measurement list (binary or ASCII), allows each file path with the digests it was measured\n"
	"with and each ima-buf entry's name with its digests (not the boot_aggregate); an entry\n"
	"whose template hash is not its fields' is refused. --ima-import-keylime FILE reads Keylime's\n"
	"runtime policy JSON (\"digests\", \"excludes\", \"keyrings\", \"ima-buf\"). Both may be given\n"
	"(merged). Alone they write a policy that governs no PCR; with the options above, the\n"
	"section is added to that policy.\n\n"
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
	"carried over from it (GRUB measures commands after variable expansion). GRUB measures each\n"
	"config under the path it read it from: --grub-cfg MEASURED_PATH=F replaces only the config\n"
	"the log measured as MEASURED_PATH (e.g. '(hd0,gpt2)/boot/grub/grub.cfg' beside Debian's\n"
	"ESP stub, which is carried over); F alone, with --from-log, needs the log to have measured\n"
	"exactly one config (else exit 2, the measured paths named). --allow-text adds\n"
	"a PCR 8 text rule for what legitimately varies. --efi FILE (shim, GRUB, systemd-boot, a\n"
	"kernel with an EFI stub) adds a PCR 4 rule with its PE/COFF Authenticode digest, max 1; PCR 4\n"
	"then comes from the artifacts, not from the log. Under shim, whose PCR 4 events after GRUB's\n"
	"linux command are the kernel (LOG tells how many, N), --kernel K also adds K's Authenticode\n"
	"digest to PCR 4, max N (an --efi K is that rule); without --efi, PCR 4 is then LOG's events\n"
	"as rules but its kernel's, not LOG's value.\n\n"
	"From a unified kernel image (--uki FILE, booted by systemd-boot): PCR 11's value as\n"
	"systemd-stub (systemd 252) measures FILE's sections (when it starts the kernel; systemd-\n"
	"pcrphase's later phases are not included), a PCR 4 rule with FILE's Authenticode digest (and\n"
	"each --efi), a PCR 9 rule for the kernel's initrd tag of its .initrd (none when --uki-extra\n"
	"has credentials or system extensions: the stub appends them); with --from-log, the\n"
	"firmware PCRs' values (default 0-7 but 4) and rules for the other PCRs except 4, 9, 11 and\n"
	"12 (the command line systemd-boot and the stub measure is not computed: docs/predict.md).\n"
	"--uki-extra DIR, the folder that will be FILE's .extra.d/ on the ESP: PCR 13's value from the\n"
	"archive systemd-stub makes of its system extensions (*.raw; zero when there is none).\n\n"
	"After a Secure Boot update (--efi-var, --sbat-level, --mok-list, with --from-log; the same\n"
	"options as 'mboot predict'): the policy of the boot after the update, written before it is\n"
	"rolled out. LOG is first turned into that boot's log as predict computes it (PCR 7's db, dbx,\n"
	"... and SbatLevel events, PCR 14's MOK events), and the policy is generated from it: PCR 7's\n"
	"value (and PCR 14's, as a value or as rules) is the one after the update. When predict would\n"
	"call a PCR unpredictable (a dbx that revokes the certificate or the Authenticode hash of a\n"
	"binary booted today, a db without the entry that verified one, a deleted PK) or a variable\n"
	"has no event in LOG, no policy is written: exit 1, each PCR named with why. A new dbx is\n"
	"checked against today's binaries (LOG's), not --efi's: an update that revokes today's shim\n"
	"is refused even beside a new shim (generate from a log of the new shim instead).\n\n"
	TOOL_HELP_EFI_VARS
	"  -o, --output FILE        write there (default: stdout), atomically; an existing FILE (a\n"
	"                           policy perhaps edited by hand) is kept, exit 2, unless --force\n"
	"  --force                  replace an existing FILE\n\n"
	"Exit: 0 the policy written; 1 the boot after a Secure Boot update cannot be predicted, or an\n"
	"update matches no event of LOG (named; nothing written, as predict's exit 1); 2 usage or input\n"
	"error (an unreadable or malformed log, artifact or signature list included).\n";

#define MAX_ALLOW 64

/* Where the repeatable --allow-text and --efi go. */
struct generate_lists {
	mb_policy_artifacts *art;
	mb_boot_artifacts *boot; /* what art->boot points at */
	const char **allow;
	mb_efi_binary *efi;
	tool_efi_digests *efi_digests;
};

static int allow_text_option(void *target, const char *arg, const char *verb)
{
	struct generate_lists *l = target;

	if (l->art->n_allow_text >= MAX_ALLOW)
		return tool_usage_error(verb, "at most %d --allow-text", MAX_ALLOW);
	l->allow[l->art->n_allow_text++] = arg;
	return EXIT_OK;
}

static int efi_option(void *target, const char *arg, const char *verb)
{
	struct generate_lists *l = target;
	size_t n = l->boot->n_efi;

	if (n >= MAX_ALLOW)
		return tool_usage_error(verb, "at most %d --efi", MAX_ALLOW);
	/* tool_efi_binary may change arg in place: an argv string, ours to change */
	if (tool_efi_binary(verb, (char *) arg, false, &l->efi[n], &l->efi_digests[n]) != EXIT_OK)
		return EXIT_USAGE;
	l->boot->n_efi++;
	return EXIT_OK;
}

/* The "ima" section from a known-good IMA list and/or Keylime's runtime policy, added to *json
 * (NULL: a policy of its own). */
static int add_ima(const char *ima_path, const char *keylime_path, char **json, mb_error *err)
{
	mb_ima_log *ima = NULL;
	uint8_t *buf = NULL, *kl = NULL;
	size_t size = 0, kl_size = 0;
	char *out = NULL;
	int rc = 0;

	if (ima_path) {
		if ((rc = file_read(ima_path, MB_IMA_MAX_SIZE, &buf, &size, err)) < 0 ||
		    (rc = mb_ima_log_parse(buf, size, 0, &ima, err)) < 0)
			goto out;
	}
	if (keylime_path && (rc = file_read(keylime_path, 4u * MB_POLICY_MAX_SIZE, &kl, &kl_size, err)) < 0)
		goto out;
	rc = mb_policy_generate_ima(*json, *json ? strlen(*json) : 0, ima, (const char *) kl, kl_size, &out, err);
	if (rc >= 0) {
		free(*json);
		*json = out;
	}
out:
	free(buf);
	free(kl);
	mb_ima_log_free(ima);
	return rc;
}

static int policy_generate(int argc, char **argv)
{
	const char *log_path = NULL, *out = "-", *firmware_arg = NULL, *ima_path = NULL, *keylime_path = NULL;
	static mb_efi_binary efi[MAX_ALLOW];
	static tool_efi_digests efi_digests[MAX_ALLOW]; /* what efi[] points at */
	static const char *allow[MAX_ALLOW];
	mb_boot_artifacts boot = MB_OPTIONS_INIT(mb_boot_artifacts);
	mb_policy_artifacts art = MB_OPTIONS_INIT(mb_policy_artifacts);
	struct generate_lists lists = { &art, &boot, allow, efi, efi_digests };
	tool_grub_cfgs cfgs = { .boot = &boot };
	tool_efi_vars sb = { .n = 0 }; /* the Secure Boot update, as predict takes it */
	uint32_t pcrs = 0xffff, firmware = 0xff;
	bool force = false;
	const tool_option opts[] = {
		TOOL_OPT_STR("from-log", 0, &log_path),
		TOOL_OPT_PCR_LIST("pcrs", 0, &pcrs),
		TOOL_OPT_STR("firmware-pcrs", 0, &firmware_arg),
		TOOL_OPT_STR("output", 'o', &out),
		TOOL_OPT_ARTIFACTS(&boot, &cfgs),
		TOOL_OPT_FN("allow-text", 0, &lists, allow_text_option),
		TOOL_OPT_FN("efi", 0, &lists, efi_option),
		TOOL_OPT_STR("uki", 0, &boot.uki),
		TOOL_OPT_STR("uki-extra", 0, &boot.uki_extra_dir),
		TOOL_OPT_EFI_VARS(&sb),
		TOOL_OPT_BOOL("force", 0, &force),
		TOOL_OPT_STR("from-ima-log", 0, &ima_path),
		TOOL_OPT_STR("ima-import-keylime", 0, &keylime_path),
		TOOL_OPT_END,
	};
	mb_event_log *log = NULL;
	mb_error err = { 0 };
	char *json = NULL;
	int rc;

	rc = tool_parse_options("policy generate", generate_help, opts, argc, argv, 0);
	if (rc != TOOL_OPTS_GO_ON)
		return rc;
	/* "none": no firmware PCR values in the policy */
	if (firmware_arg && strcmp(firmware_arg, "none") == 0)
		firmware = 0;
	else if (firmware_arg && tool_parse_pcr_list(firmware_arg, &firmware) < 0)
		return tool_usage_error("policy generate", "bad PCR list '%s'", firmware_arg);
	boot.efi = efi;
	if (boot.uki && (boot.kernel || boot.initrd || boot.cmdline || boot.n_grub_cfg ||
			 art.n_allow_text))
		return tool_usage_error("policy generate", "--uki carries the kernel, initrd and command line: no "
					"--kernel, --initrd, --cmdline, --grub-cfg or --allow-text with it");
	if (boot.uki_extra_dir && !boot.uki)
		return tool_usage_error("policy generate", "--uki-extra is the drop-in folder of the UKI given with --uki");
	if (!log_path && !boot.kernel && !boot.uki && !ima_path && !keylime_path)
		return tool_usage_error("policy generate", "needs --from-log LOG, or --kernel K --initrd I ..., or --uki FILE, "
					"or --from-ima-log LOG / --ima-import-keylime FILE");
	if (sb.n && !log_path)
		return tool_usage_error("policy generate", "--efi-var, --sbat-level and --mok-list change the boot of a "
					"known-good log: they need --from-log LOG");
	if (boot.kernel && (!boot.initrd || (!boot.cmdline && !boot.n_grub_cfg)))
		return tool_usage_error("policy generate", "--kernel needs --initrd and --cmdline or --grub-cfg");
	if (!boot.kernel && !boot.uki && (boot.initrd || boot.cmdline || boot.n_grub_cfg || art.n_allow_text))
		return tool_usage_error("policy generate", "--initrd, --cmdline, --grub-cfg, --allow-text go with --kernel");
	rc = tool_check_output("policy generate", out, force);
	if (rc)
		return rc;
	if (log_path) {
		rc = tool_load_log(log_path, &log);
		if (rc)
			return rc;
	}
	if (sb.n) {
		mb_event_log *next = NULL;

		rc = mb_policy_log_after_update(log, sb.var, sb.n, &next, &err);
		mb_event_log_free(log);
		log = next;
		if (rc < 0) {
			tool_report("policy generate", &err);
			return rc == MB_ERR_POLICY_UNPREDICTABLE ? EXIT_FAILED : EXIT_USAGE;
		}
	}
	if (boot.kernel || boot.uki) {
		art.boot = &boot;
		art.log = log;
		art.allow_text = allow;
		art.firmware_pcrs = firmware_arg ? firmware : 0;
		rc = mb_policy_generate_from_artifacts(&art, &json, &err);
	} else if (log) {
		rc = mb_policy_generate_from_log(log, pcrs | firmware, firmware, &json, &err);
	}
	if (rc >= 0 && (ima_path || keylime_path))
		rc = add_ima(ima_path, keylime_path, &json, &err);
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
	printf("%s: policy version %u, governs %s", argv[1], mb_policy_version(p), m ? "PCRs" : "no PCR");
	for (i = 0; i < MB_PCR_COUNT; i++)
		if (m & (1u << i))
			printf(" %u", i);
	if (mb_policy_has_ima(p))
		printf("%s an \"ima\" section (what runs after the boot: verify --ima-log)", m ? ", and" : ";");
	putchar('\n');
	if (mb_policy_n_firmware_sets(p)) {
		m = mb_policy_firmware_pcrs(p);
		printf("%zu firmware sets, each giving PCRs", mb_policy_n_firmware_sets(p));
		for (i = 0; i < MB_PCR_COUNT; i++)
			if (m & (1u << i))
				printf(" %u", i);
		printf(":\n");
		for (size_t s = 0; s < mb_policy_n_firmware_sets(p); s++)
			printf("  %s\n", mb_policy_firmware_set_name(p, s));
	}
	mb_policy_free(p);
	return EXIT_OK;
}

static const char add_firmware_help[] =
	"Usage: mboot policy add-firmware POLICY --from-log LOG [--name NAME] [--pcrs LIST]\n\n"
	"A fleet runs several firmware releases, and a firmware update changes PCRs 0-7. This adds\n"
	"the values LOG replays to (the firmware log of a machine known to be good, on the new\n"
	"release) to POLICY as one more firmware set; verify then accepts the firmware PCRs when\n"
	"all of them hold one set's values (never a mix of sets) and names that set. The set gives\n"
	"the PCRs the policy's sets give, or, for a version-1 policy, the PCRs it has values for;\n"
	"those values become the set \"firmware-1\" and the policy becomes version 2. POLICY is\n"
	"rewritten in place, atomically (its JSON re-indented).\n\n"
	"  --from-log LOG  the known-good log (required)\n"
	"  --name NAME     the set's name, shown by verify (default: firmware-N)\n"
	"  --pcrs LIST     the PCRs to take (default: the policy's firmware PCRs; a version-1\n"
	"                  policy may take fewer)\n\n"
	"Refused (exit 2, POLICY unchanged): a policy that does not load (unknown keys included),\n"
	"a set with this name or these values already, a log without an event for one of the\n"
	"PCRs, and a signed policy (mboot policy sign): its signature covers its values, so a new\n"
	"release needs a new signature, not an edit.\n";

static int policy_add_firmware(int argc, char **argv)
{
	const char *log_path = NULL, *name = NULL, *path;
	uint32_t pcrs = 0;
	const tool_option opts[] = {
		TOOL_OPT_STR("from-log", 0, &log_path),
		TOOL_OPT_STR("name", 0, &name),
		TOOL_OPT_PCR_LIST("pcrs", 0, &pcrs),
		TOOL_OPT_END,
	};
	mb_event_log *log = NULL;
	mb_error err = { 0 };
	uint8_t *text = NULL;
	char *json = NULL;
	size_t size;
	int rc;

	rc = tool_parse_options("policy add-firmware", add_firmware_help, opts, argc, argv, 1);
	if (rc != TOOL_OPTS_GO_ON)
		return rc;
	if (argc - optind != 1)
		return tool_usage_error("policy add-firmware", "needs one POLICY file");
	if (!log_path)
		return tool_usage_error("policy add-firmware", "needs --from-log LOG");
	path = argv[optind];
	if (file_read(path, MB_POLICY_MAX_SIZE, &text, &size, &err) < 0) {
		tool_report(path, &err);
		return EXIT_USAGE;
	}
	rc = tool_load_log(log_path, &log);
	if (rc == EXIT_OK && mb_policy_add_firmware((const char *) text, size, log, pcrs, name, &json, &err) < 0) {
		tool_report(path, &err);
		rc = EXIT_USAGE;
	}
	if (rc == EXIT_OK) {
		size_t len = strlen(json);
		mb_policy *p = NULL;

		/* the name the set got (the default is the library's choice): the last set's */
		if (mb_policy_parse(json, len, &p, &err) == 0)
			name = mb_policy_firmware_set_name(p, mb_policy_n_firmware_sets(p) - 1);
		json[len] = '\n';
		rc = tool_write_output("policy add-firmware", path, json, len + 1, 0644, true);
		if (rc == EXIT_OK)
			printf("%s: added firmware set \"%s\"\n", path, name ? name : "?");
		mb_policy_free(p);
	}
	free(json);
	free(text);
	mb_event_log_free(log);
	return rc;
}

static const tool_command policy_commands[] = {
	{ "generate", policy_generate },
	{ "lint", policy_lint },
	{ "add-firmware", policy_add_firmware },
	{ "sign", policy_sign },
	{ "counter", policy_counter },
	{ "revoke", policy_revoke },
	{ NULL, NULL },
};

int verb_policy(int argc, char **argv)
{
	return tool_dispatch("policy", policy_help, policy_commands, argc, argv);
}
