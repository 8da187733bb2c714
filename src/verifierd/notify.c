/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Webhooks (notify.h): the queues, the delivery threads, the signature. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "mb-config.h"
#include "shared/curl-dl.h"
#include "shared/fail.h"
#include "shared/fileio.h"
#include "shared/json.h"
#include "verifierd/notify.h"

/* The first retry waits this long, each next one twice as long, never more than the last. */
#define NOTIFY_BACKOFF_FIRST_S 1
#define NOTIFY_BACKOFF_MAX_S 60
/* Bytes of a receiver's answer read (and thrown away): a receiver cannot make us hold more. */
#define NOTIFY_ANSWER_MAX 65536
#define NOTIFY_SECRET_MAX 4096

typedef struct notify_item {
	char *body;
	char id[37]; /* the delivery id, a random UUID */
} notify_item;

typedef struct notify_target {
	struct notifier *n;
	char *url;
	char where[128]; /* the URL's scheme://host[:port] for the log: no path, no credentials */
	notify_item *ring;
	size_t head, count;
	pthread_t thread;
	bool started;
} notify_target;

struct notifier {
	notify_target *targets;
	size_t n_targets;
	uint8_t *secret; /* file_read's: one byte more, a NUL (or the newline dropped) */
	size_t secret_size;
	bool curl_ready; /* curl_global_init done */
	unsigned tries, timeout;
	size_t queue;
	pthread_mutex_t lock; /* guards every ring and stopping */
	pthread_cond_t cond;  /* an item queued, or stopping */
	atomic_bool stopping;
	atomic_uint_fast64_t delivered, failed, dropped, retries;
};

int notify_url_check(const char *url, mb_error *err)
{
	size_t skip = strncasecmp(url, "http://", 7) == 0 ? 7 : strncasecmp(url, "https://", 8) == 0 ? 8 : 0;
	const unsigned char *p;

	if (!skip)
		return set_error(err, -EINVAL, "--notify %s: not an http:// or https:// URL", url);
	if (!url[skip] || url[skip] == '/')
		return set_error(err, -EINVAL, "--notify %s: no host", url);
	for (p = (const unsigned char *)url; *p; p++)
		if (*p <= ' ' || *p == 0x7f)
			return set_error(err, -EINVAL, "--notify: the URL holds a space or a control character");
	return 0;
}

/* scheme://host[:port] of url, without any user:password@ (the log must not show secrets). */
static void url_where(const char *url, char *out, size_t size)
{
	const char *host = strstr(url, "://") + 3;
	size_t n = strcspn(host, "/?#");
	const char *at = memchr(host, '@', n);

	if (at) {
		n -= (size_t)(at + 1 - host);
		host = at + 1;
	}
	snprintf(out, size, "%.*s%.*s", (int)(strstr(url, "://") + 3 - url), url, (int)n, host);
}

