/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * EV_EVENT_TAG: TCG_PCClientTaggedEvent (TCG PFP §10.4.2.1 / PC Client spec:
 * u32 taggedEventID; u32 taggedEventDataSize; u8 taggedEventData[]), with the
 * tags Linux's EFI stub and systemd use (systemd docs/TPM2_PCR_MEASUREMENTS.md).
 *
 * EV_IPL: no structure in the spec; what boot loaders put there (GRUB's strings
 * in PCR 8 and file paths in PCR 9, shim's MokList names in PCR 14, systemd's
 * UTF-16 strings) is recognised from the bytes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "decode-internal.h"
#include "lib/grub/grub.h"

static const struct {
	uint32_t id;
	const char *name;
} tags[] = {
	{ 0x8F3B22ECu, "Linux initrd" },     /* Linux EFI stub, LINUX_EFI_INITRD_MEDIA measurement */
	{ 0x8F3B22EDu, "LoadOptions" },      /* Linux EFI stub, command line */
	{ 0xf5bc582au, "loader.conf" },      /* systemd-boot */
	{ 0x6c46f751u, "devicetree addon" }, /* systemd-stub */
	{ 0x49dffe0fu, "initrd addon" },
	{ 0xdac08e1au, "ucode addon" },
	{ 0x13aed6dbu, "UKI profile" },
	{ 0xd5cb7cbcu, "SMBIOS type 1" },
	{ 0xe0d47bc8u, "SMBIOS type 2" },
	{ 0xc0b3bd23u, "SMBIOS type 11" },
};

int tagged_event_parse(const uint8_t *p, size_t n, tagged_event *ret, dec_why *why)
{
	byte_reader r;
	tagged_event t = { 0 };

	reader_init(&r, p, n, 0);
	if (read_u32le(&r, &t.id) < 0 || read_u32le(&r, &t.size) < 0)
		return dec_fail(why, "TCG_PCClientTaggedEvent: %zu bytes, shorter than its 8-byte header", n);
	if (read_bytes(&r, t.size, &t.data) < 0)
		return dec_fail(why, "TCG_PCClientTaggedEvent: taggedEventDataSize %" PRIu32 " overruns the event (%zu bytes left)",
				t.size, reader_left(&r));
	t.trailing = reader_left(&r);
	*ret = t;
	return 0;
}

int dec_event_tag(const mb_event *ev, mb_decoded_node *o, dec_why *why)
{
	tagged_event t;
	const char *name = NULL, *text;
	size_t i;
	int rc;

	rc = tagged_event_parse(ev->data, ev->data_size, &t, why);
	if (rc < 0)
		return rc;
	for (i = 0; i < sizeof(tags) / sizeof(tags[0]); i++)
		if (tags[i].id == t.id)
			name = tags[i].name;
	dec_set_kind(o, "event_tag");
	dec_add_u64(o, "tag_id", t.id);
	if (name)
		dec_add_str(o, "tag_name", name);
	dec_add_u64(o, "tag_data_size", t.size);
	if (t.trailing > 0)
		dec_add_u64(o, "trailing_bytes", t.trailing);
	if (t.size && dec_add_text_or_hex(o, t.data, t.size, &text))
		dec_set_desc(o, "%s (tag 0x%08" PRIx32 "): \"%.80s\"", name ? name : "tagged event", t.id, text);
	else
		dec_set_desc(o, "%s (tag 0x%08" PRIx32 "), %" PRIu32 " bytes", name ? name : "tagged event", t.id, t.size);
	return 0;
}

static const char *const mok_names[] = { "MokList", "MokListX", "MokSBState", "MokListTrusted", "MokPolicy" };

int dec_ipl(const mb_event *ev, mb_decoded_node *o, dec_why *why)
{
	const uint8_t *p = ev->data;
	size_t n = ev->data_size, len = strip_nuls(p, n), i, tl, pl;
	const uint8_t *t;
	grub_string_kind gk;
	text_encoding enc;

	if (n == 0) {
		dec_set_kind(o, "raw");
		dec_add_str(o, "hex", "");
		dec_set_desc(o, "empty");
		return 0;
	}
	/* GRUB: "<label><text>\0", the digest covers <text> (labels: src/lib/grub). Exactly one NUL
	 * at the end, as GRUB writes it; the text itself may hold any byte. */
	gk = grub_string_parse(p, n, &t, &tl, &pl);
	if (gk != GRUB_STRING_NONE) {
		dec_set_kind(o, gk == GRUB_STRING_CMD ? "grub_command" :
				gk == GRUB_STRING_KERNEL_CMDLINE ? "grub_kernel_cmdline" : "grub_module_cmdline");
		dec_add_strn(o, "text", (const char *) t, tl);
		dec_set_desc(o, "%.*s%.*s%s", (int) pl, (const char *) p, (int) (tl > 200 ? 200 : tl),
				(const char *) t, tl > 200 ? "..." : "");
		return 0;
	}
	/* shim (mok.c): the variable name and a NUL, in PCR 14. */
	for (i = 0; i < sizeof(mok_names) / sizeof(mok_names[0]); i++) {
		size_t ml = strlen(mok_names[i]);

		/* Some shim builds logged one byte more than the name and its NUL. */
		if (n > ml && n <= ml + 2 && memcmp(p, mok_names[i], ml) == 0 && p[ml] == 0) {
			dec_set_kind(o, "shim_mok_variable");
			dec_add_str(o, "name", mok_names[i]);
			if (n > ml + 1)
				dec_add_u64(o, "trailing_bytes", n - ml - 1);
			dec_set_desc(o, "shim: %s", mok_names[i]);
			return 0;
		}
	}
	enc = text_encoding_of(p, n);
	if (enc == TEXT_UTF8) {
		/* GRUB measures every file it opens into PCR 9 under its path, e.g. "(hd0,gpt1)/boot/grub/grub.cfg". */
		bool path = ev->pcr == 9 && (p[0] == '(' || p[0] == '/');

		dec_set_kind(o, path ? "grub_file" : "string");
		dec_add_strn(o, path ? "path" : "text", (const char *) p, len);
		dec_set_desc(o, "%s%.*s%s", path ? "file " : "", (int) (len > 200 ? 200 : len), (const char *) p,
				len > 200 ? "..." : "");
		return 0;
	}
	if (enc == TEXT_UTF16) {
		/* systemd-boot / systemd-stub (PCR 8, 11, 12): UTF-16 command lines and section names. */
		char *s = utf16le_to_utf8(p, n);

		if (!s)
			return -ENOMEM;
		dec_set_kind(o, "utf16_string");
		dec_add_str(o, "text", s);
		dec_set_desc(o, "%.200s%s", s, strlen(s) > 200 ? "..." : "");
		free(s);
		return 0;
	}
	(void) why;
	dec_set_kind(o, "raw");
	dec_add_hex(o, "hex", p, n);
	dec_set_desc(o, "%zu bytes of binary data", n);
	return 0;
}
