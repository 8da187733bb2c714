/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The typed parsers of event data (src/lib/events/event-data.h), which the decoder, policy,
 * predict and replay share. Known values come from outside mboot: tpm2-tools' tpm2_eventlog
 * output kept in the corpus (tests/data/corpus/tpm2-tools/expected/event-raw/, one YAML a log), and
 * `tpm2_eventlog gdc-host.bin` (event 1: "537461727475704c6f63616c6974790003", StartupLocality
 * 3, as PROVENANCE.md says). Every shorter prefix and hostile lengths must fail with a reason.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <mboot/eventlog.h>
#include "corpus-util.h"
#include "lib/events/decode-internal.h"
#include "lib/events/event-data.h"
#include "shared/hex.h"
#include "shared/reader.h"

static const mb_event *corpus_event(mb_event_log **log, const char *rel, size_t i, uint32_t type)
{
	const mb_event *ev;

	*log = corpus_log(rel);
	assert_non_null(*log);
	assert_true(i < mb_event_log_count(*log));
	ev = mb_event_log_event(*log, i);
	assert_int_equal(ev->type, type);
	return ev;
}

/* Every prefix of a well-formed structure that fits exactly is malformed, with a reason. */
#define ASSERT_PREFIXES_FAIL(parse, data, n, out)                                        \
	do {                                                                               \
		size_t k_;                                                                 \
		for (k_ = 0; k_ < (n); k_++) {                                             \
			dec_why w_ = { .text = "" };                                       \
			assert_int_equal(parse((data), k_, (out), &w_), -EBADMSG);         \
			assert_true(w_.text[0] != 0);                                      \
			assert_int_equal(parse((data), k_, (out), NULL), -EBADMSG);        \
		}                                                                          \
	} while (0)

/* event-uefivar.bin.yaml, EventNum 1: VariableName 8be4df61-93ca-11d2-aa0d-00e098032b8c,
 * UnicodeNameLength 10, VariableDataLength 1, UnicodeName SecureBoot, VariableData "01". */
static void test_efi_variable_corpus(void **state)
{
	mb_event_log *log;
	const mb_event *ev = corpus_event(&log, "tpm2-tools/event-uefivar.bin", 1, MB_EV_EFI_VARIABLE_DRIVER_CONFIG);
	efi_variable_data v;
	char g[MB_GUID_STR];

	(void) state;
	assert_int_equal(ev->data_size, 53);
	assert_int_equal(efi_variable_data_parse(ev->data, ev->data_size, &v, NULL), 0);
	assert_string_equal(guid_format(v.guid, g), "8be4df61-93ca-11d2-aa0d-00e098032b8c");
	assert_int_equal(v.name_len, 10);
	assert_int_equal(v.data_len, 1);
	assert_int_equal(v.data[0], 0x01);
	assert_int_equal(v.trailing, 0);
	assert_true(efi_variable_data_named(&v, "SecureBoot"));
	assert_false(efi_variable_data_named(&v, "SecureBoo"));
	assert_false(efi_variable_data_named(&v, "SecureBootX"));
	assert_false(efi_variable_data_named(&v, "Secureboot"));
	ASSERT_PREFIXES_FAIL(efi_variable_data_parse, ev->data, ev->data_size, &v);
	mb_event_log_free(log);
}

static size_t var_header(uint8_t *p, uint64_t name_len, uint64_t data_len)
{
	size_t i;

	memset(p, 0xab, 16);
	for (i = 0; i < 8; i++) {
		p[16 + i] = (uint8_t) (name_len >> (8 * i));
		p[24 + i] = (uint8_t) (data_len >> (8 * i));
	}
	return 32;
}

static void expect_var_error(const uint8_t *p, size_t n, const char *needle)
{
	efi_variable_data v;
	dec_why w = { .text = "" };

	assert_int_equal(efi_variable_data_parse(p, n, &v, &w), -EBADMSG);
	assert_non_null(strstr(w.text, needle));
}

