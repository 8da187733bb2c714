/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_EVENTLOG_H
#define MBOOT_EVENTLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <mboot/error.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * TCG PC Client firmware event logs (TCG PC Client Platform Firmware Profile, §10):
 * the TPM 1.2 SHA-1 format (TCG_PCR_EVENT records) and the crypto-agile TPM 2.0 format
 * (a TCG_PCR_EVENT header carrying "Spec ID Event03", then TCG_PCR_EVENT2 records).
 *
 * The parser copies the input and every mb_event points into that copy, so events
 * live as long as the log. Nothing here trusts the input: sizes and counts are
 * checked against the input and against the caps below before they are used.
 *
 * The caps are input limits, not layouts: no public struct has an array sized by one, so a
 * later libmboot may raise them without breaking programs built against this one. The sizes
 * that do shape public structs are fixed by the specifications: MB_PCR_COUNT here, MB_DIGEST_MAX
 * (mboot/digest.h), MB_POLICY_DIGEST_SIZE and MB_TPM_NAME_SIZE (mboot/tpm-policy.h).
 */

#define MB_MAX_BANKS 8           /* numberOfAlgorithms cap; real firmware has <= 5 */
#define MB_PCR_COUNT 24          /* PCRs of a PC Client TPM (TCG PC Client Platform TPM Profile) */
#define MB_LOG_MAX_SIZE (256u << 20)     /* 256 MiB */
#define MB_LOG_MAX_EVENTS 4000000u
#define MB_EVENT_MAX_DATA (16u << 20)    /* one event's data: 16 MiB */
#define MB_UNKNOWN_DIGEST_MAX 256        /* digest size we carry for an algorithm we do not know */

/* Event types (TCG PFP §10.4.1). */
#define MB_EV_PREBOOT_CERT                 0x00000000u
#define MB_EV_POST_CODE                    0x00000001u
#define MB_EV_UNUSED                       0x00000002u
#define MB_EV_NO_ACTION                    0x00000003u
#define MB_EV_SEPARATOR                    0x00000004u
#define MB_EV_ACTION                       0x00000005u
#define MB_EV_EVENT_TAG                    0x00000006u
#define MB_EV_S_CRTM_CONTENTS              0x00000007u
#define MB_EV_S_CRTM_VERSION               0x00000008u
#define MB_EV_CPU_MICROCODE                0x00000009u
#define MB_EV_PLATFORM_CONFIG_FLAGS        0x0000000Au
#define MB_EV_TABLE_OF_DEVICES             0x0000000Bu
#define MB_EV_COMPACT_HASH                 0x0000000Cu
#define MB_EV_IPL                          0x0000000Du
#define MB_EV_IPL_PARTITION_DATA           0x0000000Eu
#define MB_EV_NONHOST_CODE                 0x0000000Fu
#define MB_EV_NONHOST_CONFIG               0x00000010u
#define MB_EV_NONHOST_INFO                 0x00000011u
#define MB_EV_OMIT_BOOT_DEVICE_EVENTS      0x00000012u
#define MB_EV_POST_CODE2                   0x00000013u
#define MB_EV_EFI_EVENT_BASE               0x80000000u
#define MB_EV_EFI_VARIABLE_DRIVER_CONFIG   0x80000001u
#define MB_EV_EFI_VARIABLE_BOOT            0x80000002u
#define MB_EV_EFI_BOOT_SERVICES_APPLICATION 0x80000003u
#define MB_EV_EFI_BOOT_SERVICES_DRIVER     0x80000004u
#define MB_EV_EFI_RUNTIME_SERVICES_DRIVER  0x80000005u
#define MB_EV_EFI_GPT_EVENT                0x80000006u
#define MB_EV_EFI_ACTION                   0x80000007u
#define MB_EV_EFI_PLATFORM_FIRMWARE_BLOB   0x80000008u
#define MB_EV_EFI_HANDOFF_TABLES           0x80000009u
#define MB_EV_EFI_PLATFORM_FIRMWARE_BLOB2  0x8000000Au
#define MB_EV_EFI_HANDOFF_TABLES2          0x8000000Bu
#define MB_EV_EFI_VARIABLE_BOOT2           0x8000000Cu
#define MB_EV_EFI_GPT_EVENT2               0x8000000Du
#define MB_EV_EFI_HCRTM_EVENT              0x80000010u
#define MB_EV_EFI_VARIABLE_AUTHORITY       0x800000E0u
#define MB_EV_EFI_SPDM_FIRMWARE_BLOB       0x800000E1u
#define MB_EV_EFI_SPDM_FIRMWARE_CONFIG     0x800000E2u
#define MB_EV_EFI_SPDM_DEVICE_POLICY       0x800000E3u
#define MB_EV_EFI_SPDM_DEVICE_AUTHORITY    0x800000E4u

