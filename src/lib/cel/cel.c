/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The userspace measurement log: RFC 7464 JSON text sequences of TCG CEL-JSON
 * records (TCG Canonical Event Log Format, §5.2 "JSON encoding"), as systemd writes
 * /run/log/systemd/tpm2-measure.log.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/cel.h>
#include <mboot/digest.h>
#include "shared/fail.h"
#include "shared/hex.h"
#include "shared/json.h"

#define RS 0x1e
#define JSON_DEPTH 8

/* One record's digests: its digests array points at d, and d's bytes into bytes. */
typedef struct cel_digests {
	mb_event_digest d[MB_MAX_BANKS];
	uint8_t bytes[MB_MAX_BANKS][MB_DIGEST_MAX];
} cel_digests;

struct mb_cel_log {
	size_t n, cap, skipped;
	mb_cel_record *records;
	cel_digests *digests; /* records[i]'s are digests[i] */
};

MB_EXPORT void mb_cel_log_free(mb_cel_log *log)
{
	size_t i;

	if (!log)
		return;
	for (i = 0; i < log->n; i++)
		free((char *) log->records[i].text);
	free(log->records);
	free(log->digests);
	free(log);
}

MB_EXPORT size_t mb_cel_log_count(const mb_cel_log *log)
{
	return log->n;
}

MB_EXPORT const mb_cel_record *mb_cel_log_record(const mb_cel_log *log, size_t i)
{
	return i < log->n ? &log->records[i] : NULL;
}

MB_EXPORT const mb_event_digest *mb_cel_record_digest(const mb_cel_record *rec, uint16_t alg)
{
	uint32_t k;

	for (k = 0; k < rec->n_digests; k++)
		if (rec->digests[k].alg == alg)
			return &rec->digests[k];
	return NULL;
}

MB_EXPORT size_t mb_cel_log_skipped(const mb_cel_log *log)
{
	return log->skipped;
}

static int parse_digests(json_t *arr, mb_cel_record *rec, cel_digests *store, mb_error *err)
{
	size_t i, n;

	if (!json_is_array(arr))
		return set_error_at(err, -EBADMSG, rec->offset, "record: \"digests\" is not an array");
	n = json_array_size(arr);
	if (n == 0)
		return set_error_at(err, -EBADMSG, rec->offset, "record: no digests");
	if (n > MB_MAX_BANKS)
		return set_error_at(err, -E2BIG, rec->offset, "record: %zu digests (at most %u)", n, MB_MAX_BANKS);
	for (i = 0; i < n; i++) {
		json_t *d = json_array_get(arr, i), *alg, *hex;
		const mb_digest_info *info;
		const char *s;
		uint32_t k;

		if (!json_is_object(d) || !(alg = json_object_get(d, "hashAlg")) ||
		    !(hex = json_object_get(d, "digest")) || !json_is_string(alg) ||
		    !json_is_string(hex))
			return set_error_at(err, -EBADMSG, rec->offset,
					  "record: a digest needs string fields \"hashAlg\" and \"digest\"");
		info = mb_digest_by_name(json_string_value(alg));
		if (!info)
			continue; /* a bank mboot does not compute, like replay does */
		for (k = 0; k < rec->n_digests; k++)
			if (store->d[k].alg == info->alg)
				return set_error_at(err, -EBADMSG, rec->offset, "record: two %s digests", info->name);
		s = json_string_value(hex);
		if (hex_parse(s, strlen(s), store->bytes[rec->n_digests], info->size) < 0)
			return set_error_at(err, -EBADMSG, rec->offset, "record: %s digest is not %u bytes of hex",
					  info->name, info->size);
		store->d[rec->n_digests].alg = info->alg;
		store->d[rec->n_digests].size = info->size;
		store->d[rec->n_digests].bytes = store->bytes[rec->n_digests];
		rec->n_digests++;
	}
	return 0;
}

