/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mboot fleet: the operator's client of mboot-verifierd (docs/api.md), a thin one: each
 * command is one call of the API, its answer printed as a table or text, or as it came (--json).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mboot/policy.h>

#include "shared/fileio.h"
#include "tool/http-client.h"
#include "tool/options.h"
#include "tool/tool.h"
#include "tool/verbs.h"

/* The verifier refuses larger bodies (its --max-body default). */
#define POLICY_FILE_MAX (8u << 20)

static const char fleet_help[] =
	"Usage: mboot fleet COMMAND [ARGS] [--server URL] [--token-file FILE] [--json]\n"
	"                   [--compact] [--ca-file FILE] [--insecure]\n\n"
	"The fleet a verifier (mboot-verifierd, docs/api.md) knows, for its operators. Commands:\n"
	"  list                    every machine: id, status, last attestation, policy (short digest)\n"
	"  show ID                 one machine: status, the last verdict's reasons, its history\n"
	"  policy set ID POLICY    judge ID by the policy file POLICY ('mboot policy generate'); its\n"
	"                          latest evidence is judged again, the new status printed\n"
	"  policy clear ID         remove ID's policy (a machine without one is never trusted)\n"
	"  revoke ID               refuse ID's evidence from now on (status revoked)\n"
	"  forget ID               forget ID, its history and nonces; it may enroll again\n"
	"  audit                   what operators did, newest first: when, the token's name, the\n"
	"                          action, the machine and the detail (a policy's sha256)\n\n"
	"Statuses: enrolled, trusted, untrusted, stale (nothing judged within twice the machine's\n"
	"interval), revoked.\n\n"
	"  --server URL       the verifier, https://HOST:PORT; default $MBOOT_VERIFIER\n"
	"  --token-file FILE  the operator token ('mboot-verifierd --new-token') on its first line;\n"
	"                     refused when group or others may read the file. Default\n"
	"                     $MBOOT_FLEET_TOKEN_FILE, else ~/.config/mboot/fleet-token if it exists\n"
	"                     (under $XDG_CONFIG_HOME when that is set)\n"
	"  --json             print the verifier's answer as JSON\n"
	"  --compact          the JSON on one line (implies --json)\n"
	"  --ca-file FILE     the CA certificates (PEM) the verifier's must chain to; default the\n"
	"                     system's. Certificates are always verified.\n"
	"  --insecure         allow a plain http:// URL (tests on the loopback only)\n\n"
	"Exit: 0 done (show: the machine is trusted), 1 show: the machine is not trusted (enrolled,\n"
	"untrusted, stale or revoked), 2 usage, network or verifier error (its message printed).\n";

typedef struct fleet {
	const char *verb;
	const char *args[2];
	tool_json json;
	http_client *http;
	char path[160];
	char token_path[4096];
} fleet;

/* --token-file's default (fleet_help), in buf; NULL when there is none. */
static const char *default_token_file(char *buf, size_t size)
{
	const char *env = getenv("MBOOT_FLEET_TOKEN_FILE"), *config = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");
	int n;

	if (env && *env)
		return env;
	if (config && *config)
		n = snprintf(buf, size, "%s/mboot/fleet-token", config);
	else if (home && *home)
		n = snprintf(buf, size, "%s/.config/mboot/fleet-token", home);
	else
		return NULL;
	if (n < 0 || (size_t) n >= size || access(buf, F_OK) != 0)
		return NULL;
	return buf;
}

/*
 * The options every command takes, and exactly n_args arguments (machine ids checked as the
 * API wants them, so that none can reach into another path). EXIT_OK with f->http ready;
 * -1 after --help.
 */
static int fleet_start(fleet *f, const char *verb, const char *const *arg_names, size_t n_args, int argc, char **argv)
{
	http_options ho = { .server = getenv("MBOOT_VERIFIER") };
	const tool_option options[] = {
		HTTP_CLIENT_OPTIONS(&ho),
		TOOL_OPT_STR("token-file", 0, &ho.token_file),
		TOOL_OPT_JSON_STYLE(&f->json),
		TOOL_OPT_END,
	};
	size_t i;
	int rc;

	f->verb = verb;
	rc = tool_parse_options(verb, fleet_help, options, argc, argv, (int) n_args);
	if (rc != TOOL_OPTS_GO_ON)
		return rc == EXIT_OK ? -1 : rc; /* -1: after --help */
	if ((size_t) (argc - optind) < n_args)
		return tool_usage_error(verb, "needs %s", arg_names[argc - optind]);
	for (i = 0; i < n_args; i++)
		f->args[i] = argv[optind + i];
	if (n_args && !http_machine_id_valid(f->args[0]))
		return tool_usage_error(verb, "'%s' is not a machine id (1 to 64 of A-Z a-z 0-9 . _ -)", f->args[0]);
	if (!ho.token_file)
		ho.token_file = default_token_file(f->token_path, sizeof(f->token_path));
	if (!ho.token_file)
		return tool_usage_error(verb, "needs an operator token: --token-file FILE, $MBOOT_FLEET_TOKEN_FILE "
					      "or ~/.config/mboot/fleet-token");
	return http_client_new(verb, &ho, &f->http);
}

