/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mboot log diff: which events differ between two boots, and what differs (docs/eventlog.md). */
#include <stdlib.h>
#include <string.h>


#include "shared/hex.h"
#include "shared/log-show.h"
#include "tool/options.h"
#include "tool/tool.h"
#include "tool/verbs.h"

typedef struct log_args {
	tool_json json;
	const char *paths[2];
} log_args;

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

static void print_side(const char *tag, const mb_event_log *log, const mb_event *ev)
{
	char tbuf[MB_EVENT_TYPE_LABEL_SIZE], *desc = mb_event_description(log, ev);
	mb_digest_check check;

	printf("    %s #%u %s: %s%s\n", tag, ev->number, mb_event_type_label(ev->type, tbuf), desc ? desc : "",
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

/*
 * A changed event: what differs, not two lines that read the same. Every bank whose digests
 * differ (or that one side lacks), A's then B's; the data as each side describes it when it
 * differs (measured data in hex when the descriptions read the same), else once, for context.
 */
static void print_changed(const mb_diff_entry *e, const mb_event_log *la, const mb_event_log *lb)
{
	char tbuf[MB_EVENT_TYPE_LABEL_SIZE], name[8], hex[2 * MB_UNKNOWN_DIGEST_MAX + 1];
	char *da = mb_event_description(la, e->a), *db = mb_event_description(lb, e->b);
	const char *what = e->data_measured ? "data" : "data (not measured)";
	mb_digest_check check;
	bool same_desc;
	uint32_t i;

	printf("PCR %u: changed: #%u in A, #%u in B, %s\n", e->pcr, e->a->number, e->b->number,
	       mb_event_type_label(e->a->type, tbuf));
	for (i = 0; i < e->a->n_digests; i++) {
		uint16_t alg = e->a->digests[i].alg;

		if (log_digest_same(e->a, e->b, alg))
			continue;
		printf("    - %-7s %s\n", mb_digest_alg_name(alg, name), digest_hex(e->a, alg, hex));
		printf("    + %-7s %s\n", mb_digest_alg_name(alg, name), digest_hex(e->b, alg, hex));
	}
	for (i = 0; i < e->b->n_digests; i++) {
		uint16_t alg = e->b->digests[i].alg;

		if (mb_event_digest_for(e->a, alg))
			continue;
		printf("    - %-7s (none)\n", mb_digest_alg_name(alg, name));
		printf("    + %-7s %s\n", mb_digest_alg_name(alg, name), digest_hex(e->b, alg, hex));
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

int log_diff(int argc, char **argv)
{
	log_args a = { 0 };
	const tool_option options[] = {
		TOOL_OPT_JSON_STYLE(&a.json),
		TOOL_OPT_END,
	};
	mb_event_log *la = NULL, *lb = NULL;
	mb_diff *d = NULL;
	mb_error err = { 0 };
	int rc = tool_parse_options("log diff", diff_help, options, argc, argv, 2);
	size_t i;
	uint32_t p;

	if (rc != TOOL_OPTS_GO_ON)
		return rc;
	if (argc - optind != 2)
		return tool_usage_error("log diff", "needs two logs");
	a.paths[0] = argv[optind];
	a.paths[1] = argv[optind + 1];
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
		rc = tool_json_text_print(mb_diff_to_json(d, la, lb, a.json != TOOL_JSON_COMPACT));
		if (rc != EXIT_OK)
			goto out;
	} else {
		if (d->n_entries == 0)
			printf("The logs record the same events.\n");
		for (i = 0; i < d->n_entries; i++) {
			const mb_diff_entry *e = &d->entries[i];

			if (e->kind == MB_DIFF_CHANGED) {
				print_changed(e, la, lb);
				continue;
			}
			printf("PCR %u: %s\n", e->pcr, mb_diff_kind_name(e->kind));
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
