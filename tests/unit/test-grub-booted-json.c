/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `mboot grub keep-booted --json`'s document (mb_grub_booted_to_json) for configs built here:
 * a kept one, whose copy is named by python3's hashlib.sha256 of its measured path and whose
 * digest is SHA-256("abc") (FIPS 180-2), and one of each other status, with nulls.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <mboot/mboot.h>

static void test_document(void **state)
{
	static const uint8_t abc[32] = {
		0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23,
		0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad,
	};
	char p0[] = "(hd0,gpt1)/EFI/debian/grub.cfg", p1[] = "(hd0,gpt2)/boot/grub/grub.cfg", p2[] = "(x)/a",
	     p3[] = "(x)/../b", f0[] = "/esp/EFI/debian/grub.cfg", f1[] = "/boot/grub/grub.cfg";
	mb_grub_booted b[4] = {
		{ .measured_path = p0, .status = MB_GRUB_BOOTED_FOUND, .file = f0 },
		{ .measured_path = p1, .status = MB_GRUB_BOOTED_CHANGED, .file = f1 },
		{ .measured_path = p2, .status = MB_GRUB_BOOTED_MISSING },
		{ .measured_path = p3, .status = MB_GRUB_BOOTED_UNSAFE },
	};
	char *text;

	(void) state;
	memcpy(b[0].sha256, abc, 32);
	memcpy(b[1].sha256, abc, 32); /* not kept: not reported */
	text = mb_grub_booted_to_json("/var/lib/mboot/grub", b, 4, false);
	assert_non_null(text);
	assert_string_equal(text,
		"{\"dir\":\"/var/lib/mboot/grub\",\"configs\":["
		"{\"path\":\"(hd0,gpt1)/EFI/debian/grub.cfg\",\"status\":\"kept\",\"file\":\"/esp/EFI/debian/grub.cfg\","
		"\"copy\":\"f789153737827170cd5b419028534ff0d552f4f295e2e8815e3f2ce7f55c9fcc\","
		"\"sha256\":\"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\"},"
		"{\"path\":\"(hd0,gpt2)/boot/grub/grub.cfg\",\"status\":\"changed\",\"file\":\"/boot/grub/grub.cfg\","
		"\"copy\":null,\"sha256\":null},"
		"{\"path\":\"(x)/a\",\"status\":\"missing\",\"file\":null,\"copy\":null,\"sha256\":null},"
		"{\"path\":\"(x)/../b\",\"status\":\"unsafe\",\"file\":null,\"copy\":null,\"sha256\":null}]}");
	free(text);
	text = mb_grub_booted_to_json("d", NULL, 0, true);
	assert_non_null(text);
	assert_string_equal(text, "{\n  \"dir\": \"d\",\n  \"configs\": []\n}");
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_document),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
