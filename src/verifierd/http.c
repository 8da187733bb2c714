/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The HTTP server: libmicrohttpd with its own pool of threads, each polling its share of the
 * connections with epoll. A thread gets a fleet_worker (its database connection) on its first
 * request and frees it when it ends (a pthread key's destructor), so no lock is ever taken
 * around the database. The body is collected under a cap before the fleet sees the request,
 * and the bodies of all connections together under a budget (--max-body-memory).
 *
 * libmicrohttpd's connection timeout is an idle timeout: a client that sends a byte now and
 * then keeps its connection for ever. So every connection is also watched (conn_watch, from
 * MHD_OPTION_NOTIFY_CONNECTION) with an absolute deadline: its request headers (and the TLS
 * handshake) must be in within --header-timeout of the connection's start or of the previous
 * request's end, its body within --body-timeout of its headers. A watchdog thread shuts down
 * the socket of a connection past its deadline; libmicrohttpd then sees it end and closes it.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "shared/fail.h"
#include "verifierd/http.h"

/* One TCP connection, from libmicrohttpd's STARTED notification to its CLOSED one. */
typedef struct conn_watch {
	struct conn_watch *prev, *next;
	MHD_socket fd;
	_Atomic uint64_t deadline_ms;   /* CLOCK_MONOTONIC; 0 while a request is being answered */
	bool cut;                       /* shut down already (under watch_lock) */
} conn_watch;

struct http_server {
	fleet *fleet;
	struct MHD_Daemon *daemon;
	pthread_key_t worker_key;
	size_t max_body;
	size_t max_body_memory;
	atomic_size_t body_memory;   /* bytes allocated for bodies, over all requests */
	unsigned header_timeout;     /* seconds */
	unsigned body_timeout;
	bool verbose;
	atomic_uint in_flight;   /* requests begun and not yet completed */
	uint16_t port;

	/*
	 * The connections, for the watchdog. The CLOSED notification takes watch_lock before
	 * libmicrohttpd closes the socket, and the watchdog shuts a socket down only under it,
	 * so a descriptor number reused by another connection is never hit.
	 */
	pthread_mutex_t watch_lock;
	pthread_cond_t watch_wake;
	conn_watch *watched;
	bool stopping;
	bool watchdog_started;
	pthread_t watchdog;
};

/* One request's state, from its headers to its completion. */
typedef struct request_state {
	char *body;
	size_t body_size;
	size_t body_allocated;
	size_t discarded;        /* bytes thrown away after the body went over the cap */
	bool too_large;          /* (or out of memory or budget): the rest of the body is discarded */
	bool out_of_memory;
	bool over_budget;        /* the bodies of all requests are at --max-body-memory */
	bool answered;           /* a response is queued already (413 early) */
} request_state;

static const char json_out_of_memory[] = "{\"error\": \"out of memory\"}";
static const char msg_over_budget[] = "the server is busy receiving other request bodies: retry later";

/* A TLS connection speaks TLS 1.2 or 1.3: 1.0 and 1.1 (RFC 8996) are refused in the handshake. */
static const char tls_priorities[] = "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2";

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* --- the body budget --- */

static bool budget_take(http_server *s, size_t n)
{
	size_t used = atomic_load(&s->body_memory);

	do {
		if (n > s->max_body_memory - used)
			return false;
	} while (!atomic_compare_exchange_weak(&s->body_memory, &used, used + n));
	return true;
}

static void budget_give(http_server *s, size_t n)
{
	atomic_fetch_sub(&s->body_memory, n);
}

/* --- deadlines --- */

static conn_watch *watch_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return i ? i->socket_context : NULL;
}

/* The connection must have sent what it is waiting for within seconds from now (0: no deadline). */
static void set_deadline(struct MHD_Connection *c, unsigned seconds)
{
	conn_watch *w = watch_of(c);

	if (w)
		atomic_store(&w->deadline_ms, seconds ? now_ms() + seconds * 1000ULL : 0);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	http_server *s = cls;
	conn_watch *w = *socket_context;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

		/* Without memory for it the connection has the idle timeout only. */
		w = i ? calloc(1, sizeof(*w)) : NULL;
		if (!w)
			return;
		w->fd = i->connect_fd;
		atomic_init(&w->deadline_ms, now_ms() + s->header_timeout * 1000ULL);
		pthread_mutex_lock(&s->watch_lock);
		w->next = s->watched;
		if (w->next)
			w->next->prev = w;
		s->watched = w;
		pthread_mutex_unlock(&s->watch_lock);
		*socket_context = w;
	} else if (code == MHD_CONNECTION_NOTIFY_CLOSED && w) {
		pthread_mutex_lock(&s->watch_lock);
		if (w->prev)
			w->prev->next = w->next;
		else
			s->watched = w->next;
		if (w->next)
			w->next->prev = w->prev;
		pthread_mutex_unlock(&s->watch_lock);
		free(w);
		*socket_context = NULL;
	}
}