/* Lowercase hex of HMAC-SHA256(secret, timestamp "." body): the X-Mboot-Signature. */
static int sign(const notifier *n, const char *timestamp, const char *body, char hex[65])
{
	uint8_t md[EVP_MAX_MD_SIZE];
	unsigned md_len = 0;
	size_t tlen = strlen(timestamp), blen = strlen(body);
	uint8_t *msg = malloc(tlen + 1 + blen);

	if (!msg)
		return -ENOMEM;
	memcpy(msg, timestamp, tlen);
	msg[tlen] = '.';
	memcpy(msg + tlen + 1, body, blen);
	if (!HMAC(EVP_sha256(), n->secret, (int)n->secret_size, msg, tlen + 1 + blen, md, &md_len) || md_len != 32) {
		free(msg);
		return -EIO;
	}
	free(msg);
	for (unsigned i = 0; i < md_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	return 0;
}

static size_t on_answer(char *p, size_t size, size_t nmemb, void *ctx)
{
	size_t *total = ctx;

	(void)p;
	*total += size * nmemb;
	return *total > NOTIFY_ANSWER_MAX ? 0 : size * nmemb;
}

/* Aborts a try in flight once the service stops. */
static int on_progress(void *ctx, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	notifier *n = ctx;

	(void)dt, (void)dn, (void)ut, (void)un;
	return atomic_load(&n->stopping) ? 1 : 0;
}

/* One try: 0 when the receiver answered 2xx; else why not in why. */
static int post(notify_target *t, CURL *curl, const notify_item *it, char *why, size_t why_size)
{
	char ts[24], sig[65], h_ts[64], h_sig[96], h_id[64], agent[64], errbuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *headers = NULL, *h;
	const char *lines[] = { "Content-Type: application/json", "Expect:", h_id, h_ts, h_sig };
	size_t answered = 0;
	long status = 0;
	CURLcode cr;
	int r = 0;

	snprintf(ts, sizeof(ts), "%lld", (long long)time(NULL));
	if (sign(t->n, ts, it->body, sig) < 0) {
		snprintf(why, why_size, "the signature could not be computed");
		return -EIO;
	}
	snprintf(h_id, sizeof(h_id), "X-Mboot-Delivery: %s", it->id);
	snprintf(h_ts, sizeof(h_ts), "X-Mboot-Timestamp: %s", ts);
	snprintf(h_sig, sizeof(h_sig), "X-Mboot-Signature: sha256=%s", sig);
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		h = sym_curl_slist_append(headers, lines[i]);
		if (!h) {
			sym_curl_slist_free_all(headers);
			snprintf(why, why_size, "out of memory");
			return -ENOMEM;
		}
		headers = h;
	}
	snprintf(agent, sizeof(agent), "mboot-verifierd/%s", MB_VERSION);
	sym_curl_easy_reset(curl);
	sym_curl_easy_setopt(curl, CURLOPT_URL, t->url);
	/* Only http and https, and no redirect followed at all: a 3xx is a failed try. */
	sym_curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
	sym_curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	sym_curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
	sym_curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
	sym_curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
	sym_curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, (long)(t->n->timeout < 10 ? t->n->timeout : 10));
	sym_curl_easy_setopt(curl, CURLOPT_TIMEOUT, (long)t->n->timeout);
	sym_curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	sym_curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
	sym_curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
	sym_curl_easy_setopt(curl, CURLOPT_XFERINFODATA, t->n);
	sym_curl_easy_setopt(curl, CURLOPT_USERAGENT, agent);
	sym_curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	sym_curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
	sym_curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_answer);
	sym_curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answered);
	sym_curl_easy_setopt(curl, CURLOPT_POSTFIELDS, it->body);
	sym_curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(it->body));
	cr = sym_curl_easy_perform(curl);
	if (cr != CURLE_OK && !(cr == CURLE_WRITE_ERROR && answered > NOTIFY_ANSWER_MAX)) {
		snprintf(why, why_size, "%s", errbuf[0] ? errbuf : sym_curl_easy_strerror(cr));
		r = -EIO;
	} else {
		sym_curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
		if (status < 200 || status > 299) {
			snprintf(why, why_size, "HTTP %ld", status);
			r = -EIO;
		}
	}
	sym_curl_easy_setopt(curl, CURLOPT_HTTPHEADER, NULL);
	sym_curl_slist_free_all(headers);
	return r;
}

/* Sleep s seconds unless the service stops first; false when it stops. */
static bool backoff(notifier *n, unsigned s)
{
	struct timespec until;
	bool going;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += s;
	pthread_mutex_lock(&n->lock);
	while (!atomic_load(&n->stopping) && pthread_cond_timedwait(&n->cond, &n->lock, &until) != ETIMEDOUT)
		;
	going = !atomic_load(&n->stopping);
	pthread_mutex_unlock(&n->lock);
	return going;
}

static void deliver(notify_target *t, CURL *curl, notify_item *it)
{
	notifier *n = t->n;
	char why[CURL_ERROR_SIZE + 32] = "";
	unsigned wait = NOTIFY_BACKOFF_FIRST_S;

	for (unsigned try = 1;; try++) {
		if (post(t, curl, it, why, sizeof(why)) == 0) {
			atomic_fetch_add(&n->delivered, 1);
			return;
		}
		if (atomic_load(&n->stopping))
			return; /* counted with the pending ones */
		if (try >= n->tries) {
			atomic_fetch_add(&n->failed, 1);
			fprintf(stderr, "mboot-verifierd: webhook %s: delivery %s failed after %u tries: %s\n", t->where,
				it->id, try, why);
			return;
		}
		atomic_fetch_add(&n->retries, 1);
		if (!backoff(n, wait))
			return;
		wait = wait * 2 > NOTIFY_BACKOFF_MAX_S ? NOTIFY_BACKOFF_MAX_S : wait * 2;
	}
}

