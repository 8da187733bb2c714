/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Predicting the next boot's PCRs (MEASUREMENTS.md §2 and §4): GRUB measures the files it reads
 * into PCR 9 (H(file)), each command and the kernel command line into PCR 8 (H(text after the
 * label), src/lib/grub); the Linux EFI stub tags the initrd in PCR 9;
 * firmware or shim measure EFI applications into PCR 4 (Authenticode). Every other event of
 * today's log is carried over as it is.
 *
 * What a change moves but mboot does not compute is marked unpredictable rather than carried
 * over: the kernel shim or the firmware measured into PCR 4 after GRUB's linux command, the
 * EFI stub's LoadOptions tag (PCR 9), systemd-boot's and systemd-stub's UTF-16 command line
 * (PCR 12, or 8 in older systemd-boot), a UKI's sections (PCR 11) unless the new UKI is given:
 * then its sections replace today's PCR 11 events (mb_uki_section_digests) and its Authenticode
 * digest the application event systemd-boot had the firmware measure before them, and its
 * .cmdline the command line events today's UKI explains (predict-uki-cmdline.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/digest.h>
#include <mboot/events.h>
#include <mboot/predict.h>
#include "lib/events/event-data.h"
#include "lib/replay/pcr-values.h"
#include "lib/predict/predict-internal.h"
#include "shared/fail.h"
#include "shared/options.h"

#define LINUX_INITRD_TAG 0x8F3B22ECu
#define LINUX_LOAD_OPTIONS_TAG 0x8F3B22EDu

static char *dup_or(const char *a, const char *b)
{
	return strdup(a ? a : b ? b : "");
}

static int plan(predict_ctx *c, mb_error *err)
{
	const mb_predict_input *in = c->in;
	size_t i;
	int rc;

	rc = pred_read_today(c);
	if (rc < 0)
		return set_error(err, rc, "reading today's GRUB commands: %s", mb_strerror(rc));
	if (in->boot->n_grub_cfg > MAX_CONFIGS)
		return set_error(err, -EINVAL, "at most %d GRUB configs", MAX_CONFIGS);
	for (i = 0; i < in->boot->n_grub_cfg; i++) {
		rc = pred_plan_config(c, &in->boot->grub_cfg[i], &c->cfg[i], err);
		c->n_cfg = i + 1;
		if (rc < 0)
			return rc;
	}
	if (in->boot->n_efi > 32)
		return set_error(err, -EINVAL, "at most 32 EFI applications");
	if (in->n_esp_dirs > MB_PREDICT_MAX_ESP_DIRS || (in->n_esp_dirs && !in->esp_dirs))
		return set_error(err, -EINVAL, "at most %d ESP folders", MB_PREDICT_MAX_ESP_DIRS);
	if (in->boot->kernel && (rc = pred_digest_file(c, in->boot->kernel, &c->kernel, err)) < 0)
		return rc;
	if (in->boot->initrd && (rc = pred_digest_file(c, in->boot->initrd, &c->initrd, err)) < 0)
		return rc;
	if (in->boot->uki) {
		if (in->boot->kernel || in->boot->initrd || in->boot->cmdline)
			return set_error(err, -EINVAL, "a UKI carries the kernel, initrd and command line: no kernel, "
					 "initrd or cmdline with it");
		if ((rc = pred_plan_uki(c, err)) < 0)
			return rc;
		pred_find_today_uki(c);
		if ((rc = pred_plan_uki_today(c, err)) < 0)
			return rc;
	}

	c->linux_cmd = dup_or(c->entry.linux_line.n ? c->entry.linux_line.w[0] : NULL,
			      c->old_linux.n ? c->old_linux.w[0] : "linux");
	c->initrd_cmd = dup_or(c->entry.initrd_line.n ? c->entry.initrd_line.w[0] : NULL,
			       c->old_initrd.n ? c->old_initrd.w[0] : "initrd");
	c->kernel_path = dup_or(in->boot->kernel_path ? in->boot->kernel_path : c->entry.linux_line.n > 1 ? c->entry.linux_line.w[1] : NULL,
				c->old_linux.n > 1 ? c->old_linux.w[1] : NULL);
	if (!c->linux_cmd || !c->initrd_cmd || !c->kernel_path)
		return set_error(err, -ENOMEM, "out of memory");
	if (in->boot->cmdline) {
		rc = grub_split_words(in->boot->cmdline, in->boot->cmdline + strlen(in->boot->cmdline), &c->args);
	} else {
		const grub_words *from = c->entry.linux_line.n ? &c->entry.linux_line : &c->old_linux;

		for (i = 2; i < from->n && rc == 0; i++)
			if (!(c->args.w[c->args.n++] = strdup(from->w[i])))
				rc = -ENOMEM;
	}
	if (rc < 0)
		return set_error(err, rc, "the command line: %s", mb_strerror(rc));
	if (in->boot->initrd_path) {
		if (!(c->initrd_paths.w[c->initrd_paths.n++] = strdup(in->boot->initrd_path)))
			rc = -ENOMEM;
	} else {
		const grub_words *from = c->entry.initrd_line.n ? &c->entry.initrd_line : &c->old_initrd;

		for (i = 1; i < from->n && rc == 0; i++)
			if (!(c->initrd_paths.w[c->initrd_paths.n++] = strdup(from->w[i])))
				rc = -ENOMEM;
	}
	if (rc < 0)
		return set_error(err, rc, "the initrd paths: %s", mb_strerror(rc));
	for (i = 0; i < c->args.n; i++)
		if (!in->boot->cmdline && strchr(c->args.w[i], '$'))
			pred_note(c, 8, true, "the config's kernel arguments use a variable (%s): give the expanded --cmdline",
				  c->args.w[i]);
	c->loader_changed = in->boot->cmdline || c->entry.linux_line.n || in->boot->kernel_path || in->boot->initrd_path;
	c->kernel_path_given = in->boot->kernel_path || c->entry.linux_line.n > 1;
	pred_check_file_names(c);
	return 0;
}

