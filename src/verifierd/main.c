/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mboot-verifierd: the fleet verifier service (docs/api.md). Reads its options (command line,
 * then --config for what the command line left unset), opens the fleet, serves HTTPS until
 * SIGTERM or SIGINT, then lets the requests in flight finish and frees everything.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <mboot/attest.h>
#include <mboot/policy.h>

#include "mb-config.h"
#include "shared/fileio.h"
#include "shared/json.h"
#include "verifierd/http.h"
#include "verifierd/notify.h"
#include "verifierd/service.h"

#define EXIT_USAGE 2
#define MAX_CONFIG_SIZE (1024 * 1024)
#define MAX_PEM_SIZE (1024 * 1024)
#define MAX_POLICY_SIZE (8 * 1024 * 1024)
#define GRACE_SECONDS 10

enum {
	OPT_LISTEN = 1000, OPT_DB, OPT_EK_CA_FILE, OPT_EK_CA_DIR, OPT_ALLOW_NO_EK_CERT, OPT_DEFAULT_POLICY,
	OPT_INTERVAL, OPT_NONCE_TTL, OPT_TLS_CERT, OPT_TLS_KEY, OPT_INSECURE, OPT_THREADS, OPT_MAX_BODY,
	OPT_CONNECTION_TIMEOUT, OPT_MAX_CONNECTIONS, OPT_PORT_FILE, OPT_VERBOSE, OPT_MAX_BODY_MEMORY,
	OPT_HEADER_TIMEOUT, OPT_BODY_TIMEOUT, OPT_MAX_CONNECTIONS_PER_IP, OPT_MAX_INTERVAL, OPT_EK_CHECK_VALIDITY,
	OPT_MIN_BANK, OPT_ALLOW_EK_REUSE, OPT_NOTIFY, OPT_NOTIFY_SECRET_FILE, OPT_NOTIFY_TRIES, OPT_NOTIFY_TIMEOUT,
	OPT_NOTIFY_QUEUE, OPT_STALE_SWEEP,
	OPT_CONFIG, OPT_NEW_TOKEN, OPT_TOKEN_NAME, OPT_LIST_TOKENS, OPT_REVOKE_TOKEN, OPT_JUDGE_CACHE,
	OPT_END,
};

static const struct option long_options[] = {
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "db", required_argument, NULL, OPT_DB },
	{ "ek-ca-file", required_argument, NULL, OPT_EK_CA_FILE },
	{ "ek-ca-dir", required_argument, NULL, OPT_EK_CA_DIR },
	{ "allow-no-ek-cert", no_argument, NULL, OPT_ALLOW_NO_EK_CERT },
	{ "allow-ek-reuse", no_argument, NULL, OPT_ALLOW_EK_REUSE },
	{ "ek-check-validity", no_argument, NULL, OPT_EK_CHECK_VALIDITY },
	{ "min-bank", required_argument, NULL, OPT_MIN_BANK },
	{ "default-policy", required_argument, NULL, OPT_DEFAULT_POLICY },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "max-interval", required_argument, NULL, OPT_MAX_INTERVAL },
	{ "nonce-ttl", required_argument, NULL, OPT_NONCE_TTL },
	{ "judge-cache", required_argument, NULL, OPT_JUDGE_CACHE },
	{ "tls-cert", required_argument, NULL, OPT_TLS_CERT },
	{ "tls-key", required_argument, NULL, OPT_TLS_KEY },
	{ "insecure", no_argument, NULL, OPT_INSECURE },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "max-body", required_argument, NULL, OPT_MAX_BODY },
	{ "connection-timeout", required_argument, NULL, OPT_CONNECTION_TIMEOUT },
	{ "max-connections", required_argument, NULL, OPT_MAX_CONNECTIONS },
	{ "port-file", required_argument, NULL, OPT_PORT_FILE },
	{ "verbose", no_argument, NULL, OPT_VERBOSE },
	{ "max-body-memory", required_argument, NULL, OPT_MAX_BODY_MEMORY },
	{ "header-timeout", required_argument, NULL, OPT_HEADER_TIMEOUT },
	{ "body-timeout", required_argument, NULL, OPT_BODY_TIMEOUT },
	{ "max-connections-per-ip", required_argument, NULL, OPT_MAX_CONNECTIONS_PER_IP },
	{ "notify", required_argument, NULL, OPT_NOTIFY },
	{ "notify-secret-file", required_argument, NULL, OPT_NOTIFY_SECRET_FILE },
	{ "notify-tries", required_argument, NULL, OPT_NOTIFY_TRIES },
	{ "notify-timeout", required_argument, NULL, OPT_NOTIFY_TIMEOUT },
	{ "notify-queue", required_argument, NULL, OPT_NOTIFY_QUEUE },
	{ "stale-sweep", required_argument, NULL, OPT_STALE_SWEEP },
	/* only on the command line: */
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "new-token", no_argument, NULL, OPT_NEW_TOKEN },
	{ "token-name", required_argument, NULL, OPT_TOKEN_NAME },
	{ "list-tokens", no_argument, NULL, OPT_LIST_TOKENS },
	{ "revoke-token", required_argument, NULL, OPT_REVOKE_TOKEN },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

