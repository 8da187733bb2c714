/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mb_attest_verify: judge evidence for an enrolled machine. Every check that well-formed evidence
 * can fail adds a named reason to the verdict; only input that does not parse is an error. The
 * quote's checks all run (each names what is wrong); the logs are replayed only against a quote
 * that passed them, since values nobody vouches for prove nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

#include <mboot/diff.h>
#include <mboot/digest.h>

#include "lib/attest/attest-verify-internal.h"
#include "lib/attest/tpm-public.h"
#include "shared/fail.h"
#include "shared/hex.h"
#include "shared/options.h"


/*
 * Is sig of the kind the AK signs with? RSASSA or RSAPSS for an RSA key, ECDSA for an ECC key,
 * and when the key fixes a scheme (a restricted key must) exactly that scheme and hash: the TPM
 * signs with nothing else. NULL when it is, else what is wrong.
 */
static const char *scheme_problem(const tpm_public *ak, const quote_signature *sig, char *buf, size_t n)
{
	char a[8], b[8], h[8];

	if (ak->type == TPM_ALG_RSA && sig->alg != QUOTE_SIG_RSASSA && sig->alg != QUOTE_SIG_RSAPSS) {
		snprintf(buf, n, "a %s signature, but the AK is an RSA key", quote_sig_alg_name(sig->alg, a));
		return buf;
	}
	if (ak->type == TPM_ALG_ECC && sig->alg != QUOTE_SIG_ECDSA) {
		snprintf(buf, n, "a %s signature, but the AK is an ECC key (ECDSA)", quote_sig_alg_name(sig->alg, a));
		return buf;
	}
	if (ak->scheme != TPM_ALG_NULL && (sig->alg != ak->scheme || sig->hash != ak->scheme_hash)) {
		char h2[8];

		snprintf(buf, n, "a %s/%s signature, but the AK signs with %s/%s", quote_sig_alg_name(sig->alg, a),
			 mb_digest_alg_name(sig->hash, h), quote_sig_alg_name(ak->scheme, b), mb_digest_alg_name(ak->scheme_hash, h2));
		return buf;
	}
	if (!tpm_alg_digest_name(sig->hash) || !mb_digest_by_alg(sig->hash)) {
		snprintf(buf, n, "a signature with hash %s, which mboot does not verify", mb_digest_alg_name(sig->hash, h));
		return buf;
	}
	return NULL;
}

/* 1: sig is key's signature of msg (hashed with sig's hash); 0: it is not; <0: OpenSSL failed. */
static int signature_verifies(EVP_PKEY *key, const quote_signature *sig, const uint8_t *msg, size_t n)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	EVP_PKEY_CTX *pctx = NULL;
	const EVP_MD *md = EVP_get_digestbyname(tpm_alg_digest_name(sig->hash));
	unsigned char *der = NULL;
	const unsigned char *s = sig->a;
	size_t s_size = sig->a_size;
	int r = -EIO;

	if (!ctx || !md)
		goto out;
	if (sig->alg == QUOTE_SIG_ECDSA) {
		/* OpenSSL verifies DER; the TPM gives r and s as big-endian integers */
		ECDSA_SIG *es = ECDSA_SIG_new();
		BIGNUM *br = BN_bin2bn(sig->a, sig->a_size, NULL), *bs = BN_bin2bn(sig->b, sig->b_size, NULL);
		int len;

		if (!es || !br || !bs || ECDSA_SIG_set0(es, br, bs) != 1) {
			ECDSA_SIG_free(es);
			BN_free(br);
			BN_free(bs);
			goto out;
		}
		len = i2d_ECDSA_SIG(es, &der);
		ECDSA_SIG_free(es);
		if (len <= 0)
			goto out;
		s = der;
		s_size = (size_t) len;
	}
	if (EVP_DigestVerifyInit(ctx, &pctx, md, NULL, key) != 1)
		goto out;
	if (sig->alg == QUOTE_SIG_RSAPSS &&
	    (EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) != 1 ||
	     EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_AUTO) != 1))
		goto out;
	r = EVP_DigestVerify(ctx, s, s_size, msg, n) == 1 ? 1 : 0;
