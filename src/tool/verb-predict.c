/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


#include <mboot/pe.h>
#include <mboot/predict.h>
#include "shared/fileio.h"
#include "tool/options.h"
#include "tool/tool.h"
#include "tool/verbs.h"

/* Where the boot-time hook keeps copies of the configs that booted (docs/predict.md). */
#define MB_GRUB_BOOTED_DIR "/var/lib/mboot/grub-booted"

static const char predict_help[] =
	"Usage: mboot predict [--log LOG] [--kernel K] [--initrd I] [--cmdline S]\n"
	"                     [--grub-cfg [MEASURED_PATH=]F ...] [--kernel-path P] [--initrd-path P]\n"
	"                     [--grub-cfg-booted MEASURED_PATH=F ...] [--grub-booted-dir DIR]\n"
	"                     [--grub-cfg-installed [--grub-map (DEVICE)=DIR ...]]\n"
	"                     [--grub-entry SPEC | --grub-entry-kernel PATH] [--grub-image FILE]\n"
	"                     [--efi OLD=NEW ...] [--uki FILE [--uki-extra DIR] [--uki-today FILE] [--esp DIR ...]]\n"
	"                     [--efi-var NAME[+]=FILE ...]\n"
	"                     [--sbat-level FILE] [--mok-list FILE] [--json] [--compact] [--write-log FILE]\n\n"
	"The PCR values of the next boot after an update, from today's event log: each event whose\n"
	"source is replaced is recomputed (GRUB's file digests in PCR 9 for the kernel, initrd and\n"
	"grub.cfg, the EFI stub's initrd tag, GRUB's linux/initrd commands and kernel_cmdline in PCR 8,\n"
	"EFI applications in PCR 4, Secure Boot variables in PCR 7, shim's MOK lists in PCR 14);\n"
	"everything else is carried over. The values print in\n"
	"tpm2_pcrread's layout, as 'mboot pcrs' prints them, a file 'mboot seal' and 'mboot verify'\n"
	"read back; which PCRs change, and which cannot be predicted and why, go to stderr.\n"
	"Every change given must apply to an event of the log: one that matches nothing is named and\n"
	"no values print. A PCR the changes move in a way mboot does not compute (the kernel measured\n"
	"into PCR 4 too, systemd-boot's command line in PCR 12, a UKI's PCR 11) is named and has no value.\n\n"
	"  --kernel K, --initrd I   the files that will boot (host paths)\n"
	"  --cmdline S              the kernel arguments, without the kernel path\n"
	"  --grub-cfg [MEASURED_PATH=]F\n"
	"                           a grub.cfg that will boot (its digest; the linux/initrd lines of the\n"
	"                           first config with an entry), replacing the config GRUB measured as\n"
	"                           MEASURED_PATH, as the log names it: '(hd0,gpt1)/EFI/debian/grub.cfg'.\n"
	"                           F alone: the log's only config (exit 2 when it measured several).\n"
	"                           Repeatable, once per config\n"
	"  --grub-cfg-booted MEASURED_PATH=F\n"
	"                           a copy of a config that booted today. With a copy of every config\n"
	"                           the log measured, PCR 8 is predicted by running the configs as GRUB\n"
	"                           does, once the run of today's copies reproduced today's PCR 8 exactly\n"
	"                           (else PCR 8 is unpredictable, the first differing command named).\n"
	"                           Not with --cmdline, --kernel-path, --initrd-path. Repeatable\n"
	"  --grub-booted-dir DIR    where copies not given are kept, one file per config named by the\n"
	"                           sha256 hex of MEASURED_PATH (default " MB_GRUB_BOOTED_DIR "; '' none)\n"
	"  --grub-cfg-installed     each config the log measured that has a copy of how it booted, as it is\n"
	"                           now (after update-grub), at the file it booted from: a --grub-cfg\n"
	"                           MEASURED_PATH=FILE for it (one given by hand wins). Files are looked\n"
	"                           for as 'mboot grub keep-booted' does: --grub-map, /boot/efi, /efi,\n"
	"                           /boot, / (what the kernel hook gives when nothing is configured)\n"
	"  --grub-map (DEVICE)=DIR  GRUB's DEVICE is mounted at DIR here (for --grub-cfg-installed);\n"
	"                           repeatable\n"
	"  --grub-entry SPEC        the boot where someone picks SPEC from the menu instead of letting it\n"
	"                           time out (GRUB measures no key press): SPEC as GRUB's `default` names\n"
	"                           entries, a number, title or id per menu level, '>' between levels:\n"
	"                           '1>1', 'gnulinux-advanced-ID>gnulinux-V-advanced-ID'. PCR 8 from\n"
	"                           running the new config (needs the configs that booted); an entry that\n"
	"                           loads another kernel or initrd than today's needs --kernel/--initrd.\n"
	"                           A SPEC that names no entry, or a submenu, matches nothing (exit 1)\n"
	"  --grub-entry-kernel PATH the same for the first entry in menu order (a submenu's entries at its\n"
	"                           place) whose linux command loads PATH, as GRUB names it or its end:\n"
	"                           /boot/vmlinuz-V finds GRUB's /vmlinuz-V on a /boot partition too\n"
	"  --grub-image FILE        the GRUB image that booted today (PCR 4 must have its Authenticode\n"
	"                           digest, else exit 2): the configs run after its built-in config and\n"
	"                           its memdisk's config, as Debian's signed GRUB runs them (default: the\n"
	"                           OLD of an --efi that is a GRUB image)\n"
	"  --kernel-path P          the kernel's path as GRUB will name it (default: from grub.cfg, else today's)\n"
	"  --initrd-path P          likewise for the initrd\n"
	"  --efi OLD=NEW            an EFI application (shim, GRUB, ...) replaced: the PCR 4 event whose\n"
	"                           digest is OLD's PE/COFF Authenticode digest gets NEW's. A GRUB image\n"
	"                           with another prefix, built-in config or memdisk than OLD's (or GRUB\n"
	"                           in another loader's place) makes PCRs 8 and 9 unpredictable\n"
	"  --uki FILE               the unified kernel image systemd-boot will start: PCR 11 from its\n"
	"                           sections as systemd-stub (systemd 252) measures them, the value when\n"
	"                           the stub starts the kernel (systemd-pcrphase's phases are not included),\n"
	"                           PCR 4 from its Authenticode digest in place of today's UKI (the last\n"
	"                           EFI application before the stub's PCR 11 events) and its .linux's in\n"
	"                           place of the kernel the stub started; PCR 12 and PCR 9's LoadOptions\n"
	"                           tag (its .cmdline as systemd-boot passes it) when today's UKI\n"
	"                           explains today's: --uki-today, or an --efi OLD=FILE naming it.\n"
	"                           Not with --kernel, --initrd or --cmdline: the UKI carries them\n"
	"  --uki-today FILE         today's UKI (checked against today's PCR 4 event): today's PCR 12\n"
	"                           and LoadOptions tag must be its .cmdline (no edit at the menu) for\n"
	"                           the new UKI's to be predicted. With --uki\n"
	"  --esp DIR                where an ESP is mounted (repeatable, at most 8; default /boot/efi,\n"
	"                           /efi and /boot; none: nowhere): without --uki-today or an --efi\n"
	"                           naming it, today's UKI is the first *.efi under DIR/EFI/Linux/, then\n"
	"                           DIR/EFI/ and its other folders, whose Authenticode digest is today's\n"
	"                           UKI's PCR 4 event's. With --uki\n"
	"  --uki-extra DIR          the folder that will be the UKI's NAME.efi.extra.d/ on the ESP (empty:\n"
	"                           none): PCR 13 from the archive systemd-stub builds of its *.raw system\n"
	"                           extensions (without it, today's PCR 13 is carried over). With --uki\n"
	TOOL_HELP_EFI_VARS
	"  --json                   {\"banks\": {...}, \"changed\": [...], \"unpredictable\": {\"8\": \"why\"},\n"
	"                           \"unmatched\": [{\"option\", \"value\", \"why\"}], \"notes\": {...}}\n"
	"  --compact                the JSON on one line (implies --json)\n"
	"  --write-log FILE         also write the predicted event log\n\n"
	"LOG defaults to " MB_DEFAULT_LOG ".\n"
	"Exit: 0 every PCR predicted, 1 some PCR could not be predicted or some change matched nothing\n"
	"(named), 2 usage or input error.\n";

