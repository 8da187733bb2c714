/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Event summaries (src/lib/seal/event-summary.c): made from a real GRUB boot (ima-evm-utils'
 * sample machine), their records checked against tpm2_eventlog's reading of that log; the
 * comparison with today's log names exactly the events that changed, were added or went;
 * the cap leaves a PCR out whole; hostile summaries are refused, each saying why.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <mboot/mboot.h>
#include "corpus-util.h"
#include "lib/seal/event-summary.h"

#define SAMPLE "ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9"
#define SEALED_PCRS ((1u << 0) | (1u << 4) | (1u << 7) | (1u << 8) | (1u << 9))
/*
 * From `tpm2_eventlog` of the sample (events other than EV_NO_ACTION): PCR 0 has 8, PCR 4 7,
 * PCR 7 9, PCR 8 101, PCR 9 12; in PCR 8, events 129, 153 and 158 (the grub_cmd linux lines
 * and kernel_cmdline) are its 77th, 98th and 99th; event 158's sha256 digest starts 4e9f4466946eec63.
 */
#define SAMPLE_EVENTS (8 + 7 + 9 + 101 + 12)
#define EV_LINUX 129
#define EV_LINUX_SIGNED 153
#define EV_CMDLINE 158
#define EV_INITRD_CMD 134
static const uint8_t cmdline_prefix[8] = { 0x4e, 0x9f, 0x44, 0x66, 0x94, 0x6e, 0xec, 0x63 };

static mb_event_log *sample(void)
{
	mb_event_log *log = corpus_log(SAMPLE);

	assert_non_null(log);
	return log;
}

/* The log's sha256 values, as a bank. */
static void replayed(const mb_event_log *log, mb_pcr_bank *bank)
{
	mb_pcr_values *v = mb_pcr_values_new();

	assert_non_null(v);
	assert_int_equal(mb_replay_log(log, SIZE_MAX, v, NULL, NULL), 0);
	assert_int_equal(mb_pcr_values_get_bank(v, MB_ALG_SHA256, bank), 0);
	mb_pcr_values_free(v);
}

/* A copy of log with event `drop` left out, the text of events `change` replaced, an event after `insert`. */
static mb_event_log *edited(const mb_event_log *log, uint32_t drop, const uint32_t *change, size_t n_change,
			    uint32_t insert)
{
	mb_log_writer *w = NULL;
	mb_event_log *out = NULL;
	const uint8_t *bytes;
	size_t size;

	assert_int_equal(mb_log_writer_new(&w), 0);
	for (size_t i = 0; i < mb_event_log_count(log); i++) {
		const mb_event *ev = mb_event_log_event(log, i);
		bool changed = false;

		for (size_t k = 0; k < n_change; k++)
			changed |= change[k] == ev->number;
		if (ev->number == drop)
			continue;
		if (changed)
			assert_int_equal(mb_log_writer_add_hashed(w, ev->pcr, ev->type, "init=/bin/sh", 12, "init=/bin/sh",
								  12), 0);
		else
			assert_int_equal(mb_log_writer_add_event(w, ev), 0);
		if (ev->number == insert)
			assert_int_equal(mb_log_writer_add_hashed(w, 8, MB_EV_IPL, "grub_cmd: x", 11, "grub_cmd: x", 11), 0);
	}
	bytes = mb_log_writer_data(w, &size);
	assert_int_equal(mb_event_log_parse(bytes, size, &out, NULL), 0);
	mb_log_writer_free(w);
	return out;
}

static void make_sample(mb_event_log *log, uint8_t **summary, size_t *size)
{
	mb_pcr_bank values;
	mb_error err = { 0 };

	replayed(log, &values);
	assert_int_equal(event_summary_make(log, &values, SEALED_PCRS, summary, size, &err), 0);
}

static void test_make(void **state)
{
	mb_event_log *log = sample();
	uint8_t *s = NULL;
	size_t n = 0, at8 = 0, found = 0;

	(void) state;
	make_sample(log, &s, &n);
	assert_int_equal(n, 4 + SAMPLE_EVENTS * MB_EVENT_SUMMARY_RECORD);
	assert_int_equal(event_summary_count(n), SAMPLE_EVENTS);
	assert_int_equal(event_summary_pcrs(s, n), SEALED_PCRS);
	assert_int_equal(event_summary_check(s, n, SEALED_PCRS, NULL), 0);
	/* the 99th record of PCR 8 is event 158: EV_IPL (0x0d), tpm2_eventlog's digest prefix */
	for (size_t i = 0; i < event_summary_count(n); i++) {
		const uint8_t *rec = s + 4 + i * MB_EVENT_SUMMARY_RECORD;

		if (rec[0] != 8 || at8++ != 98)
			continue;
		found = 1;
		assert_memory_equal(rec + 1, "\x0d\0\0\0", 4);
		assert_memory_equal(rec + 5, cmdline_prefix, 8);
	}
	assert_int_equal(found, 1);
	assert_int_equal(at8, 101);
	free(s);
	mb_event_log_free(log);
}

