/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_TOOL_VERBS_H
#define MB_TOOL_VERBS_H

/* Each verb gets argv from its own name on (argv[0] = "log", ...) and returns the exit code. */
int verb_log(int argc, char **argv);
int verb_initramfs(int argc, char **argv);
int verb_totp(int argc, char **argv);
int verb_ima(int argc, char **argv);
int verb_policy(int argc, char **argv);
int verb_predict(int argc, char **argv);
int verb_pcrs(int argc, char **argv);
int verb_verify(int argc, char **argv);
int verb_measure(int argc, char **argv);
int verb_hash(int argc, char **argv);
int verb_seal(int argc, char **argv);
int verb_unseal(int argc, char **argv);
int verb_reseal(int argc, char **argv);
int verb_ssh_hostkey(int argc, char **argv);
int verb_luks(int argc, char **argv);
/* mboot grub keep-booted: verb-grub.c. */
int verb_grub(int argc, char **argv);
int verb_attest(int argc, char **argv);
/* mboot attest verify: in verb-attest-verify.c, dispatched from verb-attest.c. */
int attest_verify(int argc, char **argv);

/* mboot log extend: in verb-log-extend.c, dispatched from verb-log.c. */
int log_extend(int argc, char **argv);
/* mboot log diff: in verb-log-diff.c, dispatched from verb-log.c. */
int log_diff(int argc, char **argv);
/* mboot predict's options, parsed for predict and for reseal --predict-args (verb-predict.c). */
#include <stdbool.h>
#include <mboot/predict.h>
#include "tool/tool.h"
#define PREDICT_MAX_EFI 16
typedef struct predict_args {
	mb_predict_input in;
	mb_boot_artifacts boot;                         /* what in.boot points at */
	mb_efi_binary efi[PREDICT_MAX_EFI];
	tool_efi_digests efi_digests[PREDICT_MAX_EFI]; /* what efi[] points at */
	const char *efi_arg[PREDICT_MAX_EFI];           /* each --efi as given (OLD, NUL, NEW) */
	tool_grub_cfgs grub_cfgs;                       /* what boot.grub_cfg points at */
	mb_grub_config grub_booted[TOOL_MAX_GRUB_CFG];  /* what in.grub_booted points at */
	const char *log_path;
	const char *write_log;
	tool_json json;
	tool_efi_vars efi_vars;                         /* what in.efi_vars points at */
	bool grub_cfg_installed;                        /* --grub-cfg-installed */
	tool_grub_maps grub_maps;                       /* --grub-map, then the defaults */
	mb_grub_booted *installed;                      /* the configs --grub-cfg-installed found */
	size_t n_installed;
	const char *esp[MB_PREDICT_MAX_ESP_DIRS];       /* what in.esp_dirs points at: --esp, else the defaults */
	bool esp_given;                                 /* --esp (none: in.n_esp_dirs stays 0) */
} predict_args;
int predict_parse_args(int argc, char **argv, const char *verb, predict_args *a);
/*
 * --grub-cfg-installed, once the log is loaded: each config today's log measured that has a
 * copy of how it booted, as it is now at its file here, becomes a --grub-cfg (unless one names
 * it already). EXIT_OK or EXIT_USAGE (said). predict_args_done frees what it found.
 */
int predict_add_installed(predict_args *a, const mb_event_log *log);
void predict_args_done(predict_args *a);
/* Each change of a that applied to no event of the log, named on stderr; how many. */
unsigned predict_report_unmatched(const predict_args *a, const mb_predict_result *r);
/*
 * reseal --predict-args, and luks reseal's (verb-reseal.c): predict the next boot from pa's
 * log and updates into *res; EXIT_FAILED, each PCR named, when a PCR of mask cannot be
 * predicted. Free with reseal_predict_free (the log too) whatever it returned.
 */
int reseal_predict(predict_args *pa, uint32_t mask, mb_predict_result **res);
void reseal_predict_free(predict_args *pa, mb_predict_result *res);

/* mboot attest challenge: in verb-attest-challenge.c, dispatched from verb-attest.c. */
int attest_challenge(int argc, char **argv);