static void *watchdog_run(void *arg)
{
	http_server *s = arg;

	pthread_mutex_lock(&s->watch_lock);
	while (!s->stopping) {
		uint64_t now = now_ms();
		unsigned cut = 0;
		struct timespec wake;

		for (conn_watch *w = s->watched; w; w = w->next) {
			uint64_t deadline = atomic_load(&w->deadline_ms);

			if (!w->cut && deadline != 0 && now >= deadline) {
				/* libmicrohttpd sees the end of the stream and closes the connection. */
				(void)shutdown(w->fd, SHUT_RDWR);
				w->cut = true;
				cut++;
			}
		}
		if (cut > 0 && s->verbose)
			fprintf(stderr, "mboot-verifierd: %u connection(s) past their deadline closed\n", cut);

		clock_gettime(CLOCK_MONOTONIC, &wake);
		wake.tv_nsec += 200 * 1000 * 1000;
		if (wake.tv_nsec >= 1000 * 1000 * 1000) {
			wake.tv_sec++;
			wake.tv_nsec -= 1000 * 1000 * 1000;
		}
		(void)pthread_cond_timedwait(&s->watch_wake, &s->watch_lock, &wake);
	}
	pthread_mutex_unlock(&s->watch_lock);
	return NULL;
}

static void worker_destroy(void *w)
{
	fleet_worker_free(w);
}

static void mhd_log(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	const http_server *s = cls;

	/* TLS handshake failures and clients that hang up are routine; only --verbose shows them. */
	if (!s->verbose)
		return;
	fputs("mboot-verifierd: libmicrohttpd: ", stderr);
	vfprintf(stderr, fmt, ap);
}

