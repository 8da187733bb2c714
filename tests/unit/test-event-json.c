/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The event JSON of `log show --json` and `log diff --json` (event_json_write, fed by
 * mb_event_log_visit, and mb_event_to_json) against jansson: for every event of every log in tests/data/corpus the
 * written bytes must equal what jansson prints, with JSON_COMPACT and JSON_INDENT(2), for the
 * event built here from the parsed log's fields.
 */
#include <errno.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "shared/json.h"

#include <mboot/mboot.h>
#include "shared/fileio.h"
#include "shared/hex.h"
#include "shared/jsonout.h"
#include "lib/events/event-json.h"


typedef struct compare {
	const char *path;
	const mb_event_log *parsed;
	mb_event_decoded *dec;
	unsigned n_events, n_bad, n_big;
} compare;

/* The event as the test builds it from the parsed log's fields, with the decoded data read by
 * jansson from the library's text; NULL when jansson cannot hold that data (an integer over
 * 2^63 - 1: test-log-show-pretty compares those events with Python). */
static json_t *reference_event(const mb_event_log *log, const mb_event *ev)
{
	json_t *o = json_object(), *digests = json_object(), *decoded;
	mb_event_decoded *dec = mb_event_decoded_new();
	mb_digest_check check;
	char tbuf[MB_EVENT_TYPE_LABEL_SIZE], name[8], *text, *hex;

	assert_non_null(o);
	assert_non_null(dec);
	assert_int_equal(mb_event_decode(log, ev, dec), 0);
	text = mb_event_decoded_json(dec);
	assert_non_null(text);
	decoded = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	free(text);
	mb_event_decoded_free(dec);
	if (!decoded) {
		json_decref(o);
		json_decref(digests);
		return NULL;
	}
	json_object_set_new(o, "index", json_integer(ev->number));
	json_object_set_new(o, "offset", json_integer((json_int_t) ev->offset));
	json_object_set_new(o, "record_size", json_integer(ev->record_size));
	json_object_set_new(o, "pcr", json_integer(ev->pcr));
	json_object_set_new(o, "type", json_string(mb_event_type_label(ev->type, tbuf)));
	json_object_set_new(o, "type_value", json_integer(ev->type));
	for (uint32_t i = 0; i < ev->n_digests; i++) {
		hex = hex_dup(ev->digests[i].bytes, ev->digests[i].size);
		json_object_set_new(digests, mb_digest_alg_name(ev->digests[i].alg, name), json_string(hex));
		free(hex);
	}
	json_object_set_new(o, "digests", digests);
	hex = hex_dup(ev->data, ev->data_size);
	json_object_set_new(o, "data", json_string(hex ? hex : ""));
	free(hex);
	json_object_set_new(o, "decoded", decoded);
	if (mb_event_check_digest(ev, &check) == 0) {
		json_object_set_new(o, "digest_check", json_string(mb_digest_status_name(check.status)));
		if (check.rule)
			json_object_set_new(o, "digest_rule", json_string(check.rule));
	}
	if (ev->pcr >= MB_PCR_COUNT)
		json_object_set_new(o, "pcr_out_of_range", json_true());
	return o;
}

static void same_as(compare *c, const mb_event *ev, const jsonout *b, const json_t *o, size_t flags)
{
	char *ref = json_dumps(o, flags);
	size_t len, at = 0;

	assert_non_null(ref);
	len = strlen(ref);
	if (b->n != len || memcmp(b->p, ref, len) != 0) {
		while (at < len && at < b->n && ref[at] == b->p[at])
			at++;
		at = at > 40 ? at - 40 : 0; /* where they part, with some context */
		if (c->n_bad++ < 5)
			fprintf(stderr, "%s event %u%s, from byte %zu:\n jansson: %.100s\n stream: %.*s\n", c->path,
				ev->number, flags & JSON_COMPACT ? "" : " (pretty)", at, ref + at,
				(int) (b->n - at < 100 ? b->n - at : 100), b->p + at);
	}
	free(ref);
}

