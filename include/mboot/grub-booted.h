/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_GRUB_BOOTED_H
#define MBOOT_GRUB_BOOTED_H

#include <stddef.h>
#include <stdint.h>
#include <mboot/error.h>
#include <mboot/eventlog.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Copies of the GRUB configs that booted (docs/predict.md, "Copies of the configs that
 * booted"). GRUB measures each config it reads into PCR 9 under the path it opened, e.g.
 * "(hd0,gpt2)/boot/grub/grub.cfg"; a kernel update rewrites those files before the next boot is
 * predicted, so the bytes that booted are kept while they still match today's log. The folder
 * holds one file per measured config, named by the lowercase SHA-256 hex of the measured path
 * (its bytes, no NUL), and index.json: {"configs": [{"path", "file", "sha256"}]}.
 */
#define MB_GRUB_BOOTED_DIR "/var/lib/mboot/grub-booted"
#define MB_GRUB_BOOTED_INDEX "index.json"
#define MB_GRUB_BOOTED_NAME_SIZE 65 /* 64 hex digits and a NUL */

/* Where a GRUB device's files are on this machine: "(hd0,gpt1)" at "/boot/efi". */
typedef struct mb_grub_mount {
	const char *device; /* as GRUB names it, with the parentheses; NULL: any device no entry names */
	const char *dir;    /* the folder GRUB's "/" of that device is mounted at */
} mb_grub_mount;

typedef enum mb_grub_booted_status {
	MB_GRUB_BOOTED_FOUND = 0, /* a file holds exactly the bytes GRUB measured (every bank) */
	MB_GRUB_BOOTED_CHANGED,   /* files are there, none with the measured digests (rewritten since) */
	MB_GRUB_BOOTED_MISSING,   /* no candidate file could be read */
	MB_GRUB_BOOTED_UNSAFE,    /* no file is looked for: the path is not "(DEVICE)/..." or has a
				   * ".." component, a control character or a NUL inside */
} mb_grub_booted_status;

/* One config the log measured, and what was found for it. */
typedef struct mb_grub_booted {
	char *measured_path;          /* the event's path (trailing NULs dropped) */
	uint32_t event_number;        /* the first event measuring it, whose digests are checked */
	mb_grub_booted_status status;
	char *file;                   /* FOUND: the file that matched; CHANGED: the first one read */
	uint8_t *content;             /* FOUND: its bytes, read once (what was checked is what is kept) */
	size_t size;
	uint8_t sha256[32];           /* FOUND: SHA-256 of content */
} mb_grub_booted;

/*
 * Each config path the log's PCR 9 EV_IPL events name, once, in log order, with the file on
 * this machine that has the first such event's digest in every bank. The candidates for
 * "(DEV)/PATH" are DIR + PATH for each mount whose device is DEV, or, when none is, for each
 * mount with a NULL device, in the order given; then, when copies_dir is not NULL, the copy kept
 * there before (so a config rewritten since is still found while its copy holds the bytes that
 * booted). Only regular files up to 4 MiB are read. Never prints. *ret (free with
 * mb_grub_booted_free) may be empty. 0, or -ENOMEM.
 */
MB_EXPORT int mb_grub_find_booted(const mb_event_log *log, const mb_grub_mount *mounts, size_t n_mounts,
				  const char *copies_dir, mb_grub_booted **ret, size_t *ret_n, mb_error *err) MB_WUR;
MB_EXPORT void mb_grub_booted_free(mb_grub_booted *b, size_t n);

/* The name of measured_path's copy: lowercase SHA-256 hex of its bytes. 0 or -EIO. */
MB_EXPORT int mb_grub_booted_name(const char *measured_path, char out[MB_GRUB_BOOTED_NAME_SIZE]) MB_WUR;

/*
 * Keep the FOUND entries of b in dir (made 0755 if missing, its parent must exist): each copy
 * and then index.json written atomically (temp file, fsync, rename), mode 0644; copies of
 * configs not in the new index are removed. 0 or negative errno.
 */
MB_EXPORT int mb_grub_booted_store(const char *dir, const mb_grub_booted *b, size_t n, mb_error *err) MB_WUR;

/*
 * `mboot grub keep-booted --json`'s document (docs/grub.md), pretty or compact (docs/json.md),
 * no final newline: {"dir", "configs": [{"path", "status" ("kept", "changed", "missing",
 * "unsafe"), "file", "copy" (its name in dir), "sha256" (of what was kept); null when none}]}.
 * Caller frees; NULL when out of memory.
 */
MB_EXPORT char *mb_grub_booted_to_json(const char *dir, const mb_grub_booted *b, size_t n, bool pretty);

#ifdef __cplusplus
}
#endif
#endif
