/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mboot unseal: the secret, when the PCRs hold a state it is sealed to (docs/seal.md).
 * The library chooses the branch or signature and says why a refusal happened
 * (mb_tpm_unseal_sealed); this shows that explanation, as lines or as JSON.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>


#include "shared/fileio.h"
#include "shared/hex.h"
#include "tool/pin.h"
#include "tool/seal-common.h"
#include "tool/tool.h"
#include "tool/verbs.h"

static const char unseal_help[] =
	"Usage: mboot unseal -i SEALED [-o FILE] [--signature SIG ...] [--log LOG] [--json]\n"
	"                    [--compact] [--pin] [--pin-file F] [--tcti TCTI]\n\n"
	"Unseal a secret sealed by 'mboot seal': to stdout, or to FILE (created 0600, must not\n"
	"exist). When the PCRs do not hold the sealed values, say which differ and, when the\n"
	"sealed file keeps the event log of sealing and today's log is readable, which events\n"
	"made them differ.\n\n"
	"  --signature SIG  for a secret sealed --authorized-by: a signed policy ('mboot policy\n"
	"                sign'); up to 8, the one whose values the PCRs hold is used\n"
	"  --log LOG     today's event log (default " MB_DEFAULT_LOG ")\n"
	"  --pin         a secret sealed with --pin needs its PIN (the file says so: it is asked\n"
	"                anyway): asked on the terminal, no echo; one line of stdin when stdin is\n"
	"                no terminal\n"
	"  --pin-file F  the PIN from file F ('-': stdin), one trailing newline dropped\n"
	"  --json        when not unsealed (exit 1), the explanation as one JSON object on stdout\n"
	"                {\"unsealed\": false, \"pcrs\": [{\"pcr\", \"bank\", \"expected\", \"actual\"}],\n"
	"                \"events\": [...], \"notes\": [...]}\n"
	"  --compact     the JSON on one line (implies --json)\n"
	"  --tcti TCTI   the TPM; default $TPM2TOOLS_TCTI, else " MB_TPM_DEFAULT_TCTI "\n\n"
	"Exit: 0 unsealed, 1 the PCRs are not the sealed ones or a wrong PIN (the TPM counts it),\n"
	"2 usage or input error (malformed sealed file), 3 TPM error (including dictionary-attack\n"
	"lockout).\n";


/*
 * Why an unseal failed, on stderr: stdout is where the secret goes, often into a pipe that
 * must not mistake an explanation for a key. (With `unseal --json`, stdout carries no secret
 * and the explanation is mb_unseal_explanation_to_json's document.)
 */
static void show_pcr(const mb_unseal_item *it)
{
	const mb_digest_info *d = mb_digest_by_alg(it->alg);
	const char *sig = it->signature;
	char h1[2 * MB_DIGEST_MAX + 1], h2[2 * MB_DIGEST_MAX + 1];

	hex_format(it->expected, d->size, h1);
	if (it->now_read)
		hex_format(it->now, d->size, h2);
	fprintf(stderr, "%s%sPCR %u (%s) differs: %s %s, now %s\n", sig ? sig : "", sig ? ": " : "", it->pcr,
		d->name, sig ? "signed" : "sealed to", h1, it->now_read ? h2 : "(not readable)");
}

static void show_event(const mb_unseal_item *it)
{
	if (it->before && it->after)
		fprintf(stderr, "PCR %u: %s: %s → %s\n", it->pcr, it->change, it->before, it->after);
	else
		fprintf(stderr, "PCR %u: %s: %s\n", it->pcr, it->change,
			it->before ? it->before : it->after ? it->after : "?");
}

static void show_other_key(const mb_unseal_item *it)
{
	char h1[2 * MB_TPM_NAME_SIZE + 1], h2[2 * MB_TPM_NAME_SIZE + 1];

	hex_format(it->key_name, MB_TPM_NAME_SIZE, h1);
	hex_format(it->sealed_key_name, MB_TPM_NAME_SIZE, h2);
	fprintf(stderr, "%s: signed by key %s, but the secret is sealed to key %s\n", it->signature, h1, h2);
}

/* The explanation in its order; errors met while explaining always go to stderr. */
void show_explanation(const mb_unseal_explanation *e, bool only_errors)
{
	for (size_t i = 0; i < e->n_items; i++) {
		const mb_unseal_item *it = &e->items[i];

		if (only_errors && it->kind != MB_UNSEAL_ERROR)
			continue;
		switch (it->kind) {
		case MB_UNSEAL_NOTE: fprintf(stderr, "%s\n", it->text); break;
		case MB_UNSEAL_PCR: show_pcr(it); break;
		case MB_UNSEAL_EVENT: show_event(it); break;
		case MB_UNSEAL_OTHER_KEY: show_other_key(it); break;
		case MB_UNSEAL_ERROR: tool_report(it->what, &it->error); break;
		}
	}
}

void unseal_explain(const mb_unseal_explanation *e)
{
	show_explanation(e, false);
}

