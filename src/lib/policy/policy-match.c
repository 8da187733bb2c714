/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One PCRE2 match charged to a budget of steps: what bounds both loading a policy (its probes)
 * and checking a log against it (docs/policy.md, "Limits"). */
#include <errno.h>

#include "policy-internal.h"

/*
 * PCRE2 cannot say how many steps a match took, only stop it at a limit. So each match is
 * tried under rising limits and charged each limit it was given: the charge bounds the work,
 * the budget bounds the whole, and a plain pattern on plain text costs the first rung only.
 * The charge depends only on the pattern and the text, never on the clock: the same policy
 * and log spend the same on every machine.
 */
int policy_match_steps(const pcre2_code *re, pcre2_match_context *mctx, pcre2_match_data *md, const char *text,
		       size_t len, uint64_t *budget, policy_match *ret)
{
	static const uint32_t ladder[] = { POLICY_FIRST_RUNG, 1000, 10000, POLICY_MATCH_LIMIT };
	size_t i;

	for (i = 0; i < sizeof(ladder) / sizeof(ladder[0]); i++) {
		int rc;

		if (*budget < ladder[i]) {
			*budget = 0;
			*ret = POLICY_OVER_BUDGET;
			return 0;
		}
		*budget -= ladder[i];
		sym_pcre2_set_match_limit(mctx, ladder[i]);
		rc = sym_pcre2_match(re, (PCRE2_SPTR) text, len, 0, 0, md, mctx);
		if (rc >= 0) {
			*ret = POLICY_MATCHED;
			return 0;
		}
		if (rc == PCRE2_ERROR_NOMATCH) {
			*ret = POLICY_NO_MATCH;
			return 0;
		}
		if (rc == PCRE2_ERROR_NOMEMORY)
			return -ENOMEM;
		if (rc != PCRE2_ERROR_MATCHLIMIT)
			break; /* depth or heap limit: no higher rung helps */
	}
	*ret = POLICY_OVER_LIMIT;
	return 0;
}
