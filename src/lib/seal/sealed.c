/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sealed file (docs/seal.md): versioned JSON holding the TPM's TPM2B_PUBLIC and
 * TPM2B_PRIVATE of the sealed object, the PCR selection and values it is sealed to,
 * the policy digest, the parent, and the event log at sealing. It is untrusted input:
 * every field is type-checked and capped, and a bad field is named.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/digest.h>
#include <mboot/seal.h>
#include <mboot/tpm.h>
#include "shared/base64.h"
#include "shared/fail.h"
#include "shared/hex.h"
#include "shared/json.h"
#include "seal-json.h"
#include "sealed-internal.h"

void sealed_done(mb_sealed *s)
{
	if (!s)
		return;
	free(s->pub);
	free(s->priv);
	free(s->eventlog);
	free(s->summary);
	free(s->auth_key);
	memset(s, 0, sizeof(*s));
}

MB_EXPORT void mb_sealed_free(mb_sealed *s)
{
	sealed_done(s);
	free(s);
}

/* A PCR-state object {"bank", "selection", "values"}; name is its place, for messages. */
int seal_json_pcr_state(json_t *pcrs, const char *name, mb_pcr_bank *bank_out, uint32_t *mask_out,
			   mb_error *err)
{
	json_t *bank, *sel, *vals;
	const mb_digest_info *d;
	uint32_t mask = 0;
	size_t i, n;

	memset(bank_out, 0, sizeof(*bank_out));
	if (!pcrs || !json_is_object(pcrs))
		return set_error(err, -EBADMSG, "field \"%s\" is missing or not an object", name);
	bank = json_doc_get(pcrs, "bank", JSON_STRING);
	if (!bank || !(d = mb_digest_by_name(json_string_value(bank))))
		return set_error(err, -EBADMSG, "field \"%s.bank\" is missing or names no known bank", name);
	bank_out->alg = d->alg;
	bank_out->size = d->size;
	sel = json_doc_get(pcrs, "selection", JSON_ARRAY);
	if (!sel)
		return set_error(err, -EBADMSG, "field \"%s.selection\" is missing or not an array", name);
	n = json_array_size(sel);
	if (n > MB_PCR_COUNT)
		return set_error(err, -EBADMSG, "field \"%s.selection\" has more than %u PCRs", name, MB_PCR_COUNT);
	for (i = 0; i < n; i++) {
		json_t *e = json_array_get(sel, i);
		int64_t p;

		if (!json_is_integer(e))
			return set_error(err, -EBADMSG, "field \"%s.selection\" holds a non-integer", name);
		p = json_integer_value(e);
		if (p < 0 || p >= MB_PCR_COUNT || (mask & (1u << p)))
			return set_error(err, -EBADMSG, "field \"%s.selection\": PCR %lld out of range or repeated", name,
				       (long long) p);
		mask |= 1u << p;
	}
	vals = json_doc_get(pcrs, "values", JSON_OBJECT);
	if (!vals)
		return set_error(err, -EBADMSG, "field \"%s.values\" is missing or not an object", name);
	json_object_each(vals, key, val) {
		/* One spelling per PCR ("5", not " 5", "+5" or "05"): no value can hide behind another. */
		char *end;
		unsigned long p = strtoul(key, &end, 10);
		const char *hex;

		if (*key < '0' || *key > '9' || (key[0] == '0' && key[1]) || *end || p >= MB_PCR_COUNT ||
		    !(mask & (1u << p)))
			return set_error(err, -EBADMSG, "field \"%s.values\": key \"%.8s\" is not a selected PCR", name,
				       key);
		if (!json_is_string(val))
			return set_error(err, -EBADMSG, "field \"%s.values.%lu\" is not a string", name, p);
		hex = json_string_value(val);
		if ((size_t) json_string_length(val) != 2u * d->size ||
		    hex_parse(hex, 2u * d->size, bank_out->value[p], d->size) < 0)
			return set_error(err, -EBADMSG, "field \"%s.values.%lu\" is not %u bytes of hex", name, p, d->size);
		bank_out->present |= 1u << p;
	}
	if (bank_out->present != mask)
		return set_error(err, -EBADMSG, "field \"%s.values\" lacks a value for a selected PCR", name);
	*mask_out = mask;
	return 0;
}

