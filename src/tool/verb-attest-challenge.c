/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mboot attest challenge: the verifier's half of enrollment (docs/attest.md). No TPM: the
 * request's EK certificate and AK are checked and the credential is made in software; the
 * machine's answer is checked against the state kept here.
 */
#include <stdlib.h>
#include <string.h>

#include <mboot/attest.h>
#include "shared/fileio.h"
#include "tool/options.h"
#include "tool/tool.h"
#include "tool/verbs.h"

static const char challenge_help[] =
	"Usage: mboot attest challenge -i REQUEST (--ek-ca DIR | --ek-ca-file F)... [--allow-no-ek-cert]\n"
	"                              [--ek-check-validity] -o CHALLENGE --state STATE [--force]\n"
	"       mboot attest challenge --state STATE -i RESPONSE -o MACHINE [--force]\n\n"
	"The verifier's side of enrollment; needs no TPM. The first form checks an enrollment\n"
	"request ('mboot attest enroll'): its EK certificate must chain to the given CAs and hold\n"
	"the request's EK; the AK must be a restricted signing key that never left its TPM\n"
	"(restricted, sign, not decrypt, fixedTPM, fixedParent, sensitiveDataOrigin) and its name\n"
	"must be its public key's. It then makes a credential only that TPM can recover for that\n"
	"AK (TPM2_MakeCredential in software) and writes the CHALLENGE for the machine\n"
	"('mboot attest activate', or tpm2_activatecredential) and the STATE the verifier keeps\n"
	"(which holds only a digest of the credential). The second form (chosen when no --ek-ca,\n"
	"--ek-ca-file or --allow-no-ek-cert is given) checks the machine's RESPONSE against STATE\n"
	"and writes the MACHINE record 'mboot attest verify' trusts.\n\n"
	"  -i FILE             the request (first form) or the response (second form)\n"
	"  --ek-ca DIR         every certificate file (PEM or DER) in DIR is a CA the EK\n"
	"                      certificate may chain to; roots and intermediates alike, the\n"
	"                      chain must end at a self-signed one (repeatable)\n"
	"  --ek-ca-file F      the certificates (PEM, or one DER) in F, the same way (repeatable)\n"
	"  --allow-no-ek-cert  trust on first use: accept a request without an EK certificate;\n"
	"                      without any --ek-ca a certificate is then not checked, and the\n"
	"                      machine record names none\n"
	"  --ek-check-validity refuse an EK certificate (or CA) outside its validity dates; by\n"
	"                      default dates are not checked (an EK certificate's expiry says\n"
	"                      nothing about the TPM) and STATE and the machine record say\n"
	"                      \"ek_certificate_expired\"; the leaf is refused when it is a CA or\n"
	"                      its keyUsage lacks keyEncipherment (RSA) / keyAgreement (ECC)\n"
	"  -o FILE             the challenge (first form) or the machine record (second form)\n"
	"  --state STATE       written by the first form (mode 0600), read by the second\n"
	"  --force             replace existing output files (otherwise they are kept, exit 2)\n\n"
	"Exit: 0 challenge or machine record written, 1 refused (the reason is printed: EK\n"
	"certificate, AK attributes or name, wrong credential), 2 usage or malformed input.\n";

/* --ek-ca and --ek-ca-file: each adds to the same set of roots. */
struct ek_roots_arg {
	mb_ek_roots *roots;
	bool given;
};

static int add_roots(void *target, const char *path, const char *verb)
{
	struct ek_roots_arg *r = target;
	mb_error err = { 0 };
	char what[64];

	if (mb_ek_roots_add_path(r->roots, path, &err) < 0) {
		snprintf(what, sizeof(what), "%s: CA certificates", verb);
		tool_report(what, &err);
		return EXIT_USAGE;
	}
	r->given = true;
	return EXIT_OK;
}

static int report(const char *what, const mb_error *err)
{
	if (err->code == MB_ERR_ATTEST_REFUSED) {
		tool_errorf("attest challenge: refused: %s", err->message);
		return EXIT_FAILED;
	}
	tool_report(what, err);
	return EXIT_USAGE;
}

