/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * EFI applications (PCR 4) replaced by --efi, and the Secure Boot and MOK variable events
 * (PCR 7, 14) of efivar.c, in the walk over today's log.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/digest.h>
#include "lib/predict/predict-internal.h"
#include "shared/fail.h"

/* One image's GRUB modules; *is_grub false for an image that is not GRUB. buf keeps the bytes
 * the modules point into. */
static int read_grub_image(const char *path, uint8_t **buf, mb_grub_image *g, bool *is_grub, mb_error *err)
{
	mb_pe_info *pe = NULL;
	size_t size = 0;
	int rc = mb_pe_read_file(path, buf, &size, err);

	if (rc >= 0)
		rc = mb_pe_parse(*buf, size, 0, &pe, err);
	if (rc >= 0) {
		rc = mb_grub_image_parse(pe, *buf, size, g, err);
		*is_grub = rc >= 0;
		if (rc == -ENOENT)
			rc = 0;
	}
	mb_pe_info_free(pe);
	return rc < 0 ? prefix_error(err, rc, path) : 0;
}

/* A module's text for a message: at most 60 bytes of it ("" when the image has none). */
static int text_len(size_t n)
{
	return (int) (n > 60 ? 60 : n);
}

/* An --efi that replaces GRUB (or puts GRUB where another loader was): GRUB's own commands
 * (PCR 8) and the files they read (PCR 9) are today's only when the new image has the same
 * prefix, built-in config and memdisk; else the reason why they are not, in c->grub_why[e]. */
int pred_plan_efi_grub(predict_ctx *c, mb_error *err)
{
	const mb_boot_artifacts *b = c->in->boot;
	int rc = 0;

	for (size_t e = 0; e < b->n_efi && e < MAX_CONFIGS && rc >= 0; e++) {
		const mb_efi_binary *r = &b->efi[e];
		uint8_t *old_buf = NULL, *new_buf = NULL;
		mb_grub_image og, ng;
		bool old_grub = false, new_grub = false;
		const char *what;

		if (!r->file || !r->old_file || !r->old_digest)
			continue;
		rc = read_grub_image(r->old_file, &old_buf, &og, &old_grub, err);
		if (rc >= 0)
			rc = read_grub_image(r->file, &new_buf, &ng, &new_grub, err);
		if (rc >= 0 && (old_grub || new_grub)) {
			const char *name = r->description ? r->description : r->file;

			if (!old_grub || !new_grub) {
				rc = asprintf(&c->grub_why[e], new_grub ? "%s is a GRUB image in place of another loader: what it "
					      "measures is not in today's log" : "%s replaces GRUB with another loader: GRUB's "
					      "commands and files are not in the next boot", name);
			} else if ((what = mb_grub_image_difference(&og, &ng)) && strcmp(what, "prefix") == 0) {
				rc = asprintf(&c->grub_why[e], "the new GRUB image %s has another prefix than today's ('%.*s', was "
					      "'%.*s'): it runs other commands and may read other files before /boot's", name,
					      text_len(ng.prefix_size), ng.prefix ? (const char *) ng.prefix : "",
					      text_len(og.prefix_size), og.prefix ? (const char *) og.prefix : "");
			} else if (what) {
				rc = asprintf(&c->grub_why[e], "the new GRUB image %s has another %s than today's: it runs other "
					      "commands and may read other files before /boot's", name, what);
			}
			if (rc < 0) {
				c->grub_why[e] = NULL;
				rc = set_error(err, -ENOMEM, "out of memory");
			} else {
				rc = 0;
			}
		}
		free(old_buf);
		free(new_buf);
	}
	return rc;
}

/* A PCR 4 EFI application: replaced by an --efi whose old digest it has, else carried over.
 * *replaced says which. */
int pred_walk_efi(predict_ctx *c, mb_log_writer *w, const mb_event *ev, bool *replaced, uint32_t *efi_used)
{
	const mb_predict_input *in = c->in;
	size_t e;

	*replaced = false;
	for (e = 0; e < in->boot->n_efi; e++) {
		const mb_efi_binary *r = &in->boot->efi[e];
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
		if (e < MAX_CONFIGS && c->grub_why[e]) {
			pred_note(c, 8, true, "%s", c->grub_why[e]);
			pred_note(c, 9, true, "%s", c->grub_why[e]);
		}
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
