/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mboot attest push: the machine's side of the fleet verifier (docs/api.md). Enrolls on first
 * contact (the TPM work is attest enroll's and activate's, the verifier's answers come over
 * HTTPS), then proves this boot: a nonce from the verifier, mboot quote's evidence, the verdict.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/hex.h"
#include "shared/json.h"
#include "tool/http-client.h"
#include "tool/options.h"
#include "tool/tool.h"
#include "tool/verbs.h"

#define VERB "attest push"
#define INTERVAL_MAX (7u * 24 * 3600)

static const char push_help[] =
	"Usage: mboot attest push [--server URL] [--machine-id ID] [--ak-file FILE] [--interval S]\n"
	"                         [--log LOG] [--userspace-log FILE] [--ima-log FILE | --no-ima-log]\n"
	"                         [--tcti TCTI] [--ca-file FILE]\n"
	"                         [--insecure] [--json [--compact]]\n\n"
	"Prove this boot to a fleet verifier (mboot-verifierd, docs/api.md). On first contact (no AK\n"
	"file, or the verifier does not know the machine) enroll: create the EK and an AK ('attest\n"
	"enroll'), send the request, answer the verifier's challenge with the TPM ('attest activate')\n"
	"and keep the AK file. Then take a single-use nonce from the verifier, quote the PCRs with the\n"
	"logs ('mboot quote'), send the evidence and print the verifier's verdict as 'attest verify'\n"
	"prints it. Nothing listens on the machine: it pushes, from mboot-attest.timer.\n\n"
	"  --server URL        the verifier, https://HOST:PORT; default $MBOOT_VERIFIER\n"
	"  --machine-id ID     this machine's name at the verifier (1 to 64 of A-Z a-z 0-9 . _ -);\n"
	"                      default $MBOOT_MACHINE_ID, else the host name\n"
	"  --ak-file FILE      the AK kept between runs (0600, replaced atomically on enrollment);\n"
	"                      default " MB_AK_FILE_DEFAULT "\n"
	"  --interval S        on enrollment: how often this machine will push, in seconds (the\n"
	"                      verifier calls it stale after twice that); default the verifier's\n"
	"  --log LOG           the firmware event log (default " MB_DEFAULT_LOG "); named by\n"
	"                      its SHA-256 instead of sent when the verifier keeps its judgment\n"
	"                      (its nonce answer names it), and sent if it asks for it\n"
	"  --userspace-log FILE  the userspace measurement log; default " MB_CEL_DEFAULT_PATH "\n"
	"                      when it exists\n"
	"  --ima-log FILE      the kernel's binary IMA list; default\n"
	"                      " MB_IMA_DEFAULT_PATH "\n"
	"                      when it can be read and the TPM is the system's. Only the entries\n"
	"                      the verifier has not judged in this boot are sent (its nonce\n"
	"                      answer says how many it has)\n"
	"  --no-ima-log        send no IMA list\n"
	"  --tcti TCTI         the TPM; default $TPM2TOOLS_TCTI, else " MB_TPM_DEFAULT_TCTI "\n"
	"  --ca-file FILE      the CA certificates (PEM) the verifier's must chain to; default the\n"
	"                      system's. Certificates are always verified.\n"
	"  --insecure          allow a plain http:// URL (tests on the loopback only)\n"
	"  --json              print the verifier's answer (status, verdict) as JSON\n"
	"  --compact           the JSON on one line (implies --json)\n\n"
	"Exit: 0 trusted, 1 not trusted (the reasons printed), 2 usage, input, network or verifier\n"
	"error, 3 TPM error.\n";

typedef struct push {
	http_client *http;
	const char *id, *ak_path, *tcti;
	unsigned interval; /* 0: the verifier's default */
	mb_tpm *tpm;
	char *ak;
	size_t ak_size;
	char path[256]; /* the longest: /v1/machines/ID/evidence?nonce=HEX, 157 bytes */
	/* the IMA entries the verifier judged already in this boot, by its nonce answer */
	uint64_t ima_from;
	uint8_t ima_last[20];
	/* the firmware log whose judgment the verifier keeps, by its nonce answer */
	bool log_known;
	uint8_t log_sha256[32];
} push;

static int tpm_open(push *p)
{
	return p->tpm ? EXIT_OK : tool_tpm_open(p->tcti, &p->tpm);
}

