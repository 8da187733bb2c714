/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helpers shared by the event decoders: GUID names, UTF-8 checks,
 * UTF-16 to UTF-8, and telling text from binary (the decoder's, predict's and the policy's).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/hex.h"
#include "decode-internal.h"

int dec_fail(dec_why *why, const char *fmt, ...)
{
	va_list ap;

	if (!why)
		return -EBADMSG;
	va_start(ap, fmt);
	vsnprintf(why->text, sizeof(why->text), fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

/* Length of the well-formed UTF-8 sequence at p (RFC 3629), 0 when it is not one. */
static size_t utf8_seq(const uint8_t *p, size_t n)
{
	size_t more, k;
	uint32_t c;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		more = 1, c = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		more = 2, c = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		more = 3, c = p[0] & 0x07;
	else
		return 0;
	if (more > n - 1)
		return 0;
	for (k = 1; k <= more; k++) {
		if ((p[k] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[k] & 0x3f);
	}
	if ((more == 2 && (c < 0x800 || (c >= 0xd800 && c < 0xe000))) || (more == 3 && (c < 0x10000 || c > 0x10ffff)))
		return 0;
	return more + 1;
}

/* JSON output must be UTF-8: a byte that starts no well-formed sequence becomes '?'. */
void utf8_sanitize(char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t k = utf8_seq((const uint8_t *) s + i, n - i);

		if (k == 0) {
			s[i++] = '?';
			continue;
		}
		i += k;
	}
}

/*
 * How many of the bytes from p[0] (at most n) are a run of printable ASCII, 0x20-0x7e, counted
 * eight at a time: a decoder's text is mostly that, and a byte-by-byte loop showed in profiles.
 * Stops at a whole word, so it may leave a few for the caller's byte loop.
 */
static size_t printable_ascii_words(const uint8_t *p, size_t n)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	size_t i = 0;

	for (; n - i >= 8; i += 8) {
		uint64_t x, below, del;

		memcpy(&x, p + i, 8);
		below = (x - ones * 0x20) & ~x & highs;                    /* some byte < 0x20 */
		del = ((x ^ ones * 0x7f) - ones) & ~(x ^ ones * 0x7f) & highs; /* some byte == 0x7f */
		if ((x & highs) | below | del)
			break;
	}
	return i;
}

/* How many bytes from p[0] (at most n) are ASCII, counted eight at a time (see above). */
static size_t ascii_words(const uint8_t *p, size_t n)
{
	size_t i = 0;

	for (; n - i >= 8; i += 8) {
		uint64_t x;

		memcpy(&x, p + i, 8);
		if (x & 0x8080808080808080ull)
			break;
	}
	return i;
}

/* Is p[0..n) well-formed UTF-8 already (the usual case: nothing to replace)? */
bool utf8_valid(const uint8_t *p, size_t n)
{
	size_t i = ascii_words(p, n);

	while (i < n) {
		size_t k;

		if (p[i] < 0x80) {
			i++;
			continue;
		}
		k = utf8_seq(p + i, n - i);
		if (k == 0)
			return false;
		i += k;
	}
	return true;
}

void text_one_line(char *s, size_t n)
{
	const uint8_t *p = (const uint8_t *) s;
	size_t i = printable_ascii_words(p, n);
	bool high = false;

	for (; i < n; i++) {
		if (p[i] < 0x20 || p[i] == 0x7f)
			s[i] = ' ';
		else if (p[i] >= 0x80)
			high = true;
	}
	if (high) /* ASCII is UTF-8 already */
		utf8_sanitize(s, n);
}

const uint8_t guid_efi_global[16] = {
	0x61, 0xdf, 0xe4, 0x8b, 0xca, 0x93, 0xd2, 0x11, 0xaa, 0x0d, 0x00, 0xe0, 0x98, 0x03, 0x2b, 0x8c };
const uint8_t guid_image_security_db[16] = {
	0xcb, 0xb2, 0x19, 0xd7, 0x3a, 0x3d, 0x96, 0x45, 0xa3, 0xbc, 0xda, 0xd0, 0x0e, 0x67, 0x65, 0x6f };
const uint8_t guid_shim_lock[16] = {
	0x50, 0xab, 0x5d, 0x60, 0x46, 0xe0, 0x00, 0x43, 0xab, 0xb6, 0x3d, 0xd8, 0x10, 0xdd, 0x8b, 0x23 };

static const struct {
	const char *guid;
	const char *name;
} known_guids[] = {
	/* Variable namespaces (UEFI spec §3.3, §32.6; shim). */
	{ "8be4df61-93ca-11d2-aa0d-00e098032b8c", "EFI global variable" },
	{ "d719b2cb-3d3a-4596-a3bc-dad00e67656f", "EFI image security database" },
	{ "605dab50-e046-4300-abb6-3dd810dd8b23", "shim" },
	{ "4a67b082-0a4c-41cf-b6c7-440b29bb8c4f", "systemd-boot loader" },
	/* Signature types (UEFI spec §32.4.1). */
	{ "a5c059a1-94e4-4aa7-87b5-ab155c2bf072", "x509" },
	{ "c1c41626-504c-4092-aca9-41f936934328", "sha256" },
	{ "826ca512-cf10-4ac9-b187-be01496631bd", "sha1" },
	{ "3c5766e8-269c-4e34-aa14-ed776e85b3b6", "rsa2048" },
	{ "0b6e5233-a65c-44c9-9407-d9ab83bfc8bd", "sha224" },
	{ "ff3e5307-9fd0-48c9-85f1-8ad56c701e01", "sha384" },
	{ "093e0fae-a6c4-4f50-9f1b-d41e2b89c19a", "sha512" },
	{ "3bd2a492-96c0-4079-b420-fcf98ef103ed", "x509_sha256" },
	{ "7076876e-80c2-4ee6-aad2-28b349a6865b", "x509_sha384" },
	{ "446dbf63-2502-4cda-bcfa-2465d2b0fe9d", "x509_sha512" },
	/* Signature owners seen in real db/dbx. */
	{ "77fa9abd-0359-4d32-bd60-28f4e78f784b", "Microsoft" },
	/* Configuration tables (UEFI spec §4.6). */
	{ "eb9d2d31-2d88-11d3-9a16-0090273fc14d", "SMBIOS" },
	{ "f2fd1544-9794-4a2c-992e-e5bbcf20e394", "SMBIOS3" },
	{ "8868e871-e4f1-11d3-bc22-0080c73c8881", "ACPI" },
	{ "eb9d2d30-2d88-11d3-9a16-0090273fc14d", "ACPI 1.0" },
	/* GPT partition types (UEFI spec §5.3.3, Discoverable Partitions Specification). */
	{ "c12a7328-f81f-11d2-ba4b-00a0c93ec93b", "EFI System" },
	{ "21686148-6449-6e6f-744e-656564454649", "BIOS boot" },
	{ "0fc63daf-8483-4772-8e79-3d69d8477de4", "Linux filesystem" },
	{ "0657fd6d-a4ab-43c4-84e5-0933c84b4f4f", "Linux swap" },
	{ "e6d6d379-f507-44c2-a23c-238f2a3df928", "Linux LVM" },
	{ "a19d880f-05fc-4d3b-a006-743f0f84911e", "Linux RAID" },
	{ "4f68bce3-e8cd-4db1-96e7-fbcaf984b709", "Linux root (x86-64)" },
	{ "933ac7e1-2eb4-4f13-b844-0e14e2aef915", "Linux home" },
	{ "bc13c2ff-59e6-4262-a352-b275fd6f7172", "Linux extended boot" },
	{ "ebd0a0a2-b9e5-4433-87c0-68b6b72699c7", "Microsoft basic data" },
	{ "e3c9e316-0b5c-4db8-817d-f92df00215ae", "Microsoft reserved" },
	{ "de94bba4-06d1-4d40-a16a-bfd50179d6ac", "Windows recovery" },
};

const char *guid_name(const uint8_t g[16])
{
	char buf[MB_GUID_STR];
	size_t i;

	guid_format(g, buf);
	for (i = 0; i < sizeof(known_guids) / sizeof(known_guids[0]); i++)
		if (strcmp(buf, known_guids[i].guid) == 0)
			return known_guids[i].name;
	return NULL;
}

bool guid_equal_str(const uint8_t g[16], const char *text)
{
	char buf[MB_GUID_STR];

	return strcmp(guid_format(g, buf), text) == 0;
}

static size_t put_utf8(char *out, uint32_t c)
{
	if (c < 0x80) {
		out[0] = (char) c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char) (0xc0 | (c >> 6));
		out[1] = (char) (0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		out[0] = (char) (0xe0 | (c >> 12));
		out[1] = (char) (0x80 | ((c >> 6) & 0x3f));
		out[2] = (char) (0x80 | (c & 0x3f));
		return 3;
	}
	out[0] = (char) (0xf0 | (c >> 18));
	out[1] = (char) (0x80 | ((c >> 12) & 0x3f));
	out[2] = (char) (0x80 | ((c >> 6) & 0x3f));
	out[3] = (char) (0x80 | (c & 0x3f));
	return 4;
}

/* The one UTF-16LE converter; the two modes differ only in what they do with what is not text. */
static char *utf16le_convert(const uint8_t *p, size_t n, bool strict)
{
	size_t units = n / 2, i, len = 0;
	char *s;

	if (strict) {
		while (units > 0 && p[2 * units - 2] == 0 && p[2 * units - 1] == 0)
			units--;
		if (units == 0 || n % 2)
			return NULL;
	} else if (units > MB_DEC_MAX_STRING) {
		units = MB_DEC_MAX_STRING;
	}
	/* At most 3 bytes per unit (a surrogate pair is 2 units for 4 bytes). */
	s = malloc(units * 3 + 1);
	if (!s)
		return NULL;
	for (i = 0; i < units; i++) {
		uint32_t c = p[2 * i] | (uint32_t) p[2 * i + 1] << 8;

		if (strict && (c == 0 || (c >= 0xd800 && c < 0xe000) || (c < 0x20 && c != '\t' && c != '\n' && c != '\r'))) {
			/* Surrogates, NULs or controls in a measured string: not text a rule may judge. */
			free(s);
			return NULL;
		}
		if (c == 0)
			break;
		if (c >= 0xd800 && c < 0xdc00 && i + 1 < units) {
			uint32_t lo = p[2 * i + 2] | (uint32_t) p[2 * i + 3] << 8;

			if (lo >= 0xdc00 && lo < 0xe000) {
				c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
				i++;
			} else {
				c = 0xfffd;
			}
		} else if (c >= 0xd800 && c < 0xe000) {
			c = 0xfffd;
		}
		len += put_utf8(s + len, c);
	}
	s[len] = 0;
	return s;
}

char *utf16le_to_utf8(const uint8_t *p, size_t n)
{
	return utf16le_convert(p, n, false);
}

char *utf16le_to_utf8_strict(const uint8_t *p, size_t n)
{
	return utf16le_convert(p, n, true);
}

static bool printable_unit(uint32_t c)
{
	if (c == '\t' || c == '\n' || c == '\r')
		return true;
	return c >= 0x20 && !(c >= 0x7f && c < 0xa0) && c != 0xfffe && c != 0xffff;
}

bool looks_utf16(const uint8_t *p, size_t n)
{
	size_t units, i, ascii = 0;

	/* systemd-boot has been seen to end a UTF-16 string with a single NUL byte. */
	if (n % 2 && p[n - 1] == 0)
		n--;
	if (n < 2 || n % 2)
		return false;
	units = n / 2;
	while (units > 0 && p[2 * units - 2] == 0 && p[2 * units - 1] == 0)
		units--;
	if (units == 0)
		return false;
	for (i = 0; i < units; i++) {
		uint32_t c = p[2 * i] | (uint32_t) p[2 * i + 1] << 8;

		if (!printable_unit(c))
			return false;
		if (c < 0x80)
			ascii++;
	}
	/* Firmware and boot loader strings are mostly ASCII; random bytes (a GUID, a
	 * hash) that happen to pair into printable units are not. */
	return ascii * 2 >= units;
}

size_t strip_nuls(const uint8_t *p, size_t n)
{
	while (n > 0 && p[n - 1] == 0)
		n--;
	return n;
}

bool looks_text(const uint8_t *p, size_t n)
{
	size_t i = 0;

	n = strip_nuls(p, n);
	if (n == 0)
		return false;
	i = printable_ascii_words(p, n);
	while (i < n) {
		uint8_t b = p[i];
		size_t k;
		uint32_t c;

		if (b < 0x80) {
			if (!printable_unit(b))
				return false;
			i++;
			continue;
		}
		/* Well-formed UTF-8 only (RFC 3629): no overlongs, no surrogates. */
		k = utf8_seq(p + i, n - i);
		if (k == 0)
			return false;
		c = k == 2 ? (uint32_t) (b & 0x1f) << 6 | (p[i + 1] & 0x3f) : 0xa0;
		if (!printable_unit(c))
			return false;
		i += k;
	}
	return true;
}

text_encoding text_encoding_of(const uint8_t *p, size_t n)
{
	if (looks_text(p, n))
		return TEXT_UTF8;
	if (looks_utf16(p, n))
		return TEXT_UTF16;
	return TEXT_NONE;
}

/* What a policy's text rules judge: ASCII-or-more bytes without controls (anything but a NUL
 * before the trailing ones, a C0 control other than tab, LF, CR, or DEL), else strict UTF-16LE
 * when the second byte is a NUL (an ASCII first character). */
char *text_judged(const uint8_t *p, size_t n)
{
	size_t len = strip_nuls(p, n), i;
	char *s;

	errno = 0; /* NULL for no text leaves it 0; a failed allocation sets ENOMEM */
	if (len == 0)
		return NULL;
	for (i = 0; i < len; i++) {
		uint8_t c = p[i];

		if (c == 0 || (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f)
			return n >= 4 && p[1] == 0 ? utf16le_to_utf8_strict(p, n) : NULL;
	}
	s = malloc(len + 1);
	if (!s)
		return NULL;
	memcpy(s, p, len);
	s[len] = 0;
	return s;
}

bool dec_add_text_or_hex(mb_decoded_node *o, const uint8_t *p, size_t n, const char **ret_text)
{
	text_encoding enc = text_encoding_of(p, n);

	if (ret_text)
		*ret_text = NULL;
	if (enc == TEXT_UTF8) {
		dec_add_strn(o, "text", (const char *) p, strip_nuls(p, n));
		dec_add_str(o, "encoding", "utf-8");
	} else if (enc == TEXT_UTF16) {
		char *s = utf16le_to_utf8(p, n);

		if (!s)
			return false;
		dec_add_str(o, "text", s);
		free(s);
		dec_add_str(o, "encoding", "utf-16");
	} else {
		dec_add_hex(o, "hex", p, n);
		return false;
	}
	if (ret_text)
		*ret_text = mb_decoded_string(mb_decoded_get(o, "text"));
	return true;
}
