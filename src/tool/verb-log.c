/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
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
	"  extend LOG [--bank NAME] [--tcti T] replay the log into a TPM, event by event\n\n"
	"LOG defaults to " MB_DEFAULT_LOG ".\n"
	"Both TPM 1.2 (SHA-1) and TPM 2.0 crypto-agile logs are read.\n";

static const char show_help[] =
	"Usage: mboot log show [LOG] [--json] [--pcr LIST]\n\n"
	"Print every event of a firmware event log: its number, PCR, type, the digest of each\n"
	"bank, the decoded event data, and whether the digest matches the data where the data\n"
	"is what was hashed (a mismatch means the data must not be trusted).\n\n"
	"  --json        one JSON document: {\"events\": [{\"index\", \"pcr\", \"type\", \"digests\", ...}]}\n"
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
	"  --json        {\"banks\": {\"sha256\": {\"0\": \"<hex>\", ...}}, \"info\": {...}}\n"
	"  --bank NAME   only this bank (sha1, sha256, sha384, sha512, sm3_256)\n\n"
	"Exit: 0 replayed, 2 unreadable or malformed log.\n";

static const char diff_help[] =
	"Usage: mboot log diff LOG_A LOG_B [--json]\n\n"
	"Compare two boots: align the events of each PCR, list those removed (in A only), added\n"
	"(in B only) or changed (same place and type, different digest or data), and name the PCRs\n"
	"whose replayed values differ. The crypto-agile header is not compared.\n\n"
	"  --json        {\"entries\": [{\"change\", \"pcr\", \"a\", \"b\"}], \"pcrs_moved\": [...]}\n\n"
	"Exit: 0 the logs record the same boot, 1 they differ, 2 unreadable or malformed log.\n";

enum { OPT_JSON = 0x100, OPT_PCR, OPT_BANK, OPT_HELP };

