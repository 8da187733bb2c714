/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_EVENTS_DECODE_INTERNAL_H
#define MB_EVENTS_DECODE_INTERNAL_H

/*
 * Shared pieces of the event-data decoders (not installed).
 *
 * A decoder fills a fresh root object (a node of the mb_event_decoded tree, see
 * include/mboot/events.h) with "kind", "description" and its fields and returns 0, or
 * returns a negative errno and formats the reason into *why (a buffer owned by the caller,
 * see dec_why): the dispatcher then throws the half-filled tree away and emits the raw
 * form with "error". Every decoder reads only through the bounds-checked reader.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mboot/events.h>
#include "shared/hex.h"
#include "shared/reader.h"
#include "lib/events/event-data.h"
#include "lib/events/utf16.h"

/* Caps on what the input declares (events are already capped at MB_EVENT_MAX_DATA). */
#define MB_DEC_MAX_DEVPATH_NODES 64
#define MB_DEC_MAX_DEVPATH_TEXT 4096
#define MB_DEC_MAX_LIST_ITEMS 1024      /* partitions, signatures, boot entries shown */
#define MB_DEC_MAX_STRING 65536         /* bytes of text converted */
/* raw data shown in hex (two characters a byte, within MB_DEC_MAX_STRING); beyond: "hex_truncated" */
#define MB_DEC_MAX_HEX_BYTES (MB_DEC_MAX_STRING / 2)

/* Room for a failure message; decoders format into it. */
typedef struct dec_why {
	char text[160];
} dec_why;

/* -EBADMSG, the reason formatted into *why (why may be NULL: a caller that needs no reason). */
int dec_fail(dec_why *why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Tree builders. The root comes from dec_begin(); every other node is made near an
 * existing one (same owner). Keys are string literals, or dec_key_copy() for one built at
 * run time. The add_* helpers return nothing: an allocation failure leaves the field out
 * and dec_end() then fails the whole result with -ENOMEM.
 */
mb_decoded_node *dec_begin(mb_event_decoded *d);
int dec_end(mb_event_decoded *d, int rc);
mb_decoded_node *dec_new_object(const mb_decoded_node *near);
mb_decoded_node *dec_new_array(const mb_decoded_node *near);
mb_decoded_node *dec_new_strn(const mb_decoded_node *near, const char *s, size_t n);
void dec_add(mb_decoded_node *o, const char *key, mb_decoded_node *v); /* replaces a member of that key */
void dec_append(mb_decoded_node *a, mb_decoded_node *v);
const char *dec_key_copy(const mb_decoded_node *near, const char *key);
/* Strings are cut at MB_DEC_MAX_STRING bytes; bytes that are not UTF-8 become '?'. */
void dec_add_str(mb_decoded_node *o, const char *key, const char *s);
void dec_add_strn(mb_decoded_node *o, const char *key, const char *s, size_t n);
void dec_add_u64(mb_decoded_node *o, const char *key, uint64_t v);
void dec_add_bool(mb_decoded_node *o, const char *key, bool v);
/* Bytes (JSON: hex); beyond MB_DEC_MAX_HEX_BYTES cut, with "hex_truncated": true before it. */
void dec_add_hex(mb_decoded_node *o, const char *key, const uint8_t *p, size_t n);
void dec_add_addr(mb_decoded_node *o, const char *key, uint64_t v); /* JSON: "0x..." */
void dec_add_guid(mb_decoded_node *o, const char *key, const uint8_t g[16]);
void dec_set_kind(mb_decoded_node *o, const char *kind);
void dec_set_desc(mb_decoded_node *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* GUIDs (EFI_GUID: three little-endian fields then 8 bytes). */
const char *guid_name(const uint8_t g[16]);  /* a short name for well-known GUIDs, or NULL */
bool guid_equal_str(const uint8_t g[16], const char *text);
extern const uint8_t guid_efi_global[16];
extern const uint8_t guid_image_security_db[16];
extern const uint8_t guid_shim_lock[16];

/* Strings. */
bool utf8_valid(const uint8_t *p, size_t n);
void utf8_sanitize(char *s, size_t n); /* bytes that start no well-formed sequence become '?' */
/* A description's one line: each control character and DEL a blank, then utf8_sanitize(). */
void text_one_line(char *s, size_t n);
/* Does p[0..n) look like a UTF-16LE text (printable, optional NUL terminator(s))? */
bool looks_utf16(const uint8_t *p, size_t n);
/* Printable ASCII/UTF-8 text, optionally NUL-terminated (trailing NULs allowed)? */
bool looks_text(const uint8_t *p, size_t n);
/* Length without trailing NULs. */
size_t strip_nuls(const uint8_t *p, size_t n);
/* Fill o with "text" and "encoding" (utf-16 / ascii) when p is text, else "hex". True when text. */
bool dec_add_text_or_hex(mb_decoded_node *o, const uint8_t *p, size_t n, const char **ret_text);

/* Device paths (UEFI spec "Device Path Protocol" and "Device Path to Text"). */
int devpath_to_text(const uint8_t *p, size_t n, char **ret, dec_why *why);

/* Per-type decoders (decode.c dispatches). */
int dec_efi_variable(const mb_event *ev, mb_decoded_node *o, dec_why *why);
int dec_efi_image_load(const mb_event *ev, mb_decoded_node *o, dec_why *why);
int dec_firmware_blob(const mb_event *ev, mb_decoded_node *o, dec_why *why);
int dec_handoff_tables(const mb_event_log *log, const mb_event *ev, mb_decoded_node *o, dec_why *why);
int dec_efi_gpt(const mb_event *ev, mb_decoded_node *o, dec_why *why);
int dec_event_tag(const mb_event *ev, mb_decoded_node *o, dec_why *why);
int dec_ipl(const mb_event *ev, mb_decoded_node *o, dec_why *why);
int dec_no_action(const mb_event_log *log, const mb_event *ev, mb_decoded_node *o, dec_why *why);

#endif