/* policy.key of an "authorize" policy: {"name": hex, "public": base64 TPM2B_PUBLIC}. */
static int parse_authority(json_t *o, mb_sealed *s, mb_error *err)
{
	uint8_t name[MB_TPM_NAME_SIZE];
	int r;

	if (!o)
		return set_error(err, -EBADMSG, "field \"policy.key\" is missing or not an object");
	r = json_doc_b64(o, "public", MB_SEALED_MAX_BLOB, false, &s->auth_key, &s->auth_key_size, err);
	if (r < 0)
		return r;
	r = mb_tpm_key_name(s->auth_key, s->auth_key_size, s->auth_key_name, err);
	if (r < 0)
		return prefix_error(err, -EBADMSG, "field \"policy.key.public\"");
	r = json_doc_hex(o, "name", "policy.key.name", name, sizeof(name), err);
	if (r < 0)
		return r;
	if (memcmp(name, s->auth_key_name, sizeof(name)) != 0)
		return set_error(err, -EBADMSG, "field \"policy.key.name\" is not the name of \"policy.key.public\"");
	return 0;
}

/*
 * policy.window (docs/seal.md): {"nv-index": "0x01800b00", "counter": N, "pcrs": PCR state},
 * the PCR state being the sealed PCRs but MB_FIRMWARE_PCRS, of the sealed bank. It becomes
 * branch i of s.
 */
static int parse_window(json_t *w, mb_sealed *s, size_t i, mb_error *err)
{
	json_t *v;
	const char *h;
	char *end;
	unsigned long long x;
	int64_t c;
	int r;

	if (!json_is_object(w))
		return set_error(err, -EBADMSG, "field \"policy.window\" is not an object");
	v = json_doc_get(w, "nv-index", JSON_STRING);
	h = v ? json_string_value(v) : "";
	x = strtoull(h, &end, 16);
	if (strncmp(h, "0x", 2) != 0 || json_string_length(v) != 10 || *end || x < MB_NV_OWNER_FIRST ||
	    x > MB_NV_OWNER_LAST)
		return set_error(err, -EBADMSG, "field \"policy.window.nv-index\" is not an NV index of the owner range "
			       "(0x%08x-0x%08x)", MB_NV_OWNER_FIRST, MB_NV_OWNER_LAST);
	v = json_doc_get(w, "counter", JSON_INTEGER);
	/* The reader refuses larger numbers; INT64_MAX is refused too (no TPM counter gets there). */
	c = v ? json_integer_value(v) : -1;
	if (c < 0 || c == INT64_MAX)
		return set_error(err, -EBADMSG, "field \"policy.window.counter\" is not an integer from 0 to %lld",
			       (long long) INT64_MAX - 1);
	r = seal_json_pcr_state(json_doc_get(w, "pcrs", JSON_OBJECT), "policy.window.pcrs", &s->branch[i],
				&s->branch_mask[i], err);
	if (r < 0)
		return r;
	if (s->branch[i].alg != s->pcrs.alg || s->branch_mask[i] != (s->mask & ~MB_FIRMWARE_PCRS) || !s->branch_mask[i])
		return set_error(err, -EBADMSG, "field \"policy.window.pcrs\" is not of the sealed bank and PCRs but 0-3");
	s->window = true;
	s->window_index = (uint32_t) x;
	s->window_counter = (uint64_t) c;
	return sealed_window_digest(&s->branch[i], s->branch_mask[i], s->window_index, s->window_counter,
				    s->branch_digest[i], err);
}

/*
 * policy.pin (docs/seal.md, "TPM + PIN"): true, or absent (files before it, and secrets sealed
 * without a PIN: unchanged). true: want, the PCR policy, is followed by PolicyAuthValue.
 */
static int parse_pin(json_t *o, mb_sealed *s, uint8_t want[MB_POLICY_DIGEST_SIZE], mb_error *err)
{
	json_t *v = NULL;

	if (!(v = json_object_get(o, "pin")))
		return 0;
	if (!json_is_boolean(v) || !json_is_true(v))
		return set_error(err, -EBADMSG, "field \"policy.pin\" is not true (a secret sealed without a PIN "
				 "has no \"pin\")");
	s->pin = true;
	return mb_policy_auth_value_digest(want, want, err);
}

