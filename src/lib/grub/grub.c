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
			} else if (*s == '\\' && quote != '\'' && s + 1 < end) {
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
	out[0] = 0;
	for (i = from; i < ws->n; i++) {
		if (i > from)
			strcat(out, " ");
		strcat(out, ws->w[i]);
	}
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

int grub_read_cfg_entry(const char *path, grub_entry *e, mb_error *err)
{
	uint8_t *text;
	size_t size;
	const char *p, *end;
	int rc = mb_read_file(path, GRUB_CFG_MAX, &text, &size, err);

	if (rc < 0)
		return rc;
	p = (const char *) text;
	end = p + size;
	while (p < end && (!e->linux_line.n || !e->initrd_line.n)) {
		const char *eol = memchr(p, '\n', (size_t) (end - p));
		grub_words ws = { 0 };

		if (!eol)
			eol = end;
		rc = grub_split_words(p, eol, &ws);
		if (rc < 0) {
			grub_words_done(&ws);
			free(text);
			return mb_fail(err, rc, "%s: a line with too many words", path);
		}
		if (ws.n >= 2 && !e->linux_line.n && grub_is_cmd(ws.w[0], "linux"))
			e->linux_line = ws;
		else if (ws.n >= 2 && !e->initrd_line.n && grub_is_cmd(ws.w[0], "initrd"))
			e->initrd_line = ws;
		else
			grub_words_done(&ws);
		p = eol < end ? eol + 1 : end;
	}
	free(text);
	if (!e->linux_line.n)
		return mb_fail(err, -EBADMSG, "%s: no linux command found", path);
	return 0;
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
