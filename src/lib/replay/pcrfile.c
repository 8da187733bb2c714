/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* PCR values as text (our JSON, tpm2_pcrread's YAML) and as tpm2_pcrread -o's raw digests. */
#include <ctype.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/replay.h>
#include "lib/replay/pcr-values.h"
#include "shared/fail.h"
#include "shared/hex.h"
#include "shared/json.h"
#include "shared/jsonout.h"
#include "shared/reader.h"

#define PCR_TEXT_MAX (1u << 20)

static int parse_pcr_index(const char *s, size_t len, uint32_t *ret)
{
	uint32_t v = 0;
	size_t i;

	if (len == 0 || len > 2)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (uint32_t) (s[i] - '0');
	}
	if (v >= MB_PCR_COUNT)
		return -EINVAL;
	*ret = v;
	return 0;
}

static int add_value(mb_pcr_values *v, const char *bank_name, uint32_t pcr, const char *hex, size_t hex_len,
		     mb_error *err, unsigned line)
{
	const mb_digest_info *d = mb_digest_by_name(bank_name);
	mb_pcr_bank *bank;

	if (!d)
		return set_error(err, -EOPNOTSUPP, "line %u: unknown PCR bank \"%s\"", line, bank_name);
	bank = pcrv_bank(v, d->alg);
	if (!bank) {
		if (v->n_banks >= MB_MAX_BANKS)
			return set_error(err, -E2BIG, "too many banks");
		bank = &v->banks[v->n_banks++];
		bank->alg = d->alg;
		bank->size = d->size;
	}
	if (hex_len >= 2 && hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X')) {
		hex += 2;
		hex_len -= 2;
	}
	if (hex_parse(hex, hex_len, bank->value[pcr], d->size) < 0)
		return set_error(err, -EBADMSG, "line %u: %s PCR %u: not %u bytes of hex", line, d->name, pcr, d->size);
	if (bank->present & (1u << pcr))
		return set_error(err, -EBADMSG, "line %u: %s PCR %u given twice", line, d->name, pcr);
	bank->present |= 1u << pcr;
	return 0;
}

static int parse_json(const char *text, size_t size, mb_pcr_values *ret, mb_error *err)
{
	json_t *root = NULL, *banks;
	int rc;

	/* nesting: the file, banks, one bank's values; room for keys other tools add */
	rc = untrusted_json_parse(text, size, 16, &root, err);
	if (rc < 0)
		return rc;
	if (!json_is_object(root) || !(banks = json_object_get(root, "banks")) ||
	    !json_is_object(banks)) {
		rc = set_error(err, -EBADMSG, "PCR values JSON needs an object \"banks\"");
		goto out;
	}
	json_object_each(banks, bank_name, pcrs) {
		if (!json_is_object(pcrs)) {
			rc = set_error(err, -EBADMSG, "banks.%s: not an object", bank_name);
			goto out;
		}
		if (!mb_digest_by_name(bank_name)) {
			rc = set_error(err, -EOPNOTSUPP, "banks.%s: unknown PCR bank", bank_name);
			goto out;
		}
		json_object_each(pcrs, key, val) {
			uint32_t pcr;
			const char *hex;

			if (parse_pcr_index(key, strlen(key), &pcr) < 0 || !json_is_string(val)) {
				rc = set_error(err, -EBADMSG, "banks.%s.%s: expected a PCR index 0-23 and a hex string",
					     bank_name, key);
				goto out;
			}
			hex = json_string_value(val);
			rc = add_value(ret, bank_name, pcr, hex, strlen(hex), err, 0);
			if (rc < 0) {
				set_error(err, rc, "banks.%s.%s: %s", bank_name, key,
					rc == -EBADMSG ? "not a digest of the bank's size in hex" : mb_strerror(rc));
				goto out;
			}
		}
	}
	if (ret->n_banks == 0)
		rc = set_error(err, -EBADMSG, "no PCR values found");
out:
	json_decref(root);
	return rc;
}

/* tpm2_pcrread: "  sha256:\n    0 : 0xABC...\n". */
static int parse_yaml(const char *text, size_t size, mb_pcr_values *ret, mb_error *err)
{
	char bank[16] = "";
	const char *p = text, *end = text + size;
	unsigned line = 0;
	int rc;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t) (end - p));
		const char *s, *e, *colon;

		if (!eol)
			eol = end;
		line++;
		s = p;
		e = eol;
		p = eol < end ? eol + 1 : end;
		while (s < e && isspace((unsigned char) *s))
			s++;
		while (e > s && isspace((unsigned char) e[-1]))
			e--;
		if (s == e || *s == '#')
			continue;
		colon = memchr(s, ':', (size_t) (e - s));
		if (!colon)
			return set_error(err, -EBADMSG, "line %u: expected \"bank:\" or \"N : value\"", line);
		if (colon + 1 == e) {
			size_t n = (size_t) (colon - s);

			if (n == 0 || n >= sizeof(bank))
				return set_error(err, -EBADMSG, "line %u: bad bank name", line);
			memcpy(bank, s, n);
			bank[n] = 0;
			continue;
		} else {
			const char *k = s, *ke = colon, *v = colon + 1;
			uint32_t pcr;

			while (ke > k && isspace((unsigned char) ke[-1]))
				ke--;
			while (v < e && isspace((unsigned char) *v))
				v++;
			if (!bank[0] || parse_pcr_index(k, (size_t) (ke - k), &pcr) < 0)
				return set_error(err, -EBADMSG, "line %u: expected \"N : value\" under a bank", line);
			rc = add_value(ret, bank, pcr, v, (size_t) (e - v), err, line);
			if (rc < 0)
				return rc;
		}
	}
	if (ret->n_banks == 0)
		return set_error(err, -EBADMSG, "no PCR values found");
	return 0;
}

