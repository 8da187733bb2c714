/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grub/grub.h"
#include "shared/fail.h"
#include "shared/fileio.h"

void grub_words_done(grub_words *ws)
{
	size_t i;

	for (i = 0; i < ws->n; i++)
		free(ws->w[i]);
	ws->n = 0;
}

int grub_split_words(const char *s, const char *end, grub_words *ws)
{
	while (s < end) {
		char *w;
		size_t o = 0;
		char quote = 0;

		while (s < end && (*s == ' ' || *s == '\t' || *s == '\r'))
			s++;
		if (s >= end || *s == '#')
			break;
		if (ws->n >= GRUB_MAX_WORDS)
			return -E2BIG;
		w = malloc((size_t) (end - s) + 1);
		if (!w)
			return -ENOMEM;
		while (s < end && (quote || (*s != ' ' && *s != '\t' && *s != '\r'))) {
			if (!quote && (*s == '\'' || *s == '"')) {
				quote = *s++;
			} else if (quote && *s == quote) {
				quote = 0;
				s++;
			} else if (*s == '\\' && s + 1 < end &&
				   (!quote || (quote == '"' && (s[1] == '$' || s[1] == '"' || s[1] == '\\')))) {
				/* Between double quotes a backslash escapes only $, " and \ (GRUB manual,
				 * "Quoting"); before anything else it stays. */
				w[o++] = s[1];
				s += 2;
			} else {
				w[o++] = *s++;
			}
		}
		w[o] = 0;
		ws->w[ws->n++] = w;
	}
	return 0;
}

char *grub_join(const grub_words *ws, size_t from)
{
	size_t i, len = 1;
	char *out;

	for (i = from; i < ws->n; i++)
		len += strlen(ws->w[i]) + 1;
	out = malloc(len);
	if (!out)
		return NULL;
	len = 0;
	for (i = from; i < ws->n; i++) {
		size_t k = strlen(ws->w[i]);

		if (i > from)
			out[len++] = ' ';
		memcpy(out + len, ws->w[i], k);
		len += k;
	}
	out[len] = 0;
	return out;
}

char *grub_join_list(const grub_words *ws, const char *sep)
{
	size_t i, len = 1, at = 0, sl = strlen(sep);
	char *out;

	for (i = 0; i < ws->n; i++)
		len += strlen(ws->w[i]) + sl;
	out = malloc(len);
	if (!out)
		return NULL;
	for (i = 0; i < ws->n; i++) {
		size_t k = strlen(ws->w[i]);

		if (i) {
			memcpy(out + at, sep, sl);
			at += sl;
		}
		memcpy(out + at, ws->w[i], k);
		at += k;
	}
	out[at] = 0;
	return out;
}

bool grub_is_cmd(const char *w, const char *base)
{
	size_t n = strlen(base);

	return strncmp(w, base, n) == 0 && (w[n] == 0 || strcmp(w + n, "efi") == 0 || strcmp(w + n, "16") == 0);
}

void grub_entry_done(grub_entry *e)
{
	grub_words_done(&e->linux_line);
	grub_words_done(&e->initrd_line);
}

int grub_parse_cfg_entry(const char *text, size_t size, const char *name, grub_entry *e, mb_error *err)
{
	const char *p = text, *end = text + size;
	int rc;

	while (p < end && (!e->linux_line.n || !e->initrd_line.n)) {
		const char *eol = memchr(p, '\n', (size_t) (end - p));
		grub_words ws = { 0 };

		if (!eol)
			eol = end;
		rc = grub_split_words(p, eol, &ws);
		if (rc < 0) {
			grub_words_done(&ws);
			grub_entry_done(e);
			return rc == -E2BIG ? set_error(err, rc, "%s: a line with too many words", name)
					    : set_error(err, rc, "%s: out of memory", name);
		}
		if (ws.n >= 2 && !e->linux_line.n && grub_is_cmd(ws.w[0], "linux"))
			e->linux_line = ws;
		else if (ws.n >= 2 && !e->initrd_line.n && grub_is_cmd(ws.w[0], "initrd"))
			e->initrd_line = ws;
		else
			grub_words_done(&ws);
		p = eol < end ? eol + 1 : end;
	}
	if (!e->linux_line.n) {
		grub_entry_done(e);
		return set_error(err, -EBADMSG, "%s: no linux command found", name);
	}
	return 0;
}

int grub_read_cfg_entry(const char *path, grub_entry *e, mb_error *err)
{
	uint8_t *text;
	size_t size;
	int rc = file_read(path, GRUB_CFG_MAX, &text, &size, err);

	if (rc < 0)
		return rc;
	rc = grub_parse_cfg_entry((const char *) text, size, path, e, err);
	free(text);
	return rc;
}