typedef struct settings {
	bool given[OPT_END - OPT_LISTEN];   /* on the command line: --config does not override */
	const char *listen;
	const char *db;
	const char **ek_paths;              /* files and directories alike (mb_ek_roots_add_path) */
	size_t n_ek_paths;
	bool allow_no_ek_cert;
	bool allow_ek_reuse;
	bool ek_check_validity;
	uint16_t min_bank;
	const char *default_policy;
	int64_t interval;
	int64_t max_interval;
	int64_t nonce_ttl;
	int64_t judge_cache;
	int64_t stale_sweep;
	const char *tls_cert;
	const char *tls_key;
	bool insecure;
	unsigned threads;
	size_t max_body;
	unsigned connection_timeout;
	unsigned max_connections;
	const char *port_file;
	bool verbose;
	size_t max_body_memory;
	unsigned header_timeout;
	unsigned body_timeout;
	unsigned max_connections_per_ip;
	bool per_ip_given;                  /* else its default depends on --insecure */
	const char **notify;                /* webhook URLs */
	size_t n_notify;
	const char *notify_secret_file;
	unsigned notify_tries, notify_timeout, notify_queue;
	const char *config;
	bool new_token, list_tokens;
	const char *token_name, *revoke_token;
} settings;

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: mboot-verifierd --listen ADDR:PORT [--db URL] (--ek-ca-file F | --ek-ca-dir D |\n"
		"                       --allow-no-ek-cert) (--tls-cert F --tls-key F | --insecure) [OPTIONS]\n"
		"       mboot-verifierd [--db URL] --new-token [--token-name NAME]\n"
		"       mboot-verifierd [--db URL] --list-tokens | --revoke-token NAME\n\n"
		"The fleet verifier: enrolls machines, hands out nonces, judges their evidence against\n"
		"each machine's policy, keeps the history and serves the fleet's web page (docs/api.md).\n\n"
		"  --listen ADDR:PORT        IPv4 (127.0.0.1:8443) or [IPv6]:PORT; port 0 takes a free one\n"
		"  --db URL                  sqlite:PATH or a PostgreSQL URL (default sqlite:/var/lib/mboot/verifier.db)\n"
		"  --ek-ca-file F            TPM manufacturer CA certificates, PEM or DER (repeatable)\n"
		"  --ek-ca-dir D             every certificate file of D (repeatable)\n"
		"  --allow-no-ek-cert        accept TPMs without an EK certificate (trust on first use)\n"
		"  --allow-ek-reuse          let one TPM (EK) enroll under several machine ids, each a machine\n"
		"                            of its own (load tests, labs); by default a second id is refused\n"
		"  --min-bank NAME           evidence must quote this bank or a stronger one, besides the\n"
		"                            strongest the TPM has active (which is always required)\n"
		"  --ek-check-validity       refuse EK certificates outside their validity dates (by default\n"
		"                            the dates are not enforced: they say nothing about the TPM)\n"
		"  --default-policy F        the policy a newly enrolled machine starts with\n"
		"  --interval S              attestation interval of a machine that does not say (600)\n"
		"  --max-interval S          the longest interval a machine may ask for; a longer one is\n"
		"                            cut to this, and a machine is stale after twice it (default:\n"
		"                            --interval)\n"
		"  --nonce-ttl S             seconds a nonce is good for (60)\n"
		"  --stale-sweep S           look for machines turned stale every S seconds, and tell the\n"
		"                            webhooks and the audit trail of each once (10; 0: never)\n"
		"  --judge-cache N           boots whose logs' judgment is kept, so that a boot's later\n"
		"                            evidence has only its quote checked and names its log\n"
		"                            instead of carrying it (default 10000; memory:\n"
		"                            up to twice N verdicts, as many machine records and rows);\n"
		"                            0: every evidence judged in full on the machine read anew\n"
		"  --tls-cert F, --tls-key F HTTPS with this certificate (chain) and key, PEM\n"
		"  --insecure                plain HTTP, allowed only on a loopback address\n"
		"  --threads N               server threads (default 2 x online CPUs)\n"
		"  --max-body BYTES          largest request body; larger is 413 (default 8388608)\n"
		"  --max-body-memory BYTES   memory for the bodies of all requests together; a request\n"
		"                            whose body does not fit is 503 (default 67108864)\n"
		"  --connection-timeout S    close a connection idle this long (default 10)\n"
		"  --header-timeout S        close a connection whose request headers (and TLS handshake)\n"
		"                            took this long in all, however busy (default 10)\n"
		"  --body-timeout S          close a connection whose request body took this long after\n"
		"                            its headers, however busy (default 30)\n"
		"  --max-connections N       connections at once (default 1000)\n"
		"  --max-connections-per-ip N  connections at once from one address, 0 no limit (default\n"
		"                            32; with --insecure 0: every client is the local proxy)\n"
		"  --port-file F             write the port number to F once listening\n"
		"  --verbose                 one line per request on stderr\n"
		"  --notify URL              POST each status change of a machine to URL, http:// or https://\n"
		"                            (repeatable; docs/api.md \"Webhooks\")\n"
		"  --notify-secret-file F    the HMAC-SHA256 key that signs them (at least 16 bytes; needed)\n"
		"  --notify-tries N          tries of one delivery, 1s, 2s, 4s... apart (default 5)\n"
		"  --notify-timeout S        seconds one try may take (default 10)\n"
		"  --notify-queue N          deliveries waiting per URL; more are dropped (default 1000)\n"
		"  --config F                a JSON object of these options ({\"listen\": ..., \"ek_ca_file\": ...});\n"
		"                            the command line wins\n"
		"  --new-token               print a new operator token and exit (only its hash is stored)\n"
		"  --token-name NAME         its name (1 to 64 of [A-Za-z0-9._@-], unique), which the audit\n"
		"                            trail names for what the token's holder does (default:\n"
		"                            token- and the start of its hash)\n"
		"  --list-tokens             the operator tokens: name, created, start of the hash\n"
		"  --revoke-token NAME       remove that token: calls with it are refused from now on\n"
		"  -h, --help                this text\n"
		"  -V, --version             the version\n\n"
		"SIGTERM or SIGINT stops it: the requests in flight are answered first.\n"
		"Exit codes: 0 stopped by a signal (or the token call done), 1 --revoke-token: no such\n"
		"token, 2 usage, input or startup error.\n");
}