static void *target_main(void *p)
{
	notify_target *t = p;
	notifier *n = t->n;
	CURL *curl = sym_curl_easy_init();
	notify_item it;

	if (!curl)
		fprintf(stderr, "mboot-verifierd: webhook %s: libcurl has no handle: every delivery fails\n", t->where);

	for (;;) {
		pthread_mutex_lock(&n->lock);
		while (!atomic_load(&n->stopping) && t->count == 0)
			pthread_cond_wait(&n->cond, &n->lock);
		if (atomic_load(&n->stopping)) {
			pthread_mutex_unlock(&n->lock);
			break;
		}
		it = t->ring[t->head];
		t->head = (t->head + 1) % n->queue;
		t->count--;
		pthread_mutex_unlock(&n->lock);
		if (curl)
			deliver(t, curl, &it);
		else
			atomic_fetch_add(&n->failed, 1);
		free(it.body);
	}
	if (curl)
		sym_curl_easy_cleanup(curl);
	return NULL;
}

int notify_new(const notify_options *o, notifier **ret, mb_error *err)
{
	notifier *n;
	size_t i;
	int r;

	*ret = NULL;
	if (o->n_urls == 0)
		return 0;
	if (!o->secret_file)
		return set_error(err, -EINVAL, "--notify needs --notify-secret-file F: webhooks are always signed");
	for (i = 0; i < o->n_urls; i++)
		if ((r = notify_url_check(o->urls[i], err)) < 0)
			return r;
	n = calloc(1, sizeof(*n));
	if (!n || !(n->targets = calloc(o->n_urls, sizeof(*n->targets)))) {
		free(n);
		return set_error(err, -ENOMEM, "out of memory");
	}
	r = file_read(o->secret_file, NOTIFY_SECRET_MAX, &n->secret, &n->secret_size, err);
	if (r >= 0 && n->secret_size > 0 && n->secret[n->secret_size - 1] == '\n')
		n->secret_size--; /* the byte stays, wiped with the rest */
	if (r >= 0 && n->secret_size < 16)
		r = set_error(err, -EINVAL, "the key is %zu bytes, fewer than 16", n->secret_size);
	if (r < 0) {
		char what[320];

		snprintf(what, sizeof(what), "--notify-secret-file %s", o->secret_file);
		prefix_error(err, r, what);
		goto fail_early;
	}
	r = dlopen_curl(err);
	if (r >= 0 && sym_curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		r = set_error(err, -EIO, "--notify: libcurl could not be initialized");
	if (r < 0)
		goto fail_early;
	n->curl_ready = true;
	n->tries = o->tries ? o->tries : 1;
	n->timeout = o->timeout ? o->timeout : 10;
	n->queue = o->queue ? o->queue : 1;
	pthread_mutex_init(&n->lock, NULL);
	pthread_cond_init(&n->cond, NULL);
	n->n_targets = o->n_urls;
	for (i = 0; i < o->n_urls; i++) {
		notify_target *t = &n->targets[i];

		t->n = n;
		t->url = strdup(o->urls[i]);
		t->ring = calloc(n->queue, sizeof(*t->ring));
		if (!t->url || !t->ring) {
			r = set_error(err, -ENOMEM, "out of memory");
			goto fail;
		}
		url_where(t->url, t->where, sizeof(t->where));
	}
	for (i = 0; i < n->n_targets; i++) {
		r = -pthread_create(&n->targets[i].thread, NULL, target_main, &n->targets[i]);
		if (r < 0) {
			set_error(err, r, "--notify: no thread: %s", strerror(-r));
			goto fail;
		}
		n->targets[i].started = true;
	}
	*ret = n;
	return 0;
fail_early:
	if (n->secret)
		OPENSSL_cleanse(n->secret, n->secret_size + 1);
	free(n->secret);
	free(n->targets);
	free(n);
	return r;
fail:
	notify_free(n);
	return r;
}

void notify_free(notifier *n)
{
	uint64_t lost = 0;

	if (!n)
		return;
	pthread_mutex_lock(&n->lock);
	atomic_store(&n->stopping, true);
	pthread_cond_broadcast(&n->cond);
	pthread_mutex_unlock(&n->lock);
	for (size_t i = 0; i < n->n_targets; i++) {
		notify_target *t = &n->targets[i];

		if (t->started)
			pthread_join(t->thread, NULL);
		for (size_t k = 0; t->ring && k < t->count; k++)
			free(t->ring[(t->head + k) % n->queue].body);
		lost += t->count;
		free(t->ring);
		free(t->url);
	}
	if (lost)
		fprintf(stderr, "mboot-verifierd: stopping: %" PRIu64 " webhook deliveries still queued are lost\n", lost);
	pthread_cond_destroy(&n->cond);
	pthread_mutex_destroy(&n->lock);
	OPENSSL_cleanse(n->secret, n->secret_size + 1);
	free(n->secret);
	free(n->targets);
	if (n->curl_ready)
		sym_curl_global_cleanup();
	free(n);
}

static json_t *text_or_null(const char *s)
{
	return s ? json_text(s) : json_null();
}

static bool same(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* The body of docs/api.md "Webhooks"; NULL when out of memory. */
static char *change_body(const notify_change *c, const char *id)
{
	json_build_mark mark = json_build_begin();
	json_t *o = json_object(), *verdict = c->verdict ? json_from_text(c->verdict) : NULL, *reasons;
	char at[32];
	struct tm tm;
	time_t t = (time_t)c->at;
	char *text;

	reasons = json_object_get(verdict, "reasons");
	gmtime_r(&t, &tm);
	strftime(at, sizeof(at), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object_set_new(o, "kind", json_text("mboot-status-change"));
	json_object_set_new(o, "version", json_integer(1));
	json_object_set_new(o, "delivery_id", json_text(id));
	json_object_set_new(o, "machine_id", json_text(c->machine_id));
	json_object_set_new(o, "old_status", text_or_null(c->old_status));
	json_object_set_new(o, "new_status", text_or_null(c->new_status));
	json_object_set_new(o, "cause", json_text(c->cause));
	json_object_set_new(o, "at", json_text(at));
	json_object_set_new(o, "nonce", text_or_null(c->nonce));
	json_object_set_new(o, "reasons", json_is_array(reasons) ? json_incref(reasons) : json_array());
	json_object_set_new(o, "operator", text_or_null(c->operator_name));
	text = json_write_built(o, JSON_LAYOUT_COMPACT, mark);
	json_decref(o);
	json_decref(verdict);
	return text;
}

/* A random (version 4) UUID. */
static int new_id(char out[37])
{
	uint8_t b[16];

	if (RAND_bytes(b, sizeof(b)) != 1)
		return -EIO;
	b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);
	b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
		 b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
	return 0;
}

void notify_change_send(notifier *n, const notify_change *c)
{
	char id[37];
	char *body;

	if (!n || same(c->old_status, c->new_status))
		return;
	/* One delivery id for the change: every URL and every retry carries the same body. */
	if (new_id(id) < 0 || !(body = change_body(c, id))) {
		atomic_fetch_add(&n->dropped, n->n_targets);
		fprintf(stderr, "mboot-verifierd: webhook for machine %s dropped: out of memory\n", c->machine_id);
		return;
	}
	pthread_mutex_lock(&n->lock);
	for (size_t i = 0; i < n->n_targets; i++) {
		notify_target *t = &n->targets[i];
		char *copy = t->count < n->queue ? strdup(body) : NULL;

		if (!copy) {
			atomic_fetch_add(&n->dropped, 1);
			fprintf(stderr, "mboot-verifierd: webhook %s: delivery %s (machine %s %s -> %s) dropped: %s\n",
				t->where, id, c->machine_id, c->old_status ? c->old_status : "none",
				c->new_status ? c->new_status : "forgotten",
				t->count < n->queue ? "out of memory" : "the queue is full");
			continue;
		}
		t->ring[(t->head + t->count) % n->queue] = (notify_item){ .body = copy };
		memcpy(t->ring[(t->head + t->count) % n->queue].id, id, sizeof(id));
		t->count++;
	}
	pthread_cond_broadcast(&n->cond);
	pthread_mutex_unlock(&n->lock);
	free(body);
}

void notify_counts_get(notifier *n, notify_counts *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (!n)
		return;
	ret->delivered = atomic_load(&n->delivered);
	ret->failed = atomic_load(&n->failed);
	ret->dropped = atomic_load(&n->dropped);
	ret->retries = atomic_load(&n->retries);
	pthread_mutex_lock(&n->lock);
	for (size_t i = 0; i < n->n_targets; i++)
		ret->pending += n->targets[i].count;
	pthread_mutex_unlock(&n->lock);
}
