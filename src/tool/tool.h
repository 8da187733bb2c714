/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_TOOL_H
#define MB_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <mboot/mboot.h>

/* Exit codes: the command-line contract of README.md ("Exit codes"). */
enum {
	EXIT_OK = 0,
	EXIT_FAILED = 1,  /* verification failed, or (log diff) the logs differ */
	EXIT_USAGE = 2,   /* usage or input error */
	EXIT_TPM = 3,     /* TPM error */
};

#define MB_DEFAULT_LOG "/sys/kernel/security/tpm0/binary_bios_measurements"

/* Print "mboot: <what>: [at byte N: ]<message>" to stderr. */
void tool_report(const char *what, const mb_error *err);
void tool_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The package that ships the library a message says cannot be loaded (dl-hint.c), or NULL;
 * tool_dl_hint prints "mboot: hint: on Debian, apt-get install PKG" when there is one. */
const char *tool_dl_package(const char *message);
void tool_dl_hint(const char *message);
/* "mboot: note: <what>" on stderr: something true the user may want to know, not an error. */
void tool_notef(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A one-line usage error: "mboot VERB: msg (see 'mboot VERB --help')"; returns EXIT_USAGE. */
int tool_usage_error(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * How long 'measure' and 'verify' wait for another process's lock on the userspace log: a
 * writer holds it for one extend, so this long means it is stuck (or a deliberate holder).
 */
#define TOOL_LOCK_TIMEOUT_MS 10000u

/*
 * An output file a user may keep: EXIT_USAGE, said, when path exists and !force. Called
 * before any work, so that nothing is done (no TPM use) for an output that will be refused.
 */
int tool_check_output(const char *verb, const char *path, bool force);
/*
 * file_write, replacing an existing path only with force; reports ("exists; give --force"
 * when it does) and returns EXIT_USAGE on failure. "-" is stdout.
 */
int tool_write_output(const char *verb, const char *path, const void *data, size_t size, unsigned mode, bool force);

/* Read and parse an event log; on failure reports and returns EXIT_USAGE. */
int tool_load_log(const char *path, mb_event_log **ret);

/*
 * Read and parse a PCR-values file (JSON or tpm2_pcrread YAML, 1 MiB at most), or, given as
 * SELECTION@FILE (tpm2_pcrread's selection, e.g. sha256:0,1,7+sha1:0), the digests tpm2_pcrread
 * -o wrote for that selection; reports, EXIT_USAGE.
 */
int tool_load_pcrs(const char *path, mb_pcr_values *v);
/*
 * tpm2_pcrread's PCR selection "sha256:0,1,7+sha1:all" (ranges 4-7 too) into up to max banks:
 * algs[i], pcrs[i] (bit mask), in the order given; -EINVAL when malformed.
 */
int tool_parse_pcr_selection(const char *s, uint16_t *algs, uint32_t *pcrs, size_t max, size_t *ret_n);
/* PCR values on stdout in the one text layout of pcrs, log replay and predict; EXIT_OK or EXIT_USAGE. */
int tool_print_pcr_values(const mb_pcr_values *v);
/*
 * The same, then its values of bank alg for every PCR in mask into *ret; "PATH: has no
 * BANK value for some of the PCRS_WHAT" (EXIT_USAGE) when it lacks one.
 */
int tool_load_pcr_bank(const char *path, uint16_t alg, uint32_t mask, const char *pcrs_what, mb_pcr_bank *ret);
/* A new empty mb_pcr_values, or NULL after saying "out of memory". */
mb_pcr_values *tool_pcr_values_new(void);
/* Does v have a bank of alg (perhaps with no PCR in it)? */
bool tool_pcr_values_has_bank(const mb_pcr_values *v, uint16_t alg);

struct mb_policy;
/* Read and load a policy; on failure reports (line and field) and returns EXIT_USAGE. */
int tool_load_policy(const char *path, struct mb_policy **ret);

/* A sub-command of a verb ("log show"): argv from its own name on, returns the exit code. */
typedef struct tool_command {
	const char *name;
	int (*run)(int argc, char **argv);
} tool_command;
/*
 * Run the sub-command argv[1] names from cmds (ended by a { NULL } entry). No sub-command:
 * help on stderr, EXIT_USAGE; --help / -h: help on stdout, EXIT_OK; an unknown one: a usage error.
 */
int tool_dispatch(const char *verb, const char *help, const tool_command *cmds, int argc, char **argv);

/* --bank NAME: its algorithm; a usage error (EXIT_USAGE, said) for a name mboot does not know. */
int tool_bank_arg(const char *verb, const char *name, const mb_digest_info **ret);
/* A repeatable --bank: NAME's algorithm added to algs[*n] once; EXIT_USAGE, said, when unknown or too many. */
int tool_bank_list_add(const char *verb, const char *name, uint16_t algs[MB_MAX_BANKS], size_t *n);

/*
 * --efi: FILE (policy generate: the application that will boot) or OLD=NEW (predict, with_old:
 * the one it replaces, then the new one), their Authenticode digests in every bank mboot hashes.
 * EXIT_OK, else reported (usage or unreadable file) and EXIT_USAGE. e's arrays point into store.
 */
typedef struct tool_efi_digests {
	uint16_t algs[4];
	uint8_t digest[4][MB_DIGEST_MAX];
	uint8_t old_digest[4][MB_DIGEST_MAX];
} tool_efi_digests;
int tool_efi_binary(const char *verb, char *arg, bool with_old, mb_efi_binary *e, tool_efi_digests *store);

/* --grub-cfg [MEASURED_PATH=]FILE, repeatable (TOOL_OPT_ARTIFACTS): the array boot->grub_cfg
 * points at; boot is set before the options are parsed. */
#define TOOL_MAX_GRUB_CFG 8
typedef struct tool_grub_cfgs {
	mb_boot_artifacts *boot;
	mb_grub_config cfg[TOOL_MAX_GRUB_CFG];
} tool_grub_cfgs;

/* Where GRUB's devices are mounted here (grub keep-booted --map, predict --grub-map): the ones
 * given, then tool_grub_maps_finish's defaults for any other device. */
#define TOOL_MAX_GRUB_MAPS 16
typedef struct tool_grub_maps {
	mb_grub_mount m[TOOL_MAX_GRUB_MAPS + 4];
	size_t n;
} tool_grub_maps;

/* The Secure Boot and MOK variables of the next boot (TOOL_OPT_EFI_VARS): --efi-var NAME[+]=FILE,
 * --sbat-level FILE and --mok-list FILE, taken alike by predict and policy generate. */
#define TOOL_MAX_EFI_VARS 16
typedef struct tool_efi_vars {
	mb_efi_var_update var[TOOL_MAX_EFI_VARS];
	const char *arg[TOOL_MAX_EFI_VARS]; /* each as given */
	size_t n;
} tool_efi_vars;

/* "0,2,4-7" -> bit mask; -EINVAL on a malformed list or a PCR > 23. */
int tool_parse_pcr_list(const char *s, uint32_t *ret);
/* A decimal number in [min, max], digits only; -EINVAL otherwise. */
int tool_parse_uint(const char *s, unsigned min, unsigned max, unsigned *ret);

/*
 * Open the TPM named by --tcti (NULL: $TPM2TOOLS_TCTI, else device:/dev/tpmrm0).
 * On failure reports and returns EXIT_TPM.
 */
int tool_tpm_open(const char *tcti, mb_tpm **ret);
/* Report a failed mb_tpm_* call and return its exit code (EXIT_TPM, or EXIT_USAGE for -EINVAL). */
int tool_tpm_exit(const mb_error *err);

#include "shared/json.h"
/*
 * --json and --compact, the same in every verb that reports: TOOL_OPT_JSON_STYLE(&style) in its
 * option table (tool/options.h), and tool_json_print(). JSON is pretty (shared/json.h's layout:
 * two spaces a level, "key": value) unless --compact, one line, which also means --json.
 * TOOL_JSON_OFF is 0: false.
 */
typedef enum tool_json { TOOL_JSON_OFF = 0, TOOL_JSON_PRETTY, TOOL_JSON_COMPACT } tool_json;
/* The writer's layout of a style. */
json_layout tool_json_layout(tool_json style);
/* o and a newline on stdout in style (NULL prints null): tool_json_text_print() of its text. */
int tool_json_print(tool_json style, const json_t *o);
/* JSON text a library call wrote (NULL: it ran out of memory, said), a newline, freed: the exit code. */
int tool_json_text_print(char *text);
/* An mb_text_sink (mboot/replay.h) writing a library's streamed document to stdout. */
int tool_stdout_sink(void *ctx, const char *text, size_t len);
/* Print text as a QR code with Unicode half blocks; -1 if it cannot be encoded. Without
 * libqrencode, prints why there is no QR code instead and returns 0. */
int tool_print_qr(FILE *f, const char *text);

#endif
