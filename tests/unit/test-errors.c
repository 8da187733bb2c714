/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mb_strerror names every code mboot defines and mb_error_is_tpm says which are the TPM's. The
 * codes are read from the installed headers (every "#define MB_ERR_NAME (-N)" of
 * include/mboot), so a code added later without words fails here.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <mboot/mboot.h>

#define MAX_CODES 64

typedef struct code {
	char name[64];
	int value;
} code;

/* Every "#define MB_ERR_X (-N)" of the public headers. */
static size_t header_codes(code *out)
{
	const char *root = getenv("MB_SOURCE_ROOT");
	char dir[4096], path[4600], line[512];
	struct dirent *d;
	DIR *dp;
	size_t n = 0;

	assert_non_null(root);
	snprintf(dir, sizeof(dir), "%s/include/mboot", root);
	dp = opendir(dir);
	assert_non_null(dp);
	while ((d = readdir(dp))) {
		size_t len = strlen(d->d_name);
		FILE *f;

		if (len < 3 || strcmp(d->d_name + len - 2, ".h") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		f = fopen(path, "r");
		assert_non_null(f);
		while (fgets(line, sizeof(line), f)) {
			char *p = line, *name, *end;
			long v;

			if (strncmp(p, "#define MB_ERR_", 15) != 0)
				continue;
			name = p + 8;
			p = strpbrk(name, " \t");
			assert_non_null(p);
			*p++ = '\0';
			p += strspn(p, " \t(");
			errno = 0;
			v = strtol(p, &end, 10);
			assert_int_equal(errno, 0);
			assert_true(end > p && v < 0);
			assert_true(n < MAX_CODES);
			assert_true(strlen(name) < sizeof(out[n].name));
			memcpy(out[n].name, name, strlen(name) + 1);
			out[n].value = (int) v;
			n++;
		}
		fclose(f);
	}
	closedir(dp);
	return n;
}

static void test_strerror_names_every_code(void **state)
{
	code c[MAX_CODES];
	size_t n = header_codes(c), i, j;

	(void) state;
	/* the eight of today at least (a header moved elsewhere must not make this pass empty) */
	assert_true(n >= 8);
	for (i = 0; i < n; i++) {
		const char *s = mb_strerror(c[i].value);
		char libc[256];

		snprintf(libc, sizeof(libc), "%s", strerror(-c[i].value));
		print_message("%s (%d): %s\n", c[i].name, c[i].value, s);
		assert_non_null(s);
		assert_true(s[0] != '\0');
		assert_null(strstr(s, "Unknown error"));
		assert_string_not_equal(s, libc);
		/* each its own words */
		for (j = 0; j < i; j++)
			if (c[j].value != c[i].value)
				assert_string_not_equal(s, mb_strerror(c[j].value));
	}
}

static void test_error_is_tpm(void **state)
{
	code c[MAX_CODES];
	size_t n = header_codes(c), i;

	(void) state;
	for (i = 0; i < n; i++) {
		/* MB_ERR_TPM and MB_ERR_TPM_*: the TPM's; mb_measure's, attest's and policy's are not */
		bool tpm = strcmp(c[i].name, "MB_ERR_TPM") == 0 || strncmp(c[i].name, "MB_ERR_TPM_", 11) == 0;

		print_message("%s: %s\n", c[i].name, tpm ? "TPM" : "not TPM");
		assert_int_equal(mb_error_is_tpm(c[i].value), tpm);
	}
	assert_false(mb_error_is_tpm(0));
	assert_false(mb_error_is_tpm(-EIO));
	assert_false(mb_error_is_tpm(-EINVAL));
	assert_false(mb_error_is_tpm(4000));
	/* the errno words stay libc's where mboot has none of its own */
	assert_string_equal(mb_strerror(-EIO), strerror(EIO));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strerror_names_every_code),
		cmocka_unit_test(test_error_is_tpm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
