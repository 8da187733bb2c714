/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The evidence and the machine record (docs/attest.md) as the verifier reads them: untrusted. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shared/json.h"

#include <mboot/digest.h>
#include <mboot/seal.h>

#include "lib/attest/attest-verify-internal.h"
#include "shared/json-doc.h"
#include "shared/fail.h"
#include "shared/hex.h"

/* "0".."23", decimal without a leading zero: the PCR-values shape's keys. */
static int pcr_key(const char *s, uint32_t *ret)
{
	uint32_t n = 0;
	size_t i;

	if (!s[0] || (s[0] == '0' && s[1]) || strlen(s) > 2)
		return -EINVAL;
	for (i = 0; s[i]; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		n = n * 10 + (uint32_t) (s[i] - '0');
	}
	if (n >= MB_PCR_COUNT)
		return -EINVAL;
	*ret = n;
	return 0;
}

/* {"banks": {"sha256": {"0": hex, ...}, ...}} through the accessors only. */
static int parse_pcrs(json_t *o, mb_pcr_values **ret, mb_error *err)
{
	json_t *banks = json_doc_get(o, "banks", JSON_OBJECT);
	mb_pcr_values *v;
	int r = 0;

	if (!banks)
		return set_error(err, -EBADMSG, "field \"pcrs\" has no object \"banks\"");
	v = mb_pcr_values_new();
	if (!v)
		return -ENOMEM;
	json_object_each(banks, name, pcrs) {
		const mb_digest_info *d = mb_digest_by_name(name);

		if (!d) {
			r = set_error(err, -EOPNOTSUPP, "pcrs: bank \"%.32s\" is not one mboot can compute", name);
			break;
		}
		if (!json_is_object(pcrs)) {
			r = set_error(err, -EBADMSG, "pcrs: bank \"%s\" is not an object", name);
			break;
		}
		json_object_each(pcrs, key, val) {
			uint8_t digest[MB_DIGEST_MAX];
			uint32_t pcr;

			if (pcr_key(key, &pcr) < 0) {
				r = set_error(err, -EBADMSG, "pcrs: bank %s: \"%.32s\" is not a PCR 0-23", name, key);
				break;
			}
			if (!json_is_string(val) ||
			    (size_t) json_string_length(val) != 2u * d->size ||
			    hex_parse(json_string_value(val), 2u * d->size, digest, d->size) < 0) {
				r = set_error(err, -EBADMSG, "pcrs: %s PCR %u is not %u bytes of hex", name, pcr, d->size);
				break;
			}
			r = mb_pcr_values_set(v, d->alg, pcr, digest, d->size, err);
			if (r < 0)
				break;
		}
		if (r < 0)
			break;
	}
	if (r < 0) {
		mb_pcr_values_free(v);
		return r;
	}
	*ret = v;
	return 0;
}

/* o[key]: base64 of 1..max bytes (docs: binary TPM structures are base64 of their marshalling). */
static int b64_field(json_t *o, const char *key, const char *name, size_t max, bool optional, uint8_t **ret,
		     size_t *ret_size, mb_error *err)
{
	int r = json_doc_b64(o, key, max, optional, ret, ret_size, err);

	if (r < 0)
		return prefix_error(err, r, name);
	if (!optional && *ret_size == 0)
		return set_error(err, -EBADMSG, "%s: field \"%s\" is empty", name, key);
	return 0;
}

int attest_evidence_parse_lazy(const char *text, size_t size, attest_evidence *ret, mb_error *err)
{
	json_t *root = NULL, *quote, *pcrs;
	int r;

	memset(ret, 0, sizeof(*ret));
	r = json_doc_open(text, size, MB_ATTEST_FILE_MAX, "evidence", "mboot-evidence", &root, err);
	if (r < 0)
		return r;
	quote = json_doc_get(root, "quote", JSON_OBJECT);
	pcrs = json_doc_get(root, "pcrs", JSON_OBJECT);
	if (!quote)
		r = set_error(err, -EBADMSG, "evidence: field \"quote\" is missing or not an object");
	else if (!pcrs)
		r = set_error(err, -EBADMSG, "evidence: field \"pcrs\" is missing or not an object");
	if (r >= 0)
		r = b64_field(quote, "attest", "evidence quote", QUOTE_ATTEST_MAX, false, &ret->attest, &ret->attest_size,
			      err);
	if (r >= 0)
		r = b64_field(quote, "signature", "evidence quote", QUOTE_SIGNATURE_MAX, false, &ret->signature,
			      &ret->signature_size, err);
	if (r >= 0)
		r = b64_field(root, "ak_public", "evidence", EVIDENCE_AK_PUBLIC_MAX, false, &ret->ak_public,
			      &ret->ak_public_size, err);
	if (r >= 0)
		r = parse_pcrs(pcrs, &ret->pcrs, err);
	if (r >= 0 && (r = quote_attest_parse(ret->attest, ret->attest_size, &ret->quote, err)) < 0)
		prefix_error(err, r, "evidence quote attest");
	if (r >= 0 && (r = quote_signature_parse(ret->signature, ret->signature_size, &ret->sig, err)) < 0)
		prefix_error(err, r, "evidence quote signature");
	if (r >= 0 && json_object_get(root, "ima_log") && !json_is_null(json_object_get(root, "ima_log"))) {
		json_t *start = json_object_get(root, "ima_start");

		ret->ima_carried = true;
		if (start && (!json_is_integer(start) || json_integer_value(start) < 0))
			r = set_error(err, -EBADMSG, "evidence: field \"ima_start\" is not a count of entries");
		else if (start)
			ret->ima_start = (uint64_t) json_integer_value(start);
	}
	if (r >= 0 && json_object_get(root, "eventlog_sha256")) {
		json_t *named = json_object_get(root, "eventlog_sha256");
		json_t *log = json_object_get(root, "eventlog");

		if (!json_is_string(named) || json_string_length(named) != 64 ||
		    hex_parse(json_string_value(named), 64, ret->eventlog_sha256, 32) < 0)
			r = set_error(err, -EBADMSG, "evidence: field \"eventlog_sha256\" is not 32 bytes of hex");
		else if (log && !json_is_null(log))
			r = set_error(err, -EBADMSG, "evidence: fields \"eventlog\" and \"eventlog_sha256\" "
						     "both given (a log is carried or named, not both)");
		ret->eventlog_named = ret->has_eventlog_sha256 = r >= 0;
	}
	/* the logs' base64 stays in the tree until attest_evidence_decode_logs (attest_judge_ima) */
	ret->root = root;
	if (r < 0)
		attest_evidence_done(ret);
	return r;
}