/* A summary of another boot than the values is refused, naming the PCR. */
static void test_make_wrong_boot(void **state)
{
	mb_event_log *log = sample(), *evil = edited(log, UINT32_MAX, (uint32_t[]) { EV_CMDLINE }, 1, UINT32_MAX);
	mb_pcr_bank values;
	mb_error err = { 0 };
	uint8_t *s = NULL;
	size_t n = 0;

	(void) state;
	replayed(log, &values);
	assert_int_equal(event_summary_make(evil, &values, SEALED_PCRS, &s, &n, &err), -EINVAL);
	assert_non_null(strstr(err.message, "PCR 8 "));
	assert_null(s);
	/* PCRs the edit does not touch are fine */
	assert_int_equal(event_summary_make(evil, &values, (1u << 4) | (1u << 9), &s, &n, &err), 0);
	free(s);
	mb_event_log_free(evil);
	mb_event_log_free(log);
}

static void compare(const uint8_t *s, size_t n, const mb_event_log *today, uint32_t pcr, summary_change **c,
		    size_t *nc)
{
	assert_int_equal(event_summary_compare(s, n, MB_ALG_SHA256, today, pcr, c, nc), 0);
}

static void test_compare(void **state)
{
	mb_event_log *log = sample();
	mb_event_log *evil = edited(log, UINT32_MAX, (uint32_t[]) { EV_LINUX, EV_LINUX_SIGNED, EV_CMDLINE }, 3, UINT32_MAX);
	mb_event_log *dropped = edited(log, EV_INITRD_CMD, NULL, 0, UINT32_MAX);
	mb_event_log *added = edited(log, UINT32_MAX, NULL, 0, EV_CMDLINE);
	summary_change *c = NULL;
	uint8_t *s = NULL;
	size_t n = 0, nc = 0;

	(void) state;
	make_sample(log, &s, &n);
	/* the same boot: nothing in any PCR summarised */
	for (uint32_t p = 0; p < 24; p++) {
		if (!(SEALED_PCRS & (1u << p)))
			continue;
		compare(s, n, log, p, &c, &nc);
		assert_int_equal(nc, 0);
		free(c);
	}
	/* the three changed events of PCR 8, in order, by today's number and their place at sealing */
	compare(s, n, evil, 8, &c, &nc);
	assert_int_equal(nc, 3);
	assert_int_equal(c[0].kind, MB_DIFF_CHANGED);
	assert_int_equal(c[0].now->number, EV_LINUX);
	assert_int_equal(c[0].then_pos, 76);
	assert_int_equal(c[1].now->number, EV_LINUX_SIGNED);
	assert_int_equal(c[1].then_pos, 97);
	assert_int_equal(c[2].kind, MB_DIFF_CHANGED);
	assert_int_equal(c[2].now->number, EV_CMDLINE);
	assert_int_equal(c[2].then_pos, 98);
	assert_int_equal(c[2].then_type, MB_EV_IPL);
	assert_memory_equal(c[2].then_prefix, cmdline_prefix, 8);
	free(c);
	compare(s, n, evil, 9, &c, &nc);
	assert_int_equal(nc, 0);
	free(c);
	/* an event gone: removed, at its place at sealing (the 79th of PCR 8's: tpm2_eventlog) */
	compare(s, n, dropped, 8, &c, &nc);
	assert_int_equal(nc, 1);
	assert_int_equal(c[0].kind, MB_DIFF_REMOVED);
	assert_null(c[0].now);
	assert_int_equal(c[0].then_pos, 78);
	free(c);
	/* an event more: added, today's number (after 158) */
	compare(s, n, added, 8, &c, &nc);
	assert_int_equal(nc, 1);
	assert_int_equal(c[0].kind, MB_DIFF_ADDED);
	assert_int_equal(c[0].now->number, EV_CMDLINE + 1);
	free(c);
	free(s);
	mb_event_log_free(added);
	mb_event_log_free(dropped);
	mb_event_log_free(evil);
	mb_event_log_free(log);
}