/*
 * Parse predict's options into a (also for `mboot reseal --predict-args`); verb names the
 * command in messages. Returns -1 when --help was given (and shown), else an exit code.
 */
/* --efi OLD=NEW, repeatable: the application replaced and its successor. */
static int efi_option(void *target, const char *arg, const char *verb)
{
	predict_args *a = target;
	size_t n = a->boot.n_efi;

	if (n >= PREDICT_MAX_EFI)
		return tool_usage_error(verb, "at most %d --efi", PREDICT_MAX_EFI);
	/* tool_efi_binary splits OLD=NEW in place: arg is an argv string, ours to change */
	if (tool_efi_binary(verb, (char *) arg, true, &a->efi[n], &a->efi_digests[n]) != EXIT_OK)
		return EXIT_USAGE;
	a->efi_arg[n] = arg;
	a->boot.n_efi++;
	return EXIT_OK;
}

/* --esp DIR, repeatable; --esp none: search no ESP. */
static int esp_option(void *target, const char *arg, const char *verb)
{
	predict_args *a = target;

	bool none = strcmp(arg, "none") == 0;

	if (!*arg)
		return tool_usage_error(verb, "--esp takes a folder (or none)");
	/* given before, and this or that one was none */
	if (a->esp_given && (none || a->in.n_esp_dirs == 0))
		return tool_usage_error(verb, "--esp none searches no ESP: no other --esp with it");
	a->esp_given = true;
	if (none)
		return EXIT_OK;
	if (a->in.n_esp_dirs >= MB_PREDICT_MAX_ESP_DIRS)
		return tool_usage_error(verb, "at most %d --esp", MB_PREDICT_MAX_ESP_DIRS);
	a->esp[a->in.n_esp_dirs++] = arg;
	return EXIT_OK;
}