static int parse_number(const char *name, const char *text, uint64_t min, uint64_t max, uint64_t *ret)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(text, &end, 10);
	if (text[0] < '0' || text[0] > '9' || *end || errno != 0 || n < min || n > max) {
		fprintf(stderr, "mboot-verifierd: --%s: '%s' is not a number from %" PRIu64 " to %" PRIu64 "\n", name,
			text, min, max);
		return -EINVAL;
	}
	*ret = n;
	return 0;
}

static const char *option_name(int id)
{
	for (size_t i = 0; long_options[i].name; i++)
		if (long_options[i].val == id)
			return long_options[i].name;
	return "?";
}

/* One option with its argument (NULL for a flag), from the command line or --config. */
static int set_option(settings *s, int id, const char *arg)
{
	const char *name = option_name(id);
	uint64_t n;
	int r = 0;

	switch (id) {
	case OPT_LISTEN: s->listen = arg; break;
	case OPT_DB: s->db = arg; break;
	case OPT_EK_CA_FILE:
	case OPT_EK_CA_DIR:
	case OPT_NOTIFY: {
		const char ***list = id == OPT_NOTIFY ? &s->notify : &s->ek_paths;
		size_t *n_list = id == OPT_NOTIFY ? &s->n_notify : &s->n_ek_paths;
		const char **p = realloc(*list, (*n_list + 1) * sizeof(*p));

		if (!p) {
			fprintf(stderr, "mboot-verifierd: out of memory\n");
			return -ENOMEM;
		}
		*list = p;
		p[(*n_list)++] = arg;
		break;
	}
	case OPT_NOTIFY_SECRET_FILE: s->notify_secret_file = arg; break;
	case OPT_NOTIFY_TRIES:
		if ((r = parse_number(name, arg, 1, 20, &n)) == 0)
			s->notify_tries = (unsigned)n;
		break;
	case OPT_NOTIFY_TIMEOUT:
		if ((r = parse_number(name, arg, 1, 300, &n)) == 0)
			s->notify_timeout = (unsigned)n;
		break;
	case OPT_NOTIFY_QUEUE:
		if ((r = parse_number(name, arg, 1, 1000000, &n)) == 0)
			s->notify_queue = (unsigned)n;
		break;
	case OPT_ALLOW_NO_EK_CERT: s->allow_no_ek_cert = true; break;
	case OPT_ALLOW_EK_REUSE: s->allow_ek_reuse = true; break;
	case OPT_EK_CHECK_VALIDITY: s->ek_check_validity = true; break;
	case OPT_MIN_BANK: {
		const mb_digest_info *d = mb_digest_by_name(arg);

		if (!d) {
			fprintf(stderr, "mboot-verifierd: --min-bank: '%s' is not a bank (sha1, sha256, sha384, sha512, sm3_256)\n",
				arg);
			return -EINVAL;
		}
		s->min_bank = d->alg;
		break;
	}
	case OPT_DEFAULT_POLICY: s->default_policy = arg; break;
	case OPT_INTERVAL:
		if ((r = parse_number(name, arg, 1, 366 * 86400, &n)) == 0)
			s->interval = (int64_t)n;
		break;
	case OPT_MAX_INTERVAL:
		if ((r = parse_number(name, arg, 1, 366 * 86400, &n)) == 0)
			s->max_interval = (int64_t)n;
		break;
	case OPT_NONCE_TTL:
		if ((r = parse_number(name, arg, 1, 86400, &n)) == 0)
			s->nonce_ttl = (int64_t)n;
		break;
	case OPT_STALE_SWEEP:
		if ((r = parse_number(name, arg, 0, 86400, &n)) == 0)
			s->stale_sweep = (int64_t)n;
		break;
	case OPT_JUDGE_CACHE:
		if ((r = parse_number(name, arg, 0, 10000000, &n)) == 0)
			s->judge_cache = n ? (int64_t)n : -1;
		break;
	case OPT_TLS_CERT: s->tls_cert = arg; break;
	case OPT_TLS_KEY: s->tls_key = arg; break;
	case OPT_INSECURE: s->insecure = true; break;
	case OPT_THREADS:
		if ((r = parse_number(name, arg, 1, 1024, &n)) == 0)
			s->threads = (unsigned)n;
		break;
	case OPT_MAX_BODY:
		if ((r = parse_number(name, arg, 1, 1024 * 1024 * 1024, &n)) == 0)
			s->max_body = (size_t)n;
		break;
	case OPT_CONNECTION_TIMEOUT:
		if ((r = parse_number(name, arg, 1, 3600, &n)) == 0)
			s->connection_timeout = (unsigned)n;
		break;
	case OPT_MAX_CONNECTIONS:
		if ((r = parse_number(name, arg, 1, 1000000, &n)) == 0)
			s->max_connections = (unsigned)n;
		break;
	case OPT_MAX_BODY_MEMORY:
		if ((r = parse_number(name, arg, 1, (uint64_t)SIZE_MAX / 4, &n)) == 0)
			s->max_body_memory = (size_t)n;
		break;
	case OPT_HEADER_TIMEOUT:
		if ((r = parse_number(name, arg, 1, 3600, &n)) == 0)
			s->header_timeout = (unsigned)n;
		break;
	case OPT_BODY_TIMEOUT:
		if ((r = parse_number(name, arg, 1, 3600, &n)) == 0)
			s->body_timeout = (unsigned)n;
		break;
	case OPT_MAX_CONNECTIONS_PER_IP:
		if ((r = parse_number(name, arg, 0, 1000000, &n)) == 0) {
			s->max_connections_per_ip = (unsigned)n;
			s->per_ip_given = true;
		}
		break;
	case OPT_PORT_FILE: s->port_file = arg; break;
	case OPT_VERBOSE: s->verbose = true; break;
	case OPT_CONFIG: s->config = arg; break;
	case OPT_NEW_TOKEN: s->new_token = true; break;
	case OPT_TOKEN_NAME: s->token_name = arg; break;
	case OPT_LIST_TOKENS: s->list_tokens = true; break;
	case OPT_REVOKE_TOKEN: s->revoke_token = arg; break;
	default: return -EINVAL;
	}
	return r;
}