static void test_efi_variable_hostile(void **state)
{
	uint8_t buf[64] = { 0 };
	efi_variable_data v;
	size_t n;

	(void) state;
	expect_var_error(buf, 0, "shorter than its 32-byte header");
	expect_var_error(buf, 31, "31 bytes, shorter than its 32-byte header");
	/* lengths that would wrap when doubled or added */
	n = var_header(buf, UINT64_MAX, 0);
	expect_var_error(buf, n, "UnicodeNameLength 18446744073709551615 overruns");
	n = var_header(buf, UINT64_MAX / 2 + 1, 0);
	expect_var_error(buf, n + 8, "UnicodeNameLength");
	n = var_header(buf, 2, UINT64_MAX);
	expect_var_error(buf, n + 4, "VariableDataLength 18446744073709551615 overruns the event (0 bytes left)");
	n = var_header(buf, 2, 5);
	expect_var_error(buf, n + 4 + 4, "VariableDataLength 5 overruns the event (4 bytes left)");
	/* an empty name and empty data are a structure; what follows is counted, not read */
	n = var_header(buf, 0, 0);
	assert_int_equal(efi_variable_data_parse(buf, n + 3, &v, NULL), 0);
	assert_int_equal(v.name_len, 0);
	assert_int_equal(v.data_len, 0);
	assert_int_equal(v.trailing, 3);
	assert_false(efi_variable_data_named(&v, "db"));
	assert_true(efi_variable_data_named(&v, ""));
}

/* event-sd-boot-fedora37.bin.yaml, EventNum 25 (PCR 9): "ec223b8f0d0000004c696e757820696e6974726400",
 * the Linux EFI stub's initrd tag 0x8F3B22EC with 13 bytes, "Linux initrd" and a NUL. */
static void test_tagged_corpus(void **state)
{
	mb_event_log *log;
	const mb_event *ev = corpus_event(&log, "tpm2-tools/event-sd-boot-fedora37.bin", 25, MB_EV_EVENT_TAG);
	tagged_event t;

	(void) state;
	assert_int_equal(ev->pcr, 9);
	assert_int_equal(ev->data_size, 21);
	assert_int_equal(tagged_event_parse(ev->data, ev->data_size, &t, NULL), 0);
	assert_int_equal(t.id, 0x8F3B22ECu);
	assert_int_equal(t.size, 13);
	assert_memory_equal(t.data, "Linux initrd", 13);
	assert_int_equal(t.trailing, 0);
	ASSERT_PREFIXES_FAIL(tagged_event_parse, ev->data, ev->data_size, &t);
	mb_event_log_free(log);
}

static void test_tagged_hostile(void **state)
{
	static const uint8_t huge[] = { 0xec, 0x22, 0x3b, 0x8f, 0xff, 0xff, 0xff, 0xff, 'x' };
	static const uint8_t extra[] = { 1, 0, 0, 0, 1, 0, 0, 0, 'a', 'b', 'c' };
	tagged_event t;
	dec_why w = { .text = "" };

	(void) state;
	assert_int_equal(tagged_event_parse(huge, 7, &t, &w), -EBADMSG);
	assert_string_equal(w.text, "TCG_PCClientTaggedEvent: 7 bytes, shorter than its 8-byte header");
	assert_int_equal(tagged_event_parse(huge, sizeof(huge), &t, &w), -EBADMSG);
	assert_string_equal(w.text, "TCG_PCClientTaggedEvent: taggedEventDataSize 4294967295 overruns the event (1 bytes left)");
	assert_int_equal(tagged_event_parse(extra, sizeof(extra), &t, NULL), 0);
	assert_int_equal(t.id, 1);
	assert_int_equal(t.size, 1);
	assert_int_equal(t.data[0], 'a');
	assert_int_equal(t.trailing, 2);
}

static void test_startup_locality(void **state)
{
	static const uint8_t sig[] = "StartupLocality";
	mb_event_log *log;
	const mb_event *ev = corpus_event(&log, "go-tpm-tools/gdc-host.bin", 1, MB_EV_NO_ACTION);
	uint8_t buf[18], loc = 0xee;
	dec_why w = { .text = "" };

	(void) state;
	assert_int_equal(ev->data_size, 17);
	assert_int_equal(startup_locality_parse(ev->data, ev->data_size, &loc, NULL), 0);
	assert_int_equal(loc, 3);
	mb_event_log_free(log);

	memcpy(buf, sig, 16);
	buf[16] = 4;
	buf[17] = 0;
	loc = 0xee;
	/* the signature alone, or a byte too many: malformed, nothing set */
	assert_int_equal(startup_locality_parse(buf, 16, &loc, &w), -EBADMSG);
	assert_string_equal(w.text, "StartupLocality event: 16 bytes, 17 expected");
	assert_int_equal(startup_locality_parse(buf, 18, &loc, &w), -EBADMSG);
	assert_string_equal(w.text, "StartupLocality event: 18 bytes, 17 expected");
	assert_int_equal(loc, 0xee);
	/* another signature, or too short for one: not this event, and no reason given */
	w.text[0] = 0;
	assert_int_equal(startup_locality_parse(buf, 15, &loc, &w), -ENOENT);
	assert_int_equal(startup_locality_parse((const uint8_t *) "Spec ID Event03\0\0", 17, &loc, &w), -ENOENT);
	buf[15] = ' '; /* no NUL after the name */
	assert_int_equal(startup_locality_parse(buf, 17, &loc, &w), -ENOENT);
	assert_int_equal(w.text[0], 0);
	assert_int_equal(loc, 0xee);
}