/* --grub-cfg-booted MEASURED_PATH=FILE, repeatable. */
static int booted_option(void *target, const char *arg, const char *verb)
{
	predict_args *a = target;
	mb_grub_config *g;
	const char *eq = strchr(arg, '=');

	if (a->in.n_grub_booted >= TOOL_MAX_GRUB_CFG)
		return tool_usage_error(verb, "at most %d --grub-cfg-booted", TOOL_MAX_GRUB_CFG);
	if (!eq || eq == arg || !eq[1])
		return tool_usage_error(verb, "--grub-cfg-booted takes MEASURED_PATH=FILE, not '%s'", arg);
	g = &a->grub_booted[a->in.n_grub_booted];
	/* arg is an argv string, ours to split */
	*(char *) eq = 0;
	g->measured_path = arg;
	g->file = eq + 1;
	a->in.grub_booted = a->grub_booted;
	a->in.n_grub_booted++;
	return EXIT_OK;
}

int predict_parse_args(int argc, char **argv, const char *verb, predict_args *a)
{
	const tool_option opts[] = {
		TOOL_OPT_STR("log", 0, &a->log_path),
		TOOL_OPT_ARTIFACTS(&a->boot, &a->grub_cfgs),
		TOOL_OPT_JSON_STYLE(&a->json),
		TOOL_OPT_STR("write-log", 0, &a->write_log),
		TOOL_OPT_FN("efi", 0, a, efi_option),
		TOOL_OPT_FN("grub-cfg-booted", 0, a, booted_option),
		TOOL_OPT_STR("grub-booted-dir", 0, &a->in.grub_booted_dir),
		TOOL_OPT_BOOL("grub-cfg-installed", 0, &a->grub_cfg_installed),
		TOOL_OPT_FN("grub-map", 0, &a->grub_maps, tool_grub_map_option),
		TOOL_OPT_STR("grub-entry", 0, &a->in.grub_entry),
		TOOL_OPT_STR("grub-entry-kernel", 0, &a->in.grub_entry_kernel),
		TOOL_OPT_STR("grub-image", 0, &a->in.grub_image),
		TOOL_OPT_STR("uki", 0, &a->boot.uki),
		TOOL_OPT_STR("uki-extra", 0, &a->boot.uki_extra_dir),
		TOOL_OPT_STR("uki-today", 0, &a->boot.uki_today),
		TOOL_OPT_FN("esp", 0, a, esp_option),
		TOOL_OPT_EFI_VARS(&a->efi_vars),
		TOOL_OPT_END,
	};
	int rc;

	memset(a, 0, sizeof(*a));
	a->in.size = sizeof(a->in);
	a->boot.size = sizeof(a->boot);
	a->in.boot = &a->boot;
	a->log_path = MB_DEFAULT_LOG;
	a->in.grub_booted_dir = MB_GRUB_BOOTED_DIR;
	a->grub_cfgs.boot = &a->boot;
	rc = tool_parse_options(verb, predict_help, opts, argc, argv, 0);
	if (rc != TOOL_OPTS_GO_ON)
		return rc == EXIT_OK ? -1 : rc; /* -1: --help was shown */
	a->boot.efi = a->efi;
	if (!a->esp_given) {
		/* where an ESP (or an XBOOTLDR partition with EFI/Linux/) is mounted */
		static const char *const defaults[] = { "/boot/efi", "/efi", "/boot" };

		for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
			a->esp[a->in.n_esp_dirs++] = defaults[i];
	}
	a->in.esp_dirs = a->esp;
	tool_grub_maps_finish(&a->grub_maps);
	a->in.efi_vars = a->efi_vars.var;
	a->in.n_efi_vars = a->efi_vars.n;
	if (a->in.grub_entry && a->in.grub_entry_kernel)
		return tool_usage_error(verb, "--grub-entry or --grub-entry-kernel, not both");
	if ((a->in.grub_entry && !*a->in.grub_entry) || (a->in.grub_entry_kernel && !*a->in.grub_entry_kernel))
		return tool_usage_error(verb, "--grub-entry and --grub-entry-kernel take a non-empty value");
	if (a->boot.uki_today && !a->boot.uki)
		return tool_usage_error(verb, "--uki-today is today's UKI, for the one given with --uki");
	if (a->esp_given && !a->boot.uki)
		return tool_usage_error(verb, "--esp is where today's UKI is looked for, for the one given with --uki");
	if (a->boot.uki_extra_dir && !a->boot.uki)
		return tool_usage_error(verb, "--uki-extra is the drop-in folder of the UKI given with --uki");
	if (a->boot.uki && (a->boot.kernel || a->boot.initrd || a->boot.cmdline))
		return tool_usage_error(verb, "--uki carries the kernel, initrd and command line: no --kernel, --initrd "
					"or --cmdline with it");
	return EXIT_OK;
}

