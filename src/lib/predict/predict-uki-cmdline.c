/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A UKI's command line on a systemd-boot boot (systemd 252.5 and later, Debian 12's 252.39):
 * systemd-boot reads the UKI's .cmdline (xstrn8_to_16: the bytes up to the first NUL, as
 * UTF-8), turns control characters into spaces and drops trailing spaces (mangle_stub_cmdline),
 * passes the result as the UKI's load options and measures them into PCR 12 as UTF-16LE with
 * the NUL (event data and digest input alike). systemd-stub measures the options it takes again
 * (without Secure Boot); with Secure Boot it converts its .cmdline the same way. Either way the
 * kernel gets that string and its EFI stub tags it in PCR 9 (LoadOptions, 0x8F3B22ED, digest of
 * the same bytes). The vm-uki real boot shows all three digests equal.
 *
 * Today's events are explained from today's UKI first: only when each of them is today's UKI's
 * .cmdline so converted (no edit at the menu, no other loader) are they replaced by the new
 * UKI's; anything else stays unpredictable, with the reason.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <mboot/digest.h>
#include <mboot/events.h>
#include <mboot/pe.h>
#include <mboot/policy.h>
#include "lib/predict/predict-internal.h"
#include "shared/fail.h"

/* What systemd-stub calls the credentials archive from /loader/credentials/ (systemd 252). */
#define GLOBAL_CREDENTIALS_TEXT "Global credentials initrd"

/* The load options systemd-boot makes of a UKI's .cmdline, UTF-16LE with the NUL, hashed in
 * every bank mboot computes; NULL with *why (a static reason) where it does not model them. */
static const char *convert(predict_ctx *c, const uint8_t *p, size_t n, uki_cmdline *out)
{
	size_t len = 0, end, i;

	for (; len < n && p[len]; len++)
		if (p[len] >= 0x80)
			return "it has non-ASCII bytes (systemd-boot's UTF-8 decoding is not modelled)";
	/* control characters become spaces, and trailing spaces go */
	for (end = len; end > 0 && p[end - 1] <= 0x20; end--)
		;
	if (end == 0)
		return "it is empty as systemd-boot converts it (systemd-stub then ignores the load options)";
	out->size = 2 * (end + 1);
	out->data = calloc(1, out->size);
	if (!out->data)
		return "out of memory";
	for (i = 0; i < end; i++)
		out->data[2 * i] = p[i] <= 0x1f ? ' ' : p[i];
	for (i = 0; i < c->n_banks; i++)
		if (mb_digest_by_alg(c->banks[i].alg) && mb_digest(c->banks[i].alg, out->data, out->size, out->d.d[i]) < 0)
			return "hashing failed";
	out->d.have = true;
	return NULL;
}

/* The UKI's command line (secs: its measured sections, buf/size: its bytes) into out, or *why
 * (malloc'd) says why not. Negative only when out of memory. */
int pred_uki_cmdline(predict_ctx *c, const mb_uki_section *secs, size_t n, const uint8_t *buf, size_t size,
		     uki_cmdline *out, char **why)
{
	const char *reason = "it has none (systemd-boot passes no load options)";

	*why = NULL;
	for (size_t k = 0; k < n; k++) {
		if (strcmp(secs[k].name, ".cmdline") != 0)
			continue;
		if (secs[k].raw_offset > size || secs[k].size > size - secs[k].raw_offset)
			reason = "it is past the end of the file";
		else
			reason = convert(c, buf + secs[k].raw_offset, secs[k].size, out);
		break;
	}
	if (!reason)
		return 0;
	free(out->data);
	out->data = NULL;
	*why = strdup(reason);
	return *why ? 0 : -ENOMEM;
}

