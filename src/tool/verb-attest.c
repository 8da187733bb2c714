/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mboot attest: the sub-commands of remote attestation (docs/attest.md), one file each side. */
#include "tool/tool.h"
#include "tool/verbs.h"

static const char attest_help[] =
	"Usage: mboot attest COMMAND [OPTIONS]\n\n"
	"Remote attestation: this machine proves its boot to a verifier that has no TPM and\n"
	"does not trust it (docs/attest.md). Commands:\n"
	"  enroll     on the machine: create the EK and an AK, write the enrollment request\n"
	"  activate   on the machine: answer the verifier's challenge with the TPM\n"
	"  challenge  on the verifier: check an enrollment request, make its challenge; check the answer\n"
	"  verify     on the verifier: judge a machine's evidence (no TPM needed)\n"
	"  push       on the machine: all of it with a fleet verifier (mboot-verifierd, docs/api.md):\n"
	"             enroll on first contact, then prove this boot and print the verdict\n\n"
	"The flow: enroll -> challenge -> activate -> challenge --state (the machine record);\n"
	"then, for every boot, `mboot quote --nonce N` on the machine and `attest verify` here.\n"
	"Exit status: 0 success or trusted, 1 refused or not trusted, 2 usage or malformed input,\n"
	"3 TPM error.\n";

static const tool_command attest_commands[] = {
	{ "enroll", attest_enroll },
	{ "activate", attest_activate },
	{ "challenge", attest_challenge },
	{ "verify", attest_verify },
	{ "push", attest_push },
	{ NULL, NULL },
};

int verb_attest(int argc, char **argv)
{
	return tool_dispatch("attest", attest_help, attest_commands, argc, argv);
}
