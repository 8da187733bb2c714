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
 * digest the application event systemd-boot had the firmware measure before them.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mboot/digest.h>
#include <mboot/events.h>
#include <mboot/pe.h>
#include <mboot/policy.h>
#include <mboot/predict.h>
#include "lib/replay/pcr-values.h"
#include "lib/grub/grub.h"
#include "lib/grub/grub-script.h"
#include "shared/hex.h"
#include "lib/predict/efivar.h"
#include "shared/fail.h"
#include "shared/fileio.h"

#define LINUX_INITRD_TAG 0x8F3B22ECu
#define LINUX_LOAD_OPTIONS_TAG 0x8F3B22EDu
#define MAX_CONFIGS 32


typedef struct file_digests {
	bool have;
	uint8_t d[MB_MAX_BANKS][MB_DIGEST_MAX]; /* indexed like the log's banks */
} file_digests;

/* A grub.cfg of the next boot and the config event(s) of today's it replaces. */
typedef struct new_config {
	char *measured_path; /* as the log names it */
	char *text;
	file_digests d;
	bool changed;        /* today's digest differs (seen at its event) */
	bool matched;        /* an event was replaced */
} new_config;

typedef struct predict_ctx {
	const mb_predict_input *in;
	mb_predict_result *res;
	const mb_spec_id_alg *banks;
	size_t n_banks;
	file_digests kernel, initrd;
	new_config cfg[MAX_CONFIGS];
	size_t n_cfg;
	grub_entry entry;
	/* Today's loader commands, read from the log (the first of each), and every kernel path
	 * a linux command loaded (GRUB may run several). */
	grub_words old_linux, old_initrd, old_kernel_paths;
	bool kernel_path_given;
	/* The next boot's. */
	char *linux_cmd, *initrd_cmd, *kernel_path;
	grub_words args, initrd_paths;
	bool loader_changed;
	/* Today's PCR 8 commands a changed grub.cfg no longer has: the first is named, the rest counted. */
	unsigned commands_missing;
	/* What the walk found: the changes that applied (MB_PREDICT_*), and the measurements of
	 * systemd-boot/systemd-stub (its command line in PCR 12 or 8, a UKI's sections in PCR 11). */
	uint32_t matched;
	bool efi_applied, systemd_cmdline, uki;
	bool first_app, efi_after_first; /* a PCR 4 EFI application; an --efi replaced one after the first */
	/* PCR 8 by running the configs (grub-script.c): not used (today's line by line check),
	 * refused (PCR 8 unpredictable, the reason noted) or the model's strings replace today's */
	enum { MODEL_OFF, MODEL_REFUSED, MODEL_ON } model;
	grub_model_run model_run;
	bool model_written;
	/* --uki: the new image's events, and where today's log has the UKI's */
	size_t n_uki;
	const char *uki_names[MB_UKI_MAX_SECTIONS];
	file_digests uki_name_d[MB_UKI_MAX_SECTIONS], uki_content_d[MB_UKI_MAX_SECTIONS], uki_app;
	int uki_initrd;                  /* index of the new .initrd in uki_*, or -1 */
	file_digests today_initrd;       /* today's .initrd content event, when it has one */
	size_t uki_app_event, uki_first_pcr11; /* indices of today's events; SIZE_MAX: none */
	bool uki_written, uki_initrd_tag;
	efivar_set efivars; /* Secure Boot and MOK variables (PCR 7, 14) */
} predict_ctx;