static void ak_clear(push *p)
{
	if (p->ak)
		explicit_bzero(p->ak, p->ak_size);
	free(p->ak);
	p->ak = NULL;
	p->ak_size = 0;
}

/* A member of an answer, of a type; NULL (said) when it lacks it. */
static json_t *member(json_t *o, const char *key, json_type type)
{
	json_t *v = NULL;

	if (!o || !(v = json_object_get(o, key)) || json_typeof(v) != type) {
		tool_errorf("%s: the verifier's answer has no \"%s\" %s", VERB, key,
			    type == JSON_STRING ? "string" : type == JSON_OBJECT ? "object" : "member");
		return NULL;
	}
	return v;
}

/*
 * Enrollment: the TPM makes an AK and the request; the verifier checks the EK chain and answers
 * with a credential only this TPM can open; the TPM opens it; the verifier stores the machine.
 * The AK file is written once the verifier has taken the activation: a kept AK file means enrolled.
 */
static int enroll(push *p)
{
	json_t *body = NULL, *request = NULL, *answer = NULL, *challenge;
	char *ak = NULL, *request_text = NULL, *response = NULL, *body_text = NULL, *challenge_text = NULL;
	mb_error err = { 0 };
	int rc;

	rc = attest_ak_dir(p->ak_path);
	if (rc == EXIT_OK)
		rc = tpm_open(p);
	if (rc != EXIT_OK)
		return rc;
	if (mb_tpm_attest_enroll(p->tpm, MB_ATTEST_KEY_ECC, &ak, &request_text, &err) < 0) {
		rc = attest_machine_exit("TPM", &err);
		goto out;
	}
	rc = EXIT_USAGE;
	if (untrusted_json_parse(request_text, strlen(request_text), JSON_READ_MAX_DEPTH, &request, &err) < 0) {
		tool_report("the enrollment request", &err);
		goto out;
	}
	body = json_object();
	if (!body || json_object_set_new(body, "machine_id", json_text(p->id)) < 0 ||
	    json_object_set_new(body, "request", json_incref(request)) < 0 ||
	    (p->interval && json_object_set_new(body, "interval", json_integer(p->interval)) < 0) ||
	    !(body_text = json_write(body, JSON_LAYOUT_COMPACT))) {
		tool_errorf("out of memory");
		goto out;
	}
	rc = http_call(p->http, "POST", "/v1/enroll", body_text, &answer);
	if (rc != EXIT_OK)
		goto out;
	rc = EXIT_USAGE;
	challenge = member(answer, "challenge", JSON_OBJECT);
	if (!challenge)
		goto out;
	challenge_text = json_write(challenge, JSON_LAYOUT_COMPACT);
	if (!challenge_text) {
		tool_errorf("out of memory");
		goto out;
	}
	if (mb_tpm_attest_activate(p->tpm, ak, strlen(ak), challenge_text, strlen(challenge_text), &response,
				   &err) < 0) {
		rc = attest_machine_exit("attest activate", &err);
		goto out;
	}
	snprintf(p->path, sizeof(p->path), "/v1/enroll/%s/activate", p->id);
	rc = http_call(p->http, "POST", p->path, response, NULL);
	if (rc != EXIT_OK)
		goto out;
	rc = tool_write_output(VERB, p->ak_path, ak, strlen(ak), 0600, true);
	if (rc != EXIT_OK)
		goto out;
	fprintf(stderr, "mboot %s: enrolled as '%s'; the AK is kept in %s\n", VERB, p->id, p->ak_path);
	ak_clear(p);
	p->ak = ak;
	p->ak_size = strlen(ak);
	ak = NULL;
out:
	if (ak)
		explicit_bzero(ak, strlen(ak));
	free(ak);
	free(request_text);
	free(body_text);
	free(challenge_text);
	free(response);
	json_decref(request);
	json_decref(body);
	json_decref(answer);
	return rc;
}

