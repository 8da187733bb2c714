/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The opaque mb_sealed and mb_seal_secret, without a TPM. Sealed files made by mboot on a
 * swtpm (fuzz/corpus/sealed: PolicyPCR, PolicyOR, PolicyAuthorize, a kept log, SHA-1, no
 * PCRs) are parsed and every accessor is checked against the file as json-c and OpenSSL
 * read it (base64 with EVP_DecodeBlock, hex with OPENSSL_hexstr2buf, the PolicyPCR digest
 * recomputed with SHA-256 from TPM 2.0 Part 3 §23.7, the authPolicy at its Part 2 §12.2.4
 * offset in TPM2B_PUBLIC); then the file must come back byte for byte from
 * mb_sealed_to_json, and hostile variants are refused naming their field.
 * mb_seal_secret's refusals happen before any TPM command, so they are checked here too.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "shared/json.h"
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include <mboot/mboot.h>
#include "shared/fileio.h"

/* TCG Algorithm Registry ids, written out here rather than taken from mboot's table. */
#define TPM_ALG_SHA1 0x0004
#define TPM_ALG_SHA256 0x000b

static char *read_corpus(const char *name, size_t *size)
{
	const char *root = getenv("MB_SOURCE_ROOT");
	char path[1024];
	uint8_t *buf = NULL;
	mb_error err = { 0 };

	assert_non_null(root);
	snprintf(path, sizeof(path), "%s/fuzz/corpus/sealed/%s", root, name);
	if (file_read(path, 1u << 20, &buf, size, &err) < 0)
		fail_msg("%s: %s", path, err.message);
	return (char *) buf;
}

static json_t *field(json_t *o, const char *key)
{
	json_t *v = NULL;

	return o && ((v = json_object_get(o, key)) != NULL) ? v : NULL;
}

/* Base64 as OpenSSL decodes it (EVP_DecodeBlock counts the padding as zero bytes). */
static uint8_t *b64(json_t *v, size_t *n)
{
	const char *s = json_string_value(v);
	size_t len = strlen(s);
	uint8_t *out = malloc(len / 4 * 3 + 1);
	int got;

	assert_non_null(out);
	got = EVP_DecodeBlock(out, (const unsigned char *) s, (int) len);
	assert_true(got >= 0);
	*n = (size_t) got - (len >= 1 && s[len - 1] == '=') - (len >= 2 && s[len - 2] == '=');
	return out;
}

static void assert_hex(const uint8_t *got, json_t *v, size_t size)
{
	long n = 0;
	unsigned char *want = OPENSSL_hexstr2buf(json_string_value(v), &n);

	assert_non_null(want);
	assert_int_equal(n, size);
	assert_memory_equal(got, want, size);
	OPENSSL_free(want);
}

static uint32_t selection_mask(json_t *state)
{
	json_t *sel = field(state, "selection");
	uint32_t mask = 0;

	for (size_t i = 0; i < json_array_size(sel); i++)
		mask |= 1u << (int) json_integer_value(json_array_get(sel, i));
	return mask;
}

/* A PCR state of the file against the accessors' bank and mask. */
static void assert_state(const mb_pcr_bank *b, uint32_t mask, json_t *state)
{
	const char *bank = json_string_value(field(state, "bank"));
	json_t *vals = field(state, "values");
	size_t size = strcmp(bank, "sha1") == 0 ? 20 : 32;

	assert_non_null(b);
	assert_int_equal(b->alg, strcmp(bank, "sha1") == 0 ? TPM_ALG_SHA1 : TPM_ALG_SHA256);
	assert_int_equal(b->size, size);
	assert_int_equal(mask, selection_mask(state));
	assert_int_equal(b->present & mask, mask);
	json_object_each(vals, key, val)
		assert_hex(b->value[atoi(key)], val, size);
}

