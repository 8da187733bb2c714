/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Adding a firmware release to a policy: the values a known-good machine's log replays to
 * after a firmware update become one more firmware set (docs/policy.md, "Firmware releases"). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/replay/pcr-values.h"
#include "policy-build.h"
#include "policy-internal.h"
#include "shared/fail.h"
#include "shared/hex.h"
#include "shared/json.h"

/* {"sha256": "<hex>", ...}: the log's value of pcr in every bank it replays. */
static json_t *replayed_values(const mb_pcr_values *v, uint32_t pcr)
{
	json_t *o = json_object();
	size_t b;

	for (b = 0; o && b < v->n_banks; b++) {
		char hex[2 * MB_DIGEST_MAX + 1];

		if (v->banks[b].present & (1u << pcr))
			json_object_set_new(o, mb_digest_by_alg(v->banks[b].alg)->name,
					       json_text(hex_format(v->banks[b].value[pcr], v->banks[b].size, hex)));
	}
	if (o && json_object_size(o) == 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* Whether the replayed values equal one PCR's values: every bank both have agrees, and one does. */
static bool same_values(const mb_pcr_values *v, uint32_t pcr, const policy_digest *d, size_t n)
{
	bool common = false;
	size_t i;

	for (i = 0; i < n; i++) {
		const mb_pcr_bank *b = pcrv_bank_const(v, d[i].alg);

		if (!b || !(b->present & (1u << pcr)))
			continue;
		if (memcmp(b->value[pcr], d[i].bytes, d[i].size) != 0)
			return false;
		common = true;
	}
	return common;
}

/* The index of the set (the version-1 values count as set 0) the log's values already are, or -1. */
static long duplicate_set(const mb_policy *p, const mb_pcr_values *v, uint32_t pcrs)
{
	size_t s, k;
	uint32_t pcr;

	if (!p->n_fw_sets) {
		for (pcr = 0; pcr < MB_PCR_COUNT; pcr++)
			if ((pcrs & (1u << pcr)) && !same_values(v, pcr, p->pcr[pcr].values, p->pcr[pcr].n_values))
				return -1;
		return 0;
	}
	for (s = 0; s < p->n_fw_sets; s++) {
		for (k = 0; k < p->fw_sets[s].n; k++)
			if (!same_values(v, p->fw_sets[s].v[k].pcr, p->fw_sets[s].v[k].values, p->fw_sets[s].v[k].n_values))
				break;
		if (k == p->fw_sets[s].n)
			return (long) s;
	}
	return -1;
}

static int add_set(json_t *firmware, const char *name, json_t *pcrs)
{
	json_t *set = json_object();

	if (!set || !pcrs) {
		json_decref(set);
		json_decref(pcrs);
		return -ENOMEM;
	}
	json_object_set_new(set, "name", json_text(name));
	json_object_set_new(set, "pcrs", pcrs);
	json_array_append_new(firmware, set);
	return 0;
}

MB_EXPORT int mb_policy_add_firmware(const char *text, size_t size, const mb_event_log *log, uint32_t pcrs,
				     const char *name, char **ret_json, mb_error *err)
{
	json_build_mark mark = json_build_begin();
	json_t *root = NULL, *v, *jpcrs, *firmware = NULL, *set_pcrs = NULL;
	mb_pcr_values *replayed = NULL;
	mb_policy *p = NULL, *check = NULL;
	char default_name[32], *out = NULL;
	uint32_t have = 0, pcr;
	long dup;
	size_t s;
	int rc;

	rc = untrusted_json_parse(text, size, 16, &root, err);
	if (rc < 0)
		goto out;
	/* PCR values signed for PolicyAuthorize: the signature covers them, so new values need a new
	 * signature from the key's owner, which is not something to patch into a file. */
	if (json_is_object(root) && ((v = json_object_get(root, "kind")) != NULL) &&
	    json_is_string(v) && strcmp(json_string_value(v), "mboot-policy-signature") == 0) {
		rc = set_error(err, -EBADMSG, "this is a signed policy (mboot policy sign): its signature covers its PCR "
			       "values, so values of a new firmware release need a new signature: sign them with "
			       "'mboot policy sign' instead");
		goto out;
	}
	/* Only a policy that loads as verify would load it: unknown keys, limits and all. */
	rc = mb_policy_parse(text, size, &p, err);
	if (rc < 0)
		goto out;
	if (p->n_fw_sets)
		have = p->fw_pcrs;
	else
		for (pcr = 0; pcr < MB_PCR_COUNT; pcr++)
			have |= p->pcr[pcr].by_values ? 1u << pcr : 0;
	if (!have) {
		rc = set_error(err, -EBADMSG, "the policy has no firmware PCR values to add a release to "
			       "(generate it with 'mboot policy generate --from-log')");
		goto out;
	}
	if (pcrs && p->n_fw_sets && pcrs != have) {
		rc = set_error(err, -EINVAL, "the policy's firmware sets give other PCRs than those asked for: a new "
			       "set gives the same PCRs as the others");
		goto out;
	}
	if (pcrs & ~have) {
		for (pcr = 0; !(pcrs & ~have & (1u << pcr)); pcr++)
			;
		rc = set_error(err, -EINVAL, "the policy has no values for PCR %u to add a release's value to", pcr);
		goto out;
	}
	if (pcrs)
		have = pcrs;
	if (p->n_fw_sets >= MB_POLICY_MAX_FIRMWARE_SETS) {
		rc = set_error(err, -E2BIG, "the policy has %u firmware sets already, the most a policy may have",
			       MB_POLICY_MAX_FIRMWARE_SETS);
		goto out;
	}

	replayed = malloc(sizeof(*replayed));
	if (!replayed) {
		rc = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	rc = mb_replay_log(log, SIZE_MAX, replayed, NULL, err);
	if (rc < 0)
		goto out;
	dup = duplicate_set(p, replayed, have);
	if (dup >= 0) {
		rc = set_error(err, -EEXIST, "the log's firmware values are those of the policy's %s%s%s already",
			       p->n_fw_sets ? "set \"" : "values", p->n_fw_sets ? p->fw_sets[dup].name : "",
			       p->n_fw_sets ? "\"" : "");
		goto out;
	}
	snprintf(default_name, sizeof(default_name), "firmware-%zu", (p->n_fw_sets ? p->n_fw_sets : 1) + 1);
	if (!name)
		name = default_name;
	for (s = 0; s < p->n_fw_sets; s++)
		if (strcmp(p->fw_sets[s].name, name) == 0) {
			rc = set_error(err, -EEXIST, "the policy has a firmware set \"%s\" already; give another --name", name);
			goto out;
		}
	if (!p->n_fw_sets && strcmp(name, "firmware-1") == 0) {
		rc = set_error(err, -EEXIST, "\"firmware-1\" is the name of the policy's values as they are; give "
			       "another --name");
		goto out;
	}

	set_pcrs = json_object();
	if (!set_pcrs) {
		rc = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (pcr = 0; pcr < MB_PCR_COUNT; pcr++) {
		json_t *vals;
		char key[4];

		if (!(have & (1u << pcr)))
			continue;
		vals = replayed_values(replayed, pcr);
		if (!vals) {
			rc = set_error(err, -EBADMSG, "the log has no event for PCR %u: it cannot be a firmware release "
				       "of this policy, which gives PCR %u", pcr, pcr);
			goto out;
		}
		snprintf(key, sizeof(key), "%u", pcr);
		json_object_set_new(set_pcrs, key, vals);
	}

	jpcrs = json_object_get(root, "pcrs");
	if (!p->n_fw_sets) {
		/* Version 1: the policy's values become the first set; the file becomes version 2. */
		json_t *first = json_object();

		firmware = json_array();
		if (!first || !firmware) {
			json_decref(first);
			json_decref(firmware);
			rc = set_error(err, -ENOMEM, "out of memory");
			goto out;
		}
		for (pcr = 0; pcr < MB_PCR_COUNT; pcr++) {
			json_t *entry, *vals;
			char key[4];

			if (!(have & (1u << pcr)))
				continue;
			snprintf(key, sizeof(key), "%u", pcr);
			entry = json_object_get(jpcrs, key);
			vals = json_object_get(entry, "values");
			json_object_set_new(first, key, json_incref(vals));
			json_object_del(jpcrs, key);
		}
		rc = add_set(firmware, "firmware-1", first);
		if (rc == 0) {
			json_object_set_new(root, "version", json_integer(2));
			json_object_set_new(root, "firmware", firmware);
		} else {
			json_decref(firmware);
		}
	} else {
		firmware = json_object_get(root, "firmware");
	}
	if (rc == 0) {
		rc = add_set(firmware, name, set_pcrs);
		set_pcrs = NULL;
	}
	if (rc < 0) {
		rc = set_error(err, rc, "out of memory");
		goto out;
	}
	out = policy_to_string(root, mark);
	if (!out) {
		rc = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	/* What is written must load: a name the loader refuses, say, is refused here. */
	rc = mb_policy_parse(out, strlen(out), &check, err);
	if (rc < 0) {
		free(out);
		goto out;
	}
	*ret_json = out;
out:
	json_decref(set_pcrs);
	json_decref(root);
	mb_policy_free(check);
	mb_policy_free(p);
	free(replayed);
	return rc;
}
