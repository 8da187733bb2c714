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
/* All words joined by sep ("a, b, c"); NULL on OOM. */
char *grub_join_list(const grub_words *ws, const char *sep);
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

/*
 * GRUB's measured strings (PCR 8, EV_IPL): "<label><text>" + NUL, of which the digest covers
 * only <text> (MEASUREMENTS.md §2). The label is not measured, so whoever edits the log can
 * change it. This file is the one place that knows the labels: upstream's "grub_cmd: ",
 * "kernel_cmdline: ", "module_cmdline: " and GRUB 2.02's with the Fedora/RHEL (CoreOS) TPM
 * patches, "grub_cmd " and "grub_kernel_cmdline ". Everyone else asks here.
 */
typedef enum grub_string_kind {
	GRUB_STRING_NONE = 0,
	GRUB_STRING_CMD,            /* every command GRUB runs */
	GRUB_STRING_KERNEL_CMDLINE, /* the command line a kernel loader built */
	GRUB_STRING_MODULE_CMDLINE, /* a multiboot module's */
} grub_string_kind;

/* The kind's upstream label with its separator ("grub_cmd: "): the one text rules see. */
const char *grub_string_prefix(grub_string_kind k);
/* The kind's label in the form (upstream's, or GRUB 2.02's without a colon) of the label data
 * starts with (2.02's when none): what an event rewritten after data keeps. "" when that form
 * has no label for the kind (2.02 has none for module command lines). */
const char *grub_string_label_like(grub_string_kind k, const uint8_t *data, size_t size);
/* Which label (any form) bytes start with, the digested text after it (without GRUB's NUL)
 * and the label's length (may be NULL); whatever PCR and event type carry them. */
grub_string_kind grub_string_parse(const uint8_t *data, size_t size, const uint8_t **text, size_t *len,
				   size_t *label_len);
/* The same for an event: only a PCR 8 EV_IPL event is GRUB's string. */
grub_string_kind grub_string_split(const mb_event *ev, const uint8_t **text, size_t *len);
/* The text after the label as a C string (trailing NULs dropped), NULL when the event is no
 * GRUB string or out of memory (*ret_kind, may be NULL, tells which). */
char *grub_string_text(const mb_event *ev, grub_string_kind *ret_kind);

typedef enum grub_event_kind {
	GRUB_EVENT_NONE = 0,
	GRUB_EVENT_LINUX,          /* a command "linux[efi|16] PATH ARGS" */
	GRUB_EVENT_INITRD,         /* a command "initrd[efi|16] PATH..." */
	GRUB_EVENT_KERNEL_CMDLINE, /* labelled a kernel command line: "PATH ARGS" */
} grub_event_kind;
/* What a PCR 8 EV_IPL event of GRUB's is, by its label and text. */
grub_event_kind grub_event_kind_of(const mb_event *ev);

/* The kernel command line GRUB's linux loader builds and measures from the kernel's path and
 * its arguments (grub_create_loader_cmdline): `\`, `'` and `"` escaped, words with blanks
 * quoted. NULL on OOM. */
char *grub_loader_cmdline(const char *path, const grub_words *args);

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

/*
 * GRUB measures each file it reads into PCR 9 (EV_IPL) under the path it opened, the configs
 * too: "(hd0,gpt1)/EFI/debian/grub.cfg". The path of such an event (trailing NULs dropped) as
 * a new string, NULL for another event or out of memory.
 */
char *grub_file_event_path(const mb_event *ev);
bool grub_is_config_path(const char *path);
/* Each config path a log measured, once, in log order (appended to paths). -ENOMEM. */
int grub_measured_configs(const mb_event_log *log, grub_words *paths);

#endif