/* Does the --efi r's digest in some algorithm equal the event's? */
static bool efi_names(const mb_efi_binary *r, const uint8_t (*digest)[MB_DIGEST_MAX], const mb_event *ev)
{
	for (size_t a = 0; digest && a < r->n; a++) {
		const mb_event_digest *d = mb_event_digest_for(ev, r->algs[a]);

		if (d && memcmp(d->bytes, digest[a], d->size) == 0)
			return true;
	}
	return false;
}

static int set_why(predict_ctx *c, int rc, char *why)
{
	if (rc < 0 || !why)
		return rc < 0 ? rc : -ENOMEM;
	if (c->cmd_why)
		free(why);
	else
		c->cmd_why = why;
	return 0;
}

/* Is the file at path a PE image whose Authenticode digest in every bank of app is app's? */
static bool is_app(predict_ctx *c, const char *path, const mb_event *app)
{
	uint16_t algs[MB_MAX_BANKS];
	uint8_t d[MB_MAX_BANKS][MB_DIGEST_MAX];
	const mb_event_digest *ed[MB_MAX_BANKS];
	size_t n = 0;
	mb_error e = { 0 };

	for (uint32_t j = 0; j < app->n_digests && n < MB_MAX_BANKS; j++)
		if (mb_digest_by_alg(app->digests[j].alg) && pred_bank_index(c, app->digests[j].alg) >= 0) {
			ed[n] = &app->digests[j];
			algs[n++] = app->digests[j].alg;
		}
	if (n == 0 || mb_pe_authenticode_file(path, 0, algs, n, d, &e) < 0)
		return false;
	for (size_t k = 0; k < n; k++)
		if (memcmp(d[k], ed[k]->bytes, ed[k]->size) != 0)
			return false;
	return true;
}

static int efi_file(const struct dirent *de)
{
	size_t n = strlen(de->d_name);

	return de->d_name[0] != '.' && n > 4 && strcasecmp(de->d_name + n - 4, ".efi") == 0;
}

static int sub_dir(const struct dirent *de)
{
	return de->d_name[0] != '.' && strcasecmp(de->d_name, "Linux") != 0;
}

/* The first *.efi of dir (names sorted) that is today's UKI, into *ret (malloc'd); 0 with *ret
 * NULL: none. Unreadable folders and files are skipped; negative only when out of memory. */
static int find_in(predict_ctx *c, const char *dir, const mb_event *app, char **ret)
{
	struct dirent **ents = NULL;
	struct stat st;
	int n = scandir(dir, &ents, efi_file, alphasort), rc = 0;

	for (int i = 0; i < n; i++) {
		char *path = NULL;

		if (!*ret && rc == 0) {
			if (asprintf(&path, "%s/%s", dir, ents[i]->d_name) < 0)
				rc = -ENOMEM;
			else if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && is_app(c, path, app))
				*ret = path, path = NULL;
		}
		free(path);
		free(ents[i]);
	}
	free(ents);
	return rc;
}

/* Today's UKI on an ESP of c->in->esp_dirs: EFI/Linux/ first, then EFI/ and its other folders. */
static int find_on_esp(predict_ctx *c, const mb_event *app, char **ret)
{
	int rc = 0;

	*ret = NULL;
	for (size_t r = 0; r < c->in->n_esp_dirs && !*ret && rc == 0; r++) {
		const char *root = c->in->esp_dirs[r];
		struct dirent **subs = NULL;
		char *efi = NULL, *dir = NULL;
		int n = 0;

		if (!root || asprintf(&efi, "%s/EFI", root) < 0 || asprintf(&dir, "%s/Linux", efi) < 0) {
			free(efi);
			return root ? -ENOMEM : -EINVAL;
		}
		rc = find_in(c, dir, app, ret);
		if (rc == 0 && !*ret)
			rc = find_in(c, efi, app, ret);
		if (rc == 0 && !*ret)
			n = scandir(efi, &subs, sub_dir, alphasort);
		for (int i = 0; i < n; i++) {
			char *sub = NULL;

			if (rc == 0 && !*ret)
				rc = asprintf(&sub, "%s/%s", efi, subs[i]->d_name) < 0 ? -ENOMEM : find_in(c, sub, app, ret);
			free(sub);
			free(subs[i]);
		}
		free(subs);
		free(dir);
		free(efi);
	}
	return rc;
}