MB_EXPORT int mb_pcr_values_parse(const char *text, size_t size, mb_pcr_values *ret, mb_error *err)
{
	size_t i = 0;

	memset(ret, 0, sizeof(*ret));
	if (size > PCR_TEXT_MAX)
		return set_error(err, -E2BIG, "PCR values file over %u bytes", PCR_TEXT_MAX);
	if (memchr(text, 0, size))
		return set_error(err, -EBADMSG, "PCR values file contains a NUL byte");
	while (i < size && isspace((unsigned char) text[i]))
		i++;
	if (i < size && text[i] == '{')
		return parse_json(text, size, ret, err);
	return parse_yaml(text, size, ret, err);
}

MB_EXPORT char *mb_pcr_values_to_json(const mb_pcr_values *v, bool pretty)
{
	jsonout o = { .pretty = pretty };

	jsonout_open(&o, '{');
	jsonout_key(&o, "banks");
	jsonout_pcr_banks(&o, v);
	jsonout_close(&o, '}');
	jsonout_put(&o, "", 1);
	if (o.oom) {
		free(o.p);
		return NULL;
	}
	return o.p;
}

/*
 * tpm2_pcrread's stdout, byte for byte ("  sha256:\n    0 : 0xABC...\n", upper-case hex,
 * the index left-aligned in two columns), so that `diff` against it, or between any two mboot
 * outputs, shows only values that differ. A bank without values prints nothing: a bare
 * heading would be a bank the parser cannot tell from a cut file.
 */
MB_EXPORT char *mb_pcr_values_to_text(const mb_pcr_values *v)
{
	/* heading "  sm3_256:\n"; value line "    23: 0x" + hex + "\n" */
	const size_t line_max = 10 + 2 * MB_DIGEST_MAX + 1, head_max = 16;
	size_t cap = 1 + v->n_banks * (head_max + MB_PCR_COUNT * line_max), len = 0, b;
	char *out = malloc(cap);

	if (!out)
		return NULL;
	out[0] = 0;
	for (b = 0; b < v->n_banks; b++) {
		const mb_pcr_bank *bank = &v->banks[b];
		const mb_digest_info *d = mb_digest_by_alg(bank->alg);
		uint32_t p;

		if (!bank->present || !d)
			continue;
		len += (size_t) snprintf(out + len, cap - len, "  %s:\n", d->name);
		for (p = 0; p < MB_PCR_COUNT; p++) {
			size_t i;

			if (!(bank->present & (1u << p)))
				continue;
			len += (size_t) snprintf(out + len, cap - len, "    %-2u: 0x", p);
			for (i = 0; i < bank->size; i++)
				len += (size_t) snprintf(out + len, cap - len, "%02X", bank->value[p][i]);
			len += (size_t) snprintf(out + len, cap - len, "\n");
		}
	}
	return out;
}

/*
 * tpm2_pcrread -o FILE: the digests alone, bank after bank in the order of the selection, each
 * bank's PCRs in ascending order (the order TPM2_PCR_Read returns them in, whatever order the
 * selection named them). Nothing in the file says which PCR a digest belongs to, so the size
 * must be exactly what the selection takes.
 */
MB_EXPORT int mb_pcr_values_parse_digests(const void *data, size_t size, const uint16_t *algs, const uint32_t *pcrs,
					  size_t n_banks, mb_pcr_values *ret, mb_error *err)
{
	const uint32_t all = (1u << MB_PCR_COUNT) - 1;
	size_t want = 0, b;
	byte_reader r;

	memset(ret, 0, sizeof(*ret));
	if (n_banks == 0 || n_banks > MB_MAX_BANKS)
		return set_error(err, -EINVAL, "a PCR selection names 1 to %d banks, not %zu", MB_MAX_BANKS, n_banks);
	for (b = 0; b < n_banks; b++) {
		const mb_digest_info *d = mb_digest_by_alg(algs[b]);
		size_t k;

		if (!d)
			return set_error(err, -EOPNOTSUPP, "PCR selection: unknown bank 0x%04x", algs[b]);
		if (!pcrs[b] || (pcrs[b] & ~all))
			return set_error(err, -EINVAL, "PCR selection: %s names no PCR, or one above %d", d->name,
					 MB_PCR_COUNT - 1);
		for (k = 0; k < b; k++)
			if (algs[k] == algs[b])
				return set_error(err, -EINVAL, "PCR selection: bank %s named twice", d->name);
		for (k = 0; k < MB_PCR_COUNT; k++)
			if (pcrs[b] & (1u << k))
				want += d->size;
	}
	if (size != want)
		return set_error(err, -EBADMSG,
				 "%zu bytes of digests, but the PCR selection takes %zu (tpm2_pcrread -o writes the "
				 "selected PCRs' digests, bank by bank): not the file of that selection", size, want);
	reader_init(&r, data, size, 0);
	for (b = 0; b < n_banks; b++) {
		mb_pcr_bank *bank = &ret->banks[ret->n_banks++];
		uint32_t p;

		bank->alg = algs[b];
		bank->size = mb_digest_by_alg(algs[b])->size;
		bank->present = pcrs[b];
		for (p = 0; p < MB_PCR_COUNT; p++)
			if ((pcrs[b] & (1u << p)) && read_copy(&r, bank->value[p], bank->size) < 0)
				return set_error(err, -EBADMSG, "PCR values file cut short"); /* size checked above */
	}
	return 0;
}
