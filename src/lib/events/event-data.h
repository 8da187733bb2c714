/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Event data as typed values (internal). Each structure an event's data holds is parsed here
 * once, through the bounds-checked reader; the decoder builds its tree from the values, and
 * policy, predict and replay use the same values instead of reading ev->data themselves.
 * A parser returns 0, or -EBADMSG with the reason in *why when why is not NULL (the decoder
 * shows it as the event's "error"). Pointers in a result point into the parsed bytes.
 */
#ifndef MB_EVENTS_EVENT_DATA_H
#define MB_EVENTS_EVENT_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct dec_why dec_why;

/* UEFI_VARIABLE_DATA (TCG PFP §10.4.3.1): EFI_GUID VariableName; u64 UnicodeNameLength
 * (characters); u64 VariableDataLength; CHAR16 UnicodeName[]; u8 VariableData[]. */
typedef struct efi_variable_data {
	const uint8_t *guid;  /* 16 bytes */
	const uint8_t *name;  /* name_len UTF-16LE units, as logged (no NUL counted) */
	uint64_t name_len;
	const uint8_t *data;
	uint64_t data_len;
	size_t trailing;      /* bytes after VariableData (none in a well-formed event) */
} efi_variable_data;

int efi_variable_data_parse(const uint8_t *p, size_t n, efi_variable_data *ret, dec_why *why);
/* Is the UTF-16 name exactly this ASCII name? */
bool efi_variable_data_named(const efi_variable_data *v, const char *name);

/* TCG_PCClientTaggedEvent (TCG PFP §10.4.2.1): u32 taggedEventID; u32 taggedEventDataSize;
 * u8 taggedEventData[]. */
typedef struct tagged_event {
	uint32_t id;
	uint32_t size;
	const uint8_t *data;
	size_t trailing;      /* bytes after taggedEventData */
} tagged_event;

int tagged_event_parse(const uint8_t *p, size_t n, tagged_event *ret, dec_why *why);

/* The EV_NO_ACTION StartupLocality event (TCG PFP §10.4.5.3): "StartupLocality\0" and one
 * byte, the locality. -ENOENT (nothing in *why) when p does not start with that signature. */
int startup_locality_parse(const uint8_t *p, size_t n, uint8_t *ret, dec_why *why);

/* UEFI_IMAGE_LOAD_EVENT (TCG PFP §10.4.3.3; EV_EFI_BOOT_SERVICES_APPLICATION and the driver
 * events): u64 ImageLocationInMemory, ImageLengthInMemory, ImageLinkTimeAddress,
 * LengthOfDevicePath; u8 DevicePath[LengthOfDevicePath]. */
typedef struct efi_image_load {
	uint64_t location, length, link_address;
	const uint8_t *device_path;
	size_t device_path_len;
	size_t trailing;      /* bytes after DevicePath */
} efi_image_load;

int efi_image_load_parse(const uint8_t *p, size_t n, efi_image_load *ret, dec_why *why);

/*
 * The file a device path names, as GRUB takes it for $cmdpath: the text of each media
 * file-path node (UEFI §10.3.5.4) of the path's first instance, each after a '/', backslashes
 * as slashes, a run of slashes as one ("/EFI/debian/grubx64.efi" for \EFI\debian\grubx64.efi).
 * *ret malloc()ed. -ENOENT (nothing in *why) when the path has no file-path node; -EBADMSG with
 * the reason for a malformed path (the same walk and caps as the decoder's text); -ENOMEM.
 */
int devpath_file_path(const uint8_t *p, size_t n, char **ret, dec_why *why);

/*
 * EFI_SIGNATURE_LIST (UEFI spec §32.4.1), the one parser of PK/KEK/db/dbx/MokList values for
 * the decoder and predict: EFI_GUID SignatureType; u32 SignatureListSize; u32
 * SignatureHeaderSize; u32 SignatureSize; u8 SignatureHeader[SignatureHeaderSize];
 * EFI_SIGNATURE_DATA Signatures[] (owner GUID + data, SignatureSize bytes each).
 * Strict (PITFALLS #11): SignatureListSize covers at least its header and stays inside the
 * value; SignatureHeaderSize fits in the list and is 0 for the types the spec defines;
 * SignatureSize holds at least the owner GUID, is 48 for a sha256 list, and divides a
 * non-empty body. Offsets in the reasons are reader_offset() values: the caller's base.
 */
#define EFI_SIGLIST_HEADER 28 /* SignatureType GUID, ListSize, HeaderSize, SignatureSize */

typedef struct efi_siglist {
	uint64_t at;          /* offset of the list (reader_offset) */
	const uint8_t *type;  /* SignatureType, 16 bytes */
	const char *type_name; /* "x509", "sha256", ... for a type the spec defines, else NULL */
	uint32_t list_size, header_size, sig_size;
	const uint8_t *header;  /* header_size bytes */
	const uint8_t *entries; /* count entries of sig_size bytes */
	size_t count;
} efi_siglist;

typedef struct byte_reader byte_reader;

/* The short name of a SignatureType the spec defines (x509, sha*, rsa2048, x509_sha*), or NULL. */
const char *efi_sig_type_name(const uint8_t g[16]);

/* The next list of r: 1, 0 when r is at its end, or -EBADMSG with the reason in *why (the
 * reader is then left anywhere). */
int efi_siglist_next(byte_reader *r, efi_siglist *ret, dec_why *why);
/* A whole value: 0 when it is a sequence of well-formed lists (empty included). */
int efi_siglist_check(const uint8_t *p, size_t n, uint64_t base, dec_why *why);

/*
 * The text of event data, two ways on purpose. For showing (the decoder's "text" and
 * "encoding", predict's "was this a UTF-16 string"): UTF-8 text, printable, trailing NULs
 * allowed; else UTF-16LE text, mostly ASCII; else none. For judging (mb_event_text, what a
 * policy's text rules see): stricter about UTF-16 (no NUL, surrogate or control inside) and
 * never cut; NULL when the data is not text.
 */
typedef enum text_encoding {
	TEXT_NONE,
	TEXT_UTF8,
	TEXT_UTF16,
} text_encoding;

text_encoding text_encoding_of(const uint8_t *p, size_t n);
char *text_judged(const uint8_t *p, size_t n);

#endif
