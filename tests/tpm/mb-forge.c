/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Test helper: forge the logs of the fail-closed attacks (tests/tpm/tpm-fail-closed.sh), with the
 * library's parser and writer. A crypto-agile IN is rewritten with its own Spec ID header.
 *
 *   mb-forge IN OUT append PCR LABEL TEXT [COUNT]  append COUNT (1) EV_IPL events as GRUB writes
 *                                               them: data "LABEL: TEXT" + NUL, digests H(TEXT)
 *   mb-forge IN OUT append-bank BANK LABEL TEXT the same, once, in PCR 8, with a digest in BANK only
 *   mb-forge IN OUT drop-pcr PCR                drop every event of PCR
 *   mb-forge IN OUT append-event PCR TYPE DATA HASHED
 *                                               append one event of TYPE (a number): data the bytes
 *                                               of file DATA, digests H(bytes of file HASHED);
 *                                               HASHED "sha256=HEX": that digest in the sha256
 *                                               bank (another tool's, e.g. pesign's Authenticode
 *                                               digest), H(HEX) in the others
 *   mb-forge IN OUT move-tail PCR K USERLOG     move the last K events of PCR into a userspace
 *                                               log (CEL-JSON records with the same digests)
 *   mb-forge IN OUT splice-pcr PCR OTHER        PCR's events from the log OTHER (same banks) in
 *                                               place of IN's: a boot mixing two machines' PCRs
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/json.h"

#include <mboot/mboot.h>
#include "shared/fileio.h"

static int die(const char *msg)
{
	fprintf(stderr, "mb-forge: %s\n", msg);
	return 2;
}

static long number(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	return *s && !*end && v >= 0 ? v : -1;
}

/* Append a GRUB string, digested in every bank of the log or in `only` (non-zero). */
static int append_grub(mb_log_writer *w, const mb_spec_id_alg *banks, size_t n_banks, uint16_t only,
		       uint32_t pcr, const char *label, const char *text)
{
	uint8_t md[MB_MAX_BANKS][MB_DIGEST_MAX];
	mb_event_digest digests[MB_MAX_BANKS];
	mb_event ev = { .pcr = pcr, .type = MB_EV_IPL, .digests = digests };
	char *line = NULL;
	size_t i;
	int r;

	if (asprintf(&line, "%s: %s", label, text) < 0)
		return -1;
	for (i = 0; i < n_banks; i++) {
		if (only && banks[i].alg != only)
			continue;
		if (mb_digest(banks[i].alg, text, strlen(text), md[ev.n_digests]) < 0)
			return -1;
		digests[ev.n_digests] = (mb_event_digest) { banks[i].alg, banks[i].size, md[ev.n_digests] };
		ev.n_digests++;
	}
	ev.data = (const uint8_t *) line;
	ev.data_size = (uint32_t) strlen(line) + 1;
	r = mb_log_writer_add_event(w, &ev);
	free(line);
	return r;
}

/* One CEL record for ev: its digests, its text as content. */
/* 2 * size hex digits into out, or -1 */
static int hex_bytes(const char *hex, uint8_t *out)
{
	size_t i, n = strlen(hex) / 2;

	for (i = 0; i < n; i++) {
		unsigned int byte;

		if (!isxdigit((unsigned char) hex[2 * i]) || !isxdigit((unsigned char) hex[2 * i + 1]) ||
		    sscanf(hex + 2 * i, "%2x", &byte) != 1)
			return -1;
		out[i] = (uint8_t) byte;
	}
	return 0;
}

static int append_record(FILE *f, const mb_event *ev)
{
	json_t *content = json_object();
	char *text = mb_event_text(ev), *rec = NULL, *content_text;
	size_t size;
	int r;

	json_object_set_new(content, "text", json_string(text ? text : ""));
	content_text = json_dumps(content, JSON_COMPACT);
	r = content_text ? mb_cel_format_record(ev->pcr, ev->digests, ev->n_digests, "mboot", content_text, &rec, &size)
			 : -1;
	free(content_text);
	if (r == 0 && fwrite(rec, 1, size, f) != size)
		r = -1;
	free(rec);
	free(text);
	json_decref(content);
	return r;
}

