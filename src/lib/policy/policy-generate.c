/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A policy from a log known to be good: exact values for the firmware PCRs, event rules for
 * the rest (text rules where the text hashes to the digest, digest rules otherwise). */
#include <errno.h>

#include <mboot/policy.h>
#include "policy-build.h"
#include "shared/fail.h"

MB_EXPORT int mb_policy_generate_from_log(const mb_event_log *log, uint32_t pcrs, uint32_t firmware_pcrs,
					  char **ret_json, mb_error *err)
{
	json_build_mark mark = json_build_begin();
	json_t *jp, *root = policy_root_new("generated from a known-good event log: exact values for the "
						 "firmware PCRs, the events seen for the others",
						 "mboot policy generate --from-log", &jp);
	int rc;

	if (!root)
		return set_error(err, -ENOMEM, "out of memory");
	rc = policy_from_log(jp, log, pcrs, firmware_pcrs, NULL, NULL, err);
	if (rc >= 0) {
		*ret_json = policy_to_string(root, mark);
		rc = *ret_json ? 0 : set_error(err, -ENOMEM, "out of memory");
	}
	json_decref(root);
	return rc;
}