/*
 * policy: {"kind": "pcr", "digest"} over "pcrs", {"kind": "or", "digest", "branches":
 * [PCR state, ...]}, or {"kind": "authorize", "digest", "key"} (no "pcrs").
 */
static int parse_policy(json_t *root, mb_sealed *s, mb_error *err)
{
	json_t *o = json_doc_get(root, "policy", JSON_OBJECT), *v, *br;
	uint8_t want[MB_POLICY_DIGEST_SIZE];
	const char *kind;
	size_t i, n;
	int r;

	v = o ? json_doc_get(o, "kind", JSON_STRING) : NULL;
	kind = v ? json_string_value(v) : "";
	if (strcmp(kind, "pcr") != 0 && strcmp(kind, "or") != 0 && strcmp(kind, "authorize") != 0)
		return set_error(err, -EBADMSG, "field \"policy.kind\" is missing or not \"pcr\", \"or\" or \"authorize\"");
	r = json_doc_hex(o, "digest", "policy.digest", s->policy, MB_POLICY_DIGEST_SIZE, err);
	if (r < 0)
		return r;
	if (strcmp(kind, "authorize") == 0) {
		if ((json_object_get(o, "window") != NULL))
			return set_error(err, -EBADMSG, "field \"policy.window\" is only taken with an \"or\" policy");
		if ((json_object_get(o, "pin") != NULL))
			return set_error(err, -EBADMSG, "field \"policy.pin\" is not taken with an \"authorize\" policy");
		if ((json_object_get(root, "pcrs") != NULL))
			return set_error(err, -EBADMSG, "field \"pcrs\" is not taken with an \"authorize\" policy "
				       "(the signatures carry the PCR values)");
		s->authorized = true;
		r = parse_authority(json_doc_get(o, "key", JSON_OBJECT), s, err);
		if (r == 0)
			r = mb_policy_authorize_digest(s->auth_key_name, want, err);
		if (r < 0)
			return r;
		if (memcmp(want, s->policy, sizeof(want)) != 0)
			return set_error(err, -EBADMSG, "field \"policy.digest\" is not the PolicyAuthorize digest of "
				       "\"policy.key.name\"");
		return 0;
	}
	r = seal_json_pcr_state(json_doc_get(root, "pcrs", JSON_OBJECT), "pcrs", &s->pcrs, &s->mask, err);
	if (r < 0)
		return r;
	if (strcmp(kind, "or") != 0 && (json_object_get(o, "window") != NULL))
		return set_error(err, -EBADMSG, "field \"policy.window\" is only taken with an \"or\" policy");
	if (strcmp(kind, "pcr") == 0) {
		r = mb_policy_pcr_digest(NULL, &s->pcrs, s->mask, want, err);
		if (r < 0)
			return r;
	} else {
		json_t *win = NULL;
		bool has_window = ((win = json_object_get(o, "window")) != NULL);

		br = json_doc_get(o, "branches", JSON_ARRAY);
		n = br ? json_array_size(br) : 0;
		/* the window is one more branch of the PolicyOR */
		if (n < (has_window ? 1u : 2u) || n > MB_POLICY_OR_MAX - (has_window ? 1u : 0u))
			return set_error(err, -EBADMSG, "field \"policy.branches\" is not an array of %u to %u PCR states",
				       has_window ? 1u : 2u, MB_POLICY_OR_MAX - (has_window ? 1u : 0u));
		for (i = 0; i < n; i++) {
			char name[32];

			snprintf(name, sizeof(name), "policy.branches.%zu", i);
			r = seal_json_pcr_state(json_array_get(br, i), name, &s->branch[i], &s->branch_mask[i],
						err);
			if (r < 0)
				return r;
			r = mb_policy_pcr_digest(NULL, &s->branch[i], s->branch_mask[i], s->branch_digest[i], err);
			if (r < 0)
				return r;
		}
		if (has_window) {
			r = parse_window(win, s, n, err);
			if (r < 0)
				return r;
			n++;
		}
		s->n_branches = n;
		r = mb_policy_or_digest((const uint8_t (*)[MB_POLICY_DIGEST_SIZE]) s->branch_digest, n, want, err);
		if (r < 0)
			return r;
	}
	r = parse_pin(o, s, want, err);
	if (r < 0)
		return r;
	if (memcmp(want, s->policy, sizeof(want)) != 0)
		return set_error(err, -EBADMSG, "field \"policy.digest\" is not the %s digest of %s%s",
			       s->n_branches ? "PolicyOR" : "PolicyPCR", s->n_branches ? "\"policy.branches\"" : "\"pcrs\"",
			       s->pin ? " followed by PolicyAuthValue (\"policy.pin\")" : "");
	return 0;
}