/* Is there a copy of how the config measured as path booted (given, or in the booted dir)? */
static bool has_booted_copy(const predict_args *a, const char *path)
{
	char name[MB_GRUB_BOOTED_NAME_SIZE], *file = NULL;
	bool found;
	size_t i;

	for (i = 0; i < a->in.n_grub_booted; i++)
		if (strcmp(a->in.grub_booted[i].measured_path, path) == 0)
			return true;
	if (!a->in.grub_booted_dir || !*a->in.grub_booted_dir || mb_grub_booted_name(path, name) < 0 ||
	    asprintf(&file, "%s/%s", a->in.grub_booted_dir, name) < 0)
		return false;
	found = access(file, R_OK) == 0;
	free(file);
	return found;
}

/*
 * The configs as update-grub left them, where they booted from. Only those with a copy of how
 * they booted are taken: without one the configs cannot be run as GRUB runs them, and a new
 * config checked line by line against today's commands says little about what a kernel hook
 * needs (the new kernel's path); then the kernel's name decides (predict.c).
 */
int predict_add_installed(predict_args *a, const mb_event_log *log)
{
	mb_error err = { 0 };
	size_t i, k;

	if (!a->grub_cfg_installed)
		return EXIT_OK;
	if (mb_grub_find_booted(log, a->grub_maps.m, a->grub_maps.n, NULL, &a->installed, &a->n_installed, &err) < 0) {
		tool_report("--grub-cfg-installed", &err);
		return EXIT_USAGE;
	}
	for (i = 0; i < a->n_installed; i++) {
		const mb_grub_booted *b = &a->installed[i];

		if ((b->status != MB_GRUB_BOOTED_FOUND && b->status != MB_GRUB_BOOTED_CHANGED) || !b->file ||
		    !has_booted_copy(a, b->measured_path))
			continue;
		for (k = 0; k < a->boot.n_grub_cfg; k++)
			if (!a->grub_cfgs.cfg[k].measured_path || strcmp(a->grub_cfgs.cfg[k].measured_path, b->measured_path) == 0)
				break;
		if (k < a->boot.n_grub_cfg)
			continue; /* given by hand */
		if (a->boot.n_grub_cfg >= TOOL_MAX_GRUB_CFG) {
			tool_errorf("--grub-cfg-installed: more than %d GRUB configs", TOOL_MAX_GRUB_CFG);
			return EXIT_USAGE;
		}
		a->grub_cfgs.cfg[a->boot.n_grub_cfg++] = (mb_grub_config) { .measured_path = b->measured_path,
									     .file = b->file };
		a->boot.grub_cfg = a->grub_cfgs.cfg;
	}
	return EXIT_OK;
}

