/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_REPLAY_H
#define MBOOT_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <mboot/digest.h>
#include <mboot/eventlog.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * One bank of PCR values, as the sealing API (mboot/seal.h) takes it: a copy made by
 * mb_pcr_values_get_bank. present has bit n set for every PCR n that has a value.
 */
typedef struct mb_pcr_bank {
	uint16_t alg;
	uint16_t size;
	uint32_t present;
	uint8_t value[MB_PCR_COUNT][MB_DIGEST_MAX];
} mb_pcr_bank;

/*
 * PCR values, by bank. Opaque, so that the number of banks is not part of the ABI:
 * made by mb_pcr_values_new, filled by mb_pcr_values_parse, mb_replay_log or mb_tpm_read_pcrs
 * (each replaces what the set held) or value by value with mb_pcr_values_set, read with the
 * accessors below.
 */
typedef struct mb_pcr_values mb_pcr_values;

/* A new empty set (no banks); NULL when out of memory. */
MB_EXPORT mb_pcr_values *mb_pcr_values_new(void);
MB_EXPORT void mb_pcr_values_free(mb_pcr_values *v);
MB_EXPORT size_t mb_pcr_values_n_banks(const mb_pcr_values *v);
/* The algorithm of bank i (i < mb_pcr_values_n_banks), in the order the banks were added. */
MB_EXPORT uint16_t mb_pcr_values_bank_alg(const mb_pcr_values *v, size_t i);
/* Bit n set for every PCR n that has a value in the bank of alg; 0 when there is no such bank. */
MB_EXPORT uint32_t mb_pcr_values_present(const mb_pcr_values *v, uint16_t alg);
/* PCR pcr's value in the bank of alg (the algorithm's digest size), or NULL when it has none. */
MB_EXPORT const uint8_t *mb_pcr_values_get(const mb_pcr_values *v, uint16_t alg, uint32_t pcr);
/*
 * Set PCR pcr of the bank of alg, adding the bank when it is new. -EOPNOTSUPP for an
 * algorithm mboot does not know, -EINVAL for a size other than its digest size or a PCR
 * over 23, -EEXIST when the PCR already has a value, -E2BIG when there is no room for a bank.
 */
MB_EXPORT int mb_pcr_values_set(mb_pcr_values *v, uint16_t alg, uint32_t pcr, const uint8_t *digest,
				size_t size, mb_error *err) MB_WUR;

/* Remove the bank of alg; the other banks keep their order. -ENOENT when v has no such bank. */
MB_EXPORT int mb_pcr_values_remove_bank(mb_pcr_values *v, uint16_t alg) MB_WUR;
/*
 * A copy of the bank of alg, for the sealing API (mboot/seal.h); -ENOENT when v has no such
 * bank (ret is then zeroed).
 */
MB_EXPORT int mb_pcr_values_get_bank(const mb_pcr_values *v, uint16_t alg, mb_pcr_bank *ret) MB_WUR;

/*
 * Read PCR values from text: the PCR-values JSON of README.md (the "PCR-values shape")
 * ({"banks": {"sha256": {"0": "<hex>", ...}}}), or tpm2_pcrread's YAML
 * ("sha256:\n  0 : 0x..."). Unknown top-level keys are ignored.
 */
MB_EXPORT int mb_pcr_values_parse(const char *text, size_t size, mb_pcr_values *ret, mb_error *err) MB_WUR;
/*
 * Read the digests tpm2_pcrread -o writes (its default "values" format): no header, one digest
 * after the other, bank by bank in selection order and PCRs ascending within a bank. The
 * selection is what was given to tpm2_pcrread: bank i is algs[i] with the PCRs of bit mask
 * pcrs[i]. size must be exactly the selection's digests (-EBADMSG otherwise); a bank named
 * twice, a bank without PCRs or an unknown algorithm is -EINVAL / -EOPNOTSUPP.
 */
MB_EXPORT int mb_pcr_values_parse_digests(const void *data, size_t size, const uint16_t *algs, const uint32_t *pcrs,
					  size_t n_banks, mb_pcr_values *ret, mb_error *err) MB_WUR;
/* The JSON form; caller frees. */
MB_EXPORT char *mb_pcr_values_to_json(const mb_pcr_values *v, bool pretty);
/*
 * The text form: tpm2_pcrread's layout byte for byte ("  sha256:\n    0 : 0xABC...\n"), which
 * mb_pcr_values_parse reads back. A bank without values is left out (no bare heading); no
 * values at all is "". Caller frees; NULL when out of memory.
 */