out:
	ERR_clear_error();
	OPENSSL_free(der);
	EVP_MD_CTX_free(ctx);
	return r;
}

/* Does the quote's selection cover exactly the values carried? Adds SELECTION_MISMATCH per difference. */
static int check_selection(mb_attest_verdict *v, const quote_attest *q, const mb_pcr_values *pcrs, bool *ret_ok)
{
	size_t i, k, n = mb_pcr_values_n_banks(pcrs);
	int r;

	*ret_ok = true;
	for (i = 0; i < q->n_selections; i++) {
		const quote_selection *s = &q->selections[i];
		uint32_t carried = mb_pcr_values_present(pcrs, s->hash);
		char buf[8];

		for (k = 0; k < i; k++)
			if (q->selections[k].hash == s->hash) {
				*ret_ok = false;
				r = verdict_add(v, MB_ATTEST_SELECTION_MISMATCH, "the quote selects bank %s twice",
						mb_digest_alg_name(s->hash, buf));
				if (r < 0)
					return r;
			}
		if (carried != s->mask) {
			uint32_t dropped = s->mask & ~carried, added = carried & ~s->mask;

			*ret_ok = false;
			r = verdict_add(v, MB_ATTEST_SELECTION_MISMATCH,
					"bank %s: quoted PCRs 0x%06x, values carried for 0x%06x (%s%s%s)",
					mb_digest_alg_name(s->hash, buf), s->mask, carried,
					dropped ? "quoted without a value" : "", dropped && added ? ", " : "",
					added ? "values not quoted" : "");
			if (r < 0)
				return r;
		}
	}
	/* A bank carried that the quote does not select at all (an empty selection counts as none). */
	for (i = 0; i < n; i++) {
		uint16_t alg = mb_pcr_values_bank_alg(pcrs, i);
		bool quoted = false;
		char buf[8];

		for (k = 0; k < q->n_selections; k++)
			if (q->selections[k].hash == alg)
				quoted = true;
		if (!quoted && mb_pcr_values_present(pcrs, alg)) {
			*ret_ok = false;
			r = verdict_add(v, MB_ATTEST_SELECTION_MISMATCH, "bank %s: values carried, but the quote does not "
					"cover the bank", mb_digest_alg_name(alg, buf));
			if (r < 0)
				return r;
		}
	}
	return 0;
}

/* pcrDigest = H_sigHash(the selected values: banks in selection order, PCRs ascending), TPM2_Quote's rule. */
static int check_pcr_digest(mb_attest_verdict *v, const quote_attest *q, const mb_pcr_values *pcrs, uint16_t hash)
{
	const mb_digest_info *d = mb_digest_by_alg(hash);
	uint8_t digest[MB_DIGEST_MAX];
	mb_digest_ctx *ctx = NULL;
	size_t i;
	uint32_t p;
	int r;

	r = mb_digest_ctx_new(hash, &ctx);
	if (r < 0)
		return r;
	for (i = 0; i < q->n_selections && r >= 0; i++) {
		const mb_digest_info *bank = mb_digest_by_alg(q->selections[i].hash);

		for (p = 0; p < MB_PCR_COUNT && r >= 0; p++)
			if (q->selections[i].mask & (1u << p))
				r = mb_digest_ctx_update(ctx, mb_pcr_values_get(pcrs, bank->alg, p), bank->size);
	}
	if (r >= 0)
		r = mb_digest_ctx_final(ctx, digest);
	mb_digest_ctx_free(ctx);
	if (r < 0)
		return r;
	if (q->pcr_digest_size != d->size || CRYPTO_memcmp(digest, q->pcr_digest, d->size) != 0) {
		char a[2 * QUOTE_DIGEST_MAX + 1], b[2 * MB_DIGEST_MAX + 1];

		return verdict_add(v, MB_ATTEST_PCR_DIGEST_MISMATCH, "pcrDigest %s, but the values carried hash to %s",
				   hex_format(q->pcr_digest, q->pcr_digest_size, a), hex_format(digest, d->size, b));
	}
	return 0;
}

