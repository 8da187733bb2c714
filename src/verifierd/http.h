/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_VERIFIERD_HTTP_H
#define MBOOT_VERIFIERD_HTTP_H
/*
 * The HTTP(S) server of mboot-verifierd (libmicrohttpd): a pool of threads, each with its own
 * fleet_worker, turns every complete request into an http_request for fleet_handle() and
 * sends its answer. It enforces the limits the fleet relies on: the body cap, the memory of all
 * bodies, the idle timeout and the deadlines of the headers and the body, the number of
 * connections (in all and from one address), TLS 1.2 or later.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <mboot/error.h>

#include "verifierd/service.h"

typedef struct http_server_options {
	const struct sockaddr *addr;   /* where to listen (port 0: any free port) */
	socklen_t addr_size;
	unsigned threads;              /* > 0 */
	size_t max_body;               /* bytes; a larger body is 413 */
	size_t max_body_memory;        /* bytes, >= max_body: the bodies of all requests; over it 503 */
	unsigned connection_timeout;   /* seconds a connection may be idle */
	unsigned header_timeout;       /* seconds for the TLS handshake and the request headers (> 0) */
	unsigned body_timeout;         /* seconds for the body, from the end of the headers (> 0) */
	unsigned connection_limit;     /* connections at once, over all threads */
	unsigned per_ip_limit;         /* connections at once from one address; 0: no limit */
	const char *tls_cert;          /* PEM text, both or neither: NULL serves plain HTTP */
	const char *tls_key;
	bool verbose;                  /* one line per request on stderr */
} http_server_options;

typedef struct http_server http_server;

/* Listen and serve from the pool's threads until http_server_stop(); f must outlive it. */
int http_server_start(fleet *f, const http_server_options *o, http_server **ret, mb_error *err);

/* The port it listens on (useful with port 0). */
uint16_t http_server_port(const http_server *s);

/* Stop accepting, give the requests in flight up to grace_seconds to be answered, close every
 * connection, end the threads (which frees their workers) and free s. NULL is fine. */
void http_server_stop(http_server *s, unsigned grace_seconds);

#endif