/* A string from the verifier, without the control characters that could drive the terminal. */
static void put_text(const char *s)
{
	for (; s && *s; s++)
		if ((unsigned char) *s >= 0x20 && *s != 0x7f)
			putchar(*s);
}

/* "label value\n", the value as put_text prints it. */
static void line(const char *label, const char *value)
{
	fputs(label, stdout);
	put_text(value);
	putchar('\n');
}

static const char *str(json_t *o, const char *key)
{
	json_t *v = NULL;

	if (((v = json_object_get(o, key)) != NULL) && json_is_string(v))
		return json_string_value(v);
	return NULL;
}

static void print_json(const fleet *f, json_t *o)
{
	if (o)
		tool_json_print(f->json, o);
	else
		puts("{}");
}

static int fleet_end(fleet *f, int rc)
{
	http_client_free(f->http);
	return rc;
}

static int fleet_list(int argc, char **argv)
{
	fleet f = { 0 };
	json_t *answer = NULL, *machines = NULL;
	int rc = fleet_start(&f, "fleet list", NULL, 0, argc, argv), width = 10;
	size_t n, i;

	if (rc < 0)
		return EXIT_OK;
	if (rc != EXIT_OK)
		return fleet_end(&f, rc);
	rc = http_call(f.http, "GET", "/v1/machines", NULL, &answer);
	if (rc != EXIT_OK)
		return fleet_end(&f, rc);
	if (f.json) {
		print_json(&f, answer);
		goto out;
	}
	if (!(machines = json_object_get(answer, "machines")) ||
	    !json_is_array(machines)) {
		tool_errorf("fleet list: the verifier's answer has no \"machines\" list");
		rc = EXIT_USAGE;
		goto out;
	}
	n = json_array_size(machines);
	for (i = 0; i < n; i++) {
		const char *id = str(json_array_get(machines, i), "id");

		if (id && (int) strlen(id) > width && strlen(id) <= 64)
			width = (int) strlen(id);
	}
	printf("%-*s  %-9s  %-20s  %s\n", width, "ID", "STATUS", "LAST ATTESTATION", "POLICY");
	for (i = 0; i < n; i++) {
		json_t *m = json_array_get(machines, i);
		const char *id = str(m, "id"), *status = str(m, "status"), *last = str(m, "last_attestation");
		const char *policy = str(m, "policy");
		int pad;

		put_text(id ? id : "?");
		for (pad = id ? (int) strlen(id) : 1; pad < width + 2; pad++)
			putchar(' ');
		printf("%-9.9s  %-20.20s  %.12s\n", status ? status : "?", last ? last : "-", policy ? policy : "-");
	}
out:
	json_decref(answer);
	return fleet_end(&f, rc);
}