static void note(predict_ctx *c, uint32_t pcr, bool unpredictable, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void note(predict_ctx *c, uint32_t pcr, bool unpredictable, const char *fmt, ...)
{
	char *add = NULL, *joined = NULL;
	va_list ap;

	if (pcr >= MB_PCR_COUNT)
		return;
	if (unpredictable)
		c->res->unpredictable |= 1u << pcr;
	va_start(ap, fmt);
	if (vasprintf(&add, fmt, ap) < 0)
		add = NULL;
	va_end(ap);
	if (!add)
		return;
	if (c->res->why[pcr] && strstr(c->res->why[pcr], add)) {
		free(add);
		return;
	}
	if (!c->res->why[pcr]) {
		c->res->why[pcr] = add;
		return;
	}
	if (asprintf(&joined, "%s; %s", c->res->why[pcr], add) >= 0) {
		free(c->res->why[pcr]);
		c->res->why[pcr] = joined;
	}
	free(add);
}

static int digest_file(predict_ctx *c, const char *path, file_digests *fd, mb_error *err)
{
	uint16_t algs[MB_MAX_BANKS];
	uint8_t out[MB_MAX_BANKS][MB_DIGEST_MAX];
	size_t i, n = 0;
	int rc;

	for (i = 0; i < c->n_banks; i++)
		if (mb_digest_by_alg(c->banks[i].alg))
			algs[n++] = c->banks[i].alg;
	rc = mb_digest_file(path, algs, n, out, err);
	if (rc < 0)
		return prefix_error(err, rc, path);
	for (i = 0, n = 0; i < c->n_banks; i++)
		if (mb_digest_by_alg(c->banks[i].alg))
			memcpy(fd->d[i], out[n++], MB_DIGEST_MAX);
	fd->have = true;
	return 0;
}

static int bank_index(const predict_ctx *c, uint16_t alg)
{
	size_t i;

	for (i = 0; i < c->n_banks; i++)
		if (c->banks[i].alg == alg)
			return (int) i;
	return -1;
}

/* Write ev with new digests from per-bank values (NULL entries: computed from hashed/len). */
static int write_event(predict_ctx *c, mb_log_writer *w, const mb_event *ev, const file_digests *fd,
		       const void *hashed, size_t hashed_len, const void *data, size_t data_size)
{
	uint8_t bytes[MB_MAX_BANKS][MB_DIGEST_MAX];
	mb_event_digest d[MB_MAX_BANKS];
	uint32_t i;

	for (i = 0; i < ev->n_digests; i++) {
		int b = bank_index(c, ev->digests[i].alg);

		d[i] = ev->digests[i];
		if (!mb_digest_by_alg(ev->digests[i].alg) || b < 0) {
			/* A bank mboot cannot compute: the old digest stays, and the PCR is unknown. */
			note(c, ev->pcr, true, "bank 0x%04x cannot be computed", ev->digests[i].alg);
			continue;
		}
		if (fd)
			memcpy(bytes[i], fd->d[b], ev->digests[i].size);
		else if (mb_digest(ev->digests[i].alg, hashed, hashed_len, bytes[i]) < 0)
			return -EIO;
		d[i].bytes = bytes[i];
	}
	c->res->events_rewritten++;
	return mb_log_writer_add(w, ev->pcr, ev->type, d, ev->n_digests, data ? data : ev->data,
				 data ? data_size : ev->data_size);
}

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

static bool same_path(const char *logged, const char *cmd_path)
{
	return strcmp(strip_device(logged), strip_device(cmd_path)) == 0;
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
		note(c, ev->pcr, true, "event %u: today's text does not hash to its digest, so how GRUB hashes it is unknown",
		     ev->number);
		return mb_log_writer_add_event(w, ev);
	}
	if (grub_string_parse(ev->data, ev->data_size, &old, &old_len, &label_len) == GRUB_STRING_NONE ||
	    asprintf(&data, "%.*s%s", (int) label_len, (const char *) ev->data, text) < 0)
		return -ENOMEM;
	/* MATCH_ALTERNATE: this GRUB hashed the trailing NUL too. */
	rc = write_event(c, w, ev, NULL, text, tlen + (check.status == MB_DIGEST_MATCH_ALTERNATE),
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
static bool command_in_config(const new_config *cfg, const mb_event *ev)
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

static int read_today(predict_ctx *c)
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
static int plan_config(predict_ctx *c, const mb_grub_config *g, new_config *cfg, mb_error *err)
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
	rc = digest_file(c, g->file, &cfg->d, err);
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

/* The new UKI's digests in every bank of the log mboot computes: the PCR 11 events (name, bytes
 * of each section) and its Authenticode digest (PCR 4). */
static int plan_uki(predict_ctx *c, mb_error *err)
{
	const char *path = c->in->boot.uki;
	mb_uki_section secs[MB_UKI_MAX_SECTIONS];
	mb_pe_info *pe = NULL;
	uint8_t *buf = NULL;
	size_t size = 0, b, k;
	int rc = mb_pe_read_file(path, &buf, &size, err);

	if (rc >= 0)
		rc = mb_pe_parse(buf, size, 0, &pe, err);
	if (rc >= 0)
		rc = mb_uki_sections(pe, secs, &c->n_uki, err);
	c->uki_initrd = -1;
	for (k = 0; rc >= 0 && k < c->n_uki; k++) {
		c->uki_names[k] = secs[k].name;
		if (strcmp(secs[k].name, ".initrd") == 0)
			c->uki_initrd = (int) k;
		c->uki_name_d[k].have = c->uki_content_d[k].have = true;
	}
	for (b = 0; rc >= 0 && b < c->n_banks; b++) {
		uint16_t alg = c->banks[b].alg;

		if (!mb_digest_by_alg(alg))
			continue; /* write_event says so at each event of that bank */
		rc = mb_pe_hash(pe, buf, size, alg, c->uki_app.d[b]);
		for (k = 0; rc >= 0 && k < c->n_uki; k++)
			rc = mb_uki_section_digests(&secs[k], buf, size, alg, c->uki_name_d[k].d[b], c->uki_content_d[k].d[b]);
		if (rc < 0)
			rc = set_error(err, rc, "hashing: %s", mb_strerror(rc));
	}
	c->uki_app.have = rc >= 0;
	free(buf);
	mb_pe_info_free(pe);
	return rc < 0 ? prefix_error(err, rc, path) : 0;
}

/* An EV_IPL of PCR 11 whose UTF-16 text is name and whose digest is not H(name NUL): the
 * content event of that section. */
static bool is_section_content(predict_ctx *c, const mb_event *ev, const char *name)
{
	char *text = mb_event_text(ev);
	bool same = text && strcmp(text, name) == 0;
	uint8_t d[MB_DIGEST_MAX];

	free(text);
	if (!same || !ev->n_digests || mb_digest(ev->digests[0].alg, name, strlen(name) + 1, d) < 0)
		return false;
	(void) c;
	return memcmp(d, ev->digests[0].bytes, ev->digests[0].size) != 0;
}

/* Today's UKI: the last PCR 4 application before systemd-stub's first PCR 11 event (systemd-boot
 * had the firmware load it), and today's .initrd content digests. */
static void find_today_uki(predict_ctx *c)
{
	size_t i, n = mb_event_log_count(c->in->log);

	c->uki_app_event = c->uki_first_pcr11 = SIZE_MAX;
	for (i = 0; i < n; i++) {
		const mb_event *ev = mb_event_log_event(c->in->log, i);

		if (ev->pcr == 4 && ev->type == MB_EV_EFI_BOOT_SERVICES_APPLICATION && c->uki_first_pcr11 == SIZE_MAX)
			c->uki_app_event = i;
		if (ev->pcr != 11 || ev->type != MB_EV_IPL)
			continue;
		if (c->uki_first_pcr11 == SIZE_MAX)
			c->uki_first_pcr11 = i;
		if (!c->today_initrd.have && is_section_content(c, ev, ".initrd")) {
			for (uint32_t j = 0; j < ev->n_digests; j++) {
				int b = bank_index(c, ev->digests[j].alg);

				if (b >= 0)
					memcpy(c->today_initrd.d[b], ev->digests[j].bytes, ev->digests[j].size);
			}
			c->today_initrd.have = true;
		}
	}
	if (c->uki_first_pcr11 != SIZE_MAX && c->uki_app_event != SIZE_MAX)
		c->matched |= MB_PREDICT_UKI;
}

static char *dup_or(const char *a, const char *b)
{
	return strdup(a ? a : b ? b : "");
}

static int plan(predict_ctx *c, mb_error *err)
{
	const mb_predict_input *in = c->in;
	size_t i;
	int rc;

	rc = read_today(c);
	if (rc < 0)
		return set_error(err, rc, "reading today's GRUB commands: %s", mb_strerror(rc));
	if (in->boot.n_grub_cfg > MAX_CONFIGS)
		return set_error(err, -EINVAL, "at most %d GRUB configs", MAX_CONFIGS);
	for (i = 0; i < in->boot.n_grub_cfg; i++) {
		rc = plan_config(c, &in->boot.grub_cfg[i], &c->cfg[i], err);
		c->n_cfg = i + 1;
		if (rc < 0)
			return rc;
	}
	if (in->boot.n_efi > 32)
		return set_error(err, -EINVAL, "at most 32 EFI applications");
	if (in->boot.kernel && (rc = digest_file(c, in->boot.kernel, &c->kernel, err)) < 0)
		return rc;
	if (in->boot.initrd && (rc = digest_file(c, in->boot.initrd, &c->initrd, err)) < 0)
		return rc;
	if (in->boot.uki) {
		if (in->boot.kernel || in->boot.initrd || in->boot.cmdline)
			return set_error(err, -EINVAL, "a UKI carries the kernel, initrd and command line: no kernel, "
					 "initrd or cmdline with it");
		if ((rc = plan_uki(c, err)) < 0)
			return rc;
		find_today_uki(c);
	}

	c->linux_cmd = dup_or(c->entry.linux_line.n ? c->entry.linux_line.w[0] : NULL,
			      c->old_linux.n ? c->old_linux.w[0] : "linux");
	c->initrd_cmd = dup_or(c->entry.initrd_line.n ? c->entry.initrd_line.w[0] : NULL,
			       c->old_initrd.n ? c->old_initrd.w[0] : "initrd");
	c->kernel_path = dup_or(in->boot.kernel_path ? in->boot.kernel_path : c->entry.linux_line.n > 1 ? c->entry.linux_line.w[1] : NULL,
				c->old_linux.n > 1 ? c->old_linux.w[1] : NULL);
	if (!c->linux_cmd || !c->initrd_cmd || !c->kernel_path)
		return set_error(err, -ENOMEM, "out of memory");
	if (in->boot.cmdline) {
		rc = grub_split_words(in->boot.cmdline, in->boot.cmdline + strlen(in->boot.cmdline), &c->args);
	} else {
		const grub_words *from = c->entry.linux_line.n ? &c->entry.linux_line : &c->old_linux;

		for (i = 2; i < from->n && rc == 0; i++)
			if (!(c->args.w[c->args.n++] = strdup(from->w[i])))
				rc = -ENOMEM;
	}
	if (rc < 0)
		return set_error(err, rc, "the command line: %s", mb_strerror(rc));
	if (in->boot.initrd_path) {
		c->initrd_paths.w[c->initrd_paths.n++] = strdup(in->boot.initrd_path);
	} else {
		const grub_words *from = c->entry.initrd_line.n ? &c->entry.initrd_line : &c->old_initrd;

		for (i = 1; i < from->n; i++)
			c->initrd_paths.w[c->initrd_paths.n++] = strdup(from->w[i]);
	}
	for (i = 0; i < c->args.n; i++)
		if (!in->boot.cmdline && strchr(c->args.w[i], '$'))
			note(c, 8, true, "the config's kernel arguments use a variable (%s): give the expanded --cmdline",
			     c->args.w[i]);
	c->loader_changed = in->boot.cmdline || c->entry.linux_line.n || in->boot.kernel_path || in->boot.initrd_path;
	c->kernel_path_given = in->boot.kernel_path || c->entry.linux_line.n > 1;
	return 0;
}

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
		if (lx && !in->boot.kernel && (c->old_linux.n < 2 || !same_path(c->old_linux.w[1], ws.w[1])))
			note(c, 9, true, "the entry that boots loads the kernel %s, not today's: give the file with --kernel", ws.w[1]);
		for (k = 1; ird && !in->boot.initrd && k < ws.n; k++)
			if (c->old_initrd.n != ws.n || !same_path(c->old_initrd.w[k], ws.w[k]))
				note(c, 9, true, "the entry that boots loads the initrd %s, not today's: give the file with --initrd",
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
static int plan_model(predict_ctx *c, mb_error *err)
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
	int rc = 0;

	if (in->n_grub_booted && (in->boot.cmdline || in->boot.kernel_path || in->boot.initrd_path))
		return set_error(err, -EINVAL, "the configs that booted (--grub-cfg-booted) are for running the new "
				 "config, whose linux and initrd lines --cmdline, --kernel-path and --initrd-path would replace");
	if ((in->grub_entry || in->grub_entry_kernel) && (in->boot.cmdline || in->boot.kernel_path || in->boot.initrd_path))
		return set_error(err, -EINVAL, "a menu entry picked by hand (--grub-entry, --grub-entry-kernel) is run from the "
				 "config, whose linux and initrd lines --cmdline, --kernel-path and --initrd-path would replace");
	if (in->grub_entry && in->grub_entry_kernel)
		return set_error(err, -EINVAL, "--grub-entry or --grub-entry-kernel, not both");
	if ((!in->boot.n_grub_cfg && !in->grub_entry && !in->grub_entry_kernel) || in->boot.cmdline ||
	    in->boot.kernel_path || in->boot.initrd_path)
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
			rc = digest_file(c, file, &fd, err);
		if (rc < 0) {
			free(file);
			goto out;
		}
		for (d = 0; ev && d < ev->n_digests; d++) {
			int b = bank_index(c, ev->digests[d].alg);

			if (b >= 0 && mb_digest_by_alg(ev->digests[d].alg) &&
			    memcmp(fd.d[b], ev->digests[d].bytes, ev->digests[d].size) != 0) {
				note(c, 8, true, "the booted copy %s of %s does not hash to today's PCR 9 event %u: it is not "
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
	rc = today_strings(in->log, &today, &n_today, &cmdline);
	if (rc < 0 || !(m = grub_model_new())) {
		rc = set_error(err, -ENOMEM, "out of memory");
		goto out;
	}
	c->model = MODEL_REFUSED;
	rc = grub_model_check(m, booted, paths.n, today, n_today, cmdline, &run);
	if (rc == 0 && run.why) {
		note(c, 8, true, "the GRUB model does not reproduce today's PCR 8 from the configs that booted: %s", run.why);
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
		note(c, 8, true, "%s", run.why);
		goto out;
	}
	if (run.why) {
		note(c, 8, true, "the GRUB model cannot tell what the new config runs: %s", run.why);
		goto out;
	}
	c->model = MODEL_ON;
	if (in->grub_entry || in->grub_entry_kernel)
		note(c, 8, false, "the menu entry %s picked by hand", run.entry ? run.entry : "?");
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
static int write_model_strings(predict_ctx *c, mb_log_writer *w, const mb_event *tmpl)
{
	mb_digest_check check;
	const uint8_t *t;
	size_t len, label_len = 0, i;
	bool upstream;
	int rc = 0;

	if (mb_event_check_digest(tmpl, &check) < 0 ||
	    (check.status != MB_DIGEST_MATCH && check.status != MB_DIGEST_MATCH_ALTERNATE)) {
		note(c, 8, true, "event %u: today's text does not hash to its digest, so how GRUB hashes it is unknown",
		     tmpl->number);
		c->model = MODEL_REFUSED;
		return mb_log_writer_add_event(w, tmpl);
	}
	grub_string_parse(tmpl->data, tmpl->data_size, &t, &len, &label_len);
	upstream = label_len > 0 && tmpl->data[label_len - 2] == ':';
	for (i = 0; i < c->model_run.n && rc == 0; i++) {
		const grub_model_string *s = &c->model_run.s[i];
		const char *label = upstream ? grub_string_prefix(s->kind)
				    : s->kind == GRUB_STRING_KERNEL_CMDLINE ? "grub_kernel_cmdline " : "grub_cmd ";
		char *data = NULL;
		size_t tl = strlen(s->text);

		if (asprintf(&data, "%s%s", label, s->text) < 0)
			return -ENOMEM;
		rc = write_event(c, w, tmpl, NULL, s->text, tl + (check.status == MB_DIGEST_MATCH_ALTERNATE), data,
				 strlen(data) + 1);
		free(data);
	}
	note(c, 8, false, "GRUB's commands, by running the new config (the model reproduced today's from the configs "
	     "that booted)");
	return rc;
}

static uint32_t tag_id(const mb_event *ev)
{
	if (ev->type != MB_EV_EVENT_TAG || ev->data_size < 4)
		return 0;
	return ev->data[0] | ev->data[1] << 8 | ev->data[2] << 16 | (uint32_t) ev->data[3] << 24;
}

/* An EV_IPL of systemd-boot or systemd-stub: UTF-16 text (GRUB's strings and paths are ASCII,
 * never a NUL second byte). */
static bool is_utf16_text(const mb_event *ev)
{
	return ev->type == MB_EV_IPL && ev->data_size >= 2 && ev->data_size % 2 == 0 && ev->data[0] && !ev->data[1];
}

/* A PCR 9 file event: replaced by a new config, the kernel or the initrd, else carried over. */
static int walk_file(predict_ctx *c, mb_log_writer *w, const mb_event *ev, new_config **cur_cfg)
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
		int b = d ? bank_index(c, d->alg) : -1;

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
			if (same_path(path, c->old_kernel_paths.w[k]))
				break;
		if (k < c->old_kernel_paths.n) {
			fd = &c->kernel;
			what = "the kernel";
			c->matched |= MB_PREDICT_KERNEL;
		}
	}
	if (!fd && c->initrd.have) {
		for (k = 1; k < c->old_initrd.n; k++)
			if (same_path(path, c->old_initrd.w[k]))
				break;
		if (k < c->old_initrd.n) {
			if (c->old_initrd.n > 2)
				note(c, 9, true, "today's boot loads %zu initrds; one new initrd was given", c->old_initrd.n - 1);
			fd = &c->initrd;
			what = "the initrd";
			c->matched |= MB_PREDICT_INITRD;
		}
	}
	free(path);
	if (!fd)
		return mb_log_writer_add_event(w, ev);
	note(c, 9, false, "%s", what);
	rc = write_event(c, w, ev, fd, NULL, 0, NULL, 0);
	return rc;
}

/* A PCR 4 EFI application: replaced by an --efi whose old digest it has, else carried over.
 * *replaced says which. */
static int walk_efi(predict_ctx *c, mb_log_writer *w, const mb_event *ev, bool *replaced, uint32_t *efi_used)
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
			int b = bank_index(c, ev->digests[j].alg);

			for (a = 0; a < r->n && r->algs[a] != ev->digests[j].alg; a++)
				;
			if (b < 0)
				continue;
			if (a == r->n) {
				note(c, 4, true, "no new %s digest for %s", mb_digest_by_alg(ev->digests[j].alg) ?
				     mb_digest_by_alg(ev->digests[j].alg)->name : "?",
				     r->description ? r->description : "an EFI application");
				memcpy(fd.d[b], ev->digests[j].bytes, ev->digests[j].size);
			} else {
				memcpy(fd.d[b], r->digest[a], ev->digests[j].size);
			}
		}
		note(c, 4, false, "%s", r->description ? r->description : "an EFI application");
		*efi_used |= 1u << e;
		*replaced = true;
		c->efi_applied = true;
		return write_event(c, w, ev, &fd, NULL, 0, NULL, 0);
	}
	return mb_log_writer_add_event(w, ev);
}

/* Rewrite one of GRUB's linux, initrd or kernel_cmdline strings for the next boot's loader. */
static int walk_loader(predict_ctx *c, mb_log_writer *w, const mb_event *ev, grub_event_kind kind)
{
	const char *kpath = c->kernel_path;
	grub_words own = { 0 };
	char *own_text = NULL, *text = NULL;
	int rc;

	/* GRUB may load more than one kernel (a fallback, a .signed copy): each keeps its own
	 * path unless the next boot's path was given. */
	if (!c->kernel_path_given && kind != GRUB_EVENT_INITRD && (own_text = grub_string_text(ev, NULL))) {
		if (grub_split_words(own_text, own_text + strlen(own_text), &own) == 0 &&
		    own.n > (kind == GRUB_EVENT_LINUX ? 1u : 0u))
			kpath = own.w[kind == GRUB_EVENT_LINUX ? 1 : 0];
	}
	if (kind == GRUB_EVENT_LINUX) {
		char *args = grub_join(&c->args, 0);
		if (args && asprintf(&text, "%s %s%s%s", c->linux_cmd, kpath, c->args.n ? " " : "", args) < 0)
			text = NULL;
		free(args);
		note(c, 8, false, "the linux command");
		c->matched |= MB_PREDICT_CMDLINE | MB_PREDICT_KERNEL_PATH;
	} else if (kind == GRUB_EVENT_INITRD) {
		char *paths = grub_join(&c->initrd_paths, 0);
		if (paths && asprintf(&text, "%s %s", c->initrd_cmd, paths) < 0)
			text = NULL;
		free(paths);
		note(c, 8, false, "the initrd command");
		c->matched |= MB_PREDICT_INITRD_PATH;
	} else {
		text = grub_loader_cmdline(kpath, &c->args);
		note(c, 8, false, "the kernel command line");
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

/* systemd-stub's PCR 11 events for the new UKI, in place of today's (tmpl: today's first, for
 * the banks and the event type): per section its name, then its bytes; each event's data is the
 * section name in UTF-16 with its NUL, as the stub logs it. */
static int write_uki_events(predict_ctx *c, mb_log_writer *w, const mb_event *tmpl)
{
	uint8_t data[2 * 16];
	int rc = 0;

	for (size_t k = 0; k < c->n_uki && rc == 0; k++) {
		size_t len = strlen(c->uki_names[k]), j;

		for (j = 0; j <= len; j++) {
			data[2 * j] = (uint8_t) c->uki_names[k][j];
			data[2 * j + 1] = 0;
		}
		rc = write_event(c, w, tmpl, &c->uki_name_d[k], NULL, 0, data, 2 * (len + 1));
		if (rc == 0)
			rc = write_event(c, w, tmpl, &c->uki_content_d[k], NULL, 0, data, 2 * (len + 1));
	}
	note(c, 11, false, "the UKI's sections as systemd-stub measures them (the value when it starts the kernel; "
	     "systemd-pcrphase's boot phases come later and are not included)");
	return rc;
}

/* The Linux EFI stub's initrd tag (PCR 9) on a UKI boot: the initrd systemd-stub passed it. It is
 * the .initrd section when today's tag has today's .initrd digest (no credentials or system
 * extensions were appended); anything else is not computed. */
static int walk_uki_initrd_tag(predict_ctx *c, mb_log_writer *w, const mb_event *ev)
{
	const mb_event_digest *d = ev->n_digests ? &ev->digests[0] : NULL;
	int b = d ? bank_index(c, d->alg) : -1;

	c->uki_initrd_tag = true;
	if (!c->today_initrd.have || b < 0 || memcmp(c->today_initrd.d[b], d->bytes, d->size) != 0) {
		note(c, 9, true, "event %u: the kernel's EFI stub tagged an initrd that is not today's .initrd section "
		     "alone (systemd-stub appends credentials and system extensions), which mboot does not compute",
		     ev->number);
		return mb_log_writer_add_event(w, ev);
	}
	if (c->uki_initrd < 0) {
		note(c, 9, true, "event %u: the kernel's EFI stub tagged today's .initrd; the new UKI has none", ev->number);
		return mb_log_writer_add_event(w, ev);
	}
	note(c, 9, false, "the kernel's EFI stub's initrd tag (the UKI's .initrd)");
	return write_event(c, w, ev, &c->uki_content_d[c->uki_initrd], NULL, 0, NULL, 0);
}

/* A Secure Boot or MOK variable event (lib/predict/efivar.c): rewritten (*done), or carried
 * over by the caller, its PCR marked unpredictable when the new variables make it unknown. */
static int walk_efivar(predict_ctx *c, mb_log_writer *w, const mb_event *ev, bool *done)
{
	efivar_action a;
	int rc = efivar_event(&c->efivars, ev, &a);

	if (rc == 0 && a.unpredictable)
		note(c, ev->pcr, true, "%s", a.unpredictable);
	else if (rc == 0 && a.rewrite) {
		note(c, ev->pcr, false, "%s", a.changed ? a.changed : "an EFI variable");
		rc = write_event(c, w, ev, NULL, a.hashed, a.hashed_size, a.data, a.data_size);
		*done = rc == 0;
	}
	efivar_action_done(&a);
	return rc;
}

static int walk(predict_ctx *c, mb_log_writer *w, uint32_t *efi_used)
{
	const mb_predict_input *in = c->in;
	const mb_boot_artifacts *b = &in->boot;
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
				note(c, 4, false, "the UKI (its Authenticode digest)");
				c->first_app = true;
				rc = write_event(c, w, ev, &c->uki_app, NULL, 0, NULL, 0);
				continue;
			}
			if (ev->pcr == 11 && ev->type == MB_EV_IPL) {
				if (!c->uki_written)
					rc = write_uki_events(c, w, ev);
				c->uki_written = true;
				continue;
			}
			if (ev->pcr == 9 && tag_id(ev) == LINUX_INITRD_TAG) {
				rc = walk_uki_initrd_tag(c, w, ev);
				continue;
			}
			/* The kernel's EFI stub measures the command line systemd-stub passed it: the
			 * new UKI's .cmdline or an override, as in PCR 12 (a real boot of a UKI with
			 * another .cmdline moved this tag). */
			if (ev->pcr == 9 && tag_id(ev) == LINUX_LOAD_OPTIONS_TAG)
				note(c, 9, true, "event %u: the Linux EFI stub measured the command line systemd-stub passed "
				     "it (LoadOptions tag): the new UKI's .cmdline or an override, which is not in the log",
				     ev->number);
			if (i > c->uki_app_event && ev->pcr == 4 && ev->type == MB_EV_EFI_BOOT_SERVICES_APPLICATION)
				note(c, 4, true, "event %u: an EFI application started after the UKI, which mboot does not "
				     "compute", ev->number);
		}
		if (ev->pcr == 9 && ev->type == MB_EV_IPL) {
			rc = walk_file(c, w, ev, &cur_cfg);
			continue;
		}
		if (ev->pcr == 9 && tag_id(ev) == LINUX_INITRD_TAG && c->initrd.have) {
			note(c, 9, false, "the EFI stub's initrd tag");
			c->matched |= MB_PREDICT_INITRD;
			rc = write_event(c, w, ev, &c->initrd, NULL, 0, NULL, 0);
			continue;
		}
		if (ev->pcr == 9 && tag_id(ev) == LINUX_LOAD_OPTIONS_TAG && c->loader_changed) {
			/* what the stub received as its command line, in whatever form the loader passed it */
			note(c, 9, true, "event %u: the Linux EFI stub measured its command line (LoadOptions tag), "
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
				rc = write_model_strings(c, w, ev);
			}
			continue;
		}
		if (kind != GRUB_EVENT_NONE && c->loader_changed && c->model == MODEL_OFF) {
			rc = walk_loader(c, w, ev, kind);
			continue;
		}
		if (ev->pcr == 8 && ev->type == MB_EV_IPL && cur_cfg && cur_cfg->changed && kind == GRUB_EVENT_NONE &&
		    c->model == MODEL_OFF &&
		    !command_in_config(cur_cfg, ev)) {
			char *text = c->commands_missing++ ? NULL : grub_string_text(ev, NULL);

			if (c->commands_missing == 1)
				note(c, 8, true, "grub.cfg changed and today's command \"%.60s\" is not in it: GRUB measures the "
				     "commands it runs, after expansion", text ? text : "?");
			free(text);
		}
		/* systemd-boot (type 1 entries) and systemd-stub measure the kernel command line as
		 * UTF-16 into PCR 12 (older systemd-boot: PCR 8); the new kernel's entry or UKI sets it. */
		if ((ev->pcr == 12 || ev->pcr == 8) && is_utf16_text(ev)) {
			if (entry_changes && !c->systemd_cmdline)
				note(c, ev->pcr, true, "systemd-boot or systemd-stub measured the kernel command line (UTF-16, "
				     "event %u), which mboot does not compute; the new kernel's boot entry or UKI sets it", ev->number);
			if (entry_changes)
				c->matched |= MB_PREDICT_CMDLINE;
			/* systemd 252's systemd-boot passes a UKI's .cmdline as its load options and
			 * measures them; systemd-stub measures them again without Secure Boot; an edit in
			 * the menu replaces them. Which happened today is not in the log. */
			if (b->uki && !c->systemd_cmdline)
				note(c, ev->pcr, true, "systemd-boot or systemd-stub measured the kernel command line (UTF-16, "
				     "event %u): systemd 252's systemd-boot passes the UKI's .cmdline as load options and "
				     "measures them, the stub measures them again without Secure Boot, a menu edit changes "
				     "them; which happened is not in the log", ev->number);
			c->systemd_cmdline = true;
		}
		if (ev->pcr == 11 && ev->type == MB_EV_IPL)
			c->uki = true;
		if (ev->pcr == 4 && ev->type == MB_EV_EFI_BOOT_SERVICES_APPLICATION) {
			bool replaced;

			rc = walk_efi(c, w, ev, &replaced, efi_used);
			/* today's application, kept, revoked by a new dbx: the boot stops there */
			if (!replaced && c->efivars.n) {
				char *revoked = efivar_revoked_app(&c->efivars, ev);

				if (revoked) {
					note(c, 4, true, "%s", revoked);
					note(c, 7, true, "%s", revoked);
				}
				free(revoked);
			}
			/* the first application is the boot manager (shim, GRUB, systemd-boot), never the kernel */
			c->efi_after_first |= replaced && c->first_app;
			c->first_app = true;
			/* GRUB had the kernel its linux command loaded measured here too (shim's Verify, or
			 * LoadImage): its Authenticode digest, which no --kernel gives. */
			if (!replaced && after_linux && b->kernel && !kernel_app_noted)
				note(c, 4, true, "GRUB's linux command had the kernel measured as an EFI application too (event %u, "
				     "its Authenticode digest): name today's and the new kernel with --efi OLD=NEW", ev->number);
			kernel_app_noted |= !replaced && after_linux && b->kernel;
			continue;
		}
		if (c->efivars.n && (ev->pcr == 7 || ev->pcr == 14)) {
			bool done = false;

			rc = walk_efivar(c, w, ev, &done);
			if (rc < 0 || done)
				continue;
		}
		rc = mb_log_writer_add_event(w, ev);
	}
	if (c->commands_missing > 1)
		note(c, 8, true, "%u more of today's commands are not in it", c->commands_missing - 1);
	/* A UKI's sections (kernel, initrd, command line, ...) are measured into PCR 11 by
	 * systemd-stub, the UKI itself into PCR 4: an --efi may be the UKI. */
	if (b->uki && c->uki_initrd >= 0 && !c->today_initrd.have && !c->uki_initrd_tag)
		note(c, 9, true, "the new UKI has an .initrd and today's had none: the kernel's EFI stub may tag it");
	if (!b->uki && c->uki && (entry_changes || c->efi_applied))
		note(c, 11, true, "systemd-stub measured the UKI's sections, which mboot does not compute: give the new "
		     "UKI with --uki");
	if (!b->uki && c->uki && c->efi_applied)
		note(c, 12, true, "systemd-stub measures the UKI's command line, which mboot does not compute");
	if (!c->uki && !c->systemd_cmdline)
		return rc;
	/* systemd-boot loads a kernel or UKI with LoadImage: the firmware measures it into PCR 4. */
	if (c->first_app && !c->efi_after_first && (b->kernel || (c->uki && entry_changes)))
		note(c, 4, true, "systemd-boot loads the kernel (or UKI) as an EFI application, measured into PCR 4 by "
		     "its Authenticode digest: name today's and the new one with --efi OLD=NEW");
	if (b->kernel && (c->first_app || c->uki))
		c->matched |= MB_PREDICT_KERNEL;
	if (c->uki)
		c->matched |= (b->initrd ? MB_PREDICT_INITRD : 0) | (b->cmdline ? MB_PREDICT_CMDLINE : 0);
	return rc;
}

