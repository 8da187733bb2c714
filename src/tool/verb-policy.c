/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/policy.h>
#include "shared/fileio.h"
#include "tool/tool.h"
#include "tool/verbs.h"

static const char policy_help[] =
	"Usage: mboot policy COMMAND [OPTIONS]\n\n"
	"  generate --from-log LOG [--pcrs LIST] [--firmware-pcrs LIST] [-o FILE]\n"
	"                       write a policy from a boot known to be good\n"
	"  lint POLICY          check that a policy file loads (exit 0), or say where it is wrong (exit 2)\n\n"
	"A policy is checked with 'mboot verify --policy POLICY'. Its format is in docs/policy.md.\n";

static const char generate_help[] =
	"Usage: mboot policy generate --from-log LOG [--pcrs LIST] [--firmware-pcrs LIST] [-o FILE]\n\n"
	"Write a policy from the event log of a machine known to be good: the exact values of the\n"
	"firmware PCRs (--firmware-pcrs, default 0-7), and for the other PCRs of --pcrs (default 0-15)\n"
	"a rule for every event seen there: a text rule (the exact text, as an anchored regular\n"
	"expression) where the event's text hashes to its digest, a digest rule otherwise. Each rule\n"
	"is required and limited to the number of times it was seen. Edit it to loosen what may vary.\n\n"
	"  -o, --output FILE    write there (default: stdout)\n";

static int policy_generate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "from-log", required_argument, NULL, 'l' },
		{ "pcrs", required_argument, NULL, 'p' },
		{ "firmware-pcrs", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *log_path = NULL, *out = "-";
	uint32_t pcrs = 0xffff, firmware = 0xff;
	mb_event_log *log = NULL;
	mb_error err = { 0 };
	char *json = NULL;
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(generate_help, stdout);
			return EXIT_OK;
		case 'l':
			log_path = optarg;
			break;
		case 'p':
			if (tool_parse_pcr_list(optarg, &pcrs) < 0)
				return tool_usage_error("policy generate", "bad PCR list '%s'", optarg);
			break;
		case 'f':
			if (strcmp(optarg, "none") == 0)
				firmware = 0;
			else if (tool_parse_pcr_list(optarg, &firmware) < 0)
				return tool_usage_error("policy generate", "bad PCR list '%s'", optarg);
			break;
		case 'o':
			out = optarg;
			break;
		default:
			return tool_usage_error("policy generate", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return tool_usage_error("policy generate", "unexpected argument '%s'", argv[optind]);
	if (!log_path)
		return tool_usage_error("policy generate", "needs --from-log LOG");
	rc = tool_load_log(log_path, &log);
	if (rc)
		return rc;
	if (mb_policy_generate_from_log(log, pcrs | firmware, firmware, &json, &err) < 0) {
		tool_report(log_path, &err);
		rc = EXIT_USAGE;
	} else {
		size_t len = strlen(json);

		json[len] = '\n';
		if (mb_write_file(out, json, len + 1, 0644, &err) < 0) {
			tool_report(out, &err);
			rc = EXIT_USAGE;
		}
	}
	free(json);
	mb_event_log_free(log);
	return rc;
}

int tool_load_policy(const char *path, mb_policy **ret)
{
	mb_error err = { 0 };
	uint8_t *text = NULL;
	size_t size;

	if (mb_read_file(path, MB_POLICY_MAX_SIZE, &text, &size, &err) < 0 ||
	    mb_policy_parse((const char *) text, size, ret, &err) < 0) {
		tool_report(path, &err);
		free(text);
		return EXIT_USAGE;
	}
	free(text);
	return EXIT_OK;
}

static int policy_lint(int argc, char **argv)
{
	mb_policy *p = NULL;
	uint32_t m, i;
	int rc;

	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("Usage: mboot policy lint POLICY\n\nLoad a policy as verify would: exit 0 when it loads, "
		       "2 with the line and field that is wrong.\n");
		return EXIT_OK;
	}
	if (argc != 2)
		return tool_usage_error("policy lint", "needs one POLICY file");
	rc = tool_load_policy(argv[1], &p);
	if (rc)
		return rc;
	m = mb_policy_pcrs(p);
	printf("%s: policy version 1, governs PCRs", argv[1]);
	for (i = 0; i < MB_PCR_COUNT; i++)
		if (m & (1u << i))
			printf(" %u", i);
	putchar('\n');
	mb_policy_free(p);
	return EXIT_OK;
}

int verb_policy(int argc, char **argv)
{
	if (argc < 2) {
		fputs(policy_help, stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fputs(policy_help, stdout);
		return EXIT_OK;
	}
	if (strcmp(argv[1], "generate") == 0)
		return policy_generate(argc - 1, argv + 1);
	if (strcmp(argv[1], "lint") == 0)
		return policy_lint(argc - 1, argv + 1);
	return tool_usage_error("policy", "unknown command '%s'", argv[1]);
}