static void print_machine(json_t *m)
{
	json_t *verdict = NULL, *reasons = NULL, *history = NULL, *v = NULL;
	const char *s;
	size_t i, n;

	line("machine: ", str(m, "id"));
	line("status: ", str(m, "status"));
	line("enrolled: ", str(m, "enrolled"));
	s = str(m, "last_attestation");
	line("last attestation: ", s ? s : "never");
	if (((v = json_object_get(m, "interval")) != NULL) && json_is_integer(v))
		printf("interval: %lld s\n", (long long) json_integer_value(v));
	s = str(m, "policy");
	line("policy: ", s ? s : "none (never trusted)");

	if (!(verdict = json_object_get(m, "verdict")) || !json_is_object(verdict)) {
		printf("last verdict: none\n");
	} else {
		json_t *t = NULL;

		t = json_object_get(verdict, "trusted");
		printf("last verdict: %s\n", json_is_true(t) ? "trusted" : "NOT TRUSTED");
		if (((reasons = json_object_get(verdict, "reasons")) != NULL) &&
		    json_is_array(reasons)) {
			n = json_array_size(reasons);
			for (i = 0; i < n; i++) {
				json_t *r = json_array_get(reasons, i);

				fputs("  ", stdout);
				put_text(str(r, "name"));
				line(": ", str(r, "detail"));
			}
		}
	}
	/* What the verifier found changed since the machine's last trusted boot. */
	if (((v = json_object_get(m, "since_trusted")) != NULL) && json_is_array(v)) {
		n = json_array_size(v);
		printf("since the last trusted attestation:%s\n", n ? "" : " the same events");
		for (i = 0; i < n; i++) {
			json_t *d = json_array_get(v, i), *ev = json_object_get(d, "event"),
			       *was = json_object_get(d, "trusted_event");

			printf("  PCR %lld ", (long long) json_integer_value(json_object_get(d, "pcr")));
			put_text(str(d, "change"));
			fputs(": ", stdout);
			if (json_is_integer(ev))
				printf("event %lld", (long long) json_integer_value(ev));
			else
				printf("trusted event %lld", (long long) json_integer_value(was));
			fputs(" ", stdout);
			put_text(str(d, "type"));
			line(": ", str(d, "description"));
		}
	}
	if (((history = json_object_get(m, "history")) != NULL) && json_is_array(history) &&
	    (n = json_array_size(history)) > 0) {
		printf("history (newest first):\n");
		for (i = 0; i < n; i++) {
			json_t *h = json_array_get(history, i), *t = NULL, *nr = NULL;

			t = json_object_get(h, "trusted");
			nr = json_object_get(h, "reasons");
			fputs("  ", stdout);
			put_text(str(h, "at"));
			if (json_is_true(t))
				printf("  trusted\n");
			else
				printf("  not trusted (%lld reason(s))\n", (long long) json_integer_value(nr));
		}
	}
	if (((v = json_object_get(m, "audit")) != NULL) && json_is_array(v) && (n = json_array_size(v)) > 0) {
		printf("operator actions (newest first):\n");
		for (i = 0; i < n; i++) {
			json_t *a = json_array_get(v, i);

			fputs("  ", stdout);
			put_text(str(a, "at"));
			fputs("  ", stdout);
			put_text(str(a, "operator"));
			fputs(" ", stdout);
			put_text(str(a, "action"));
			if (str(a, "detail")) {
				fputs(" ", stdout);
				put_text(str(a, "detail"));
			}
			putchar('\n');
		}
	}
}

static int fleet_show(int argc, char **argv)
{
	static const char *const names[] = { "a machine ID" };
	fleet f = { 0 };
	json_t *answer = NULL;
	int rc = fleet_start(&f, "fleet show", names, 1, argc, argv);

	if (rc < 0)
		return EXIT_OK;
	if (rc != EXIT_OK)
		return fleet_end(&f, rc);
	snprintf(f.path, sizeof(f.path), "/v1/machines/%s", f.args[0]);
	rc = http_call(f.http, "GET", f.path, NULL, &answer);
	if (rc == EXIT_OK) {
		const char *status = str(answer, "status");

		if (f.json)
			print_json(&f, answer);
		else
			print_machine(answer);
		/* A script asks "is it trusted?" by the exit code, as of attest verify. */
		if (!status || strcmp(status, "trusted") != 0)
			rc = EXIT_FAILED;
	}
	json_decref(answer);
	return fleet_end(&f, rc);
}

/* One call on a machine (revoke, forget, policy clear): "ID: done_what", or the answer. */
static int machine_call(const char *verb, const char *method, const char *suffix, const char *done_what, int argc,
			char **argv)
{
	static const char *const names[] = { "a machine ID" };
	fleet f = { 0 };
	json_t *answer = NULL;
	int rc = fleet_start(&f, verb, names, 1, argc, argv);

	if (rc < 0)
		return EXIT_OK;
	if (rc != EXIT_OK)
		return fleet_end(&f, rc);
	snprintf(f.path, sizeof(f.path), "/v1/machines/%s%s", f.args[0], suffix);
	rc = http_call(f.http, method, f.path, NULL, &answer);
	if (rc == EXIT_OK) {
		if (f.json)
			print_json(&f, answer);
		else
			printf("%s: %s\n", f.args[0], done_what);
	}
	json_decref(answer);
	return fleet_end(&f, rc);
}