MB_EXPORT int mb_sealed_parse(const char *text, size_t size, mb_sealed **ret, mb_error *err)
{
	json_t *root = NULL;
	int r;

	*ret = NULL;
	r = json_doc_open(text, size, MB_SEALED_MAX_FILE, "sealed file", "mboot-sealed", &root, err);
	if (r < 0)
		return r;
	r = sealed_from_object(root, ret, err);
	json_decref(root);
	return r;
}

int sealed_from_object(json_t *root, mb_sealed **ret, mb_error *err)
{
	json_t *o, *v;
	mb_sealed s = { 0 };
	uint8_t auth_policy[MB_POLICY_DIGEST_SIZE];
	int r;

	*ret = NULL;
	r = json_doc_check_kind(root, "mboot-sealed", err);
	if (r < 0)
		return r;
	s.version = 1;
	r = json_doc_b64(root, "public", MB_SEALED_MAX_BLOB, false, &s.pub, &s.pub_size, err);
	if (r == 0)
		r = json_doc_b64(root, "private", MB_SEALED_MAX_BLOB, false, &s.priv, &s.priv_size, err);
	if (r == 0)
		r = json_doc_b64(root, "eventlog", MB_SEALED_MAX_LOG, true, &s.eventlog, &s.eventlog_size, err);
	if (r == 0)
		r = mb_tpm_check_sealed_blobs(s.pub, s.pub_size, s.priv, s.priv_size, auth_policy, err);
	if (r < 0)
		goto fail;

	r = parse_policy(root, &s, err);
	if (r < 0)
		goto fail;
	/* else the TPM would refuse every unseal, with no word on why */
	if (memcmp(auth_policy, s.policy, sizeof(auth_policy)) != 0) {
		r = set_error(err, -EBADMSG, "field \"policy.digest\" is not the sealed object's authPolicy (in \"public\")");
		goto fail;
	}

	o = json_doc_get(root, "parent", JSON_OBJECT);
	if (!o) {
		r = set_error(err, -EBADMSG, "field \"parent\" is missing or not an object");
		goto fail;
	}
	if ((v = json_doc_get(o, "handle", JSON_STRING))) {
		const char *h = json_string_value(v);
		char *end;
		unsigned long x = strtoul(h, &end, 16);

		if (strncmp(h, "0x", 2) != 0 || *end || (x >> 24) != 0x81) {
			r = set_error(err, -EBADMSG, "field \"parent.handle\" is not a persistent handle (0x81xxxxxx)");
			goto fail;
		}
		s.parent_persistent = true;
		s.parent_handle = (uint32_t) x;
	} else if ((v = json_doc_get(o, "template", JSON_STRING))) {
		if (strcmp(json_string_value(v), "ecc-p256-srk") != 0) {
			r = set_error(err, -EBADMSG, "field \"parent.template\" is not \"ecc-p256-srk\"");
			goto fail;
		}
	} else {
		r = set_error(err, -EBADMSG, "field \"parent\" has neither \"handle\" nor \"template\"");
		goto fail;
	}
	*ret = malloc(sizeof(**ret));
	if (!*ret) {
		sealed_done(&s);
		return set_error(err, -ENOMEM, "out of memory");
	}
	**ret = s;
	return 0;
fail:
	sealed_done(&s);
	return r;
}

