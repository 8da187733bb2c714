/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The policy's "ima" section (docs/policy.md, "IMA"): loaded into hash tables, so that an
 * allowlist of a whole distribution loads in a fraction of a second and each entry of an IMA
 * list is judged by one lookup. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "policy-ima.h"
#include "shared/fail.h"
#include "shared/hex.h"

/* A seeded 64-bit mix (the seed is random per policy: a hostile allowlist cannot choose paths
 * that all land in one slot). */
uint64_t ima_name_hash(uint64_t seed, const char *s, size_t len)
{
	uint64_t h = seed ^ (len * UINT64_C(0x9e3779b97f4a7c15));
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t w;

		memcpy(&w, s + i, 8);
		h = (h ^ w) * UINT64_C(0xff51afd7ed558ccd);
		h ^= h >> 32;
	}
	for (; i < len; i++)
		h = (h ^ (unsigned char) s[i]) * UINT64_C(0x100000001b3);
	h ^= h >> 33;
	h *= UINT64_C(0xc4ceb9fe1a85ec53);
	h ^= h >> 33;
	return h;
}

const ima_name *ima_table_find(const struct policy_ima *ima, const ima_table *t, const char *name, size_t len)
{
	uint64_t h;
	size_t i;

	if (!t->cap)
		return NULL;
	h = ima_name_hash(ima->seed, name, len);
	for (i = (size_t) h & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		uint32_t s = t->slots[i];
		const ima_name *e;

		if (!s)
			return NULL;
		e = &t->names[s - 1];
		if (e->hash == h && strncmp(e->name, name, len) == 0 && e->name[len] == '\0')
			return e;
	}
}

static int table_index(const struct policy_ima *ima, ima_table *t)
{
	size_t cap = 16, k;

	while (cap < 2 * t->n)
		cap <<= 1;
	t->slots = calloc(cap, sizeof(*t->slots));
	if (!t->slots)
		return -ENOMEM;
	t->cap = cap;
	for (k = 0; k < t->n; k++) {
		size_t i = (size_t) t->names[k].hash & (cap - 1);

		(void) ima;
		while (t->slots[i])
			i = (i + 1) & (cap - 1);
		t->slots[i] = (uint32_t) (k + 1);
	}
	return 0;
}

static const struct {
	const char *name;
	size_t size;
} ima_algs[] = {
	{ "md5", 16 }, { "sha1", 20 }, { "rmd160", 20 }, { "sha224", 28 }, { "sha256", 32 }, { "sha384", 48 },
	{ "sha512", 64 }, { "wp512", 64 }, { "sm3", 32 }, { "streebog256", 32 }, { "streebog512", 64 },
	{ "sha3-256", 32 }, { "sha3-384", 48 }, { "sha3-512", 64 },
};

bool ima_digest_parse(const char *s, ima_digest *d)
{
	const char *colon = strchr(s, ':');
	const char *hex = s;
	size_t hlen, i;

	memset(d, 0, sizeof(*d));
	if (colon) {
		size_t alen = (size_t) (colon - s);
		const mb_digest_info *info;

		if (alen == 0 || alen > IMA_ALG_NAME_MAX)
			return false;
		for (i = 0; i < alen; i++) {
			char ch = s[i];

			if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_'))
				return false;
			d->alg[i] = ch;
		}
		hex = colon + 1;
		hlen = strlen(hex);
		if (hlen == 0 || hlen % 2 || hlen / 2 > MB_DIGEST_MAX)
			return false;
		info = mb_digest_by_name(d->alg);
		/* IMA's names (the kernel's hash_algo_name) mboot may not know, with their sizes;
		 * other names: 16 to 64 bytes */
		for (i = 0; i < sizeof(ima_algs) / sizeof(ima_algs[0]); i++)
			if (strcmp(ima_algs[i].name, d->alg) == 0 && ima_algs[i].size != hlen / 2)
				return false;
		if ((info && info->size != hlen / 2) || hlen / 2 < 16)
			return false;
	} else {
		const char *name;

		hlen = strlen(hex);
		switch (hlen) {
		case 40: name = "sha1"; break;
		case 64: name = "sha256"; break;
		case 96: name = "sha384"; break;
		case 128: name = "sha512"; break;
		default: return false;
		}
		snprintf(d->alg, sizeof(d->alg), "%s", name);
	}
	d->size = (uint8_t) (hlen / 2);
	for (i = 0; i < hlen; i++)
		if (!isxdigit((unsigned char) hex[i]))
			return false;
	return hex_parse(hex, hlen, d->bytes, d->size) == 0;
}

