/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * EFI applications (PCR 4) replaced by --efi, and the Secure Boot and MOK variable events
 * (PCR 7, 14) of efivar.c, in the walk over today's log.
 */
#include <string.h>

#include <mboot/digest.h>
#include "lib/predict/predict-internal.h"

/* A PCR 4 EFI application: replaced by an --efi whose old digest it has, else carried over.
 * *replaced says which. */
int pred_walk_efi(predict_ctx *c, mb_log_writer *w, const mb_event *ev, bool *replaced, uint32_t *efi_used)
{
	const mb_predict_input *in = c->in;
	size_t e;

	*replaced = false;
	for (e = 0; e < in->boot.n_efi; e++) {
		const mb_efi_binary *r = &in->boot.efi[e];
		file_digests fd = { .have = true };
		size_t a;
		uint32_t j;

		if (!r->old_digest)
			continue; /* replaces nothing */
		for (a = 0; a < r->n; a++) {
			const mb_event_digest *d = mb_event_digest_for(ev, r->algs[a]);

			if (d && memcmp(d->bytes, r->old_digest[a], d->size) == 0)
				break;
		}
		if (a == r->n)
			continue;
		for (j = 0; j < ev->n_digests; j++) {
			int b = pred_bank_index(c, ev->digests[j].alg);

			for (a = 0; a < r->n && r->algs[a] != ev->digests[j].alg; a++)
				;
			if (b < 0)
				continue;
			if (a == r->n) {
				pred_note(c, 4, true, "no new %s digest for %s", mb_digest_by_alg(ev->digests[j].alg) ?
					  mb_digest_by_alg(ev->digests[j].alg)->name : "?",
					  r->description ? r->description : "an EFI application");
				memcpy(fd.d[b], ev->digests[j].bytes, ev->digests[j].size);
			} else {
				memcpy(fd.d[b], r->digest[a], ev->digests[j].size);
			}
		}
		pred_note(c, 4, false, "%s", r->description ? r->description : "an EFI application");
		*efi_used |= 1u << e;
		*replaced = true;
		c->efi_applied = true;
		return pred_write_event(c, w, ev, &fd, NULL, 0, NULL, 0);
	}
	return mb_log_writer_add_event(w, ev);
}
/* A Secure Boot or MOK variable event (lib/predict/efivar.c): rewritten (*done), or carried
 * over by the caller, its PCR marked unpredictable when the new variables make it unknown. */
int pred_walk_efivar(predict_ctx *c, mb_log_writer *w, const mb_event *ev, bool *done)
{
	efivar_action a;
	int rc = efivar_event(&c->efivars, ev, &a);

	if (rc == 0 && a.unpredictable)
		pred_note(c, ev->pcr, true, "%s", a.unpredictable);
	else if (rc == 0 && a.rewrite) {
		pred_note(c, ev->pcr, false, "%s", a.changed ? a.changed : "an EFI variable");
		rc = pred_write_event(c, w, ev, NULL, a.hashed, a.hashed_size, a.data, a.data_size);
		*done = rc == 0;
	}
	efivar_action_done(&a);
	return rc;
}
