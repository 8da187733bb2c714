/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "shared/fail.h"
#include "shared/fileio.h"
#include "shared/hex.h"
#include "shared/jsonout.h"
#include "tool/tool.h"
#include "tool/verbs.h"

static const char log_help[] =
	"Usage: mboot log COMMAND [OPTIONS]\n\n"
	"  show [LOG] [--json] [--pcr LIST]   every event: number, PCR, type, digests, decoded data\n"
	"  replay [LOG] [--json] [--bank NAME] PCR values per bank computed from the log\n"
	"  diff LOG_A LOG_B [--json]           events added, removed or changed, and the PCRs moved\n"
	"(--json is pretty-printed; --compact prints it on one line.)\n"
	"  extend LOG [--bank NAME] [--tcti T] replay the log into a TPM, event by event\n\n"
	"LOG defaults to " MB_DEFAULT_LOG ".\n"
	"Both TPM 1.2 (SHA-1) and TPM 2.0 crypto-agile logs are read.\n";

static const char show_help[] =
	"Usage: mboot log show [LOG] [--json] [--pcr LIST]\n\n"
	"Print every event of a firmware event log: its number, PCR, type, the digest of each\n"
	"bank, the decoded data, and whether the digest matches the data where the data\n"
	"is what was hashed (a mismatch means the data must not be trusted): a plain match says\n"
	"nothing, \"[digest ok (alternative form: RULE)]\" a match of another preimage than the\n"
	"spec's, \"[digest not checkable: WHY]\" text mboot cannot prove measured (systemd-boot/UKI\n"
	"command lines). A footer covers the whole log: the number of events, the events whose data\n"
	"does not hash to their digest (the first 32), and the PCRs replayed, as `log replay` prints them.\n\n"
	"  --json        one JSON document: {\"events\": [{\"index\", \"pcr\", \"type\", \"digests\", ...}],\n"
	"                \"summary\": {\"events\", \"events_shown\", \"digest_mismatches\",\n"
	"                \"mismatched_events\", \"banks\": {\"sha256\": {\"0\": \"<hex>\", ...}}}}\n"
	"  --compact     the JSON on one line (implies --json)\n"
	"  --pcr LIST    only events of these PCRs, e.g. 0,2,4-7\n\n"
	"LOG defaults to " MB_DEFAULT_LOG "; '-' reads stdin.\n"
	"Exit: 0 shown, 2 unreadable or malformed log (the message names the byte offset).\n";

static const char replay_help[] =
	"Usage: mboot log replay [LOG] [--json] [--bank NAME]\n\n"
	"Replay the log: compute, for every bank the log carries, the value each PCR holds after\n"
	"the events it records. EV_NO_ACTION events are not extended; a StartupLocality event sets\n"
	"PCR 0's start to 0...0L and an H-CRTM event to 0...04; PCRs 17-22 start at all 0xFF;\n"
	"events for PCR indices above 23 are skipped; banks mboot cannot compute are named and\n"
	"skipped.\n\n"
	"The values are printed in tpm2_pcrread's layout, as 'mboot pcrs' prints them (so the two\n"
	"diff), and read back by 'mboot verify --pcrs'; notes go to stderr.\n\n"
	"  --json        {\"banks\": {\"sha256\": {\"0\": \"<hex>\", ...}}, \"info\": {...}}\n"
	"  --compact     the JSON on one line (implies --json)\n"
	"  --bank NAME   only this bank (sha1, sha256, sha384, sha512, sm3_256)\n\n"
	"Exit: 0 replayed, 2 unreadable or malformed log.\n";

static const char diff_help[] =
	"Usage: mboot log diff LOG_A LOG_B [--json]\n\n"
	"Compare two boots: align the events of each PCR, list those removed (in A only), added\n"
	"(in B only) or changed (same place and type, other digests or other measured data), and\n"
	"name the PCRs whose replayed values differ. Events whose digests agree are the same even\n"
	"when their data differs where the digest does not cover it (an image's load address); the\n"
	"data of EV_NO_ACTION events, and data that does not hash to its digest, is compared byte\n"
	"for byte. A changed event shows what differs: each bank's digests, A's then B's, and the\n"
	"data of each side when it differs. The crypto-agile header is not compared.\n\n"
	"  --json        {\"entries\": [{\"change\", \"pcr\", \"a\", \"b\", \"differs\"}], \"pcrs_moved\": [...],\n"
	"                \"identical\"}; a changed entry's \"differs\": {\"digests\": [banks],\n"
	"                \"data\": bool, \"data_measured\": bool}\n"
	"  --compact     the JSON on one line (implies --json)\n\n"
	"Exit: 0 the logs record the same boot, 1 they differ, 2 unreadable or malformed log.\n";

