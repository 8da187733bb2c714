/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_TOOL_OPTIONS_H
#define MB_TOOL_OPTIONS_H

#include <getopt.h> /* optind: where the arguments after the options start */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mboot/mboot.h>

#include "tool/tool.h"

/*
 * A verb's options as a table: each entry says what its argument is and where it goes, and
 * tool_parse_options() runs getopt_long over it. So every verb parses --bank, --pcrs, numbers
 * and flags the same way, with the same messages, and a verb's code starts after its options.
 */
typedef enum tool_opt_kind {
	TOOL_OPT_STRING, /* const char **: the argument as given (the last one wins) */
	TOOL_OPT_FLAG,   /* bool *: set true; no argument */
	TOOL_OPT_PCRS,   /* uint32_t *: a PCR list, "0,2,4-7" or "all" */
	TOOL_OPT_BANK,   /* const mb_digest_info **: one bank by name */
	TOOL_OPT_BANKS,  /* tool_banks *: repeatable, each bank once */
	TOOL_OPT_UINT,   /* unsigned *: a decimal number in [min, max] */
	TOOL_OPT_CHOICE, /* int *: the index of the argument in choices (a NULL-ended list) */
	TOOL_OPT_CALL,   /* call(target, arg, verb): EXIT_OK, else reported and EXIT_USAGE */
} tool_opt_kind;

/* The banks of a repeatable --bank, in the order given. */
typedef struct tool_banks {
	uint16_t alg[MB_MAX_BANKS];
	size_t n;
} tool_banks;

typedef struct tool_option {
	const char *name;  /* the long name, without "--" */
	int short_name;    /* a letter, or 0 */
	tool_opt_kind kind;
	void *target;
	unsigned min, max;                 /* TOOL_OPT_UINT */
	const char *const *choices;        /* TOOL_OPT_CHOICE */
	int (*call)(void *target, const char *arg, const char *verb); /* TOOL_OPT_CALL */
	bool takes_no_arg;                  /* TOOL_OPT_CALL without an argument (arg is NULL) */
} tool_option;

/* _Generic makes a target of the wrong type a compile error, though the table holds a void *. */
#define TOOL_OPT_STR(n, s, p) { .name = (n), .short_name = (s), .kind = TOOL_OPT_STRING, \
	.target = _Generic((p), const char **: (p)) }
#define TOOL_OPT_BOOL(n, s, p) { .name = (n), .short_name = (s), .kind = TOOL_OPT_FLAG, \
	.target = _Generic((p), bool *: (p)) }
#define TOOL_OPT_PCR_LIST(n, s, p) { .name = (n), .short_name = (s), .kind = TOOL_OPT_PCRS, \
	.target = _Generic((p), uint32_t *: (p)) }
#define TOOL_OPT_ONE_BANK(n, s, p) { .name = (n), .short_name = (s), .kind = TOOL_OPT_BANK, \
	.target = (void *) _Generic((p), const mb_digest_info **: (p)) }
#define TOOL_OPT_BANK_LIST(n, s, p) { .name = (n), .short_name = (s), .kind = TOOL_OPT_BANKS, \
	.target = _Generic((p), tool_banks *: (p)) }
#define TOOL_OPT_NUMBER(n, s, p, lo, hi) { .name = (n), .short_name = (s), .kind = TOOL_OPT_UINT, \
	.target = _Generic((p), unsigned *: (p)), .min = (lo), .max = (hi) }
#define TOOL_OPT_ONE_OF(n, s, p, list) { .name = (n), .short_name = (s), .kind = TOOL_OPT_CHOICE, \
	.target = _Generic((p), int *: (p)), .choices = (list) }
#define TOOL_OPT_FN(n, s, p, fn) { .name = (n), .short_name = (s), .kind = TOOL_OPT_CALL, \
	.target = (p), .call = (fn) }
/* --json and --compact (tool.h's tool_json): two table lines every verb that reports has. */
int tool_json_json_option(void *target, const char *arg, const char *verb);
int tool_json_compact_option(void *target, const char *arg, const char *verb);
#define TOOL_OPT_JSON(p) { .name = "json", .kind = TOOL_OPT_CALL, .target = _Generic((p), tool_json *: (p)), \
	.call = tool_json_json_option, .takes_no_arg = true }
