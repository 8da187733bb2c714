/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a prediction records as it walks today's log: the reasons per PCR and which PCRs are
 * unpredictable (pred_note), and each rewritten event with its digests in the log's banks
 * (pred_write_event).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/digest.h>
#include "lib/predict/predict-internal.h"
#include "shared/fail.h"

void pred_note(predict_ctx *c, uint32_t pcr, bool unpredictable, const char *fmt, ...)
{
	char *add = NULL, *joined = NULL;
	va_list ap;

	if (pcr >= MB_PCR_COUNT)
		return;
	if (unpredictable)
		c->res->unpredictable |= 1u << pcr;
	va_start(ap, fmt);
	if (vasprintf(&add, fmt, ap) < 0)
		add = NULL;
	va_end(ap);
	if (!add) {
		c->oom = true;
		return;
	}
	if (c->res->why[pcr] && strstr(c->res->why[pcr], add)) {
		free(add);
		return;
	}
	if (!c->res->why[pcr]) {
		c->res->why[pcr] = add;
		return;
	}
	if (asprintf(&joined, "%s; %s", c->res->why[pcr], add) >= 0) {
		free(c->res->why[pcr]);
		c->res->why[pcr] = joined;
	} else {
		c->oom = true;
	}
	free(add);
}

int pred_digest_file(predict_ctx *c, const char *path, file_digests *fd, mb_error *err)
{
	uint16_t algs[MB_MAX_BANKS];
	uint8_t out[MB_MAX_BANKS][MB_DIGEST_MAX];
	size_t i, n = 0;
	int rc;

	for (i = 0; i < c->n_banks; i++)
		if (mb_digest_by_alg(c->banks[i].alg))
			algs[n++] = c->banks[i].alg;
	rc = mb_digest_file(path, algs, n, out, err);
	if (rc < 0)
		return prefix_error(err, rc, path);
	for (i = 0, n = 0; i < c->n_banks; i++)
		if (mb_digest_by_alg(c->banks[i].alg))
			memcpy(fd->d[i], out[n++], MB_DIGEST_MAX);
	fd->have = true;
	return 0;
}

int pred_bank_index(const predict_ctx *c, uint16_t alg)
{
	size_t i;

	for (i = 0; i < c->n_banks; i++)
		if (c->banks[i].alg == alg)
			return (int) i;
	return -1;
}

/* Write ev with new digests from per-bank values (NULL entries: computed from hashed/len). */
int pred_write_event(predict_ctx *c, mb_log_writer *w, const mb_event *ev, const file_digests *fd,
		     const void *hashed, size_t hashed_len, const void *data, size_t data_size)
{
	uint8_t bytes[MB_MAX_BANKS][MB_DIGEST_MAX];
	mb_event_digest d[MB_MAX_BANKS];
	uint32_t i;

	for (i = 0; i < ev->n_digests; i++) {
		int b = pred_bank_index(c, ev->digests[i].alg);

		d[i] = ev->digests[i];
		if (!mb_digest_by_alg(ev->digests[i].alg) || b < 0) {
			/* A bank mboot cannot compute: the old digest stays, and the PCR is unknown. */
			pred_note(c, ev->pcr, true, "bank 0x%04x cannot be computed", ev->digests[i].alg);
			continue;
		}
		if (fd)
			memcpy(bytes[i], fd->d[b], ev->digests[i].size);
		else if (mb_digest(ev->digests[i].alg, hashed, hashed_len, bytes[i]) < 0)
			return -EIO;
		d[i].bytes = bytes[i];
	}
	c->res->events_rewritten++;
	return mb_log_writer_add(w, ev->pcr, ev->type, d, ev->n_digests, data ? data : ev->data,
				 data ? data_size : ev->data_size);
}