enum { OPT_PCR = 0x100, OPT_BANK, OPT_HELP };

static const struct option log_options[] = {
	TOOL_JSON_OPTIONS,
	{ "pcr", required_argument, NULL, OPT_PCR },
	{ "bank", required_argument, NULL, OPT_BANK },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

typedef struct log_args {
	tool_json json;
	uint32_t pcr_mask;
	const mb_digest_info *bank;
	int n_paths;
	const char *paths[2];
} log_args;

/* Common option parsing; allowed says which options this subcommand takes. */
static int parse_args(const char *verb, const char *help, int argc, char **argv, const char *allowed,
		      int max_paths, log_args *a)
{
	int c;

	memset(a, 0, sizeof(*a));
	a->pcr_mask = UINT32_MAX;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", log_options, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(help, stdout);
			return -1;
		case TOOL_OPT_JSON:
		case TOOL_OPT_COMPACT:
			if (!strchr(allowed, 'j'))
				return tool_usage_error(verb, "%s is not an option here", argv[optind - 1]);
			tool_json_option(c, &a->json);
			break;
		case OPT_PCR:
			if (!strchr(allowed, 'p'))
				return tool_usage_error(verb, "--pcr is not an option here");
			if (tool_parse_pcr_list(optarg, &a->pcr_mask) < 0)
				return tool_usage_error(verb, "bad PCR list '%s' (e.g. 0,2,4-7)", optarg);
			break;
		case OPT_BANK:
			if (!strchr(allowed, 'b'))
				return tool_usage_error(verb, "--bank is not an option here");
			if (tool_bank_arg(verb, optarg, &a->bank) != EXIT_OK)
				return EXIT_USAGE;
			break;
		default:
			return tool_usage_error(verb, "unknown option '%s'", argv[optind - 1]);
		}
	}
	for (; optind < argc; optind++) {
		if (a->n_paths >= max_paths)
			return tool_usage_error(verb, "unexpected argument '%s'", argv[optind]);
		a->paths[a->n_paths++] = argv[optind];
	}
	return 0;
}

/*
 * Why the digest of an event that shows text as measured cannot be checked, or NULL when the
 * label would say nothing: its data is not what the digest covers by nature (an image's device
 * path, a GRUB file's path, shim's variable name). kind: the decoded data's.
 */
static const char *uncheckable_text(const mb_event *ev, const char *kind)
{
	if (ev->type != MB_EV_IPL)
		return NULL;
	if (strcmp(kind, "utf16_string") == 0)
		return "systemd-boot/UKI text (UTF-16), mboot does not recompute its digest; not proven measured";
	if (strncmp(kind, "grub_", 5) == 0 && strcmp(kind, "grub_file") != 0)
		return "a GRUB string in a form mboot does not hash; not proven measured";
	if (strcmp(kind, "string") == 0)
		return "text mboot does not know how it was hashed; not proven measured";
	return NULL;
}

/* The footer of `log show`: the log's events, the data that does not hash to its digest. */
#define SHOW_MISMATCHES_LISTED 32u

typedef struct show_summary {
	size_t events, shown, mismatches;
	uint32_t listed[SHOW_MISMATCHES_LISTED]; /* the first mismatching events' numbers */
} show_summary;

static void summary_add(show_summary *sum, const mb_event *ev, bool shown, int status)
{
	sum->events++;
	sum->shown += shown;
	if (status != MB_DIGEST_MISMATCH)
		return;
	if (sum->mismatches < SHOW_MISMATCHES_LISTED)
		sum->listed[sum->mismatches] = ev->number;
	sum->mismatches++;
}

static void print_summary_text(const show_summary *sum, const mb_pcr_values *v)
{
	size_t i;

	printf("\n%zu events", sum->events);
	if (sum->shown != sum->events)
		printf(" (%zu shown)", sum->shown);
	printf("; event data not matching its digest: %zu", sum->mismatches);
	for (i = 0; i < sum->mismatches && i < SHOW_MISMATCHES_LISTED; i++)
		printf("%s#%u", i ? ", " : " (", sum->listed[i]);
	if (sum->mismatches > SHOW_MISMATCHES_LISTED)
		printf(", ... %zu more", sum->mismatches - SHOW_MISMATCHES_LISTED);
	printf("%s\nPCRs replayed from the log:\n", sum->mismatches ? ")" : "");
	(void) tool_print_pcr_values(v); /* as `log replay` prints them; it says any failure */
}

/*
 * --json: the same as the document's last member, "summary": {"events", "events_shown",
 * "digest_mismatches", "mismatched_events" (the first 32 numbers), "banks" (the PCR-values shape)}.
 */
