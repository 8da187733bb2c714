/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * GRUB's part of a prediction, checked line by line against today's log: the files it reads
 * (PCR 9: grub.cfg, the kernel, the initrd) and the linux, initrd and kernel command line
 * strings it measures (PCR 8) for the next boot's loader; whether a changed grub.cfg still runs
 * today's commands. Running the configs instead is predict-grub-model.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/events.h>
#include "lib/predict/predict-internal.h"
#include "shared/fail.h"
#include "shared/fileio.h"

/* The path of a file event, without GRUB's "(device)" prefix. */
static const char *strip_device(const char *p)
{
	if (p[0] == '(') {
		const char *close = strchr(p, ')');
		if (close)
			return close + 1;
	}
	return p;
}

bool pred_same_path(const char *logged, const char *cmd_path)
{
	return strcmp(strip_device(logged), strip_device(cmd_path)) == 0;
}

static const char *file_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

bool pred_same_file_name(const char *host_file, const char *grub_path)
{
	return strcmp(file_name(host_file), file_name(grub_path)) == 0;
}

/*
 * A kernel or initrd given as a file whose name is not the one GRUB loads today, with nothing
 * saying how GRUB will name it (no new config, no --kernel-path / --initrd-path): the next
 * boot's linux, initrd and kernel_cmdline strings name a path mboot does not know
 * (update-grub's vmlinuz-NEW), so PCR 8 has no value rather than today's path.
 */
void pred_check_file_names(predict_ctx *c)
{
	const mb_boot_artifacts *b = c->in->boot;
	size_t k;

	if (b->n_grub_cfg || b->uki)
		return;
	for (k = 0; b->kernel && k < c->old_kernel_paths.n && !pred_same_file_name(b->kernel, c->old_kernel_paths.w[k]); k++)
		;
	if (b->kernel && !b->kernel_path && c->old_kernel_paths.n && k == c->old_kernel_paths.n)
		pred_note(c, 8, true, "the kernel %s is not a file GRUB loads today (%s): GRUB's linux command and "
			  "kernel_cmdline will name its path, which only the new grub.cfg (--grub-cfg) or --kernel-path can say",
			  b->kernel, c->old_kernel_paths.w[0]);
	for (k = 1; b->initrd && k < c->old_initrd.n && !pred_same_file_name(b->initrd, c->old_initrd.w[k]); k++)
		;
	if (b->initrd && !b->initrd_path && c->old_initrd.n > 1 && k == c->old_initrd.n)
		pred_note(c, 8, true, "the initrd %s is not a file GRUB loads today (%s): GRUB's initrd command will name "
			  "its path, which only the new grub.cfg (--grub-cfg) or --initrd-path can say", b->initrd,
			  c->old_initrd.w[1]);
}

/* Rewrite a GRUB PCR 8 string: today's label (whichever form this GRUB writes) and hashing
 * convention (with or without NUL). */
static int write_grub_string(predict_ctx *c, mb_log_writer *w, const mb_event *ev, const char *text)
{
	mb_digest_check check;
	char *data = NULL;
	size_t tlen = strlen(text), label_len = 0;
	const uint8_t *old;
	size_t old_len;
	int rc;

	if (mb_event_check_digest(ev, &check) < 0 ||
	    (check.status != MB_DIGEST_MATCH && check.status != MB_DIGEST_MATCH_ALTERNATE)) {
		pred_note(c, ev->pcr, true, "event %u: today's text does not hash to its digest, so how GRUB hashes it is unknown",
			  ev->number);
		return mb_log_writer_add_event(w, ev);
	}
	if (grub_string_parse(ev->data, ev->data_size, &old, &old_len, &label_len) == GRUB_STRING_NONE ||
	    asprintf(&data, "%.*s%s", (int) label_len, (const char *) ev->data, text) < 0)
		return -ENOMEM;
	/* MATCH_ALTERNATE: this GRUB hashed the trailing NUL too. */
	rc = pred_write_event(c, w, ev, NULL, text, tlen + (check.status == MB_DIGEST_MATCH_ALTERNATE),
			      data, strlen(data) + 1);
	free(data);
	return rc;
}

/* Does a line of grub.cfg, split into words and re-joined as GRUB measures argv, equal line? */
static bool config_has_command(const char *cfg, const char *line)
{
	const char *p = cfg;
	bool found = false;

	while (*p && !found) {
		const char *eol = strchr(p, '\n');
		grub_words ws = { 0 };
		char *joined;

		if (!eol)
			eol = p + strlen(p);
		if (grub_split_words(p, eol, &ws) == 0 && ws.n && (joined = grub_join(&ws, 0))) {
			found = strcmp(joined, line) == 0;
			free(joined);
		}
		grub_words_done(&ws);
		p = *eol ? eol + 1 : eol;
	}
	return found;
}

