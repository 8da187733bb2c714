/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <mboot/error.h>
#include "shared/fail.h"

MB_EXPORT void mb_error_clear(mb_error *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
}

__attribute__((format(printf, 3, 0)))
static void fill(mb_error *err, int code, const char *fmt, va_list ap)
{
	err->code = code;
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
}

int set_error(mb_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	err->has_offset = false;
	err->offset = 0;
	va_start(ap, fmt);
	fill(err, code, fmt, ap);
	va_end(ap);
	return code;
}

int set_error_at(mb_error *err, int code, uint64_t offset, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	err->has_offset = true;
	err->offset = offset;
	va_start(ap, fmt);
	fill(err, code, fmt, ap);
	va_end(ap);
	return code;
}

int prefix_error(mb_error *err, int code, const char *what)
{
	char msg[sizeof(err->message)];

	if (!err)
		return code;
	snprintf(msg, sizeof(msg), "%s", err->message[0] ? err->message : mb_strerror(code));
	return set_error(err, code, "%s: %s", what, msg);
}

MB_EXPORT const char *mb_strerror(int code)
{
	switch (code) {
	case 0: return "success";
	case -EBADMSG: return "malformed input";
	case -E2BIG: return "input over a size limit";
	case -EOPNOTSUPP: return "not supported";
	case -ENOMEM: return "out of memory";
	case -EINVAL: return "invalid argument";
	case MB_ERR_TPM: return "TPM error";
	case MB_ERR_LOG_EXTEND_REFUSED: return "log extend refused";
	case MB_ERR_TPM_POLICY: return "the TPM refused: the PCRs are not a state the secret is sealed to";
	case MB_ERR_TPM_LOCKOUT: return "the TPM is in dictionary-attack lockout";
	case MB_ERR_TPM_SIGNATURE: return "the TPM refused the signature of a signed policy";
	case MB_ERR_TPM_AUTH: return "the TPM refused the authorisation (a wrong PIN)";
	case MB_ERR_MEASURE_BANK: return "no digest for an active bank of the TPM";
	case MB_ERR_ATTEST_REFUSED: return "attestation refused";
	case MB_ERR_POLICY_UNPREDICTABLE: return "a PCR cannot be predicted";
	default:
		if (mb_error_is_tpm(code))
			return "TPM error";
		return strerror(code < 0 ? -code : code);
	}
}

MB_EXPORT bool mb_error_is_tpm(int code)
{
	return code <= MB_ERR_TPM && code > MB_ERR_TPM - 100;
}