static void write_summary_json(jsonout *o, const show_summary *sum, const mb_pcr_values *v)
{
	size_t i, b;
	bool first = true;

	jsonout_lit(o, ",\"summary\":{\"events\":");
	jsonout_u64(o, sum->events);
	jsonout_lit(o, ",\"events_shown\":");
	jsonout_u64(o, sum->shown);
	jsonout_lit(o, ",\"digest_mismatches\":");
	jsonout_u64(o, sum->mismatches);
	jsonout_lit(o, ",\"mismatched_events\":[");
	for (i = 0; i < sum->mismatches && i < SHOW_MISMATCHES_LISTED; i++) {
		if (i)
			jsonout_lit(o, ",");
		jsonout_u64(o, sum->listed[i]);
	}
	jsonout_lit(o, "],\"banks\":{");
	for (b = 0; b < mb_pcr_values_n_banks(v); b++) {
		uint16_t alg = mb_pcr_values_bank_alg(v, b);
		size_t digest_size = mb_digest_by_alg(alg)->size;
		char name[8];
		uint32_t p;
		bool first_pcr = true;

		if (!first)
			jsonout_lit(o, ",");
		first = false;
		jsonout_lit(o, "\"");
		jsonout_raw(o, tool_alg_name(alg, name));
		jsonout_lit(o, "\":{");
		for (p = 0; p < MB_PCR_COUNT; p++) {
			const uint8_t *value = mb_pcr_values_get(v, alg, p);

			if (!value)
				continue;
			if (!first_pcr)
				jsonout_lit(o, ",");
			first_pcr = false;
			jsonout_lit(o, "\"");
			jsonout_u64(o, p);
			jsonout_lit(o, "\":\"");
			jsonout_hex(o, value, digest_size);
			jsonout_lit(o, "\"");
		}
		jsonout_lit(o, "}");
	}
	jsonout_lit(o, "}}");
}

/* Returns the digest check's status (-1: none). */
static int print_event_text(const mb_event_log *log, const mb_event *ev, mb_event_decoded *dec)
{
	char tbuf[16], hex[2 * MB_UNKNOWN_DIGEST_MAX + 1];
	mb_digest_check check;
	bool decoded = mb_event_decode(log, ev, dec) == 0;
	const char *why;
	int status = -1;
	uint32_t i;

	printf("#%-5u PCR %-3u %s", ev->number, ev->pcr, tool_type_name(ev->type, tbuf));
	if (ev->pcr >= MB_PCR_COUNT)
		printf("  (PCR index out of range: not extended)");
	if (mb_event_check_digest(ev, &check) == 0) {
		status = (int) check.status;
		/* A plain pass says nothing; anything less than one says what it is. */
		if (check.status == MB_DIGEST_MISMATCH)
			printf("  [DIGEST MISMATCH: data does not hash to the digest, not trusted]");
		else if (check.status == MB_DIGEST_MATCH_ALTERNATE)
			printf("  [digest ok (alternative form: %s)]", check.rule);
		else if (check.status == MB_DIGEST_UNCHECKABLE && decoded &&
			 (why = uncheckable_text(ev, mb_event_decoded_kind(dec))))
			printf("  [digest not checkable: %s]", why);
	}
	putchar('\n');
	for (i = 0; i < ev->n_digests; i++) {
		char name[8];

		printf("       %-7s %s\n", tool_alg_name(ev->digests[i].alg, name),
		       hex_format(ev->digests[i].bytes, ev->digests[i].size, hex));
	}
	if (decoded)
		printf("       %s\n", mb_event_decoded_description(dec));
	return status;
}

/* The digest check's status of an event not shown (-1: none). */
static int check_status(const mb_event *ev)
{
	mb_digest_check check;

	return mb_event_check_digest(ev, &check) == 0 ? (int) check.status : -1;
}

static bool pcr_selected(const mb_event *ev, uint32_t mask)
{
	return ev->pcr < MB_PCR_COUNT ? (mask & (1u << ev->pcr)) != 0 : mask == UINT32_MAX;
}

/*
 * `log show --json` hashes every event twice over: its data for the digest check, its digests
 * into the replay. A worker thread does both while the main thread writes the JSON: it checks
 * the events in order, publishing how far it got (checks[0..done) are final), then replays.
 */
typedef struct show_work {
	const uint8_t *data;
	size_t size;
	mb_digest_check *checks; /* by event number; status -1: not checked */
	size_t n_events, checked;
	mb_pcr_values *v;
	int replay_rc;
	mb_error err;
	pthread_mutex_t lock;
	pthread_cond_t more;
	size_t done;
} show_work;

