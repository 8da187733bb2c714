/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mboot grub keep-booted: copies of the GRUB configs that booted, for the next boot's prediction. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>


#include "shared/hex.h"
#include "tool/options.h"
#include "tool/tool.h"
#include "tool/verbs.h"

static const char grub_help[] =
	"Usage: mboot grub COMMAND [OPTIONS]\n\n"
	"  keep-booted [--log LOG] [--dir DIR] [--map (DEVICE)=DIR]... [--json]\n"
	"                    keep copies of the GRUB configs this boot measured\n\n"
	"The layout of the copies is in docs/predict.md (\"Copies of the configs that booted\").\n";

static const char keep_booted_help[] =
	"Usage: mboot grub keep-booted [--log LOG] [--dir DIR] [--map (DEVICE)=DIR]... [--json [--compact]]\n\n"
	"GRUB measures each config it reads into PCR 9 under the path it opened, e.g.\n"
	"\"(hd0,gpt2)/boot/grub/grub.cfg\". For each such config of today's log, find the file on this\n"
	"machine that has the event's digest in every bank, and keep a copy of it in DIR: a file named\n"
	"by the lowercase SHA-256 hex of the measured path, and DIR/index.json {\"configs\": [{\"path\",\n"
	"\"file\", \"sha256\"}]}, each written atomically, mode 0644. A kernel update rewrites the\n"
	"configs before the next boot is predicted; 'mboot predict' reads these copies for today's.\n"
	"A file that was rewritten since it booted has other digests and is not kept; a copy already\n"
	"in DIR that still has the measured digests is kept. Copies no config of the log names are\n"
	"removed.\n\n"
	"  --log LOG         today's firmware event log (default " MB_DEFAULT_LOG ")\n"
	"  --dir DIR         where the copies go (default " MB_GRUB_BOOTED_DIR ")\n"
	"  --map (DEVICE)=DIR  GRUB's DEVICE is mounted at DIR here, e.g. --map '(hd0,gpt1)=/boot/efi';\n"
	"                    repeatable. A device with no --map is looked for at /boot/efi, /efi,\n"
	"                    /boot and /, in that order, and the first file with the digests is kept\n"
	"  --json            {\"dir\", \"configs\": [{\"path\", \"status\", \"file\", \"copy\", \"sha256\"}]}\n"
	"  --compact         the JSON on one line (implies --json)\n\n"
	"Paths that are not \"(DEVICE)/...\", or have a \"..\" component or control characters, are never\n"
	"looked up. Exit: 0 every measured config kept (or none measured), 1 some not kept (named),\n"
	"2 usage or input error (unreadable log, DIR not writable).\n";

/* A path from the log, untrusted: control characters printed as '?', a long one cut. */
static void print_path(FILE *f, const char *p)
{
	size_t i;

	for (i = 0; p[i] && i < 512; i++)
		fputc((unsigned char) p[i] < 0x20 || p[i] == 0x7f ? '?' : p[i], f);
	if (p[i])
		fprintf(f, "...(%zu bytes)", strlen(p));
}

static int cmd_keep_booted(int argc, char **argv)
{
	const char *log_path = MB_DEFAULT_LOG, *dir = MB_GRUB_BOOTED_DIR;
	tool_grub_maps maps = { .n = 0 };
	tool_json json = TOOL_JSON_OFF;
	const tool_option opts[] = {
		TOOL_OPT_STR("log", 0, &log_path),
		TOOL_OPT_STR("dir", 0, &dir),
		TOOL_OPT_FN("map", 0, &maps, tool_grub_map_option),
		TOOL_OPT_JSON_STYLE(&json),
		TOOL_OPT_END,
	};
	mb_event_log *log = NULL;
	mb_grub_booted *b = NULL;
	mb_error err = { 0 };
	size_t n = 0, i, kept = 0;
	int rc;

	rc = tool_parse_options("grub keep-booted", keep_booted_help, opts, argc, argv, 0);
	if (rc != TOOL_OPTS_GO_ON)
		return rc;
	tool_grub_maps_finish(&maps);
	rc = tool_load_log(log_path, &log);
	if (rc != EXIT_OK)
		return rc;
	if (mb_grub_find_booted(log, maps.m, maps.n, dir, &b, &n, &err) < 0) {
		tool_report("grub keep-booted", &err);
		mb_event_log_free(log);
		return EXIT_USAGE;
	}
	mb_event_log_free(log);
	/* the default folder's parent is mboot's state folder, private as attest makes it */
	if (strcmp(dir, MB_GRUB_BOOTED_DIR) == 0 && mkdir(MB_AK_DIR_DEFAULT, 0700) < 0 && errno != EEXIST) {
		tool_errorf("%s: cannot create: %s", MB_AK_DIR_DEFAULT, strerror(errno));
		mb_grub_booted_free(b, n);
		return EXIT_USAGE;
	}
	if (mb_grub_booted_store(dir, b, n, &err) < 0) {
		tool_report(dir, &err);
		mb_grub_booted_free(b, n);
		return EXIT_USAGE;
	}

	for (i = 0; i < n; i++)
		kept += b[i].status == MB_GRUB_BOOTED_FOUND;
	if (json) {
		rc = tool_json_text_print(mb_grub_booted_to_json(dir, b, n, json == TOOL_JSON_PRETTY));
		mb_grub_booted_free(b, n);
		return rc != EXIT_OK ? rc : kept == n ? EXIT_OK : EXIT_FAILED;
	}
	for (i = 0; i < n; i++) {
		char name[MB_GRUB_BOOTED_NAME_SIZE] = "";

		if (b[i].status == MB_GRUB_BOOTED_FOUND && mb_grub_booted_name(b[i].measured_path, name) < 0)
			name[0] = 0;
		FILE *f = b[i].status == MB_GRUB_BOOTED_FOUND ? stdout : stderr;

		fputs(b[i].status == MB_GRUB_BOOTED_FOUND ? "kept " : "mboot: NOT kept ", f);
		print_path(f, b[i].measured_path);
		switch (b[i].status) {
		case MB_GRUB_BOOTED_FOUND:
			fprintf(f, ": %s -> %s/%s\n", b[i].file, dir, name);
			break;
		case MB_GRUB_BOOTED_CHANGED:
			fprintf(f, ": %s has other digests than event %u (rewritten since it booted?)\n", b[i].file,
				b[i].event_number);
			break;
		case MB_GRUB_BOOTED_MISSING:
			fprintf(f, ": no such file here (give --map (DEVICE)=DIR)\n");
			break;
		case MB_GRUB_BOOTED_UNSAFE:
			fprintf(f, ": not a (DEVICE)/PATH without '..' and control characters: not looked up\n");
			break;
		}
	}
	if (n == 0)
		tool_notef("%s: GRUB measured no config: nothing to keep", log_path);
	mb_grub_booted_free(b, n);
	return kept == n ? EXIT_OK : EXIT_FAILED;
}

static const tool_command grub_commands[] = {
	{ "keep-booted", cmd_keep_booted },
	{ NULL, NULL },
};

int verb_grub(int argc, char **argv)
{
	return tool_dispatch("grub", grub_help, grub_commands, argc, argv);
}