/* TPM 2.0 Part 3 §23.7, by hand: SHA-256(0^32 || TPM_CC_PolicyPCR || TPML_PCR_SELECTION || SHA-256(values)). */
static void policy_pcr_by_hand(const mb_pcr_bank *b, uint32_t mask, uint8_t out[32])
{
	uint8_t buf[32 + 4 + 10 + 32] = { 0 }, *p = buf + 32, values[24 * 64];
	size_t nv = 0;

	for (unsigned i = 0; i < 24; i++)
		if (mask & (1u << i)) {
			memcpy(values + nv, b->value[i], b->size);
			nv += b->size;
		}
	memcpy(p, "\x00\x00\x01\x7f", 4);
	p += 4;
	memcpy(p, "\x00\x00\x00\x01", 4); /* count */
	p += 4;
	*p++ = (uint8_t) (b->alg >> 8);
	*p++ = (uint8_t) b->alg;
	*p++ = 3;
	*p++ = (uint8_t) mask;
	*p++ = (uint8_t) (mask >> 8);
	*p++ = (uint8_t) (mask >> 16);
	SHA256(values, nv, p);
	SHA256(buf, sizeof(buf), out);
}

static void assert_bytes(const uint8_t *got, size_t got_size, json_t *v)
{
	size_t n;
	uint8_t *want = b64(v, &n);

	assert_non_null(got);
	assert_int_equal(got_size, n);
	assert_memory_equal(got, want, n);
	free(want);
}

/* Every accessor of s against the file text it was parsed from. */
static void assert_matches_file(const mb_sealed *s, const char *text)
{
	json_t *root = json_loads(text, JSON_DECODE_ANY, NULL), *pol, *kind, *br, *key;
	const uint8_t *p;
	size_t n;
	uint32_t handle = 1;

	assert_non_null(root);
	pol = field(root, "policy");
	kind = field(pol, "kind");
	assert_int_equal(mb_sealed_version(s), 1);
	assert_hex(mb_sealed_policy_digest(s), field(pol, "digest"), 32);
	p = mb_sealed_private(s, &n);
	assert_bytes(p, n, field(root, "private"));
	p = mb_sealed_public(s, &n);
	assert_bytes(p, n, field(root, "public"));
	/* TPM2B_PUBLIC: size, type, nameAlg, objectAttributes, then authPolicy (size 32 and the digest) */
	assert_true(n > 44);
	assert_int_equal(p[10] << 8 | p[11], 32);
	assert_memory_equal(p + 12, mb_sealed_policy_digest(s), 32);

	if (field(root, "eventlog")) {
		p = mb_sealed_eventlog(s, &n);
		assert_bytes(p, n, field(root, "eventlog"));
	} else {
		n = 1;
		assert_null(mb_sealed_eventlog(s, &n));
		assert_int_equal(n, 0);
	}
	if (field(field(root, "parent"), "handle")) {
		assert_true(mb_sealed_parent_persistent(s, &handle));
		assert_int_equal(handle, strtoul(json_string_value(field(field(root, "parent"), "handle")), NULL, 16));
	} else {
		assert_false(mb_sealed_parent_persistent(s, &handle));
		assert_int_equal(handle, 0);
	}
	assert_false(mb_sealed_parent_fallback(s));

	if (strcmp(json_string_value(kind), "authorize") == 0) {
		key = field(pol, "key");
		assert_int_equal(mb_sealed_policy_kind(s), MB_SEAL_POLICY_AUTHORIZE);
		assert_null(mb_sealed_pcrs(s));
		assert_int_equal(mb_sealed_bank(s), 0);
		assert_int_equal(mb_sealed_mask(s), 0);
		assert_int_equal(mb_sealed_n_branches(s), 0);
		p = mb_sealed_auth_key(s, &n);
		assert_bytes(p, n, field(key, "public"));
		assert_hex(mb_sealed_auth_key_name(s), field(key, "name"), MB_TPM_NAME_SIZE);
	} else {
		uint8_t want[32];

		assert_null(mb_sealed_auth_key(s, &n));
		assert_int_equal(n, 0);
		assert_null(mb_sealed_auth_key_name(s));
		assert_state(mb_sealed_pcrs(s), mb_sealed_mask(s), field(root, "pcrs"));
		assert_int_equal(mb_sealed_bank(s), mb_sealed_pcrs(s)->alg);
		br = field(pol, "branches");
		if (strcmp(json_string_value(kind), "pcr") == 0) {
			assert_int_equal(mb_sealed_policy_kind(s), MB_SEAL_POLICY_PCR);
			assert_int_equal(mb_sealed_n_branches(s), 0);
			policy_pcr_by_hand(mb_sealed_pcrs(s), mb_sealed_mask(s), want);
			assert_memory_equal(mb_sealed_policy_digest(s), want, 32);
		} else {
			json_t *win = field(pol, "window");
			size_t n_br = json_array_size(br);
			uint32_t index = 1;
			uint64_t counter = 1;

			assert_int_equal(mb_sealed_policy_kind(s), MB_SEAL_POLICY_OR);
			/* the window is the last branch of the PolicyOR, kept apart in the file */
			assert_int_equal(mb_sealed_n_branches(s), n_br + (win ? 1 : 0));
			for (size_t i = 0; i < n_br; i++)
				assert_state(mb_sealed_branch(s, i), mb_sealed_branch_mask(s, i),
					     json_array_get(br, i));
			assert_int_equal(mb_sealed_window(s, &index, &counter), win != NULL);
			if (win) {
				assert_int_equal(index, strtoul(json_string_value(field(win, "nv-index")), NULL, 16));
				assert_int_equal(counter, json_integer_value(field(win, "counter")));
				assert_state(mb_sealed_branch(s, n_br), mb_sealed_branch_mask(s, n_br), field(win, "pcrs"));
				assert_int_equal(mb_sealed_branch_mask(s, n_br), mb_sealed_mask(s) & ~0xfu);
			} else {
				assert_int_equal(index, 0);
				assert_int_equal(counter, 0);
			}
		}
		assert_null(mb_sealed_branch(s, mb_sealed_n_branches(s)));
		assert_int_equal(mb_sealed_branch_mask(s, mb_sealed_n_branches(s)), 0);
	}
	json_decref(root);
}