void predict_args_done(predict_args *a)
{
	mb_grub_booted_free(a->installed, a->n_installed);
	a->installed = NULL;
	a->n_installed = 0;
}

/* Each change that applied to no event of the log: the option as given, and what was looked for. */
typedef void (*unmatched_fn)(const char *option, const char *value, const char *why, void *ud);

static void each_unmatched(const predict_args *a, const mb_predict_result *r, unmatched_fn fn, void *ud)
{
	static const struct {
		uint32_t bit;
		const char *option, *why;
	} changes[] = {
		{ MB_PREDICT_KERNEL, "--kernel", "no PCR 9 event of the file GRUB's linux command loaded (under "
		  "systemd-boot or a UKI the kernel is an EFI application: name it with --efi OLD=NEW)" },
		{ MB_PREDICT_INITRD, "--initrd", "no PCR 9 event of the file GRUB's initrd command loaded, no Linux "
		  "initrd tag of the EFI stub" },
		{ MB_PREDICT_CMDLINE, "--cmdline", "no kernel command line: no GRUB linux command or kernel_cmdline, "
		  "no systemd-boot or EFI stub command line" },
		{ MB_PREDICT_KERNEL_PATH, "--kernel-path", "no GRUB linux command or kernel_cmdline" },
		{ MB_PREDICT_INITRD_PATH, "--initrd-path", "no GRUB initrd command" },
		{ MB_PREDICT_UKI, "--uki", "no systemd-stub PCR 11 events after an EFI application: today's boot did "
		  "not start a UKI" },
	};
	const mb_boot_artifacts *b = &a->boot;
	char buf[4096];
	size_t i;

	for (i = 0; i < sizeof(changes) / sizeof(changes[0]); i++) {
		const char *value = changes[i].bit == MB_PREDICT_KERNEL ? b->kernel :
				    changes[i].bit == MB_PREDICT_INITRD ? b->initrd :
				    changes[i].bit == MB_PREDICT_CMDLINE ? b->cmdline :
				    changes[i].bit == MB_PREDICT_UKI ? b->uki :
				    changes[i].bit == MB_PREDICT_KERNEL_PATH ? b->kernel_path : b->initrd_path;

		if (r->unmatched & changes[i].bit)
			fn(changes[i].option, value, changes[i].why, ud);
	}
	if (r->unmatched & MB_PREDICT_GRUB_ENTRY)
		fn(a->in.grub_entry ? "--grub-entry" : "--grub-entry-kernel",
		   a->in.grub_entry ? a->in.grub_entry : a->in.grub_entry_kernel,
		   r->why[8] ? r->why[8] : "no such menu entry", ud);
	for (i = 0; i < b->n_grub_cfg; i++) {
		const mb_grub_config *g = &b->grub_cfg[i];

		if (!(r->unmatched_grub_cfg & (1u << i)))
			continue;
		snprintf(buf, sizeof(buf), "%s%s%s", g->measured_path ? g->measured_path : "", g->measured_path ? "=" : "",
			 g->file);
		fn("--grub-cfg", buf, g->measured_path ? "no PCR 9 event of a file GRUB measured under that path" :
		   "today's boot measured no GRUB config", ud);
	}
	for (i = 0; i < b->n_efi; i++) {
		if (!(r->unmatched_efi & (1u << i)))
			continue;
		/* efi_arg is "OLD\0NEW" since tool_efi_binary split it */
		snprintf(buf, sizeof(buf), "%s=%s", a->efi_arg[i], a->efi_arg[i] + strlen(a->efi_arg[i]) + 1);
		fn("--efi", buf, "no PCR 4 EFI application has OLD's Authenticode digest", ud);
	}
	for (i = 0; i < a->in.n_efi_vars; i++) {
		const mb_efi_var_update *v = &a->in.efi_vars[i];
		bool sbat = strcmp(v->name, "SbatLevel") == 0, secdb = !sbat && strncmp(v->name, "Mok", 3) != 0;

		if (!(r->unmatched_efi_var & (1u << i)))
			continue;
		snprintf(buf, sizeof(buf), "%s%s=%s", v->name, v->append ? "+" : "", v->file);
		fn("--efi-var", buf, secdb ? "no PCR 7 EV_EFI_VARIABLE_DRIVER_CONFIG event of this variable" :
		   sbat ? "no PCR 7 SbatLevel event of shim" : "no PCR 14 event of shim for this variable", ud);
	}
}