#define SHOW_CHECKS_BATCH 256u

static void work_publish(show_work *w, size_t done)
{
	pthread_mutex_lock(&w->lock);
	w->done = done;
	pthread_cond_signal(&w->more);
	pthread_mutex_unlock(&w->lock);
}

static int work_check_event(void *ctx, const mb_event_log *log, const mb_event *ev, mb_error *err)
{
	show_work *w = ctx;

	(void) log;
	(void) err;
	if (ev->number >= w->n_events)
		return 0;
	if (mb_event_check_digest(ev, &w->checks[ev->number]) < 0)
		w->checks[ev->number] = (mb_digest_check) { .status = (mb_digest_status) -1 };
	w->checked = ev->number + 1;
	if ((ev->number + 1) % SHOW_CHECKS_BATCH == 0)
		work_publish(w, ev->number + 1);
	return 0;
}

static void *work_run(void *ctx)
{
	show_work *w = ctx;
	mb_error ignored = { 0 };
	size_t i;

	/* The log was checked already, so this visit does not fail; if it did, what it did not
	 * reach is "not checked" (the JSON then checks those events itself). */
	if (mb_event_log_visit(w->data, w->size, work_check_event, w, &ignored) < 0)
		for (i = w->checked; i < w->n_events; i++)
			w->checks[i] = (mb_digest_check) { .status = (mb_digest_status) -1 };
	work_publish(w, w->n_events);
	w->replay_rc = mb_replay_log_data(w->data, w->size, w->v, NULL, &w->err);
	return NULL;
}

/* The check of event i, waiting for the worker to get there. */
static const mb_digest_check *work_check(show_work *w, size_t *seen, uint32_t i)
{
	if (i >= w->n_events)
		return NULL;
	if (i >= *seen) {
		pthread_mutex_lock(&w->lock);
		while (w->done <= i)
			pthread_cond_wait(&w->more, &w->lock);
		*seen = w->done;
		pthread_mutex_unlock(&w->lock);
	}
	return (int) w->checks[i].status < 0 ? NULL : &w->checks[i];
}

typedef struct show_json {
	jsonout out;
	mb_event_decoded *dec;
	uint32_t pcr_mask;
	bool first;
	show_summary sum;
	show_work *work;
	size_t seen; /* checks the main thread knows are done */
} show_json;

static int count_event(void *ctx, const mb_event_log *log, const mb_event *ev, mb_error *err)
{
	(void) log;
	(void) ev;
	(void) err;
	(*(size_t *) ctx)++;
	return 0;
}

/* mb_event_log_visit() callback: the document's head at event 0 (the log's format is known
 * from there), then every selected event. */
static int show_json_event(void *ctx, const mb_event_log *log, const mb_event *ev, mb_error *err)
{
	show_json *s = ctx;
	const mb_digest_check *check = work_check(s->work, &s->seen, ev->number);
	bool shown = pcr_selected(ev, s->pcr_mask);

	if (ev->number == 0) {
		const mb_spec_id *spec = mb_event_log_spec_id(log);

		if (mb_event_log_format(log) == MB_LOG_FORMAT_CRYPTO_AGILE)
			jsonout_lit(&s->out, "{\"format\":\"crypto-agile\",");
		else
			jsonout_lit(&s->out, "{\"format\":\"sha1\",");
		/* Only a log whose header holds exactly "Spec ID Event03" has one: nothing to escape. */
		if (spec) {
			jsonout_lit(&s->out, "\"spec_id\":\"");
			jsonout_raw(&s->out, spec->signature);
			jsonout_lit(&s->out, "\",");
		}
		jsonout_lit(&s->out, "\"events\":[");
	}
	if (shown) {
		if (!s->first)
			jsonout_lit(&s->out, ",");
		s->first = false;
		summary_add(&s->sum, ev, true, tool_event_write(&s->out, log, ev, s->dec, check));
	} else {
		summary_add(&s->sum, ev, false, check ? (int) check->status : check_status(ev));
	}
	if (s->out.oom)
		return set_error(err, -ENOMEM, "out of memory");
	if (s->out.n >= MB_JSONOUT_FLUSH && jsonout_flush(&s->out, stdout) < 0)
		return set_error(err, -EIO, "write error");
	return 0;
}

/*
 * `log show --json`: the log is checked first (a malformed log prints nothing but the error,
 * as when it was parsed whole), then read a second time, each event written as it comes: no
 * event array, and a 100,000-event log never becomes one JSON tree. The digest checks and the
 * replay (the summary's PCRs) are the worker's (show_work).
 */
