/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The two event serialisers of the tool stay byte-identical: `log show --json` writes each
 * event straight into a buffer (tool_event_write, fed by mb_event_log_visit), `log diff --json`
 * builds a json-c object (tool_event_json, from the parsed log). For every event of every log
 * in tests/data/corpus the written bytes must equal what json-c itself prints for the object
 * with JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, the flags the streamed writer
 * promises to match; and written pretty, what it prints with JSON_C_TO_STRING_PRETTY |
 * JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE.
 */
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <json-c/json.h>

#include <mboot/mboot.h>
#include "shared/fileio.h"
#include "shared/jsonout.h"
#include "tool/tool.h"

#define FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
#define PRETTY_FLAGS (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE)

typedef struct compare {
	const char *path;
	const mb_event_log *parsed;
	mb_event_decoded *dec;
	unsigned n_events, n_bad;
} compare;

static int compare_event(void *ctx, const mb_event_log *view, const mb_event *ev, mb_error *err)
{
	compare *c = ctx;
	const mb_event *pev = mb_event_log_event(c->parsed, ev->number);
	jsonout b = { 0 };
	json_object *o;
	const char *ref;
	size_t len = 0;

	(void) err;
	assert_non_null(pev);
	tool_event_write(&b, view, ev, c->dec, NULL);
	/* The same bytes when the caller hands over the event's digest check (log show's worker). */
	{
		jsonout b2 = { 0 };
		mb_digest_check check;

		if (mb_event_check_digest(ev, &check) == 0) {
			tool_event_write(&b2, view, ev, c->dec, &check);
			assert_false(b2.oom);
			assert_int_equal(b2.n, b.n);
			assert_memory_equal(b2.p, b.p, b.n);
		}
		free(b2.p);
	}
	o = tool_event_json(c->parsed, pev);
	ref = json_object_to_json_string_length(o, FLAGS, &len);
	assert_false(b.oom);
	assert_non_null(ref);
	if (b.n != len || memcmp(b.p, ref, len) != 0) {
		size_t at = 0;

		while (at < len && at < b.n && ref[at] == b.p[at])
			at++;
		at = at > 40 ? at - 40 : 0; /* where they part, with some context */
		if (c->n_bad++ < 5)
			fprintf(stderr, "%s event %u, from byte %zu:\n json-c: %.100s\n stream: %.*s\n", c->path,
				ev->number, at, ref + at, (int) (b.n - at < 100 ? b.n - at : 100), b.p + at);
	}
	/* Pretty: json-c's JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED of the same object. */
	{
		jsonout p = { .pretty = true };

		tool_event_write(&p, view, ev, c->dec, NULL);
		ref = json_object_to_json_string_length(o, PRETTY_FLAGS, &len);
		assert_false(p.oom);
		assert_non_null(ref);
		assert_int_equal(p.depth, 0);
		if ((p.n != len || memcmp(p.p, ref, len) != 0) && c->n_bad++ < 5)
			fprintf(stderr, "%s event %u (pretty):\n json-c: %s\n stream: %.*s\n", c->path, ev->number, ref,
				(int) p.n, p.p);
		free(p.p);
	}
	c->n_events++;
	json_object_put(o);
	free(b.p);
	return 0;
}

static unsigned n_logs, n_events, n_bad;

static int visit(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	uint8_t *bytes = NULL;
	size_t size = 0;
	mb_event_log *log = NULL;
	mb_error err = { 0 };
	compare c = { path, NULL, NULL, 0, 0 };

	(void) st;
	(void) ftw;
	if (flag != FTW_F)
		return 0;
	if (file_read(path, MB_LOG_MAX_SIZE, &bytes, &size, &err) < 0)
		return 0;
	if (mb_event_log_parse(bytes, size, &log, &err) < 0) {
		free(bytes);
		return 0; /* not an event log: junk, IMA logs, notes */
	}
	c.parsed = log;
	c.dec = mb_event_decoded_new();
	assert_non_null(c.dec);
	assert_int_equal(mb_event_log_visit(bytes, size, compare_event, &c, &err), 0);
	mb_event_decoded_free(c.dec);
	assert_int_equal(c.n_events, mb_event_log_count(log));
	n_logs++;
	n_events += c.n_events;
	n_bad += c.n_bad;
	mb_event_log_free(log);
	free(bytes);
	return 0;
}

static void test_corpus_identical(void **state)
{
	const char *d = getenv("MB_TESTDATA");
	char root[1024];

	(void) state;
	snprintf(root, sizeof(root), "%s/corpus", d ? d : "tests/data");
	assert_int_equal(nftw(root, visit, 16, FTW_PHYS), 0);
	fprintf(stderr, "%u events of %u logs: streamed and json-c serialisations compared\n", n_events, n_logs);
	assert_true(n_logs > 20);
	assert_true(n_events > 3000);
	assert_int_equal(n_bad, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus_identical),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
