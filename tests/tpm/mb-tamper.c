/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Test helper: rewrite a real event log the way an attacker (or a broken tool) would,
 * with the library's parser and writer, for the tampering tests of `mboot verify`.
 *
 *   mb-tamper IN OUT edit-data N        flip the last data byte of event N (digests kept)
 *   mb-tamper IN OUT remove N           drop event N
 *   mb-tamper IN OUT swap A B           exchange events A and B (their order)
 *   mb-tamper IN OUT swap-pcr A B       exchange the PCR indices of events A and B
 *   mb-tamper IN OUT add N PCR TEXT     insert before event N an EV_IPL event measuring TEXT
 *   mb-tamper IN OUT digest N           replace event N's digests with H("mboot tamper")
 *   mb-tamper IN OUT cut N              keep events 0..N-1 only
 *   mb-tamper IN OUT drop-bank NAME     rewrite the log without bank NAME
 *   mb-tamper IN OUT add-grub N TEXT    insert before event N a PCR 8 event as GRUB writes one:
 *                                       data "grub_cmd: TEXT" + NUL, digest H(TEXT)
 *   mb-tamper IN OUT swap-digests A B   exchange the digests of events A and B (data kept)
 *   mb-tamper IN OUT drop-digest N NAME remove event N's digest of bank NAME (the header keeps
 *                                       the bank): an event that carries only the other banks
 *   mb-tamper IN OUT relabel N          swap event N's GRUB prefix, "kernel_cmdline: " <->
 *                                       "grub_cmd: "; GRUB hashes only what follows the prefix,
 *                                       so the digests still match the data
 *
 * Event numbers are mboot's (a crypto-agile header is event 0). A crypto-agile log is
 * rewritten with a fresh Spec ID header of its (remaining) banks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/mboot.h>
#include "shared/fileio.h"

static int die(const char *msg)
{
	fprintf(stderr, "mb-tamper: %s\n", msg);
	return 2;
}

