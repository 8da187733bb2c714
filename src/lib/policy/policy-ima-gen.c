/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An "ima" section from a known-good IMA list and/or Keylime's runtime policy (docs/policy.md,
 * "IMA"). Keylime's file is untrusted input: read by the JSON reader, every field checked. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy-build.h"
#include "policy-ima.h"
#include "shared/fail.h"
#include "shared/hex.h"

/* Add digest text d to o[name] (an array made on first use) unless it is there. */
static int add_digest(json_t *o, const char *name, const char *d, mb_error *err)
{
	json_t *arr = json_object_get(o, name);
	size_t i;

	if (strlen(name) == 0 || strlen(name) > MB_POLICY_MAX_IMA_PATH)
		return set_error(err, -EBADMSG, "a name of %zu bytes (1 to %u)", strlen(name), MB_POLICY_MAX_IMA_PATH);
	if (!arr) {
		if (json_object_size(o) >= MB_POLICY_MAX_IMA_PATHS)
			return set_error(err, -E2BIG, "more than %u names", MB_POLICY_MAX_IMA_PATHS);
		arr = json_array();
		if (!arr || json_object_set_new(o, name, arr) < 0)
			return set_error(err, -ENOMEM, "out of memory");
	}
	for (i = 0; i < json_array_size(arr); i++)
		if (strcmp(json_string_value(json_array_get(arr, i)), d) == 0)
			return 0;
	if (json_array_size(arr) >= MB_POLICY_MAX_IMA_DIGESTS)
		return set_error(err, -E2BIG, "\"%.200s\": more than %u digests", name, MB_POLICY_MAX_IMA_DIGESTS);
	if (json_array_append_new(arr, json_string(d)) < 0)
		return set_error(err, -ENOMEM, "out of memory");
	return 0;
}