/*
 * event-sd-boot-fedora37.bin.yaml, EventNum 24 (systemd-boot, PCR 12): String
 * "\x20\0c\0o\0n\0s\0o\0l\0e\0=\0t\0t\0y\0S\00\0 ..." (UTF-16LE with a NUL unit). And sbctl's
 * t480s_eventlog event 44 (PCR 8): the same kind of command line ending in a single NUL byte,
 * which systemd-boot has been seen to log (xxd: "...2000 6500 2000 00").
 */
static void test_text(void **state)
{
	static const uint8_t guid[16] = { 0x61, 0xdf, 0xe4, 0x8b, 0xca, 0x93, 0xd2, 0x11,
					  0xaa, 0x0d, 0x00, 0xe0, 0x98, 0x03, 0x2b, 0x8c };
	mb_event_log *log;
	const mb_event *ev = corpus_event(&log, "tpm2-tools/event-sd-boot-fedora37.bin", 24, MB_EV_IPL);
	char *t;

	(void) state;
	assert_int_equal(text_encoding_of(ev->data, ev->data_size), TEXT_UTF16);
	t = text_judged(ev->data, ev->data_size);
	assert_non_null(t);
	assert_string_equal(t, " console=ttyS0 console=tty0 efi=debug ");
	free(t);
	mb_event_log_free(log);

	ev = corpus_event(&log, "sbctl/t480s_eventlog", 44, MB_EV_IPL);
	assert_int_equal(ev->data_size % 2, 1);
	assert_int_equal(ev->data[ev->data_size - 1], 0);
	assert_int_equal(text_encoding_of(ev->data, ev->data_size), TEXT_UTF16);
	/* judged strictly: an odd length is not UTF-16 a rule may see */
	assert_null(text_judged(ev->data, ev->data_size));
	mb_event_log_free(log);

	assert_int_equal(text_encoding_of((const uint8_t *) "grub_cmd: linux /vmlinuz\0", 25), TEXT_UTF8);
	t = text_judged((const uint8_t *) "grub_cmd: linux /vmlinuz\0\0", 26);
	assert_string_equal(t, "grub_cmd: linux /vmlinuz");
	free(t);
	assert_int_equal(text_encoding_of(guid, sizeof(guid)), TEXT_NONE);
	assert_null(text_judged(guid, sizeof(guid)));
	assert_int_equal(text_encoding_of(guid, 0), TEXT_NONE);
	assert_null(text_judged(guid, 0));
	assert_null(text_judged((const uint8_t *) "\0\0\0", 3));
	/* a control inside ASCII: not text to judge (nor UTF-16: the second byte is no NUL) */
	assert_null(text_judged((const uint8_t *) "ab\001c", 4));
	assert_int_equal(text_encoding_of((const uint8_t *) "ab\001c", 4), TEXT_NONE);
}

/* event-arch-linux.bin.yaml, EventNum 5 (tpm2_eventlog): KEK, VariableDataLength 2390, two
 * x509 lists a5c059a1-94e4-4aa7-87b5-ab155c2bf072: ListSize 830 / HeaderSize 0 / SignatureSize
 * 802, then 1560 / 0 / 1532, the second's first owner 77fa9abd-0359-4d32-bd60-28f4e78f784b. */
