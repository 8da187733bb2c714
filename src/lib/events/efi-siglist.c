/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * EFI_SIGNATURE_LIST (UEFI spec §32.4.1): the one parser, for the decoder (efi-variable.c)
 * and predict (efivar.c). The rules are in event-data.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "decode-internal.h"
#include "event-data.h"
#include "shared/reader.h"

const char *efi_sig_type_name(const uint8_t g[16])
{
	const char *n = guid_name(g);

	if (n && (strcmp(n, "x509") == 0 || strncmp(n, "sha", 3) == 0 || strcmp(n, "rsa2048") == 0 ||
		  strncmp(n, "x509_", 5) == 0))
		return n;
	return NULL;
}

int efi_siglist_next(byte_reader *r, efi_siglist *l, dec_why *why)
{
	size_t body;

	memset(l, 0, sizeof(*l));
	if (reader_left(r) == 0)
		return 0;
	l->at = reader_offset(r);
	if (read_bytes(r, 16, &l->type) < 0 || read_u32le(r, &l->list_size) < 0 ||
	    read_u32le(r, &l->header_size) < 0 || read_u32le(r, &l->sig_size) < 0)
		return dec_fail(why, "EFI_SIGNATURE_LIST at offset %" PRIu64 ": truncated header (%" PRIu64 " bytes left)",
				l->at, (uint64_t) (r->base + r->size - l->at));
	/* compared with what is left, never added to: a u32 near 4 GiB cannot wrap */
	if (l->list_size < EFI_SIGLIST_HEADER)
		return dec_fail(why, "EFI_SIGNATURE_LIST at offset %" PRIu64 ": SignatureListSize %" PRIu32
				" is below its %d-byte header", l->at, l->list_size, EFI_SIGLIST_HEADER);
	if (l->list_size - EFI_SIGLIST_HEADER > reader_left(r))
		return dec_fail(why, "EFI_SIGNATURE_LIST at offset %" PRIu64 ": SignatureListSize %" PRIu32
				" overruns the value (%zu bytes left)", l->at, l->list_size,
				reader_left(r) + EFI_SIGLIST_HEADER);
	body = l->list_size - EFI_SIGLIST_HEADER;
	l->type_name = efi_sig_type_name(l->type);
	if (l->header_size > body || (l->type_name && l->header_size != 0))
		return dec_fail(why, "EFI_SIGNATURE_LIST at offset %" PRIu64 ": SignatureHeaderSize %" PRIu32
				" invalid for this list (%s)", l->at, l->header_size,
				l->header_size > body ? "overruns it" : "must be 0 for its type");
	body -= l->header_size;
	/* an entry is at least its owner GUID (SignatureSize 0 would divide by zero) */
	if (l->sig_size < 16)
		return dec_fail(why, "EFI_SIGNATURE_LIST at offset %" PRIu64 ": SignatureSize %" PRIu32 " < 16",
				l->at, l->sig_size);
	/* a list without entries says nothing and is no value a firmware writes */
	if (body == 0)
		return dec_fail(why, "EFI_SIGNATURE_LIST at offset %" PRIu64 ": no signatures (SignatureSize %" PRIu32 ")",
				l->at, l->sig_size);
	if (body % l->sig_size != 0)
		return dec_fail(why, "EFI_SIGNATURE_LIST at offset %" PRIu64 ": %zu bytes of signatures are not a multiple"
				" of SignatureSize %" PRIu32, l->at, body, l->sig_size);
	if (l->type_name && strcmp(l->type_name, "sha256") == 0 && l->sig_size != 16 + 32)
		return dec_fail(why, "EFI_SIGNATURE_LIST at offset %" PRIu64 ": sha256 list with SignatureSize %" PRIu32,
				l->at, l->sig_size);
	if (read_bytes(r, l->header_size, &l->header) < 0 || read_bytes(r, body, &l->entries) < 0)
		return dec_fail(why, "EFI_SIGNATURE_LIST at offset %" PRIu64 ": truncated", l->at);
	l->count = body / l->sig_size;
	return 1;
}

int efi_siglist_check(const uint8_t *p, size_t n, uint64_t base, dec_why *why)
{
	byte_reader r;
	efi_siglist l;
	int rc;

	reader_init(&r, p, n, base);
	while ((rc = efi_siglist_next(&r, &l, why)) > 0)
		;
	return rc;
}