/* The labels GRUB writes before a measured string, each with the separator. */
static const struct {
	const char *label;
	grub_string_kind kind;
	bool upstream;
} string_labels[] = {
	/* Upstream (grub-core/commands/tpm.c), and the kind's canonical label: the first. */
	{ "grub_cmd: ", GRUB_STRING_CMD, true },
	{ "kernel_cmdline: ", GRUB_STRING_KERNEL_CMDLINE, true },
	{ "module_cmdline: ", GRUB_STRING_MODULE_CMDLINE, true },
	/* GRUB 2.02 with the CoreOS/Fedora/RHEL TPM patches: "%s %s", kind, text (no colon);
	 * seen on Fedora 31 (corpus fwupd/binary_bios_measurements-v1). */
	{ "grub_cmd ", GRUB_STRING_CMD, false },
	{ "grub_kernel_cmdline ", GRUB_STRING_KERNEL_CMDLINE, false },
};

const char *grub_string_prefix(grub_string_kind k)
{
	size_t i;

	for (i = 0; i < sizeof(string_labels) / sizeof(string_labels[0]); i++)
		if (string_labels[i].kind == k)
			return string_labels[i].label;
	return "";
}

const char *grub_string_label_like(grub_string_kind k, const uint8_t *data, size_t size)
{
	bool upstream = false;
	size_t i;

	for (i = 0; i < sizeof(string_labels) / sizeof(string_labels[0]); i++)
		if (size >= strlen(string_labels[i].label) &&
		    memcmp(data, string_labels[i].label, strlen(string_labels[i].label)) == 0) {
			upstream = string_labels[i].upstream;
			break;
		}
	for (i = 0; i < sizeof(string_labels) / sizeof(string_labels[0]); i++)
		if (string_labels[i].kind == k && string_labels[i].upstream == upstream)
			return string_labels[i].label;
	return "";
}

grub_string_kind grub_string_parse(const uint8_t *data, size_t size, const uint8_t **text, size_t *len,
				   size_t *label_len)
{
	size_t n, i;

	if (size == 0)
		return GRUB_STRING_NONE;
	/* GRUB always writes the NUL; a string without it is still judged as GRUB's. */
	n = size - (data[size - 1] == 0);
	for (i = 0; i < sizeof(string_labels) / sizeof(string_labels[0]); i++) {
		size_t p = strlen(string_labels[i].label);

		if (n >= p && memcmp(data, string_labels[i].label, p) == 0) {
			*text = data + p;
			*len = n - p;
			if (label_len)
				*label_len = p;
			return string_labels[i].kind;
		}
	}
	return GRUB_STRING_NONE;
}

grub_string_kind grub_string_split(const mb_event *ev, const uint8_t **text, size_t *len)
{
	if (ev->type != MB_EV_IPL || ev->pcr != 8)
		return GRUB_STRING_NONE;
	return grub_string_parse(ev->data, ev->data_size, text, len, NULL);
}

/* Is the command text "<cmd>[efi|16]" followed by its arguments or nothing? "linux" and
 * "linuxefi"/"linux16", not "linux_gfx_mode". */
static bool text_is_cmd(const uint8_t *t, size_t n, const char *cmd)
{
	size_t k = strlen(cmd), m = k;

	if (n < k || memcmp(t, cmd, k) != 0)
		return false;
	if (m + 3 <= n && memcmp(t + m, "efi", 3) == 0)
		m += 3;
	else if (m + 2 <= n && memcmp(t + m, "16", 2) == 0)
		m += 2;
	return m == n || t[m] == ' ' || t[m] == 0;
}

grub_event_kind grub_event_kind_of(const mb_event *ev)
{
	const uint8_t *t;
	size_t n;

	switch (grub_string_split(ev, &t, &n)) {
	case GRUB_STRING_KERNEL_CMDLINE:
		return GRUB_EVENT_KERNEL_CMDLINE;
	case GRUB_STRING_CMD:
		return text_is_cmd(t, n, "linux") ? GRUB_EVENT_LINUX : text_is_cmd(t, n, "initrd") ? GRUB_EVENT_INITRD
												 : GRUB_EVENT_NONE;
	default:
		return GRUB_EVENT_NONE;
	}
}

char *grub_string_text(const mb_event *ev, grub_string_kind *ret_kind)
{
	const uint8_t *t;
	size_t n;
	grub_string_kind k = grub_string_split(ev, &t, &n);
	char *s;

	if (ret_kind)
		*ret_kind = k;
	if (k == GRUB_STRING_NONE)
		return NULL;
	while (n > 0 && t[n - 1] == 0)
		n--;
	s = malloc(n + 1);
	if (s) {
		memcpy(s, t, n);
		s[n] = 0;
	}
	return s;
}

