/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What GRUB 2 does with words, config files and its measured strings (internal). */
#ifndef MB_GRUB_H
#define MB_GRUB_H

#include <stdbool.h>
#include <stddef.h>

#include <mboot/error.h>
#include <mboot/eventlog.h>

#define GRUB_MAX_WORDS 256
#define GRUB_CFG_MAX (4u << 20)

typedef struct grub_words {
	size_t n;
	char *w[GRUB_MAX_WORDS];
} grub_words;

void grub_words_done(grub_words *ws);
/* GRUB's word splitting as far as a linux/initrd line needs it: blanks separate words,
 * quotes group and disappear, a backslash escapes; $variables stay as written. Appends. */
int grub_split_words(const char *s, const char *end, grub_words *ws);
/* Words [from, n) joined by single spaces, as GRUB joins argv into "grub_cmd: ..." */
char *grub_join(const grub_words *ws, size_t from);
/* "linux", "linuxefi", "linux16" for base "linux". */
bool grub_is_cmd(const char *w, const char *base);

typedef struct grub_entry {
	grub_words linux_line;  /* linux[efi|16] PATH ARGS... */
	grub_words initrd_line; /* initrd[efi|16] PATH... */
} grub_entry;
/* The first linux and initrd lines of grub.cfg: the default (first) entry's. */
int grub_read_cfg_entry(const char *path, grub_entry *e, mb_error *err);
void grub_entry_done(grub_entry *e);

typedef enum grub_event_kind {
	GRUB_EVENT_NONE = 0,
	GRUB_EVENT_LINUX,          /* "grub_cmd: linux[efi|16] PATH ARGS" */
	GRUB_EVENT_INITRD,         /* "grub_cmd: initrd[efi|16] PATH..." */
	GRUB_EVENT_KERNEL_CMDLINE, /* "kernel_cmdline: PATH ARGS" */
} grub_event_kind;
/* What a PCR 8 EV_IPL event of GRUB's is, by its text. */
grub_event_kind grub_event_kind_of(const mb_event *ev);

#endif
