/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/json.h"

#include "corpus-util.h"

static char path_buf[4096];

const char *testdata_path(const char *rel)
{
	const char *base = getenv("MB_TESTDATA");

	snprintf(path_buf, sizeof(path_buf), "%s/%s", base ? base : "tests/data", rel);
	return path_buf;
}

const char *corpus_path(const char *rel)
{
	const char *base = getenv("MB_TESTDATA");

	snprintf(path_buf, sizeof(path_buf), "%s/corpus/%s", base ? base : "tests/data", rel);
	return path_buf;
}

uint8_t *corpus_load(const char *rel, size_t *size)
{
	char sub[4096];

	snprintf(sub, sizeof(sub), "corpus/%s", rel);
	return testdata_load(sub, size);
}

uint8_t *testdata_load(const char *rel, size_t *size)
{
	FILE *f = fopen(testdata_path(rel), "rb");
	uint8_t *buf = NULL;
	long n;

	*size = 0;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t) n + 1);
		if (buf && fread(buf, 1, (size_t) n, f) == (size_t) n) {
			buf[n] = 0;
			*size = (size_t) n;
		}
		else {
			free(buf);
			buf = NULL;
		}
	}
	fclose(f);
	return buf;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Hex with optional spaces between byte pairs ("3C 97 99 ..." or "3c9799..."). */
static size_t parse_hex(const char *s, uint8_t *out, size_t max)
{
	size_t n = 0;

	while (*s && *s != '\n') {
		int hi, lo;

		if (*s == ' ' || *s == '\r' || *s == '\t') {
			s++;
			continue;
		}
		hi = hexval(s[0]);
		lo = hi >= 0 ? hexval(s[1]) : -1;
		if (hi < 0 || lo < 0 || n >= max)
			return 0;
		out[n++] = (uint8_t) (hi << 4 | lo);
		s += 2;
	}
	return n;
}

static mb_pcr_bank *bank_for(mb_pcr_values *v, uint16_t alg, uint16_t size)
{
	size_t i;

	for (i = 0; i < v->n_banks; i++)
		if (v->banks[i].alg == alg)
			return &v->banks[i];
	if (v->n_banks >= MB_MAX_BANKS)
		return NULL;
	v->banks[v->n_banks].alg = alg;
	v->banks[v->n_banks].size = size;
	return &v->banks[v->n_banks++];
}

static uint16_t alg_for_size(size_t size)
{
	switch (size) {
	case 20: return MB_ALG_SHA1;
	case 32: return MB_ALG_SHA256;
	case 48: return MB_ALG_SHA384;
	case 64: return MB_ALG_SHA512;
	default: return 0;
	}
}

static bool load_json(const char *rel, mb_pcr_values *ret)
{
	json_t *root = json_load_file(corpus_path(rel), JSON_REJECT_DUPLICATES, NULL), *banks;
	bool ok = false;

	if (!root || !(banks = json_object_get(root, "banks")))
		goto out;
	json_object_each(banks, name, pcrs) {
		const mb_digest_info *d = mb_digest_by_name(name);
		mb_pcr_bank *bank;

		if (!d || !(bank = bank_for(ret, d->alg, d->size)))
			goto out;
		json_object_each(pcrs, key, val) {
			int pcr = atoi(key);

			if (pcr < 0 || pcr >= MB_PCR_COUNT ||
			    parse_hex(json_string_value(val), bank->value[pcr], MB_DIGEST_MAX) != d->size)
				goto out;
			bank->present |= 1u << pcr;
		}
	}
	ok = true;
out:
	json_decref(root);
	return ok;
}

static bool load_lines(const char *rel, bool tss, mb_pcr_values *ret)
{
	size_t size;
	char *text = (char *) corpus_load(rel, &size), *line, *save = NULL;
	mb_pcr_bank *bank = NULL;
	int pcr = 0;
	bool ok = true;

	if (!text)
		return false;
	text[size] = 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		uint8_t v[MB_DIGEST_MAX];
		size_t n;

		if (tss) {
			const char *h = strstr(line, "-halg ");
			char *colon;

			if (h) {
				const mb_digest_info *d = mb_digest_by_name(h + 6);

				bank = d ? bank_for(ret, d->alg, d->size) : NULL;
				if (!bank)
					ok = false;
				continue;
			}
			colon = strchr(line, ':');
			if (!bank || !colon) {
				ok = false;
				break;
			}
			pcr = atoi(line);
			line = colon + 1;
		}
		n = parse_hex(line, v, sizeof(v));
		if (!tss) {
			bank = n ? bank_for(ret, alg_for_size(n), (uint16_t) n) : NULL;
		}
		if (!bank || n != bank->size || pcr < 0 || pcr >= MB_PCR_COUNT) {
			ok = false;
			break;
		}
		memcpy(bank->value[pcr], v, n);
		bank->present |= 1u << pcr;
		if (!tss)
			pcr++;
	}
	free(text);
	return ok && ret->n_banks > 0;
}

bool truth_load(const char *rel, const char *kind, mb_pcr_values *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (strcmp(kind, "json") == 0)
		return load_json(rel, ret);
	if (strcmp(kind, "hirs") == 0)
		return load_lines(rel, false, ret);
	if (strcmp(kind, "tss") == 0)
		return load_lines(rel, true, ret);
	return false;
}

mb_event_log *corpus_log(const char *rel)
{
	size_t size;
	uint8_t *b = corpus_load(rel, &size);
	mb_event_log *log = NULL;

	if (!b || mb_event_log_parse_take(b, size, &log, NULL) < 0)
		return NULL;
	return log;
}