static bool numeric_option(int id)
{
	return id == OPT_INTERVAL || id == OPT_NONCE_TTL || id == OPT_THREADS || id == OPT_MAX_BODY ||
	       id == OPT_CONNECTION_TIMEOUT || id == OPT_MAX_CONNECTIONS || id == OPT_MAX_BODY_MEMORY ||
	       id == OPT_HEADER_TIMEOUT || id == OPT_BODY_TIMEOUT || id == OPT_MAX_CONNECTIONS_PER_IP ||
	       id == OPT_NOTIFY_TRIES || id == OPT_NOTIFY_TIMEOUT || id == OPT_NOTIFY_QUEUE || id == OPT_STALE_SWEEP;
}

/*
 * --config: each key is a long option with '_' for '-' (not config nor the token calls); a string
 * for an option with an argument (a number may be a JSON integer), true or false for a flag.
 * The json object stays alive (*root) because the settings point into its strings.
 */
static int read_config(settings *s, json_t **root)
{
	uint8_t *text = NULL;
	size_t size;
	mb_error err = { 0 };
	int r;

	r = file_read(s->config, MAX_CONFIG_SIZE, &text, &size, &err);
	if (r >= 0)
		r = untrusted_json_parse((const char *)text, size, 8, root, &err);
	free(text);
	if (r < 0) {
		fprintf(stderr, "mboot-verifierd: --config %s: %s\n", s->config, err.message);
		return r;
	}
	if (!json_is_object(*root)) {
		fprintf(stderr, "mboot-verifierd: --config %s: not a JSON object\n", s->config);
		return -EINVAL;
	}

	json_object_each(*root, key, value) {
		char name[64];
		const struct option *o = NULL;
		char number[32];
		const char *arg = NULL;

		/* "ek_ca_file" names --ek-ca-file; "ek-ca-file" names nothing (one spelling only) */
		if (strlen(key) < sizeof(name) && !strchr(key, '-')) {
			size_t i;

			for (i = 0; key[i]; i++)
				name[i] = key[i] == '_' ? '-' : key[i];
			name[i] = '\0';
			for (i = 0; long_options[i].val != OPT_CONFIG; i++)
				if (strcmp(long_options[i].name, name) == 0)
					o = &long_options[i];
		}
		if (!o) {
			fprintf(stderr, "mboot-verifierd: --config %s: unknown key \"%s\"\n", s->config, key);
			return -EINVAL;
		}
		if (o->has_arg == no_argument) {
			if (!json_is_boolean(value)) {
				fprintf(stderr, "mboot-verifierd: --config %s: \"%s\" must be true or false\n", s->config, key);
				return -EINVAL;
			}
			if (!json_is_true(value))
				continue;
		} else if (json_is_string(value)) {
			arg = json_string_value(value);
		} else if (json_is_integer(value) && numeric_option(o->val)) {
			snprintf(number, sizeof(number), "%" JSON_INTEGER_FORMAT, json_integer_value(value));
			arg = number;
		} else {
			fprintf(stderr, "mboot-verifierd: --config %s: \"%s\" must be a %s\n", s->config, key,
				numeric_option(o->val) ? "number" : "string");
			return -EINVAL;
		}
		if (s->given[o->val - OPT_LISTEN])
			continue;   /* the command line wins */
		r = set_option(s, o->val, arg);
		if (r < 0)
			return r;
	}
	return 0;
}

