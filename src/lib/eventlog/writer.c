/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/digest.h>
#include "eventlog-internal.h"

struct mb_log_writer {
	uint8_t *buf;
	size_t size, cap;
	bool agile;
	mb_spec_id_alg algs[MB_MAX_BANKS];
	size_t n_algs;
};

MB_EXPORT int mb_log_writer_new(mb_log_writer **ret)
{
	mb_log_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	*ret = w;
	return 0;
}

MB_EXPORT void mb_log_writer_free(mb_log_writer *w)
{
	if (!w)
		return;
	free(w->buf);
	free(w);
}

static int reserve(mb_log_writer *w, size_t n)
{
	size_t ncap;
	uint8_t *nbuf;

	if (n > MB_LOG_MAX_SIZE || w->size > MB_LOG_MAX_SIZE - n)
		return -E2BIG;
	if (w->size + n <= w->cap)
		return 0;
	ncap = w->cap ? w->cap : 4096;
	while (ncap < w->size + n)
		ncap *= 2;
	nbuf = realloc(w->buf, ncap);
	if (!nbuf)
		return -ENOMEM;
	w->buf = nbuf;
	w->cap = ncap;
	return 0;
}

static void put(mb_log_writer *w, const void *p, size_t n)
{
	if (n)
		memcpy(w->buf + w->size, p, n);
	w->size += n;
}

static void put_u16(mb_log_writer *w, uint16_t v)
{
	uint8_t b[2] = { (uint8_t) v, (uint8_t) (v >> 8) };
	put(w, b, 2);
}

static void put_u32(mb_log_writer *w, uint32_t v)
{
	uint8_t b[4] = { (uint8_t) v, (uint8_t) (v >> 8), (uint8_t) (v >> 16), (uint8_t) (v >> 24) };
	put(w, b, 4);
}

static int write_sha1_record(mb_log_writer *w, uint32_t pcr, uint32_t type, const uint8_t *sha1,
			     const void *data, size_t data_size)
{
	int rc;

	if (data_size > MB_EVENT_MAX_DATA)
		return -E2BIG;
	rc = reserve(w, 32 + data_size);
	if (rc < 0)
		return rc;
	put_u32(w, pcr);
	put_u32(w, type);
	put(w, sha1, 20);
	put_u32(w, (uint32_t) data_size);
	put(w, data, data_size);
	return 0;
}

MB_EXPORT int mb_log_writer_add_spec_id(mb_log_writer *w, const mb_spec_id_alg *algs, size_t n_algs)
{
	static const uint8_t zero[20];
	uint8_t spec[16 + 8 + 4 + MB_MAX_BANKS * 4 + 1];
	size_t n = 0, i;

	if (w->agile || w->size > 0 || n_algs == 0 || n_algs > MB_MAX_BANKS)
		return -EINVAL;
	memcpy(spec, MB_SPEC_ID_SIGNATURE_03, 16);
	n = 16;
	memset(spec + n, 0, 4); /* platformClass: client */
	n += 4;
	spec[n++] = 0;          /* specVersionMinor */
	spec[n++] = 2;          /* specVersionMajor */
	spec[n++] = 0;          /* specErrata */
	spec[n++] = 2;          /* uintnSize: UINT64 */
	spec[n++] = (uint8_t) n_algs;
	spec[n++] = 0;
	spec[n++] = 0;
	spec[n++] = 0;
	for (i = 0; i < n_algs; i++) {
		spec[n++] = (uint8_t) algs[i].alg;
		spec[n++] = (uint8_t) (algs[i].alg >> 8);
		spec[n++] = (uint8_t) algs[i].size;
		spec[n++] = (uint8_t) (algs[i].size >> 8);
		w->algs[i] = algs[i];
	}
	spec[n++] = 0; /* vendorInfoSize */
	w->n_algs = n_algs;
	w->agile = true;
	return write_sha1_record(w, 0, MB_EV_NO_ACTION, zero, spec, n);
}