typedef enum mb_log_format {
	MB_LOG_FORMAT_SHA1 = 1,         /* TPM 1.2: every record a TCG_PCR_EVENT */
	MB_LOG_FORMAT_CRYPTO_AGILE = 2, /* TPM 2.0: Spec ID Event03 header, then TCG_PCR_EVENT2 */
} mb_log_format;

typedef struct mb_spec_id_alg {
	uint16_t alg;
	uint16_t size;
} mb_spec_id_alg;

/* TCG_EfiSpecIDEventStruct (PFP §10.4.5.1), as the log declares it. */
typedef struct mb_spec_id {
	char signature[16];     /* NUL-terminated copy, e.g. "Spec ID Event03" */
	uint32_t platform_class;
	uint8_t version_minor;
	uint8_t version_major;
	uint8_t errata;
	uint8_t uintn_size;
	uint32_t n_algs;
	const mb_spec_id_alg *algs;  /* n_algs entries, kept by the log */
	uint8_t vendor_info_size;
	const uint8_t *vendor_info;
} mb_spec_id;

typedef struct mb_event_digest {
	uint16_t alg;
	uint16_t size;
	const uint8_t *bytes;
} mb_event_digest;

typedef struct mb_event {
	uint32_t number;     /* position in the log, from 0; a crypto-agile header is event 0 */
	uint64_t offset;     /* byte offset of the record in the input */
	uint32_t record_size;
	uint32_t pcr;        /* as logged: may be >= MB_PCR_COUNT (Windows logs use 0xFFFFFFFF) */
	uint32_t type;       /* as logged: untrusted, no digest covers it */
	bool sha1_format;    /* a TCG_PCR_EVENT record (TPM 1.2 log, or the crypto-agile header) */
	uint32_t n_digests;
	const mb_event_digest *digests; /* n_digests entries, kept by the log (one array for all its events) */
	uint32_t data_size;
	const uint8_t *data;
} mb_event;

typedef enum mb_trailer_kind {
	MB_TRAILER_NONE = 0,
	MB_TRAILER_ZERO_PADDING,  /* all 0x00 after the last record */
	MB_TRAILER_FF_PADDING,    /* all 0xFF after the last record (CC event logs) */
} mb_trailer_kind;

typedef struct mb_event_log mb_event_log;

/*
 * Parse a whole log held in memory. On success *ret owns a copy of the bytes.
 * On failure returns -EBADMSG (err->offset names where), -E2BIG (a cap was hit)
 * or -ENOMEM; an empty input is -EBADMSG ("empty event log").
 */
MB_EXPORT int mb_event_log_parse(const void *data, size_t size, mb_event_log **ret, mb_error *err) MB_WUR;
/* The same, taking ownership of data (a malloc'd buffer): no copy. data is freed on failure too. */
MB_EXPORT int mb_event_log_parse_take(uint8_t *data, size_t size, mb_event_log **ret, mb_error *err) MB_WUR;
MB_EXPORT void mb_event_log_free(mb_event_log *log);

/*
 * Called for every event of a visited log, in order. ev and its digests array are valid only
 * during the call, but the digest bytes and the data point into the visited bytes. log is a
 * view valid during the call: its format, Spec ID and banks are set from event 0 on; it keeps
 * no events (mb_event_log_event() returns NULL, mb_event_log_count() is the number read so
 * far) and its trailer is not known yet. A negative return stops the visit and is returned.
 */
