/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_POLICY_IMA_JSON_H
#define MB_POLICY_IMA_JSON_H
#include <mboot/policy.h>
#include "shared/json.h"

/* The IMA verdict as verify's document gives it (docs/verify.md, "IMA"): {"checked": true,
 * "ok", "entries", "allowed", "excluded", "unlisted", "signed", ["pcr10", "boot_aggregate"],
 * "violations"}. Built under the caller's json_build_mark. */
json_t *policy_ima_result_json(const mb_ima_policy_result *r);

#endif