MB_EXPORT int mb_predict(const mb_predict_input *in, mb_predict_result *ret, mb_error *err)
{
	predict_ctx c = { 0 };
	uint32_t efi_used = 0;
	mb_log_writer *w = NULL;
	mb_pcr_values *today = NULL;
	const uint8_t *bytes;
	size_t size, b;
	int rc;

	memset(ret, 0, sizeof(*ret));
	c.in = in;
	c.res = ret;
	c.n_banks = mb_event_log_banks(in->log, &c.banks);
	rc = plan(&c, err);
	if (rc == 0)
		rc = plan_model(&c, err);
	if (rc == 0 && (in->grub_entry || in->grub_entry_kernel) && c.model == MODEL_OFF)
		note(&c, 8, true, "a menu entry picked by hand is followed only by running the configs as GRUB does, "
		     "which needs a copy of each config that booted today (--grub-cfg-booted, --grub-booted-dir)");
	if (rc == 0)
		rc = efivar_plan(in, &c.efivars, err);
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
		const mb_pcr_bank *p = &ret->values->banks[b];
		const mb_pcr_bank *t = pcrv_bank_const(today, p->alg);
		uint32_t pcr;

		ret->touched |= p->present;
		for (pcr = 0; pcr < MB_PCR_COUNT; pcr++)
			if (t && (p->present & (1u << pcr)) && memcmp(p->value[pcr], t->value[pcr], p->size) != 0)
				ret->changed |= 1u << pcr;
	}
	/* What was asked and found nothing to change, and what cannot be predicted: no value. */
	ret->unmatched |= ((in->boot.kernel ? MB_PREDICT_KERNEL : 0) | (in->boot.initrd ? MB_PREDICT_INITRD : 0) |
			  (in->boot.cmdline ? MB_PREDICT_CMDLINE : 0) | (in->boot.kernel_path ? MB_PREDICT_KERNEL_PATH : 0) |
			  (in->boot.initrd_path ? MB_PREDICT_INITRD_PATH : 0) | (in->boot.uki ? MB_PREDICT_UKI : 0)) &
			 ~c.matched;
	for (b = 0; b < in->boot.n_efi; b++)
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
	free(c.linux_cmd);
	free(c.initrd_cmd);
	free(c.kernel_path);
	for (b = 0; b < c.n_cfg; b++) {
		free(c.cfg[b].measured_path);
		free(c.cfg[b].text);
	}
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