int unseal_to_secret(mb_tpm *tpm, const mb_sealed *s, const char *log_path, char **sig_paths, size_t n_sigs,
		     const secret_buf *pin, secret_buf *secret, unseal_report *report)
{
	mb_policy_signature sigs[MAX_SIGNATURES];
	mb_unseal_options opt = { .size = sizeof(mb_unseal_options), .log_path = log_path };
	secret_buf own_pin = { 0 };
	mb_unseal_explanation *e = NULL;
	mb_error err = { 0 };
	size_t i;
	int rc = EXIT_OK, r;

	memset(sigs, 0, sizeof(sigs));
	for (i = 0; i < n_sigs; i++) {
		uint8_t *text = NULL;
		size_t size = 0;

		rc = read_whole(sig_paths[i], 1u << 20, &text, &size);
		if (rc)
			goto out;
		if (mb_policy_signature_parse((const char *) text, size, &sigs[i], &err) < 0) {
			free(text);
			tool_report(sig_paths[i], &err);
			rc = EXIT_USAGE;
			goto out;
		}
		free(text);
	}
	opt.signatures = sigs;
	opt.signature_names = (const char *const *) sig_paths;
	opt.n_signatures = n_sigs;
	if (mb_sealed_pin(s) && !pin) {
		rc = pin_read("unseal", NULL, false, &own_pin);
		if (rc)
			goto out;
		pin = &own_pin;
	}
	if (mb_sealed_pin(s)) {
		opt.pin = pin->p;
		opt.pin_size = pin->size;
	}
	r = mb_tpm_unseal_sealed(tpm, s, &opt, secret->p, &secret->size, &e, &err);
	secret_page_free(&own_pin);
	if (e)
		show_explanation(e, report != NULL);
	if (e && report) {
		mb_unseal_explanation_free(report->e);
		report->e = e; /* for the document */
		e = NULL;
	}
	if (r == 0)
		rc = EXIT_OK;
	else if (r == MB_ERR_TPM_POLICY)
		rc = EXIT_FAILED;
	else if (r == MB_ERR_TPM_AUTH) {
		rc = pin_wrong(tpm);
		if (report)
			report->wrong_pin = true;
	}
	else if (r == -EBADMSG && mb_sealed_policy_kind(s) == MB_SEAL_POLICY_AUTHORIZE) { /* a malformed signature; the message names it */
		tool_errorf("%s", err.message);
		rc = EXIT_USAGE;
	} else
		rc = tpm_error_exit(&err);
out:
	secret_page_free(&own_pin);
	mb_unseal_explanation_free(e);
	for (i = 0; i < n_sigs; i++)
		mb_policy_signature_done(&sigs[i]);
	return rc;
}

int verb_unseal(int argc, char **argv)
{
	const char *in, *out, *log_path;
	seal_args args;
	secret_buf secret = { 0 }, pin = { 0 };
	mb_sealed *s = NULL;
	mb_tpm *tpm = NULL;
	unseal_report report = { 0 };
	bool authorized;
	int rc, fd;

	(void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	rc = parse_seal_args(argc, argv, "unseal", unseal_help, TAKES_SIGNATURE | TAKES_JSON | TAKES_PIN, &args);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	in = args.in;
	out = args.out;
	log_path = args.log ? args.log : MB_DEFAULT_LOG;
	if (!in)
		return tool_usage_error("unseal", "needs -i SEALED");

	rc = load_sealed(in, &s);
	if (rc)
		return rc;
	authorized = mb_sealed_policy_kind(s) == MB_SEAL_POLICY_AUTHORIZE;
	if (authorized && !args.n_sigs) {
		rc = tool_usage_error("unseal", "%s is sealed to signed policies: give --signature SIG", in);
		goto out;
	}
	if (!authorized && args.n_sigs) {
		rc = tool_usage_error("unseal", "%s is sealed to PCR values, not to signed policies: --signature "
				      "does not apply", in);
		goto out;
	}
	if (args.pin && !mb_sealed_pin(s))
		fprintf(stderr, "mboot: note: %s is sealed without a PIN: none is needed\n", in);
	if (mb_sealed_pin(s)) {
		/* before the TPM: a PIN file that cannot be read is an input error */
		rc = pin_read("unseal", args.pin_file, false, &pin);
		if (rc)
			goto out;
	}
	rc = unseal_new_secret(args.tcti, s, log_path, args.sigs, args.n_sigs, mb_sealed_pin(s) ? &pin : NULL, &tpm,
			       &secret, args.json ? &report : NULL);
	if (args.json && rc == EXIT_FAILED &&
	    tool_json_text_print(mb_unseal_explanation_to_json(report.e, report.wrong_pin, args.json == TOOL_JSON_PRETTY)))
		rc = EXIT_USAGE;
	if (rc)
		goto out;
	if (out) {
		fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0) {
			tool_errorf("%s: %s", out, strerror(errno));
			rc = EXIT_USAGE;
			goto out;
		}
		if (fd_write_all(fd, secret.p, secret.size) < 0 || close(fd) < 0) {
			tool_errorf("%s: write failed", out);
			unlink(out);
			rc = EXIT_USAGE;
			goto out;
		}
	} else if (fd_write_all(STDOUT_FILENO, secret.p, secret.size) < 0) {
		tool_errorf("stdout: write failed");
		rc = EXIT_USAGE;
		goto out;
	}
	rc = EXIT_OK;
out:
	secret_free(&secret);
	secret_free(&pin);
	mb_sealed_free(s);
	mb_tpm_free(tpm);
	mb_unseal_explanation_free(report.e);
	return rc;
}
