/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_CEL_H
#define MBOOT_CEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <mboot/error.h>
#include <mboot/eventlog.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The userspace measurement log: what `mboot measure` (and systemd-pcrextend, whose
 * /run/log/systemd/tpm2-measure.log has the same layout) extended after boot.
 * A JSON text sequence (RFC 7464): every record is 0x1E, one JSON object, 0x0A.
 * Each object follows TCG CEL-JSON without "recnum":
 *   {"pcr": 11, "digests": [{"hashAlg": "sha256", "digest": "<hex>"}, ...],
 *    "content_type": "mboot", "content": {...}}
 * Records for an NV index ("nv_index" instead of "pcr") are counted and skipped.
 */

#define MB_CEL_DEFAULT_PATH "/run/log/mboot/measure.log"
#define MB_CEL_MAX_SIZE (64u << 20)
#define MB_CEL_MAX_RECORDS 1000000u
#define MB_CEL_MAX_RECORD (1u << 20)     /* one record's JSON text */

typedef struct mb_cel_record {
	uint64_t offset;     /* of its 0x1E in the input */
	uint32_t pcr;
	uint32_t n_digests;  /* digests of algorithms mboot knows; others are skipped */
	const mb_event_digest *digests; /* n_digests entries, kept by the log */
	/* What was measured, when the record says it as text: content.text ('mboot measure
	 * --text') or content.string (systemd); NULL otherwise or when it holds a NUL. Untrusted
	 * until it hashes to the record's digest. */
	const char *text;
	size_t text_len;
} mb_cel_record;

typedef struct mb_cel_log mb_cel_log;

/*
 * Parse. Fails with -EBADMSG (err->offset at the bad record) on anything that is not a
 * whole record, including a last record cut short (no final newline, or JSON that
 * ends early): a truncated log is reported, never silently shortened. -E2BIG over a
 * cap. An empty input is an empty log.
 */
MB_EXPORT int mb_cel_log_parse(const void *data, size_t size, mb_cel_log **ret, mb_error *err) MB_WUR;
MB_EXPORT void mb_cel_log_free(mb_cel_log *log);
MB_EXPORT size_t mb_cel_log_count(const mb_cel_log *log);
MB_EXPORT const mb_cel_record *mb_cel_log_record(const mb_cel_log *log, size_t i);
/* A record's digest for alg, or NULL (mb_event_digest_for's twin for records). */
MB_EXPORT const mb_event_digest *mb_cel_record_digest(const mb_cel_record *rec, uint16_t alg);
/* Records skipped because they extend an NV index rather than a PCR. */
MB_EXPORT size_t mb_cel_log_skipped(const mb_cel_log *log);

/*
 * One record as bytes (0x1E, JSON on one line, 0x0A), for appending: digests in the
 * order given; content_type e.g. "mboot"; content_json the JSON text of the content (one
 * value, e.g. {"text": "..."}; written again on one line) or NULL for none.
 * Caller frees *ret. -EINVAL for a bad PCR, digest or content text, -ENOMEM.
 */
MB_EXPORT int mb_cel_format_record(uint32_t pcr, const mb_event_digest *digests, size_t n_digests,
				   const char *content_type, const char *content_json, char **ret,
				   size_t *ret_size) MB_WUR;

#ifdef __cplusplus
}
#endif
#endif