/* The quote's own checks; *ret_ok when every one passed. */
static int check_quote(mb_attest_verdict *v, const attest_evidence *ev, const attest_machine *m,
		       const mb_attest_verify_options *opts, bool *ret_ok, mb_error *err)
{
	const quote_attest *q = &ev->quote;
	const tpm_public *ak = &m->ak;
	tpm_public claimed;
	char buf[160], hex[2 * sizeof(m->ak_name) + 1];
	bool selection_ok;
	const char *why;
	size_t n_before = v->n_reasons + v->n_reasons_dropped;
	int r;

	r = tpm_public_parse(ev->ak_public, ev->ak_public_size, &claimed, err);
	if (r < 0 && r != -EOPNOTSUPP)
		return prefix_error(err, r, "evidence: ak_public");
	if (r < 0 || claimed.name_size != ak->name_size || memcmp(claimed.name, ak->name, ak->name_size) != 0) {
		r = verdict_add(v, MB_ATTEST_AK_NOT_ENROLLED, "the evidence's AK has Name %s, the machine's AK %s",
				r < 0 ? "(a key type mboot does not decode)" : hex_format(claimed.name, claimed.name_size, hex),
				hex_format(ak->name, ak->name_size, buf));
		if (r < 0)
			return r;
	}

	/* The signature, always with the enrolled AK: never with the key the evidence brings. */
	why = scheme_problem(ak, &ev->sig, buf, sizeof(buf));
	if (why) {
		r = verdict_add(v, MB_ATTEST_SIGNATURE_SCHEME, "%s", why);
		if (r < 0)
			return r;
	} else {
		if (!m->key) {
			if (err)
				*err = m->key_err;
			return prefix_error(err, m->key_error, "machine record: ak_public");
		}
		r = signature_verifies(m->key, &ev->sig, ev->attest, ev->attest_size);
		if (r < 0)
			return set_error(err, r, "OpenSSL could not verify the signature");
		if (r == 0) {
			r = verdict_add(v, MB_ATTEST_SIGNATURE_INVALID, "the %s signature over TPMS_ATTEST does not "
					"verify with the machine's AK", quote_sig_alg_name(ev->sig.alg, buf));
			if (r < 0)
				return r;
		}
	}

	if (q->magic != TPM_GENERATED_VALUE) {
		r = verdict_add(v, MB_ATTEST_NOT_TPM_GENERATED, "magic 0x%08x, not TPM_GENERATED_VALUE 0x%08x: the TPM "
				"did not make this structure (data signed with the AK)", q->magic, TPM_GENERATED_VALUE);
		if (r < 0)
			return r;
	}
	if (q->type != TPM_ST_ATTEST_QUOTE) {
		r = verdict_add(v, MB_ATTEST_NOT_QUOTE, "TPMS_ATTEST of type 0x%04x, not TPM_ST_ATTEST_QUOTE 0x%04x",
				q->type, TPM_ST_ATTEST_QUOTE);
		if (r < 0)
			return r;
	}
	if (q->extra_size != opts->nonce_size ||
	    (opts->nonce_size && CRYPTO_memcmp(q->extra, opts->nonce, opts->nonce_size) != 0)) {
		r = verdict_add(v, MB_ATTEST_NONCE_MISMATCH, "extraData is %s%s, not the nonce sent",
				q->extra_size ? hex_format(q->extra, q->extra_size < 64 ? q->extra_size : 64, hex) :
						"(empty)", q->extra_size > 64 ? "..." : "");
		if (r < 0)
			return r;
	}
	if (q->type == TPM_ST_ATTEST_QUOTE) {
		r = check_selection(v, q, ev->pcrs, &selection_ok);
		if (r < 0)
			return r;
		/* The digest can only be recomputed over a selection whose values are all there. */
		if (selection_ok && mb_digest_by_alg(ev->sig.hash)) {
			r = check_pcr_digest(v, q, ev->pcrs, ev->sig.hash);
			if (r < 0)
				return r;
		}
	}
	*ret_ok = v->n_reasons + v->n_reasons_dropped == n_before;
	return 0;
}