static int log_show_json(const char *path, uint32_t pcr_mask, tool_json style)
{
	show_json s = { .out.pretty = style != TOOL_JSON_COMPACT, .pcr_mask = pcr_mask, .first = true };
	show_work w = { .lock = PTHREAD_MUTEX_INITIALIZER, .more = PTHREAD_COND_INITIALIZER };
	mb_error err = { 0 };
	uint8_t *data = NULL;
	size_t size = 0;
	pthread_t worker;
	bool threaded = false;
	int rc;

	if (file_read(path, MB_LOG_MAX_SIZE, &data, &size, &err) < 0) {
		tool_report(path, &err);
		return EXIT_USAGE;
	}
	if (mb_event_log_visit(data, size, count_event, &w.n_events, &err) < 0) {
		tool_report(path, &err);
		free(data);
		return EXIT_USAGE;
	}
	w.data = data;
	w.size = size;
	w.checks = malloc((w.n_events ? w.n_events : 1) * sizeof(*w.checks));
	w.v = tool_pcr_values_new();
	s.dec = mb_event_decoded_new();
	s.work = &w;
	if (!w.checks || !w.v || !s.dec) {
		rc = set_error(&err, -ENOMEM, "out of memory");
		goto out;
	}
	/* Without a thread the same work is done first, in this one. */
	threaded = pthread_create(&worker, NULL, work_run, &w) == 0;
	if (!threaded)
		work_run(&w);
	rc = mb_event_log_visit(data, size, show_json_event, &s, &err);
	if (threaded)
		pthread_join(worker, NULL);
	threaded = false;
	if (rc == 0 && w.replay_rc < 0)
		rc = w.replay_rc, err = w.err;
	if (rc == 0) {
		jsonout_lit(&s.out, "]");
		write_summary_json(&s.out, &s.sum, w.v);
		jsonout_lit(&s.out, "}\n");
		if (s.out.oom)
			rc = set_error(&err, -ENOMEM, "out of memory");
	}
	if (jsonout_flush(&s.out, stdout) < 0 && rc == 0)
		rc = set_error(&err, -EIO, "write error");
out:
	free(s.out.p);
	mb_event_decoded_free(s.dec);
	mb_pcr_values_free(w.v);
	free(w.checks);
	free(data);
	if (rc < 0) {
		/* Stdout may hold half a document: say so rather than pretend it is whole. */
		tool_report(path, &err);
		return EXIT_USAGE;
	}
	return fflush(stdout) == 0 ? EXIT_OK : EXIT_USAGE;
}

static int log_show(int argc, char **argv)
{
	log_args a;
	mb_event_log *log = NULL;
	mb_event_decoded *dec;
	mb_pcr_values *v;
	mb_error err = { 0 };
	show_summary sum = { 0 };
	size_t i, n;
	uint64_t toff, tsize;
	mb_trailer_kind t;
	int rc = parse_args("log show", show_help, argc, argv, "jp", 1, &a);
	const char *path = a.n_paths ? a.paths[0] : MB_DEFAULT_LOG;

	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	if (a.json)
		return log_show_json(path, a.pcr_mask, a.json);
	rc = tool_load_log(path, &log);
	if (rc)
		return rc;
	dec = mb_event_decoded_new();
	v = tool_pcr_values_new();
	if (!dec || !v) {
		mb_event_decoded_free(dec);
		mb_pcr_values_free(v);
		mb_event_log_free(log);
		tool_errorf("out of memory");
		return EXIT_USAGE;
	}
	if (mb_replay_log(log, SIZE_MAX, v, NULL, &err) < 0) {
		tool_report(path, &err);
		rc = EXIT_USAGE;
		goto out;
	}
	n = mb_event_log_count(log);
	for (i = 0; i < n; i++) {
		const mb_event *ev = mb_event_log_event(log, i);

		if (pcr_selected(ev, a.pcr_mask))
			summary_add(&sum, ev, true, print_event_text(log, ev, dec));
		else
			summary_add(&sum, ev, false, check_status(ev));
	}
	t = mb_event_log_trailer(log, &toff, &tsize);
	if (t != MB_TRAILER_NONE)
		printf("(%llu bytes of 0x%s padding after the last event, from byte %llu)\n",
		       (unsigned long long) tsize, t == MB_TRAILER_FF_PADDING ? "ff" : "00",
		       (unsigned long long) toff);
	print_summary_text(&sum, v);
	rc = fflush(stdout) == 0 ? EXIT_OK : EXIT_USAGE;
out:
	mb_event_decoded_free(dec);
	mb_pcr_values_free(v);
	mb_event_log_free(log);
	return rc;
}