/* {name: ["alg:hex", ...], ...} into t. */
static int parse_names(const load_ctx *c, struct policy_ima *ima, const char *field, json_t *o, ima_table *t)
{
	size_t n;

	if (!json_is_object(o))
		return policy_fail_field(c, field, field, "expected an object mapping each %s to its allowed digests",
					 strcmp(field, "ima.digests") == 0 ? "path" : "name");
	n = json_object_size(o);
	if (n > MB_POLICY_MAX_IMA_PATHS)
		return policy_fail_field(c, field, field, "more than %u entries", MB_POLICY_MAX_IMA_PATHS);
	t->names = calloc(n ? n : 1, sizeof(*t->names));
	if (!t->names)
		return set_error(c->err, -ENOMEM, "out of memory");
	json_object_each(o, key, arr) {
		ima_name *e = &t->names[t->n];
		size_t klen = strlen(key), i, m;

		if (klen == 0 || klen > MB_POLICY_MAX_IMA_PATH)
			return policy_fail_field(c, klen ? key : NULL, field, "a name of 1 to %u bytes, not %zu",
						 MB_POLICY_MAX_IMA_PATH, klen);
		if (!json_is_array(arr) || json_array_size(arr) == 0 ||
		    json_array_size(arr) > MB_POLICY_MAX_IMA_DIGESTS)
			return policy_fail_field(c, key, field, "\"%.200s\": expected an array of 1 to %u digests "
						 "(\"sha256:<hex>\" or hex)", key, MB_POLICY_MAX_IMA_DIGESTS);
		if (!(e->name = strdup(key)))
			return set_error(c->err, -ENOMEM, "out of memory");
		e->hash = ima_name_hash(ima->seed, key, klen);
		t->n++;
		m = json_array_size(arr);
		if (!(e->d = calloc(m, sizeof(*e->d))))
			return set_error(c->err, -ENOMEM, "out of memory");
		for (i = 0; i < m; i++) {
			json_t *v = json_array_get(arr, i);

			if (!json_is_string(v) || !ima_digest_parse(json_string_value(v), &e->d[e->n]))
				return policy_fail_field(c, json_is_string(v) ? json_string_value(v) : key, field,
							 "\"%.200s\"[%zu]: not a digest (\"sha256:<hex>\", or hex of "
							 "20, 32, 48 or 64 bytes)", key, i);
			e->n++;
		}
	}
	if (table_index(ima, t) < 0)
		return set_error(c->err, -ENOMEM, "out of memory");
	return 0;
}

static int parse_excludes(const load_ctx *c, mb_policy *p, struct policy_ima *ima, json_t *arr)
{
	size_t n, i;

	if (!json_is_array(arr))
		return policy_fail_field(c, "excludes", "ima.excludes", "expected an array of regular expressions");
	n = json_array_size(arr);
	if (n > MB_POLICY_MAX_IMA_EXCLUDES)
		return policy_fail_field(c, "excludes", "ima.excludes", "more than %u patterns", MB_POLICY_MAX_IMA_EXCLUDES);
	ima->excludes = calloc(n ? n : 1, sizeof(*ima->excludes));
	if (!ima->excludes)
		return set_error(c->err, -ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		json_t *v = json_array_get(arr, i);
		ima_exclude *x = &ima->excludes[i];
		const char *pat;
		char at[32];
		int r;

		if (!json_is_string(v))
			return policy_fail_field(c, "excludes", "ima.excludes", "[%zu]: expected a string", i);
		pat = json_string_value(v);
		if (strlen(pat) > MB_POLICY_MAX_REGEX)
			return policy_fail_field(c, "excludes", "ima.excludes", "[%zu]: over %u bytes", i, MB_POLICY_MAX_REGEX);
		ima->n_excludes++;
		if (!(x->pattern = strdup(pat)))
			return set_error(c->err, -ENOMEM, "out of memory");
		snprintf(at, sizeof(at), "[%zu]: ", i);
		if ((r = policy_compile_regex(c, pat, "ima.excludes", at, &x->re)) < 0)
			return r;
		x->literal = policy_pattern_literal(pat, &x->literal_len);
		if (!x->literal) {
			policy_match m;
			int rc = policy_probe_regex(c, p, x->re, pat, &m);

			if (rc < 0)
				return set_error(c->err, rc, "out of memory");
			if (m == POLICY_OVER_LIMIT)
				return policy_fail_field(c, pat, "ima.excludes", "[%zu]: regular expression backtracks "
							 "catastrophically; simplify it", i);
			if (m == POLICY_OVER_BUDGET)
				return policy_fail_field(c, pat, "ima.excludes", "[%zu]: regular expression cannot be judged "
							 "within the load budget (%u PCRE2 steps or %u ms of CPU for all "
							 "the policy's regular expressions)", i, MB_POLICY_LOAD_BUDGET,
							 MB_POLICY_LOAD_CPU_MS);
		}
	}
	return 0;
}