#define TOOL_OPT_COMPACT(p) { .name = "compact", .kind = TOOL_OPT_CALL, \
	.target = _Generic((p), tool_json *: (p)), .call = tool_json_compact_option, .takes_no_arg = true }
#define TOOL_OPT_JSON_STYLE(p) TOOL_OPT_JSON(p), TOOL_OPT_COMPACT(p)

/* The release's files policy generate and predict both take, into one mb_boot_artifacts (g:
 * a tool_grub_cfgs whose boot is b). */
int tool_grub_cfg_option(void *target, const char *arg, const char *verb);
#define TOOL_OPT_ARTIFACTS(b, g)                                \
	TOOL_OPT_STR("kernel", 0, &(b)->kernel),                \
	TOOL_OPT_STR("initrd", 0, &(b)->initrd),                \
	TOOL_OPT_STR("cmdline", 0, &(b)->cmdline),              \
	TOOL_OPT_FN("grub-cfg", 0, _Generic((g), tool_grub_cfgs *: (g)), tool_grub_cfg_option), \
	TOOL_OPT_STR("kernel-path", 0, &(b)->kernel_path),      \
	TOOL_OPT_STR("initrd-path", 0, &(b)->initrd_path)
/* (DEVICE)=DIR into a tool_grub_maps; then the defaults: /boot/efi, /efi, /boot and /. */
int tool_grub_map_option(void *target, const char *arg, const char *verb);
void tool_grub_maps_finish(tool_grub_maps *maps);
/* The Secure Boot and MOK variables of the next boot, one meaning wherever they are taken (v: a
 * tool_efi_vars), and their --help lines. */
int tool_efi_var_option(void *target, const char *arg, const char *verb);
int tool_sbat_level_option(void *target, const char *arg, const char *verb);
int tool_mok_list_option(void *target, const char *arg, const char *verb);
#define TOOL_OPT_EFI_VARS(v)                                                                         \
	TOOL_OPT_FN("efi-var", 0, _Generic((v), tool_efi_vars *: (v)), tool_efi_var_option),         \
	TOOL_OPT_FN("sbat-level", 0, _Generic((v), tool_efi_vars *: (v)), tool_sbat_level_option),   \
	TOOL_OPT_FN("mok-list", 0, _Generic((v), tool_efi_vars *: (v)), tool_mok_list_option)
#define TOOL_HELP_EFI_VARS \
	"  --efi-var NAME=FILE      a Secure Boot variable replaced (PK, KEK, db, dbx, dbt, dbr): FILE is\n" \
	"                           EFI_SIGNATURE_LISTs, alone or behind an EFI_VARIABLE_AUTHENTICATION_2\n" \
	"                           header (a signed update); its PCR 7 event is recomputed\n" \
	"  --efi-var NAME+=FILE     the same, appended (EFI_VARIABLE_APPEND_WRITE, as dbxtool and fwupd\n" \
	"                           apply dbx updates): today's value plus FILE's new entries\n" \
	"  --sbat-level FILE        shim's next SbatLevel (its CSV text): PCR 7 (= --efi-var SbatLevel=FILE)\n" \
	"  --mok-list FILE          the MokList shim will measure into PCR 14, as MokListRT shows it\n" \
	"                           (= --efi-var MokList=FILE; also MokListX, MokListTrusted, MokSBState)\n"
#define TOOL_OPT_END { .name = NULL }

/* tool_parse_options() returns this when the verb should go on (argv[optind] is its first argument). */
#define TOOL_OPTS_GO_ON (-1)

/*
 * Parse argv (argv[0] the verb's name) against opts (ended by TOOL_OPT_END); --help and -h
 * print help on stdout. At most max_args arguments that are not options. Returns
 * TOOL_OPTS_GO_ON, or the exit code to return now: EXIT_OK after --help, EXIT_USAGE after a
 * usage error it has said ("mboot VERB: unknown option '--x' (see 'mboot VERB --help')").
 */
int tool_parse_options(const char *verb, const char *help, const tool_option *opts, int argc, char **argv,
		       int max_args);

#endif