/* Today's UKI: --uki-today, else the OLD of an --efi that names today's UKI event (that --efi is
 * then used up: its NEW must be --uki's image). Checked against today's PCR 4 event by its
 * Authenticode digest in every bank, then its .cmdline converted as systemd-boot does. */
int pred_plan_uki_today(predict_ctx *c, mb_error *err)
{
	const mb_boot_artifacts *b = c->in->boot;
	const char *path = b->uki_today;
	const mb_event *app;
	mb_uki_section secs[MB_UKI_MAX_SECTIONS];
	mb_pe_info *pe = NULL;
	uint8_t *buf = NULL, d[MB_DIGEST_MAX];
	size_t size = 0, n = 0;
	char *why = NULL, *found = NULL;
	bool same = true;
	int rc;

	if (!(c->matched & MB_PREDICT_UKI))
		return 0;
	app = mb_event_log_event(c->in->log, c->uki_app_event);
	for (size_t e = 0; e < b->n_efi && c->uki_today_efi < 0; e++) {
		const mb_efi_binary *r = &b->efi[e];

		if (!efi_names(r, r->old_digest, app))
			continue;
		/* its NEW is --uki's image: every digest it has equals the new UKI's */
		for (size_t a = 0; r->digest && a < r->n; a++) {
			int k = pred_bank_index(c, r->algs[a]);
			const mb_digest_info *alg = mb_digest_by_alg(r->algs[a]);

			if (k >= 0 && alg && memcmp(r->digest[a], c->uki_app.d[k], alg->size) != 0)
				return set_error(err, -EINVAL, "--efi %s replaces today's UKI by another image than --uki's",
						 r->description ? r->description : "OLD=NEW");
		}
		c->uki_today_efi = (int) e;
		if (!path)
			path = r->old_file;
	}
	if (!path && c->in->n_esp_dirs) {
		rc = find_on_esp(c, app, &found);
		if (rc < 0)
			return set_error(err, rc, rc == -ENOMEM ? "out of memory" : "an ESP folder is NULL");
		path = found;
	}
	if (!path)
		return set_why(c, 0, strdup(c->in->n_esp_dirs ? "today's UKI is not given (--uki-today FILE, or --efi "
					    "TODAY=NEW) nor found on the ESP (no *.efi under EFI/ has today's UKI's "
					    "Authenticode digest): its .cmdline is what explains today's events" :
					    "today's UKI is not given (--uki-today FILE, or --efi TODAY=NEW): its .cmdline "
					    "is what explains today's events"));
	rc = mb_pe_read_file(path, &buf, &size, err);
	if (rc >= 0)
		rc = mb_pe_parse(buf, size, 0, &pe, err);
	if (rc >= 0)
		rc = mb_uki_sections(pe, secs, &n, err);
	for (uint32_t j = 0; rc >= 0 && j < app->n_digests; j++) {
		const mb_event_digest *ed = &app->digests[j];

		if (!mb_digest_by_alg(ed->alg) || pred_bank_index(c, ed->alg) < 0)
			continue;
		rc = mb_pe_hash(pe, buf, size, ed->alg, d);
		if (rc < 0)
			rc = set_error(err, rc, "hashing: %s", mb_strerror(rc));
		same &= rc >= 0 && memcmp(d, ed->bytes, ed->size) == 0;
	}
	if (rc >= 0 && !same) {
		rc = asprintf(&why, "%s is not today's UKI: its Authenticode digest is not PCR 4 event %u's", path,
			      app->number) < 0 ? -ENOMEM : 0;
		rc = set_why(c, rc, why);
	} else if (rc >= 0) {
		rc = pred_uki_cmdline(c, secs, n, buf, size, &c->cmd_today, &why);
		if (rc >= 0 && why) {
			char *full = NULL;

			rc = asprintf(&full, "today's UKI's .cmdline: %s", why) < 0 ? -ENOMEM : 0;
			free(why);
			rc = set_why(c, rc, full);
		}
		if (rc < 0)
			rc = set_error(err, rc, "out of memory");
	}
	free(buf);
	mb_pe_info_free(pe);
	rc = rc < 0 ? prefix_error(err, rc, path) : 0;
	free(found);
	return rc;
}

