/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mb_log_diff on a real GRUB boot (ima-evm-utils' sample machine, SHA-1 + SHA-256): the log
 * against itself, and against copies rebuilt with the log writer with one event removed, one
 * added, one changed, and two edits in two PCRs. Each edit must be reported as exactly that
 * event (by its place in each log) and move exactly the PCRs it extends.
 */
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

#define SAMPLE "ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9"
/* Events of the sample boot (`mboot log show`): */
#define EV_INITRD_CMD 134   /* PCR 8 "grub_cmd: initrd /boot/initrd.img-5.7.0-rc2+" */
#define EV_CMDLINE 158      /* PCR 8 "kernel_cmdline: /boot/vmlinuz-5.7.0-rc2+.signed root=..." */
#define EV_INITRD_FILE 161  /* PCR 9, the last event of the log */
#define EV_SHIM 131         /* PCR 4, an EFI application */

static mb_event_log *sample(void)
{
	mb_event_log *log = corpus_log(SAMPLE);

	assert_non_null(log);
	return log;
}

/* REPLACE_BYTES: data[at] = byte, the digests kept as logged. */
typedef enum edit_kind { KEEP, DROP, REPLACE_TEXT, INSERT_AFTER, REPLACE_BYTES } edit_kind;
typedef struct edit {
	edit_kind kind;
	uint32_t event;
	uint32_t pcr;      /* INSERT_AFTER: the new event's */
	const char *text;  /* REPLACE_TEXT, INSERT_AFTER: the new data, hashed whole */
	uint32_t at;       /* REPLACE_BYTES */
	uint8_t byte;
} edit;

/* A copy of log through the writer, with the edits applied. */
static mb_event_log *rebuilt(const mb_event_log *log, const edit *edits, size_t n_edits)
{
	mb_log_writer *w = NULL;
	mb_event_log *out = NULL;
	const uint8_t *bytes;
	size_t i, k, size;

	assert_int_equal(mb_log_writer_new(&w), 0);
	for (i = 0; i < mb_event_log_count(log); i++) {
		const mb_event *ev = mb_event_log_event(log, i);
		const edit *e = NULL;

		for (k = 0; k < n_edits; k++)
			if (edits[k].event == ev->number)
				e = &edits[k];
		if (!e || e->kind == INSERT_AFTER) {
			assert_int_equal(mb_log_writer_add_event(w, ev), 0);
		} else if (e->kind == REPLACE_BYTES) {
			mb_event copy = *ev;
			uint8_t *data = malloc(ev->data_size);

			assert_non_null(data);
			assert_true(e->at < ev->data_size);
			memcpy(data, ev->data, ev->data_size);
			data[e->at] = e->byte;
			copy.data = data;
			assert_int_equal(mb_log_writer_add_event(w, &copy), 0);
			free(data);
		}
		else if (e->kind == REPLACE_TEXT)
			assert_int_equal(mb_log_writer_add_hashed(w, ev->pcr, ev->type, e->text, strlen(e->text), e->text,
								  strlen(e->text)), 0);
		if (e && e->kind == INSERT_AFTER)
			assert_int_equal(mb_log_writer_add_hashed(w, e->pcr, MB_EV_IPL, e->text, strlen(e->text), e->text,
								  strlen(e->text)), 0);
	}
	bytes = mb_log_writer_data(w, &size);
	assert_int_equal(mb_event_log_parse(bytes, size, &out, NULL), 0);
	mb_log_writer_free(w);
	return out;
}

static void diff(const mb_event_log *a, const mb_event_log *b, mb_diff *d)
{
	mb_error err = { 0 };

	assert_int_equal(mb_log_diff(a, b, d, &err), 0);
}

static void test_self(void **state)
{
	mb_event_log *log = sample(), *copy = rebuilt(log, NULL, 0);
	size_t n, n2;
	const uint8_t *x = mb_event_log_bytes(log, &n), *y = mb_event_log_bytes(copy, &n2);
	mb_diff d;

	(void) state;
	/* The writer reproduces the real log byte for byte: the edits below are the only changes. */
	assert_int_equal(n, n2);
	assert_memory_equal(x, y, n);
	diff(log, log, &d);
	assert_int_equal(d.n_entries, 0);
	assert_int_equal(d.pcrs_moved, 0);
	mb_diff_done(&d);
	diff(log, copy, &d);
	assert_int_equal(d.n_entries, 0);
	assert_int_equal(d.pcrs_moved, 0);
	mb_diff_done(&d);
	mb_event_log_free(copy);
	mb_event_log_free(log);
}

static void test_removed(void **state)
{
	mb_event_log *a = sample(), *b = rebuilt(a, (edit[]) { { .kind = DROP, .event = EV_INITRD_CMD } }, 1);
	mb_diff d;

	(void) state;
	assert_int_equal(mb_event_log_count(b), mb_event_log_count(a) - 1);
	diff(a, b, &d);
	assert_int_equal(d.n_entries, 1);
	assert_int_equal(d.entries[0].kind, MB_DIFF_REMOVED);
	assert_int_equal(d.entries[0].pcr, 8);
	assert_ptr_equal(d.entries[0].a, mb_event_log_event(a, EV_INITRD_CMD));
	assert_null(d.entries[0].b);
	assert_int_equal(d.pcrs_moved, 1u << 8);
	mb_diff_done(&d);
	/* The other way round it was added. */
	diff(b, a, &d);
	assert_int_equal(d.n_entries, 1);
	assert_int_equal(d.entries[0].kind, MB_DIFF_ADDED);
	assert_null(d.entries[0].a);
	assert_int_equal(d.entries[0].b->number, EV_INITRD_CMD);
	assert_int_equal(d.pcrs_moved, 1u << 8);
	mb_diff_done(&d);
	mb_event_log_free(b);
	mb_event_log_free(a);
}

static void test_added(void **state)
{
	static const char text[] = "(hd0,gpt2)/boot/extra.img";
	mb_event_log *a = sample(), *b = rebuilt(a, (edit[]) { { .kind = INSERT_AFTER, .event = EV_INITRD_FILE, .pcr = 9, .text = text } }, 1);
	mb_diff d;

	(void) state;
	diff(a, b, &d);
	assert_int_equal(d.n_entries, 1);
	assert_int_equal(d.entries[0].kind, MB_DIFF_ADDED);
	assert_int_equal(d.entries[0].pcr, 9);
	assert_null(d.entries[0].a);
	assert_int_equal(d.entries[0].b->number, EV_INITRD_FILE + 1);
	assert_int_equal(d.entries[0].b->data_size, strlen(text));
	assert_memory_equal(d.entries[0].b->data, text, strlen(text));
	assert_int_equal(d.pcrs_moved, 1u << 9);
	mb_diff_done(&d);
	mb_event_log_free(b);
	mb_event_log_free(a);
}

static void test_changed(void **state)
{
	static const char text[] = "kernel_cmdline: /boot/vmlinuz-5.7.0-rc2+.signed root=/dev/sda1 ro init=/bin/sh";
	mb_event_log *a = sample(), *b = rebuilt(a, (edit[]) { { .kind = REPLACE_TEXT, .event = EV_CMDLINE, .text = text } }, 1);
	mb_diff d;

	(void) state;
	diff(a, b, &d);
	assert_int_equal(d.n_entries, 1);
	assert_int_equal(d.entries[0].kind, MB_DIFF_CHANGED);
	assert_int_equal(d.entries[0].pcr, 8);
	assert_ptr_equal(d.entries[0].a, mb_event_log_event(a, EV_CMDLINE));
	assert_ptr_equal(d.entries[0].b, mb_event_log_event(b, EV_CMDLINE));
	/* Another command line: other digests, other data, and GRUB's text is what is hashed. */
	assert_int_equal(d.entries[0].differs, MB_DIFF_DIGESTS | MB_DIFF_DATA);
	assert_true(d.entries[0].data_measured);
	assert_int_equal(d.pcrs_moved, 1u << 8);
	mb_diff_done(&d);
	mb_event_log_free(b);
	mb_event_log_free(a);
}

/* Two edits in two PCRs, in log order: PCR 4 loses the shim, PCR 8's command line changes. */
static void test_two_pcrs(void **state)
{
	mb_event_log *a = sample(),
		     *b = rebuilt(a, (edit[]) { { .kind = DROP, .event = EV_SHIM }, { .kind = REPLACE_TEXT, .event = EV_CMDLINE, .text = "x" } }, 2);
	mb_diff d;
	size_t i;

	(void) state;
	diff(a, b, &d);
	for (i = 0; d.n_entries != 2 && i < d.n_entries; i++)
		fprintf(stderr, "PCR %u kind %d a #%d b #%d\n", d.entries[i].pcr, (int) d.entries[i].kind,
			d.entries[i].a ? (int) d.entries[i].a->number : -1, d.entries[i].b ? (int) d.entries[i].b->number : -1);
	assert_int_equal(d.n_entries, 2);
	/* PCR by PCR, in ascending order. */
	assert_int_equal(d.entries[0].kind, MB_DIFF_REMOVED);
	assert_int_equal(d.entries[0].pcr, 4);
	assert_int_equal(d.entries[0].a->number, EV_SHIM);
	assert_int_equal(d.entries[1].kind, MB_DIFF_CHANGED);
	assert_int_equal(d.entries[1].pcr, 8);
	assert_int_equal(d.entries[1].a->number, EV_CMDLINE);
	/* b lost one event before it. */
	assert_int_equal(d.entries[1].b->number, EV_CMDLINE - 1);
	assert_int_equal(d.pcrs_moved, (1u << 4) | (1u << 8));
	mb_diff_done(&d);
	mb_event_log_free(b);
	mb_event_log_free(a);
}

/*
 * The shim's load event with another image address (UEFI_IMAGE_LOAD_EVENT.ImageLocationInMemory,
 * the first 8 bytes of its data): the digest is the image's Authenticode digest, so where it
 * was loaded is not measured and the two boots are the same.
 */
static void test_unmeasured_data(void **state)
{
	mb_event_log *a = sample(), *b = rebuilt(a, (edit[]) { { .kind = REPLACE_BYTES, .event = EV_SHIM, .at = 2, .byte = 0x5a } }, 1);
	mb_diff d;

	(void) state;
	assert_int_equal(mb_event_log_event(a, EV_SHIM)->type, MB_EV_EFI_BOOT_SERVICES_APPLICATION);
	assert_int_not_equal(mb_event_log_event(a, EV_SHIM)->data[2], 0x5a);
	diff(a, b, &d);
	assert_int_equal(d.n_entries, 0);
	assert_int_equal(d.pcrs_moved, 0);
	mb_diff_done(&d);
	mb_event_log_free(b);
	mb_event_log_free(a);
}

/*
 * A GRUB command whose text was edited but whose digests were kept: the data no longer hashes
 * to the digest, so it is not what was measured and the edit is reported (data only).
 */
static void test_measured_data_edited(void **state)
{
	mb_event_log *a = sample(), *b = rebuilt(a, (edit[]) { { .kind = REPLACE_BYTES, .event = EV_INITRD_CMD, .at = 17, .byte = 'X' } }, 1);
	mb_diff d;

	(void) state;
	/* "grub_cmd: initrd /boot/..." : byte 17 is the '/' */
	assert_memory_equal(mb_event_log_event(a, EV_INITRD_CMD)->data, "grub_cmd: initrd /", 18);
	diff(a, b, &d);
	assert_int_equal(d.n_entries, 1);
	assert_int_equal(d.entries[0].kind, MB_DIFF_CHANGED);
	assert_int_equal(d.entries[0].differs, MB_DIFF_DATA);
	assert_true(d.entries[0].data_measured);
	assert_int_equal(d.entries[0].a->number, EV_INITRD_CMD);
	/* Equal digests: the PCRs do not move. */
	assert_int_equal(d.pcrs_moved, 0);
	mb_diff_done(&d);
	mb_event_log_free(b);
	mb_event_log_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self),
		cmocka_unit_test(test_removed),
		cmocka_unit_test(test_added),
		cmocka_unit_test(test_changed),
		cmocka_unit_test(test_two_pcrs),
		cmocka_unit_test(test_unmeasured_data),
		cmocka_unit_test(test_measured_data_edited),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
