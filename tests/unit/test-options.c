/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The option tables every verb parses its arguments with (src/tool/options.c): what each kind
 * of option stores, and the usage errors (exit 2) for what getopt_long and the kinds refuse.
 * Bank ids are the TCG Algorithm Registry's (sha1 0x0004, sha256 0x000B, sha384 0x000C).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tool/options.h"
#include "tool/tool.h"

typedef struct parsed {
	const char *name;
	bool force;
	uint32_t pcrs;
	const mb_digest_info *bank;
	tool_banks banks;
	unsigned digits;
	int mode;
	int calls;
	const char *called_with;
	tool_json json;
} parsed;

static int count_call(void *target, const char *arg, const char *verb)
{
	parsed *p = target;

	(void) verb;
	p->calls++;
	p->called_with = arg;
	return strcmp(arg, "bad") == 0 ? tool_usage_error(verb, "--call: bad") : EXIT_OK;
}

static const char *const modes[] = { "fast", "slow", NULL };

/* Parse the NULL-ended words (argv[0] "test") into *p, with at most max_args arguments. */
static int parse(parsed *p, int max_args, ...)
{
	char *argv[32] = { (char *) "test" };
	int argc = 1;
	va_list ap;
	const tool_option opts[] = {
		TOOL_OPT_STR("name", 'n', &p->name),
		TOOL_OPT_BOOL("force", 0, &p->force),
		TOOL_OPT_PCR_LIST("pcrs", 0, &p->pcrs),
		TOOL_OPT_ONE_BANK("bank", 0, &p->bank),
		TOOL_OPT_BANK_LIST("also-bank", 0, &p->banks),
		TOOL_OPT_NUMBER("digits", 'd', &p->digits, 6, 8),
		TOOL_OPT_ONE_OF("mode", 0, &p->mode, modes),
		TOOL_OPT_FN("call", 0, p, count_call),
		TOOL_OPT_JSON_STYLE(&p->json),
		TOOL_OPT_END,
	};

	va_start(ap, max_args);
	for (const char *w; (w = va_arg(ap, const char *)) != NULL && argc < 31;)
		argv[argc++] = (char *) w;
	va_end(ap);
	return tool_parse_options("test", "help text\n", opts, argc, argv, max_args);
}

static void test_kinds_store(void **state)
{
	parsed p = { .mode = -1 };

	(void) state;
	assert_int_equal(parse(&p, 1, "--name", "x", "--force", "--pcrs", "0,2,4-7", "--bank", "sha384",
			       "--also-bank", "sha256", "--also-bank", "sha1", "--also-bank", "sha256", "-d", "8",
			       "--mode", "slow", "--call", "c1", "ARG", NULL),
			 TOOL_OPTS_GO_ON);
	assert_string_equal(p.name, "x");
	assert_true(p.force);
	assert_int_equal(p.pcrs, 0xf5);
	assert_non_null(p.bank);
	assert_int_equal(p.bank->alg, 0x000C);
	assert_int_equal(p.banks.n, 2); /* sha256 once */
	assert_int_equal(p.banks.alg[0], 0x000B);
	assert_int_equal(p.banks.alg[1], 0x0004);
	assert_int_equal(p.digits, 8);
	assert_int_equal(p.mode, 1);
	assert_int_equal(p.calls, 1);
	assert_string_equal(p.called_with, "c1");
}

static void test_short_and_attached(void **state)
{
	parsed p = { 0 };

	(void) state;
	assert_int_equal(parse(&p, 0, "-nfoo", "--digits=7", "--pcrs=all", NULL), TOOL_OPTS_GO_ON);
	assert_string_equal(p.name, "foo");
	assert_int_equal(p.digits, 7);
	assert_int_equal(p.pcrs, 0xffffff);
}

static void test_refused(void **state)
{
	parsed p = { 0 };

	(void) state;
	assert_int_equal(parse(&p, 0, "--bogus", NULL), EXIT_USAGE);
	assert_int_equal(parse(&p, 0, "-q", NULL), EXIT_USAGE);
	assert_int_equal(parse(&p, 0, "--name", NULL), EXIT_USAGE);          /* missing argument */
	assert_int_equal(parse(&p, 0, "-n", NULL), EXIT_USAGE);
	assert_int_equal(parse(&p, 0, "--pcrs", "24", NULL), EXIT_USAGE);
	assert_int_equal(parse(&p, 0, "--pcrs", "", NULL), EXIT_USAGE);      /* names no PCR */
	assert_int_equal(parse(&p, 0, "--pcrs", "7-3", NULL), EXIT_USAGE);
	assert_int_equal(parse(&p, 0, "--bank", "md5", NULL), EXIT_USAGE);
	assert_int_equal(parse(&p, 0, "--digits", "9", NULL), EXIT_USAGE);
	assert_int_equal(parse(&p, 0, "--digits", "5", NULL), EXIT_USAGE);
	assert_int_equal(parse(&p, 0, "--digits", "+7", NULL), EXIT_USAGE);
	assert_int_equal(parse(&p, 0, "--mode", "medium", NULL), EXIT_USAGE);
	assert_int_equal(parse(&p, 0, "--call", "bad", NULL), EXIT_USAGE);
	assert_int_equal(parse(&p, 0, "extra", NULL), EXIT_USAGE);
	assert_int_equal(parse(&p, 1, "one", "two", NULL), EXIT_USAGE);
	assert_int_equal(parse(&p, 2, "one", "two", NULL), TOOL_OPTS_GO_ON);
}

