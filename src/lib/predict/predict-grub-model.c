/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PCR 8 by running GRUB's configs (lib/grub/grub-script.c): with copies of the configs that
 * booted, the model must reproduce today's strings before its run of the new configs replaces
 * them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mboot/digest.h>
#include <mboot/events.h>
#include <mboot/pe.h>
#include "lib/events/event-data.h"
#include "lib/pe/grub-memdisk.h"
#include "lib/predict/predict-internal.h"
#include "shared/fail.h"
#include "shared/fileio.h"
#include "shared/hex.h"

/* The first PCR 9 event of a file GRUB read under path, or NULL. */
static const mb_event *file_event(const mb_event_log *log, const char *path)
{
	size_t i, n = mb_event_log_count(log);

	for (i = 0; i < n; i++) {
		const mb_event *ev = mb_event_log_event(log, i);
		char *p = grub_file_event_path(ev);
		bool same = p && strcmp(p, path) == 0;

		free(p);
		if (same)
			return ev;
	}
	return NULL;
}

/* The kept copy of the config GRUB measured as path: explicit, else in the directory under
 * the sha256 hex of the path (docs/predict.md); NULL when there is none. */
static char *booted_copy(const mb_predict_input *in, const char *path)
{
	uint8_t d[MB_DIGEST_MAX];
	char hex[2 * 32 + 1], *file = NULL;
	size_t i;

	for (i = 0; i < in->n_grub_booted; i++)
		if (in->grub_booted[i].measured_path && strcmp(in->grub_booted[i].measured_path, path) == 0)
			return strdup(in->grub_booted[i].file);
	if (!in->grub_booted_dir || !in->grub_booted_dir[0] || mb_digest(MB_ALG_SHA256, path, strlen(path), d) < 0)
		return NULL;
	hex_format(d, 32, hex);
	if (asprintf(&file, "%s/%s", in->grub_booted_dir, hex) < 0)
		return NULL;
	if (access(file, F_OK) != 0) {
		free(file);
		return NULL;
	}
	return file;
}

/* The GRUB image that booted today and what GRUB set from it (grub_model_start). */
typedef struct booted_image {
	uint8_t *buf;
	mb_grub_image gi;
	char *prefix, *builtin;
	char *cmdpath; /* NULL: unknown */
	bool have;
} booted_image;

static void booted_image_done(booted_image *b)
{
	free(b->buf);
	free(b->prefix);
	free(b->builtin);
	free(b->cmdpath);
	memset(b, 0, sizeof(*b));
}

static int memdisk_read(void *ctx, const char *path, char **text, size_t *size)
{
	booted_image *b = ctx;
	mb_error e = { 0 };
	uint8_t *d = NULL;
	int rc;

	if (!b->gi.memdisk)
		return -ENOENT;
	rc = grub_memdisk_read(b->gi.memdisk, b->gi.memdisk_size, path, GRUB_CFG_MAX, &d, size, &e);
	*text = (char *) d;
	return rc;
}

/* Today's PCR 4 application whose digest is file's Authenticode digest (*ret NULL: none). */
static int booted_today(const mb_event_log *log, const mb_pe_info *pe, const uint8_t *buf, size_t size,
			const mb_event **ret)
{
	uint8_t d[MB_DIGEST_MAX];
	uint16_t have_alg = 0;
	size_t i, n = mb_event_log_count(log);
	int rc;

	*ret = NULL;
	for (i = 0; i < n && !*ret; i++) {
		const mb_event *ev = mb_event_log_event(log, i);
		const mb_event_digest *e;

		if (ev->pcr != 4 || ev->type != MB_EV_EFI_BOOT_SERVICES_APPLICATION || !ev->n_digests)
			continue;
		e = mb_event_digest_for(ev, MB_ALG_SHA256) ? mb_event_digest_for(ev, MB_ALG_SHA256) : &ev->digests[0];
		if (!mb_digest_by_alg(e->alg))
			continue;
		if (have_alg != e->alg) {
			if ((rc = mb_pe_hash(pe, buf, size, e->alg, d)) < 0)
				return rc;
			have_alg = e->alg;
		}
		if (memcmp(d, e->bytes, e->size) == 0)
			*ret = ev;
	}
	return 0;
}

