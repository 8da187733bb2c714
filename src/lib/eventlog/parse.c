/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Decoding of TCG PC Client event logs (TCG PC Client Platform Firmware Profile
 * 1.05, §10.2 TCG_PCR_EVENT, §10.2.2 TCG_PCR_EVENT2, §10.4.5.1 TCG_EfiSpecIDEvent).
 * Decoding only: replay, payload checks and printing are separate consumers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/digest.h>
#include "eventlog-internal.h"
#include "shared/fail.h"
#include "shared/reader.h"

#define SHA1_SIZE 20

/*
 * Room for n more digests in log->digests. The array may move: the digests of the events kept
 * so far are pointed into it again (they are in event order, one run an event).
 */
static int reserve_digests(mb_event_log *log, size_t n, mb_error *err)
{
	mb_event_digest *nd;
	size_t ncap, i, at = 0;

	if (log->cap_digests - log->n_digests >= n)
		return 0;
	ncap = log->cap_digests ? log->cap_digests * 2 : 512;
	while (ncap - log->n_digests < n)
		ncap *= 2;
	nd = realloc(log->digests, ncap * sizeof(*nd));
	if (!nd)
		return set_error(err, -ENOMEM, "out of memory");
	if (nd != log->digests)
		for (i = 0; i < log->n_events; i++) {
			log->events[i].digests = nd + at;
			at += log->events[i].n_digests;
		}
	log->digests = nd;
	log->cap_digests = ncap;
	return 0;
}

/*
 * The next event's slot and room for its digests (at most max_digests, written through
 * *ret_digests): in the log's arrays, or the caller's scratch event when the log is only
 * visited (mb_event_log_visit). The count cap holds either way.
 */
static int next_event(mb_event_log *log, mb_event *scratch, mb_event_digest *scratch_digests,
		      size_t max_digests, mb_event **ret, mb_event_digest **ret_digests, mb_error *err,
		      uint64_t offset)
{
	if (log->n_events >= MB_LOG_MAX_EVENTS)
		return set_error_at(err, -E2BIG, offset, "more than %u events", MB_LOG_MAX_EVENTS);
	if (scratch) {
		*ret = scratch;
		*ret_digests = scratch_digests;
	} else {
		int rc;

		if (log->n_events == log->cap_events) {
			size_t ncap = log->cap_events ? log->cap_events * 2 : 256;
			mb_event *n = realloc(log->events, ncap * sizeof(*n));

			if (!n)
				return set_error(err, -ENOMEM, "out of memory");
			log->events = n;
			log->cap_events = ncap;
		}
		rc = reserve_digests(log, max_digests, err);
		if (rc < 0)
			return rc;
		*ret = &log->events[log->n_events];
		*ret_digests = log->digests + log->n_digests;
	}
	memset(*ret, 0, sizeof(**ret));
	(*ret)->number = (uint32_t) log->n_events;
	(*ret)->offset = offset;
	(*ret)->digests = *ret_digests;
	return 0;
}

static int read_event_data(byte_reader *r, mb_event *ev, mb_error *err)
{
	uint64_t at = reader_offset(r);

	if (read_u32le(r, &ev->data_size) < 0)
		return set_error_at(err, -EBADMSG, at, "event %u: truncated before its data size", ev->number);
	if (ev->data_size > MB_EVENT_MAX_DATA)
		return set_error_at(err, -E2BIG, at, "event %u: data size %u is over the %u-byte limit",
				  ev->number, ev->data_size, MB_EVENT_MAX_DATA);
	if (read_bytes(r, ev->data_size, &ev->data) < 0)
		return set_error_at(err, -EBADMSG, at, "event %u: data size %u runs past the end of the log (%zu bytes left)",
				  ev->number, ev->data_size, reader_left(r));
	return 0;
}

/* A record's digests are read: its data ends it. The event is then whole: count it, and its
 * digests when the log keeps them. */
static int finish_record(mb_event_log *log, byte_reader *r, mb_event *scratch, mb_event *ev, uint64_t start,
			 mb_event **ret, mb_error *err)
{
	int rc = read_event_data(r, ev, err);

	if (rc < 0)
		return rc;
	ev->record_size = (uint32_t) (reader_offset(r) - start);
	if (!scratch)
		log->n_digests += ev->n_digests;
	log->n_events++;
	*ret = ev;
	return 0;
}

