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

static bool starts_cmd(const mb_event *ev, const char *prefix, const char *cmd)
{
	size_t n = strlen(prefix), k = strlen(cmd), m;

	if (ev->data_size < n + k || memcmp(ev->data, prefix, n) != 0 || memcmp(ev->data + n, cmd, k) != 0)
		return false;
	m = n + k;
	/* "linux" and "linuxefi"/"linux16", not "linux_gfx_mode". */
	if (m + 3 <= ev->data_size && memcmp(ev->data + m, "efi", 3) == 0)
		m += 3;
	else if (m + 2 <= ev->data_size && memcmp(ev->data + m, "16", 2) == 0)
		m += 2;
	return m == ev->data_size || ev->data[m] == ' ' || ev->data[m] == 0;
}

grub_event_kind grub_event_kind_of(const mb_event *ev)
{
	if (ev->type != MB_EV_IPL || ev->pcr != 8)
		return GRUB_EVENT_NONE;
	if (ev->data_size >= 16 && memcmp(ev->data, "kernel_cmdline: ", 16) == 0)
		return GRUB_EVENT_KERNEL_CMDLINE;
	if (starts_cmd(ev, "grub_cmd: ", "linux"))
		return GRUB_EVENT_LINUX;
	if (starts_cmd(ev, "grub_cmd: ", "initrd"))
		return GRUB_EVENT_INITRD;
	return GRUB_EVENT_NONE;
}

static const char *const string_prefixes[] = {
	[GRUB_STRING_CMD] = "grub_cmd: ",
	[GRUB_STRING_KERNEL_CMDLINE] = "kernel_cmdline: ",
	[GRUB_STRING_MODULE_CMDLINE] = "module_cmdline: ",
};

const char *grub_string_prefix(grub_string_kind k)
{
	return k > GRUB_STRING_NONE && k <= GRUB_STRING_MODULE_CMDLINE ? string_prefixes[k] : "";
}

grub_string_kind grub_string_split(const mb_event *ev, const uint8_t **text, size_t *len)
{
	size_t n;
	int k;

	if (ev->type != MB_EV_IPL || ev->pcr != 8 || ev->data_size == 0)
		return GRUB_STRING_NONE;
	/* GRUB always writes the NUL; a string without it is still judged as GRUB's. */
	n = ev->data_size - (ev->data[ev->data_size - 1] == 0);
	for (k = GRUB_STRING_CMD; k <= GRUB_STRING_MODULE_CMDLINE; k++) {
		size_t p = strlen(string_prefixes[k]);

		if (n >= p && memcmp(ev->data, string_prefixes[k], p) == 0) {
			*text = ev->data + p;
			*len = n - p;
			return (grub_string_kind) k;
		}
	}
	return GRUB_STRING_NONE;
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