char *grub_loader_cmdline(const char *path, const grub_words *args)
{
	size_t len = 1, i;
	char *out, *o;

	len += 2 * strlen(path) + 3;
	for (i = 0; i < args->n; i++)
		len += 2 * strlen(args->w[i]) + 4;
	out = malloc(len);
	if (!out)
		return NULL;
	o = out;
	for (i = 0; i <= args->n; i++) {
		const char *w = i == 0 ? path : args->w[i - 1];
		bool space = strpbrk(w, " \t") != NULL;

		if (i)
			*o++ = ' ';
		if (space)
			*o++ = '"';
		for (; *w; w++) {
			if (*w == '\\' || *w == '\'' || *w == '"')
				*o++ = '\\';
			*o++ = *w;
		}
		if (space)
			*o++ = '"';
	}
	*o = 0;
	return out;
}

/* The first word of a command, and whether it is one of names[]. */
static bool command_is(const uint8_t *t, size_t n, const char *const *names)
{
	size_t w = 0;

	while (w < n && t[w] != ' ')
		w++;
	for (; *names; names++)
		if (strlen(*names) == w && memcmp(t, *names, w) == 0)
			return true;
	return false;
}

/* Does cmdline start with the command's first argument (the kernel's path)? GRUB re-quotes
 * arguments with blanks or quotes in the command line: such a path cannot be compared. */
static bool starts_with_path(const uint8_t *cmd, size_t cmd_len, const uint8_t *cmdline, size_t len)
{
	size_t a = 0, b, i;

	while (a < cmd_len && cmd[a] != ' ')
		a++;
	if (a == cmd_len)
		return false; /* "linux" without a path loads nothing */
	b = ++a;
	while (b < cmd_len && cmd[b] != ' ')
		b++;
	for (i = a; i < b; i++)
		if (cmd[i] == '"' || cmd[i] == '\'' || cmd[i] == '\\')
			return true;
	return len >= b - a && memcmp(cmdline, cmd + a, b - a) == 0 && (len == b - a || cmdline[b - a] == ' ');
}

grub_string_kind grub_string_walk_next(grub_string_walk *w, const mb_event *ev)
{
	static const char *const linux_loaders[] = { "linux", "linuxefi", "linux16", NULL };
	static const char *const other_kernel_loaders[] = { "multiboot", "multiboot2", "xen_hypervisor", NULL };
	static const char *const module_loaders[] = { "module", "module2", "xen_module", NULL };
	grub_string_kind kind;
	const uint8_t *text;
	size_t len;

	if (ev->pcr != 8)
		return GRUB_STRING_NONE;
	if (grub_string_split(ev, &text, &len) == GRUB_STRING_NONE) {
		w->prev = GRUB_STRING_NONE; /* something else in between: not the loader's string */
		return GRUB_STRING_NONE;
	}
	kind = GRUB_STRING_CMD;
	if (w->prev == GRUB_STRING_CMD) {
		if (command_is(w->prev_text, w->prev_len, linux_loaders)) {
			if (starts_with_path(w->prev_text, w->prev_len, text, len))
				kind = GRUB_STRING_KERNEL_CMDLINE;
		} else if (command_is(w->prev_text, w->prev_len, other_kernel_loaders)) {
			kind = GRUB_STRING_KERNEL_CMDLINE;
		} else if (command_is(w->prev_text, w->prev_len, module_loaders)) {
			kind = GRUB_STRING_MODULE_CMDLINE;
		}
	}
	w->prev = kind;
	w->prev_text = text;
	w->prev_len = len;
	return kind;
}

char *grub_file_event_path(const mb_event *ev)
{
	size_t n = ev->data_size;
	char *s;

	if (ev->pcr != 9 || ev->type != MB_EV_IPL)
		return NULL;
	while (n > 0 && ev->data[n - 1] == 0)
		n--;
	s = malloc(n + 1);
	if (s) {
		memcpy(s, ev->data, n);
		s[n] = 0;
	}
	return s;
}

bool grub_is_config_path(const char *path)
{
	size_t n = strlen(path);

	return n >= 9 && strcmp(path + n - 9, "/grub.cfg") == 0;
}

int grub_measured_configs(const mb_event_log *log, grub_words *paths)
{
	size_t i, k, n = mb_event_log_count(log);

	for (i = 0; i < n; i++) {
		const mb_event *ev = mb_event_log_event(log, i);
		char *path;

		if (ev->pcr != 9 || ev->type != MB_EV_IPL)
			continue;
		path = grub_file_event_path(ev);
		if (!path)
			return -ENOMEM;
		for (k = 0; k < paths->n && strcmp(paths->w[k], path) != 0; k++)
			;
		if (!grub_is_config_path(path) || k < paths->n || paths->n >= GRUB_MAX_WORDS) {
			free(path);
			continue;
		}
		paths->w[paths->n++] = path;
	}
	return 0;
}