static int from_log(json_t *files, json_t *bufs, const mb_ima_log *log, mb_error *err)
{
	size_t i;

	for (i = 0; i < mb_ima_log_count(log); i++) {
		const mb_ima_entry *e = mb_ima_log_entry(log, i);
		char d[IMA_ALG_NAME_MAX + 2 + 2 * MB_DIGEST_MAX + 1];
		int rc;

		if (e->check == MB_IMA_CHECK_BAD)
			return set_error_at(err, -EBADMSG, e->offset, "entry %zu (%s): its template hash is not its "
					    "fields' hash: not a known-good list", i, e->path ? e->path : "no path");
		/* a measurement violation, a template without path or digest: nothing to allow */
		if (e->check != MB_IMA_CHECK_OK || !e->path || !e->digest || !e->digest_algo ||
		    e->digest_size > MB_DIGEST_MAX || strlen(e->digest_algo) > IMA_ALG_NAME_MAX)
			continue;
		if (i == 0 && strcmp(e->path, "boot_aggregate") == 0)
			continue;
		snprintf(d, sizeof(d), "%s:", e->digest_algo);
		hex_format(e->digest, e->digest_size, d + strlen(d));
		rc = add_digest(e->template_kind == MB_IMA_TEMPLATE_IMA_BUF ? bufs : files, e->path, d, err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Keylime's {name: [hex, ...]} maps ("digests", "keyrings", "ima-buf"). */
static int keylime_map(json_t *out, const char *field, json_t *o, mb_error *err)
{
	if (!json_is_object(o))
		return set_error(err, -EBADMSG, "Keylime policy: \"%s\" must be an object of arrays", field);
	json_object_each(o, name, arr) {
		size_t i;

		if (!json_is_array(arr))
			return set_error(err, -EBADMSG, "Keylime policy: \"%s\".\"%.200s\" must be an array", field, name);
		for (i = 0; i < json_array_size(arr); i++) {
			json_t *v = json_array_get(arr, i);
			ima_digest d;
			char text[IMA_ALG_NAME_MAX + 2 + 2 * MB_DIGEST_MAX + 1];
			int rc;

			if (!json_is_string(v) || !ima_digest_parse(json_string_value(v), &d))
				return set_error(err, -EBADMSG, "Keylime policy: \"%s\".\"%.200s\"[%zu]: not a hex digest "
						 "of 20, 32, 48 or 64 bytes", field, name, i);
			snprintf(text, sizeof(text), "%s:", d.alg);
			hex_format(d.bytes, d.size, text + strlen(text));
			rc = add_digest(out, name, text, err);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

static int from_keylime(json_t *files, json_t *bufs, json_t *excludes, const char *text, size_t size, mb_error *err)
{
	static const char *const keys[] = { "meta", "release", "digests", "excludes", "keyrings", "ima", "ima-buf",
					    "verification-keys", NULL };
	json_t *root = NULL, *v;
	const char *bad;
	int rc;

	if (size > MB_POLICY_MAX_SIZE * 4u)
		return set_error(err, -E2BIG, "Keylime policy over %u bytes", MB_POLICY_MAX_SIZE * 4u);
	rc = untrusted_json_parse(text, size, 8, &root, err);
	if (rc < 0)
		return rc;
	if (!json_is_object(root)) {
		rc = set_error(err, -EBADMSG, "Keylime policy: a JSON object");
		goto out;
	}
	if (!policy_only_keys(root, keys, &bad)) {
		rc = set_error(err, -EBADMSG, "Keylime policy: unknown key \"%.100s\" (a runtime policy has \"meta\", "
			       "\"release\", \"digests\", \"excludes\", \"keyrings\", \"ima\", \"ima-buf\", "
			       "\"verification-keys\")", bad);
		goto out;
	}
	if ((v = json_object_get(root, "meta")) && !json_is_object(v)) {
		rc = set_error(err, -EBADMSG, "Keylime policy: \"meta\" must be an object");
		goto out;
	}
	if ((v = json_object_get(root, "digests")) && (rc = keylime_map(files, "digests", v, err)) < 0)
		goto out;
	if ((v = json_object_get(root, "keyrings")) && (rc = keylime_map(bufs, "keyrings", v, err)) < 0)
		goto out;
	if ((v = json_object_get(root, "ima-buf")) && (rc = keylime_map(bufs, "ima-buf", v, err)) < 0)
		goto out;
	if ((v = json_object_get(root, "excludes"))) {
		size_t i;

		if (!json_is_array(v)) {
			rc = set_error(err, -EBADMSG, "Keylime policy: \"excludes\" must be an array of regular expressions");
			goto out;
		}
		for (i = 0; i < json_array_size(v); i++) {
			json_t *x = json_array_get(v, i);
			char *pat;

			if (!json_is_string(x) || strlen(json_string_value(x)) > MB_POLICY_MAX_REGEX) {
				rc = set_error(err, -EBADMSG, "Keylime policy: \"excludes\"[%zu]: a string of at most %u "
					       "bytes", i, MB_POLICY_MAX_REGEX);
				goto out;
			}
			if (json_array_size(excludes) >= MB_POLICY_MAX_IMA_EXCLUDES) {
				rc = set_error(err, -E2BIG, "Keylime policy: more than %u excludes", MB_POLICY_MAX_IMA_EXCLUDES);
				goto out;
			}
			/* Python's re.match anchors at the start only: mboot's patterns match whole paths */
			if (asprintf(&pat, "(?:%s)[\\s\\S]*", json_string_value(x)) < 0) {
				rc = set_error(err, -ENOMEM, "out of memory");
				goto out;
			}
			json_array_append_new(excludes, json_string(pat));
			free(pat);
		}
	}
	rc = 0;
out:
	json_decref(root);
	return rc;
}

MB_EXPORT int mb_policy_generate_ima(const char *base, size_t base_size, const mb_ima_log *log, const char *keylime,
				     size_t keylime_size, char **ret_json, mb_error *err)
{
	json_build_mark mark = json_build_begin();
	json_t *root = NULL, *ima = json_object(), *files = json_object(), *bufs = json_object(),
	       *excludes = json_array(), *pcrs;
	int rc;

	if (!ret_json || (!log && !keylime))
		return set_error(err, -EINVAL, "needs an IMA list or a Keylime policy");
	if (!ima || !files || !bufs || !excludes) {
		rc = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	if (base) {
		rc = untrusted_json_parse(base, base_size, 16, &root, err);
		if (rc < 0)
			goto out;
		if (!json_is_object(root) || json_object_get(root, "ima")) {
			rc = set_error(err, -EBADMSG, "the policy to add an \"ima\" section to is not a policy without one");
			goto out;
		}
	} else if (!(root = policy_root_new("generated: what may run after the boot (the \"ima\" section); "
					    "it governs no PCR of the boot", "mboot policy generate --from-ima-log", &pcrs))) {
		rc = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	if (log && (rc = from_log(files, bufs, log, err)) < 0)
		goto out;
	if (keylime && (rc = from_keylime(files, bufs, excludes, keylime, keylime_size, err)) < 0)
		goto out;
	json_object_set(ima, "digests", files);
	if (json_array_size(excludes))
		json_object_set(ima, "excludes", excludes);
	if (json_object_size(bufs))
		json_object_set(ima, "ima-buf", bufs);
	json_object_set_new(ima, "unlisted", json_string("violation"));
	json_object_set(root, "ima", ima);
	*ret_json = policy_to_string(root, mark);
	rc = *ret_json ? 0 : set_error(err, -ENOMEM, "out of memory");
out:
	json_decref(root);
	json_decref(ima);
	json_decref(files);
	json_decref(bufs);
	json_decref(excludes);
	return rc;
}
