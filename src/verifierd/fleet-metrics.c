/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * GET /metrics (Prometheus' text format, version 0.0.4): what this verifier process counted since
 * it started (each verifier of a shared database counts its own), and the fleet's machines by
 * status as the database has them at the scrape.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verifierd/fleet-internal.h"

/* Upper bounds of the judging-time histogram's buckets, in microseconds (then +Inf). */
static const uint64_t judge_bounds_us[FLEET_JUDGE_BUCKETS] = {
	1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000,
};

/* Database calls that failed, process-wide (reply_db_error counts them). */
static atomic_uint_fast64_t db_errors;

void fleet_metrics_db_error(void)
{
	atomic_fetch_add(&db_errors, 1);
}

void fleet_metrics_judged(fleet *f, int64_t us)
{
	size_t i;

	if (us < 0)
		us = 0;
	for (i = 0; i < FLEET_JUDGE_BUCKETS && (uint64_t) us > judge_bounds_us[i]; i++)
		;
	atomic_fetch_add(&f->judge_buckets[i], 1);
	atomic_fetch_add(&f->judge_sum_us, (uint64_t) us);
}

void fleet_metrics_stored(fleet *f, const fleet_judgment *j)
{
	json_t *v, *reasons;
	size_t i, k;

	atomic_fetch_add(&f->stored[j->trusted ? 1 : 0], 1);
	if (j->log_named)
		atomic_fetch_add(&f->logs_named, 1);
	if (j->trusted || !j->verdict)
		return;
	/* By reason name, each reason once per attestation. */
	v = json_loads(j->verdict, 0, NULL);
	reasons = json_object_get(v, "reasons");
	for (k = 0; k < _MB_ATTEST_REASON_MAX; k++)
		for (i = 0; i < json_array_size(reasons); i++) {
			const char *name = json_string_value(json_object_get(json_array_get(reasons, i), "name"));

			if (name && strcmp(name, mb_attest_reason_name((mb_attest_reason) k)) == 0) {
				atomic_fetch_add(&f->stored_reasons[k], 1);
				break;
			}
		}
	json_decref(v);
}

/* The machines by status as fleet_status_shown says it (stale included): one rule for the page,
 * `fleet list` and this. -1 for each on a database error. */
static int count_machines(fleet_worker *w, uint64_t counts[FLEET_STATUSES], mb_error *err)
{
	store_machine *m = NULL;
	size_t n = 0, i, k;
	int64_t now = fleet_now();
	int r = store_machine_list(w->d, &m, &n, err);

	if (r < 0)
		return r;
	for (i = 0; i < n; i++) {
		const char *s = fleet_status_shown(w->f, &m[i], now);

		for (k = 0; k < FLEET_STATUSES; k++)
			if (strcmp(s, fleet_statuses[k]) == 0)
				counts[k]++;
		store_machine_done(&m[i]);
	}
	free(m);
	return 0;
}

static void counter_head(FILE *out, const char *name, const char *help, const char *type)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void fleet_metrics(fleet_worker *w, http_response *resp)
{
	fleet *f = w->f;
	uint64_t counts[FLEET_STATUSES] = { 0 }, cumulative = 0;
	mb_error err = { 0 };
	char *text = NULL;
	size_t size = 0, i;
	FILE *out;
	int r;

	r = count_machines(w, counts, &err);
	if (r < 0) {
		reply_db_error(resp, r, &err);
		return;
	}
	out = open_memstream(&text, &size);
	if (!out) {
		reply_error(resp, 500, "out of memory");
		return;
	}
	counter_head(out, "mboot_verifierd_machines", "Machines enrolled, by status (stale: no attestation for twice "
		     "its interval), as the database has them now.", "gauge");
	for (i = 0; i < FLEET_STATUSES; i++)
		fprintf(out, "mboot_verifierd_machines{status=\"%s\"} %llu\n", fleet_statuses[i],
			(unsigned long long) counts[i]);
	counter_head(out, "mboot_verifierd_attestations_total", "Attestations judged and stored, by result.", "counter");
	fprintf(out, "mboot_verifierd_attestations_total{result=\"trusted\"} %llu\n",
		(unsigned long long) atomic_load(&f->stored[1]));
	fprintf(out, "mboot_verifierd_attestations_total{result=\"untrusted\"} %llu\n",
		(unsigned long long) atomic_load(&f->stored[0]));
	counter_head(out, "mboot_verifierd_untrusted_reasons_total",
		     "Reasons of the untrusted attestations stored, each once an attestation.", "counter");
	for (i = 0; i < _MB_ATTEST_REASON_MAX; i++) {
		uint_fast64_t n = atomic_load(&f->stored_reasons[i]);

		if (n)
			fprintf(out, "mboot_verifierd_untrusted_reasons_total{reason=\"%s\"} %llu\n",
				mb_attest_reason_name((mb_attest_reason) i), (unsigned long long) n);
	}
	counter_head(out, "mboot_verifierd_evidence_refused_total", "Evidence refused as not the machine's TPM's "
		     "quote of its nonce (nothing stored), by reason.", "counter");
	for (i = 0; i < _MB_ATTEST_REASON_MAX; i++) {
		uint_fast64_t n = atomic_load(&f->refused[i]);

		if (n || fleet_reason_refuses((mb_attest_reason) i))
			fprintf(out, "mboot_verifierd_evidence_refused_total{reason=\"%s\"} %llu\n",
				mb_attest_reason_name((mb_attest_reason) i), (unsigned long long) n);
	}
	counter_head(out, "mboot_verifierd_judge_seconds", "Time to judge one evidence (quote, log, policy).",
		     "histogram");
	for (i = 0; i <= FLEET_JUDGE_BUCKETS; i++) {
		cumulative += atomic_load(&f->judge_buckets[i]);
		if (i < FLEET_JUDGE_BUCKETS)
			fprintf(out, "mboot_verifierd_judge_seconds_bucket{le=\"%g\"} %llu\n",
				(double) judge_bounds_us[i] / 1e6, (unsigned long long) cumulative);
		else
			fprintf(out, "mboot_verifierd_judge_seconds_bucket{le=\"+Inf\"} %llu\n",
				(unsigned long long) cumulative);
	}
	fprintf(out, "mboot_verifierd_judge_seconds_sum %.6f\n", (double) atomic_load(&f->judge_sum_us) / 1e6);
	fprintf(out, "mboot_verifierd_judge_seconds_count %llu\n", (unsigned long long) cumulative);
	counter_head(out, "mboot_verifierd_logs_judged_total", "Evidence whose logs were judged (its boot new "
		     "under its policy: judged) or whose boot's judgment was taken (reused: only its quote checked).",
		     "counter");
	fprintf(out, "mboot_verifierd_logs_judged_total{result=\"judged\"} %llu\n",
		(unsigned long long) atomic_load(&f->boots_judged));
	fprintf(out, "mboot_verifierd_logs_judged_total{result=\"reused\"} %llu\n",
		(unsigned long long) atomic_load(&f->boots_reused));
	counter_head(out, "mboot_verifierd_eventlog_named_total", "Evidence that named its firmware log by "
		     "its SHA-256 instead of carrying it: taken (the boot's judgment kept here), or asked for "
		     "(answered 409 \"send\": \"eventlog\").", "counter");
	fprintf(out, "mboot_verifierd_eventlog_named_total{result=\"taken\"} %llu\n",
		(unsigned long long) atomic_load(&f->logs_named));
	fprintf(out, "mboot_verifierd_eventlog_named_total{result=\"asked\"} %llu\n",
		(unsigned long long) atomic_load(&f->logs_asked));
	counter_head(out, "mboot_verifierd_nonce_rows_total", "Nonces given on the machine's row as this "
		     "verifier last read or wrote it (kept), or on its row read from the database (read).",
		     "counter");
	fprintf(out, "mboot_verifierd_nonce_rows_total{from=\"kept\"} %llu\n",
		(unsigned long long) atomic_load(&f->rows_kept));
	fprintf(out, "mboot_verifierd_nonce_rows_total{from=\"read\"} %llu\n",
		(unsigned long long) atomic_load(&f->rows_read));
	counter_head(out, "mboot_verifierd_stale_total", "Machines turned stale that this verifier announced "
		     "(its sweep marked them: nothing judged within twice the interval), and stale ones that "
		     "attested here again.", "counter");
	fprintf(out, "mboot_verifierd_stale_total{change=\"announced\"} %llu\n",
		(unsigned long long) atomic_load(&f->stale_announced));
	fprintf(out, "mboot_verifierd_stale_total{change=\"attested\"} %llu\n",
		(unsigned long long) atomic_load(&f->stale_back));
	counter_head(out, "mboot_verifierd_boot_cache_entries", "Boots whose judgment is kept.", "gauge");
	fprintf(out, "mboot_verifierd_boot_cache_entries %zu\n", fleet_cache_count(f->judged));
	{
		notify_counts nc;

		notify_counts_get(f->notify, &nc);
		counter_head(out, "mboot_verifierd_notify_deliveries_total", "Webhook deliveries (--notify, one per "
			     "status change and URL) by result: delivered (a 2xx), failed (every try failed), dropped "
			     "(the URL's queue was full).", "counter");
		fprintf(out, "mboot_verifierd_notify_deliveries_total{result=\"delivered\"} %llu\n"
			"mboot_verifierd_notify_deliveries_total{result=\"failed\"} %llu\n"
			"mboot_verifierd_notify_deliveries_total{result=\"dropped\"} %llu\n",
			(unsigned long long) nc.delivered, (unsigned long long) nc.failed, (unsigned long long) nc.dropped);
		counter_head(out, "mboot_verifierd_notify_retries_total", "Webhook tries that failed and were tried again.",
			     "counter");
		fprintf(out, "mboot_verifierd_notify_retries_total %llu\n", (unsigned long long) nc.retries);
		counter_head(out, "mboot_verifierd_notify_queued", "Webhook deliveries waiting in the queues now.", "gauge");
		fprintf(out, "mboot_verifierd_notify_queued %llu\n", (unsigned long long) nc.pending);
	}
	counter_head(out, "mboot_verifierd_database_errors_total",
		     "Database calls that failed (the client was told 503 or 500; or a stale sweep failed).", "counter");
	fprintf(out, "mboot_verifierd_database_errors_total %llu\n", (unsigned long long) atomic_load(&db_errors));
	if (fclose(out) != 0 || !text) {
		free(text);
		reply_error(resp, 500, "out of memory");
		return;
	}
	resp->status = 200;
	resp->content_type = "text/plain; version=0.0.4; charset=utf-8";
	resp->body = text;
	resp->body_size = size;
	resp->body_static = false;
}