static json_object *replay_info_json(const mb_replay_info *info, const mb_pcr_values *v)
{
	json_object *o = json_object_new_object();
	size_t b;

	for (b = 0; b < mb_pcr_values_n_banks(v); b++) {
		json_object *list;
		uint32_t p;

		if (!info->incomplete[b])
			continue;
		/* PCRs some event extended without a digest for this bank: the value is not the TPM's. */
		list = json_object_new_array();
		for (p = 0; p < MB_PCR_COUNT; p++)
			if (info->incomplete[b] & (1u << p))
				json_object_array_add(list, json_object_new_int((int) p));
		if (!json_object_object_get_ex(o, "incomplete", NULL))
			json_object_object_add(o, "incomplete", json_object_new_object());
		json_object_object_add(json_object_object_get(o, "incomplete"),
				       mb_digest_by_alg(mb_pcr_values_bank_alg(v, b))->name, list);
	}

	if (info->startup_locality_seen)
		json_object_object_add(o, "startup_locality", json_object_new_int(info->startup_locality));
	json_object_object_add(o, "hcrtm", json_object_new_boolean(info->hcrtm));
	json_object_object_add(o, "events_extended", json_object_new_int64(info->events_extended));
	json_object_object_add(o, "events_not_extended_no_action", json_object_new_int64(info->events_no_action));
	json_object_object_add(o, "events_pcr_out_of_range", json_object_new_int64(info->events_out_of_range));
	if (info->n_unknown_algs) {
		json_object *u = json_object_new_array();
		size_t i;

		for (i = 0; i < info->n_unknown_algs; i++) {
			char name[8];
			json_object_array_add(u, json_object_new_string(tool_alg_name(info->unknown_algs[i], name)));
		}
		json_object_object_add(o, "banks_not_replayed", u);
	}
	return o;
}

static int log_replay(int argc, char **argv)
{
	log_args a;
	const char *path;
	uint8_t *data = NULL;
	size_t size = 0;
	mb_pcr_values *v = NULL;
	mb_replay_info info;
	mb_error err = { 0 };
	int rc = parse_args("log replay", replay_help, argc, argv, "jb", 1, &a);
	size_t b;

	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	path = a.n_paths ? a.paths[0] : MB_DEFAULT_LOG;
	if (file_read(path, MB_LOG_MAX_SIZE, &data, &size, &err) < 0) {
		tool_report(path, &err);
		return EXIT_USAGE;
	}
	v = tool_pcr_values_new();
	if (!v) {
		rc = EXIT_USAGE;
		goto out;
	}
	/* One pass, no event array: the same checks and errors as parsing the log first. */
	if (mb_replay_log_data(data, size, v, &info, &err) < 0) {
		tool_report(path, &err);
		rc = EXIT_USAGE;
		goto out;
	}
	if (a.bank) {
		size_t n = mb_pcr_values_n_banks(v), keep;

		for (keep = 0; keep < n && mb_pcr_values_bank_alg(v, keep) != a.bank->alg; keep++)
			;
		if (keep == n) {
			tool_errorf("%s: the log has no %s bank", path, a.bank->name);
			rc = EXIT_USAGE;
			goto out;
		}
		/* The others go; the kept bank becomes bank 0 (its info.incomplete[] entry with it). */
		while (mb_pcr_values_n_banks(v) > 1) {
			size_t drop = mb_pcr_values_bank_alg(v, 0) == a.bank->alg ? 1 : 0;

			if (mb_pcr_values_remove_bank(v, mb_pcr_values_bank_alg(v, drop)) < 0)
				break;
		}
	}
	if (a.json) {
		char *s = mb_pcr_values_to_json(v, false);
		json_object *root = s ? json_tokener_parse(s) : NULL;

		free(s);
		if (!root) {
			tool_errorf("out of memory");
			rc = EXIT_USAGE;
			goto out;
		}
		json_object_object_add(root, "info", replay_info_json(&info, v));
		tool_json_print(a.json, root);
		json_object_put(root);
	} else {
		rc = tool_print_pcr_values(v);
		if (rc != EXIT_OK)
			goto out;
		/* Notes go to stderr: stdout stays a PCR file that `verify --pcrs` reads back. */
		if (info.startup_locality_seen)
			tool_notef("StartupLocality %u: PCR 0 started at 0...%02x", info.startup_locality,
				   info.startup_locality);
		if (info.hcrtm)
			tool_notef("H-CRTM event: PCR 0 started at 0...04");
		if (info.events_out_of_range)
			tool_notef("%u events for PCR indices above 23 were not extended", info.events_out_of_range);
		for (b = 0; b < mb_pcr_values_n_banks(v); b++)
			if (info.incomplete[b])
				tool_notef("%s: some events carry no digest for this bank; PCRs 0x%06x are incomplete",
					   mb_digest_by_alg(mb_pcr_values_bank_alg(v, b))->name, info.incomplete[b]);
		for (b = 0; b < info.n_unknown_algs; b++)
			tool_notef("bank 0x%04x is carried by the log but mboot cannot compute it: not replayed",
				   info.unknown_algs[b]);
	}
	rc = EXIT_OK;
out:
	mb_pcr_values_free(v);
	free(data);
	return rc;
}