/* "127.0.0.1:8443" or "[::1]:8443": numeric addresses only (a name could resolve to many). */
static int parse_listen(const char *text, struct sockaddr_storage *ss, socklen_t *ss_size, bool *loopback)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *port_text;
	size_t host_len;
	uint64_t port;

	memset(ss, 0, sizeof(*ss));
	if (text[0] == '[') {
		const char *close = strstr(text, "]:");

		if (!close)
			goto bad;
		host_len = (size_t)(close - text - 1);
		if (host_len >= sizeof(host))
			goto bad;
		memcpy(host, text + 1, host_len);
		host[host_len] = '\0';
		port_text = close + 2;
	} else {
		const char *colon = strrchr(text, ':');

		if (!colon || (size_t)(colon - text) >= sizeof(host))
			goto bad;
		host_len = (size_t)(colon - text);
		memcpy(host, text, host_len);
		host[host_len] = '\0';
		port_text = colon + 1;
	}
	if (parse_number("listen", port_text, 0, 65535, &port) < 0)
		return -EINVAL;

	if (text[0] == '[') {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

		if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1)
			goto bad;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		*ss_size = sizeof(*a);
		*loopback = IN6_IS_ADDR_LOOPBACK(&a->sin6_addr);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;

		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			goto bad;
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		*ss_size = sizeof(*a);
		*loopback = (ntohl(a->sin_addr.s_addr) >> 24) == 127;
	}
	return 0;
