/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The DER certificate at the start of an EK certificate NV index's bytes (der-size.h). */
#include "shared/reader.h"
#include "lib/attest/der-size.h"

/*
 * The size of the DER certificate at the start of the bytes: some TPMs define the NV index
 * larger than the certificate and pad it. 0 when it does not start with one SEQUENCE.
 */
size_t ek_der_size(const uint8_t *p, size_t n)
{
	byte_reader r;
	uint8_t tag, len0, b;
	size_t len = 0, head;

	reader_init(&r, p, n, 0);
	if (read_u8(&r, &tag) < 0 || tag != 0x30 || read_u8(&r, &len0) < 0)
		return 0;
	if (len0 < 0x80) {
		len = len0;
	} else {
		unsigned k = len0 & 0x7f;

		if (k == 0 || k > 3)
			return 0;
		while (k--) {
			if (read_u8(&r, &b) < 0)
				return 0;
			len = len << 8 | b;
		}
	}
	head = r.pos;
	if (len > reader_left(&r))
		return 0;
	return head + len;
}