static int hex_value(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/*
 * Percent-decoding of the path and the query arguments, in place. libmicrohttpd's own would
 * decode %00 too, and the C string would end there: "/v1/machines/x%00/revoke" would reach
 * the fleet as "/v1/machines/x", another call. %00 stays as it is (no id contains '%').
 */
static size_t unescape(void *cls, struct MHD_Connection *c, char *text)
{
	char *r = text, *w = text;

	while (*r) {
		int hi = r[0] == '%' ? hex_value(r[1]) : -1;
		int lo = hi >= 0 ? hex_value(r[2]) : -1;

		if (lo >= 0 && (hi | lo) != 0) {
			*w++ = (char)(hi << 4 | lo);
			r += 3;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
	return (size_t)(w - text);
}

static bool method_supported(const char *method)
{
	return strcmp(method, MHD_HTTP_METHOD_GET) == 0 || strcmp(method, MHD_HTTP_METHOD_POST) == 0 ||
	       strcmp(method, MHD_HTTP_METHOD_PUT) == 0 || strcmp(method, MHD_HTTP_METHOD_DELETE) == 0;
}

/* Queue resp (which this takes over) with the headers every answer carries. */
static enum MHD_Result send_response(http_server *s, struct MHD_Connection *c, const char *method,
				     const char *url, http_response *resp)
{
	const char *type = resp->content_type ? resp->content_type : "application/json";
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (resp->body_static)
		r = MHD_create_response_from_buffer(resp->body_size, resp->body, MHD_RESPMEM_PERSISTENT);
	else
		r = MHD_create_response_from_buffer_with_free_callback(resp->body_size, resp->body, free);
	if (!r) {
		if (!resp->body_static)
			free(resp->body);
		*resp = (http_response){ .status = MHD_HTTP_INTERNAL_SERVER_ERROR };
		r = MHD_create_response_from_buffer(strlen(json_out_of_memory), (void *)json_out_of_memory,
						    MHD_RESPMEM_PERSISTENT);
		if (!r)
			return MHD_NO;   /* nothing left to answer with: drop the connection */
		type = "application/json";
	}
	resp->body = NULL;

	if (MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type) != MHD_YES ||
	    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store") != MHD_YES ||
	    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff") != MHD_YES ||
	    (strncasecmp(type, "text/html", 9) == 0 &&
	     MHD_add_response_header(r, "Content-Security-Policy",
				     "default-src 'none'; script-src 'unsafe-inline'; "
				     "style-src 'unsafe-inline'; connect-src 'self'; img-src data:; "
				     "frame-ancestors 'none'") != MHD_YES)) {
		MHD_destroy_response(r);
		return MHD_NO;
	}

	if (s->verbose)
		fprintf(stderr, "mboot-verifierd: %s %s %u\n", method, url, resp->status);
	ret = MHD_queue_response(c, resp->status, r);
	MHD_destroy_response(r);
	return ret;
}

/* An answer of the server itself: {"error": msg}. */
static enum MHD_Result send_error(http_server *s, struct MHD_Connection *c, const char *method, const char *url,
				  unsigned status, const char *msg)
{
	http_response resp = { .status = status };

	if (asprintf(&resp.body, "{\"error\": \"%s\"}", msg) < 0) {
		resp = (http_response){ .status = MHD_HTTP_INTERNAL_SERVER_ERROR, .body = (char *)json_out_of_memory,
					.body_size = strlen(json_out_of_memory), .body_static = true };
	} else {
		resp.body_size = strlen(resp.body);
	}
	return send_response(s, c, method, url, &resp);
}

static enum MHD_Result send_too_large(http_server *s, struct MHD_Connection *c, const char *method, const char *url)
{
	char msg[96];

	snprintf(msg, sizeof(msg), "the request body is over the limit of %zu bytes", s->max_body);
	return send_error(s, c, method, url, MHD_HTTP_CONTENT_TOO_LARGE, msg);
}

static const char *bearer_token(struct MHD_Connection *c)
{
	const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);

	/* The scheme is case-insensitive (RFC 9110 11.1). */
	if (!v || strncasecmp(v, "Bearer", 6) != 0 || (v[6] != ' ' && v[6] != '\t'))
		return NULL;
	v += 6;
	while (*v == ' ' || *v == '\t')
		v++;
	return *v ? v : NULL;
}

/*
 * The buffer grows as the body arrives (never by what Content-Length announces), by doubling
 * up to the cap, and every byte of it is taken from the budget first. 0, -ENOMEM, or -EBUSY
 * when the budget has not that much left.
 */
static int append_body(http_server *s, request_state *st, const char *data, size_t size)
{
	if (st->body_size + size + 1 > st->body_allocated) {
		size_t n = st->body_allocated ? st->body_allocated : 4096;
		char *b;

		while (n < st->body_size + size + 1)
			n *= 2;
		if (n > s->max_body + 1)
			n = s->max_body + 1;   /* the caller keeps body_size + size within max_body */
		if (!budget_take(s, n - st->body_allocated))
			return -EBUSY;
		b = realloc(st->body, n);
		if (!b) {
			budget_give(s, n - st->body_allocated);
			return -ENOMEM;
		}
		st->body = b;
		st->body_allocated = n;
	}
	memcpy(st->body + st->body_size, data, size);
	st->body_size += size;
	st->body[st->body_size] = '\0';
	return 0;
}

static void drop_body(http_server *s, request_state *st)
{
	free(st->body);
	budget_give(s, st->body_allocated);
	st->body = NULL;
	st->body_size = st->body_allocated = 0;
}

static enum MHD_Result handle_complete(http_server *s, struct MHD_Connection *c, const char *method,
				       const char *url, request_state *st)
{
	fleet_worker *w = pthread_getspecific(s->worker_key);
	http_request req = {
		.method = method,
		.path = url,
		.nonce = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "nonce"),
		.bearer = bearer_token(c),
		.body = st->body ? st->body : "",
		.body_size = st->body_size,
	};
	http_response resp = { 0 };

	if (!w) {
		w = fleet_worker_new(s->fleet);
		if (!w || pthread_setspecific(s->worker_key, w) != 0) {
			fleet_worker_free(w);
			return send_error(s, c, method, url, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
		}
	}

	fleet_handle(w, &req, &resp);
	if (resp.status >= 500) {
		/* The fleet's own failures (the database above all) are the operator's business. */
		fprintf(stderr, "mboot-verifierd: %s %s: %u %.*s\n", method, url, resp.status,
			(int)(resp.body_size < 400 ? resp.body_size : 400), resp.body ? resp.body : "");
	}
	return send_response(s, c, method, url, &resp);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				  const char *version, const char *upload_data, size_t *upload_data_size,
				  void **con_cls)
{
	http_server *s = cls;
	request_state *st = *con_cls;
	int r;

	if (!st) {
		/* The headers are in; the body (if any) is not read yet. */
		const char *length = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);

		st = calloc(1, sizeof(*st));
		if (!st)
			return send_error(s, c, method, url, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
		*con_cls = st;
		atomic_fetch_add(&s->in_flight, 1);
		set_deadline(c, s->body_timeout);

		if (!method_supported(method)) {
			st->answered = true;
			return send_error(s, c, method, url, MHD_HTTP_NOT_FOUND, "no such method");
		}
		if (length) {
			char *end;
			unsigned long long n;

			errno = 0;
			n = strtoull(length, &end, 10);
			/* libmicrohttpd has checked the syntax; anything odd left is simply too large. */
			if (errno != 0 || end == length || n > s->max_body) {
				st->answered = true;
				return send_too_large(s, c, method, url);
			}
			/* Not reserved: only what arrives is (a silent client holds nothing). */
			if (n > s->max_body_memory - atomic_load(&s->body_memory)) {
				st->answered = true;
				return send_error(s, c, method, url, MHD_HTTP_SERVICE_UNAVAILABLE, msg_over_budget);
			}
		}
		return MHD_YES;
	}

	if (*upload_data_size > 0) {
		size_t n = *upload_data_size;

		*upload_data_size = 0;
		if (st->answered)
			return MHD_YES;   /* discarded */
		if (st->too_large) {
			/*
			 * A chunked body (no Content-Length) grew over the cap. libmicrohttpd (0.9.75)
			 * cannot answer before the body has been read, so the rest is read and thrown
			 * away to send the 413, but only up to the cap once more: past that the
			 * connection is dropped.
			 */
			st->discarded += n;
			return st->discarded <= s->max_body ? MHD_YES : MHD_NO;
		}
		if (n > s->max_body - st->body_size) {
			st->discarded = st->body_size + n - s->max_body;
			drop_body(s, st);
			st->too_large = true;
			return st->discarded <= s->max_body ? MHD_YES : MHD_NO;
		}
		r = append_body(s, st, upload_data, n);
		if (r < 0) {
			/*
			 * Answered when the body is complete (libmicrohttpd cannot answer sooner),
			 * which --body-timeout bounds; meanwhile the rest is discarded.
			 */
			st->discarded = st->body_size + n;
			drop_body(s, st);
			st->out_of_memory = r == -ENOMEM;
			st->over_budget = r == -EBUSY;
			st->too_large = true;
		}
		return MHD_YES;
	}

	if (st->answered)
		return MHD_YES;
	st->answered = true;
	/* The request is complete: no deadline while it is answered (the idle timeout remains). */
	set_deadline(c, 0);
	if (st->out_of_memory)
		return send_error(s, c, method, url, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	if (st->over_budget)
		return send_error(s, c, method, url, MHD_HTTP_SERVICE_UNAVAILABLE, msg_over_budget);
	if (st->too_large)
		return send_too_large(s, c, method, url);
	return handle_complete(s, c, method, url, st);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
	http_server *s = cls;
	request_state *st = *con_cls;

	if (!st)
		return;
	drop_body(s, st);
	free(st);
	*con_cls = NULL;
	atomic_fetch_sub(&s->in_flight, 1);
	/* On a kept-alive connection, the next request's headers are due in --header-timeout. */
	set_deadline(c, s->header_timeout);
}

/* Stop the watchdog (if it runs) and free s; the daemon is stopped already, or never started. */
static void server_free(http_server *s)
{
	if (s->watchdog_started) {
		pthread_mutex_lock(&s->watch_lock);
		s->stopping = true;
		pthread_cond_signal(&s->watch_wake);
		pthread_mutex_unlock(&s->watch_lock);
		pthread_join(s->watchdog, NULL);
	}
	pthread_cond_destroy(&s->watch_wake);
	pthread_mutex_destroy(&s->watch_lock);
	pthread_key_delete(s->worker_key);
	free(s);
}

static int server_new(fleet *f, const http_server_options *o, http_server **ret, mb_error *err)
{
	pthread_condattr_t attr;
	http_server *s;
	int r;

	s = calloc(1, sizeof(*s));
	if (!s)
		return set_error(err, -ENOMEM, "out of memory");
	s->fleet = f;
	s->max_body = o->max_body;
	s->max_body_memory = o->max_body_memory;
	s->header_timeout = o->header_timeout;
	s->body_timeout = o->body_timeout;
	s->verbose = o->verbose;
	atomic_init(&s->in_flight, 0);
	atomic_init(&s->body_memory, 0);
	r = pthread_key_create(&s->worker_key, worker_destroy);
	if (r != 0) {
		free(s);
		return set_error(err, -r, "pthread_key_create: %s", strerror(r));
	}
	pthread_mutex_init(&s->watch_lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&s->watch_wake, &attr);
	pthread_condattr_destroy(&attr);
	r = pthread_create(&s->watchdog, NULL, watchdog_run, s);
	if (r != 0) {
		server_free(s);
		return set_error(err, -r, "cannot start a thread: %s", strerror(r));
	}
	s->watchdog_started = true;
	*ret = s;
	return 0;
}

int http_server_start(fleet *f, const http_server_options *o, http_server **ret, mb_error *err)
{
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC | MHD_USE_ERROR_LOG;
	/* One thread is the daemon's own polling thread, not a pool (MHD warns about a pool of 1). */
	unsigned pool_size = o->threads > 1 ? o->threads : 0;
	const union MHD_DaemonInfo *info;
	struct MHD_OptionItem opts[16];
	size_t n = 0;
	http_server *s = NULL;
	int r;

	if (o->threads == 0 || o->connection_limit < o->threads || o->max_body == 0 || o->max_body > SIZE_MAX / 4 ||
	    o->max_body_memory < o->max_body || o->header_timeout == 0 || o->body_timeout == 0)
		return set_error(err, -EINVAL, "bad server limits");
	if ((o->tls_cert != NULL) != (o->tls_key != NULL))
		return set_error(err, -EINVAL, "a TLS certificate needs its key and the key its certificate");
	if (o->tls_cert) {
		if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
			return set_error(err, -EOPNOTSUPP, "libmicrohttpd was built without TLS");
		flags |= MHD_USE_TLS;
	}
	if (o->addr->sa_family == AF_INET6)
		flags |= MHD_USE_IPv6;

	r = server_new(f, o, &s, err);
	if (r < 0)
		return r;

	/* MHD logs from the start: its logger is the first option. */
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)mhd_log, s };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_SOCK_ADDR, 0, (void *)o->addr };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)pool_size, NULL };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_LIMIT, (intptr_t)o->connection_limit, NULL };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_PER_IP_CONNECTION_LIMIT, (intptr_t)o->per_ip_limit, NULL };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)o->connection_timeout, NULL };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, s };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, s };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)unescape, NULL };
	if (o->tls_cert) {
		opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)o->tls_cert };
		opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)o->tls_key };
		opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)tls_priorities };
	}
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };

	errno = 0;
	s->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
	if (!s->daemon) {
		r = errno ? -errno : -EIO;
		server_free(s);
		if (o->tls_cert && r == -EIO)
			return set_error(err, r, "cannot start the HTTPS server (is the certificate or key not PEM?)");
		return set_error(err, r, "cannot listen: %s", strerror(-r));
	}

	info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info ? info->port : 0;
	*ret = s;
	return 0;
}

uint16_t http_server_port(const http_server *s)
{
	return s->port;
}

void http_server_stop(http_server *s, unsigned grace_seconds)
{
	struct timespec tick = { .tv_nsec = 20 * 1000 * 1000 };
	unsigned long waited_ms = 0;
	MHD_socket listen_fd;

	if (!s)
		return;
	/* No new connection from here on; those open may still send their requests (the
	 * watchdog still cuts those past their deadlines). */
	listen_fd = MHD_quiesce_daemon(s->daemon);
	while (atomic_load(&s->in_flight) > 0 && waited_ms < grace_seconds * 1000UL) {
		nanosleep(&tick, NULL);
		waited_ms += 20;
	}
	/* Joins the pool's threads; each one's exit frees its worker (the key's destructor). Every
	 * connection is closed, with its CLOSED notification, before the watchdog ends. */
	MHD_stop_daemon(s->daemon);
	if (listen_fd != MHD_INVALID_SOCKET)
		close(listen_fd);
	server_free(s);
}
