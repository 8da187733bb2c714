/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_LIB_REPLAY_PCR_VALUES_H
#define MB_LIB_REPLAY_PCR_VALUES_H

/*
 * The layout of mb_pcr_values, for the library only: the public header keeps it opaque so
 * that MB_MAX_BANKS is not part of the ABI. Code outside src/lib uses
 * the mb_pcr_values_* accessors.
 */
#include <mboot/replay.h>

struct mb_pcr_values {
	size_t n_banks;
	mb_pcr_bank banks[MB_MAX_BANKS];
	/* What the last replay into these values found: mb_replay_info's lists point here. */
	uint32_t incomplete[MB_MAX_BANKS]; /* by bank, like banks[] */
	uint16_t unknown_algs[MB_MAX_BANKS];
};

/* The bank of alg, or NULL when v has none. */
mb_pcr_bank *pcrv_bank(mb_pcr_values *v, uint16_t alg);
const mb_pcr_bank *pcrv_bank_const(const mb_pcr_values *v, uint16_t alg);

#endif
