/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_ERROR_H
#define MBOOT_ERROR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define MB_EXPORT __attribute__((visibility("default")))
#define MB_WUR __attribute__((warn_unused_result))
#else
#define MB_EXPORT
#define MB_WUR
#endif

/*
 * Every fallible library call returns 0 or a negative errno and, when the caller
 * passes an mb_error, fills it with a message and, for parse errors, the byte
 * offset in the input where the problem was found. The library never prints.
 *
 *   -EBADMSG     malformed input (offset set)
 *   -E2BIG       the input declares a size or count over one of our caps
 *   -EOPNOTSUPP  a format or algorithm we do not handle
 *   -ENOENT, -EACCES, -EIO ... from the system, as they came
 *   -ENOMEM      out of memory
 */
typedef struct mb_error {
	int code;
	bool has_offset;
	uint64_t offset;
	char message[512];
} mb_error;

/*
 * mboot's own codes, beside the negative errnos (all of them here, each named by mb_strerror).
 * -4000 to -4099 are the TPM's (mb_error_is_tpm: exit 3 in the tool).
 */
/* The TPM failed a command (the message says which and its TPM_RC), or could not be reached. */
#define MB_ERR_TPM (-4000)
/* The policy session did not satisfy the object's policy: TPM_RC_POLICY_FAIL. */
#define MB_ERR_TPM_POLICY (-4001)
/* The TPM is in dictionary-attack lockout: TPM_RC_LOCKOUT. */
#define MB_ERR_TPM_LOCKOUT (-4002)
/* TPM2_VerifySignature refused a signed policy: not made by the sealed key, or not over these values. */
#define MB_ERR_TPM_SIGNATURE (-4003)
/* The object's authValue was wrong (a wrong PIN): TPM_RC_AUTH_FAIL / TPM_RC_BAD_AUTH. The TPM
 * counts it against its dictionary-attack protection (mb_tpm_da_status). */
#define MB_ERR_TPM_AUTH (-4004)
/* The TPM has an active bank none of the digests is for (mb_measure; exit 3 in the tool). */
#define MB_ERR_MEASURE_BANK (-4100)
/* A refusal of mb_tpm_extend_log (exit 1 in the tool): the TPM's PCRs are as they were. */
#define MB_ERR_LOG_EXTEND_REFUSED (-4200)
/* A refused challenge or activation (EK certificate, AK attributes, proof): exit 1 in the tool. */
#define MB_ERR_ATTEST_REFUSED (-5000)
/* A policy cannot hold a PCR whose value is unknown (mb_policy_log_after_update): exit 1 in the
 * tool, as predict's unpredictable PCRs. */
#define MB_ERR_POLICY_UNPREDICTABLE (-5100)

MB_EXPORT void mb_error_clear(mb_error *err);

/*
 * Options structs grow (HACKING.md, "ABI: how a struct grows"): every struct of options a call
 * takes (mb_seal_options, mb_verify_options, mb_predict_input, ...) starts with `size_t size`,
 * which the caller sets to its sizeof:
 *
 *     mb_seal_options o = MB_OPTIONS_INIT(mb_seal_options);
 *
 * and every other field's default is zero. New fields are only ever added at the end; the
 * library reads the first size bytes and gives the fields past them their defaults, so a
 * program built against an older header keeps working. A size of 0 is -EINVAL; a struct bigger
 * than the library knows is -EOPNOTSUPP when a field past its own end is set (a newer header's
 * option this library would ignore). A NULL options pointer, where a call allows one, is every
 * default.
 */
#define MB_OPTIONS_INIT(type) { .size = sizeof(type) }

/*
 * Short words for a code: a negative errno (e.g. "malformed input") or one of mboot's codes
 * above (e.g. "the TPM refused: the PCRs are not a state the secret is sealed to"). Never NULL.
 */
MB_EXPORT const char *mb_strerror(int code);

/* Whether code is one of the TPM's (MB_ERR_TPM to -4099): the TPM failed or refused. */
MB_EXPORT bool mb_error_is_tpm(int code);

#ifdef __cplusplus
}
#endif
#endif
