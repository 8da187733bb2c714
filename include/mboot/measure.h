/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_MEASURE_H
#define MBOOT_MEASURE_H

#include <stddef.h>
#include <stdint.h>
#include <mboot/cel.h>
#include <mboot/error.h>
#include <mboot/eventlog.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A userspace measurement, as a boot stage makes one (`mboot measure`): extend a PCR in every
 * active bank of the TPM and append a CEL-JSON record to the userspace log, as one transaction.
 * The log is locked (flock, exclusive) before the TPM is opened and until the record is
 * written, so that concurrent measurements never interleave or get lost; its sticky bit marks
 * "extended, not yet logged" meanwhile (systemd-pcrextend's convention), so a writer that dies
 * in between leaves the log marked incomplete.
 */
typedef struct mb_measure_input {
	size_t size; /* MB_OPTIONS_INIT(mb_measure_input): its sizeof (mboot/error.h) */
	uint32_t pcr;
	/* the measured data's digest in every algorithm the TPM may have a bank of: a bank
	 * without one here is refused (never left unextended) */
	const mb_event_digest *digests;
	size_t n_digests;
	const char *content_type;   /* the record's content_type, e.g. "mboot" */
	const char *content_json;   /* its content, one JSON value as text, or NULL */
	const char *log_path;       /* the userspace log: a regular file, created (0600) with its folder */
	unsigned lock_timeout_ms;   /* how long another writer's lock is waited for; then -ETIMEDOUT */
} mb_measure_input;

/*
 * Measure: lock the log, open the TPM at tcti (as mb_tpm_open), extend, append. *ret_record
 * (may be NULL) gets the record written, JSON-seq framed; caller frees. Errors: the log's
 * (-ENOENT, -ELOOP for a symbolic link, -EINVAL for a FIFO or device, -ETIMEDOUT, ...: nothing
 * measured), MB_ERR_TPM (nothing logged), MB_ERR_MEASURE_BANK, and -EIO when the PCR was
 * extended but the record could not be written (the log then stays marked incomplete).
 */
MB_EXPORT int mb_measure(const char *tcti, const mb_measure_input *in, char **ret_record, size_t *ret_size,
			 mb_error *err) MB_WUR;

/*
 * The content `mboot measure` records (content_type "mboot", README.md), compact:
 * {"description" (when not NULL), then "file": file, else "text": text, else "stdin": true}.
 * Caller frees; NULL when out of memory.
 */
MB_EXPORT char *mb_measure_content_json(const char *description, const char *file, const char *text);

#ifdef __cplusplus
}
#endif
#endif