/* A log of n4 events in PCR 4 then n8 in PCR 8. */
static mb_event_log *counted(size_t n4, size_t n8)
{
	mb_log_writer *w = NULL;
	mb_event_log *out = NULL;
	mb_spec_id_alg alg = { .alg = MB_ALG_SHA256, .size = 32 };
	const uint8_t *bytes;
	size_t size;
	char text[32];

	assert_int_equal(mb_log_writer_new(&w), 0);
	assert_int_equal(mb_log_writer_add_spec_id(w, &alg, 1), 0);
	for (size_t i = 0; i < n4 + n8; i++) {
		int len = snprintf(text, sizeof(text), "event %zu", i);

		assert_int_equal(mb_log_writer_add_hashed(w, i < n4 ? 4 : 8, MB_EV_IPL, text, (size_t) len, text,
							  (size_t) len), 0);
	}
	bytes = mb_log_writer_data(w, &size);
	assert_int_equal(mb_event_log_parse(bytes, size, &out, NULL), 0);
	mb_log_writer_free(w);
	return out;
}

/* The cap: PCRs in index order while they fit; one that does not is left out whole. */
static void test_cap(void **state)
{
	const uint32_t both = (1u << 4) | (1u << 8);
	struct { size_t n4, n8; uint32_t kept; size_t events; } cases[] = {
		{ 3, 300, 1u << 4, 3 },
		{ 200, 56, both, 256 },
		{ 200, 57, 1u << 4, 200 },
		{ 257, 10, 1u << 8, 10 },
		{ 0, 0, both, 0 },
	};

	(void) state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		mb_event_log *log = counted(cases[i].n4, cases[i].n8);
		mb_pcr_bank values;
		uint8_t *s = NULL;
		size_t n = 0;

		replayed(log, &values);
		assert_int_equal(event_summary_make(log, &values, both, &s, &n, NULL), 0);
		assert_int_equal(event_summary_pcrs(s, n), cases[i].kept);
		assert_int_equal(event_summary_count(n), cases[i].events);
		assert_int_equal(event_summary_check(s, n, both, NULL), 0);
		free(s);
		mb_event_log_free(log);
	}
}

static void expect_refused(const uint8_t *s, size_t n, uint32_t sealed, const char *said)
{
	mb_error err = { 0 };

	assert_int_equal(event_summary_check(s, n, sealed, &err), -EBADMSG);
	if (!strstr(err.message, said))
		fail_msg("\"%s\" does not say \"%s\"", err.message, said);
}

static void test_hostile(void **state)
{
	uint8_t buf[4 + 258 * MB_EVENT_SUMMARY_RECORD] = { 0 };
	const uint32_t sealed = (1u << 7) | (1u << 8);

	(void) state;
	buf[0] = 1u << 7;                  /* PCR 7 summarised */
	buf[4] = 7;                        /* one event of PCR 7 */
	assert_int_equal(event_summary_check(buf, 4 + MB_EVENT_SUMMARY_RECORD, sealed, NULL), 0);
	assert_int_equal(event_summary_check(buf, 4, sealed, NULL), 0);
	expect_refused(buf, 3, sealed, "shorter than its 4-byte header");
	expect_refused(buf, 0, sealed, "shorter than its 4-byte header");
	expect_refused(buf, 4 + MB_EVENT_SUMMARY_RECORD - 1, sealed, "not a 4-byte header and 13-byte records");
	expect_refused(buf, 4 + MB_EVENT_SUMMARY_RECORD + 1, sealed, "not a 4-byte header and 13-byte records");
	expect_refused(buf, 4 + MB_EVENT_SUMMARY_RECORD, 1u << 8, "PCR 7 is summarised but not sealed to");
	buf[4] = 8;                        /* an event of PCR 8, sealed but not summarised */
	expect_refused(buf, 4 + MB_EVENT_SUMMARY_RECORD, sealed, "event 0 is of PCR 8, which is not summarised");
	buf[4] = 200;
	expect_refused(buf, 4 + MB_EVENT_SUMMARY_RECORD, sealed, "event 0 is of PCR 200");
	/* over the cap: 257 events */
	for (size_t i = 0; i < 258; i++)
		buf[4 + i * MB_EVENT_SUMMARY_RECORD] = 7;
	assert_int_equal(event_summary_check(buf, 4 + 256 * MB_EVENT_SUMMARY_RECORD, sealed, NULL), 0);
	expect_refused(buf, 4 + 257 * MB_EVENT_SUMMARY_RECORD, sealed, "257 events, more than 256");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_make),
		cmocka_unit_test(test_make_wrong_boot),
		cmocka_unit_test(test_compare),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