/* What changed since the baseline (an earlier good evidence of this machine): reported, not judged. */
static int compare_baseline(mb_attest_verdict *v, const attest_evidence *ev, const mb_event_log *log,
			    const attest_machine *m, const mb_attest_verify_options *opts, mb_error *err)
{
	attest_evidence base;
	mb_event_log *base_log = NULL;
	mb_diff diff;
	size_t i;
	int r;

	r = attest_evidence_parse(opts->baseline, opts->baseline_size, &base, err);
	if (r < 0)
		return prefix_error(err, r, "baseline");
	/* A baseline the enrolled AK did not sign is no record of this machine: refuse it as input. */
	if (!m->key) {
		if (err)
			*err = m->key_err;
		r = prefix_error(err, m->key_error, "machine record: ak_public");
	} else if (scheme_problem(&m->ak, &base.sig, (char[160]) { 0 }, 160) ||
		   signature_verifies(m->key, &base.sig, base.attest, base.attest_size) != 1 ||
		   base.quote.magic != TPM_GENERATED_VALUE || base.quote.type != TPM_ST_ATTEST_QUOTE) {
		r = set_error(err, -EBADMSG, "baseline: not a quote signed by the machine's AK");
	}
	if (r < 0)
		goto out;
	v->has_baseline = true;
	v->base_firmware_version = base.quote.firmware_version;
	v->base_clock = base.quote.clock;
	v->base_reset_count = base.quote.reset_count;
	v->base_restart_count = base.quote.restart_count;
	if (log && base.eventlog) {
		r = mb_event_log_parse(base.eventlog, base.eventlog_size, &base_log, err);
		if (r < 0) {
			prefix_error(err, r, "baseline: eventlog");
			goto out;
		}
		r = mb_log_diff(base_log, log, &diff, err);
		if (r < 0)
			goto out;
		v->base_logs_compared = true;
		v->base_pcrs_moved = diff.pcrs_moved;
		if (diff.n_entries) {
			v->changes = calloc(diff.n_entries, sizeof(*v->changes));
			if (!v->changes) {
				mb_diff_done(&diff);
				r = -ENOMEM;
				goto out;
			}
		}
		for (i = 0; i < diff.n_entries; i++) {
			const mb_diff_entry *d = &diff.entries[i];
			verdict_change *c = &v->changes[v->n_changes++];

			c->kind = (int) d->kind;
			c->pcr = d->pcr;
			c->before = d->a ? (int64_t) d->a->number : -1;
			c->after = d->b ? (int64_t) d->b->number : -1;
			c->type = d->b ? d->b->type : d->a->type;
		}
		mb_diff_done(&diff);
	}
out:
	mb_event_log_free(base_log);
	attest_evidence_done(&base);
	return r;
}

/* The quoted values without PCR 10, which an IMA list carried explains instead of the logs. */
static int values_for_logs(const attest_evidence *ev, mb_pcr_values **ret, mb_error *err)
{
	mb_pcr_values *v;
	int r = 0;

	*ret = NULL;
	if (!ev->ima_carried)
		return 0;
	if (!(v = mb_pcr_values_new()))
		return -ENOMEM;
	for (size_t i = 0; i < mb_pcr_values_n_banks(ev->pcrs) && r >= 0; i++) {
		uint16_t alg = mb_pcr_values_bank_alg(ev->pcrs, i);
		uint32_t present = mb_pcr_values_present(ev->pcrs, alg);
		const mb_digest_info *d = mb_digest_by_alg(alg);

		for (uint32_t p = 0; p < MB_PCR_COUNT && r >= 0 && d; p++)
			if (p != 10 && (present & (1u << p)))
				r = mb_pcr_values_set(v, alg, p, mb_pcr_values_get(ev->pcrs, alg, p), d->size, err);
	}
	if (r < 0) {
		mb_pcr_values_free(v);
		return r;
	}
	*ret = v;
	return 0;
}

static int parse_logs(const attest_evidence *ev, mb_event_log **log, mb_cel_log **us, mb_error *err)
{
	int r = 0;

	if (ev->eventlog && (r = mb_event_log_parse(ev->eventlog, ev->eventlog_size, log, err)) < 0)
		return prefix_error(err, r, "evidence: eventlog");
	if (ev->userspace_log && (r = mb_cel_log_parse(ev->userspace_log, ev->userspace_log_size, us, err)) < 0)
		return prefix_error(err, r, "evidence: userspace_log");
	return r;
}