typedef int (*mb_event_visit_fn)(void *ctx, const mb_event_log *log, const mb_event *ev, mb_error *err);

/*
 * Check every record of a log held in memory exactly as mb_event_log_parse() does (same
 * errors at the same offsets), without copying the bytes or keeping the events: each goes to
 * fn (which may be NULL: check only) as it is read. For one-pass consumers of big logs.
 */
MB_EXPORT int mb_event_log_visit(const void *data, size_t size, mb_event_visit_fn fn, void *ctx,
				 mb_error *err) MB_WUR;

MB_EXPORT mb_log_format mb_event_log_format(const mb_event_log *log);
/* The Spec ID header of a crypto-agile log; NULL for a SHA-1 log. */
MB_EXPORT const mb_spec_id *mb_event_log_spec_id(const mb_event_log *log);
MB_EXPORT size_t mb_event_log_count(const mb_event_log *log);
MB_EXPORT const mb_event *mb_event_log_event(const mb_event_log *log, size_t i);
/* Banks every event of this log carries: the Spec ID table, or sha1 alone. */
MB_EXPORT size_t mb_event_log_banks(const mb_event_log *log, const mb_spec_id_alg **ret);
MB_EXPORT mb_trailer_kind mb_event_log_trailer(const mb_event_log *log, uint64_t *ret_offset, uint64_t *ret_size);
MB_EXPORT const uint8_t *mb_event_log_bytes(const mb_event_log *log, size_t *ret_size);

/* The digest an event carries for alg, or NULL. */
MB_EXPORT const mb_event_digest *mb_event_digest_for(const mb_event *ev, uint16_t alg);
/* Does a replay extend this event into a PCR? Not EV_NO_ACTION, and a PCR 0-23 (Windows logs
 * use 0xFFFFFFFF for events no PCR holds). The one rule every replay, verify and policy uses. */
MB_EXPORT bool mb_event_extends(const mb_event *ev);

/* "EV_IPL"; NULL for a type the spec does not name. */
MB_EXPORT const char *mb_event_type_name(uint32_t type);
/* The type as mboot shows it: its name, or "0x%08x" written into buf for one the spec does not
 * name. Never NULL. */
#define MB_EVENT_TYPE_LABEL_SIZE 16
MB_EXPORT const char *mb_event_type_label(uint32_t type, char buf[MB_EVENT_TYPE_LABEL_SIZE]);
/* Inverse; 0 on success, -EINVAL for an unknown name. Accepts "0x..." too. */
MB_EXPORT int mb_event_type_from_name(const char *name, uint32_t *ret);

/*
 * Writer, for tests, benches and `mboot measure`. Records are appended in the
 * format the writer is in: SHA-1 until mb_log_writer_add_spec_id() makes it
 * crypto-agile (and writes the header record).
 */
typedef struct mb_log_writer mb_log_writer;
MB_EXPORT int mb_log_writer_new(mb_log_writer **ret) MB_WUR;
MB_EXPORT void mb_log_writer_free(mb_log_writer *w);
MB_EXPORT int mb_log_writer_add_spec_id(mb_log_writer *w, const mb_spec_id_alg *algs, size_t n_algs) MB_WUR;
/* A record with the digests given (one per bank of the log, in any order). */
MB_EXPORT int mb_log_writer_add(mb_log_writer *w, uint32_t pcr, uint32_t type,
				const mb_event_digest *digests, size_t n_digests,
				const void *data, size_t data_size) MB_WUR;
/* A record whose digests are H(hashed) in every bank of the log. */
MB_EXPORT int mb_log_writer_add_hashed(mb_log_writer *w, uint32_t pcr, uint32_t type,
				       const void *hashed, size_t hashed_size,
				       const void *data, size_t data_size) MB_WUR;
/* A record as parsed, in its own layout (for byte-exact re-serialisation). */
MB_EXPORT int mb_log_writer_add_event(mb_log_writer *w, const mb_event *ev) MB_WUR;
MB_EXPORT const uint8_t *mb_log_writer_data(const mb_log_writer *w, size_t *ret_size);

#ifdef __cplusplus
}
#endif
#endif
