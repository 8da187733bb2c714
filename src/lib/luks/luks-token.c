/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The "mboot" LUKS2 token (docs/luks.md): its JSON, built and parsed. A token is
 * untrusted input (anyone who can write the disk's header can write one): strict JSON
 * through untrusted_json_parse, a cap on its size, every field checked, unknown keys in
 * the "mboot" object refused, and the sealed object checked as a sealed file is.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/digest.h>
#include <mboot/luks.h>
#include <mboot/seal.h>
#include "shared/fail.h"
#include "shared/hex.h"
#include "shared/json.h"
#include "luks-internal.h"
#include "luks-seal.h"
#include "shared/base64.h"
#include "shared/options.h"

#define TOKEN_VERSION 1
/* LUKS2 has at most 32 keyslots (LUKS2_KEYSLOTS_MAX). */
#define KEYSLOTS_MAX 32

struct mb_luks_token {
	int keyslot;
	char *sealed;              /* the sealed file's JSON text */
	size_t sealed_size;
	uint8_t *events;           /* the event summary ("events", decoded), or NULL */
	size_t events_size;
	luks_sealed_info info;
};

int luks_token_build(int keyslot, const char *sealed_json, const char *events, char **ret, mb_error *err)
{
	json_build_mark mark = json_build_begin();
	json_t *root = json_object(), *slots = json_array(), *mb = json_object();
	json_t *sealed = NULL;
	char slot[16];
	int r;

	*ret = NULL;
	if (!root || !slots || !mb) {
		r = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	r = untrusted_json_parse(sealed_json, strlen(sealed_json), 8, &sealed, err);
	if (r < 0)
		goto out;
	snprintf(slot, sizeof(slot), "%d", keyslot);
	json_object_set_new(root, "type", json_text(MB_LUKS_TOKEN_TYPE));
	json_array_append_new(slots, json_text(slot));
	json_object_set_new(root, "keyslots", slots);
	slots = NULL;
	json_object_set_new(mb, "version", json_integer(TOKEN_VERSION));
	json_object_set_new(mb, "sealed", sealed);
	if (events)
		json_object_set_new(mb, "events", json_text(events));
	json_object_set_new(root, "mboot", mb);
	mb = NULL;
	/* compact: the JSON area is small (12 KiB by default) */
	if (!(*ret = json_write_built(root, JSON_LAYOUT_COMPACT, mark)))
		r = set_error(err, -ENOMEM, "out of memory");
out:
	json_decref(root);
	json_decref(slots);
	json_decref(mb);
	return r;
}

static json_t *get_typed(json_t *o, const char *key, json_type type)
{
	json_t *v = NULL;

	if (!(v = json_object_get(o, key)) || json_typeof(v) != type)
		return NULL;
	return v;
}

/* "keyslots": exactly one keyslot, a decimal string "0" to "31" in LUKS2's spelling. */
static int parse_keyslots(json_t *root, int *ret, mb_error *err)
{
	json_t *a = get_typed(root, "keyslots", JSON_ARRAY), *s;
	const char *p;
	char *end;
	long n;

	if (!a || json_array_size(a) != 1)
		return set_error(err, -EBADMSG, "field \"keyslots\" is not an array of one keyslot");
	s = json_array_get(a, 0);
	if (!json_is_string(s))
		return set_error(err, -EBADMSG, "field \"keyslots\" holds a non-string");
	p = json_string_value(s);
	n = strtol(p, &end, 10);
	if (*p < '0' || *p > '9' || (p[0] == '0' && p[1]) || *end || n >= KEYSLOTS_MAX)
		return set_error(err, -EBADMSG, "field \"keyslots\": \"%.8s\" is not a keyslot (0-%d)", p,
				 KEYSLOTS_MAX - 1);
	*ret = (int) n;
	return 0;
}

/*
 * "events" (optional): the event summary, canonical base64; decoded here with a generous
 * cap so that the summary's own check can say how many events are too many.
 */
static int parse_events(json_t *mb, mb_luks_token *t, mb_error *err)
{
	json_t *v = NULL;
	int r;

	if (!(v = json_object_get(mb, "events")))
		return 0;
	if (!json_is_string(v))
		return set_error(err, -EBADMSG, "field \"mboot.events\" is not a string");
	r = base64_decode(json_string_value(v), (size_t) json_string_length(v), MB_LUKS_TOKEN_MAX,
			     &t->events, &t->events_size);
	if (r == -ENOMEM)
		return set_error(err, r, "out of memory");
	if (r < 0)
		return set_error(err, -EBADMSG, "field \"mboot.events\" is not valid base64");
	return 0;
}

MB_EXPORT int mb_luks_token_parse(const char *json, size_t size, mb_luks_token **ret, mb_error *err)
{
	json_t *root = NULL, *o, *mb, *sealed;
	mb_luks_token *t = NULL;
	int r;

	*ret = NULL;
	if (size > MB_LUKS_TOKEN_MAX)
		return set_error(err, -E2BIG, "larger than %u bytes", MB_LUKS_TOKEN_MAX);
	r = untrusted_json_parse(json, size, 8, &root, err);
	if (r < 0)
		return r;
	if (!json_is_object(root)) {
		r = set_error(err, -EBADMSG, "not a JSON object");
		goto out;
	}
	o = get_typed(root, "type", JSON_STRING);
	if (!o || strcmp(json_string_value(o), MB_LUKS_TOKEN_TYPE) != 0) {
		r = set_error(err, -EBADMSG, "field \"type\" is not \"" MB_LUKS_TOKEN_TYPE "\"");
		goto out;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		r = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	r = parse_keyslots(root, &t->keyslot, err);
	if (r < 0)
		goto out;
	mb = get_typed(root, "mboot", JSON_OBJECT);
	if (!mb) {
		r = set_error(err, -EBADMSG, "field \"mboot\" is missing or not an object");
		goto out;
	}
	/* unknown keys are refused: a field this version does not know might matter */
	json_object_each(mb, key, val) {
		(void) val;
		if (strcmp(key, "version") != 0 && strcmp(key, "sealed") != 0 && strcmp(key, "events") != 0) {
			r = set_error(err, -EBADMSG, "field \"mboot.%.32s\" is unknown", key);
			goto out;
		}
	}
	o = get_typed(mb, "version", JSON_INTEGER);
	if (!o || json_integer_value(o) != TOKEN_VERSION) {
		r = set_error(err, -EBADMSG, "field \"mboot.version\" is not %d (this mboot reads version %d)",
			      TOKEN_VERSION, TOKEN_VERSION);
		goto out;
	}
	sealed = get_typed(mb, "sealed", JSON_OBJECT);
	if (!sealed) {
		r = set_error(err, -EBADMSG, "field \"mboot.sealed\" is missing or not an object");
		goto out;
	}
	if (!(t->sealed = json_write(sealed, JSON_LAYOUT_COMPACT))) {
		r = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	t->sealed_size = strlen(t->sealed);
	r = parse_events(mb, t, err);
	if (r < 0)
		goto out;
	r = luks_sealed_check(t->sealed, t->sealed_size, t->events, t->events_size, &t->info, err);
	if (r < 0) {
		r = prefix_error(err, r, t->info.events_bad ? "field \"mboot.events\"" : "field \"mboot.sealed\"");
		goto out;
	}
	*ret = t;
	t = NULL;
out:
	json_decref(root);
	mb_luks_token_free(t);
	return r;
}

MB_EXPORT void mb_luks_token_free(mb_luks_token *t)
{
	if (!t)
		return;
	free(t->sealed);
	free(t->events);
	free(t);
}

MB_EXPORT int mb_luks_token_keyslot(const mb_luks_token *t)
{
	return t->keyslot;
}

MB_EXPORT const char *mb_luks_token_policy(const mb_luks_token *t)
{
	return t->info.policy;
}

MB_EXPORT bool mb_luks_token_pin(const mb_luks_token *t)
{
	return t->info.pin;
}

MB_EXPORT uint16_t mb_luks_token_bank(const mb_luks_token *t)
{
	return t->info.bank;
}

MB_EXPORT uint32_t mb_luks_token_pcrs(const mb_luks_token *t)
{
	return t->info.pcrs;
}

MB_EXPORT int mb_luks_token_events(const mb_luks_token *t, uint32_t *ret_pcrs)
{
	if (ret_pcrs)
		*ret_pcrs = t->info.has_events ? t->info.events_pcrs : 0;
	return t->info.has_events ? (int) t->info.n_events : -1;
}

/* A growing string; on ENOMEM it is freed and stays NULL. */
typedef struct text_buf {
	char *p;
	size_t len;
	bool failed;
} text_buf;

static void text_add(text_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void text_add(text_buf *b, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL, *n;
	int len;

	if (b->failed)
		return;
	va_start(ap, fmt);
	len = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (len < 0 || !(n = realloc(b->p, b->len + (size_t) len + 1))) {
		free(s);
		free(b->p);
		b->p = NULL;
		b->failed = true;
		return;
	}
	memcpy(n + b->len, s, (size_t) len + 1);
	b->p = n;
	b->len += (size_t) len;
	free(s);
}

static char *text_done(text_buf *b)
{
	if (!b->failed && !b->p)
		return strdup("");
	return b->p;
}

/* "0,2,4-7" */
static void add_pcr_list(text_buf *b, uint32_t mask)
{
	bool first = true;

	for (unsigned p = 0; p < 32; p++) {
		unsigned q = p;

		if (!(mask & (1u << p)))
			continue;
		while (q + 1 < 32 && (mask & (1u << (q + 1))))
			q++;
		if (q > p + 1)
			text_add(b, "%s%u-%u", first ? "" : ",", p, q);
		else if (q == p + 1)
			text_add(b, "%s%u,%u", first ? "" : ",", p, q);
		else
			text_add(b, "%s%u", first ? "" : ",", p);
		first = false;
		p = q;
	}
}

MB_EXPORT char *mb_luks_token_describe(const mb_luks_token *t)
{
	text_buf b = { 0 };
	char hex[2 * MB_TPM_NAME_SIZE + 1];

	text_add(&b, "\tmboot sealed key, token version %d\n", TOKEN_VERSION);
	text_add(&b, "\tkeyslot: %d\n", t->keyslot);
	if (strcmp(t->info.policy, "authorize") == 0) {
		text_add(&b, "\tpolicy: signed policies (TPM2_PolicyAuthorize)\n");
		text_add(&b, "\tsigning key: %s\n", hex_format(t->info.auth_key_name, MB_TPM_NAME_SIZE, hex));
	} else {
		const mb_digest_info *d = mb_digest_by_alg(t->info.bank);

		if (strcmp(t->info.policy, "or") == 0)
			text_add(&b, "\tpolicy: PCR values, %zu states (TPM2_PolicyOR, mboot reseal)\n",
				 t->info.n_branches);
		else
			text_add(&b, "\tpolicy: PCR values (TPM2_PolicyPCR)\n");
		if (t->info.pin)
			text_add(&b, "\tPIN: needed (TPM + PIN: TPM2_PolicyAuthValue)\n");
		text_add(&b, "\tPCRs: %s:", d ? d->name : "?");
		if (!t->info.pcrs)
			text_add(&b, "(none)");
		add_pcr_list(&b, t->info.pcrs);
		text_add(&b, "\n");
		if (t->info.has_events) {
			text_add(&b, "\tevents: %zu (PCRs ", t->info.n_events);
			if (!t->info.events_pcrs)
				text_add(&b, "none");
			add_pcr_list(&b, t->info.events_pcrs);
			text_add(&b, ")\n");
			if (t->info.pcrs & ~t->info.events_pcrs) {
				text_add(&b, "\tevents not kept (over %d): PCRs ", MB_EVENT_SUMMARY_MAX_EVENTS);
				add_pcr_list(&b, t->info.pcrs & ~t->info.events_pcrs);
				text_add(&b, "\n");
			}
		} else
			text_add(&b, "\tevents: not kept (a refusal names the PCRs only)\n");
	}
	return text_done(&b);
}

const uint8_t *luks_token_events(const mb_luks_token *t, size_t *ret_size)
{
	*ret_size = t->events_size;
	return t->events;
}

const char *luks_token_sealed(const mb_luks_token *t, size_t *ret_size)
{
	*ret_size = t->sealed_size;
	return t->sealed;
}

MB_EXPORT int mb_luks_token_unseal(mb_tpm *tpm, const mb_luks_token *t, const mb_unseal_options *opt, uint8_t *key,
				   size_t *key_size, mb_unseal_explanation **explanation, mb_error *err)
{
	mb_unseal_options o;
	int r = OPTIONS_TAKE(o, opt, err);

	if (r < 0) {
		*key_size = 0;
		*explanation = NULL;
		return r;
	}
	return luks_unseal_key(tpm, t->sealed, t->sealed_size, t->events, t->events_size, &o, key, key_size,
			       explanation, err);
}

MB_EXPORT char *mb_luks_explanation_text(const mb_unseal_explanation *e)
{
	text_buf b = { 0 };

	for (size_t i = 0; e && i < e->n_items; i++) {
		const mb_unseal_item *it = &e->items[i];
		const mb_digest_info *d;
		char h1[2 * MB_DIGEST_MAX + 1], h2[2 * MB_DIGEST_MAX + 1];

		switch (it->kind) {
		case MB_UNSEAL_NOTE:
			text_add(&b, "%s\n", it->text);
			break;
		case MB_UNSEAL_PCR:
			d = mb_digest_by_alg(it->alg);
			if (!d)
				break;
			hex_format(it->expected, d->size, h1);
			if (it->now_read)
				hex_format(it->now, d->size, h2);
			text_add(&b, "%s%sPCR %u (%s) differs: %s %s, now %s\n", it->signature ? it->signature : "",
				 it->signature ? ": " : "", it->pcr, d->name, it->signature ? "signed" : "sealed to", h1,
				 it->now_read ? h2 : "(not readable)");
			break;
		case MB_UNSEAL_EVENT:
			if (it->before && it->after)
				text_add(&b, "PCR %u: %s: %s → %s\n", it->pcr, it->change, it->before, it->after);
			else
				text_add(&b, "PCR %u: %s: %s\n", it->pcr, it->change,
					 it->before ? it->before : it->after ? it->after : "?");
			break;
		case MB_UNSEAL_OTHER_KEY:
			hex_format(it->key_name, MB_TPM_NAME_SIZE, h1);
			hex_format(it->sealed_key_name, MB_TPM_NAME_SIZE, h2);
			text_add(&b, "%s: signed by key %s, but the secret is sealed to key %s\n", it->signature, h1, h2);
			break;
		case MB_UNSEAL_ERROR:
			text_add(&b, "%s: %s\n", it->what, it->error.message);
			break;
		}
	}
	if (e && e->incomplete)
		text_add(&b, "(out of memory: the explanation is incomplete)\n");
	return text_done(&b);
}
