/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mboot luks: an existing passphrase of a LUKS2 device (luks-passphrase.c). */
#ifndef MB_TOOL_LUKS_PASSPHRASE_H
#define MB_TOOL_LUKS_PASSPHRASE_H

#include "tool/seal-common.h"

/* From /dev/tty, echo off, its newline dropped, into pw (a locked page); EXIT_USAGE said. */
int luks_read_passphrase_tty(const char *device, secret_buf *pw);
/* All the bytes of path ('-': stdin; at most 8 KiB), as cryptsetup --key-file takes them. */
int luks_read_key_file(const char *path, secret_buf *pw);

#endif