/* mboot policy sign: in verb-policy-sign.c, dispatched from verb-policy.c. */
int policy_sign(int argc, char **argv);
/* mboot policy counter / policy revoke: the revocation counter of signed policies (verb-policy-sign.c). */
int policy_counter(int argc, char **argv);
int policy_revoke(int argc, char **argv);

/* mboot attest enroll and activate (verb-attest-machine.c), mboot quote (verb-quote.c). */
#include <stddef.h>
#include <mboot/error.h>
#include <mboot/mboot.h>
#define MB_AK_DIR_DEFAULT "/var/lib/mboot"
#define MB_AK_FILE_DEFAULT MB_AK_DIR_DEFAULT "/ak.json"
int attest_enroll(int argc, char **argv);
int attest_activate(int argc, char **argv);
/* mboot attest push (verb-attest-push.c), the client of mboot-verifierd; mboot fleet (verb-fleet.c). */
int attest_push(int argc, char **argv);
int verb_fleet(int argc, char **argv);
int verb_quote(int argc, char **argv);
/* Where mboot quote finds the logs; a missing default log is no log, a missing named one an error. */
typedef struct quote_logs {
	const char *log_path, *us_path; /* NULL until given: quote_logs_defaults() */
	bool log_named, us_named;
	const char *ima_path;           /* the IMA list: NULL when none is carried */
	bool ima_named, no_ima;
} quote_logs;
/* --log, --userspace-log, --ima-log and --no-ima-log, for the option tables of quote and attest push. */
#define QUOTE_LOG_OPTIONS(l)                             \
	TOOL_OPT_STR("log", 0, &(l)->log_path),          \
	TOOL_OPT_STR("userspace-log", 0, &(l)->us_path), \
	TOOL_OPT_STR("ima-log", 0, &(l)->ima_path),      \
	TOOL_OPT_BOOL("no-ima-log", 0, &(l)->no_ima)
/* After the options: which were named (a missing named log is an error), and the defaults; the
 * kernel's IMA list is carried by default when it can be read, PCR 10 is quoted (pcr_mask 0:
 * all) and the TPM is the kernel's (tcti, else $TPM2TOOLS_TCTI, none or a device one). -1 (said)
 * when --ima-log and --no-ima-log are both given. */
int quote_logs_defaults(quote_logs *l, uint32_t pcr_mask, const char *tcti, const char *verb);
/* --nonce HEX: 0 to MB_ATTEST_EXTRA_DATA_MAX bytes (a TOOL_OPT_FN for a attest_nonce target). */
typedef struct attest_nonce {
	uint8_t bytes[MB_ATTEST_EXTRA_DATA_MAX];
	size_t size;
	bool given;
} attest_nonce;
int attest_nonce_option(void *target, const char *arg, const char *verb);
/*
 * mboot quote's work: read and check the logs (the userspace one under a shared lock until the
 * quote is made), open the TPM (tcti) unless *tpm is open already, quote with the AK into
 * *ret_evidence (the caller's to free). Reports; the exit code.
 */
int quote_evidence(const char *tcti, mb_tpm **tpm, const char *ak, size_t ak_size, const quote_logs *logs,
		   mb_quote_input *in, char **ret_evidence);
/* Create the default AK file's folder (0700) when ak_path is the default; reports, EXIT_USAGE. */
int attest_ak_dir(const char *ak_path);
/* A verdict as 'attest verify' prints it: "trusted: ..." or "NOT TRUSTED:" and a line a reason. */
typedef struct attest_reason_text {
	const char *name, *detail;
} attest_reason_text;
void attest_print_verdict(bool trusted, bool with_policy, const attest_reason_text *reasons, size_t n);
/* Report err; the exit code: 1 refused, 2 malformed input or bad arguments, 3 the TPM (or memory). */
int attest_machine_exit(const char *what, const mb_error *err);
/* Read the AK file (64 KiB at most); a missing one says to enroll first. Reports, EXIT_USAGE. */
int attest_read_ak_file(const char *path, char **ret, size_t *ret_size);

#endif