static void test_efi_siglist_corpus(void **state)
{
	mb_event_log *log;
	const mb_event *ev = corpus_event(&log, "tpm2-tools/event-arch-linux.bin", 5, MB_EV_EFI_VARIABLE_DRIVER_CONFIG);
	efi_variable_data v;
	efi_siglist l;
	byte_reader r;
	char g[MB_GUID_STR];

	(void) state;
	assert_int_equal(efi_variable_data_parse(ev->data, ev->data_size, &v, NULL), 0);
	assert_int_equal(v.data_len, 2390);
	reader_init(&r, v.data, (size_t) v.data_len, 0);
	assert_int_equal(efi_siglist_next(&r, &l, NULL), 1);
	assert_string_equal(guid_format(l.type, g), "a5c059a1-94e4-4aa7-87b5-ab155c2bf072");
	assert_string_equal(l.type_name, "x509");
	assert_int_equal(l.at, 0);
	assert_int_equal(l.list_size, 830);
	assert_int_equal(l.header_size, 0);
	assert_int_equal(l.sig_size, 802);
	assert_int_equal(l.count, 1);
	assert_int_equal(efi_siglist_next(&r, &l, NULL), 1);
	assert_int_equal(l.at, 830);
	assert_int_equal(l.list_size, 1560);
	assert_int_equal(l.sig_size, 1532);
	assert_string_equal(guid_format(l.entries, g), "77fa9abd-0359-4d32-bd60-28f4e78f784b");
	assert_int_equal(efi_siglist_next(&r, &l, NULL), 0);
	assert_int_equal(efi_siglist_check(v.data, (size_t) v.data_len, 0, NULL), 0);
	/* every shorter value ends in a list cut short */
	{
		size_t k;

		for (k = 1; k < (size_t) v.data_len; k++)
			if (k != 830)
				assert_int_equal(efi_siglist_check(v.data, k, 0, NULL), -EBADMSG);
	}
	mb_event_log_free(log);
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t) v;
	p[1] = (uint8_t) (v >> 8);
	p[2] = (uint8_t) (v >> 16);
	p[3] = (uint8_t) (v >> 24);
}

/* A list header: SignatureType (EFI_CERT_SHA256_GUID c1c41626-504c-4092-aca9-41f936934328,
 * or the x509 one), the three sizes. */
static void esl_header(uint8_t *p, bool sha256, uint32_t list, uint32_t hdr, uint32_t sig)
{
	static const uint8_t g_sha256[16] = { 0x26, 0x16, 0xc4, 0xc1, 0x4c, 0x50, 0x92, 0x40,
					      0xac, 0xa9, 0x41, 0xf9, 0x36, 0x93, 0x43, 0x28 };
	static const uint8_t g_x509[16] = { 0xa1, 0x59, 0xc0, 0xa5, 0xe4, 0x94, 0xa7, 0x4a,
					    0x87, 0xb5, 0xab, 0x15, 0x5c, 0x2b, 0xf0, 0x72 };

	memcpy(p, sha256 ? g_sha256 : g_x509, 16);
	put32(p + 16, list);
	put32(p + 20, hdr);
	put32(p + 24, sig);
}

static void assert_siglist_fails(const uint8_t *p, size_t n, uint64_t base, const char *reason)
{
	dec_why w = { .text = "" };

	assert_int_equal(efi_siglist_check(p, n, base, &w), -EBADMSG);
	if (!strstr(w.text, reason))
		fail_msg("\"%s\" does not say \"%s\"", w.text, reason);
}