MB_EXPORT int mb_log_writer_add(mb_log_writer *w, uint32_t pcr, uint32_t type,
				const mb_event_digest *digests, size_t n_digests,
				const void *data, size_t data_size)
{
	size_t need, i, j;
	int rc;

	if (data_size > MB_EVENT_MAX_DATA)
		return -E2BIG;
	if (!w->agile) {
		const mb_event_digest *d = NULL;

		for (i = 0; i < n_digests; i++)
			if (digests[i].alg == MB_ALG_SHA1 && digests[i].size == 20)
				d = &digests[i];
		if (!d)
			return -EINVAL;
		return write_sha1_record(w, pcr, type, d->bytes, data, data_size);
	}
	if (n_digests != w->n_algs)
		return -EINVAL;
	need = 12 + 4 + data_size;
	for (i = 0; i < w->n_algs; i++) {
		for (j = 0; j < n_digests; j++)
			if (digests[j].alg == w->algs[i].alg && digests[j].size == w->algs[i].size)
				break;
		if (j == n_digests)
			return -EINVAL;
		need += 2 + w->algs[i].size;
	}
	rc = reserve(w, need);
	if (rc < 0)
		return rc;
	put_u32(w, pcr);
	put_u32(w, type);
	put_u32(w, (uint32_t) w->n_algs);
	for (i = 0; i < w->n_algs; i++)
		for (j = 0; j < n_digests; j++)
			if (digests[j].alg == w->algs[i].alg) {
				put_u16(w, digests[j].alg);
				put(w, digests[j].bytes, digests[j].size);
				break;
			}
	put_u32(w, (uint32_t) data_size);
	put(w, data, data_size);
	return 0;
}

MB_EXPORT int mb_log_writer_add_hashed(mb_log_writer *w, uint32_t pcr, uint32_t type,
				       const void *hashed, size_t hashed_size,
				       const void *data, size_t data_size)
{
	uint8_t bytes[MB_MAX_BANKS][MB_DIGEST_MAX];
	mb_event_digest d[MB_MAX_BANKS];
	size_t n = w->agile ? w->n_algs : 1, i;
	int rc;

	for (i = 0; i < n; i++) {
		uint16_t alg = w->agile ? w->algs[i].alg : MB_ALG_SHA1;
		const mb_digest_info *info = mb_digest_by_alg(alg);

		if (!info)
			return -EOPNOTSUPP;
		rc = mb_digest(alg, hashed, hashed_size, bytes[i]);
		if (rc < 0)
			return rc;
		d[i].alg = alg;
		d[i].size = info->size;
		d[i].bytes = bytes[i];
	}
	return mb_log_writer_add(w, pcr, type, d, n, data, data_size);
}

MB_EXPORT int mb_log_writer_add_event(mb_log_writer *w, const mb_event *ev)
{
	size_t need = 12 + 4 + ev->data_size, i;
	int rc;

	if (ev->sha1_format) {
		if (ev->n_digests != 1 || ev->digests[0].size != 20)
			return -EINVAL;
		rc = write_sha1_record(w, ev->pcr, ev->type, ev->digests[0].bytes, ev->data, ev->data_size);
		if (rc < 0 || w->agile || w->size != ev->record_size)
			return rc;
		/* A copied crypto-agile header: later records follow its algorithm table. */
		{
			mb_event_log *hdr = NULL;
			const mb_spec_id *spec;

			if (mb_event_log_parse(w->buf, w->size, &hdr, NULL) == 0 && (spec = mb_event_log_spec_id(hdr))) {
				memcpy(w->algs, spec->algs, spec->n_algs * sizeof(spec->algs[0]));
				w->n_algs = spec->n_algs;
				w->agile = true;
			}
			mb_event_log_free(hdr);
		}
		return 0;
	}
	for (i = 0; i < ev->n_digests; i++)
		need += 2 + ev->digests[i].size;
	rc = reserve(w, need);
	if (rc < 0)
		return rc;
	put_u32(w, ev->pcr);
	put_u32(w, ev->type);
	put_u32(w, ev->n_digests);
	for (i = 0; i < ev->n_digests; i++) {
		put_u16(w, ev->digests[i].alg);
		put(w, ev->digests[i].bytes, ev->digests[i].size);
	}
	put_u32(w, ev->data_size);
	put(w, ev->data, ev->data_size);
	return 0;
}

MB_EXPORT const uint8_t *mb_log_writer_data(const mb_log_writer *w, size_t *ret_size)
{
	*ret_size = w->size;
	return w->buf;
}