/* TCG_PCR_EVENT: the TPM 1.2 record, also the header of a crypto-agile log. */
static int parse_sha1_record(mb_event_log *log, byte_reader *r, mb_event *scratch,
			     mb_event_digest *scratch_digests, mb_event **ret, mb_error *err)
{
	uint64_t start = reader_offset(r);
	mb_event *ev = NULL;
	mb_event_digest *d = NULL;
	int rc = next_event(log, scratch, scratch_digests, 1, &ev, &d, err, start);

	if (rc < 0)
		return rc;
	ev->sha1_format = true;
	if (read_u32le(r, &ev->pcr) < 0 || read_u32le(r, &ev->type) < 0)
		return set_error_at(err, -EBADMSG, start, "event %u: truncated record header", ev->number);
	ev->n_digests = 1;
	d[0].alg = MB_ALG_SHA1;
	d[0].size = SHA1_SIZE;
	if (read_bytes(r, SHA1_SIZE, &d[0].bytes) < 0)
		return set_error_at(err, -EBADMSG, start, "event %u: truncated SHA-1 digest", ev->number);
	return finish_record(log, r, scratch, ev, start, ret, err);
}

static int find_bank(const mb_event_log *log, uint16_t alg)
{
	size_t i;

	for (i = 0; i < log->n_banks; i++)
		if (log->banks[i].alg == alg)
			return (int) i;
	return -1;
}

/* TCG_PCR_EVENT2 (PFP §10.2.2); digest sizes come from the Spec ID table only. */
static int parse_agile_record(mb_event_log *log, byte_reader *r, mb_event *scratch,
			      mb_event_digest *scratch_digests, mb_event **ret, mb_error *err)
{
	uint64_t start = reader_offset(r);
	uint32_t count, i;
	mb_event *ev = NULL;
	mb_event_digest *d = NULL;
	int rc = next_event(log, scratch, scratch_digests, log->n_banks, &ev, &d, err, start);

	if (rc < 0)
		return rc;
	if (read_u32le(r, &ev->pcr) < 0 || read_u32le(r, &ev->type) < 0 ||
	    read_u32le(r, &count) < 0)
		return set_error_at(err, -EBADMSG, start, "event %u: truncated record header", ev->number);
	/* Fewer digests than banks occurs in real test logs (tpm2-tools fixtures); replay then
	 * marks the missing banks' PCRs incomplete. More, or none, cannot be right. */
	if (count == 0 || count > log->n_banks)
		return set_error_at(err, -EBADMSG, start + 8,
				  "event %u: %u digests, but the Spec ID event declares %zu banks",
				  ev->number, count, log->n_banks);
	ev->n_digests = count;
	for (i = 0; i < count; i++) {
		uint64_t at = reader_offset(r);
		uint16_t alg;
		int bank;
		uint32_t j;

		if (read_u16le(r, &alg) < 0)
			return set_error_at(err, -EBADMSG, at, "event %u: truncated digest list", ev->number);
		bank = find_bank(log, alg);
		if (bank < 0)
			return set_error_at(err, -EBADMSG, at,
					  "event %u: digest algorithm 0x%04x is not declared in the Spec ID event",
					  ev->number, alg);
		for (j = 0; j < i; j++)
			if (d[j].alg == alg)
				return set_error_at(err, -EBADMSG, at, "event %u: two digests for algorithm 0x%04x",
						  ev->number, alg);
		d[i].alg = alg;
		d[i].size = log->banks[bank].size;
		if (read_bytes(r, d[i].size, &d[i].bytes) < 0)
			return set_error_at(err, -EBADMSG, at, "event %u: truncated digest (algorithm 0x%04x)",
					  ev->number, alg);
	}
	return finish_record(log, r, scratch, ev, start, ret, err);
}

