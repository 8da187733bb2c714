/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_IMA_H
#define MBOOT_IMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <mboot/error.h>
#include <mboot/replay.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The kernel's IMA runtime measurement list (security/integrity/ima), docs/ima.md.
 *
 * Binary (binary_runtime_measurements, and the per-bank binary_runtime_measurements_sha256 ...):
 * entry after entry, little-endian (the kernel's native order on the machines mboot runs on; the
 * canonical format, ima_canonical_fmt, is little-endian too):
 *   u32 PCR, template hash (20 bytes in the SHA-1 file, the bank's size in a per-bank file),
 *   u32 name length, template name (at most 255 bytes), then
 *   legacy "ima": 20-byte SHA-1 file digest, u32 name length, file name (at most 255 bytes);
 *   every other template: u32 template-data length, template data = each field as u32 length
 *   and its bytes.
 * ASCII (ascii_runtime_measurements): one line an entry, "PCR template-hash template-name
 * field ...", e.g. ima-ng "10 <hex> ima-ng sha256:<hex> /usr/bin/sh". Which one a buffer is,
 * is told from its content: ASCII when its first byte is a decimal digit (a binary list starts
 * with its first PCR, u32 little-endian, never a digit's byte unless the PCR is 48 or more,
 * which is refused anyway).
 *
 * A binary list may end with a record too short to hold even its PCR, template hash and name
 * length (the tpm2-tss samples end so): the entries before it are kept and the tail is named
 * (mb_ima_log_tail); any other cut, a length past the end, is an error with its offset.
 */

#define MB_IMA_DEFAULT_PATH "/sys/kernel/security/ima/binary_runtime_measurements"
#define MB_IMA_MAX_SIZE (512u << 20)          /* the whole list */
#define MB_IMA_MAX_TEMPLATE_NAME 255u          /* the kernel's IMA_TEMPLATE_NAME_LEN_MAX is 15 */
#define MB_IMA_MAX_TEMPLATE_DATA (1u << 20)    /* one entry's template data (ima-buf's buffer) */
#define MB_IMA_MAX_FILE_NAME 255u              /* legacy "ima"'s name: IMA_EVENT_NAME_LEN_MAX */
#define MB_IMA_MAX_FIELDS 16u                  /* fields of one entry */
#define MB_IMA_MAX_PCR 23u

typedef enum mb_ima_template {
	MB_IMA_TEMPLATE_UNKNOWN = 0, /* kept as raw fields */
	MB_IMA_TEMPLATE_IMA,         /* legacy: d (SHA-1), n (name padded to 256 bytes in the hash) */
	MB_IMA_TEMPLATE_IMA_NG,      /* d-ng ("algo:" NUL digest), n-ng (name NUL) */
	MB_IMA_TEMPLATE_IMA_SIG,     /* d-ng, n-ng, sig */
	MB_IMA_TEMPLATE_IMA_MODSIG,  /* d-ng, n-ng, sig, d-modsig, modsig */
	MB_IMA_TEMPLATE_IMA_BUF,     /* d-ng, n-ng, buf */
} mb_ima_template;

/* One field as the template hash covers it (binary form; from an ASCII line, rebuilt). */
typedef struct mb_ima_field {
	const uint8_t *data;
	uint32_t size;
} mb_ima_field;

typedef enum mb_ima_check {
	MB_IMA_CHECK_OK = 0,    /* the template hash is the hash of the entry's fields */
	MB_IMA_CHECK_BAD,       /* it is not: the entry was altered */
	MB_IMA_CHECK_VIOLATION, /* all zero: a violation, extended as all 0xFF (PITFALLS 26) */
	MB_IMA_CHECK_UNCHECKED, /* an unknown template of an ASCII list: its fields cannot be rebuilt */
} mb_ima_check;

typedef struct mb_ima_entry {
	uint64_t offset; /* of the entry in the input (an ASCII line's first byte) */
	uint32_t pcr;
	uint16_t template_hash_alg;  /* the algorithm the template hash was checked with */
	uint16_t template_hash_size;
	uint8_t template_hash[MB_DIGEST_MAX];
	mb_ima_check check;
	mb_ima_template template_kind;
	const char *template_name;   /* NUL-terminated, no NUL inside */
	size_t n_fields;
	const mb_ima_field *fields;  /* the raw fields, for every template */
	/* Decoded (NULL / 0 when the template has no such field): */
	const char *digest_algo;     /* "sha256", "sha1" for legacy ima */
	const uint8_t *digest;       /* the file digest */
	size_t digest_size;
	const char *path;            /* the file name (n, n-ng); NUL-terminated, no NUL inside */
	const uint8_t *sig;          /* ima-sig, ima-modsig */
	size_t sig_size;
	const char *modsig_digest_algo; /* ima-modsig's d-modsig */
	const uint8_t *modsig_digest;
	size_t modsig_digest_size;
	const uint8_t *modsig;
	size_t modsig_size;
	const uint8_t *buf;          /* ima-buf */
	size_t buf_size;
} mb_ima_entry;

typedef struct mb_ima_log mb_ima_log;

/*
 * Parse a list (binary or ASCII, from its content). template_hash_alg: the algorithm of the
 * template hashes (MB_ALG_SHA1 for binary_runtime_measurements, the bank's for a per-bank file),
 * or 0: detected, in binary from the first entry (the first of 20, 32, 48, 64 bytes after which
 * a template name of 1-255 printable bytes follows), in ASCII from the hex's length; a size
 * of 20 is SHA-1, 32 SHA-256, 48 SHA-384, 64 SHA-512 (an SM3 list must be named). An empty list,
 * a PCR over 23, a name with a NUL, a length past the end or over a cap: -EBADMSG / -E2BIG with
 * the offset. A bad template hash is not an error: each entry's check says it.
 */
MB_EXPORT int mb_ima_log_parse(const void *data, size_t size, uint16_t template_hash_alg, mb_ima_log **ret,
			       mb_error *err) MB_WUR;
MB_EXPORT void mb_ima_log_free(mb_ima_log *log);
MB_EXPORT size_t mb_ima_log_count(const mb_ima_log *log);
MB_EXPORT const mb_ima_entry *mb_ima_log_entry(const mb_ima_log *log, size_t i);
/* Whether the list is the ASCII one. */
MB_EXPORT bool mb_ima_log_is_ascii(const mb_ima_log *log);
/* Entries whose check is MB_IMA_CHECK_BAD. */
MB_EXPORT size_t mb_ima_log_n_bad(const mb_ima_log *log);
/* A binary list's incomplete last record (offset and size), false when it has none. */
MB_EXPORT bool mb_ima_log_tail(const mb_ima_log *log, uint64_t *offset, size_t *size);
/*
 * Step over the first n entries of a binary list whose template hashes are SHA-1 (the kernel's
 * binary_runtime_measurements) without decoding them: *ret_offset is where entry n starts, and
 * ret_last_hash (may be NULL) gets entry n-1's template hash (zeros when n is 0). -ENOENT (said)
 * when the list has fewer than n entries, -EBADMSG with the offset for a list cut or malformed
 * before entry n.
 */
MB_EXPORT int mb_ima_log_skip(const void *data, size_t size, uint64_t n, size_t *ret_offset,
			      uint8_t ret_last_hash[20], mb_error *err) MB_WUR;
/* Entry i's template hash recomputed from its fields with alg (out holds alg's size): what a kernel
 * of 5.11 on extends into a bank of another algorithm than the template hash's (mb_ima_replay's
 * "recomputed"). -EOPNOTSUPP (said) for an ASCII list's unknown template, whose fields are not kept. */
MB_EXPORT int mb_ima_entry_template_hash(const mb_ima_log *log, size_t i, uint16_t alg, uint8_t *out,
					 mb_error *err) MB_WUR;
MB_EXPORT const char *mb_ima_template_label(mb_ima_template t);
MB_EXPORT const char *mb_ima_check_label(mb_ima_check c);

/*
 * Replay every PCR the entries name into each bank mboot computes (SHA-1, SHA-256, SHA-384,
 * SHA-512, SM3-256 when OpenSSL has it), both ways kernels extend a bank other than the
 * template hash's own:
 *   recomputed: newer kernels (5.11 on, per-bank template hashes): the template hash recomputed
 *               from the fields with the bank's algorithm;
 *   padded:     older kernels: the recorded template hash, zero-padded (or cut) to the bank's size.
 * The template hash's own bank is the recorded hashes in both. A violation extends all 0xFF.
 * Each set is replaced; either may be NULL.
 */
MB_EXPORT int mb_ima_replay(const mb_ima_log *log, mb_pcr_values *recomputed, mb_pcr_values *padded,
			    mb_error *err) MB_WUR;

/*
 * The boot_aggregate a kernel computes from the PCRs (ima_calc_boot_aggregate): the hash with alg
 * over PCRs 0-7 of alg's bank for SHA-1, 0-9 for every other algorithm (Linux 5.8 on; before it
 * 0-7, which pcrs_0_7 asks for). out holds alg's size. -ENOENT (said) when a PCR has no value.
 */
MB_EXPORT int mb_ima_boot_aggregate(const mb_pcr_values *v, uint16_t alg, bool pcrs_0_7, uint8_t *out,
				    mb_error *err) MB_WUR;

/* How a replayed PCR compares with a recorded value (mb_ima_pcr_compare). */
typedef enum mb_ima_match {
	MB_IMA_MATCH_ABSENT = 0, /* the recorded values have no such PCR */
	MB_IMA_MATCH_RECOMPUTED, /* equals the per-bank recomputed replay (newer kernels) */
	MB_IMA_MATCH_PADDED,     /* equals the zero-padded replay (older kernels) */
	MB_IMA_MATCH_NONE,       /* equals neither */
} mb_ima_match;
MB_EXPORT mb_ima_match mb_ima_pcr_compare(const mb_pcr_values *recomputed, const mb_pcr_values *padded,
					  const mb_pcr_values *actual, uint16_t alg, uint32_t pcr);
MB_EXPORT const char *mb_ima_match_label(mb_ima_match m);

/* The first entry's boot_aggregate against PCR values (mb_ima_boot_aggregate of the bank its
 * digest names: 0-9, then 0-7, for banks other than SHA-1). */
typedef enum mb_ima_aggregate {
	MB_IMA_AGGREGATE_NO_ENTRY = 0, /* the first entry is not a boot_aggregate with a known algorithm */
	MB_IMA_AGGREGATE_NO_PCRS,      /* the values lack a PCR it needs */
	MB_IMA_AGGREGATE_MATCH,        /* PCRs 0-9 (0-7 for SHA-1): Linux 5.8 on */
	MB_IMA_AGGREGATE_MATCH_0_7,    /* a bank other than SHA-1 over PCRs 0-7: before Linux 5.8 */
	MB_IMA_AGGREGATE_MISMATCH,
} mb_ima_aggregate;
MB_EXPORT mb_ima_aggregate mb_ima_boot_aggregate_check(const mb_ima_log *log, const mb_pcr_values *actual);
MB_EXPORT const char *mb_ima_aggregate_label(mb_ima_aggregate a);

/* `mboot ima show --json`'s document; caller frees, NULL when out of memory. */
MB_EXPORT char *mb_ima_log_to_json(const mb_ima_log *log, bool pretty);
/* `mboot ima replay --json`'s: each bank's PCRs, both replays, and with actual (NULL: none) the
 * recorded values, the match of each and the boot_aggregate's check. */
MB_EXPORT char *mb_ima_replay_to_json(const mb_ima_log *log, const mb_pcr_values *recomputed,
				      const mb_pcr_values *padded, const mb_pcr_values *actual, bool pretty);

#ifdef __cplusplus
}
#endif
#endif
