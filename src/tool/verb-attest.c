/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mboot attest: the sub-commands of remote attestation (docs/attest.md), one file each side. */
#include <stdio.h>
#include <string.h>

#include "tool/tool.h"
#include "tool/verbs.h"

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} subs[] = {
	{ "enroll", attest_enroll, "on the machine: create the EK and an AK, write the enrollment request" },
	{ "activate", attest_activate, "on the machine: answer the verifier's challenge with the TPM" },
	{ "challenge", attest_challenge, "on the verifier: check an enrollment request, make its challenge; check the answer" },
	{ "verify", attest_verify, "on the verifier: judge a machine's evidence (no TPM needed)" },
	{ NULL, NULL, NULL },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "Usage: mboot attest COMMAND [OPTIONS]\n\n"
		   "Remote attestation: this machine proves its boot to a verifier that has no TPM\n"
		   "and does not trust it (docs/attest.md). Commands:\n");
	for (i = 0; subs[i].name; i++)
		fprintf(f, "  %-10s %s\n", subs[i].name, subs[i].summary);
	fprintf(f, "\nmboot quote makes the evidence `attest verify` judges.\n"
		   "Exit status: 0 success or trusted, 1 refused or not trusted, 2 usage or malformed input, 3 TPM error.\n");
}

int verb_attest(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return 0;
	}
	for (i = 0; subs[i].name; i++)
		if (strcmp(argv[1], subs[i].name) == 0)
			return subs[i].run(argc - 1, argv + 1);
	fprintf(stderr, "mboot attest: unknown command '%s' (see mboot attest --help)\n", argv[1]);
	return 2;
}