static unsigned long num(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*s == '\0' || *end != '\0') {
		fprintf(stderr, "mb-tamper: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	const char *in, *out, *op;
	mb_event_log *log = NULL;
	mb_log_writer *w = NULL;
	mb_error err = { 0 };
	uint8_t *buf = NULL;
	size_t size = 0, n, i, first = 0, n_banks;
	const mb_spec_id_alg *banks;
	mb_spec_id_alg keep[MB_MAX_BANKS];
	size_t n_keep = 0;
	unsigned long a = 0, b = 0;
	uint16_t drop = 0, drop_one = 0;
	const uint8_t *data;
	int r;

	if (argc < 4)
		return die("usage: mb-tamper IN OUT OP [ARGS]");
	in = argv[1];
	out = argv[2];
	op = argv[3];
	if (file_read(in, MB_LOG_MAX_SIZE, &buf, &size, &err) < 0 ||
	    mb_event_log_parse(buf, size, &log, &err) < 0) {
		fprintf(stderr, "mb-tamper: %s: %s\n", in, err.message);
		return 2;
	}
	free(buf);
	n = mb_event_log_count(log);
	n_banks = mb_event_log_banks(log, &banks);
	if (mb_log_writer_new(&w) < 0)
		return die("out of memory");

	if (strcmp(op, "drop-bank") == 0) {
		const mb_digest_info *d = argc == 5 ? mb_digest_by_name(argv[4]) : NULL;

		if (!d)
			return die("drop-bank NAME");
		drop = d->alg;
	} else if (strcmp(op, "drop-digest") == 0) {
		const mb_digest_info *d = argc == 6 ? mb_digest_by_name(argv[5]) : NULL;

		if (!d)
			return die("drop-digest N NAME");
		a = num(argv[4]);
		drop_one = d->alg;
	} else if (strcmp(op, "add-grub") == 0) {
		if (argc != 6)
			return die("add-grub N TEXT");
		a = num(argv[4]);
	} else if (strcmp(op, "swap") == 0 || strcmp(op, "swap-pcr") == 0 || strcmp(op, "add") == 0 ||
		   strcmp(op, "swap-digests") == 0) {
		if (argc < 6)
			return die("swap A B | add N PCR TEXT");
		a = num(argv[4]);
		b = num(argv[5]);
	} else if (argc == 5)
		a = num(argv[4]);
	else
		return die("unknown operation or missing argument");
	if (strcmp(op, "add") == 0 && argc != 7)
		return die("add N PCR TEXT");
	if (a > n || b > n || ((strcmp(op, "swap") == 0 || strcmp(op, "swap-pcr") == 0 ||
				strcmp(op, "swap-digests") == 0) && (a >= n || b >= n)) ||
	    ((drop_one || strcmp(op, "relabel") == 0) && a >= n))
		return die("event number out of range");

	if (mb_event_log_format(log) == MB_LOG_FORMAT_CRYPTO_AGILE) {
		for (i = 0; i < n_banks; i++)
			if (banks[i].alg != drop)
				keep[n_keep++] = banks[i];
		if (n_keep == n_banks && drop)
			return die("the log has no such bank");
		r = mb_log_writer_add_spec_id(w, keep, n_keep);
		if (r < 0)
			return die("writing the Spec ID header failed");
		first = 1;
	} else if (drop)
		return die("drop-bank needs a crypto-agile log");

	for (i = first; i <= n; i++) {
		const mb_event *src;
		mb_event ev;
		mb_event_digest digests[MB_MAX_BANKS]; /* ev's, to edit: the log's stay as parsed */
		uint8_t *copy = NULL;

		if (strcmp(op, "add") == 0 && i == a) {
			r = mb_log_writer_add_hashed(w, (uint32_t) b, MB_EV_IPL, argv[6], strlen(argv[6]), argv[6],
						     strlen(argv[6]));
			if (r < 0)
				return die("adding the event failed");
		}
		if (strcmp(op, "add-grub") == 0 && i == a) {
			char *line = NULL;

			if (asprintf(&line, "grub_cmd: %s", argv[5]) < 0)
				return die("out of memory");
			r = mb_log_writer_add_hashed(w, 8, MB_EV_IPL, argv[5], strlen(argv[5]), line, strlen(line) + 1);
			free(line);
			if (r < 0)
				return die("adding the event failed");
		}
		if (i == n)
			break;
		if (strcmp(op, "cut") == 0 && i >= a)
			break;
		if (strcmp(op, "remove") == 0 && i == a)
			continue;
		src = mb_event_log_event(log, i);
		if (strcmp(op, "swap") == 0 && i == a)
			src = mb_event_log_event(log, b);
		else if (strcmp(op, "swap") == 0 && i == b)
			src = mb_event_log_event(log, a);
		ev = *src;
		memcpy(digests, src->digests, src->n_digests * sizeof(digests[0]));
		ev.digests = digests;
		if (strcmp(op, "swap-pcr") == 0 && i == a)
			ev.pcr = mb_event_log_event(log, b)->pcr;
		else if (strcmp(op, "swap-pcr") == 0 && i == b)
			ev.pcr = mb_event_log_event(log, a)->pcr;
		if (strcmp(op, "swap-digests") == 0 && (i == a || i == b)) {
			const mb_event *other = mb_event_log_event(log, i == a ? b : a);
			uint32_t k;

			if (other->n_digests != ev.n_digests)
				return die("the two events carry different banks");
			for (k = 0; k < ev.n_digests; k++)
				digests[k] = other->digests[k];
		}
		if (strcmp(op, "edit-data") == 0 && i == a) {
			if (ev.data_size == 0)
				return die("event has no data to edit");
			copy = malloc(ev.data_size);
			if (!copy)
				return die("out of memory");
			memcpy(copy, ev.data, ev.data_size);
			copy[ev.data_size - 1] ^= 0x01;
			ev.data = copy;
		}
		if (drop_one && i == a) {
			uint32_t k, m = 0;

			for (k = 0; k < ev.n_digests; k++)
				if (ev.digests[k].alg != drop_one)
					digests[m++] = digests[k];
			if (m == ev.n_digests)
				return die("the event has no digest of that bank");
			ev.n_digests = m;
		}
		if (strcmp(op, "relabel") == 0 && i == a) {
			static const char cmdline[] = "kernel_cmdline: ", cmd[] = "grub_cmd: ";
			const char *from, *to;

			if (ev.data_size >= strlen(cmdline) && memcmp(ev.data, cmdline, strlen(cmdline)) == 0)
				from = cmdline, to = cmd;
			else if (ev.data_size >= strlen(cmd) && memcmp(ev.data, cmd, strlen(cmd)) == 0)
				from = cmd, to = cmdline;
			else
				return die("the event is not a GRUB kernel_cmdline or grub_cmd event");
			copy = malloc(ev.data_size - strlen(from) + strlen(to));
			if (!copy)
				return die("out of memory");
			memcpy(copy, to, strlen(to));
			memcpy(copy + strlen(to), ev.data + strlen(from), ev.data_size - strlen(from));
			ev.data_size = (uint32_t) (ev.data_size - strlen(from) + strlen(to));
			ev.data = copy;
		}
		if (strcmp(op, "digest") == 0 && i == a) {
			static uint8_t forged[MB_MAX_BANKS][MB_DIGEST_MAX];
			uint32_t k;

			for (k = 0; k < ev.n_digests; k++) {
				if (mb_digest(ev.digests[k].alg, "mboot tamper", 12, forged[k]) < 0)
					return die("cannot hash");
				digests[k].bytes = forged[k];
			}
		}
		if (drop) {
			uint32_t k, m = 0;

			for (k = 0; k < ev.n_digests; k++)
				if (ev.digests[k].alg != drop)
					digests[m++] = digests[k];
			ev.n_digests = m;
		}
		r = mb_log_writer_add_event(w, &ev);
		free(copy);
		if (r < 0)
			return die("writing an event failed");
	}
	data = mb_log_writer_data(w, &size);
	if (file_write(out, data, size, 0644, true, &err) < 0) {
		fprintf(stderr, "mb-tamper: %s: %s\n", out, err.message);
		return 2;
	}
	mb_log_writer_free(w);
	mb_event_log_free(log);
	return 0;
}
