/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PCR lists as the tool reads them (--pcr, --pcrs, --userspace-pcrs ...: "0,2,4-7", "all"):
 * decimal indices 0-23 and ascending ranges, comma-separated; anything else is refused and
 * leaves the caller's mask alone. 24 PCRs is what a PC Client TPM has (TCG PC Client Platform
 * TPM Profile, PCR banks of 24 registers).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "tool/tool.h"

static void accepted(const char *s, uint32_t want)
{
	uint32_t mask = 0xdeadbeef;

	if (tool_parse_pcr_list(s, &mask) != 0)
		fprintf(stderr, "refused: \"%s\"\n", s);
	assert_int_equal(tool_parse_pcr_list(s, &mask), 0);
	assert_int_equal(mask, want);
}

static void refused(const char *s)
{
	uint32_t mask = 0xdeadbeef;
	int rc = tool_parse_pcr_list(s, &mask);

	if (rc != -EINVAL)
		fprintf(stderr, "accepted: \"%s\" as 0x%06x\n", s, mask);
	assert_int_equal(rc, -EINVAL);
	assert_int_equal(mask, 0xdeadbeef);
}

static void test_accepted(void **state)
{
	(void) state;
	accepted("0", 0x000001);
	accepted("23", 0x800000);
	accepted("0,2,4-7", 0x0000f5);
	accepted("4-7,0,2", 0x0000f5);
	accepted("0-23", 0xffffff);
	accepted("all", 0xffffff);
	accepted("8-8", 0x000100);
	accepted("08,009", 0x000300); /* decimal, leading zeros and all */
	/* Duplicates and overlaps name a set: once is enough. */
	accepted("1,1", 0x000002);
	accepted("0-3,2-5,4", 0x00003f);
}

static void test_refused(void **state)
{
	(void) state;
	refused("");
	refused("24");
	refused("0-24");
	refused("23,24");
	refused("7-4");
	refused("1,");
	refused(",1");
	refused("1,,2");
	refused(",");
	refused("-1");
	refused("1-");
	refused("1-2-3");
	refused("-");
	refused(" 1");
	refused("1 ");
	refused("1, 2");
	refused("+1");
	refused("1-+2");
	refused("1- 2");
	refused("0x1");
	refused("1.5");
	refused("a");
	refused("ALL");
	refused("all,1");
	/* Digits that overflow: strtoul saturates or wraps, neither may become a PCR. */
	refused("4294967296");
	refused("4294967297");
	refused("18446744073709551616");
	refused("99999999999999999999999999999");
	refused("0-18446744073709551615");
	refused("18446744073709551615-0");
}

/*
 * tpm2_pcrread's selection (verify --pcrs SELECTION@FILE): banks joined by '+', each
 * "bank:list", in the order given; a bank name mboot does not know, an empty part, an
 * empty list or a PCR above 23 is refused.
 */
static void test_selection(void **state)
{
	static const char *const bad[] = {
		"", "sha256", "sha256:", ":0", "md5:0", "sha256:0+", "+sha256:0", "sha256:24", "sha256:0,",
		"sha256:0++sha1:0", "sha1:0+sha1:0+sha1:0+sha1:0+sha1:0+sha1:0+sha1:0+sha1:0+sha1:0",
	};
	uint16_t algs[MB_MAX_BANKS];
	uint32_t pcrs[MB_MAX_BANKS];
	size_t n = 0, i;

	(void) state;
	assert_int_equal(tool_parse_pcr_selection("sha256:7,0,1+sha1:all+sha384:4-6", algs, pcrs, MB_MAX_BANKS, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(algs[0], MB_ALG_SHA256);
	assert_int_equal(pcrs[0], 0x83);
	assert_int_equal(algs[1], MB_ALG_SHA1);
	assert_int_equal(pcrs[1], 0xffffff);
	assert_int_equal(algs[2], MB_ALG_SHA384);
	assert_int_equal(pcrs[2], 0x70);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (tool_parse_pcr_selection(bad[i], algs, pcrs, MB_MAX_BANKS, &n) != -EINVAL)
			fprintf(stderr, "accepted: \"%s\"\n", bad[i]);
		assert_int_equal(tool_parse_pcr_selection(bad[i], algs, pcrs, MB_MAX_BANKS, &n), -EINVAL);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepted),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_selection),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