int main(int argc, char **argv)
{
	const mb_spec_id_alg *banks = NULL;
	mb_event_log *log = NULL, *other = NULL;
	mb_log_writer *w = NULL;
	mb_error err = { 0 };
	uint8_t *buf = NULL;
	const uint8_t *data;
	size_t size, n, n_banks, i, first = 0, pcr_events = 0, seen = 0;
	const char *op;
	long pcr = -1, k = 0;
	FILE *us = NULL;

	if (argc < 4)
		return die("usage: mb-forge IN OUT OP [ARGS]");
	op = argv[3];
	if (file_read(argv[1], MB_LOG_MAX_SIZE, &buf, &size, &err) < 0 || mb_event_log_parse(buf, size, &log, &err) < 0) {
		fprintf(stderr, "mb-forge: %s: %s\n", argv[1], err.message);
		return 2;
	}
	free(buf);
	n = mb_event_log_count(log);
	n_banks = mb_event_log_banks(log, &banks);
	if (mb_event_log_format(log) != MB_LOG_FORMAT_CRYPTO_AGILE)
		return die("needs a crypto-agile log");
	if (mb_log_writer_new(&w) < 0 || mb_log_writer_add_spec_id(w, banks, n_banks) < 0)
		return die("writer");
	first = 1;

	if (strcmp(op, "drop-pcr") == 0 && argc == 5) {
		pcr = number(argv[4]);
	} else if (strcmp(op, "splice-pcr") == 0 && argc == 6) {
		pcr = number(argv[4]);
		if (file_read(argv[5], MB_LOG_MAX_SIZE, &buf, &size, &err) < 0 ||
		    mb_event_log_parse(buf, size, &other, &err) < 0) {
			fprintf(stderr, "mb-forge: %s: %s\n", argv[5], err.message);
			return 2;
		}
		free(buf);
	} else if (strcmp(op, "move-tail") == 0 && argc == 7) {
		pcr = number(argv[4]);
		k = number(argv[5]);
		us = fopen(argv[6], "wb");
		if (!us || k < 1)
			return die("move-tail PCR K USERLOG");
	} else if (!(strcmp(op, "append") == 0 && (argc == 7 || argc == 8)) &&
		   !(strcmp(op, "append-bank") == 0 && argc == 7) && !(strcmp(op, "append-event") == 0 && argc == 8)) {
		return die("unknown operation or wrong arguments");
	}
	if ((strcmp(op, "drop-pcr") == 0 || us || other) && (pcr < 0 || pcr >= MB_PCR_COUNT))
		return die("PCR out of range");
	for (i = first; i < n; i++)
		if ((long) mb_event_log_event(log, i)->pcr == pcr)
			pcr_events++;

	for (i = first; i < n; i++) {
		const mb_event *ev = mb_event_log_event(log, i);

		if ((long) ev->pcr == pcr) {
			seen++;
			if (strcmp(op, "drop-pcr") == 0 || other)
				continue;
			if (us && seen > pcr_events - (size_t) k) {
				if (append_record(us, ev) < 0)
					return die("writing the userspace log");
				continue;
			}
		}
		if (mb_log_writer_add_event(w, ev) < 0)
			return die("copying an event");
	}
	if (strcmp(op, "append") == 0) {
		long count = argc == 8 ? number(argv[7]) : 1, c;

		pcr = number(argv[4]);
		if (count < 1 || pcr < 0 || pcr >= MB_PCR_COUNT)
			return die("append PCR LABEL TEXT [COUNT]");
		for (c = 0; c < count; c++)
			if (append_grub(w, banks, n_banks, 0, (uint32_t) pcr, argv[5], argv[6]) < 0)
				return die("appending");
	} else if (strcmp(op, "append-bank") == 0) {
		const mb_digest_info *d = mb_digest_by_name(argv[4]);

		if (!d || append_grub(w, banks, n_banks, d->alg, 8, argv[5], argv[6]) < 0)
			return die("append-bank BANK LABEL TEXT");
	} else if (strcmp(op, "append-event") == 0) {
		uint8_t md[MB_MAX_BANKS][MB_DIGEST_MAX], *bytes = NULL, *hashed = NULL;
		mb_event_digest digests[MB_MAX_BANKS];
		size_t bytes_size = 0, hashed_size = 0;
		char *end;
		unsigned long type = strtoul(argv[5], &end, 0);
		mb_event ev = { .digests = digests };
		const char *given = strncmp(argv[7], "sha256=", 7) == 0 ? argv[7] + 7 : NULL;
		uint8_t sha256[32];

		pcr = number(argv[4]);
		if (pcr < 0 || pcr >= MB_PCR_COUNT || *end || !*argv[5] ||
		    file_read(argv[6], MB_LOG_MAX_SIZE, &bytes, &bytes_size, &err) < 0 ||
		    (!given && file_read(argv[7], 1u << 30, &hashed, &hashed_size, &err) < 0))
			return die("append-event PCR TYPE DATA HASHED");
		if (given && (strlen(given) != 64 || hex_bytes(given, sha256) < 0))
			return die("append-event: sha256=HEX needs 64 hex digits");
		ev.pcr = (uint32_t) pcr;
		ev.type = (uint32_t) type;
		for (i = 0; i < n_banks; i++) {
			if (given && banks[i].alg == MB_ALG_SHA256)
				memcpy(md[i], sha256, sizeof(sha256));
			else if (mb_digest(banks[i].alg, given ? (const void *) given : hashed,
					   given ? strlen(given) : hashed_size, md[i]) < 0)
				return die("a bank mboot cannot hash");
			digests[i] = (mb_event_digest) { banks[i].alg, banks[i].size, md[i] };
		}
		ev.n_digests = (uint32_t) n_banks;
		ev.data = bytes;
		ev.data_size = (uint32_t) bytes_size;
		if (mb_log_writer_add_event(w, &ev) < 0)
			return die("appending");
		free(bytes);
		free(hashed);
	}
	/* EV_NO_ACTION (OTHER's Spec ID event among them) is never extended: left out */
	for (i = 0; other && i < mb_event_log_count(other); i++) {
		const mb_event *ev = mb_event_log_event(other, i);

		mb_event_digest digests[MB_MAX_BANKS];
		mb_event copy = *ev;
		size_t d, b;

		if ((long) ev->pcr != pcr || !mb_event_extends(ev))
			continue;
		/* IN's banks only: OTHER may have more */
		copy.digests = digests;
		copy.n_digests = 0;
		for (d = 0; d < ev->n_digests; d++)
			for (b = 0; b < n_banks; b++)
				if (ev->digests[d].alg == banks[b].alg && copy.n_digests < MB_MAX_BANKS)
					digests[copy.n_digests++] = ev->digests[d];
		if (mb_log_writer_add_event(w, &copy) < 0)
			return die("copying an event of OTHER");
	}
	mb_event_log_free(other);
	if (us && fclose(us) != 0)
		return die("writing the userspace log");
	data = mb_log_writer_data(w, &size);
	if (!data || file_write(argv[2], data, size, 0644, true, &err) < 0)
		return die("writing OUT");
	mb_log_writer_free(w);
	mb_event_log_free(log);
	return 0;
}
