/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_VERSION_H
#define MBOOT_VERSION_H

#include <mboot/error.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the libmboot a program runs with, e.g. "0.1.0" (static storage, never NULL). */
MB_EXPORT const char *mb_version(void);

#ifdef __cplusplus
}
#endif
#endif
