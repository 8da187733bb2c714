/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The tool's client of mboot-verifierd (http-client.h): libcurl, JSON, strict limits. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mboot/version.h>

#include "shared/fileio.h"
#include "shared/json.h"
#include "shared/curl-dl.h"
#include "tool/http-client.h"
#include "tool/tool.h"

#define TOKEN_FILE_MAX 4096u
/* Deep enough for a verdict inside a machine's answer; the reader's own cap is the ceiling. */
#define ANSWER_DEPTH JSON_READ_MAX_DEPTH

struct http_client {
	const char *verb;
	char *base;  /* the server's URL without trailing '/' */
	char *auth;  /* "Authorization: Bearer ..." or NULL */
	const char *ca_file;
	bool plain;  /* http:// (allowed by --insecure) */
	CURL *curl;
};

typedef struct answer {
	char *data;
	size_t size;
	bool too_large;
} answer;

static void errorf(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void errorf(const char *verb, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "mboot %s: ", verb);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

bool http_machine_id_valid(const char *s)
{
	size_t n = strlen(s), i;

	if (n < 1 || n > 64 || s[0] == '.')
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '.' || s[i] == '_' || s[i] == '-'))
			return false;
	return true;
}

/* The token's first line, from a file only its owner can read (as ssh holds private keys). */
static int read_token(const char *verb, const char *path, char **ret)
{
	mb_error err = { 0 };
	uint8_t *buf = NULL;
	size_t size = 0, len, i;
	struct stat st;
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		errorf(verb, "%s: cannot open the token file: %s", path, strerror(errno));
		return EXIT_USAGE;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		errorf(verb, "%s: the token file is not a regular file", path);
		close(fd);
		return EXIT_USAGE;
	}
	if (st.st_mode & 077) {
		errorf(verb, "%s: permissions %04o are too open: a token others can read is theirs too; "
			     "chmod 600 it", path, (unsigned) (st.st_mode & 07777));
		close(fd);
		return EXIT_USAGE;
	}
	r = file_read_fd(fd, TOKEN_FILE_MAX, &buf, &size, &err);
	close(fd);
	if (r < 0) {
		tool_report(path, &err);
		return EXIT_USAGE;
	}
	len = strcspn((char *) buf, "\r\n");
	/* Visible ASCII only: the token goes into a header, and a space or CR there would split it. */
	for (i = 0; i < len; i++)
		if (buf[i] < 0x21 || buf[i] > 0x7e)
			break;
	if (len == 0 || i < len || len > size) {
		errorf(verb, "%s: the first line is not a token (printable ASCII, no spaces)", path);
		explicit_bzero(buf, size);
		free(buf);
		return EXIT_USAGE;
	}
	buf[len] = '\0';
	*ret = (char *) buf;
	return EXIT_OK;
}

int http_client_new(const char *verb, const http_options *o, http_client **ret)
{
	static bool warned;
	http_client *c;
	char *token = NULL;
	bool plain;
	size_t n;
	mb_error dl_err = { 0 };
	int rc;

	if (!o->server || !o->server[0])
		return tool_usage_error(verb, "needs --server URL (the verifier's, https://HOST:PORT)");
	if (strncasecmp(o->server, "https://", 8) == 0)
		plain = false;
	else if (strncasecmp(o->server, "http://", 7) == 0)
		plain = true;
	else
		return tool_usage_error(verb, "--server '%s': not an https:// URL", o->server);
	if (plain && !o->insecure)
		return tool_usage_error(verb, "--server '%s': plain http:// sends everything unprotected "
					      "and unauthenticated; use https://, or --insecure for a test", o->server);
	/* libcurl is loaded here, not at start: only attest push and fleet talk HTTP. */
	if (dlopen_curl(&dl_err) < 0) {
		errorf(verb, "%s", dl_err.message);
		tool_dl_hint(dl_err.message);
		return EXIT_USAGE;
	}
	if (o->token_file && (rc = read_token(verb, o->token_file, &token)) != EXIT_OK)
		return rc;

	c = calloc(1, sizeof(*c));
	if (!c)
		goto oom;
	c->verb = verb;
	c->ca_file = o->ca_file;
	c->plain = plain;
	c->base = strdup(o->server);
	if (!c->base)
		goto oom;
	for (n = strlen(c->base); n > 0 && c->base[n - 1] == '/'; n--)
		c->base[n - 1] = '\0';
	if (token) {
		if (asprintf(&c->auth, "Authorization: Bearer %s", token) < 0) {
			c->auth = NULL;
			goto oom;
		}
		explicit_bzero(token, strlen(token));
		free(token);
		token = NULL;
	}
	if (sym_curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK || !(c->curl = sym_curl_easy_init())) {
		errorf(verb, "cannot initialize libcurl");
		http_client_free(c);
		return EXIT_USAGE;
	}
	if (plain && !warned) {
		warned = true;
		fprintf(stderr, "mboot %s: warning: --insecure: plain HTTP to %s, nothing is encrypted or "
				"authenticated\n", verb, c->base);
	}
	*ret = c;
	return EXIT_OK;
oom:
	if (token) {
		explicit_bzero(token, strlen(token));
		free(token);
	}
	http_client_free(c);
	errorf(verb, "out of memory");
	return EXIT_USAGE;
}

void http_client_free(http_client *c)
{
	if (!c)
		return;
	if (c->curl) {
		sym_curl_easy_cleanup(c->curl);
		sym_curl_global_cleanup();
	}
	if (c->auth) {
		explicit_bzero(c->auth, strlen(c->auth));
		free(c->auth);
	}
	free(c->base);
	free(c);
}