int policy_ima_parse(const load_ctx *c, mb_policy *p, json_t *o)
{
	static const char *const keys[] = { "digests", "excludes", "ima-buf", "unlisted", "keys", "description", NULL };
	struct policy_ima *ima;
	const char *bad;
	json_t *v;
	int rc;

	if (!json_is_object(o))
		return policy_fail_field(c, "ima", "ima", "expected an object with \"digests\", \"excludes\", "
					 "\"ima-buf\", \"unlisted\"");
	if (!policy_only_keys(o, keys, &bad))
		return policy_fail_field(c, bad, "ima", "unknown key \"%s\"", bad);
	if (!(ima = p->ima = calloc(1, sizeof(*ima))))
		return set_error(c->err, -ENOMEM, "out of memory");
	if (getrandom(&ima->seed, sizeof(ima->seed), 0) != (ssize_t) sizeof(ima->seed))
		ima->seed = (uint64_t) (uintptr_t) ima ^ UINT64_C(0x5851f42d4c957f2d);
	if (((v = json_object_get(o, "description")) != NULL) && !json_is_string(v))
		return policy_fail_field(c, "description", "ima.description", "must be a string");
	if (((v = json_object_get(o, "unlisted")) != NULL)) {
		if (!json_is_string(v) || (strcmp(json_string_value(v), "violation") != 0 &&
					   strcmp(json_string_value(v), "ignore") != 0))
			return policy_fail_field(c, "unlisted", "ima.unlisted", "\"violation\" (the default) or \"ignore\"");
		ima->unlisted_ignore = strcmp(json_string_value(v), "ignore") == 0;
	}
	if ((v = json_object_get(o, "digests")) != NULL && (rc = parse_names(c, ima, "ima.digests", v, &ima->files)) < 0)
		return rc;
	if ((v = json_object_get(o, "ima-buf")) != NULL && (rc = parse_names(c, ima, "ima.ima-buf", v, &ima->bufs)) < 0)
		return rc;
	if ((v = json_object_get(o, "excludes")) != NULL && (rc = parse_excludes(c, p, ima, v)) < 0)
		return rc;
	if ((v = json_object_get(o, "keys")) != NULL && (rc = policy_ima_parse_keys(c, ima, v)) < 0)
		return rc;
	return 0;
}

static void table_free(ima_table *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		free(t->names[i].name);
		free(t->names[i].d);
	}
	free(t->names);
	free(t->slots);
}

void policy_ima_free(struct policy_ima *ima)
{
	size_t i;

	if (!ima)
		return;
	table_free(&ima->files);
	table_free(&ima->bufs);
	for (i = 0; i < ima->n_excludes; i++) {
		free(ima->excludes[i].pattern);
		free(ima->excludes[i].literal);
		sym_pcre2_code_free(ima->excludes[i].re);
	}
	free(ima->excludes);
	policy_ima_free_keys(ima);
	free(ima);
}

MB_EXPORT bool mb_policy_has_ima(const mb_policy *p)
{
	return p && p->ima;
}