/* The tag of an EV_EVENT_TAG, 0 for any other event and for one malformed (as the decoder
 * reads it: the stub's tags are whole TCG_PCClientTaggedEvents). */
static uint32_t tag_id(const mb_event *ev)
{
	tagged_event t;

	if (ev->type != MB_EV_EVENT_TAG || tagged_event_parse(ev->data, ev->data_size, &t, NULL) < 0)
		return 0;
	return t.id;
}

/* An EV_IPL of systemd-boot or systemd-stub: UTF-16 text, as `log show` calls it (GRUB's
 * strings and paths are UTF-8 text). */
static bool is_utf16_text(const mb_event *ev)
{
	return ev->type == MB_EV_IPL && text_encoding_of(ev->data, ev->data_size) == TEXT_UTF16;
}

static int walk(predict_ctx *c, mb_log_writer *w, uint32_t *efi_used)
{
	const mb_predict_input *in = c->in;
	const mb_boot_artifacts *b = in->boot;
	size_t i, n = mb_event_log_count(in->log);
	/* the config the commands GRUB runs come from: the last config event's, when it is replaced */
	new_config *cur_cfg = NULL;
	bool after_linux = false, kernel_app_noted = false, entry_changes = b->kernel || b->initrd || b->cmdline;
	int rc = 0;

	for (i = 0; i < n && rc == 0; i++) {
		const mb_event *ev = mb_event_log_event(in->log, i);
		grub_event_kind kind = grub_event_kind_of(ev);

		if (i == 0 && ev->sha1_format && mb_event_log_format(in->log) == MB_LOG_FORMAT_CRYPTO_AGILE) {
			rc = mb_log_writer_add_event(w, ev);
			continue;
		}
		if (b->uki && (c->matched & MB_PREDICT_UKI)) {
			if (i == c->uki_app_event) {
				pred_note(c, 4, false, "the UKI (its Authenticode digest)");
				c->first_app = true;
				if (c->uki_today_efi >= 0)
					*efi_used |= 1u << c->uki_today_efi; /* it named today's UKI */
				rc = pred_write_event(c, w, ev, &c->uki_app, NULL, 0, NULL, 0);
				continue;
			}
			if (ev->pcr == 11 && ev->type == MB_EV_IPL) {
				if (!c->uki_written)
					rc = pred_write_uki_events(c, w, ev);
				c->uki_written = true;
				continue;
			}
			if (ev->pcr == 9 && tag_id(ev) == LINUX_INITRD_TAG) {
				rc = pred_walk_uki_initrd_tag(c, w, ev);
				continue;
			}
			/* The command line: systemd-boot's and systemd-stub's UTF-16 events (PCR 12, 8
			 * in older builds) and the kernel's EFI stub's LoadOptions tag, explained by
			 * today's UKI's .cmdline before the new one's replaces them. */
			if ((ev->pcr == 12 || ev->pcr == 8) && is_utf16_text(ev)) {
				c->systemd_cmdline = true;
				rc = pred_walk_uki_cmdline(c, w, ev);
				continue;
			}
			if (ev->pcr == 9 && tag_id(ev) == LINUX_LOAD_OPTIONS_TAG) {
				rc = pred_walk_uki_load_options(c, w, ev);
				continue;
			}
			if (i > c->uki_app_event && ev->pcr == 4 && ev->type == MB_EV_EFI_BOOT_SERVICES_APPLICATION) {
				rc = pred_walk_uki_app(c, w, ev);
				continue;
			}
			if (ev->pcr == 13 && c->uki_extra) {
				rc = pred_walk_uki_sysext(c, w, ev);
				continue;
			}
		}
		if (ev->pcr == 9 && ev->type == MB_EV_IPL) {
			rc = pred_walk_file(c, w, ev, &cur_cfg);
			continue;
		}
		if (ev->pcr == 9 && tag_id(ev) == LINUX_INITRD_TAG && c->initrd.have) {
			pred_note(c, 9, false, "the EFI stub's initrd tag");
			c->matched |= MB_PREDICT_INITRD;
			rc = pred_write_event(c, w, ev, &c->initrd, NULL, 0, NULL, 0);
			continue;
		}
		if (ev->pcr == 9 && tag_id(ev) == LINUX_LOAD_OPTIONS_TAG && c->loader_changed) {
			/* what the stub received as its command line, in whatever form the loader passed it */
			pred_note(c, 9, true, "event %u: the Linux EFI stub measured its command line (LoadOptions tag), "
				  "which mboot does not compute", ev->number);
			c->matched |= MB_PREDICT_CMDLINE | MB_PREDICT_KERNEL_PATH;
		}
		if (kind == GRUB_EVENT_LINUX)
			after_linux = true;
		if (c->model == MODEL_ON && ev->pcr == 8 && ev->type == MB_EV_IPL &&
		    grub_string_split(ev, &(const uint8_t *) { NULL }, &(size_t) { 0 }) != GRUB_STRING_NONE) {
			/* every GRUB string of today's is the model's now, written where the first was */
			if (!c->model_written) {
				c->model_written = true;
				rc = pred_write_model_strings(c, w, ev);
			}
			continue;
		}
		if (kind != GRUB_EVENT_NONE && c->loader_changed && c->model == MODEL_OFF) {
			rc = pred_walk_loader(c, w, ev, kind);
			continue;
		}
		if (ev->pcr == 8 && ev->type == MB_EV_IPL && cur_cfg && cur_cfg->changed && kind == GRUB_EVENT_NONE &&
		    c->model == MODEL_OFF &&
		    !pred_command_in_config(cur_cfg, ev)) {
			char *text = c->commands_missing++ ? NULL : grub_string_text(ev, NULL);

			if (c->commands_missing == 1)
				pred_note(c, 8, true, "grub.cfg changed and today's command \"%.60s\" is not in it: GRUB measures the "
					  "commands it runs, after expansion", text ? text : "?");
			free(text);
		}
		/* systemd-boot (type 1 entries) and systemd-stub measure the kernel command line as
		 * UTF-16 into PCR 12 (older systemd-boot: PCR 8); the new kernel's entry or UKI sets it. */
		if ((ev->pcr == 12 || ev->pcr == 8) && is_utf16_text(ev)) {
			if (entry_changes && !c->systemd_cmdline)
				pred_note(c, ev->pcr, true, "systemd-boot or systemd-stub measured the kernel command line (UTF-16, "
					  "event %u), which mboot does not compute; the new kernel's boot entry or UKI sets it", ev->number);
			if (entry_changes)
				c->matched |= MB_PREDICT_CMDLINE;
			c->systemd_cmdline = true;
		}
		if (ev->pcr == 11 && ev->type == MB_EV_IPL)
			c->uki = true;
		if (ev->pcr == 4 && ev->type == MB_EV_EFI_BOOT_SERVICES_APPLICATION) {
			bool replaced;

			rc = pred_walk_efi(c, w, ev, &replaced, efi_used);
			/* today's application, kept, revoked by a new dbx: the boot stops there */
			if (!replaced && c->efivars.n) {
				char *revoked = efivar_revoked_app(&c->efivars, ev);

				if (revoked) {
					pred_note(c, 4, true, "%s", revoked);
					pred_note(c, 7, true, "%s", revoked);
				}
				free(revoked);
			}
			/* the first application is the boot manager (shim, GRUB, systemd-boot), never the kernel */
			c->efi_after_first |= replaced && c->first_app;
			c->first_app = true;
			/* GRUB had the kernel its linux command loaded measured here too (shim's Verify, or
			 * LoadImage): its Authenticode digest, which no --kernel gives. */
			if (!replaced && after_linux && b->kernel && !kernel_app_noted)
				pred_note(c, 4, true, "GRUB's linux command had the kernel measured as an EFI application too (event %u, "
					  "its Authenticode digest): name today's and the new kernel with --efi OLD=NEW", ev->number);
			kernel_app_noted |= !replaced && after_linux && b->kernel;
			continue;
		}
		if (c->efivars.n && (ev->pcr == 7 || ev->pcr == 14)) {
			bool done = false;

			rc = pred_walk_efivar(c, w, ev, &done);
			if (rc < 0 || done)
				continue;
		}
		rc = mb_log_writer_add_event(w, ev);
	}
	if (c->commands_missing > 1)
		pred_note(c, 8, true, "%u more of today's commands are not in it", c->commands_missing - 1);
	if (rc == 0 && b->uki && (c->matched & MB_PREDICT_UKI))
		rc = pred_finish_uki_sysext(c, w);
	if (b->uki && c->uki_creds)
		pred_note(c, 12, true, "the new drop-in folder has credentials: systemd-stub measures their archive, which "
			  "mboot does not compute");
	/* A UKI's sections (kernel, initrd, command line, ...) are measured into PCR 11 by
	 * systemd-stub, the UKI itself into PCR 4: an --efi may be the UKI. */
	if (b->uki && c->uki_initrd >= 0 && !c->today_initrd.have && !c->uki_initrd_tag)
		pred_note(c, 9, true, "the new UKI has an .initrd and today's had none: the kernel's EFI stub may tag it");
	if (!b->uki && c->uki && (entry_changes || c->efi_applied))
		pred_note(c, 11, true, "systemd-stub measured the UKI's sections, which mboot does not compute: give the new "
			  "UKI with --uki");
	if (!b->uki && c->uki && c->efi_applied)
		pred_note(c, 12, true, "systemd-stub measures the UKI's command line, which mboot does not compute");
	if (!c->uki && !c->systemd_cmdline)
		return rc;
	/* systemd-boot loads a kernel or UKI with LoadImage: the firmware measures it into PCR 4. */
	if (c->first_app && !c->efi_after_first && (b->kernel || (c->uki && entry_changes)))
		pred_note(c, 4, true, "systemd-boot loads the kernel (or UKI) as an EFI application, measured into PCR 4 by "
			  "its Authenticode digest: name today's and the new one with --efi OLD=NEW");
	if (b->kernel && (c->first_app || c->uki))
		c->matched |= MB_PREDICT_KERNEL;
	if (c->uki)
		c->matched |= (b->initrd ? MB_PREDICT_INITRD : 0) | (b->cmdline ? MB_PREDICT_CMDLINE : 0);
	return rc;
}