static size_t on_data(char *p, size_t size, size_t nmemb, void *userdata)
{
	answer *a = userdata;
	size_t n = nmemb; /* size is 1 by libcurl's contract */
	char *d;

	(void) size;
	if (n > HTTP_BODY_MAX - a->size) {
		a->too_large = true;
		return 0; /* libcurl stops: CURLE_WRITE_ERROR */
	}
	d = realloc(a->data, a->size + n + 1);
	if (!d)
		return 0;
	memcpy(d + a->size, p, n);
	a->data = d;
	a->size += n;
	a->data[a->size] = '\0';
	return n;
}

int http_request(http_client *c, const char *method, const char *path, const char *body, long *ret_status,
		 json_t **ret)
{
	struct curl_slist *headers = NULL, *h;
	char *url = NULL, errbuf[CURL_ERROR_SIZE] = "", agent[64];
	answer a = { 0 };
	json_t *obj = NULL;
	mb_error err = { 0 };
	CURLcode cr;
	long status = 0;
	int rc = EXIT_USAGE;

	*ret_status = 0;
	*ret = NULL;
	if (asprintf(&url, "%s%s", c->base, path) < 0) {
		url = NULL;
		errorf(c->verb, "out of memory");
		return EXIT_USAGE;
	}
	{
		const char *lines[] = { "Accept: application/json", "Content-Type: application/json", c->auth };
		size_t i;

		for (i = 0; i < sizeof(lines) / sizeof(lines[0]) && lines[i]; i++) {
			h = sym_curl_slist_append(headers, lines[i]);
			if (!h) {
				errorf(c->verb, "out of memory");
				goto out;
			}
			headers = h;
		}
	}

	sym_curl_easy_reset(c->curl);
	sym_curl_easy_setopt(c->curl, CURLOPT_URL, url);
	sym_curl_easy_setopt(c->curl, CURLOPT_PROTOCOLS_STR, c->plain ? "http" : "https");
	sym_curl_easy_setopt(c->curl, CURLOPT_FOLLOWLOCATION, 0L);
	sym_curl_easy_setopt(c->curl, CURLOPT_SSL_VERIFYPEER, 1L);
	sym_curl_easy_setopt(c->curl, CURLOPT_SSL_VERIFYHOST, 2L);
	if (c->ca_file)
		sym_curl_easy_setopt(c->curl, CURLOPT_CAINFO, c->ca_file);
	sym_curl_easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT, HTTP_CONNECT_TIMEOUT_S);
	sym_curl_easy_setopt(c->curl, CURLOPT_TIMEOUT, HTTP_TOTAL_TIMEOUT_S);
	sym_curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
	sym_curl_easy_setopt(c->curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t) HTTP_BODY_MAX);
	snprintf(agent, sizeof(agent), "mboot/%s", mb_version());
	sym_curl_easy_setopt(c->curl, CURLOPT_USERAGENT, agent);
	sym_curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, headers);
	sym_curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, errbuf);
	sym_curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_data);
	sym_curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, &a);
	if (strcmp(method, "GET") != 0) {
		sym_curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, body ? body : "");
		sym_curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) (body ? strlen(body) : 0));
		if (strcmp(method, "POST") != 0)
			sym_curl_easy_setopt(c->curl, CURLOPT_CUSTOMREQUEST, method);
	}

	cr = sym_curl_easy_perform(c->curl);
	if (a.too_large || cr == CURLE_FILESIZE_EXCEEDED) {
		errorf(c->verb, "%s %s: the answer is larger than %u MiB", method, url, HTTP_BODY_MAX >> 20);
		goto out;
	}
	if (cr != CURLE_OK) {
		errorf(c->verb, "%s %s: %s", method, url, errbuf[0] ? errbuf : sym_curl_easy_strerror(cr));
		goto out;
	}
	sym_curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
	if (a.size > 0 && untrusted_json_parse(a.data, a.size, ANSWER_DEPTH, &obj, &err) < 0) {
		errorf(c->verb, "%s %s: HTTP %ld, and the answer is not JSON: %s", method, url, status, err.message);
		goto out;
	}
	*ret_status = status;
	*ret = obj;
	rc = EXIT_OK;
out:
	sym_curl_slist_free_all(headers);
	free(a.data);
	free(url);
	return rc;
}

void http_report_status(http_client *c, const char *method, const char *path, long status, json_t *body)
{
	json_t *e = NULL;
	const char *msg = "(no error message)";

	if (body && json_is_object(body) && ((e = json_object_get(body, "error")) != NULL) &&
	    json_is_string(e))
		msg = json_string_value(e);
	/* The message is the server's: printed as one line, its control characters left out. */
	fprintf(stderr, "mboot %s: %s %s%s: HTTP %ld: ", c->verb, method, c->base, path, status);
	for (; *msg; msg++)
		if ((unsigned char) *msg >= 0x20 && *msg != 0x7f)
			fputc(*msg, stderr);
	fputc('\n', stderr);
}

int http_call(http_client *c, const char *method, const char *path, const char *body, json_t **ret)
{
	json_t *obj = NULL;
	long status = 0;
	int rc = http_request(c, method, path, body, &status, &obj);

	if (rc != EXIT_OK)
		return rc;
	if (status < 200 || status > 299) {
		http_report_status(c, method, path, status, obj);
		json_decref(obj);
		return EXIT_USAGE;
	}
	if (ret)
		*ret = obj;
	else
		json_decref(obj);
	return EXIT_OK;
}