/* TCG_EfiSpecIDEventStruct (PFP §10.4.5.1), from the header record's data. */
static int parse_spec_id(mb_event_log *log, const mb_event *hdr, mb_error *err)
{
	mb_spec_id *s = &log->spec_id;
	uint64_t base = hdr->offset + 32; /* pcr, type, sha1[20], size */
	byte_reader r;
	size_t i, j;

	reader_init(&r, hdr->data, hdr->data_size, base);
	memset(s, 0, sizeof(*s));
	if (read_copy(&r, s->signature, 16) < 0 ||
	    read_u32le(&r, &s->platform_class) < 0 ||
	    read_u8(&r, &s->version_minor) < 0 ||
	    read_u8(&r, &s->version_major) < 0 ||
	    read_u8(&r, &s->errata) < 0 ||
	    read_u8(&r, &s->uintn_size) < 0 ||
	    read_u32le(&r, &s->n_algs) < 0)
		return set_error_at(err, -EBADMSG, reader_offset(&r), "Spec ID event: truncated header");
	s->signature[15] = 0;
	if (s->n_algs == 0)
		return set_error_at(err, -EBADMSG, base + 24, "Spec ID event: declares no digest algorithms");
	if (s->n_algs > MB_MAX_BANKS)
		return set_error_at(err, -E2BIG, base + 24, "Spec ID event: %u digest algorithms (at most %d supported)",
				  s->n_algs, MB_MAX_BANKS);
	/* The table goes straight into the log's banks, which the Spec ID's algs then point at. */
	for (i = 0; i < s->n_algs; i++) {
		uint64_t at = reader_offset(&r);
		mb_spec_id_alg *a = &log->banks[i];
		const mb_digest_info *info;

		if (read_u16le(&r, &a->alg) < 0 || read_u16le(&r, &a->size) < 0)
			return set_error_at(err, -EBADMSG, at, "Spec ID event: truncated algorithm table");
		info = mb_digest_by_alg(a->alg);
		if (info && info->size != a->size)
			return set_error_at(err, -EBADMSG, at, "Spec ID event: %s declared with digest size %u (it is %u)",
					  info->name, a->size, info->size);
		if (!info && (a->size == 0 || a->size > MB_UNKNOWN_DIGEST_MAX))
			return set_error_at(err, -EBADMSG, at, "Spec ID event: algorithm 0x%04x with digest size %u",
					  a->alg, a->size);
		for (j = 0; j < i; j++)
			if (log->banks[j].alg == a->alg)
				return set_error_at(err, -EBADMSG, at, "Spec ID event: algorithm 0x%04x declared twice",
						  a->alg);
	}
	{
		uint64_t at = reader_offset(&r);
		if (read_u8(&r, &s->vendor_info_size) < 0 ||
		    read_bytes(&r, s->vendor_info_size, &s->vendor_info) < 0)
			return set_error_at(err, -EBADMSG, at, "Spec ID event: vendor info runs past the event data");
	}
	/* Bytes after vendorInfo are tolerated: some firmware pads the event. */
	s->algs = log->banks;
	log->n_banks = s->n_algs;
	log->has_spec_id = true;
	return 0;
}

static bool is_spec_id03(const mb_event *ev)
{
	static const char sig[16] = MB_SPEC_ID_SIGNATURE_03;

	return ev->type == MB_EV_NO_ACTION && ev->data_size >= 16 && memcmp(ev->data, sig, 16) == 0;
}

MB_EXPORT int mb_event_log_parse(const void *data, size_t size, mb_event_log **ret, mb_error *err)
{
	uint8_t *copy;

	if (size == 0)
		return set_error_at(err, -EBADMSG, 0, "empty event log");
	if (size > MB_LOG_MAX_SIZE)
		return set_error(err, -E2BIG, "event log of %zu bytes is over the %u-byte limit", size, MB_LOG_MAX_SIZE);
	copy = malloc(size);
	if (!copy)
		return set_error(err, -ENOMEM, "out of memory");
	memcpy(copy, data, size);
	return mb_event_log_parse_take(copy, size, ret, err);
}

/*
 * The kernel's IMA runtime log is the file most often taken for the firmware log; it is
 * recognised (only after a parse error) to say so. Its records (kernel
 * Documentation/security/IMA-templates.rst, security/integrity/ima/ima_fs.c): binary, u32 PCR,
 * 20-byte template digest, u32 template name length, the name ("ima", "ima-ng", "ima-sig",
 * "evm-sig"...); ASCII, "PCR HEX-TEMPLATE-DIGEST NAME ..." per line.
 */
