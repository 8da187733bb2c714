/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_VERIFIERD_NOTIFY_H
#define MBOOT_VERIFIERD_NOTIFY_H
/*
 * Webhooks (mboot-verifierd --notify, docs/api.md "Webhooks"): a JSON POST to each URL when a
 * machine's stored status changes, signed with HMAC-SHA256 under the operator's secret. The
 * fleet only queues (notify_change_send never blocks, never touches the network); one thread a
 * URL delivers, in order, over libcurl (src/shared/curl-dl.h), retrying with exponential backoff.
 * The queues are in memory only: what is pending when the service stops is lost (logged).
 */
#include <stddef.h>
#include <stdint.h>

#include <mboot/error.h>

typedef struct notify_options {
	const char *const *urls;   /* http:// or https:// */
	size_t n_urls;
	const char *secret_file;   /* the HMAC key: the file's bytes but a final newline, 16 or more */
	unsigned tries;            /* tries of one delivery (>= 1) */
	unsigned timeout;          /* seconds one try may take */
	size_t queue;              /* deliveries waiting per URL; one more is dropped */
} notify_options;

typedef struct notifier notifier;

/* 0, or -EINVAL (a URL that is not http(s)://, no secret), -EOPNOTSUPP (no libcurl), -ENOMEM;
 * the key is held in memory only, wiped at notify_free. */
int notify_new(const notify_options *o, notifier **ret, mb_error *err);
/* Stops the threads (a try in flight is aborted within a second); pending deliveries are lost. */
void notify_free(notifier *n);

/* 0 when url is http:// or https:// with a host and no spaces or control characters. */
int notify_url_check(const char *url, mb_error *err);

/* One status change (docs/api.md); NULL strings are JSON null. */
typedef struct notify_change {
	const char *machine_id;
	const char *old_status;     /* NULL: the machine was not known (a new machine) */
	const char *new_status;     /* NULL: forgotten */
	const char *cause;          /* "enrollment", "attestation", "policy", "revoke", "forget" */
	const char *nonce;          /* the attestation's nonce (its id), or NULL */
	const char *verdict;        /* the verdict JSON whose "reasons" are sent, or NULL */
	const char *operator_name;  /* the operator token's name, or NULL */
	int64_t at;                 /* unix seconds */
} notify_change;

/* Queue the change for every URL, when the status did change (n NULL: no webhooks). Never
 * blocks: a full queue drops it (counted, logged). */
void notify_change_send(notifier *n, const notify_change *c);

typedef struct notify_counts {
	uint64_t delivered, failed, dropped, retries, pending;
} notify_counts;
/* All zero when n is NULL. */
void notify_counts_get(notifier *n, notify_counts *ret);

#endif