static int compare_event(void *ctx, const mb_event_log *view, const mb_event *ev, mb_error *err)
{
	compare *c = ctx;
	const mb_event *pev = mb_event_log_event(c->parsed, ev->number);
	jsonout b = { 0 }, p = { .pretty = true };
	json_t *o;

	(void) err;
	assert_non_null(pev);
	event_json_write(&b, view, ev, c->dec, NULL);
	assert_false(b.oom);
	/* The same bytes when the caller hands over the event's digest check (log show's worker). */
	{
		jsonout b2 = { 0 };
		mb_digest_check check;

		if (mb_event_check_digest(ev, &check) == 0) {
			event_json_write(&b2, view, ev, c->dec, &check);
			assert_false(b2.oom);
			assert_int_equal(b2.n, b.n);
			assert_memory_equal(b2.p, b.p, b.n);
		}
		free(b2.p);
	}
	event_json_write(&p, view, ev, c->dec, NULL);
	assert_false(p.oom);
	assert_int_equal(p.depth, 0);
	/* The public call: the same bytes, either layout. */
	{
		char *compact = mb_event_to_json(view, ev, false), *pretty = mb_event_to_json(view, ev, true);

		assert_non_null(compact);
		assert_non_null(pretty);
		assert_int_equal(strlen(compact), b.n);
		assert_memory_equal(compact, b.p, b.n);
		assert_int_equal(strlen(pretty), p.n);
		assert_memory_equal(pretty, p.p, p.n);
		free(compact);
		free(pretty);
	}
	o = reference_event(c->parsed, pev);
	if (o) {
		same_as(c, ev, &b, o, JSON_COMPACT);
		same_as(c, ev, &p, o, JSON_INDENT(2));
	} else {
		c->n_big++;
	}
	c->n_events++;
	json_decref(o);
	free(b.p);
	free(p.p);
	return 0;
}

static unsigned n_logs, n_events, n_bad, n_big;

static int visit(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	uint8_t *bytes = NULL;
	size_t size = 0;
	mb_event_log *log = NULL;
	mb_error err = { 0 };
	compare c = { path, NULL, NULL, 0, 0, 0 };

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
	n_big += c.n_big;
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
	fprintf(stderr, "%u events of %u logs compared with jansson (%u with integers over 2^63 - 1 not)\n", n_events,
		n_logs, n_big);
	assert_true(n_logs > 20);
	assert_true(n_events - n_big > 3000);
	assert_true(n_big < 20);
	assert_int_equal(n_bad, 0);
}

typedef struct collected {
	char *text;
	size_t n, calls, fail_at; /* fail_at: the call (from 1) that fails (0: none) */
} collected;

static int collect(void *ctx, const char *text, size_t len)
{
	collected *c = ctx;
	char *p;

	if (++c->calls == c->fail_at)
		return -ENOSPC;
	p = realloc(c->text, c->n + len + 1);
	assert_non_null(p);
	memcpy(p + c->n, text, len);
	c->n += len;
	p[c->n] = '\0';
	c->text = p;
	return 0;
}

static void read_corpus(const char *rel, uint8_t **data, size_t *size)
{
	const char *d = getenv("MB_TESTDATA");
	char path[1024];
	mb_error err = { 0 };

	snprintf(path, sizeof(path), "%s/corpus/%s", d ? d : "tests/data", rel);
	assert_int_equal(file_read(path, MB_LOG_MAX_SIZE, data, size, &err), 0);
}

/*
 * mb_event_log_write_json: the document jansson reads back holds every event as mb_event_to_json
 * writes it, in order, and a summary that counts them; a sink's failure stops it with its code;
 * a malformed log gives the sink nothing.
 */
static void test_log_document(void **state)
{
	uint8_t *data;
	size_t size, i, n;
	mb_event_log *log = NULL;
	mb_error err = { 0 };
	collected c = { 0 }, stop = { .fail_at = 1 }, none = { 0 };
	json_t *doc, *events;
	json_error_t jerr;

	(void) state;
	/* A desktop boot recorded by go-tpm-tools (several thousand events: many blocks). */
	read_corpus("go-tpm-tools/arch-linux-workstation.bin", &data, &size);
	assert_int_equal(mb_event_log_parse(data, size, &log, &err), 0);
	n = mb_event_log_count(log);
	assert_int_equal(mb_event_log_write_json(data, size, UINT32_MAX, false, collect, &c, &err), 0);
	assert_true(c.n > 0 && c.text[c.n - 1] == '\n');
	doc = json_loads(c.text, 0, &jerr);
	assert_non_null(doc);
	events = json_object_get(doc, "events");
	assert_int_equal(json_array_size(events), n);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "summary"), "events")), n);
	for (i = 0; i < n; i++) {
		char *want = mb_event_to_json(log, mb_event_log_event(log, i), false);
		char *got = json_dumps(json_array_get(events, i), JSON_COMPACT);

		assert_non_null(want);
		assert_non_null(got);
		/* An integer over 2^63 - 1 would not survive jansson: none in this log. */
		assert_string_equal(got, want);
		free(want);
		free(got);
	}
	json_decref(doc);

	/* The sink's error is the call's (this document is one piece: the first call). */
	assert_int_equal(mb_event_log_write_json(data, size, UINT32_MAX, true, collect, &stop, &err), -ENOSPC);
	assert_int_equal(stop.calls, 1);

	/* Cut inside the last record: an error before any output. */
	assert_true(mb_event_log_write_json(data, size - 3, UINT32_MAX, false, collect, &none, &err) < 0);
	assert_int_equal(none.calls, 0);

	free(c.text);
	free(stop.text);
	free(none.text);
	mb_event_log_free(log);
	free(data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus_identical),
		cmocka_unit_test(test_log_document),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
