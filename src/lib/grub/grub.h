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
/* The first linux and initrd lines of grub.cfg: the default (first) entry's. On failure e is
 * left empty. grub_parse_cfg_entry() reads the text of a config (name: for messages). */
int grub_read_cfg_entry(const char *path, grub_entry *e, mb_error *err);
int grub_parse_cfg_entry(const char *text, size_t size, const char *name, grub_entry *e, mb_error *err);
void grub_entry_done(grub_entry *e);

typedef enum grub_event_kind {
	GRUB_EVENT_NONE = 0,
	GRUB_EVENT_LINUX,          /* "grub_cmd: linux[efi|16] PATH ARGS" */
	GRUB_EVENT_INITRD,         /* "grub_cmd: initrd[efi|16] PATH..." */
	GRUB_EVENT_KERNEL_CMDLINE, /* "kernel_cmdline: PATH ARGS" */
} grub_event_kind;
/* What a PCR 8 EV_IPL event of GRUB's is, by its text. */
grub_event_kind grub_event_kind_of(const mb_event *ev);

/*
 * GRUB's measured strings (PCR 8, EV_IPL): "<label>: <text>" + NUL, of which the digest covers
 * only <text>. The label is not measured, so whoever edits the log can change it.
 */
typedef enum grub_string_kind {
	GRUB_STRING_NONE = 0,
	GRUB_STRING_CMD,            /* "grub_cmd: " every command GRUB runs */
	GRUB_STRING_KERNEL_CMDLINE, /* "kernel_cmdline: " the command line a kernel loader built */
	GRUB_STRING_MODULE_CMDLINE, /* "module_cmdline: " a multiboot module's */
} grub_string_kind;

/* "grub_cmd: " etc., with the separator. */
const char *grub_string_prefix(grub_string_kind k);
/* The label the event carries and the digested text after it (without the NUL). */
grub_string_kind grub_string_split(const mb_event *ev, const uint8_t **text, size_t *len);

/*
 * The kind GRUB measured a string as, from what the digests bind rather than from the label:
 * a command line is measured by the kernel (module) loader right after the command that runs
 * it, so it is the PCR 8 string right after "grub_cmd: linux PATH ..." (module, multiboot...)
 * and, for Linux, starts with PATH. Feed every PCR 8 event in log order.
 */
typedef struct grub_string_walk {
	grub_string_kind prev;
	const uint8_t *prev_text;
	size_t prev_len;
} grub_string_walk;

grub_string_kind grub_string_walk_next(grub_string_walk *w, const mb_event *ev);

#endif
