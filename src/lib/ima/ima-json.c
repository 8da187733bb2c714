/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The IMA list's documents (docs/ima.md): `ima show --json` (mb_ima_log_to_json) and
 * `ima replay --json` (mb_ima_replay_to_json), and the comparisons replay reports.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/digest.h>
#include <mboot/ima.h>
#include "lib/ima/ima-internal.h"
#include "shared/json.h"

MB_EXPORT const char *mb_ima_match_label(mb_ima_match m)
{
	switch (m) {
	case MB_IMA_MATCH_ABSENT: return "absent";
	case MB_IMA_MATCH_RECOMPUTED: return "recomputed";
	case MB_IMA_MATCH_PADDED: return "padded";
	case MB_IMA_MATCH_NONE: return "none";
	}
	return "none";
}

MB_EXPORT const char *mb_ima_aggregate_label(mb_ima_aggregate a)
{
	switch (a) {
	case MB_IMA_AGGREGATE_NO_ENTRY: return "no-entry";
	case MB_IMA_AGGREGATE_NO_PCRS: return "no-pcrs";
	case MB_IMA_AGGREGATE_MATCH: return "match";
	case MB_IMA_AGGREGATE_MATCH_0_7: return "match-pcrs-0-7";
	case MB_IMA_AGGREGATE_MISMATCH: return "mismatch";
	}
	return "mismatch";
}

MB_EXPORT mb_ima_match mb_ima_pcr_compare(const mb_pcr_values *recomputed, const mb_pcr_values *padded,
					  const mb_pcr_values *actual, uint16_t alg, uint32_t pcr)
{
	const mb_digest_info *d = mb_digest_by_alg(alg);
	const uint8_t *a = actual ? mb_pcr_values_get(actual, alg, pcr) : NULL, *x;

	if (!a || !d)
		return MB_IMA_MATCH_ABSENT;
	x = recomputed ? mb_pcr_values_get(recomputed, alg, pcr) : NULL;
	if (x && memcmp(x, a, d->size) == 0)
		return MB_IMA_MATCH_RECOMPUTED;
	x = padded ? mb_pcr_values_get(padded, alg, pcr) : NULL;
	if (x && memcmp(x, a, d->size) == 0)
		return MB_IMA_MATCH_PADDED;
	return MB_IMA_MATCH_NONE;
}

MB_EXPORT mb_ima_aggregate mb_ima_boot_aggregate_check(const mb_ima_log *log, const mb_pcr_values *actual)
{
	const mb_ima_entry *e = mb_ima_log_entry(log, 0);
	const mb_digest_info *d;
	uint8_t h[MB_DIGEST_MAX];
	int rc, rc7;

	if (!e || !e->path || strcmp(e->path, "boot_aggregate") != 0 || !e->digest_algo)
		return MB_IMA_AGGREGATE_NO_ENTRY;
	d = mb_digest_by_name(e->digest_algo);
	if (!d || d->size != e->digest_size)
		return MB_IMA_AGGREGATE_NO_ENTRY;
	rc = mb_ima_boot_aggregate(actual, d->alg, false, h, NULL);
	if (rc == 0 && memcmp(h, e->digest, d->size) == 0)
		return MB_IMA_AGGREGATE_MATCH;
	/* before Linux 5.8 (or values without PCRs 8 and 9): 0-7 */
	if (d->alg != MB_ALG_SHA1) {
		rc7 = mb_ima_boot_aggregate(actual, d->alg, true, h, NULL);
		if (rc7 == 0 && memcmp(h, e->digest, d->size) == 0)
			return MB_IMA_AGGREGATE_MATCH_0_7;
		if (rc7 < 0)
			return MB_IMA_AGGREGATE_NO_PCRS;
	} else if (rc < 0) {
		return MB_IMA_AGGREGATE_NO_PCRS;
	}
	return MB_IMA_AGGREGATE_MISMATCH;
}

static json_t *digest_obj(const char *algo, const uint8_t *p, size_t n)
{
	json_t *o = json_object();

	json_object_set_new(o, "algorithm", json_text(algo));
	json_object_set_new(o, "digest", json_hex(p, n));
	return o;
}