/* The boot key (mb_attest_verdict_boot_key): each part with its length, so that no two
 * evidences' parts run together into the same bytes. */
static int boot_key(const attest_evidence *ev, const mb_attest_verify_options *opts, uint8_t key[32])
{
	static const char tag[] = "mboot boot key 3";
	mb_digest_ctx *ctx = NULL;
	uint8_t buf[8];
	size_t i, n = mb_pcr_values_n_banks(ev->pcrs), us_len;
	/* the firmware log by its bytes' SHA-256, which a machine may send instead of the log once
	 * its judgment is kept; the userspace log as carried, in base64 (another encoding of the
	 * same bytes is only another key) */
	const char *us = attest_evidence_log_text(ev, "userspace_log", &us_len);
	int r = mb_digest_ctx_new(MB_ALG_SHA256, &ctx);

#define PUT_U64(x) (buf[0] = (uint8_t) ((uint64_t) (x) >> 56), buf[1] = (uint8_t) ((uint64_t) (x) >> 48), \
		    buf[2] = (uint8_t) ((uint64_t) (x) >> 40), buf[3] = (uint8_t) ((uint64_t) (x) >> 32), \
		    buf[4] = (uint8_t) ((uint64_t) (x) >> 24), buf[5] = (uint8_t) ((uint64_t) (x) >> 16), \
		    buf[6] = (uint8_t) ((uint64_t) (x) >> 8), buf[7] = (uint8_t) (x),                    \
		    mb_digest_ctx_update(ctx, buf, 8))
	if (r >= 0)
		r = mb_digest_ctx_update(ctx, tag, sizeof(tag));
	/* a log not carried is not an empty one */
	if (r >= 0)
		r = PUT_U64(ev->has_eventlog_sha256 ? sizeof(ev->eventlog_sha256) : UINT64_MAX);
	if (r >= 0 && ev->has_eventlog_sha256)
		r = mb_digest_ctx_update(ctx, ev->eventlog_sha256, sizeof(ev->eventlog_sha256));
	if (r >= 0)
		r = PUT_U64(us ? us_len : UINT64_MAX);
	if (r >= 0 && us_len)
		r = mb_digest_ctx_update(ctx, us, us_len);
	if (r >= 0)
		r = PUT_U64(n);
	for (i = 0; i < n && r >= 0; i++) {
		uint16_t alg = mb_pcr_values_bank_alg(ev->pcrs, i);
		/* with an IMA list, PCR 10 is the list's (judged on every evidence, attest_judge_ima) */
		uint32_t present = mb_pcr_values_present(ev->pcrs, alg) & ~(ev->ima_carried ? 1u << 10 : 0u);
		const mb_digest_info *d = mb_digest_by_alg(alg);

		r = PUT_U64(((uint64_t) alg << 32) | present);
		for (uint32_t p = 0; p < MB_PCR_COUNT && r >= 0 && d; p++)
			if (present & (1u << p))
				r = mb_digest_ctx_update(ctx, mb_pcr_values_get(ev->pcrs, alg, p), d->size);
	}
	if (r >= 0)
		r = PUT_U64(((uint64_t) opts->min_bank << 32) | opts->userspace_pcrs);
#undef PUT_U64
	if (r >= 0)
		r = mb_digest_ctx_final(ctx, key);
	mb_digest_ctx_free(ctx);
	return r;
}

