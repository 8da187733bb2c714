/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_TOOL_HTTP_CLIENT_H
#define MB_TOOL_HTTP_CLIENT_H

/*
 * The one HTTP client of the tool, for mboot-verifierd's API (docs/api.md): JSON requests over
 * libcurl, TLS certificates always verified (a private CA with --ca-file, else the system
 * store), plain http:// only when the user said --insecure, bounded in time (connect 10 s,
 * whole request 60 s) and in size (HTTP_BODY_MAX), every answer read by the strict JSON reader.
 * Errors are reported here ("mboot VERB: ...") and returned as EXIT_USAGE: the tool's exit
 * code for network and server errors.
 */

#include <stdbool.h>

#include "tool/options.h"
#include <stddef.h>
#include "shared/json.h"

#define HTTP_BODY_MAX (16u << 20)
#define HTTP_CONNECT_TIMEOUT_S 10L
#define HTTP_TOTAL_TIMEOUT_S 60L

typedef struct http_options {
	const char *server;     /* https://host[:port][/prefix]; required */
	const char *ca_file;    /* PEM CA certificates the server's must chain to; NULL: the system's */
	const char *token_file; /* an operator's bearer token, on its first line; NULL: none sent */
	bool insecure;          /* allow http:// (said once on stderr) */
} http_options;

/* The options of the clients (attest push, fleet), for their option tables (tool/options.h). */
#define HTTP_CLIENT_OPTIONS(o)                          \
	TOOL_OPT_STR("server", 0, &(o)->server),        \
	TOOL_OPT_STR("ca-file", 0, &(o)->ca_file),      \
	TOOL_OPT_BOOL("insecure", 0, &(o)->insecure)

typedef struct http_client http_client;

/* Check the options (URL scheme, token file's mode), read the token; reports, EXIT_USAGE. */
int http_client_new(const char *verb, const http_options *o, http_client **ret);
void http_client_free(http_client *c);

/*
 * method path (appended to the server's URL, "/v1/..."), with body (JSON text, or NULL for
 * none). EXIT_OK when an answer came: *ret_status its status, *ret its body parsed (NULL when
 * empty; the caller puts it). Any status: the caller decides (see http_call). EXIT_USAGE,
 * reported, when none came (connection, TLS, time-out) or its body is too large or not JSON.
 */
int http_request(http_client *c, const char *method, const char *path, const char *body, long *ret_status,
		 json_t **ret);
/*
 * http_request that wants a 2xx answer: any other is reported as "HTTP STATUS: the server's
 * error message" and is EXIT_USAGE. ret may be NULL when the body does not matter.
 */
int http_call(http_client *c, const char *method, const char *path, const char *body, json_t **ret);
/* Report a non-2xx answer as http_call does: "mboot VERB: METHOD PATH: HTTP 404: message". */
void http_report_status(http_client *c, const char *method, const char *path, long status, json_t *body);

/* Is s a machine id the API accepts (1 to 64 of [A-Za-z0-9._-], not starting with '.')? */
bool http_machine_id_valid(const char *s);

#endif