static void test_corpus_accessors_and_round_trip(void **state)
{
	static const char *const files[] = { "pcr-0-7.json", "policy-or.json", "authorize.json",
					     "with-log.json", "sha1-all.json", "no-pcrs.json", "window.json" };

	(void) state;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		size_t size;
		char *text = read_corpus(files[i], &size), *json;
		mb_sealed *s = NULL, *again = NULL;
		mb_error err = { 0 };

		if (mb_sealed_parse(text, size, &s, &err) < 0)
			fail_msg("%s: %s", files[i], err.message);
		assert_matches_file(s, text);
		/* the file as mboot wrote it, byte for byte */
		json = mb_sealed_to_json(s);
		assert_non_null(json);
		assert_int_equal(strlen(json), size);
		assert_memory_equal(json, text, size);
		assert_int_equal(mb_sealed_parse(json, strlen(json), &again, &err), 0);
		assert_matches_file(again, text);
		free(json);
		mb_sealed_free(again);
		mb_sealed_free(s);
		free(text);
	}
}

/* The corpus file name, changed by edit (a tree), parsed: the result, and the message. */
static int parse_variant(const char *name, void (*edit)(json_t *), mb_sealed **ret, mb_error *err)
{
	size_t size;
	char *text = read_corpus(name, &size);
	json_t *root = json_loads(text, JSON_DECODE_ANY, NULL);
	char *v;
	int r;

	assert_non_null(root);
	edit(root);
	v = json_dumps(root, JSON_INDENT(2));
	assert_non_null(v);
	*ret = (mb_sealed *) 1; /* must be set to NULL on failure */
	r = mb_sealed_parse(v, strlen(v), ret, err);
	json_decref(root);
	free(v);
	free(text);
	return r;
}

static void set_str(json_t *o, const char *key, const char *value)
{
	json_object_set_new(o, key, json_string_nocheck(value));
}

static void flip_digest(json_t *root)
{
	char d[65];

	snprintf(d, sizeof(d), "%s", json_string_value(field(field(root, "policy"), "digest")));
	d[10] = d[10] == '0' ? '1' : '0';
	set_str(field(root, "policy"), "digest", d);
}

static void change_pcr0(json_t *root)
{
	set_str(field(field(root, "pcrs"), "values"), "0",
		"0000000000000000000000000000000000000000000000000000000000000000");
}

