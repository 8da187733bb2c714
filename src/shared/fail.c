/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <mboot/tpm.h>
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
	default: return strerror(code < 0 ? -code : code);
	}
}
