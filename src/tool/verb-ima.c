/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mboot ima show / replay: the kernel's IMA runtime measurement list (docs/ima.md). Options,
 * reading the file and printing; the list's reading, checks and replay are src/lib/ima.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/ima.h>
#include "shared/fileio.h"
#include "shared/hex.h"
#include "shared/text-escape.h"
#include "tool/options.h"
#include "tool/tool.h"
#include "tool/verbs.h"

static const char ima_help[] =
	"Usage: mboot ima show [LOG] [--bank NAME] [--json] [--compact]\n"
	"       mboot ima replay [LOG] [--bank NAME] [--pcrs FILE] [--json] [--compact]\n\n"
	"The kernel's IMA runtime measurement list, binary or ASCII (told from its content).\n"
	"LOG defaults to " MB_IMA_DEFAULT_PATH ".\n"
	"Every entry's template hash is checked against its own fields.\n"
	"show: each entry: number, offset, PCR, template, template hash and its check, the file\n"
	"digest with its algorithm, the path, a signature, a buffer.\n"
	"replay: each PCR the entries name (PCR 10), per bank, both ways kernels extend a bank:\n"
	"'recomputed' (the template hash recomputed with the bank's algorithm, Linux 5.11 on) and\n"
	"'padded' (the SHA-1 template hash zero-padded, older kernels); violations extend all 0xFF.\n"
	"With --pcrs (PCR values, as 'mboot verify' takes them), each PCR is compared with the file's,\n"
	"and the first entry's boot_aggregate with the file's PCRs 0-9 (0-7 for SHA-1).\n\n"
	"Options:\n"
	"  --bank NAME   the template hashes' algorithm (default: from their size; sha1 for the\n"
	"                kernel's binary_runtime_measurements, the bank of a per-bank file)\n"
	"  --pcrs FILE   recorded PCR values to compare with (replay)\n"
	"  --json        one JSON document (docs/ima.md); --compact on one line\n\n"
	"Exit: 0 every template hash checks (and, with --pcrs, PCR 10 and boot_aggregate match),\n"
	"1 a template hash is bad or a value does not match, 2 usage error or an unreadable or\n"
	"malformed list (the message names the byte offset).\n";

typedef struct ima_args {
	tool_json json;
	const mb_digest_info *bank;
	const char *pcrs;
	const char *path;
} ima_args;