static json_t *entry_json(const mb_ima_entry *e, size_t i)
{
	json_t *o = json_object();
	char alg[8];

	json_object_set_new(o, "number", json_integer((json_int_t) i));
	json_object_set_new(o, "offset", json_integer((json_int_t) e->offset));
	json_object_set_new(o, "pcr", json_integer(e->pcr));
	json_object_set_new(o, "template", json_text(e->template_name));
	json_object_set_new(o, "template_hash", json_hex(e->template_hash, e->template_hash_size));
	json_object_set_new(o, "template_hash_bank", json_text(mb_digest_alg_name(e->template_hash_alg, alg)));
	json_object_set_new(o, "template_hash_check", json_text(mb_ima_check_label(e->check)));
	if (e->digest_algo)
		json_object_set_new(o, "file_digest", digest_obj(e->digest_algo, e->digest, e->digest_size));
	if (e->path)
		json_object_set_new(o, "path", json_text(e->path));
	if (e->template_kind == MB_IMA_TEMPLATE_IMA_SIG || e->template_kind == MB_IMA_TEMPLATE_IMA_MODSIG)
		json_object_set_new(o, "signature", json_hex(e->sig, e->sig_size));
	if (e->modsig_digest_algo)
		json_object_set_new(o, "modsig_digest",
				    digest_obj(e->modsig_digest_algo, e->modsig_digest, e->modsig_digest_size));
	if (e->template_kind == MB_IMA_TEMPLATE_IMA_MODSIG)
		json_object_set_new(o, "modsig", json_hex(e->modsig, e->modsig_size));
	if (e->template_kind == MB_IMA_TEMPLATE_IMA_BUF)
		json_object_set_new(o, "buffer", json_hex(e->buf, e->buf_size));
	if (e->template_kind == MB_IMA_TEMPLATE_UNKNOWN) {
		json_t *a = json_array();

		for (size_t k = 0; k < e->n_fields; k++)
			json_array_append_new(a, json_hex(e->fields[k].data, e->fields[k].size));
		json_object_set_new(o, "fields", a);
	}
	return o;
}

MB_EXPORT char *mb_ima_log_to_json(const mb_ima_log *log, bool pretty)
{
	json_build_mark mark = json_build_begin();
	json_t *root = json_object(), *entries = json_array();
	uint64_t tail_off;
	size_t tail_size;
	char *out;

	json_object_set_new(root, "format", json_string(mb_ima_log_is_ascii(log) ? "ascii" : "binary"));
	for (size_t i = 0; i < mb_ima_log_count(log); i++)
		json_array_append_new(entries, entry_json(mb_ima_log_entry(log, i), i));
	json_object_set_new(root, "entries", entries);
	json_object_set_new(root, "bad_template_hashes", json_integer((json_int_t) mb_ima_log_n_bad(log)));
	if (mb_ima_log_tail(log, &tail_off, &tail_size)) {
		json_t *t = json_object();

		json_object_set_new(t, "offset", json_integer((json_int_t) tail_off));
		json_object_set_new(t, "size", json_integer((json_int_t) tail_size));
		json_object_set_new(root, "incomplete_tail", t);
	}
	out = json_write_built(root, pretty ? JSON_LAYOUT_PRETTY : JSON_LAYOUT_COMPACT, mark);
	json_decref(root);
	return out;
}

MB_EXPORT char *mb_ima_replay_to_json(const mb_ima_log *log, const mb_pcr_values *recomputed,
				      const mb_pcr_values *padded, const mb_pcr_values *actual, bool pretty)
{
	json_build_mark mark = json_build_begin();
	json_t *root = json_object(), *banks = json_object();
	char *out;

	json_object_set_new(root, "entries", json_integer((json_int_t) mb_ima_log_count(log)));
	json_object_set_new(root, "bad_template_hashes", json_integer((json_int_t) mb_ima_log_n_bad(log)));
	for (size_t b = 0; b < mb_pcr_values_n_banks(recomputed); b++) {
		uint16_t alg = mb_pcr_values_bank_alg(recomputed, b);
		const mb_digest_info *d = mb_digest_by_alg(alg);
		uint32_t present = mb_pcr_values_present(recomputed, alg);
		json_t *bank = json_object();

		if (!d) {
			json_decref(bank);
			continue;
		}
		for (uint32_t p = 0; p < MB_PCR_COUNT; p++) {
			const uint8_t *pv = padded ? mb_pcr_values_get(padded, alg, p) : NULL;
			json_t *o;
			char key[4];

			if (!(present & (1u << p)))
				continue;
			o = json_object();
			json_object_set_new(o, "recomputed", json_hex(mb_pcr_values_get(recomputed, alg, p), d->size));
			if (pv)
				json_object_set_new(o, "padded", json_hex(pv, d->size));
			if (actual) {
				const uint8_t *a = mb_pcr_values_get(actual, alg, p);

				json_object_set_new(o, "actual", a ? json_hex(a, d->size) : json_null());
				json_object_set_new(o, "match", json_text(mb_ima_match_label(
					mb_ima_pcr_compare(recomputed, padded, actual, alg, p))));
			}
			snprintf(key, sizeof(key), "%u", p);
			json_object_set_new(bank, key, o);
		}
		json_object_set_new(banks, d->name, bank);
	}
	json_object_set_new(root, "banks", banks);
	if (actual)
		json_object_set_new(root, "boot_aggregate",
				    json_text(mb_ima_aggregate_label(mb_ima_boot_aggregate_check(log, actual))));
	out = json_write_built(root, pretty ? JSON_LAYOUT_PRETTY : JSON_LAYOUT_COMPACT, mark);
	json_decref(root);
	return out;
}