bad:
	fprintf(stderr, "mboot-verifierd: --listen: '%s' is not ADDR:PORT or [IPv6]:PORT (numeric)\n", text);
	return -EINVAL;
}

static char *read_pem(const char *what, const char *path)
{
	uint8_t *data = NULL;
	size_t size;
	mb_error err = { 0 };

	if (file_read(path, MAX_PEM_SIZE, &data, &size, &err) < 0) {
		fprintf(stderr, "mboot-verifierd: %s %s: %s\n", what, path, err.message);
		return NULL;
	}
	return (char *)data;   /* NUL-terminated by file_read */
}

static void free_secret(char *p)
{
	if (p)
		explicit_bzero(p, strlen(p));
	free(p);
}

/* Connections, database files and the epoll descriptors all count against RLIMIT_NOFILE,
 * whose soft default (1024) is below what --max-connections allows. */
static void raise_file_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* --new-token, --list-tokens, --revoke-token: on the database, no server. */
static int token_call(const settings *s)
{
	fleet_options fo = {
		.db_url = s->db,
		.allow_no_ek_cert = true,   /* no machine is served: the CAs do not matter here */
		.interval = s->interval,
		.max_interval = s->max_interval,
		.nonce_ttl = s->nonce_ttl,
	};
	mb_error err = { 0 };
	fleet *f = NULL;
	char *token = NULL;
	int r;

	r = fleet_new(&fo, &f, &err);
	if (r >= 0 && s->new_token)
		r = fleet_new_token(f, s->token_name, &token, &err);
	else if (r >= 0 && s->list_tokens)
		r = fleet_list_tokens(f, stdout, &err);
	else if (r >= 0)
		r = fleet_revoke_token(f, s->revoke_token, &err);
	fleet_free(f);
	if (r < 0) {
		fprintf(stderr, "mboot-verifierd: %s\n", err.message);
		return r == -ENOENT && s->revoke_token ? EXIT_FAILURE : EXIT_USAGE;
	}
	if (token) {
		printf("%s\n", token);
		free_secret(token);
	} else if (s->revoke_token) {
		printf("token %s revoked\n", s->revoke_token);
	}
	return fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_USAGE;
}

