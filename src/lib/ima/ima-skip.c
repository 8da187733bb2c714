/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The first entries of a binary list stepped over without decoding them (mb_ima_log_skip): a
 * machine whose verifier judged them already sends only the entries after them.
 */
#include <errno.h>
#include <string.h>

#include <mboot/ima.h>
#include "shared/fail.h"
#include "shared/reader.h"

#define SHA1_SIZE 20

/* One binary entry (SHA-1 template hash), its shape checked as mb_ima_log_parse checks it. */
static int step(byte_reader *r, uint64_t idx, const uint8_t **ret_hash, mb_error *err)
{
	uint64_t at = reader_offset(r);
	uint32_t pcr, name_len, len;
	const uint8_t *name;

	if (read_u32le(r, &pcr) < 0 || read_bytes(r, SHA1_SIZE, ret_hash) < 0 || read_u32le(r, &name_len) < 0)
		return set_error_at(err, -EBADMSG, at, "entry %llu: truncated", (unsigned long long) idx);
	if (pcr > MB_IMA_MAX_PCR || name_len == 0 || name_len > MB_IMA_MAX_TEMPLATE_NAME ||
	    read_bytes(r, name_len, &name) < 0)
		return set_error_at(err, -EBADMSG, at, "entry %llu: not an entry of a SHA-1 list",
				    (unsigned long long) idx);
	if (name_len == 3 && memcmp(name, "ima", 3) == 0) {
		if (read_skip(r, SHA1_SIZE) < 0 || read_u32le(r, &len) < 0 || len > MB_IMA_MAX_FILE_NAME ||
		    read_skip(r, len) < 0)
			return set_error_at(err, -EBADMSG, at, "entry %llu: truncated", (unsigned long long) idx);
		return 0;
	}
	if (read_u32le(r, &len) < 0 || len > MB_IMA_MAX_TEMPLATE_DATA || read_skip(r, len) < 0)
		return set_error_at(err, -EBADMSG, at, "entry %llu: truncated", (unsigned long long) idx);
	return 0;
}

MB_EXPORT int mb_ima_log_skip(const void *data, size_t size, uint64_t n, size_t *ret_offset,
			      uint8_t ret_last_hash[20], mb_error *err)
{
	byte_reader r;
	const uint8_t *hash = NULL;
	uint64_t i;
	int rc;

	if (!data && size)
		return set_error(err, -EINVAL, "no list");
	reader_init(&r, data, size, 0);
	for (i = 0; i < n; i++) {
		if (reader_left(&r) == 0)
			return set_error(err, -ENOENT, "the list has %llu entries, not %llu", (unsigned long long) i,
					 (unsigned long long) n);
		rc = step(&r, i, &hash, err);
		if (rc < 0)
			return rc;
	}
	*ret_offset = (size_t) reader_offset(&r);
	if (ret_last_hash) {
		if (hash)
			memcpy(ret_last_hash, hash, SHA1_SIZE);
		else
			memset(ret_last_hash, 0, SHA1_SIZE);
	}
	return 0;
}