static void drop_branch(json_t *root)
{
	json_array_remove(field(field(root, "policy"), "branches"), 1);
}

static void change_key_name(json_t *root)
{
	char d[2 * MB_TPM_NAME_SIZE + 1];
	json_t *key = field(field(root, "policy"), "key");

	snprintf(d, sizeof(d), "%s", json_string_value(field(key, "name")));
	d[20] = d[20] == 'a' ? 'b' : 'a';
	set_str(key, "name", d);
}

static void bad_eventlog(json_t *root)
{
	set_str(root, "eventlog", "not*base64");
}

static void bad_handle(json_t *root)
{
	json_t *parent = json_object();

	set_str(parent, "handle", "0x80000001");
	json_object_set_new(root, "parent", parent);
}

static void persistent_parent(json_t *root)
{
	json_t *parent = json_object();

	set_str(parent, "handle", "0x81000001");
	json_object_set_new(root, "parent", parent);
}

static void graft_pcrs(json_t *root)
{
	/* a "pcrs" next to an authorize policy: values that would mean nothing */
	json_object_set_new(root, "pcrs", json_object());
}

static json_t *window_of(json_t *root)
{
	return field(field(root, "policy"), "window");
}

static void window_counter_moved(json_t *root)
{
	json_object_set_new(window_of(root), "counter", json_integer(2));
}

static void window_counter_negative(json_t *root)
{
	json_object_set_new(window_of(root), "counter", json_integer(-1));
}

static void window_counter_string(json_t *root)
{
	set_str(window_of(root), "counter", "1");
}

static void window_counter_huge(json_t *root)
{
	/* over INT64_MAX: json-c clamps it, which must not pass for a value */
	json_object_set_new(window_of(root), "counter", json_integer(UINT64_MAX));
}

static void window_index_platform(json_t *root)
{
	set_str(window_of(root), "nv-index", "0x01400000");
}

static void window_index_short(json_t *root)
{
	set_str(window_of(root), "nv-index", "0x1800b00");
}

static void window_index_junk(json_t *root)
{
	set_str(window_of(root), "nv-index", "0x01800b0g");
}

static void window_with_pcr0(json_t *root)
{
	/* the window's PCR state made to hold a firmware PCR: the window would check what it cannot know */
	json_t *pcrs = field(window_of(root), "pcrs");

	json_array_append_new(field(pcrs, "selection"), json_integer(0));
	set_str(field(pcrs, "values"), "0", "0000000000000000000000000000000000000000000000000000000000000000");
}

static void window_no_pcrs(json_t *root)
{
	json_object_del(window_of(root), "pcrs");
}

static void window_not_object(json_t *root)
{
	json_object_set_new(field(root, "policy"), "window", json_array());
}

static void window_no_branch(json_t *root)
{
	json_array_remove(field(field(root, "policy"), "branches"), 0);
}

static void window_on_pcr_kind(json_t *root)
{
	json_t *w = json_object();

	set_str(w, "nv-index", "0x01800b00");
	json_object_set_new(field(root, "policy"), "window", w);
}

static void window_full(json_t *root)
{
	/* 8 branches and a window: 9 digests, more than a PolicyOR takes */
	json_t *br = field(field(root, "policy"), "branches");

	for (int i = 0; i < 7; i++)
		json_array_append_new(br, json_incref(json_array_get(br, 0)));
}