static int serve(const settings *s)
{
	struct sockaddr_storage addr;
	socklen_t addr_size = 0;
	bool loopback = false;
	mb_ek_roots *roots = NULL;
	uint8_t *policy = NULL;
	size_t policy_size = 0;
	char *cert = NULL, *key = NULL;
	fleet *f = NULL;
	notifier *notify = NULL;
	http_server *server = NULL;
	mb_error err = { 0 };
	sigset_t stop_signals;
	int ret = EXIT_USAGE, sig, r;

	if (!s->listen) {
		fprintf(stderr, "mboot-verifierd: pass --listen ADDR:PORT (e.g. --listen 0.0.0.0:8443)\n");
		return EXIT_USAGE;
	}
	fleet_keep_memory();
	if (parse_listen(s->listen, &addr, &addr_size, &loopback) < 0)
		return EXIT_USAGE;
	if ((s->tls_cert != NULL) != (s->tls_key != NULL)) {
		fprintf(stderr, "mboot-verifierd: --tls-cert and --tls-key go together\n");
		return EXIT_USAGE;
	}
	if (s->tls_cert && s->insecure) {
		fprintf(stderr, "mboot-verifierd: --insecure (plain HTTP) and --tls-cert exclude each other\n");
		return EXIT_USAGE;
	}
	if (!s->tls_cert && !s->insecure) {
		fprintf(stderr, "mboot-verifierd: pass --tls-cert F --tls-key F (HTTPS), or --insecure for plain "
				"HTTP on a loopback address\n");
		return EXIT_USAGE;
	}
	if (s->insecure && !loopback) {
		fprintf(stderr, "mboot-verifierd: --insecure: plain HTTP is refused on %s, which is not a loopback "
				"address (127.0.0.0/8, ::1); use --tls-cert and --tls-key\n", s->listen);
		return EXIT_USAGE;
	}
	if (s->max_body_memory < s->max_body) {
		fprintf(stderr, "mboot-verifierd: --max-body-memory %zu is below --max-body %zu\n", s->max_body_memory,
			s->max_body);
		return EXIT_USAGE;
	}
	if (s->n_ek_paths == 0 && !s->allow_no_ek_cert) {
		fprintf(stderr, "mboot-verifierd: pass --ek-ca-file F or --ek-ca-dir D (the TPM manufacturers' CAs), "
				"or --allow-no-ek-cert\n");
		return EXIT_USAGE;
	}

	if (s->n_ek_paths > 0) {
		if (mb_ek_roots_new(&roots, &err) < 0)
			goto fail;
		for (size_t i = 0; i < s->n_ek_paths; i++)
			if (mb_ek_roots_add_path(roots, s->ek_paths[i], &err) < 0)
				goto fail;
	}
	if (s->default_policy) {
		mb_policy *p = NULL;

		if (file_read(s->default_policy, MAX_POLICY_SIZE, &policy, &policy_size, &err) < 0 ||
		    mb_policy_parse((const char *)policy, policy_size, &p, &err) < 0) {
			fprintf(stderr, "mboot-verifierd: --default-policy %s: %s\n", s->default_policy, err.message);
			goto out;
		}
		mb_policy_free(p);
	}
	if (s->tls_cert) {
		cert = read_pem("--tls-cert", s->tls_cert);
		key = cert ? read_pem("--tls-key", s->tls_key) : NULL;
		if (!key)
			goto out;
	}

	if (s->n_notify) {
		notify_options no = { .urls = s->notify, .n_urls = s->n_notify, .secret_file = s->notify_secret_file,
				      .tries = s->notify_tries, .timeout = s->notify_timeout, .queue = s->notify_queue };

		if (notify_new(&no, &notify, &err) < 0)
			goto fail;
	}

	{
		fleet_options fo = {
			.notify = notify,
			.db_url = s->db,
			.ek_roots = roots,
			.allow_no_ek_cert = s->allow_no_ek_cert,
			.allow_ek_reuse = s->allow_ek_reuse,
			.ek_check_validity = s->ek_check_validity,
			.min_bank = s->min_bank,
			.default_policy = (const char *)policy,
			.default_policy_size = policy_size,
			.interval = s->interval,
			.max_interval = s->max_interval,
			.nonce_ttl = s->nonce_ttl,
			.judge_cache = s->judge_cache,
			.stale_sweep = s->stale_sweep,
		};

		if (fleet_new(&fo, &f, &err) < 0)
			goto fail;
	}

	/* The pool's threads inherit this mask: only the main thread takes the stop signals. */
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGTERM);
	sigaddset(&stop_signals, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
	signal(SIGPIPE, SIG_IGN);
	raise_file_limit();

	{
		http_server_options ho = {
			.addr = (const struct sockaddr *)&addr,
			.addr_size = addr_size,
			.threads = s->threads,
			.max_body = s->max_body,
			.max_body_memory = s->max_body_memory,
			.connection_timeout = s->connection_timeout,
			.header_timeout = s->header_timeout,
			.body_timeout = s->body_timeout,
			.connection_limit = s->max_connections < s->threads ? s->threads : s->max_connections,
			/* Behind a local TLS proxy (--insecure) every client has the proxy's address. */
			.per_ip_limit = s->per_ip_given ? s->max_connections_per_ip : s->insecure ? 0 : 32,
			.tls_cert = cert,
			.tls_key = key,
			.verbose = s->verbose,
		};

		r = http_server_start(f, &ho, &server, &err);
		if (r < 0) {
			fprintf(stderr, "mboot-verifierd: %s: %s\n", s->listen, err.message);
			goto out;
		}
	}
	if (addr.ss_family == AF_INET6) {
		char host[INET6_ADDRSTRLEN];

		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&addr)->sin6_addr, host, sizeof(host));
		fprintf(stderr, "mboot-verifierd: listening on [%s]:%u\n", host, http_server_port(server));
	} else {
		char host[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &((struct sockaddr_in *)&addr)->sin_addr, host, sizeof(host));
		fprintf(stderr, "mboot-verifierd: listening on %s:%u\n", host, http_server_port(server));
	}
	if (s->port_file) {
		char port[16];
		int n = snprintf(port, sizeof(port), "%u\n", http_server_port(server));

		if (file_write(s->port_file, port, (size_t)n, 0644, true, &err) < 0) {
			fprintf(stderr, "mboot-verifierd: --port-file %s: %s\n", s->port_file, err.message);
			goto out;
		}
	}

	do
		r = sigwait(&stop_signals, &sig);
	while (r != 0);
	if (s->verbose)
		fprintf(stderr, "mboot-verifierd: %s, stopping\n", strsignal(sig));
	ret = EXIT_SUCCESS;
	goto out;