/* Hostile lists: each rule of event-data.h refused with the list's offset (base counted). */
static void test_efi_siglist_hostile(void **state)
{
	uint8_t b[400];
	efi_siglist l;
	byte_reader r;

	(void) state;
	memset(b, 0xab, sizeof(b));
	esl_header(b, true, 28 + 2 * 48, 0, 48);
	esl_header(b + 124, false, 28 + 20, 0, 20);
	assert_int_equal(efi_siglist_check(b, 124 + 48, 0, NULL), 0);
	reader_init(&r, b, 124 + 48, 0);
	assert_int_equal(efi_siglist_next(&r, &l, NULL), 1);
	assert_string_equal(l.type_name, "sha256");
	assert_int_equal(l.count, 2);
	assert_ptr_equal(l.entries, b + 28);
	/* truncated: every prefix but the end of the first list */
	{
		size_t k;

		for (k = 1; k < 124 + 48; k++)
			if (k != 124)
				assert_int_equal(efi_siglist_check(b, k, 0, NULL), -EBADMSG);
	}
	assert_siglist_fails(b, 124 + 10, 0, "EFI_SIGNATURE_LIST at offset 124: truncated header (10 bytes left)");
	assert_siglist_fails(b, 124 + 10, 1000, "at offset 1124: truncated header");
	/* ListSize past the data, and a u32 near 4 GiB (no wrap) */
	assert_siglist_fails(b, 124 + 40, 0, "offset 124: SignatureListSize 48 overruns the value (40 bytes left)");
	esl_header(b, true, 0xffffffffu, 0, 48);
	assert_siglist_fails(b, 124, 0, "offset 0: SignatureListSize 4294967295 overruns");
	/* ListSize below its own header */
	esl_header(b, true, 4, 0, 48);
	assert_siglist_fails(b, 124, 0, "SignatureListSize 4 is below its 28-byte header");
	/* header size overflow: past the list, near 4 GiB, or non-zero on a type the spec defines */
	esl_header(b, false, 28 + 20, 21, 20);
	assert_siglist_fails(b, 48, 0, "SignatureHeaderSize 21 invalid for this list (overruns it)");
	esl_header(b, false, 28 + 20, 0xfffffff0u, 20);
	assert_siglist_fails(b, 48, 0, "SignatureHeaderSize 4294967280 invalid");
	esl_header(b, true, 28 + 16 + 48, 16, 48);
	assert_siglist_fails(b, 28 + 16 + 48, 0, "SignatureHeaderSize 16 invalid for this list (must be 0");
	/* SignatureSize 0, and smaller than the owner GUID */
	esl_header(b, false, 28 + 16, 0, 0);
	assert_siglist_fails(b, 28 + 16, 0, "SignatureSize 0 < 16");
	esl_header(b, false, 28 + 16, 0, 15);
	assert_siglist_fails(b, 28 + 16, 0, "SignatureSize 15 < 16");
	/* a list without signatures */
	esl_header(b, false, 28, 0, 16);
	assert_siglist_fails(b, 28, 0, "offset 0: no signatures");
	/* not a multiple, and a sha256 list of other than 48-byte entries */
	esl_header(b, true, 28 + 50, 0, 48);
	assert_siglist_fails(b, 28 + 50, 0, "50 bytes of signatures are not a multiple of SignatureSize 48");
	esl_header(b, true, 28 + 64, 0, 32);
	assert_siglist_fails(b, 28 + 64, 0, "sha256 list with SignatureSize 32");
	/* nothing at all is no list, and well-formed */
	assert_int_equal(efi_siglist_check(b, 0, 0, NULL), 0);
}

/* The event numbered num (tpm2_eventlog's EventNum) of a log under $MB_TESTDATA, read into *log
 * (the log a previous call read there is freed, with its events). */
static const mb_event *testdata_event(mb_event_log **log, const char *rel, uint32_t num, uint32_t type)
{
	size_t size = 0, i;
	uint8_t *b = testdata_load(rel, &size);

	mb_event_log_free(*log);
	*log = NULL;
	assert_non_null(b);
	assert_int_equal(mb_event_log_parse_take(b, size, log, NULL), 0);
	for (i = 0; i < mb_event_log_count(*log); i++) {
		const mb_event *ev = mb_event_log_event(*log, i);

		if (ev->number == num) {
			assert_int_equal(ev->type, type);
			return ev;
		}
	}
	fail_msg("%s: no event %u", rel, num);
	return NULL;
}

static void assert_file_path(const mb_event *ev, uint64_t length, size_t dp_len, const char *want)
{
	efi_image_load il;
	char *path = NULL;

	assert_int_equal(efi_image_load_parse(ev->data, ev->data_size, &il, NULL), 0);
	assert_int_equal(il.length, length);
	assert_int_equal(il.device_path_len, dp_len);
	assert_int_equal(il.trailing, 0);
	if (!want) {
		assert_int_equal(devpath_file_path(il.device_path, il.device_path_len, &path, NULL), -ENOENT);
		assert_null(path);
		return;
	}
	assert_int_equal(devpath_file_path(il.device_path, il.device_path_len, &path, NULL), 0);
	assert_string_equal(path, want);
	free(path);
}

/*
 * A real Secure Boot boot (tests/data/grub-signed/log.bin), as `tpm2_eventlog` (tpm2-tools 5.4)
 * prints it:
 *  - EventNum 24, shim: ImageLengthInMemory 1048504, LengthOfDevicePath 112, DevicePath
 *    02010c00d041030a00000000 0101060000010401 2a00...e50202 (PciRoot, Pci, HD) then
 *    0404 3000 "\EFI\BOOT\BOOTX64.EFI" in UTF-16LE, NUL, 7fff0400;
 *  - EventNum 30, GRUB (the one predict's $cmdpath comes from): ImageLengthInMemory 4183488,
 *    LengthOfDevicePath 52, DevicePath 0404 3000 "\EFI\BOOT\grubx64.efi" UTF-16LE, NUL, 7fff0400
 *    (shim loads it relative to its own device: a file-path node only);
 *  - EventNum 40, the kernel: ImageLengthInMemory 8247232, LengthOfDevicePath 0.
 */