/*
 * GRUB's $cmdpath: the folder of the file the image's PCR 4 event names (its device path's
 * file-path nodes), on device (the "(hd0,gpt1)" GRUB's $root starts as). NULL, unknown, when the
 * path names no file or the event data is malformed (`mboot log show` says why).
 */
static int image_cmdpath(const mb_event *ev, const char *device, size_t device_len, char **ret)
{
	efi_image_load il;
	char *file = NULL, *slash;
	int rc;

	*ret = NULL;
	if (efi_image_load_parse(ev->data, ev->data_size, &il, NULL) < 0)
		return 0;
	rc = devpath_file_path(il.device_path, il.device_path_len, &file, NULL);
	if (rc == -ENOMEM)
		return rc;
	if (rc < 0)
		return 0;
	slash = strrchr(file, '/');
	*slash = 0; /* devpath_file_path() starts with one */
	rc = asprintf(ret, "%.*s%s", (int) device_len, device, file);
	free(file);
	if (rc < 0) {
		*ret = NULL;
		return -ENOMEM;
	}
	return 0;
}

/*
 * The GRUB image that booted: --grub-image, else the OLD of an --efi that is a GRUB image
 * (b->have false when neither). A file whose Authenticode digest is no PCR 4 application of
 * today's log is refused: it is not what booted. GRUB's $prefix is the image's prefix on the
 * device it was loaded from, taken as the device of the first config today's log measured (the
 * self-check catches another).
 */
static int read_booted_image(const predict_ctx *c, const char *first_path, booted_image *b, mb_error *err)
{
	const mb_predict_input *in = c->in;
	const char *file = in->grub_image;
	mb_pe_info *pe = NULL;
	const mb_event *booted = NULL;
	size_t size = 0, e;
	int rc;

	for (e = 0; !file && e < in->boot->n_efi; e++) {
		const mb_efi_binary *r = &in->boot->efi[e];
		uint8_t *buf = NULL;
		size_t sz = 0;
		mb_grub_image gi;
		mb_error ignored = { 0 };

		if (!r->old_file || mb_pe_read_file(r->old_file, &buf, &sz, &ignored) < 0)
			continue;
		if (mb_pe_parse(buf, sz, 0, &pe, &ignored) == 0 && mb_grub_image_parse(pe, buf, sz, &gi, &ignored) == 0)
			file = r->old_file;
		mb_pe_info_free(pe);
		pe = NULL;
		free(buf);
	}
	if (!file)
		return 0;
	rc = mb_pe_read_file(file, &b->buf, &size, err);
	if (rc == 0)
		rc = mb_pe_parse(b->buf, size, 0, &pe, err);
	if (rc == 0)
		rc = mb_grub_image_parse(pe, b->buf, size, &b->gi, err);
	if (rc == 0)
		rc = booted_today(in->log, pe, b->buf, size, &booted);
	mb_pe_info_free(pe);
	if (rc < 0)
		return prefix_error(err, rc, file);
	if (!booted)
		return set_error(err, -EINVAL, "--grub-image %s: its Authenticode digest is no EFI application today's log "
				 "measured in PCR 4: it is not the GRUB that booted", file);
	if (b->gi.config && !(b->builtin = strndup((const char *) b->gi.config, b->gi.config_size)))
		return set_error(err, -ENOMEM, "out of memory");
	if (b->gi.prefix && b->gi.prefix_size && b->gi.prefix[0] == '(') {
		b->prefix = strndup((const char *) b->gi.prefix, b->gi.prefix_size);
	} else if (b->gi.prefix && first_path[0] == '(' && strchr(first_path, ')')) {
		int dl = (int) (strchr(first_path, ')') - first_path + 1);

		if (asprintf(&b->prefix, "%.*s%.*s", dl, first_path, (int) b->gi.prefix_size, (const char *) b->gi.prefix) < 0)
			b->prefix = NULL;
	} else {
		return 0; /* no prefix, or no device to put it on: normal mode on the first config */
	}
	if (!b->prefix)
		return set_error(err, -ENOMEM, "out of memory");
	if (first_path[0] == '(' && strchr(first_path, ')') &&
	    image_cmdpath(booted, first_path, (size_t) (strchr(first_path, ')') - first_path + 1), &b->cmdpath) < 0)
		return set_error(err, -ENOMEM, "out of memory");
	b->have = true;
	return 0;
}