MB_EXPORT int mb_predict(const mb_predict_input *in_opt, mb_predict_result *ret, mb_error *err)
{
	mb_predict_input in_buf;
	mb_boot_artifacts boot_buf;
	const mb_predict_input *in = &in_buf;
	predict_ctx c = { 0 };
	uint32_t efi_used = 0;
	mb_log_writer *w = NULL;
	mb_pcr_values *today = NULL;
	const uint8_t *bytes;
	size_t size, b;
	int rc;

	memset(ret, 0, sizeof(*ret));
	rc = OPTIONS_TAKE(in_buf, in_opt, err);
	/* boot grows as in does, so it is taken alike (NULL: nothing changes); from here on in->boot
	 * is our copy, never NULL */
	if (rc == 0)
		rc = OPTIONS_TAKE_NAMED(boot_buf, in_buf.boot, "mb_predict: mb_predict_input.boot (mb_boot_artifacts)",
					err);
	if (rc < 0)
		return rc;
	in_buf.boot = &boot_buf;
	if (!in->log)
		return set_error(err, -EINVAL, "mb_predict: no event log");
	c.in = in;
	c.res = ret;
	c.n_banks = mb_event_log_banks(in->log, &c.banks);
	rc = plan(&c, err);
	if (rc == 0)
		rc = pred_plan_model(&c, err);
	if (rc == 0 && (in->grub_entry || in->grub_entry_kernel) && c.model == MODEL_OFF)
		pred_note(&c, 8, true, "a menu entry picked by hand is followed only by running the configs as GRUB does, "
			  "which needs a copy of each config that booted today (--grub-cfg-booted, --grub-booted-dir)");
	if (rc == 0)
		rc = efivar_plan(in, &c.efivars, err);
	if (rc == 0)
		rc = pred_plan_efi_grub(&c, err);
	if (rc < 0)
		goto out;
	rc = mb_log_writer_new(&w);
	if (rc == 0)
		rc = walk(&c, w, &efi_used);
	if (rc < 0) {
		rc = set_error(err, rc, "predicting the log: %s", mb_strerror(rc));
		goto out;
	}
	bytes = mb_log_writer_data(w, &size);
	rc = mb_event_log_parse(bytes, size, &ret->next_log, err);
	if (rc < 0)
		goto out;
	today = mb_pcr_values_new();
	ret->values = mb_pcr_values_new();
	if (!today || !ret->values) {
		rc = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	rc = mb_replay_log(in->log, SIZE_MAX, today, NULL, err);
	if (rc == 0)
		rc = mb_replay_log(ret->next_log, SIZE_MAX, ret->values, NULL, err);
	if (rc < 0)
		goto out;
	for (b = 0; b < ret->values->n_banks; b++) {
		mb_pcr_bank *p = &ret->values->banks[b];
		const mb_pcr_bank *t = pcrv_bank_const(today, p->alg);
		uint32_t pcr;

		/* A PCR today's log extends and the next boot's does not (its only events dropped:
		 * no system extension any more) stays at its reset value, zeros for PCRs 0-15. */
		for (pcr = 0; t && pcr < 16; pcr++)
			if ((t->present & (1u << pcr)) && !(p->present & (1u << pcr))) {
				memset(p->value[pcr], 0, p->size);
				p->present |= 1u << pcr;
			}

		ret->touched |= p->present;
		for (pcr = 0; pcr < MB_PCR_COUNT; pcr++)
			if (t && (p->present & (1u << pcr)) && memcmp(p->value[pcr], t->value[pcr], p->size) != 0)
				ret->changed |= 1u << pcr;
	}
	/* What was asked and found nothing to change, and what cannot be predicted: no value. */
	ret->unmatched |= ((in->boot->kernel ? MB_PREDICT_KERNEL : 0) | (in->boot->initrd ? MB_PREDICT_INITRD : 0) |
			  (in->boot->cmdline ? MB_PREDICT_CMDLINE : 0) | (in->boot->kernel_path ? MB_PREDICT_KERNEL_PATH : 0) |
			  (in->boot->initrd_path ? MB_PREDICT_INITRD_PATH : 0) | (in->boot->uki ? MB_PREDICT_UKI : 0)) &
			 ~c.matched;
	for (b = 0; b < in->boot->n_efi; b++)
		if (!(efi_used & (1u << b)))
			ret->unmatched_efi |= 1u << b;
	for (b = 0; b < c.n_cfg; b++)
		if (!c.cfg[b].matched)
			ret->unmatched_grub_cfg |= 1u << b;
	for (b = 0; b < c.efivars.n; b++)
		if (!c.efivars.ch[b].matched)
			ret->unmatched_efi_var |= 1u << b;
	ret->changed &= ~ret->unpredictable;
	for (b = 0; b < ret->values->n_banks; b++)
		ret->values->banks[b].present &= ~ret->unpredictable;
	if (ret->unmatched || ret->unmatched_efi || ret->unmatched_grub_cfg || ret->unmatched_efi_var) {
		mb_pcr_values_free(ret->values);
		ret->values = NULL;
	}
	/* a result missing one of its reasons is not returned */
	if (c.oom)
		rc = set_error(err, -ENOMEM, "out of memory");
out:
	if (rc < 0)
		mb_predict_result_done(ret);
	mb_pcr_values_free(today);
	mb_log_writer_free(w);
	grub_entry_done(&c.entry);
	grub_model_run_done(&c.model_run);
	efivar_done(&c.efivars);
	grub_words_done(&c.old_linux);
	grub_words_done(&c.old_initrd);
	grub_words_done(&c.old_kernel_paths);
	grub_words_done(&c.args);
	grub_words_done(&c.initrd_paths);
	free(c.cmd_today.data);
	free(c.cmd_new.data);
	free(c.cmd_why);
	free(c.linux_cmd);
	free(c.initrd_cmd);
	free(c.kernel_path);
	for (b = 0; b < c.n_cfg; b++) {
		free(c.cfg[b].measured_path);
		free(c.cfg[b].text);
	}
	for (b = 0; b < MAX_CONFIGS; b++)
		free(c.grub_why[b]);
	return rc;
}

MB_EXPORT void mb_predict_result_done(mb_predict_result *r)
{
	size_t i;

	for (i = 0; i < MB_PCR_COUNT; i++) {
		free(r->why[i]);
		r->why[i] = NULL;
	}
	mb_event_log_free(r->next_log);
	r->next_log = NULL;
	mb_pcr_values_free(r->values);
	r->values = NULL;
}