static void test_image_load_file_path(void **state)
{
	mb_event_log *log = NULL;
	const mb_event *ev;

	(void) state;
	ev = testdata_event(&log, "grub-signed/log.bin", 24, MB_EV_EFI_BOOT_SERVICES_APPLICATION);
	assert_file_path(ev, 1048504, 112, "/EFI/BOOT/BOOTX64.EFI");
	ev = testdata_event(&log, "grub-signed/log.bin", 30, MB_EV_EFI_BOOT_SERVICES_APPLICATION);
	assert_file_path(ev, 4183488, 52, "/EFI/BOOT/grubx64.efi");
	ev = testdata_event(&log, "grub-signed/log.bin", 40, MB_EV_EFI_BOOT_SERVICES_APPLICATION);
	assert_file_path(ev, 8247232, 0, NULL);
	mb_event_log_free(log);
}

/* A path split over file-path nodes ("\EFI", "debian\", "\grubx64.efi"): one path, one slash
 * between parts; a node after the end of the first instance is not the image's; hostile nodes. */
static void test_file_path_hostile(void **state)
{
	static const uint8_t split[] = {
		4, 4, 12, 0, '\\', 0, 'E', 0, 'F', 0, 'I', 0,
		1, 1, 6, 0, 0, 0, /* another node between: skipped */
		4, 4, 18, 0, 'd', 0, 'e', 0, 'b', 0, 'i', 0, 'a', 0, 'n', 0, '\\', 0,
		4, 4, 30, 0, '\\', 0, 'g', 0, 'r', 0, 'u', 0, 'b', 0, 'x', 0, '6', 0, '4', 0, '.', 0, 'e', 0,
		'f', 0, 'i', 0, 0, 0,
		0x7f, 0x01, 4, 0, /* end of the instance */
		4, 4, 8, 0, 'x', 0, 0, 0,
		0x7f, 0xff, 4, 0,
	};
	static const uint8_t odd[] = { 4, 4, 7, 0, 'x', 0, 0 };
	static const uint8_t none[] = { 2, 1, 12, 0, 0xd0, 0x41, 3, 0x0a, 0, 0, 0, 0, 0x7f, 0xff, 4, 0 };
	uint8_t hdr[32] = { 0 };
	efi_image_load il;
	dec_why w = { .text = "" };
	char *path = NULL;

	(void) state;
	assert_int_equal(devpath_file_path(split, sizeof(split), &path, NULL), 0);
	assert_string_equal(path, "/EFI/debian/grubx64.efi");
	free(path);
	assert_int_equal(devpath_file_path(none, sizeof(none), &path, &w), -ENOENT);
	assert_null(path);
	assert_int_equal(devpath_file_path(odd, sizeof(odd), &path, &w), -EBADMSG);
	assert_non_null(strstr(w.text, "odd length"));
	assert_null(path);
	/* a node header cut short, a length below 4, a node past the path */
	assert_int_equal(devpath_file_path(split, 3, &path, NULL), -EBADMSG);
	assert_int_equal(devpath_file_path((const uint8_t[]) { 4, 4, 2, 0 }, 4, &path, NULL), -EBADMSG);
	assert_int_equal(devpath_file_path(split, 20, &path, NULL), -EBADMSG);
	/* UEFI_IMAGE_LOAD_EVENT: every prefix of the header, a device path past the event */
	ASSERT_PREFIXES_FAIL(efi_image_load_parse, hdr, sizeof(hdr), &il);
	hdr[24] = 1;
	w.text[0] = 0;
	assert_int_equal(efi_image_load_parse(hdr, sizeof(hdr), &il, &w), -EBADMSG);
	assert_non_null(strstr(w.text, "LengthOfDevicePath 1 overruns the event (0 bytes left)"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_efi_variable_corpus),
		cmocka_unit_test(test_efi_variable_hostile),
		cmocka_unit_test(test_tagged_corpus),
		cmocka_unit_test(test_tagged_hostile),
		cmocka_unit_test(test_startup_locality),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_efi_siglist_corpus),
		cmocka_unit_test(test_efi_siglist_hostile),
		cmocka_unit_test(test_image_load_file_path),
		cmocka_unit_test(test_file_path_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