/* Is ev today's command line: today's UKI's .cmdline as data, hashed as such in every bank? */
static bool explained(predict_ctx *c, const mb_event *ev, bool check_data)
{
	if (!c->cmd_today.data || (check_data && (ev->data_size != c->cmd_today.size ||
						  memcmp(ev->data, c->cmd_today.data, ev->data_size) != 0)))
		return false;
	for (uint32_t j = 0; j < ev->n_digests; j++) {
		int b = pred_bank_index(c, ev->digests[j].alg);

		if (b >= 0 && mb_digest_by_alg(ev->digests[j].alg) &&
		    memcmp(ev->digests[j].bytes, c->cmd_today.d.d[b], ev->digests[j].size) != 0)
			return false;
	}
	return true;
}

/* A UTF-16 EV_IPL of systemd-boot or systemd-stub in PCR 12 (or 8): the command line, replaced
 * by the new UKI's when it is today's UKI's; the stub's credentials archives are not computed. */
int pred_walk_uki_cmdline(predict_ctx *c, mb_log_writer *w, const mb_event *ev)
{
	char *text = mb_event_text(ev);
	const char *cred = mb_uki_dropin_description(MB_UKI_DROPIN_CREDENTIALS);

	if (text && ((cred && strcmp(text, cred) == 0) || strcmp(text, GLOBAL_CREDENTIALS_TEXT) == 0))
		pred_note(c, ev->pcr, true, "event %u: systemd-stub's archive of credentials from the ESP (\"%s\"), which "
			  "mboot does not compute", ev->number, text);
	else if (c->cmd_why)
		pred_note(c, ev->pcr, true, "event %u: systemd-boot's or systemd-stub's command line (UTF-16), not explained: %s",
			  ev->number, c->cmd_why);
	else if (!explained(c, ev, true))
		pred_note(c, ev->pcr, true, "event %u: today's command line is not today's UKI's .cmdline as systemd-boot "
			  "passes it (edited at the boot menu, or given by another loader): \"%.80s\"", ev->number,
			  text ? text : "?");
	else {
		free(text);
		pred_note(c, ev->pcr, false, "the new UKI's .cmdline, as systemd-boot passes it and it and systemd-stub "
			  "measure it (today's events were today's UKI's)");
		return pred_write_event(c, w, ev, &c->cmd_new.d, NULL, 0, c->cmd_new.data, c->cmd_new.size);
	}
	free(text);
	return mb_log_writer_add_event(w, ev);
}

/* The kernel's EFI stub's LoadOptions tag (PCR 9): the command line systemd-stub passed it. */
int pred_walk_uki_load_options(predict_ctx *c, mb_log_writer *w, const mb_event *ev)
{
	if (c->cmd_why)
		pred_note(c, 9, true, "event %u: the kernel's EFI stub measured the command line it was passed (LoadOptions "
			  "tag), not explained: %s", ev->number, c->cmd_why);
	else if (!explained(c, ev, false))
		pred_note(c, 9, true, "event %u: the kernel's EFI stub measured other load options than today's UKI's "
			  ".cmdline (LoadOptions tag)", ev->number);
	else {
		pred_note(c, 9, false, "the kernel's EFI stub's LoadOptions tag (the new UKI's .cmdline)");
		return pred_write_event(c, w, ev, &c->cmd_new.d, NULL, 0, NULL, 0);
	}
	return mb_log_writer_add_event(w, ev);
}