static json_object *diff_side(const mb_event_log *log, const mb_event *ev)
{
	return ev ? tool_event_json(log, ev) : NULL;
}

static const char *change_name(mb_diff_kind k)
{
	return k == MB_DIFF_ADDED ? "added" : k == MB_DIFF_REMOVED ? "removed" : "changed";
}

static void print_side(const char *tag, const mb_event_log *log, const mb_event *ev)
{
	char tbuf[16], *desc = mb_event_description(log, ev);
	mb_digest_check check;

	printf("    %s #%u %s: %s%s\n", tag, ev->number, tool_type_name(ev->type, tbuf), desc ? desc : "",
	       mb_event_check_digest(ev, &check) == 0 && check.status == MB_DIGEST_MISMATCH ?
	       "  [DIGEST MISMATCH: data not trusted]" : "");
	free(desc);
}

/* The digest of alg in ev as hex, or "(none)" when ev has no digest of that bank. */
static const char *digest_hex(const mb_event *ev, uint16_t alg, char hex[2 * MB_UNKNOWN_DIGEST_MAX + 1])
{
	const mb_event_digest *d = mb_event_digest_for(ev, alg);

	return d ? hex_format(d->bytes, d->size, hex) : "(none)";
}

static bool digest_same(const mb_event *a, const mb_event *b, uint16_t alg)
{
	const mb_event_digest *x = mb_event_digest_for(a, alg), *y = mb_event_digest_for(b, alg);

	return x && y && x->size == y->size && memcmp(x->bytes, y->bytes, x->size) == 0;
}

/*
 * A changed event: what differs, not two lines that read the same. Every bank whose digests
 * differ (or that one side lacks), A's then B's; the data as each side describes it when it
 * differs (measured data in hex when the descriptions read the same), else once, for context.
 */
static void print_changed(const mb_diff_entry *e, const mb_event_log *la, const mb_event_log *lb)
{
	char tbuf[16], name[8], hex[2 * MB_UNKNOWN_DIGEST_MAX + 1];
	char *da = mb_event_description(la, e->a), *db = mb_event_description(lb, e->b);
	const char *what = e->data_measured ? "data" : "data (not measured)";
	mb_digest_check check;
	bool same_desc;
	uint32_t i;

	printf("PCR %u: changed: #%u in A, #%u in B, %s\n", e->pcr, e->a->number, e->b->number,
	       tool_type_name(e->a->type, tbuf));
	for (i = 0; i < e->a->n_digests; i++) {
		uint16_t alg = e->a->digests[i].alg;

		if (digest_same(e->a, e->b, alg))
			continue;
		printf("    - %-7s %s\n", tool_alg_name(alg, name), digest_hex(e->a, alg, hex));
		printf("    + %-7s %s\n", tool_alg_name(alg, name), digest_hex(e->b, alg, hex));
	}
	for (i = 0; i < e->b->n_digests; i++) {
		uint16_t alg = e->b->digests[i].alg;

		if (mb_event_digest_for(e->a, alg))
			continue;
		printf("    - %-7s (none)\n", tool_alg_name(alg, name));
		printf("    + %-7s %s\n", tool_alg_name(alg, name), digest_hex(e->b, alg, hex));
	}
	same_desc = da && db && strcmp(da, db) == 0;
	/* Unmeasured bytes that the descriptions do not show (a load address) are not worth hex. */
	if (!(e->differs & MB_DIFF_DATA) || (same_desc && !e->data_measured)) {
		printf("      %s: %s\n", what, da ? da : "");
	} else if (!same_desc) {
		printf("    - %s: %s\n", what, da);
		printf("    + %s: %s\n", what, db);
	} else {
		char *ha = hex_dup(e->a->data, e->a->data_size), *hb = hex_dup(e->b->data, e->b->data_size);

		printf("    - %s: %s (hex)\n", what, ha ? ha : "");
		printf("    + %s: %s (hex)\n", what, hb ? hb : "");
		free(ha);
		free(hb);
	}
	if (mb_event_check_digest(e->a, &check) == 0 && check.status == MB_DIGEST_MISMATCH)
		printf("    A's data does not hash to its digest: not trusted\n");
	if (mb_event_check_digest(e->b, &check) == 0 && check.status == MB_DIGEST_MISMATCH)
		printf("    B's data does not hash to its digest: not trusted\n");
	free(da);
	free(db);
}

