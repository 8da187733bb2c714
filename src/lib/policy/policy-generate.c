/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A policy from a log known to be good: exact values for the firmware PCRs, event rules for
 * the rest (text rules where the text hashes to the digest, digest rules otherwise). */
#include <errno.h>
#include <stdlib.h>

#include <mboot/policy.h>
#include "lib/replay/pcr-values.h"
#include "policy-build.h"
#include "shared/fail.h"

MB_EXPORT int mb_policy_generate_from_log(const mb_event_log *log, uint32_t pcrs, uint32_t firmware_pcrs,
					  char **ret_json, mb_error *err)
{
	json_object *root = json_object_new_object(), *jp = json_object_new_object();
	mb_pcr_values *v = malloc(sizeof(*v));
	uint32_t pcr;
	size_t b;
	int rc;

	if (!root || !jp || !v) {
		json_object_put(jp);
		rc = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	json_object_object_add(root, "version", json_object_new_int(1));
	json_object_object_add(root, "description",
			       json_object_new_string("generated from a known-good event log: exact values for the firmware "
						      "PCRs, the events seen for the others"));
	json_object_object_add(root, "generator", json_object_new_string("mboot policy generate --from-log"));
	json_object_object_add(root, "pcrs", jp);
	rc = mb_replay_log(log, SIZE_MAX, v, NULL, err);
	if (rc < 0)
		goto out;
	for (pcr = 0; pcr < MB_PCR_COUNT; pcr++) {
		bool touched = false;

		if (!(pcrs & (1u << pcr)))
			continue;
		for (b = 0; b < v->n_banks; b++)
			touched |= !!(v->banks[b].present & (1u << pcr));
		if (!touched)
			continue;
		if (firmware_pcrs & (1u << pcr)) {
			policy_add_values(jp, v, pcr);
			continue;
		}
		rc = policy_rules_from_log(policy_pcr_entry(jp, pcr, "rules"), log, pcr, NULL, NULL, true);
		if (rc < 0) {
			rc = set_error(err, rc, "out of memory");
			goto out;
		}
	}
	*ret_json = policy_to_string(root);
	rc = *ret_json ? 0 : set_error(err, -ENOMEM, "out of memory");
out:
	free(v);
	json_object_put(root);
	return rc;
}