int attest_evidence_decode_logs(attest_evidence *ev, mb_error *err)
{
	int r;

	if (ev->logs_decoded)
		return 0;
	r = b64_field(ev->root, "eventlog", "evidence", MB_LOG_MAX_SIZE, true, &ev->eventlog, &ev->eventlog_size, err);
	if (r >= 0)
		r = b64_field(ev->root, "userspace_log", "evidence", MB_CEL_MAX_SIZE, true, &ev->userspace_log,
			      &ev->userspace_log_size, err);
	/* what a machine names the log by when a verifier holds its judgment (mb_quote_input) */
	if (r >= 0 && ev->eventlog) {
		r = mb_digest(MB_ALG_SHA256, ev->eventlog, ev->eventlog_size, ev->eventlog_sha256);
		ev->has_eventlog_sha256 = r >= 0;
	}
	ev->logs_decoded = r >= 0;
	return r;
}

const char *attest_evidence_log_text(const attest_evidence *ev, const char *key, size_t *ret_len)
{
	json_t *s = json_object_get(ev->root, key);

	*ret_len = json_is_string(s) ? (size_t) json_string_length(s) : 0;
	return json_is_string(s) ? json_string_value(s) : NULL;
}

int attest_evidence_parse(const char *text, size_t size, attest_evidence *ret, mb_error *err)
{
	int r = attest_evidence_parse_lazy(text, size, ret, err);

	if (r >= 0 && (r = attest_evidence_decode_logs(ret, err)) < 0)
		attest_evidence_done(ret);
	return r;
}

void attest_evidence_done(attest_evidence *e)
{
	free(e->attest);
	free(e->signature);
	free(e->ak_public);
	free(e->eventlog);
	free(e->userspace_log);
	free(e->ima_log);
	mb_pcr_values_free(e->pcrs);
	json_decref(e->root);
	memset(e, 0, sizeof(*e));
}

int attest_machine_parse(const char *text, size_t size, attest_machine *ret, mb_error *err)
{
	json_t *root = NULL, *name;
	int r;

	memset(ret, 0, sizeof(*ret));
	r = json_doc_open(text, size, MB_ATTEST_FILE_MAX, "machine record", "mboot-machine", &root, err);
	if (r < 0)
		return r;
	r = b64_field(root, "ak_public", "machine record", EVIDENCE_AK_PUBLIC_MAX, false, &ret->ak_public,
		      &ret->ak_public_size, err);
	name = json_doc_get(root, "ak_name", JSON_STRING);
	if (r >= 0) {
		size_t len = name ? (size_t) json_string_length(name) : 0;

		if (!name || len < 2 || len % 2 || len / 2 > sizeof(ret->ak_name) ||
		    hex_parse(json_string_value(name), len, ret->ak_name, len / 2) < 0)
			r = set_error(err, -EBADMSG, "machine record: field \"ak_name\" is not a Name in hex");
		else
			ret->ak_name_size = len / 2;
	}
	json_decref(root);
	/* A record that does not decode, or whose Name is not its key's, is malformed. */
	if (r >= 0 && (r = tpm_public_parse(ret->ak_public, ret->ak_public_size, &ret->ak, err)) < 0)
		prefix_error(err, r, "machine record: ak_public");
	if (r >= 0 && (ret->ak.name_size != ret->ak_name_size || memcmp(ret->ak.name, ret->ak_name, ret->ak_name_size) != 0))
		r = set_error(err, -EBADMSG, "machine record: ak_name is not the Name of ak_public");
	if (r >= 0) {
		ret->key_error = tpm_public_to_pkey(&ret->ak, &ret->key, &ret->key_err);
		if (ret->key_error == -ENOMEM)
			r = set_error(err, -ENOMEM, "out of memory");
	}
	if (r < 0)
		attest_machine_done(ret);
	return r;
}

void attest_machine_done(attest_machine *m)
{
	free(m->ak_public);
	EVP_PKEY_free(m->key);
	memset(m, 0, sizeof(*m));
}

MB_EXPORT int mb_attest_machine_parse(const char *machine, size_t size, mb_attest_machine **ret, mb_error *err)
{
	mb_attest_machine *m;
	int r;

	*ret = NULL;
	if (!(m = calloc(1, sizeof(*m))))
		return set_error(err, -ENOMEM, "out of memory");
	r = attest_machine_parse(machine, size, &m->m, err);
	if (r < 0) {
		free(m);
		return r;
	}
	*ret = m;
	return 0;
}

MB_EXPORT void mb_attest_machine_free(mb_attest_machine *m)
{
	if (!m)
		return;
	attest_machine_done(&m->m);
	free(m);
}