static void test_help_stops(void **state)
{
	parsed p = { 0 };

	(void) state;
	assert_int_equal(parse(&p, 0, "--force", "--help", "--bogus", NULL), EXIT_OK);
	assert_int_equal(parse(&p, 0, "-h", NULL), EXIT_OK);
}

/* --compact means --json on one line, in either order; --json alone is pretty. */
static void test_json_style(void **state)
{
	parsed p = { 0 }, q = { 0 }, r = { 0 }, none = { 0 };

	(void) state;
	assert_int_equal(parse(&p, 0, "--json", NULL), TOOL_OPTS_GO_ON);
	assert_int_equal(p.json, TOOL_JSON_PRETTY);
	assert_int_equal(parse(&q, 0, "--compact", "--json", NULL), TOOL_OPTS_GO_ON);
	assert_int_equal(q.json, TOOL_JSON_COMPACT);
	assert_int_equal(parse(&r, 0, "--json", "--compact", NULL), TOOL_OPTS_GO_ON);
	assert_int_equal(r.json, TOOL_JSON_COMPACT);
	assert_int_equal(parse(&none, 0, NULL), TOOL_OPTS_GO_ON);
	assert_int_equal(none.json, TOOL_JSON_OFF);
	assert_int_equal(parse(&p, 0, "--json=x", NULL), EXIT_USAGE);
}

/* A table may be parsed again (verbs run sub-commands in one process): getopt restarts. */
static void test_reparse(void **state)
{
	parsed p = { 0 }, q = { 0 };

	(void) state;
	assert_int_equal(parse(&p, 0, "--digits", "x", NULL), EXIT_USAGE);
	assert_int_equal(parse(&q, 0, "--digits", "6", NULL), TOOL_OPTS_GO_ON);
	assert_int_equal(q.digits, 6);
}

/* One parse of --efi-var, --sbat-level and --mok-list (TOOL_OPT_EFI_VARS) into v. */
static int parse_efi_vars(tool_efi_vars *v, int argc, char **argv)
{
	const tool_option opts[] = { TOOL_OPT_EFI_VARS(v), TOOL_OPT_END };

	memset(v, 0, sizeof(*v));
	return tool_parse_options("test", "help text\n", opts, argc, argv, 0);
}

/* The Secure Boot update predict and policy generate both take: NAME=FILE, NAME+=FILE (an append,
 * NAME without its '+'), and the two shorthands. */
static void test_efi_vars(void **state)
{
	char a[] = "db+=db.auth", b[] = "dbx=dbx.esl", c[] = "sbat.csv", d[] = "mok.esl";
	char *argv[] = { (char *) "test", (char *) "--efi-var", a, (char *) "--efi-var", b,
			 (char *) "--sbat-level", c, (char *) "--mok-list", d };
	static const char *const bad[] = { "=f", "+=f", "db=", "db+=", "db", NULL };
	tool_efi_vars v;
	char many[20][8];
	char *more[1 + 2 * 20] = { (char *) "test" };
	int i;

	(void) state;
	assert_int_equal(parse_efi_vars(&v, 9, argv), TOOL_OPTS_GO_ON);
	assert_int_equal(v.n, 4);
	assert_string_equal(v.var[0].name, "db");
	assert_string_equal(v.var[0].file, "db.auth");
	assert_true(v.var[0].append);
	assert_string_equal(v.var[1].name, "dbx");
	assert_string_equal(v.var[1].file, "dbx.esl");
	assert_false(v.var[1].append);
	assert_string_equal(v.var[2].name, "SbatLevel");
	assert_string_equal(v.var[2].file, "sbat.csv");
	assert_string_equal(v.var[3].name, "MokList");
	assert_string_equal(v.var[3].file, "mok.esl");
	for (i = 0; bad[i]; i++) {
		char arg[16];
		char *one[] = { (char *) "test", (char *) "--efi-var", arg };

		snprintf(arg, sizeof(arg), "%s", bad[i]);
		assert_int_equal(parse_efi_vars(&v, 3, one), EXIT_USAGE);
	}
	/* one more than TOOL_MAX_EFI_VARS */
	for (i = 0; i <= TOOL_MAX_EFI_VARS; i++) {
		snprintf(many[i], sizeof(many[i]), "db=f%d", i);
		more[1 + 2 * i] = (char *) "--efi-var";
		more[2 + 2 * i] = many[i];
	}
	assert_int_equal(parse_efi_vars(&v, 1 + 2 * TOOL_MAX_EFI_VARS, more), TOOL_OPTS_GO_ON);
	assert_int_equal(v.n, TOOL_MAX_EFI_VARS);
	for (i = 0; i <= TOOL_MAX_EFI_VARS; i++)
		snprintf(many[i], sizeof(many[i]), "db=f%d", i);
	assert_int_equal(parse_efi_vars(&v, 3 + 2 * TOOL_MAX_EFI_VARS, more), EXIT_USAGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kinds_store),
		cmocka_unit_test(test_short_and_attached),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_help_stops),
		cmocka_unit_test(test_reparse),
		cmocka_unit_test(test_json_style),
		cmocka_unit_test(test_efi_vars),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