static int load(const char *verb, ima_args *a, int argc, char **argv, mb_ima_log **ret)
{
	mb_error err = { 0 };
	uint8_t *buf = NULL;
	size_t size = 0;
	int rc;

	(void) verb;
	a->path = optind < argc ? argv[optind] : MB_IMA_DEFAULT_PATH;
	if (file_read(a->path, MB_IMA_MAX_SIZE, &buf, &size, &err) < 0) {
		tool_report(a->path, &err);
		return EXIT_USAGE;
	}
	rc = mb_ima_log_parse(buf, size, a->bank ? a->bank->alg : 0, ret, &err);
	free(buf);
	if (rc < 0) {
		tool_report(a->path, &err);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

static void say_bad(const mb_ima_log *log)
{
	uint64_t off;
	size_t n;

	for (size_t i = 0; i < mb_ima_log_count(log); i++) {
		const mb_ima_entry *e = mb_ima_log_entry(log, i);

		if (e->check == MB_IMA_CHECK_BAD)
			tool_errorf("entry %zu (offset %llu, %s): the template hash is not the hash of its fields", i,
				    (unsigned long long) e->offset, e->template_name);
	}
	if (mb_ima_log_tail(log, &off, &n))
		tool_notef("an incomplete last record of %zu bytes at offset %llu is not an entry", n,
			   (unsigned long long) off);
}

static void print_hex_line(const char *label, const uint8_t *p, size_t n)
{
	char *h = hex_dup(p, n);

	printf("  %s: %s\n", label, h ? h : "(out of memory)");
	free(h);
}

static void print_entry(const mb_ima_entry *e, size_t i)
{
	char alg[8], *name = text_escape_str(e->template_name), *path = e->path ? text_escape_str(e->path) : NULL;
	char *th = hex_dup(e->template_hash, e->template_hash_size);

	printf("entry %zu at offset %llu: PCR %u, template %s\n", i, (unsigned long long) e->offset, e->pcr,
	       name ? name : "?");
	printf("  template hash (%s): %s %s\n", mb_digest_alg_name(e->template_hash_alg, alg), th ? th : "?",
	       mb_ima_check_label(e->check));
	if (e->digest_algo) {
		char *algo = text_escape_str(e->digest_algo), *d = hex_dup(e->digest, e->digest_size);

		printf("  file digest: %s:%s\n", algo ? algo : "?", d ? d : "?");
		free(algo);
		free(d);
	}
	if (path)
		printf("  path: %s\n", path);
	if (e->sig)
		print_hex_line("signature", e->sig, e->sig_size);
	if (e->modsig_digest_algo) {
		char *algo = text_escape_str(e->modsig_digest_algo), *d = hex_dup(e->modsig_digest, e->modsig_digest_size);

		printf("  modsig digest: %s:%s\n", algo ? algo : "?", d ? d : "?");
		free(algo);
		free(d);
	}
	if (e->modsig)
		print_hex_line("modsig", e->modsig, e->modsig_size);
	if (e->template_kind == MB_IMA_TEMPLATE_IMA_BUF)
		print_hex_line("buffer", e->buf, e->buf_size);
	if (e->template_kind == MB_IMA_TEMPLATE_UNKNOWN)
		for (size_t k = 0; k < e->n_fields; k++)
			print_hex_line("field", e->fields[k].data, e->fields[k].size);
	free(name);
	free(path);
	free(th);
}

static int ima_show(int argc, char **argv)
{
	ima_args a = { 0 };
	const tool_option options[] = {
		TOOL_OPT_JSON_STYLE(&a.json),
		TOOL_OPT_ONE_BANK("bank", 0, &a.bank),
		TOOL_OPT_END,
	};
	mb_ima_log *log = NULL;
	int rc = tool_parse_options("ima show", ima_help, options, argc, argv, 1);

	if (rc != TOOL_OPTS_GO_ON)
		return rc;
	rc = load("ima show", &a, argc, argv, &log);
	if (rc != EXIT_OK)
		return rc;
	if (a.json) {
		rc = tool_json_text_print(mb_ima_log_to_json(log, a.json == TOOL_JSON_PRETTY));
	} else {
		for (size_t i = 0; i < mb_ima_log_count(log); i++)
			print_entry(mb_ima_log_entry(log, i), i);
	}
	say_bad(log);
	if (rc == EXIT_OK && mb_ima_log_n_bad(log) > 0)
		rc = EXIT_FAILED;
	mb_ima_log_free(log);
	return rc;
}

static int ima_replay(int argc, char **argv)
{
	ima_args a = { 0 };
	const tool_option options[] = {
		TOOL_OPT_JSON_STYLE(&a.json),
		TOOL_OPT_ONE_BANK("bank", 0, &a.bank),
		TOOL_OPT_STR("pcrs", 0, &a.pcrs),
		TOOL_OPT_END,
	};
	mb_ima_log *log = NULL;
	mb_pcr_values *rec = NULL, *pad = NULL, *actual = NULL;
	mb_error err = { 0 };
	bool mismatch = false;
	int rc = tool_parse_options("ima replay", ima_help, options, argc, argv, 1);

	if (rc != TOOL_OPTS_GO_ON)
		return rc;
	rc = load("ima replay", &a, argc, argv, &log);
	if (rc != EXIT_OK)
		return rc;
	rec = tool_pcr_values_new();
	pad = rec ? tool_pcr_values_new() : NULL;
	if (!pad) {
		rc = EXIT_USAGE;
		goto out;
	}
	if (a.pcrs) {
		actual = tool_pcr_values_new();
		if (!actual || tool_load_pcrs(a.pcrs, actual) != EXIT_OK) {
			rc = EXIT_USAGE;
			goto out;
		}
	}
	if (mb_ima_replay(log, rec, pad, &err) < 0) {
		tool_report(a.path, &err);
		rc = EXIT_USAGE;
		goto out;
	}
	if (actual) {
		mb_ima_aggregate agg = mb_ima_boot_aggregate_check(log, actual);
		bool compared = false;

		for (size_t b = 0; b < mb_pcr_values_n_banks(rec); b++) {
			uint16_t alg = mb_pcr_values_bank_alg(rec, b);
			uint32_t present = mb_pcr_values_present(rec, alg);

			for (uint32_t p = 0; p < MB_PCR_COUNT; p++) {
				mb_ima_match m;

				if (!(present & (1u << p)))
					continue;
				m = mb_ima_pcr_compare(rec, pad, actual, alg, p);
				if (m == MB_IMA_MATCH_ABSENT)
					continue;
				compared = true;
				if (m == MB_IMA_MATCH_NONE) {
					char name[8];

					mismatch = true;
					tool_errorf("PCR %u of the %s bank: the list replays to neither value of %s", p,
						    mb_digest_alg_name(alg, name), a.pcrs);
				}
			}
		}
		if (!compared) {
			tool_errorf("%s has none of the PCRs the list extends", a.pcrs);
			mismatch = true;
		}
		if (agg == MB_IMA_AGGREGATE_MISMATCH || agg == MB_IMA_AGGREGATE_NO_PCRS) {
			tool_errorf("boot_aggregate: %s against %s", mb_ima_aggregate_label(agg), a.pcrs);
			mismatch = true;
		}
	}
	if (a.json) {
		rc = tool_json_text_print(mb_ima_replay_to_json(log, rec, pad, actual, a.json == TOOL_JSON_PRETTY));
	} else {
		for (size_t b = 0; b < mb_pcr_values_n_banks(rec); b++) {
			uint16_t alg = mb_pcr_values_bank_alg(rec, b);
			const mb_digest_info *d = mb_digest_by_alg(alg);
			uint32_t present = mb_pcr_values_present(rec, alg);

			for (uint32_t p = 0; d && p < MB_PCR_COUNT; p++) {
				char hr[2 * MB_DIGEST_MAX + 1], hp[2 * MB_DIGEST_MAX + 1];

				if (!(present & (1u << p)))
					continue;
				hex_format(mb_pcr_values_get(rec, alg, p), d->size, hr);
				hex_format(mb_pcr_values_get(pad, alg, p), d->size, hp);
				printf("%s PCR %u: recomputed %s\n", d->name, p, hr);
				if (strcmp(hr, hp) != 0)
					printf("%s PCR %u: padded     %s\n", d->name, p, hp);
				if (actual)
					printf("%s PCR %u: %s\n", d->name, p,
					       mb_ima_match_label(mb_ima_pcr_compare(rec, pad, actual, alg, p)));
			}
		}
		if (actual)
			printf("boot_aggregate: %s\n", mb_ima_aggregate_label(mb_ima_boot_aggregate_check(log, actual)));
	}
	say_bad(log);
	if (rc == EXIT_OK && (mismatch || mb_ima_log_n_bad(log) > 0))
		rc = EXIT_FAILED;
out:
	mb_pcr_values_free(rec);
	mb_pcr_values_free(pad);
	mb_pcr_values_free(actual);
	mb_ima_log_free(log);
	return rc;
}

static const tool_command ima_commands[] = {
	{ "show", ima_show },
	{ "replay", ima_replay },
	{ NULL, NULL },
};

int verb_ima(int argc, char **argv)
{
	return tool_dispatch("ima", ima_help, ima_commands, argc, argv);
}