static bool is_ima_template_name(const uint8_t *name, size_t n)
{
	return n >= 3 && (memcmp(name, "ima", 3) == 0 || memcmp(name, "evm", 3) == 0);
}

static const char *ima_log_kind(const uint8_t *data, size_t size)
{
	const uint8_t *name, *line;
	uint32_t pcr, name_len;
	size_t n = size < 200 ? size : 200, i = 0, n_digits = 0, n_hex = 0;
	byte_reader r;

	reader_init(&r, data, size, 0);
	if (read_u32le(&r, &pcr) == 0 && pcr < MB_PCR_COUNT && read_skip(&r, SHA1_SIZE) == 0 &&
	    read_u32le(&r, &name_len) == 0 && read_bytes(&r, name_len, &name) == 0 &&
	    is_ima_template_name(name, name_len))
		return "binary_runtime_measurements";

	/* ASCII: the first line up to the template name fits in 200 bytes (a 128-digit hash). */
	reader_init(&r, data, size, 0);
	if (read_bytes(&r, n, &line) < 0)
		return NULL;
	for (; i < n && line[i] >= '0' && line[i] <= '9'; i++)
		n_digits++;
	if (n_digits == 0 || n_digits > 2 || i >= n || line[i++] != ' ')
		return NULL;
	for (; i < n && ((line[i] >= '0' && line[i] <= '9') || (line[i] >= 'a' && line[i] <= 'f')); i++)
		n_hex++;
	if (n_hex < 2 * SHA1_SIZE || i >= n || line[i++] != ' ')
		return NULL;
	return is_ima_template_name(line + i, n - i) ? "ascii_runtime_measurements" : NULL;
}

/*
 * Read every record of log->bytes, appending the events to log->events (keep), or giving each
 * to sink in a scratch slot and keeping nothing (mb_event_log_visit). Every record is checked
 * the same way either way, so both see the same errors at the same offsets.
 */