static void test_hostile_variants(void **state)
{
	static const struct {
		const char *file;
		void (*edit)(json_t *);
		int code;
		const char *words;
	} cases[] = {
		{ "pcr-0-7.json", flip_digest, -EBADMSG, "\"policy.digest\" is not the PolicyPCR digest" },
		{ "pcr-0-7.json", change_pcr0, -EBADMSG, "\"policy.digest\" is not the PolicyPCR digest of \"pcrs\"" },
		{ "policy-or.json", drop_branch, -EBADMSG, "\"policy.branches\" is not an array of 2 to 8" },
		{ "policy-or.json", flip_digest, -EBADMSG, "PolicyOR digest" },
		{ "authorize.json", change_key_name, -EBADMSG, "\"policy.key.name\" is not the name" },
		{ "authorize.json", graft_pcrs, -EBADMSG, "\"pcrs\" is not taken with an \"authorize\" policy" },
		{ "with-log.json", bad_eventlog, -EBADMSG, "\"eventlog\" is not valid base64" },
		{ "pcr-0-7.json", bad_handle, -EBADMSG, "\"parent.handle\" is not a persistent handle" },
		{ "window.json", flip_digest, -EBADMSG, "PolicyOR digest" },
		{ "window.json", window_counter_moved, -EBADMSG, "PolicyOR digest" },
		{ "window.json", window_counter_negative, -EBADMSG, "\"policy.window.counter\" is not an integer" },
		{ "window.json", window_counter_string, -EBADMSG, "\"policy.window.counter\" is not an integer" },
		{ "window.json", window_counter_huge, -EBADMSG, "\"policy.window.counter\" is not an integer" },
		{ "window.json", window_index_platform, -EBADMSG, "\"policy.window.nv-index\" is not an NV index" },
		{ "window.json", window_index_short, -EBADMSG, "\"policy.window.nv-index\" is not an NV index" },
		{ "window.json", window_index_junk, -EBADMSG, "\"policy.window.nv-index\" is not an NV index" },
		{ "window.json", window_with_pcr0, -EBADMSG, "\"policy.window.pcrs\" is not of the sealed bank and PCRs" },
		{ "window.json", window_no_pcrs, -EBADMSG, "\"policy.window.pcrs\" is missing" },
		{ "window.json", window_not_object, -EBADMSG, "\"policy.window\" is not an object" },
		{ "window.json", window_no_branch, -EBADMSG, "\"policy.branches\" is not an array of 1 to 7" },
		{ "window.json", window_full, -EBADMSG, "\"policy.branches\" is not an array of 1 to 7" },
		{ "pcr-0-7.json", window_on_pcr_kind, -EBADMSG, "\"policy.window\" is only taken with an \"or\" policy" },
		{ "authorize.json", window_on_pcr_kind, -EBADMSG, "\"policy.window\" is only taken with an \"or\" policy" },
	};
	mb_sealed *s;
	mb_error err;
	uint32_t handle = 0;
	char *json;

	(void) state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r;

		memset(&err, 0, sizeof(err));
		r = parse_variant(cases[i].file, cases[i].edit, &s, &err);

		if (r != cases[i].code || !strstr(err.message, cases[i].words))
			fail_msg("case %zu (%s): %d \"%s\", wanted \"%s\"", i, cases[i].file, r, err.message, cases[i].words);
		assert_null(s);
	}
	/* a persistent parent parses, and is written back as it was */
	memset(&err, 0, sizeof(err));
	assert_int_equal(parse_variant("pcr-0-7.json", persistent_parent, &s, &err), 0);
	assert_true(mb_sealed_parent_persistent(s, &handle));
	assert_int_equal(handle, 0x81000001);
	json = mb_sealed_to_json(s);
	assert_non_null(json);
	assert_non_null(strstr(json, "\"parent\": {\n    \"handle\": \"0x81000001\"\n  }"));
	free(json);
	mb_sealed_free(s);
	mb_sealed_free(NULL);
}

/*
 * A revocable signature (fuzz/corpus/signature/rsassa-counter.json, made by mboot policy sign
 * --counter-value 3): it parses and comes back byte for byte; its counter cannot be edited,
 * dropped or malformed without the parser naming it (the approved policy binds it).
 */