/* A nonce for this machine: EXIT_OK with hex (64 bytes of room), or -ENOENT when it is unknown. */
static int take_nonce(push *p, char hex[2 * MB_ATTEST_NONCE_MAX + 1])
{
	json_t *answer = NULL, *n;
	long status = 0;
	size_t len;
	int rc;

	snprintf(p->path, sizeof(p->path), "/v1/machines/%s/nonce", p->id);
	rc = http_request(p->http, "POST", p->path, NULL, &status, &answer);
	if (rc != EXIT_OK)
		return rc;
	if (status == 404) {
		json_decref(answer);
		return -ENOENT;
	}
	rc = EXIT_USAGE;
	if (status != 200) {
		http_report_status(p->http, "POST", p->path, status, answer);
		goto out;
	}
	n = member(answer, "nonce", JSON_STRING);
	if (!n)
		goto out;
	len = strlen(json_string_value(n));
	if (len % 2 || len / 2 < MB_ATTEST_NONCE_MIN || len / 2 > MB_ATTEST_NONCE_MAX ||
	    strspn(json_string_value(n), "0123456789abcdefABCDEF") != len) {
		tool_errorf("%s: the verifier's nonce is not %u to %u bytes of hex", VERB, MB_ATTEST_NONCE_MIN,
			    MB_ATTEST_NONCE_MAX);
		goto out;
	}
	memcpy(hex, json_string_value(n), len + 1);
	/* a hint only: the verifier judges on top of its own state, whatever this sends */
	p->ima_from = 0;
	n = json_object_get(answer, "ima_from");
	if (json_is_integer(n) && json_integer_value(n) > 0) {
		json_t *last = json_object_get(answer, "ima_last");

		if (json_is_string(last) && json_string_length(last) == 40 &&
		    hex_parse(json_string_value(last), 40, p->ima_last, sizeof(p->ima_last)) == 0)
			p->ima_from = (uint64_t) json_integer_value(n);
	}
	n = json_object_get(answer, "eventlog_sha256");
	p->log_known = json_is_string(n) && json_string_length(n) == 64 &&
		       hex_parse(json_string_value(n), 64, p->log_sha256, sizeof(p->log_sha256)) == 0;
	rc = EXIT_OK;
out:
	json_decref(answer);
	return rc;
}

/* The verdict's reasons, printed as attest verify prints them; the exit code by the status. */
static int print_verdict(json_t *answer, tool_json json)
{
	json_t *status, *verdict = NULL, *reasons = NULL;
	attest_reason_text *texts = NULL;
	size_t n = 0, i;
	bool trusted;

	status = member(answer, "status", JSON_STRING);
	if (!status)
		return EXIT_USAGE;
	trusted = strcmp(json_string_value(status), "trusted") == 0;
	if (!trusted && strcmp(json_string_value(status), "untrusted") != 0) {
		tool_errorf("%s: the verifier answered the evidence with status '%s'", VERB,
			    json_string_value(status));
		return EXIT_USAGE;
	}
	if (json) {
		tool_json_print(json, answer);
		return trusted ? EXIT_OK : EXIT_FAILED;
	}
	if (((verdict = json_object_get(answer, "verdict")) != NULL) &&
	    ((reasons = json_object_get(verdict, "reasons")) != NULL) && json_is_array(reasons))
		n = json_array_size(reasons);
	texts = calloc(n ? n : 1, sizeof(*texts));
	if (!texts) {
		tool_errorf("out of memory");
		return EXIT_USAGE;
	}
	for (i = 0; i < n; i++) {
		json_t *r = json_array_get(reasons, i), *name = NULL, *detail = NULL;

		name = json_object_get(r, "name");
		detail = json_object_get(r, "detail");
		texts[i].name = json_is_string(name) ? json_string_value(name) : "?";
		texts[i].detail = json_is_string(detail) ? json_string_value(detail) : "";
	}
	/* The verifier never trusts a machine without a policy: a trusted verdict met one. */
	attest_print_verdict(trusted, true, texts, n);
	free(texts);
	return trusted ? EXIT_OK : EXIT_FAILED;
}