/* --json: "differs": {"digests": [banks whose digests differ], "data": bool, "data_measured": bool}. */
static json_object *differs_json(const mb_diff_entry *e)
{
	json_object *o = json_object_new_object(), *banks = json_object_new_array();
	const mb_event *sides[2] = { e->a, e->b };
	uint32_t i, s;

	for (s = 0; s < 2; s++)
		for (i = 0; i < sides[s]->n_digests; i++) {
			uint16_t alg = sides[s]->digests[i].alg;
			char name[8];

			/* B's banks: only those A lacks (A's loop named the rest). */
			if (digest_same(e->a, e->b, alg) || (s == 1 && mb_event_digest_for(e->a, alg)))
				continue;
			json_object_array_add(banks, json_object_new_string(tool_alg_name(alg, name)));
		}
	json_object_object_add(o, "digests", banks);
	json_object_object_add(o, "data", json_object_new_boolean((e->differs & MB_DIFF_DATA) != 0));
	json_object_object_add(o, "data_measured", json_object_new_boolean(e->data_measured));
	return o;
}

static int log_diff(int argc, char **argv)
{
	log_args a;
	mb_event_log *la = NULL, *lb = NULL;
	mb_diff *d = NULL;
	mb_error err = { 0 };
	int rc = parse_args("log diff", diff_help, argc, argv, "j", 2, &a);
	size_t i;
	uint32_t p;

	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	if (a.n_paths != 2)
		return tool_usage_error("log diff", "needs two logs");
	rc = tool_load_log(a.paths[0], &la);
	if (rc == 0)
		rc = tool_load_log(a.paths[1], &lb);
	if (rc)
		goto out;
	d = calloc(1, sizeof(*d));
	if (!d || mb_log_diff(la, lb, d, &err) < 0) {
		tool_report("diff", &err);
		rc = EXIT_USAGE;
		goto out;
	}
	if (a.json) {
		json_object *root = json_object_new_object(), *arr = json_object_new_array(),
			    *moved = json_object_new_array();

		for (i = 0; i < d->n_entries; i++) {
			const mb_diff_entry *e = &d->entries[i];
			json_object *o = json_object_new_object();

			json_object_object_add(o, "change", json_object_new_string(change_name(e->kind)));
			json_object_object_add(o, "pcr", json_object_new_int64(e->pcr));
			json_object_object_add(o, "a", diff_side(la, e->a));
			json_object_object_add(o, "b", diff_side(lb, e->b));
			if (e->kind == MB_DIFF_CHANGED)
				json_object_object_add(o, "differs", differs_json(e));
			json_object_array_add(arr, o);
		}
		for (p = 0; p < MB_PCR_COUNT; p++)
			if (d->pcrs_moved & (1u << p))
				json_object_array_add(moved, json_object_new_int(p));
		json_object_object_add(root, "entries", arr);
		json_object_object_add(root, "pcrs_moved", moved);
		json_object_object_add(root, "identical", json_object_new_boolean(d->n_entries == 0));
		tool_json_print(a.json, root);
		json_object_put(root);
	} else {
		if (d->n_entries == 0)
			printf("The logs record the same events.\n");
		for (i = 0; i < d->n_entries; i++) {
			const mb_diff_entry *e = &d->entries[i];

			if (e->kind == MB_DIFF_CHANGED) {
				print_changed(e, la, lb);
				continue;
			}
			printf("PCR %u: %s\n", e->pcr, change_name(e->kind));
			if (e->a)
				print_side("-", la, e->a);
			if (e->b)
				print_side("+", lb, e->b);
		}
		if (d->pcrs_moved) {
			bool first = true;

			printf("PCRs moved:");
			for (p = 0; p < MB_PCR_COUNT; p++)
				if (d->pcrs_moved & (1u << p)) {
					printf("%s %u", first ? "" : ",", p);
					first = false;
				}
			putchar('\n');
		}
	}
	rc = d->n_entries ? EXIT_FAILED : EXIT_OK;
out:
	if (d)
		mb_diff_done(d);
	free(d);
	mb_event_log_free(la);
	mb_event_log_free(lb);
	return rc;
}

static const tool_command log_commands[] = {
	{ "show", log_show },
	{ "replay", log_replay },
	{ "diff", log_diff },
	{ "extend", log_extend },
	{ NULL, NULL },
};

int verb_log(int argc, char **argv)
{
	return tool_dispatch("log", log_help, log_commands, argc, argv);
}
