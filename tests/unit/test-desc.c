/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dec_set_desc() (the decoders' one-line descriptions) formats string-only formats itself, not
 * through vsnprintf: its text must be what glibc's snprintf prints for the same format and
 * arguments, precisions (%.Ns, %.*s, negative, from buffers with no NUL), %% and the 511-byte
 * limit included; other formats still go to vsnprintf. Then the one-line rule: every control
 * character and DEL becomes a blank and a byte that is not UTF-8 a '?', wherever it is (the
 * check runs 16 bytes a step).
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
#include "lib/events/decode-internal.h"

/* Output cut at the buffer's end is one of the things compared. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

static char long_a[600], long_b[600];
static char *no_nul; /* 300 'n' and no terminator: only a precision may read it */

static int setup(void **state)
{
	(void) state;
	memset(long_a, 'a', sizeof(long_a) - 1);
	memset(long_b, 'b', sizeof(long_b) - 1);
	no_nul = malloc(300);
	assert_non_null(no_nul);
	memset(no_nul, 'n', 300);
	return 0;
}

static int teardown(void **state)
{
	(void) state;
	free(no_nul);
	return 0;
}

/* dec_set_desc(fmt, ...) and snprintf into 512 bytes give the same text. */
#define SAME(...)                                                                                 \
	do {                                                                                      \
		char want_[512];                                                                  \
		mb_decoded_node *root_ = dec_begin(d);                                             \
                                                                                                  \
		snprintf(want_, sizeof(want_), __VA_ARGS__);                                      \
		dec_set_desc(root_, __VA_ARGS__);                                                 \
		assert_int_equal(dec_end(d, 0), 0);                                               \
		assert_string_equal(mb_event_decoded_description(d), want_);                      \
	} while (0)

static void test_like_snprintf(void **state)
{
	mb_event_decoded *d = mb_event_decoded_new();
	int negative = -1;

	(void) state;
	assert_non_null(d);
	SAME("%s", "plain");
	SAME("malformed %s: %s", "EV_IPL", "too short");
	SAME("%s%.*s%s", "file ", 200, no_nul, "...");
	SAME("%s%.*s%s", "", 7, no_nul, "");
	SAME("%.*s|%.*s", 0, no_nul, negative, "negative is none");
	SAME("%.200s%s", long_a, "...");
	SAME("%.200s", "short");
	SAME("%.3s|%.0s|%.s|%%|%s%%", "abcdef", "gone", "gone", "x");
	SAME("100%% %s", "sure");
	SAME("%s%s", long_a, long_b);        /* over 511 bytes: cut where snprintf cuts */
	SAME("%.500s%.*s", long_a, 50, no_nul);
	SAME("%s = %u (0x%08x)", "vsnprintf", 42u, 42u); /* not strings only */
	SAME("%s%5s|%-3s|", "width ", "r", "l");      /* a width: vsnprintf's */
	SAME("%.*s then %.*d", 3, "abcdef", 4, 7); /* a precision taken before a number: vsnprintf from the start */
	mb_event_decoded_free(d);
}

/* in with each byte < 0x20 or 0x7f made a blank, and 0xff (never UTF-8) a '?'. */
static void one_line(const char *in, char *out)
{
	size_t i;

	for (i = 0; in[i]; i++) {
		unsigned char c = (unsigned char) in[i];

		out[i] = c < 0x20 || c == 0x7f ? ' ' : c == 0xff ? '?' : (char) c;
	}
	out[i] = '\0';
}

static void test_one_line(void **state)
{
	static const size_t at[] = { 0, 1, 14, 15, 16, 17, 31, 32, 33, 47, 60 };
	static const char bad[] = { '\n', '\t', '\r', 0x01, 0x1f, 0x7f, (char) 0xff };
	mb_event_decoded *d = mb_event_decoded_new();
	char in[72], want[72];
	size_t i, j;

	(void) state;
	assert_non_null(d);
	for (i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		for (j = 0; j < sizeof(bad); j++) {
			mb_decoded_node *root;

			memset(in, 'x', sizeof(in) - 1);
			in[sizeof(in) - 1] = '\0';
			in[at[i]] = bad[j];
			one_line(in, want);
			root = dec_begin(d);
			dec_set_desc(root, "%s", in);
			assert_int_equal(dec_end(d, 0), 0);
			assert_string_equal(mb_event_decoded_description(d), want);
			/* The same through vsnprintf (a conversion put_strings leaves to it). */
			root = dec_begin(d);
			dec_set_desc(root, "%s%c", in, 'y');
			assert_int_equal(dec_end(d, 0), 0);
			assert_memory_equal(mb_event_decoded_description(d), want, strlen(want));
		}
	}
	/* Well-formed UTF-8 after 16 ASCII bytes stays as it is. */
	{
		mb_decoded_node *root = dec_begin(d);

		dec_set_desc(root, "%s", "0123456789abcdef caf\xc3\xa9 \xe2\x82\xac");
		assert_int_equal(dec_end(d, 0), 0);
		assert_string_equal(mb_event_decoded_description(d), "0123456789abcdef caf\xc3\xa9 \xe2\x82\xac");
	}
	mb_event_decoded_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_like_snprintf),
		cmocka_unit_test(test_one_line),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