static const struct option log_options[] = {
	{ "json", no_argument, NULL, OPT_JSON },
	{ "pcr", required_argument, NULL, OPT_PCR },
	{ "bank", required_argument, NULL, OPT_BANK },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

typedef struct log_args {
	bool json;
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
		case OPT_JSON:
			if (!strchr(allowed, 'j'))
				return tool_usage_error(verb, "--json is not an option here");
			a->json = true;
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

static void print_event_text(const mb_event_log *log, const mb_event *ev, mb_event_decoded *dec)
{
	char tbuf[16], hex[2 * MB_UNKNOWN_DIGEST_MAX + 1];
	mb_digest_check check;
	uint32_t i;

	printf("#%-5u PCR %-3u %s", ev->number, ev->pcr, tool_type_name(ev->type, tbuf));
	if (ev->pcr >= MB_PCR_COUNT)
		printf("  (PCR index out of range: not extended)");
	if (mb_event_check_digest(ev, &check) == 0) {
		if (check.status == MB_DIGEST_MISMATCH)
			printf("  [DIGEST MISMATCH: data does not hash to the digest, not trusted]");
		else if (check.status == MB_DIGEST_MATCH_ALTERNATE)
			printf("  [digest matches %s]", check.rule);
	}
	putchar('\n');
	for (i = 0; i < ev->n_digests; i++) {
		char name[8];

		printf("       %-7s %s\n", tool_alg_name(ev->digests[i].alg, name),
		       hex_format(ev->digests[i].bytes, ev->digests[i].size, hex));
	}
	if (mb_event_decode(log, ev, dec) == 0)
		printf("       %s\n", mb_event_decoded_description(dec));
}

static bool pcr_selected(const mb_event *ev, uint32_t mask)
{
	return ev->pcr < MB_PCR_COUNT ? (mask & (1u << ev->pcr)) != 0 : mask == UINT32_MAX;
}

typedef struct show_json {
	jsonout out;
	mb_event_decoded *dec;
	uint32_t pcr_mask;
	bool first;
} show_json;

/* mb_event_log_visit() callback: the document's head at event 0 (the log's format is known
 * from there), then every selected event. */
static int show_json_event(void *ctx, const mb_event_log *log, const mb_event *ev, mb_error *err)
{
	show_json *s = ctx;

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
	if (pcr_selected(ev, s->pcr_mask)) {
		if (!s->first)
			jsonout_lit(&s->out, ",");
		s->first = false;
		tool_event_write(&s->out, log, ev, s->dec);
	}
	if (s->out.oom)
		return set_error(err, -ENOMEM, "out of memory");
	if (s->out.n >= MB_JSONOUT_FLUSH && jsonout_flush(&s->out, stdout) < 0)
		return set_error(err, -EIO, "write error");
	return 0;
}

/*
 * `log show --json`: the log is checked first (a malformed log prints nothing but the error,
 * as when it was parsed whole), then read a second time, each event written as it comes:
 * no event array, and a 100,000-event log never becomes one JSON tree.
 */
static int log_show_json(const char *path, uint32_t pcr_mask)
{
	show_json s = { .pcr_mask = pcr_mask, .first = true };
	mb_error err = { 0 };
	uint8_t *data = NULL;
	size_t size = 0;
	int rc;

	if (file_read(path, MB_LOG_MAX_SIZE, &data, &size, &err) < 0) {
		tool_report(path, &err);
		return EXIT_USAGE;
	}
	if (mb_event_log_visit(data, size, NULL, NULL, &err) < 0) {
		tool_report(path, &err);
		free(data);
		return EXIT_USAGE;
	}
	s.dec = mb_event_decoded_new();
	rc = s.dec ? mb_event_log_visit(data, size, show_json_event, &s, &err) : set_error(&err, -ENOMEM, "out of memory");
	if (rc == 0) {
		jsonout_lit(&s.out, "]}\n");
		if (s.out.oom)
			rc = set_error(&err, -ENOMEM, "out of memory");
	}
	if (jsonout_flush(&s.out, stdout) < 0 && rc == 0)
		rc = set_error(&err, -EIO, "write error");
	free(s.out.p);
	mb_event_decoded_free(s.dec);
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
	size_t i, n;
	uint64_t toff, tsize;
	mb_trailer_kind t;
	int rc = parse_args("log show", show_help, argc, argv, "jp", 1, &a);

	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	if (a.json)
		return log_show_json(a.n_paths ? a.paths[0] : MB_DEFAULT_LOG, a.pcr_mask);
	rc = tool_load_log(a.n_paths ? a.paths[0] : MB_DEFAULT_LOG, &log);
	if (rc)
		return rc;
	dec = mb_event_decoded_new();
	if (!dec) {
		mb_event_log_free(log);
		tool_errorf("out of memory");
		return EXIT_USAGE;
	}
	n = mb_event_log_count(log);
	for (i = 0; i < n; i++) {
		const mb_event *ev = mb_event_log_event(log, i);

		if (pcr_selected(ev, a.pcr_mask))
			print_event_text(log, ev, dec);
	}
	mb_event_decoded_free(dec);
	t = mb_event_log_trailer(log, &toff, &tsize);
	if (t != MB_TRAILER_NONE)
		printf("(%llu bytes of 0x%s padding after the last event, from byte %llu)\n",
		       (unsigned long long) tsize, t == MB_TRAILER_FF_PADDING ? "ff" : "00",
		       (unsigned long long) toff);
	mb_event_log_free(log);
	return fflush(stdout) == 0 ? EXIT_OK : EXIT_USAGE;
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
		char *s = mb_pcr_values_to_json(v, true);
		json_object *root = s ? json_tokener_parse(s) : NULL;

		free(s);
		if (!root) {
			tool_errorf("out of memory");
			rc = EXIT_USAGE;
			goto out;
		}
		json_object_object_add(root, "info", replay_info_json(&info, v));
		puts(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
							  JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(root);
	} else {
		for (b = 0; b < mb_pcr_values_n_banks(v); b++) {
			uint16_t alg = mb_pcr_values_bank_alg(v, b);
			size_t digest_size = mb_digest_by_alg(alg)->size;
			char name[8], hex[2 * MB_DIGEST_MAX + 1];
			uint32_t p;

			/* A bank without a single value prints nothing: a bare heading does not read back. */
			for (p = 0; p < MB_PCR_COUNT && !mb_pcr_values_get(v, alg, p); p++)
				;
			if (p < MB_PCR_COUNT)
				printf("%s:\n", tool_alg_name(alg, name));
			for (p = 0; p < MB_PCR_COUNT; p++) {
				const uint8_t *value = mb_pcr_values_get(v, alg, p);

				if (value)
					printf("  %2u: %s\n", p, hex_format(value, digest_size, hex));
			}
		}
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
			json_object_array_add(arr, o);
		}
		for (p = 0; p < MB_PCR_COUNT; p++)
			if (d->pcrs_moved & (1u << p))
				json_object_array_add(moved, json_object_new_int(p));
		json_object_object_add(root, "entries", arr);
		json_object_object_add(root, "pcrs_moved", moved);
		json_object_object_add(root, "identical", json_object_new_boolean(d->n_entries == 0));
		puts(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
							  JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(root);
	} else {
		if (d->n_entries == 0)
			printf("The logs record the same events.\n");
		for (i = 0; i < d->n_entries; i++) {
			const mb_diff_entry *e = &d->entries[i];

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
