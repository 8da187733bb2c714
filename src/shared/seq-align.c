/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "shared/seq-align.h"

/*
 * A gap: a's elements ra[0..na) against b's rb[0..nb). Pairable ones in order are changes;
 * otherwise the longer side gives first, so that a run of extra events on one side does not
 * pair the other side's with the wrong ones.
 */
static int flush_gap(const seq_align_ops *ops, void *ctx, const size_t *ra, size_t na, const size_t *rb, size_t nb)
{
	size_t i = 0, j = 0;
	int r;

	while (i < na || j < nb) {
		if (i < na && j < nb && ops->pairable(ctx, ra[i], rb[j])) {
			r = ops->emit(ctx, SEQ_CHANGED, ra[i], rb[j]);
			i++;
			j++;
		} else if (i < na && (j >= nb || na - i >= nb - j)) {
			r = ops->emit(ctx, SEQ_REMOVED, ra[i++], 0);
		} else {
			r = ops->emit(ctx, SEQ_ADDED, 0, rb[j++]);
		}
		if (r < 0)
			return r;
	}
	return 0;
}

int seq_align(size_t na_all, size_t nb_all, size_t max_cells, const seq_align_ops *ops, void *ctx)
{
	size_t pre = 0, suf = 0, na, nb, i, j, nra = 0, nrb = 0;
	uint32_t *lcs = NULL;
	size_t *ra = NULL, *rb = NULL;
	int r = 0;

	while (pre < na_all && pre < nb_all && ops->same(ctx, pre, pre))
		pre++;
	while (suf < na_all - pre && suf < nb_all - pre && ops->same(ctx, na_all - 1 - suf, nb_all - 1 - suf))
		suf++;
	/* The middle: a's pre..pre+na, b's pre..pre+nb. */
	na = na_all - pre - suf;
	nb = nb_all - pre - suf;
	if (!na && !nb)
		return 0;
	ra = malloc((na + 1) * sizeof(*ra));
	rb = malloc((nb + 1) * sizeof(*rb));
	if (!ra || !rb) {
		r = -ENOMEM;
		goto out;
	}
	if (na && nb && (na + 1) <= max_cells / (nb + 1)) {
		/* lcs[i][j]: the longest common subsequence of the middles from i and j on */
		lcs = calloc((na + 1) * (nb + 1), sizeof(*lcs));
		if (!lcs) {
			r = -ENOMEM;
			goto out;
		}
		for (i = na; i-- > 0;)
			for (j = nb; j-- > 0;) {
				uint32_t down = lcs[(i + 1) * (nb + 1) + j], right = lcs[i * (nb + 1) + j + 1];

				lcs[i * (nb + 1) + j] = ops->same(ctx, pre + i, pre + j) ? lcs[(i + 1) * (nb + 1) + j + 1] + 1 :
					down > right ? down : right;
			}
	}
	i = j = 0;
	while (i < na || j < nb) {
		if (lcs && i < na && j < nb && ops->same(ctx, pre + i, pre + j) &&
		    lcs[i * (nb + 1) + j] == lcs[(i + 1) * (nb + 1) + j + 1] + 1) {
			r = flush_gap(ops, ctx, ra, nra, rb, nrb);
			if (r < 0)
				goto out;
			nra = nrb = 0;
			i++;
			j++;
		} else if (i < na && (j >= nb || !lcs || lcs[(i + 1) * (nb + 1) + j] >= lcs[i * (nb + 1) + j + 1])) {
			ra[nra++] = pre + i++;
		} else {
			rb[nrb++] = pre + j++;
		}
	}
	r = flush_gap(ops, ctx, ra, nra, rb, nrb);
out:
	free(lcs);
	free(ra);
	free(rb);
	return r;
}
