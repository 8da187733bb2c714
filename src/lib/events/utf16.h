/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* UTF-16LE to UTF-8 (internal): the one converter, for the event decoders and the policy's text. */
#ifndef MB_EVENTS_UTF16_H
#define MB_EVENTS_UTF16_H

#include <stddef.h>
#include <stdint.h>

/* For showing: malloc'd UTF-8 from n bytes of UTF-16LE, stopping at the first NUL and at
 * MB_DEC_MAX_STRING units; invalid surrogates become U+FFFD. NULL on OOM. */
char *utf16le_to_utf8(const uint8_t *p, size_t n);
/* For judging: the same without trailing NUL units, or NULL when any other unit is not text
 * (a NUL, a surrogate, paired or not, a control other than tab, LF, CR), n is odd or nothing
 * is left; and on OOM. No length cap. */
char *utf16le_to_utf8_strict(const uint8_t *p, size_t n);

#endif