/* Today's PCR 8 strings, as the chain of events binds their kinds. */
static int today_strings(const mb_event_log *log, grub_model_string **ret, size_t *n_ret, bool *cmdline)
{
	size_t i, n = mb_event_log_count(log), k = 0;
	grub_string_walk walk = { 0 };
	grub_model_string *s = calloc(n + 1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	*cmdline = false;
	for (i = 0; i < n; i++) {
		const mb_event *ev = mb_event_log_event(log, i);
		grub_string_kind kind = grub_string_walk_next(&walk, ev);

		if (kind == GRUB_STRING_NONE)
			continue;
		s[k].kind = kind;
		*cmdline |= kind == GRUB_STRING_KERNEL_CMDLINE;
		if (!(s[k++].text = grub_string_text(ev, NULL))) {
			while (k--)
				free(s[k].text);
			free(s);
			return -ENOMEM;
		}
	}
	*ret = s;
	*n_ret = k;
	return 0;
}

/* The entry that boots (the new config's default, or one picked by hand) may load another
 * kernel or initrd than today's (update-grub's new version name): their PCR 9 events would be
 * today's digests, so without --kernel / --initrd giving the files PCR 9 is unpredictable. */
static void chosen_files(predict_ctx *c, const grub_model_run *run)
{
	const mb_predict_input *in = c->in;
	size_t i, k;

	for (i = 0; i < run->n; i++) {
		grub_words ws = { 0 };
		bool lx, ird;

		if (run->s[i].kind != GRUB_STRING_CMD ||
		    grub_split_words(run->s[i].text, run->s[i].text + strlen(run->s[i].text), &ws) < 0 || ws.n < 2) {
			grub_words_done(&ws);
			continue;
		}
		lx = grub_is_cmd(ws.w[0], "linux");
		ird = grub_is_cmd(ws.w[0], "initrd");
		if (lx && !in->boot->kernel && (c->old_linux.n < 2 || !pred_same_path(c->old_linux.w[1], ws.w[1])))
			pred_note(c, 9, true, "the entry that boots loads the kernel %s, not today's: give the file with --kernel", ws.w[1]);
		/* --kernel's digest replaces the kernel GRUB loads: it must be that file */
		if (lx && in->boot->kernel && !pred_same_file_name(in->boot->kernel, ws.w[1]))
			pred_note(c, 9, true, "the entry that boots loads the kernel %s, and --kernel names %s", ws.w[1],
				  in->boot->kernel);
		for (k = 1; ird && in->boot->initrd && k < ws.n && !pred_same_file_name(in->boot->initrd, ws.w[k]); k++)
			;
		if (ird && in->boot->initrd && k == ws.n)
			pred_note(c, 9, true, "the entry that boots loads the initrd %s, and --initrd names %s", ws.w[1],
				  in->boot->initrd);
		for (k = 1; ird && !in->boot->initrd && k < ws.n; k++)
			if (c->old_initrd.n != ws.n || !pred_same_path(c->old_initrd.w[k], ws.w[k]))
				pred_note(c, 9, true, "the entry that boots loads the initrd %s, not today's: give the file with --initrd",
					  ws.w[k]);
		grub_words_done(&ws);
	}
}

/*
 * With copies of the configs that booted: run them through the model and, when it reproduces
 * today's PCR 8 strings exactly, run the new configs to get the next boot's (MODEL_ON). When a
 * copy does not hash to today's event, or the model does not reproduce today, or cannot decide
 * the new run: PCR 8 is unpredictable with the reason (MODEL_REFUSED). Without a copy of every
 * config today's log measured: MODEL_OFF, today's line by line check.
 */
int pred_plan_model(predict_ctx *c, mb_error *err)
{
	const mb_predict_input *in = c->in;
	grub_words paths = { 0 };
	grub_model_config booted[MAX_CONFIGS], next[MAX_CONFIGS];
	char *texts[MAX_CONFIGS] = { 0 };
	grub_model_string *today = NULL;
	size_t n_today = 0, i, k;
	bool cmdline = false;
	grub_model *m = NULL;
	grub_model_run run = { 0 };
	booted_image image = { 0 };
	int rc = 0;

	if (in->n_grub_booted && (in->boot->cmdline || in->boot->kernel_path || in->boot->initrd_path))
		return set_error(err, -EINVAL, "the configs that booted (--grub-cfg-booted) are for running the new "
				 "config, whose linux and initrd lines --cmdline, --kernel-path and --initrd-path would replace");
	if ((in->grub_entry || in->grub_entry_kernel) && (in->boot->cmdline || in->boot->kernel_path || in->boot->initrd_path))
		return set_error(err, -EINVAL, "a menu entry picked by hand (--grub-entry, --grub-entry-kernel) is run from the "
				 "config, whose linux and initrd lines --cmdline, --kernel-path and --initrd-path would replace");
	if (in->grub_entry && in->grub_entry_kernel)
		return set_error(err, -EINVAL, "--grub-entry or --grub-entry-kernel, not both");
	if ((!in->boot->n_grub_cfg && !in->grub_entry && !in->grub_entry_kernel) || in->boot->cmdline ||
	    in->boot->kernel_path || in->boot->initrd_path)
		return 0; /* the options name PCR 8's linux/initrd lines themselves */
	if (grub_measured_configs(in->log, &paths) < 0)
		return set_error(err, -ENOMEM, "out of memory");
	for (i = 0; i < in->n_grub_booted; i++) {
		for (k = 0; k < paths.n && strcmp(paths.w[k], in->grub_booted[i].measured_path ?
						  in->grub_booted[i].measured_path : "") != 0; k++)
			;
		if (k == paths.n) {
			rc = set_error(err, -EINVAL, "--grub-cfg-booted %s: today's log measured no GRUB config under that path",
				       in->grub_booted[i].measured_path ? in->grub_booted[i].measured_path : "(none)");
			goto out;
		}
	}
	if (!paths.n || paths.n > MAX_CONFIGS)
		goto out;
	for (i = 0; i < paths.n; i++) {
		char *file = booted_copy(in, paths.w[i]);
		const mb_event *ev = file_event(in->log, paths.w[i]);
		file_digests fd = { 0 };
		size_t size;
		uint32_t d;

		if (!file)
			goto out; /* no copy: today's check */
		rc = file_read(file, GRUB_CFG_MAX, (uint8_t **) &texts[i], &size, err);
		if (rc == 0)
			rc = pred_digest_file(c, file, &fd, err);
		if (rc < 0) {
			free(file);
			goto out;
		}
		for (d = 0; ev && d < ev->n_digests; d++) {
			int b = pred_bank_index(c, ev->digests[d].alg);

			if (b >= 0 && mb_digest_by_alg(ev->digests[d].alg) &&
			    memcmp(fd.d[b], ev->digests[d].bytes, ev->digests[d].size) != 0) {
				pred_note(c, 8, true, "the booted copy %s of %s does not hash to today's PCR 9 event %u: it is not "
					  "the config that booted", file, paths.w[i], ev->number);
				c->model = MODEL_REFUSED;
				free(file);
				goto out;
			}
		}
		free(file);
		booted[i] = (grub_model_config) { paths.w[i], texts[i], size };
		next[i] = booted[i];
		for (k = 0; k < c->n_cfg; k++)
			if (c->cfg[k].measured_path && strcmp(c->cfg[k].measured_path, paths.w[i]) == 0)
				next[i] = (grub_model_config) { paths.w[i], c->cfg[k].text, strlen(c->cfg[k].text) };
	}
	rc = read_booted_image(c, paths.w[0], &image, err);
	if (rc < 0)
		goto out;
	rc = today_strings(in->log, &today, &n_today, &cmdline);
	if (rc < 0 || !(m = grub_model_new())) {
		rc = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	if (image.have) {
		grub_model_start start = { image.prefix, image.cmdpath, image.builtin, memdisk_read, &image };

		if ((rc = grub_model_set_start(m, &start)) < 0) {
			rc = set_error(err, rc, "out of memory");
			goto out;
		}
	}
	c->model = MODEL_REFUSED;
	rc = grub_model_check(m, booted, paths.n, today, n_today, cmdline, &run);
	if (rc == 0 && run.why) {
		pred_note(c, 8, true, "the GRUB model does not reproduce today's PCR 8 from the configs that booted: %s%s", run.why,
			  image.have ? "" : " (when GRUB's image runs commands of its own first, as Debian's signed GRUB "
			  "does, give the image that booted with --grub-image)");
		goto out;
	}
	grub_model_run_done(&run);
	if (rc == 0) {
		grub_model_choice choice = { in->grub_entry, in->grub_entry_kernel };

		rc = grub_model_predict(m, next, paths.n, cmdline, &choice, &run);
	}
	if (rc < 0) {
		rc = set_error(err, rc, "the GRUB model: %s", mb_strerror(rc));
		goto out;
	}
	if (run.no_entry) {
		c->res->unmatched |= MB_PREDICT_GRUB_ENTRY;
		pred_note(c, 8, true, "%s", run.why);
		goto out;
	}
	if (run.why) {
		pred_note(c, 8, true, "the GRUB model cannot tell what the new config runs: %s", run.why);
		goto out;
	}
	c->model = MODEL_ON;
	if (in->grub_entry || in->grub_entry_kernel)
		pred_note(c, 8, false, "the menu entry %s picked by hand", run.entry ? run.entry : "?");
	chosen_files(c, &run);
	/* a new kernel command line moves the EFI stub's LoadOptions tag too */
	c->loader_changed = false;
	for (i = 0; i < run.n; i++)
		if (i >= n_today || strcmp(run.s[i].text, today[i].text) != 0)
			c->loader_changed = true;
	c->loader_changed |= run.n != n_today;
	c->model_run = run;
	memset(&run, 0, sizeof(run));
out:
	grub_model_run_done(&run);
	grub_model_free(m);
	booted_image_done(&image);
	if (today) {
		for (i = 0; i < n_today; i++)
			free(today[i].text);
		free(today);
	}
	for (i = 0; i < MAX_CONFIGS; i++)
		free(texts[i]);
	grub_words_done(&paths);
	return rc;
}

/* The model's strings in place of today's PCR 8 strings, with today's label form and hashing
 * convention (tmpl: today's first such event). */
int pred_write_model_strings(predict_ctx *c, mb_log_writer *w, const mb_event *tmpl)
{
	mb_digest_check check;
	size_t i;
	int rc = 0;

	if (mb_event_check_digest(tmpl, &check) < 0 ||
	    (check.status != MB_DIGEST_MATCH && check.status != MB_DIGEST_MATCH_ALTERNATE)) {
		pred_note(c, 8, true, "event %u: today's text does not hash to its digest, so how GRUB hashes it is unknown",
			  tmpl->number);
		c->model = MODEL_REFUSED;
		return mb_log_writer_add_event(w, tmpl);
	}
	for (i = 0; i < c->model_run.n && rc == 0; i++) {
		const grub_model_string *s = &c->model_run.s[i];
		const char *label = grub_string_label_like(s->kind, tmpl->data, tmpl->data_size);
		char *data = NULL;
		size_t tl = strlen(s->text);

		if (asprintf(&data, "%s%s", label, s->text) < 0)
			return -ENOMEM;
		rc = pred_write_event(c, w, tmpl, NULL, s->text, tl + (check.status == MB_DIGEST_MATCH_ALTERNATE), data,
				      strlen(data) + 1);
		free(data);
	}
	pred_note(c, 8, false, "GRUB's commands, by running the new config (the model reproduced today's from the configs "
		  "that booted)");
	return rc;
}