static int read_input(const char *path, uint8_t **ret, size_t *ret_size)
{
	mb_error err = { 0 };

	if (file_read(path, MB_ATTEST_FILE_MAX, ret, ret_size, &err) < 0) {
		tool_report(path, &err);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

static int make(const char *in, const char *out, const char *state, const mb_attest_challenge_options *opts,
		bool force)
{
	char *challenge = NULL, *st = NULL;
	mb_error err = { 0 };
	uint8_t *req = NULL;
	size_t req_size = 0;
	int rc;

	rc = read_input(in, &req, &req_size);
	if (rc)
		return rc;
	if (mb_attest_challenge_make((const char *) req, req_size, opts, &challenge, &st, &err) < 0) {
		rc = report(in, &err);
		goto out;
	}
	/* The state first: a challenge whose state is lost could never be checked. */
	rc = tool_write_output("attest challenge", state, st, strlen(st), 0600, force);
	if (!rc)
		rc = tool_write_output("attest challenge", out, challenge, strlen(challenge), 0644, force);
	if (!rc)
		printf("Challenge written to %s (the verifier keeps %s)\n", out, state);
out:
	free(req);
	free(challenge);
	free(st);
	return rc;
}

static int check(const char *in, const char *out, const char *state, bool force)
{
	uint8_t *st = NULL, *resp = NULL;
	size_t st_size = 0, resp_size = 0;
	mb_error err = { 0 };
	char *machine = NULL;
	int rc;

	rc = read_input(state, &st, &st_size);
	if (!rc)
		rc = read_input(in, &resp, &resp_size);
	if (rc)
		goto out;
	if (mb_attest_challenge_check((const char *) st, st_size, (const char *) resp, resp_size, &machine, &err) < 0) {
		rc = report(in, &err);
		goto out;
	}
	rc = tool_write_output("attest challenge", out, machine, strlen(machine), 0644, force);
	if (!rc)
		printf("Enrolled: the machine record is %s\n", out);
out:
	free(st);
	free(resp);
	free(machine);
	return rc;
}

int attest_challenge(int argc, char **argv)
{
	const char *in = NULL, *out = NULL, *state = NULL;
	mb_attest_challenge_options opts = MB_OPTIONS_INIT(mb_attest_challenge_options);
	struct ek_roots_arg roots = { 0 };
	mb_error err = { 0 };
	bool force = false, making;
	const tool_option options[] = {
		TOOL_OPT_STR("input", 'i', &in),
		TOOL_OPT_STR("output", 'o', &out),
		TOOL_OPT_FN("ek-ca", 0, &roots, add_roots),
		TOOL_OPT_FN("ek-ca-file", 0, &roots, add_roots),
		TOOL_OPT_BOOL("allow-no-ek-cert", 0, &opts.allow_no_ek_cert),
		TOOL_OPT_BOOL("ek-check-validity", 0, &opts.ek_check_validity),
		TOOL_OPT_STR("state", 0, &state),
		TOOL_OPT_BOOL("force", 0, &force),
		TOOL_OPT_END,
	};
	int rc;

	if (mb_ek_roots_new(&roots.roots, &err) < 0) {
		tool_report("attest challenge", &err);
		return EXIT_USAGE;
	}
	rc = tool_parse_options("attest challenge", challenge_help, options, argc, argv, 0);
	if (rc != TOOL_OPTS_GO_ON)
		goto out;
	if (roots.given)
		opts.roots = roots.roots;
	making = roots.given || opts.allow_no_ek_cert;
	if (!in || !out || !state) {
		rc = tool_usage_error("attest challenge", "needs -i FILE, -o FILE and --state STATE");
		goto out;
	}
	if (making) {
		if (strcmp(out, state) == 0) {
			rc = tool_usage_error("attest challenge", "-o and --state name the same file");
			goto out;
		}
		rc = tool_check_output("attest challenge", state, force);
		if (!rc)
			rc = tool_check_output("attest challenge", out, force);
		if (!rc)
			rc = make(in, out, state, &opts, force);
	} else {
		rc = tool_check_output("attest challenge", out, force);
		if (!rc)
			rc = check(in, out, state, force);
	}
out:
	mb_ek_roots_free(roots.roots);
	return rc;
}
