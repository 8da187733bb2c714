/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_TOOL_VERBS_H
#define MB_TOOL_VERBS_H

/* Each verb gets argv from its own name on (argv[0] = "log", ...) and returns the exit code. */
int verb_log(int argc, char **argv);
int verb_initramfs(int argc, char **argv);
int verb_totp(int argc, char **argv);
int verb_policy(int argc, char **argv);
int verb_predict(int argc, char **argv);
int verb_pcrs(int argc, char **argv);
int verb_verify(int argc, char **argv);
int verb_measure(int argc, char **argv);
int verb_hash(int argc, char **argv);
int verb_seal(int argc, char **argv);
int verb_unseal(int argc, char **argv);
int verb_reseal(int argc, char **argv);
int verb_attest(int argc, char **argv);
/* mboot attest verify: in verb-attest-verify.c, dispatched from verb-attest.c. */
int attest_verify(int argc, char **argv);

/* mboot log extend: in verb-log-extend.c, dispatched from verb-log.c. */
int log_extend(int argc, char **argv);
/* mboot predict's options, parsed for predict and for reseal --predict-args (verb-predict.c). */
#include <stdbool.h>
#include <mboot/predict.h>
#define PREDICT_MAX_EFI 16
typedef struct predict_args {
	mb_predict_input in;
	mb_efi_binary efi[PREDICT_MAX_EFI];
	const char *log_path;
	const char *write_log;
	bool json;
} predict_args;
int predict_parse_args(int argc, char **argv, const char *verb, predict_args *a);

/* mboot attest challenge: in verb-attest-challenge.c, dispatched from verb-attest.c. */
int attest_challenge(int argc, char **argv);

/* mboot policy sign: in verb-policy-sign.c, dispatched from verb-policy.c. */
int policy_sign(int argc, char **argv);

/* mboot attest enroll and activate (verb-attest-machine.c), mboot quote (verb-quote.c). */
#include <stddef.h>
#include <mboot/error.h>
#define MB_AK_DIR_DEFAULT "/var/lib/mboot"
#define MB_AK_FILE_DEFAULT MB_AK_DIR_DEFAULT "/ak.json"
int attest_enroll(int argc, char **argv);
int attest_activate(int argc, char **argv);
int verb_quote(int argc, char **argv);
/* Report err; the exit code: 1 refused, 2 malformed input or bad arguments, 3 the TPM (or memory). */
int attest_machine_exit(const char *what, const mb_error *err);
/* Read the AK file (64 KiB at most); a missing one says to enroll first. Reports, EXIT_USAGE. */
int attest_read_ak_file(const char *path, char **ret, size_t *ret_size);

#endif