fail:
	fprintf(stderr, "mboot-verifierd: %s\n", err.message);
out:
	http_server_stop(server, GRACE_SECONDS);
	fleet_free(f);
	notify_free(notify);
	mb_ek_roots_free(roots);
	free(policy);
	free(cert);
	free_secret(key);
	return ret;
}

int main(int argc, char **argv)
{
	settings s = {
		.db = "sqlite:/var/lib/mboot/verifier.db",
		.interval = 600,
		.nonce_ttl = 60,
		.stale_sweep = 10,
		.max_body = 8 * 1024 * 1024,
		.max_body_memory = 64 * 1024 * 1024,
		.connection_timeout = 10,
		.header_timeout = 10,
		.body_timeout = 30,
		.max_connections = 1000,
		.notify_tries = 5,
		.notify_timeout = 10,
		.notify_queue = 1000,
	};
	json_t *config = NULL;
	long cpus;
	int c, ret;

	while ((c = getopt_long(argc, argv, "hV", long_options, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return EXIT_SUCCESS;
		case 'V':
			printf("mboot-verifierd %s\n", MB_VERSION);
			return EXIT_SUCCESS;
		case '?':
			fprintf(stderr, "(see mboot-verifierd --help)\n");
			return EXIT_USAGE;
		default:
			if (set_option(&s, c, optarg) < 0) {
				free(s.ek_paths);
				free(s.notify);
				return EXIT_USAGE;
			}
			s.given[c - OPT_LISTEN] = true;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "mboot-verifierd: unexpected argument '%s' (see --help)\n", argv[optind]);
		return EXIT_USAGE;
	}

	if (s.config && read_config(&s, &config) < 0) {
		ret = EXIT_USAGE;
		goto out;
	}
	if (s.threads == 0) {
		cpus = sysconf(_SC_NPROCESSORS_ONLN);
		s.threads = cpus > 0 && cpus <= 512 ? 2 * (unsigned)cpus : 2;
	}

	if (s.new_token + s.list_tokens + !!s.revoke_token > 1 || (s.token_name && !s.new_token)) {
		fprintf(stderr, "mboot-verifierd: --new-token [--token-name], --list-tokens and --revoke-token go alone\n");
		ret = EXIT_USAGE;
		goto out;
	}
	ret = s.new_token || s.list_tokens || s.revoke_token ? token_call(&s) : serve(&s);
out:
	json_decref(config);
	free(s.ek_paths);
	free(s.notify);
	return ret;
}