MB_EXPORT char *mb_pcr_values_to_text(const mb_pcr_values *v);

typedef struct mb_replay_info {
	bool startup_locality_seen;
	uint8_t startup_locality;      /* from the StartupLocality EV_NO_ACTION event */
	bool hcrtm;                    /* an EV_EFI_HCRTM_EVENT set PCR 0's start to 0...04 */
	uint32_t events_extended;
	uint32_t events_no_action;     /* EV_NO_ACTION: never extended */
	uint32_t events_out_of_range;  /* PCR index >= 24: shown, never extended */
	/*
	 * The two lists below are kept by ret, the mb_pcr_values replayed into: valid while it lives
	 * and until it is filled again (mb_pcr_values_remove_bank keeps incomplete in step).
	 * incomplete[b], b < mb_pcr_values_n_banks(ret), bit n: some event extended PCR n without a
	 * digest for bank b of ret (mb_pcr_values_bank_alg(ret, b)): that bank's value for PCR n
	 * is not what the TPM holds.
	 */
	const uint32_t *incomplete;
	size_t n_unknown_algs;         /* banks carried but not replayed */
	const uint16_t *unknown_algs;  /* n_unknown_algs entries */
} mb_replay_info;

/*
 * `mboot log replay --json`'s document: mb_pcr_values_to_json's shape and "info", what the replay
 * noticed (docs/eventlog.md: incomplete banks, startup locality, H-CRTM, event counts, banks not
 * replayed); info NULL: the values alone. Caller frees; NULL when out of memory.
 */
MB_EXPORT char *mb_replay_to_json(const mb_pcr_values *v, const mb_replay_info *info, bool pretty);

/* The value a PCR holds after reset, before any extend (PFP §3.3.4, DRTM PCRs 17-22 are all 0xFF). */
MB_EXPORT void mb_pcr_initial(uint16_t alg, uint32_t pcr, uint8_t locality, bool hcrtm, uint8_t *out);

/*
 * Replay every event up to (not including) event number `until` (SIZE_MAX for all)
 * into every bank mboot can compute. mb_pcr_values_present(ret, alg) marks the PCRs the log
 * extends. info may be NULL.
 */
MB_EXPORT int mb_replay_log(const mb_event_log *log, size_t until, mb_pcr_values *ret,
			    mb_replay_info *info, mb_error *err) MB_WUR;

/*
 * The same as mb_event_log_parse() then mb_replay_log(log, SIZE_MAX, ...), in one pass over a
 * log held in memory, without copying it or keeping its events: every record is checked the
 * same way and a malformed log fails with the same error. For replaying big logs fast.
 */
MB_EXPORT int mb_replay_log_data(const void *data, size_t size, mb_pcr_values *ret,
				 mb_replay_info *info, mb_error *err) MB_WUR;

/*
 * Where a writer that streams puts its text: each piece in order (not NUL-terminated). 0, or a
 * negative errno, which stops the writer and is what it returns.
 */
typedef int (*mb_text_sink)(void *ctx, const char *text, size_t len);

/* The summary's "mismatched_events" lists the numbers of the first this many. */
#define MB_LOG_JSON_MISMATCHES_LISTED 32u

/*
 * The event log data..size as `mboot log show --json` writes it (docs/json.md): {"format",
 * "spec_id" (a crypto-agile log's), "events": [each event as mb_event_to_json writes it, of the
 * PCRs of pcr_mask; a PCR index out of range only with UINT32_MAX], "summary": {"events",
 * "events_shown", "digest_mismatches", "mismatched_events", "banks" (the log replayed, the
 * shape of mb_pcr_values_to_json)}} and a newline, pretty or compact, handed to sink in pieces
 * (of about 256 KiB) as the log is read: a log of any size is never one tree or one text. The
 * log is checked whole first: a malformed one fails as mb_event_log_parse() would, before sink
 * gets anything. Later failures (out of memory, sink's own) leave what sink got incomplete.
 * Uses a second thread when it can start one. 0, or a negative errno.
 */
MB_EXPORT int mb_event_log_write_json(const uint8_t *data, size_t size, uint32_t pcr_mask, bool pretty,
				      mb_text_sink sink, void *ctx, mb_error *err) MB_WUR;

#ifdef __cplusplus
}
#endif
#endif