/* content.text (mboot) or content.string (systemd): what was hashed, for a policy's text rules. */
static int parse_text(json_t *root, mb_cel_record *rec, mb_error *err)
{
	json_t *content, *t;
	const char *s;
	size_t n;

	if (!(content = json_object_get(root, "content")) || !json_is_object(content))
		return 0;
	if (!(t = json_object_get(content, "text")) && !(t = json_object_get(content, "string")))
		return 0;
	if (!json_is_string(t))
		return 0;
	s = json_string_value(t);
	n = (size_t) json_string_length(t);
	if (memchr(s, 0, n))
		return 0; /* not text a rule can be written for */
	rec->text = strndup(s, n);
	if (!rec->text)
		return set_error(err, -ENOMEM, "out of memory");
	rec->text_len = n;
	return 0;
}

/* One record's JSON text, log[start, start + len) (between its 0x1E and the next one, ending
 * in a newline). Returns 1 if it was skipped. */
static int parse_record(const char *log, size_t log_size, size_t start, size_t len, mb_cel_record *rec,
			cel_digests *store, mb_error *err)
{
	json_t *root, *pcr, *digests;
	int rc;
	int64_t v;

	if (len > MB_CEL_MAX_RECORD)
		return set_error_at(err, -E2BIG, rec->offset, "record of %zu bytes (at most %u)", len, MB_CEL_MAX_RECORD);
	/* One value, white space (the newline) after it; lines and columns are the log's. */
	rc = untrusted_json_parse_in(log, log_size, start, len, JSON_DEPTH, &root, err);
	if (rc < 0)
		return rc;
	if (!json_is_object(root)) {
		rc = set_error_at(err, -EBADMSG, rec->offset, "record is not a JSON object");
		goto out;
	}
	if (!(pcr = json_object_get(root, "pcr"))) {
		if (((pcr = json_object_get(root, "nv_index")) != NULL)) {
			rc = 1;
			goto out;
		}
		rc = set_error_at(err, -EBADMSG, rec->offset, "record has no \"pcr\"");
		goto out;
	}
	v = json_integer_value(pcr);
	if (!json_is_integer(pcr) || v < 0 || v >= MB_PCR_COUNT) {
		rc = set_error_at(err, -EBADMSG, rec->offset, "record: \"pcr\" is not a PCR index 0-23");
		goto out;
	}
	rec->pcr = (uint32_t) v;
	if (!(digests = json_object_get(root, "digests"))) {
		rc = set_error_at(err, -EBADMSG, rec->offset, "record has no \"digests\"");
		goto out;
	}
	rc = parse_digests(digests, rec, store, err);
	if (rc == 0)
		rc = parse_text(root, rec, err);
out:
	json_decref(root);
	return rc;
}

static int grow(mb_cel_log *log, mb_error *err)
{
	size_t ncap = log->cap ? log->cap * 2 : 64, i;
	mb_cel_record *nr;
	cel_digests *nd;

	if (ncap > MB_CEL_MAX_RECORDS)
		ncap = MB_CEL_MAX_RECORDS;
	nr = realloc(log->records, ncap * sizeof(*nr));
	if (!nr)
		return set_error(err, -ENOMEM, "out of memory");
	log->records = nr;
	nd = realloc(log->digests, ncap * sizeof(*nd));
	if (!nd)
		return set_error(err, -ENOMEM, "out of memory");
	/* Records point into the digest store: re-point them after a move. */
	for (i = 0; i < log->n; i++) {
		uint32_t k;

		for (k = 0; k < nr[i].n_digests; k++)
			nd[i].d[k].bytes = nd[i].bytes[k];
		nr[i].digests = nd[i].d;
	}
	log->digests = nd;
	log->cap = ncap;
	return 0;
}