/*
 * A command GRUB ran after reading grub.cfg: would the new grub.cfg run it again? Its first line
 * must be a line of the config (as argv re-joined) and, for a block (menuentry), every other line
 * must appear in the config as written. Commands whose arguments GRUB expanded ($root, ...) do
 * not match: they are reported, never guessed.
 */
bool pred_command_in_config(const new_config *cfg, const mb_event *ev)
{
	grub_string_kind kind;
	char *text = grub_string_text(ev, &kind), *line, *save = NULL;
	bool found = true, first = true;

	if (kind != GRUB_STRING_CMD) {
		free(text);
		return true; /* not a command */
	}
	if (!text || !cfg->text) {
		free(text);
		return false;
	}
	for (line = strtok_r(text, "\n", &save); line && found; line = strtok_r(NULL, "\n", &save)) {
		if (first) {
			found = config_has_command(cfg->text, line);
			first = false;
			continue;
		}
		while (*line == ' ' || *line == '\t')
			line++;
		if (*line)
			found = strstr(cfg->text, line) != NULL;
	}
	free(text);
	return found;
}

int pred_read_today(predict_ctx *c)
{
	size_t i, n = mb_event_log_count(c->in->log);

	for (i = 0; i < n; i++) {
		const mb_event *ev = mb_event_log_event(c->in->log, i);
		grub_event_kind k = grub_event_kind_of(ev);
		grub_words *into = k == GRUB_EVENT_LINUX ? &c->old_linux : k == GRUB_EVENT_INITRD ? &c->old_initrd : NULL;
		char *text;
		int rc;

		if (!into)
			continue;
		text = grub_string_text(ev, NULL);
		if (!text)
			return -ENOMEM;
		if (k == GRUB_EVENT_LINUX && c->old_kernel_paths.n < GRUB_MAX_WORDS) {
			grub_words ws = { 0 };

			if (grub_split_words(text, text + strlen(text), &ws) == 0 && ws.n > 1) {
				c->old_kernel_paths.w[c->old_kernel_paths.n++] = ws.w[1];
				ws.w[1] = strdup("");
			}
			grub_words_done(&ws);
		}
		rc = into->n ? 0 : grub_split_words(text, text + strlen(text), into);
		free(text);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* A new grub.cfg: the config event it replaces, its text and digests; the entry of the first
 * config that has one. */
int pred_plan_config(predict_ctx *c, const mb_grub_config *g, new_config *cfg, mb_error *err)
{
	grub_words paths = { 0 };
	mb_error scratch = { 0 };
	size_t size;
	int rc;

	if (g->measured_path) {
		cfg->measured_path = strdup(g->measured_path);
		if (!cfg->measured_path)
			return set_error(err, -ENOMEM, "out of memory");
	} else {
		if (grub_measured_configs(c->in->log, &paths) < 0)
			return set_error(err, -ENOMEM, "out of memory");
		if (paths.n > 1) {
			char *list = grub_join_list(&paths, ", ");

			rc = set_error(err, -EINVAL, "today's boot measured %zu GRUB configs (%s): say which one %s replaces, "
				       "as MEASURED_PATH=FILE", paths.n, list ? list : "?", g->file);
			free(list);
			grub_words_done(&paths);
			return rc;
		}
		/* none measured: the config replaces nothing, and the caller hears so (unmatched) */
		if (paths.n == 1) {
			cfg->measured_path = paths.w[0];
			paths.w[0] = NULL;
		}
		grub_words_done(&paths);
	}
	rc = file_read(g->file, GRUB_CFG_MAX, (uint8_t **) &cfg->text, &size, err);
	if (rc < 0)
		return rc;
	rc = pred_digest_file(c, g->file, &cfg->d, err);
	if (rc < 0)
		return rc;
	if (c->entry.linux_line.n)
		return 0;
	/* A config without a linux command (Debian's ESP stub, which loads /boot/grub/grub.cfg) has
	 * no entry to take the lines from. */
	rc = grub_parse_cfg_entry(cfg->text, size, g->file, &c->entry, &scratch);
	if (rc == -EBADMSG)
		return 0;
	if (rc < 0)
		return set_error(err, rc, "%s", scratch.message);
	return 0;
}
/* A PCR 9 file event: replaced by a new config, the kernel or the initrd, else carried over. */
int pred_walk_file(predict_ctx *c, mb_log_writer *w, const mb_event *ev, new_config **cur_cfg)
{
	char *path = grub_file_event_path(ev);
	const file_digests *fd = NULL;
	const char *what = NULL;
	size_t k;
	int rc;

	if (!path)
		return -ENOMEM;
	if (grub_is_config_path(path))
		*cur_cfg = NULL; /* the commands that follow are this config's, which stays */
	for (k = 0; k < c->n_cfg; k++) {
		new_config *cfg = &c->cfg[k];
		const mb_event_digest *d = ev->n_digests ? &ev->digests[0] : NULL;
		int b = d ? pred_bank_index(c, d->alg) : -1;

		if (!cfg->measured_path || strcmp(cfg->measured_path, path) != 0)
			continue;
		cfg->changed = b >= 0 && memcmp(cfg->d.d[b], d->bytes, d->size) != 0;
		*cur_cfg = cfg;
		cfg->matched = true;
		fd = &cfg->d;
		what = "grub.cfg";
		break;
	}
	if (!fd && c->kernel.have) {
		for (k = 0; k < c->old_kernel_paths.n; k++)
			if (pred_same_path(path, c->old_kernel_paths.w[k]))
				break;
		if (k < c->old_kernel_paths.n) {
			fd = &c->kernel;
			what = "the kernel";
			c->matched |= MB_PREDICT_KERNEL;
		}
	}
	if (!fd && c->initrd.have) {
		for (k = 1; k < c->old_initrd.n; k++)
			if (pred_same_path(path, c->old_initrd.w[k]))
				break;
		if (k < c->old_initrd.n) {
			if (c->old_initrd.n > 2)
				pred_note(c, 9, true, "today's boot loads %zu initrds; one new initrd was given", c->old_initrd.n - 1);
			fd = &c->initrd;
			what = "the initrd";
			c->matched |= MB_PREDICT_INITRD;
		}
	}
	free(path);
	if (!fd)
		return mb_log_writer_add_event(w, ev);
	pred_note(c, 9, false, "%s", what);
	rc = pred_write_event(c, w, ev, fd, NULL, 0, NULL, 0);
	return rc;
}
/* Rewrite one of GRUB's linux, initrd or kernel_cmdline strings for the next boot's loader. */
int pred_walk_loader(predict_ctx *c, mb_log_writer *w, const mb_event *ev, grub_event_kind kind)
{
	const char *kpath = c->kernel_path;
	grub_words own = { 0 };
	char *own_text = NULL, *text = NULL;
	int rc;

	/* GRUB may load more than one kernel (a fallback, a .signed copy): each keeps its own
	 * path unless the next boot's path was given. */
	if (!c->kernel_path_given && kind != GRUB_EVENT_INITRD && (own_text = grub_string_text(ev, NULL))) {
		rc = grub_split_words(own_text, own_text + strlen(own_text), &own);
		if (rc == -ENOMEM) { /* not "no path of its own": the next boot's would be written */
			grub_words_done(&own);
			free(own_text);
			return rc;
		}
		if (rc == 0 && own.n > (kind == GRUB_EVENT_LINUX ? 1u : 0u))
			kpath = own.w[kind == GRUB_EVENT_LINUX ? 1 : 0];
	}
	if (kind == GRUB_EVENT_LINUX) {
		char *args = grub_join(&c->args, 0);
		if (args && asprintf(&text, "%s %s%s%s", c->linux_cmd, kpath, c->args.n ? " " : "", args) < 0)
			text = NULL;
		free(args);
		pred_note(c, 8, false, "the linux command");
		c->matched |= MB_PREDICT_CMDLINE | MB_PREDICT_KERNEL_PATH;
	} else if (kind == GRUB_EVENT_INITRD) {
		char *paths = grub_join(&c->initrd_paths, 0);
		if (paths && asprintf(&text, "%s %s", c->initrd_cmd, paths) < 0)
			text = NULL;
		free(paths);
		pred_note(c, 8, false, "the initrd command");
		c->matched |= MB_PREDICT_INITRD_PATH;
	} else {
		text = grub_loader_cmdline(kpath, &c->args);
		pred_note(c, 8, false, "the kernel command line");
		c->matched |= MB_PREDICT_CMDLINE | MB_PREDICT_KERNEL_PATH;
	}
	grub_words_done(&own);
	free(own_text);
	if (!text)
		return -ENOMEM;
	rc = write_grub_string(c, w, ev, text);
	free(text);
	return rc;
}