static int fleet_revoke(int argc, char **argv)
{
	return machine_call("fleet revoke", "POST", "/revoke", "revoked: its evidence is refused",
			    argc, argv);
}

static int fleet_forget(int argc, char **argv)
{
	return machine_call("fleet forget", "DELETE", "",
			    "forgotten, with its history; it may enroll again", argc, argv);
}

static int policy_clear(int argc, char **argv)
{
	return machine_call("fleet policy clear", "DELETE", "/policy",
			    "no policy: it is not trusted until it has one", argc, argv);
}

static int policy_set(int argc, char **argv)
{
	static const char *const names[] = { "a machine ID", "a POLICY file" };
	fleet f = { 0 };
	json_t *answer = NULL;
	mb_policy *policy = NULL;
	uint8_t *text = NULL;
	size_t size = 0;
	mb_error err = { 0 };
	int rc = fleet_start(&f, "fleet policy set", names, 2, argc, argv);

	if (rc < 0)
		return EXIT_OK;
	if (rc != EXIT_OK)
		return fleet_end(&f, rc);
	/* Loaded here first: a policy the verifier would refuse is said with its line and field. */
	rc = tool_load_policy(f.args[1], &policy);
	if (rc != EXIT_OK)
		return fleet_end(&f, rc);
	mb_policy_free(policy);
	if (file_read(f.args[1], POLICY_FILE_MAX, &text, &size, &err) < 0) {
		tool_report(f.args[1], &err);
		return fleet_end(&f, EXIT_USAGE);
	}
	snprintf(f.path, sizeof(f.path), "/v1/machines/%s/policy", f.args[0]);
	rc = http_call(f.http, "PUT", f.path, (const char *) text, &answer);
	if (rc == EXIT_OK) {
		const char *digest = str(answer, "policy"), *status = str(answer, "status");

		if (f.json) {
			print_json(&f, answer);
		} else {
			printf("%s: policy ", f.args[0]);
			put_text(digest ? digest : "?");
			line(", status ", status ? status : "?");
		}
	}
	json_decref(answer);
	free(text);
	return fleet_end(&f, rc);
}

/* The audit trail: "AT  OPERATOR ACTION [MACHINE] [DETAIL]" lines, newest first. */
static int fleet_audit(int argc, char **argv)
{
	fleet f = { 0 };
	json_t *answer = NULL, *entries;
	int rc = fleet_start(&f, "fleet audit", NULL, 0, argc, argv);
	size_t i;

	if (rc < 0)
		return EXIT_OK;
	if (rc != EXIT_OK)
		return fleet_end(&f, rc);
	rc = http_call(f.http, "GET", "/v1/audit", NULL, &answer);
	if (rc == EXIT_OK && f.json) {
		print_json(&f, answer);
	} else if (rc == EXIT_OK) {
		if (!(entries = json_object_get(answer, "entries")) || !json_is_array(entries)) {
			tool_errorf("fleet audit: the verifier's answer has no \"entries\" list");
			rc = EXIT_USAGE;
		}
		for (i = 0; rc == EXIT_OK && i < json_array_size(entries); i++) {
			json_t *e = json_array_get(entries, i);
			const char *parts[] = { str(e, "operator"), str(e, "action"), str(e, "machine_id"),
						str(e, "detail") };
			size_t k;

			put_text(str(e, "at"));
			fputs(" ", stdout);
			for (k = 0; k < sizeof(parts) / sizeof(parts[0]); k++)
				if (parts[k]) {
					fputs(" ", stdout);
					put_text(parts[k]);
				}
			putchar('\n');
		}
	}
	json_decref(answer);
	return fleet_end(&f, rc);
}

static const tool_command policy_commands[] = {
	{ "set", policy_set },
	{ "clear", policy_clear },
	{ NULL, NULL },
};

static int fleet_policy(int argc, char **argv)
{
	return tool_dispatch("fleet policy", fleet_help, policy_commands, argc, argv);
}

static const tool_command fleet_commands[] = {
	{ "list", fleet_list },
	{ "show", fleet_show },
	{ "policy", fleet_policy },
	{ "revoke", fleet_revoke },
	{ "forget", fleet_forget },
	{ "audit", fleet_audit },
	{ NULL, NULL },
};

int verb_fleet(int argc, char **argv)
{
	return tool_dispatch("fleet", fleet_help, fleet_commands, argc, argv);
}