static void test_revocable_signature(void **state)
{
	static const struct {
		const char *file;
		const char *words;
	} hostile[] = {
		{ "hostile-counter-edited.json", "\"policy\" is not the PolicyPCR + PolicyNV digest" },
		{ "hostile-counter-dropped.json", "\"policy\" is not the PolicyPCR digest of \"pcrs\"" },
		{ "hostile-counter-index.json", "\"counter.nv-index\" is not an NV index of the owner range" },
		{ "hostile-counter-array.json", "\"counter\" is not an object" },
	};
	mb_policy_signature sig;
	mb_error err = { 0 };
	size_t size;
	char *text = read_corpus("../signature/rsassa-counter.json", &size), *json;

	(void) state;
	if (mb_policy_signature_parse(text, size, &sig, &err) < 0)
		fail_msg("rsassa-counter.json: %s", err.message);
	assert_true(sig.counter);
	assert_int_equal(sig.counter_index, MB_NV_REVOCATION_DEFAULT);
	assert_int_equal(sig.counter_value, 3);
	json = mb_policy_signature_to_json(&sig);
	assert_non_null(json);
	assert_int_equal(strlen(json), size);
	assert_memory_equal(json, text, size);
	free(json);
	mb_policy_signature_done(&sig);
	free(text);
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		char name[64];

		snprintf(name, sizeof(name), "../signature/%s", hostile[i].file);
		text = read_corpus(name, &size);
		memset(&err, 0, sizeof(err));
		if (mb_policy_signature_parse(text, size, &sig, &err) != -EBADMSG || !strstr(err.message, hostile[i].words))
			fail_msg("%s: \"%s\", wanted \"%s\"", hostile[i].file, err.message, hostile[i].words);
		assert_false(sig.counter);
		free(text);
	}
}

/* mb_seal_secret refuses what does not fit before it sends the TPM anything (no TPM here). */
static void test_seal_secret_refusals(void **state)
{
	static const uint8_t secret[MB_SEAL_MAX_SECRET + 1] = { 1 }, key[4] = { 0 };
	mb_pcr_bank sha1 = { .alg = TPM_ALG_SHA1, .size = 20, .present = 1 };
	static const struct {
		size_t secret_size;
		mb_seal_options opt;
		int code;
		const char *words;
	} cases[] = {
		{ 0, { .pcr_mask = 1 }, -EINVAL, "a secret of 1 to 128 bytes" },
		{ MB_SEAL_MAX_SECRET + 1, { .pcr_mask = 1 }, -EINVAL, "not 129" },
		{ 32, { .pcr_mask = 1, .authority_public = key, .authority_public_size = 4 }, -EINVAL, "takes no PCRs" },
		{ 32, { .bank = 0x7777, .pcr_mask = 1 }, -EINVAL, "no known PCR bank 0x7777" },
		{ 32, { .pcr_mask = 1u << 24 }, -EINVAL, "selects PCRs over 23" },
		{ 32, { .pcr_mask = 1, .parent = (mb_seal_parent) 7 }, -EINVAL, "no such parent choice" },
		{ 32, { .pcr_mask = 1, .parent = MB_SEAL_PARENT_PERSISTENT, .parent_handle = 0x80000001 }, -EINVAL,
		  "0x80000001 is not a persistent handle" },
		{ 32, { .pcr_mask = 1, .eventlog = key, .eventlog_size = MB_SEALED_MAX_LOG + 1 }, -E2BIG,
		  "event log to keep is larger" },
		/* everything fits: only then is the missing TPM noticed */
		{ 32, { .pcr_mask = 1 }, -EINVAL, "no TPM" },
	};
	mb_seal_options other_bank = { .size = sizeof(mb_seal_options), .pcr_mask = 1, .values = &sha1 };
	mb_sealed *s;
	mb_error err;

	(void) state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		mb_seal_options o = cases[i].opt;
		int r;

		o.size = sizeof(o);
		memset(&err, 0, sizeof(err));
		s = (mb_sealed *) 1;
		r = mb_seal_secret(NULL, secret, cases[i].secret_size, &o, &s, &err);

		if (r != cases[i].code || !strstr(err.message, cases[i].words))
			fail_msg("case %zu: %d \"%s\", wanted \"%s\"", i, r, err.message, cases[i].words);
		assert_null(s);
	}
	/* values of SHA-1 for a (default) SHA-256 seal */
	memset(&err, 0, sizeof(err));
	assert_int_equal(mb_seal_secret(NULL, secret, 32, &other_bank, &s, &err), -EINVAL);
	assert_non_null(strstr(err.message, "another bank than sha256"));
	assert_null(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus_accessors_and_round_trip),
		cmocka_unit_test(test_hostile_variants),
		cmocka_unit_test(test_revocable_signature),
		cmocka_unit_test(test_seal_secret_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
