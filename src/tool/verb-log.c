/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/json.h"

#include "shared/fail.h"
#include "shared/fileio.h"
#include "shared/hex.h"
#include "shared/log-show.h"
#include "tool/options.h"
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
	"spec's, \"[digest not checkable: WHY]\" text mboot cannot prove measured (a GRUB string\n"
	"in a form it does not hash). A footer covers the whole log: the number of events, the events whose data\n"
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


typedef struct log_args {
	tool_json json;
	uint32_t pcr_mask;
	const mb_digest_info *bank;
	const char *path;
} log_args;

/* After the options: the log (at most one, tool_parse_options checked), or the default. */
static void log_path(log_args *a, int argc, char **argv)
{
	a->path = optind < argc ? argv[optind] : MB_DEFAULT_LOG;
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
		return "UTF-16 text that does not hash to its digest in any bank; not proven measured";
	if (strncmp(kind, "grub_", 5) == 0 && strcmp(kind, "grub_file") != 0)
		return "a GRUB string in a form mboot does not hash; not proven measured";
	if (strcmp(kind, "string") == 0)
		return "text mboot does not know how it was hashed; not proven measured";
	return NULL;
}

static void print_summary_text(const log_summary *sum, const mb_pcr_values *v)
{
	size_t i;

	printf("\n%zu events", sum->events);
	if (sum->shown != sum->events)
		printf(" (%zu shown)", sum->shown);
	printf("; event data not matching its digest: %zu", sum->mismatches);
	for (i = 0; i < sum->mismatches && i < MB_LOG_JSON_MISMATCHES_LISTED; i++)
		printf("%s#%u", i ? ", " : " (", sum->listed[i]);
	if (sum->mismatches > MB_LOG_JSON_MISMATCHES_LISTED)
		printf(", ... %zu more", sum->mismatches - MB_LOG_JSON_MISMATCHES_LISTED);
	printf("%s\nPCRs replayed from the log:\n", sum->mismatches ? ")" : "");
	(void) tool_print_pcr_values(v); /* as `log replay` prints them; it says any failure */
}

/* Returns the digest check's status (-1: none). */
static int print_event_text(const mb_event_log *log, const mb_event *ev, mb_event_decoded *dec)
{
	char tbuf[MB_EVENT_TYPE_LABEL_SIZE], hex[2 * MB_UNKNOWN_DIGEST_MAX + 1];
	mb_digest_check check;
	bool decoded = mb_event_decode(log, ev, dec) == 0;
	const char *why;
	int status = -1;
	uint32_t i;

	printf("#%-5u PCR %-3u %s", ev->number, ev->pcr, mb_event_type_label(ev->type, tbuf));
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

		printf("       %-7s %s\n", mb_digest_alg_name(ev->digests[i].alg, name),
		       hex_format(ev->digests[i].bytes, ev->digests[i].size, hex));
	}
	if (decoded)
		printf("       %s\n", mb_event_decoded_description(dec));
	return status;
}

/* A mapped log that shrinks while it is read: its lost pages raise SIGBUS. */
static void on_sigbus(int sig)
{
	static const char msg[] = "mboot log show: the log was truncated while it was read\n";

	(void) sig;
	(void) !write(STDERR_FILENO, msg, sizeof(msg) - 1);
	_exit(EXIT_USAGE);
}

/* --json: the library writes the document as it reads the log. */
static int log_show_json(const char *path, uint32_t pcr_mask, tool_json style)
{
	mb_error err = { 0 };
	uint8_t *data = NULL;
	size_t size = 0;
	bool mapped = false;
	int rc;

	/*
	 * A regular file is mapped (file_map): a copy of an 11 MiB log into fresh memory, whose
	 * pages the kernel zeroes first, was a fifth of the time before the second thread starts.
	 * Over the limit, file_read says so in the words log show has always used.
	 */
	signal(SIGBUS, on_sigbus);
	rc = file_map(path, MB_LOG_MAX_SIZE, &data, &size, &mapped, &err);
	if (rc == -E2BIG)
		rc = file_read(path, MB_LOG_MAX_SIZE, &data, &size, &err);
	if (rc < 0) {
		tool_report(path, &err);
		return EXIT_USAGE;
	}
	rc = mb_event_log_write_json(data, size, pcr_mask, style != TOOL_JSON_COMPACT, tool_stdout_sink, NULL, &err);
	file_unmap(data, size, mapped);
	if (rc < 0) {
		/* Stdout may hold half a document: say so rather than pretend it is whole. */
		tool_report(path, &err);
		return EXIT_USAGE;
	}
	if (fflush(stdout) != 0) {
		tool_errorf("log show: write error");
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

static int log_show(int argc, char **argv)
{
	log_args a = { .pcr_mask = UINT32_MAX };
	const tool_option options[] = {
		TOOL_OPT_JSON_STYLE(&a.json),
		TOOL_OPT_PCR_LIST("pcr", 0, &a.pcr_mask),
		TOOL_OPT_END,
	};
	mb_event_log *log = NULL;
	mb_event_decoded *dec;
	mb_pcr_values *v;
	mb_error err = { 0 };
	log_summary sum = { 0 };
	size_t i, n;
	uint64_t toff, tsize;
	mb_trailer_kind t;
	int rc = tool_parse_options("log show", show_help, options, argc, argv, 1);
	const char *path;

	if (rc != TOOL_OPTS_GO_ON)
		return rc;
	log_path(&a, argc, argv);
	path = a.path;
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

		if (log_pcr_selected(ev, a.pcr_mask))
			log_summary_add(&sum, ev, true, print_event_text(log, ev, dec));
		else
			log_summary_add(&sum, ev, false, log_check_status(ev));
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

static int log_replay(int argc, char **argv)
{
	log_args a = { .pcr_mask = UINT32_MAX };
	const tool_option options[] = {
		TOOL_OPT_JSON_STYLE(&a.json),
		TOOL_OPT_ONE_BANK("bank", 0, &a.bank),
		TOOL_OPT_END,
	};
	const char *path;
	uint8_t *data = NULL;
	size_t size = 0;
	mb_pcr_values *v = NULL;
	mb_replay_info info;
	mb_error err = { 0 };
	int rc = tool_parse_options("log replay", replay_help, options, argc, argv, 1);
	size_t b;

	if (rc != TOOL_OPTS_GO_ON)
		return rc;
	log_path(&a, argc, argv);
	path = a.path;
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
		char *s = mb_replay_to_json(v, &info, a.json != TOOL_JSON_COMPACT);

		if (!s) {
			tool_errorf("out of memory");
			rc = EXIT_USAGE;
			goto out;
		}
		rc = tool_json_text_print(s);
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