json_t *seal_json_pcr_state_obj(const mb_pcr_bank *b, uint32_t mask)
{
	const mb_digest_info *d = mb_digest_by_alg(b->alg);
	json_t *o = json_object(), *sel = json_array(), *vals = json_object();
	char hex[2 * MB_DIGEST_MAX + 1], key[8];
	unsigned p;
	int bad = 0;

	if (!o || !sel || !vals || !d) {
		json_decref(o);
		json_decref(sel);
		json_decref(vals);
		return NULL;
	}
	bad |= json_object_set_new(o, "bank", json_text(d->name));
	for (p = 0; p < MB_PCR_COUNT; p++) {
		if (!(mask & (1u << p)))
			continue;
		bad |= json_array_append_new(sel, json_integer((int) p));
		snprintf(key, sizeof(key), "%u", p);
		bad |= json_object_set_new(vals, key, json_text(hex_format(b->value[p], d->size, hex)));
	}
	bad |= json_object_set_new(o, "selection", sel);
	bad |= json_object_set_new(o, "values", vals);
	if (bad) { /* ENOMEM: nothing rather than a state without its values */
		json_decref(o);
		return NULL;
	}
	return o;
}

MB_EXPORT char *mb_sealed_to_json(const mb_sealed *s)
{
	json_build_mark mark = json_build_begin();
	json_t *root = sealed_to_object(s);

	return root ? json_doc_finish(root, mark) : NULL;
}

json_t *sealed_to_object(const mb_sealed *s)
{
	json_t *root = json_object(), *pol = json_object(),
		    *parent = json_object();
	char hex[2 * MB_DIGEST_MAX + 1];
	size_t i;
	int bad = 0;

	if (!root || !pol || !parent || (!s->authorized && !mb_digest_by_alg(s->pcrs.alg))) {
		json_decref(root);
		json_decref(pol);
		json_decref(parent);
		return NULL;
	}
	bad |= json_object_set_new(root, "version", json_integer(1));
	bad |= json_object_set_new(root, "kind", json_text("mboot-sealed"));
	bad |= json_object_set_new(root, "public", json_doc_b64_obj(s->pub, s->pub_size));
	bad |= json_object_set_new(root, "private", json_doc_b64_obj(s->priv, s->priv_size));
	if (!s->authorized)
		bad |= json_object_set_new(root, "pcrs", seal_json_pcr_state_obj(&s->pcrs, s->mask));
	bad |= json_object_set_new(pol, "kind",
			       json_text(s->authorized ? "authorize" : s->n_branches ? "or" : "pcr"));
	bad |= json_object_set_new(pol, "digest", json_text(hex_format(s->policy, MB_POLICY_DIGEST_SIZE, hex)));
	if (s->pin)
		bad |= json_object_set_new(pol, "pin", json_boolean(1));
	if (s->authorized) {
		json_t *key = json_object();

		bad |= json_object_set_new(key, "name",
				       json_text(hex_format(s->auth_key_name, MB_TPM_NAME_SIZE, hex)));
		bad |= json_object_set_new(key, "public", json_doc_b64_obj(s->auth_key, s->auth_key_size));
		bad |= json_object_set_new(pol, "key", key);
	}
	if (s->n_branches) {
		json_t *br = json_array();
		size_t n = s->n_branches - (s->window ? 1 : 0);

		for (i = 0; i < n; i++)
			bad |= json_array_append_new(br, seal_json_pcr_state_obj(&s->branch[i], s->branch_mask[i]));
		bad |= json_object_set_new(pol, "branches", br);
		if (s->window) {
			json_t *w = json_object();

			snprintf(hex, sizeof(hex), "0x%08x", s->window_index);
			bad |= json_object_set_new(w, "nv-index", json_text(hex));
			bad |= json_object_set_new(w, "counter", json_integer((int64_t) s->window_counter));
			bad |= json_object_set_new(w, "pcrs", seal_json_pcr_state_obj(&s->branch[n], s->branch_mask[n]));
			bad |= json_object_set_new(pol, "window", w);
		}
	}
	bad |= json_object_set_new(root, "policy", pol);
	if (s->parent_persistent) {
		snprintf(hex, sizeof(hex), "0x%08x", s->parent_handle);
		bad |= json_object_set_new(parent, "handle", json_text(hex));
	} else
		bad |= json_object_set_new(parent, "template", json_text("ecc-p256-srk"));
	bad |= json_object_set_new(root, "parent", parent);
	if (s->eventlog)
		bad |= json_object_set_new(root, "eventlog", json_doc_b64_obj(s->eventlog, s->eventlog_size));
	if (bad) { /* ENOMEM: no document rather than one missing a member */
		json_decref(root);
		return NULL;
	}
	return root;
}