MB_EXPORT int mb_cel_log_parse(const void *data, size_t size, mb_cel_log **ret, mb_error *err)
{
	const char *p = data;
	mb_cel_log *log;
	size_t off = 0;
	int r;

	if (size > MB_CEL_MAX_SIZE)
		return set_error(err, -E2BIG, "measurement log of %zu bytes (at most %u)", size, MB_CEL_MAX_SIZE);
	log = calloc(1, sizeof(*log));
	if (!log)
		return set_error(err, -ENOMEM, "out of memory");

	while (off < size) {
		const char *next;
		size_t start, end, len;
		mb_cel_record rec = { 0 };

		/* RFC 7464 §2: every text starts with RS; whitespace-only gaps are tolerated. */
		if (p[off] != RS) {
			if (p[off] == '\n' || p[off] == ' ' || p[off] == '\t' || p[off] == '\r') {
				off++;
				continue;
			}
			r = set_error_at(err, -EBADMSG, off, "expected a record separator (0x1E), found 0x%02x",
				       (unsigned char) p[off]);
			goto fail;
		}
		start = off + 1;
		next = memchr(p + start, RS, size - start);
		end = next ? (size_t) (next - p) : size;
		len = end - start;
		/* RFC 7464 §2.2: a text not ended by a newline may have been cut short. */
		if (len == 0 || p[end - 1] != '\n') {
			r = set_error_at(err, -EBADMSG, off, "record %zu is truncated (no final newline): the log was cut "
				       "short or a writer died while appending", log->n + log->skipped);
			goto fail;
		}
		if (log->n >= MB_CEL_MAX_RECORDS) {
			r = set_error_at(err, -E2BIG, off, "more than %u records", MB_CEL_MAX_RECORDS);
			goto fail;
		}
		if (log->n == log->cap) {
			r = grow(log, err);
			if (r < 0)
				goto fail;
		}
		rec.offset = off;
		rec.digests = log->digests[log->n].d;
		r = parse_record(p, size, start, len, &rec, &log->digests[log->n], err);
		if (r < 0)
			goto fail;
		if (r == 1)
			log->skipped++;
		else
			log->records[log->n++] = rec;
		off = end;
	}
	*ret = log;
	return 0;
fail:
	mb_cel_log_free(log);
	return r;
}

MB_EXPORT int mb_cel_format_record(uint32_t pcr, const mb_event_digest *digests, size_t n_digests,
				   const char *content_type, const char *content_json, char **ret, size_t *ret_size)
{
	json_t *root, *arr, *content = NULL;
	json_build_mark mark;
	char *s, *out;
	size_t i, len;

	if (pcr >= MB_PCR_COUNT || n_digests == 0 || n_digests > MB_MAX_BANKS)
		return -EINVAL;
	/* The caller's content, one JSON value, is written again compact, on the record's one line. */
	if (content_json && !(content = json_from_text(content_json)))
		return -EINVAL;
	mark = json_build_begin();
	root = json_object();
	arr = json_array();
	if (!root || !arr) {
		json_decref(root);
		json_decref(arr);
		json_decref(content);
		return -ENOMEM;
	}
	json_object_set_new(root, "pcr", json_integer(pcr));
	json_object_set_new(root, "digests", arr);
	for (i = 0; i < n_digests; i++) {
		const mb_digest_info *info = mb_digest_by_alg(digests[i].alg);
		json_t *d = json_object();
		char hex[2 * MB_DIGEST_MAX + 1];

		if (!info || info->size != digests[i].size || !d) {
			json_decref(d);
			json_decref(root);
			json_decref(content);
			return d ? -EINVAL : -ENOMEM;
		}
		json_object_set_new(d, "hashAlg", json_text(info->name));
		json_object_set_new(d, "digest", json_text(hex_format(digests[i].bytes, info->size, hex)));
		json_array_append_new(arr, d);
	}
	if (content_type)
		json_object_set_new(root, "content_type", json_text(content_type));
	if (content)
		json_object_set_new(root, "content", content); /* root owns it from here */
	s = json_write_built(root, JSON_LAYOUT_COMPACT, mark);
	json_decref(root);
	if (!s)
		return -ENOMEM;
	len = strlen(s);
	out = malloc(len + 3);
	if (!out) {
		free(s);
		return -ENOMEM;
	}
	out[0] = RS;
	memcpy(out + 1, s, len);
	out[len + 1] = '\n';
	out[len + 2] = '\0';
	free(s);
	*ret = out;
	*ret_size = len + 2;
	return 0;
}