static int scan_records(mb_event_log *log, mb_event_visit_fn sink, void *ctx, bool keep, mb_error *err)
{
	mb_event scratch, *ev;
	mb_event_digest scratch_digests[MB_MAX_BANKS];
	mb_event *slot = keep ? NULL : &scratch;
	byte_reader r;
	int rc;

	reader_init(&r, log->bytes, log->size, 0);

	/* The first record is always TCG_PCR_EVENT; its data says which format follows. */
	rc = parse_sha1_record(log, &r, slot, scratch_digests, &ev, err);
	if (rc < 0)
		return rc;
	if (is_spec_id03(ev)) {
		rc = parse_spec_id(log, ev, err);
		if (rc < 0)
			return rc;
		log->format = MB_LOG_FORMAT_CRYPTO_AGILE;
	} else {
		log->format = MB_LOG_FORMAT_SHA1;
		log->banks[0].alg = MB_ALG_SHA1;
		log->banks[0].size = SHA1_SIZE;
		log->n_banks = 1;
	}
	if (sink) {
		rc = sink(ctx, log, ev, err);
		if (rc < 0)
			return rc;
	}

	while (reader_left(&r) > 0) {
		/* Padding after the last record: CC event logs fill the table with 0xFF. */
		if (reader_rest_is(&r, 0x00) || reader_rest_is(&r, 0xFF)) {
			log->trailer = reader_cur(&r)[0] ? MB_TRAILER_FF_PADDING : MB_TRAILER_ZERO_PADDING;
			log->trailer_offset = reader_offset(&r);
			log->trailer_size = reader_left(&r);
			break;
		}
		if (log->format == MB_LOG_FORMAT_SHA1)
			rc = parse_sha1_record(log, &r, slot, scratch_digests, &ev, err);
		else
			rc = parse_agile_record(log, &r, slot, scratch_digests, &ev, err);
		if (rc < 0)
			return rc;
		if (sink) {
			rc = sink(ctx, log, ev, err);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

/* scan_records(), and on a malformed log that is an IMA log, an error that says so. */
static int scan(mb_event_log *log, mb_event_visit_fn sink, void *ctx, bool keep, mb_error *err)
{
	const char *ima;
	int rc;

	rc = scan_records(log, sink, ctx, keep, err);
	if (rc < 0 && rc != -ENOMEM && (ima = ima_log_kind(log->bytes, log->size)))
		return set_error(err, -EOPNOTSUPP,
			       "this is an IMA runtime measurement log (the kernel's %s), "
			       "not a firmware event log (binary_bios_measurements)", ima);
	return rc;
}

MB_EXPORT int mb_event_log_parse_take(uint8_t *data, size_t size, mb_event_log **ret, mb_error *err)
{
	mb_event_log *log;
	int rc;

	if (size == 0) {
		free(data);
		return set_error_at(err, -EBADMSG, 0, "empty event log");
	}
	if (size > MB_LOG_MAX_SIZE) {
		free(data);
		return set_error(err, -E2BIG, "event log of %zu bytes is over the %u-byte limit", size, MB_LOG_MAX_SIZE);
	}
	log = calloc(1, sizeof(*log));
	if (!log) {
		free(data);
		return set_error(err, -ENOMEM, "out of memory");
	}
	log->bytes = data;
	log->size = size;
	/* Real records are rarely under 64 bytes: one allocation for most logs. */
	log->cap_events = size / 64 + 16;
	log->events = malloc(log->cap_events * sizeof(*log->events));
	log->cap_digests = 2 * log->cap_events; /* two banks: most logs' sha1 + sha256 */
	log->digests = malloc(log->cap_digests * sizeof(*log->digests));
	if (!log->events || !log->digests) {
		rc = set_error(err, -ENOMEM, "out of memory");
		goto fail;
	}
	rc = scan(log, NULL, NULL, true, err);
	if (rc < 0)
		goto fail;
	*ret = log;
	return 0;
fail:
	mb_event_log_free(log);
	return rc;
}

MB_EXPORT int mb_event_log_visit(const void *data, size_t size, mb_event_visit_fn fn, void *ctx, mb_error *err)
{
	mb_event_log log = { 0 };

	if (size == 0)
		return set_error_at(err, -EBADMSG, 0, "empty event log");
	if (size > MB_LOG_MAX_SIZE)
		return set_error(err, -E2BIG, "event log of %zu bytes is over the %u-byte limit", size, MB_LOG_MAX_SIZE);
	/* Only read: scan() never writes through log.bytes. */
	log.bytes = (uint8_t *) data;
	log.size = size;
	return scan(&log, fn, ctx, false, err);
}

MB_EXPORT void mb_event_log_free(mb_event_log *log)
{
	if (!log)
		return;
	free(log->bytes);
	free(log->events);
	free(log->digests);
	free(log->digest_checks);
	free(log);
}

MB_EXPORT mb_log_format mb_event_log_format(const mb_event_log *log)
{
	return log->format;
}

MB_EXPORT const mb_spec_id *mb_event_log_spec_id(const mb_event_log *log)
{
	return log->has_spec_id ? &log->spec_id : NULL;
}

MB_EXPORT size_t mb_event_log_count(const mb_event_log *log)
{
	return log->n_events;
}

MB_EXPORT const mb_event *mb_event_log_event(const mb_event_log *log, size_t i)
{
	/* A visited log (mb_event_log_visit) keeps no events. */
	return i < log->n_events && log->events ? &log->events[i] : NULL;
}

MB_EXPORT size_t mb_event_log_banks(const mb_event_log *log, const mb_spec_id_alg **ret)
{
	*ret = log->banks;
	return log->n_banks;
}

MB_EXPORT mb_trailer_kind mb_event_log_trailer(const mb_event_log *log, uint64_t *ret_offset, uint64_t *ret_size)
{
	if (ret_offset)
		*ret_offset = log->trailer_offset;
	if (ret_size)
		*ret_size = log->trailer_size;
	return log->trailer;
}

MB_EXPORT const uint8_t *mb_event_log_bytes(const mb_event_log *log, size_t *ret_size)
{
	*ret_size = log->size;
	return log->bytes;
}

MB_EXPORT bool mb_event_extends(const mb_event *ev)
{
	return ev->type != MB_EV_NO_ACTION && ev->pcr < MB_PCR_COUNT;
}

MB_EXPORT const mb_event_digest *mb_event_digest_for(const mb_event *ev, uint16_t alg)
{
	uint32_t i;

	for (i = 0; i < ev->n_digests; i++)
		if (ev->digests[i].alg == alg)
			return &ev->digests[i];
	return NULL;
}
