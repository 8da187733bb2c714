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

/* mboot log extend: in verb-log-extend.c, dispatched from verb-log.c. */
int log_extend(int argc, char **argv);
/* mboot predict's options, parsed for predict and for reseal --predict-args (verb-predict.c). */
#include <stdbool.h>
#include <mboot/predict.h>
#define PREDICT_MAX_EFI 16
typedef struct predict_args {
	mb_predict_input in;
	mb_predict_efi efi[PREDICT_MAX_EFI];
	const char *log_path;
	const char *write_log;
	bool json;
} predict_args;
int predict_parse_args(int argc, char **argv, const char *verb, predict_args *a);

/* mboot attest challenge: in verb-attest-challenge.c, dispatched from verb-attest.c. */
int attest_challenge(int argc, char **argv);

/* mboot policy sign: in verb-policy-sign.c, dispatched from verb-policy.c. */
int policy_sign(int argc, char **argv);

#endif