MB_EXPORT int mb_attest_verify(const char *evidence, size_t evidence_size, const char *machine, size_t machine_size,
			       const mb_attest_verify_options *opts_in, mb_attest_verdict **ret, mb_error *err)
{
	mb_attest_verify_options o;
	const mb_attest_verify_options *opts = &o;
	attest_evidence ev;
	attest_machine own = { 0 };
	const attest_machine *m = &own;
	mb_attest_verdict *v = NULL;
	const mb_attest_verdict *judged = NULL;
	mb_event_log *log = NULL;
	mb_cel_log *us = NULL;
	mb_pcr_values *for_logs = NULL;
	bool quote_ok = false;
	int r;

	*ret = NULL;
	if (!opts_in)
		return set_error(err, -EINVAL, "no options: the nonce is needed");
	r = OPTIONS_TAKE(o, opts_in, err);
	if (r < 0)
		return r;
	/* Evidence made elsewhere may carry any extraData a TPM takes, the empty one included. */
	if ((!opts->nonce && opts->nonce_size) || opts->nonce_size > MB_ATTEST_EXTRA_DATA_MAX)
		return set_error(err, -EINVAL, "the nonce must be 0 to %d bytes", MB_ATTEST_EXTRA_DATA_MAX);
	if (opts->min_bank && !mb_digest_by_alg(opts->min_bank))
		return set_error(err, -EINVAL, "min_bank 0x%04x is not a bank mboot computes", opts->min_bank);
	if (opts->machine_parsed)
		m = &opts->machine_parsed->m;
	else if ((r = attest_machine_parse(machine, machine_size, &own, err)) < 0)
		return r;
	r = attest_evidence_parse_lazy(evidence, evidence_size, &ev, err);
	if (r < 0) {
		attest_machine_done(&own);
		return r;
	}
	if (!(v = calloc(1, sizeof(*v))))
		r = -ENOMEM;
	/* the firmware log's SHA-256 is part of the key: a carried log is decoded to take it */
	if (r >= 0 && opts->judged_lookup && (r = attest_evidence_decode_logs(&ev, err)) >= 0 &&
	    (r = boot_key(&ev, opts, v->boot_key)) >= 0) {
		judged = opts->judged_lookup(v->boot_key, opts->judged_ctx);
		/* the key's logs parsed when it was judged: the same bytes parse the same */
		if (judged && !(judged->has_boot_key && memcmp(judged->boot_key, v->boot_key, sizeof(v->boot_key)) == 0))
			judged = NULL;
	}
	/* The logs must parse whatever the quote says: malformed input is malformed either way. */
	if (r >= 0 && (!judged || opts->baseline) && (r = attest_evidence_decode_logs(&ev, err)) >= 0)
		r = parse_logs(&ev, &log, &us, err);
	if (r >= 0) {
		v->quote_decoded = true;
		v->quote = ev.quote;
		v->sig_alg = ev.sig.alg;
		v->sig_hash = ev.sig.hash;
		r = check_quote(v, &ev, m, opts, &quote_ok, err);
	}
	if (r >= 0 && quote_ok) {
		if (judged)
			r = verdict_copy_judgment(v, judged);
		else if (ev.eventlog_named)
			r = verdict_add(v, MB_ATTEST_LOG_NOT_VERIFIED,
					"the evidence names its firmware event log by its SHA-256 only, and no judgment "
					"of that log is kept here: send the log");
		else if (!ev.eventlog)
			r = verdict_add(v, MB_ATTEST_LOG_NOT_VERIFIED, "the evidence carries no firmware event log");
		else if ((r = values_for_logs(&ev, &for_logs, err)) >= 0)
			r = attest_judge_logs(v, log, us, for_logs ? for_logs : ev.pcrs, opts, err);
		/* a log named but not judged here is no judgment of its boot: none to keep */
		v->has_boot_key = r >= 0 && opts->judged_lookup && !(ev.eventlog_named && !judged);
		v->n_judgment_reasons = v->n_reasons;
		v->n_judgment_dropped = v->n_reasons_dropped;
		if (r >= 0)
			r = attest_judge_ima(v, &ev, ev.pcrs, opts, err);
	}
	if (r >= 0 && opts->baseline)
		r = compare_baseline(v, &ev, log, m, opts, err);
	if (r >= 0) {
		v->eventlog_form = ev.eventlog_named ? 2 : ev.eventlog ? 1 : 0;
		memcpy(v->eventlog_sha256, ev.eventlog_sha256, sizeof(v->eventlog_sha256));
	}
	mb_cel_log_free(us);
	mb_event_log_free(log);
	mb_pcr_values_free(for_logs);
	attest_evidence_done(&ev);
	attest_machine_done(&own);
	if (r < 0) {
		if (r == -ENOMEM)
			set_error(err, r, "out of memory");
		mb_attest_verdict_free(v);
		return r;
	}
	*ret = v;
	return 0;
}