static int attest(push *p, const quote_logs *logs, tool_json json)
{
	char hex[2 * MB_ATTEST_NONCE_MAX + 1];
	uint8_t nonce[MB_ATTEST_NONCE_MAX];
	mb_quote_input in = MB_OPTIONS_INIT(mb_quote_input);
	json_t *answer = NULL;
	char *evidence = NULL;
	long status = 0;
	int rc;

	rc = take_nonce(p, hex);
	if (rc == -ENOENT) {
		fprintf(stderr, "mboot %s: the verifier does not know '%s': enrolling again\n", VERB, p->id);
		rc = enroll(p);
		if (rc == EXIT_OK)
			rc = take_nonce(p, hex);
		if (rc == -ENOENT) {
			tool_errorf("%s: the verifier still does not know '%s' after enrolling", VERB, p->id);
			rc = EXIT_USAGE;
		}
	}
	if (rc != EXIT_OK)
		return rc;
	in.nonce = nonce;
	in.nonce_size = strlen(hex) / 2;
	if (hex_parse(hex, strlen(hex), nonce, in.nonce_size) < 0)
		return EXIT_USAGE; /* checked by take_nonce */
	in.ima_start = p->ima_from;
	in.ima_last = p->ima_from ? p->ima_last : NULL;
	/* the log is named, not sent, when it is the one the verifier holds the judgment of */
	in.eventlog_known = p->log_known ? p->log_sha256 : NULL;
	snprintf(p->path, sizeof(p->path), "/v1/machines/%s/evidence?nonce=%s", p->id, hex);
	for (;;) {
		json_t *send;

		rc = quote_evidence(p->tcti, &p->tpm, p->ak, p->ak_size, logs, &in, &evidence);
		if (rc != EXIT_OK)
			return rc;
		rc = http_request(p->http, "POST", p->path, evidence, &status, &answer);
		if (rc != EXIT_OK)
			break;
		send = json_object_get(answer, "send");
		/* the verifier no longer keeps that judgment (it restarted, or another one answered):
		 * once more with the log, under the same nonce, which it left unused */
		if (status == 409 && in.eventlog_known && json_is_string(send) &&
		    strcmp(json_string_value(send), "eventlog") == 0) {
			in.eventlog_known = NULL;
			json_decref(answer);
			answer = NULL;
			free(evidence);
			evidence = NULL;
			continue;
		}
		if (status < 200 || status > 299) {
			http_report_status(p->http, "POST", p->path, status, answer);
			rc = EXIT_USAGE;
		} else {
			rc = print_verdict(answer, json);
		}
		break;
	}
	json_decref(answer);
	free(evidence);
	return rc;
}

int attest_push(int argc, char **argv)
{
	http_options ho = { .server = getenv("MBOOT_VERIFIER") };
	quote_logs logs = { 0 };
	push p = { .id = getenv("MBOOT_MACHINE_ID"), .ak_path = MB_AK_FILE_DEFAULT };
	tool_json json = TOOL_JSON_OFF;
	const tool_option options[] = {
		HTTP_CLIENT_OPTIONS(&ho),
		QUOTE_LOG_OPTIONS(&logs),
		TOOL_OPT_STR("machine-id", 0, &p.id),
		TOOL_OPT_STR("ak-file", 0, &p.ak_path),
		TOOL_OPT_NUMBER("interval", 0, &p.interval, 1, INTERVAL_MAX),
		TOOL_OPT_STR("tcti", 0, &p.tcti),
		TOOL_OPT_JSON_STYLE(&json),
		TOOL_OPT_END,
	};
	char host[256];
	struct stat st;
	int rc;

	rc = tool_parse_options(VERB, push_help, options, argc, argv, 0);
	if (rc != TOOL_OPTS_GO_ON)
		return rc;
	if (quote_logs_defaults(&logs, 0, p.tcti, VERB) < 0)
		return EXIT_USAGE;
	if (!p.id || !p.id[0]) {
		/* The host name: what an operator reads in 'mboot fleet list'; the verifier refuses it
		 * for another TPM (409), so two machines of one name cannot pass for each other. */
		if (gethostname(host, sizeof(host)) < 0) {
			tool_errorf("%s: no host name (%s): give --machine-id", VERB, strerror(errno));
			return EXIT_USAGE;
		}
		host[sizeof(host) - 1] = '\0';
		p.id = host;
	}
	if (!http_machine_id_valid(p.id))
		return tool_usage_error(VERB, "machine id '%s': 1 to 64 of A-Z a-z 0-9 . _ -, not starting with '.'",
					p.id);
	if (strcmp(p.ak_path, "-") == 0)
		return tool_usage_error(VERB, "the AK is kept in a file, not written to standard output");
	rc = http_client_new(VERB, &ho, &p.http);
	if (rc != EXIT_OK)
		return rc;

	if (stat(p.ak_path, &st) < 0 && errno == ENOENT) {
		rc = enroll(&p);
	} else {
		rc = attest_read_ak_file(p.ak_path, &p.ak, &p.ak_size);
	}
	if (rc == EXIT_OK)
		rc = attest(&p, &logs, json);
	ak_clear(&p);
	mb_tpm_free(p.tpm);
	http_client_free(p.http);
	return rc;
}