static void say_unmatched(const char *option, const char *value, const char *why, void *ud)
{
	if (!strncmp(option, "--grub-entry", 12))
		tool_errorf("%s %s names no menu entry to boot: %s", option, value ? value : "", why);
	else
		tool_errorf("%s %s matched no event of today's log: %s", option, value ? value : "", why);
	*(unsigned *) ud += 1;
}

unsigned predict_report_unmatched(const predict_args *a, const mb_predict_result *r)
{
	unsigned n = 0;

	each_unmatched(a, r, say_unmatched, &n);
	return n;
}

/* The unmatched changes for the document: {option, value, why} copies (value is often a buffer reused). */
typedef struct unmatched_rows {
	char *(*row)[3];
	size_t n;
	bool oom;
} unmatched_rows;

static void keep_unmatched(const char *option, const char *value, const char *why, void *ud)
{
	unmatched_rows *u = ud;
	char *(*row)[3] = realloc(u->row, (u->n + 1) * sizeof(*u->row));

	if (!row) {
		u->oom = true;
		return;
	}
	u->row = row;
	row[u->n][0] = strdup(option);
	row[u->n][1] = strdup(value ? value : "");
	row[u->n][2] = strdup(why);
	u->oom |= !row[u->n][0] || !row[u->n][1] || !row[u->n][2];
	u->n++;
}

int verb_predict(int argc, char **argv)
{
	static predict_args args;
	mb_predict_input in;
	mb_predict_result *res = NULL;
	const char *log_path, *write_log;
	mb_event_log *log = NULL;
	mb_error err = { 0 };
	tool_json json;
	int rc;
	uint32_t p;
	bool unmatched;

	rc = predict_parse_args(argc, argv, "predict", &args);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	in = args.in;
	log_path = args.log_path;
	write_log = args.write_log;
	json = args.json;
	rc = tool_load_log(log_path, &log);
	if (rc)
		return rc;
	rc = predict_add_installed(&args, log);
	if (rc)
		goto out;
	in = args.in;
	in.log = log;
	res = calloc(1, sizeof(*res));
	if (!res || mb_predict(&in, res, &err) < 0) {
		tool_report("predict", &err);
		rc = EXIT_USAGE;
		goto out;
	}
	if (write_log) {
		size_t size;
		const uint8_t *bytes = mb_event_log_bytes(res->next_log, &size);

		if (file_write(write_log, bytes, size, 0644, true, &err) < 0) {
			tool_report(write_log, &err);
			rc = EXIT_USAGE;
			goto out;
		}
	}
	unmatched = res->unmatched || res->unmatched_efi || res->unmatched_grub_cfg || res->unmatched_efi_var;
	if (json) {
		unmatched_rows u = { 0 };
		char *text;

		each_unmatched(&args, res, keep_unmatched, &u);
		text = u.oom ? NULL : mb_predict_result_to_json(res, (const char *const (*)[3]) u.row, u.n,
								 json == TOOL_JSON_PRETTY);
		for (size_t i = 0; i < u.n; i++)
			for (size_t k = 0; k < 3; k++)
				free(u.row[i][k]);
		free(u.row);
		if (tool_json_text_print(text) != EXIT_OK) {
			rc = EXIT_USAGE;
			goto out;
		}
		if (unmatched)
			predict_report_unmatched(&args, res);
	} else {
		/* stdout is the PCR file (seal --values reads it back): only values that are predicted;
		 * what to know about them, on stderr */
		if (unmatched) {
			predict_report_unmatched(&args, res);
			tool_errorf("no values printed: the effect of a change that matched nothing is unknown");
		} else if (tool_print_pcr_values(res->values) != EXIT_OK) {
			rc = EXIT_USAGE;
			goto out;
		}
		for (p = 0; p < MB_PCR_COUNT; p++) {
			if (res->unpredictable & (1u << p))
				tool_errorf("PCR %u cannot be predicted (no value printed): %s", p,
					    res->why[p] ? res->why[p] : "unknown");
			else if (unmatched)
				continue;
			else if (res->why[p])
				tool_notef("PCR %u: recomputed %s", p, res->why[p]);
			else if (res->changed & (1u << p))
				tool_notef("PCR %u changes", p);
		}
	}
	rc = res->unpredictable || unmatched ? EXIT_FAILED : EXIT_OK;
out:
	if (res)
		mb_predict_result_done(res);
	free(res);
	mb_event_log_free(log);
	predict_args_done(&args);
	return rc;
}
