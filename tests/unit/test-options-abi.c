/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Options structs that grow (HACKING.md, "ABI: how a struct grows"): a program built against an
 * older, smaller mb_seal_options still works, the fields past its size take their defaults even
 * when the bytes there are not zero; a newer, bigger one works while the fields this library
 * does not know are unset; a size of 0 is refused. An options struct another points at
 * (mb_predict_input.boot, an mb_boot_artifacts) is taken by the same rules. And a struct the
 * library fills (mb_reseal_seal_options) is written only as far as the caller's size.
 */
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
#include "corpus-util.h"
#include "shared/fileio.h"
#include "shared/hex.h"

/* The mb_seal_options of a program built before the PIN (pin, pin_size) was added: it ends at
 * n_more_predicted. */
#define OLD_SEAL_OPTIONS_SIZE (offsetof(mb_seal_options, n_more_predicted) + sizeof(size_t))

static const uint8_t secret[32] = { 1 };

static int seal(const mb_seal_options *o, mb_error *err)
{
	mb_sealed *s = (mb_sealed *) 1;
	int r;

	memset(err, 0, sizeof(*err));
	/* no TPM: every option is checked first, so "no TPM" means the options passed */
	r = mb_seal_secret(NULL, secret, sizeof(secret), o, &s, err);
	assert_null(s);
	print_message("size %zu: %d %s\n", o ? o->size : 0, r, err->message);
	return r;
}

static void test_older_caller(void **state)
{
	mb_seal_options o;
	mb_error err;

	(void) state;
	/* an old caller's struct, and past its end bytes it never wrote (a PIN size without a PIN) */
	memset(&o, 0, sizeof(o));
	o.pcr_mask = 1;
	o.pin = NULL;
	o.pin_size = 5;
	assert_true(OLD_SEAL_OPTIONS_SIZE < sizeof(o));
	assert_true(offsetof(mb_seal_options, pin_size) >= OLD_SEAL_OPTIONS_SIZE);
	o.size = OLD_SEAL_OPTIONS_SIZE;
	assert_int_equal(seal(&o, &err), -EINVAL);
	assert_non_null(strstr(err.message, "no TPM"));
	/* the same bytes as today's struct: the PIN fields are read, and refused */
	o.size = sizeof(o);
	assert_int_equal(seal(&o, &err), -EINVAL);
	assert_non_null(strstr(err.message, "a PIN size without a PIN"));
	/* the default of a field past an old size is zero even when it is set in the caller's memory
	 * to something valid: a PIN given by a caller of the old size is not used */
	o.pin = (const uint8_t *) "1234";
	o.pin_size = 4;
	o.size = OLD_SEAL_OPTIONS_SIZE;
	assert_int_equal(seal(&o, &err), -EINVAL);
	assert_non_null(strstr(err.message, "no TPM"));
}

static void test_size_zero_and_newer_caller(void **state)
{
	struct {
		mb_seal_options o;
		uint64_t newer_field; /* a field of a newer libmboot, after today's end */
	} big;
	mb_seal_options zero = { .pcr_mask = 1 };
	mb_error err;

	(void) state;
	/* {0}-initialised, size never set */
	assert_int_equal(seal(&zero, &err), -EINVAL);
	assert_non_null(strstr(err.message, "MB_OPTIONS_INIT"));
	memset(&big, 0, sizeof(big));
	big.o.size = sizeof(big);
	big.o.pcr_mask = 1;
	assert_int_equal(seal(&big.o, &err), -EINVAL);
	assert_non_null(strstr(err.message, "no TPM"));
	big.newer_field = 1;
	assert_int_equal(seal(&big.o, &err), -EOPNOTSUPP);
	assert_non_null(strstr(err.message, "newer libmboot"));
	/* NULL: every default (PCR mask 0 is refused later, by the TPM-less check) */
	memset(&err, 0, sizeof(err));
	{
		mb_sealed *s = NULL;

		assert_int_equal(mb_seal_secret(NULL, secret, sizeof(secret), NULL, &s, &err), -EINVAL);
		assert_null(strstr(err.message, "MB_OPTIONS_INIT"));
	}
	/* MB_OPTIONS_INIT is the caller's sizeof */
	{
		mb_seal_options init = MB_OPTIONS_INIT(mb_seal_options);

		assert_int_equal(init.size, sizeof(mb_seal_options));
		assert_int_equal(init.pcr_mask, 0);
	}
}

/* A GRUB boot (PCRs 8 and 9) and a new kernel command line for it, as in test-predict.c: */
#define SAMPLE_LOG "ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9"
#define NEW_ARGS "root=/dev/sda1 ro"
/* PCR 8 of the boot with NEW_ARGS (sha256, from openssl: test-predict.c) */
#define PCR8_NEW_SHA256 "e35710a6cfe1aed341b7f25ea01df3847d2c9d0e3cd0f6207e222728b625c857"

/* The mb_boot_artifacts of a program built before kernel_path was added: it ends at cmdline. */
#define OLD_BOOT_SIZE (offsetof(mb_boot_artifacts, cmdline) + sizeof(const char *))

static int predict(const mb_event_log *log, const mb_boot_artifacts *boot, mb_predict_result *r, mb_error *err)
{
	mb_predict_input in = MB_OPTIONS_INIT(mb_predict_input);
	int rc;

	in.log = log;
	in.boot = boot;
	memset(err, 0, sizeof(*err));
	rc = mb_predict(&in, r, err);
	print_message("boot size %zu: %d %s\n", boot ? boot->size : 0, rc, err->message);
	return rc;
}

/* The prediction of the boot with today's command line replaced by NEW_ARGS: PCR 8 moves. */
static void new_cmdline_predicted(mb_predict_result *r)
{
	const mb_pcr_bank *bank = pcrv_bank_const(r->values, MB_ALG_SHA256);
	char hex[2 * MB_DIGEST_MAX + 1];

	assert_int_equal(r->unmatched | r->unmatched_efi | r->unmatched_grub_cfg, 0);
	assert_int_equal(r->unpredictable, 0);
	assert_int_equal(r->changed, 1u << 8);
	assert_non_null(bank);
	assert_string_equal(hex_format(bank->value[8], 32, hex), PCR8_NEW_SHA256);
	mb_predict_result_done(r);
}

static void test_boot_older_caller(void **state)
{
	mb_event_log *log = corpus_log(SAMPLE_LOG);
	mb_boot_artifacts b;
	mb_predict_result r;
	mb_error err;

	(void) state;
	assert_non_null(log);
	/* an old caller's boot, and past its end bytes it never wrote: a UKI there would be refused
	 * with a command line, a kernel path would move PCR 8 otherwise */
	memset(&b, 0, sizeof(b));
	b.cmdline = NEW_ARGS;
	b.kernel_path = "/boot/vmlinuz-elsewhere";
	b.uki = "/nonexistent/uki.efi";
	assert_true(OLD_BOOT_SIZE < sizeof(b));
	assert_true(offsetof(mb_boot_artifacts, kernel_path) >= OLD_BOOT_SIZE);
	b.size = OLD_BOOT_SIZE;
	/* its fields are read, the ones past its size are the defaults */
	assert_int_equal(predict(log, &b, &r, &err), 0);
	new_cmdline_predicted(&r);
	/* the same bytes as today's struct: the UKI is read, and refused with the command line */
	b.size = sizeof(b);
	assert_int_equal(predict(log, &b, &r, &err), -EINVAL);
	assert_non_null(strstr(err.message, "a UKI carries"));
	assert_null(r.values);
	mb_event_log_free(log);
}

static void test_boot_size_zero_and_newer_caller(void **state)
{
	mb_event_log *log = corpus_log(SAMPLE_LOG);
	struct {
		mb_boot_artifacts b;
		uint64_t newer_field; /* a field of a newer libmboot, after today's end */
	} big;
	mb_boot_artifacts zero = { .cmdline = NEW_ARGS };
	mb_policy_artifacts a = MB_OPTIONS_INIT(mb_policy_artifacts);
	mb_predict_result r;
	mb_error err;
	char *json = NULL;

	(void) state;
	assert_non_null(log);
	/* {0}-initialised, size never set: the message names the struct */
	assert_int_equal(predict(log, &zero, &r, &err), -EINVAL);
	assert_non_null(strstr(err.message, "mb_predict_input.boot (mb_boot_artifacts)"));
	assert_non_null(strstr(err.message, "MB_OPTIONS_INIT"));
	memset(&big, 0, sizeof(big));
	big.b.size = sizeof(big);
	big.b.cmdline = NEW_ARGS;
	assert_int_equal(predict(log, &big.b, &r, &err), 0);
	new_cmdline_predicted(&r);
	big.newer_field = 1;
	assert_int_equal(predict(log, &big.b, &r, &err), -EOPNOTSUPP);
	assert_non_null(strstr(err.message, "mb_predict_input.boot (mb_boot_artifacts)"));
	assert_non_null(strstr(err.message, "newer libmboot"));
	/* NULL: nothing changes */
	assert_int_equal(predict(log, NULL, &r, &err), 0);
	assert_int_equal(r.changed | r.unpredictable | r.unmatched, 0);
	assert_non_null(r.values);
	mb_predict_result_done(&r);

	/* mb_policy_generate_from_artifacts takes its boot alike */
	a.boot = &zero;
	assert_int_equal(mb_policy_generate_from_artifacts(&a, &json, &err), -EINVAL);
	assert_non_null(strstr(err.message, "mb_policy_artifacts.boot (mb_boot_artifacts)"));
	a.boot = &big.b;
	assert_int_equal(mb_policy_generate_from_artifacts(&a, &json, &err), -EOPNOTSUPP);
	assert_non_null(strstr(err.message, "mb_policy_artifacts.boot (mb_boot_artifacts)"));
	/* NULL: no artifacts, refused as an all-unset boot is */
	a.boot = NULL;
	assert_int_equal(mb_policy_generate_from_artifacts(&a, &json, &err), -EINVAL);
	assert_non_null(strstr(err.message, "a kernel and an initrd are needed"));
	assert_null(json);
	mb_event_log_free(log);
}

static void test_filled_as_far_as_the_caller_knows(void **state)
{
	const char *root = getenv("MB_SOURCE_ROOT");
	char path[1024];
	uint8_t *text = NULL;
	size_t size = 0, old = offsetof(mb_seal_options, eventlog);
	mb_sealed *s = NULL;
	mb_seal_options o;
	mb_error err = { 0 };

	(void) state;
	assert_non_null(root);
	/* sealed (by `mboot seal --pcrs 0,7`) to sha256 PCRs 0 and 7 under the SRK template */
	snprintf(path, sizeof(path), "%s/fuzz/corpus/sealed/pcr-0-7.json", root);
	assert_int_equal(file_read(path, 1u << 20, &text, &size, &err), 0);
	assert_int_equal(mb_sealed_parse((const char *) text, size, &s, &err), 0);
	/* an older caller: its struct ends before eventlog; what lies past it must stay its own */
	memset(&o, 0xaa, sizeof(o));
	o.size = old;
	assert_int_equal(mb_reseal_seal_options(s, NULL, 0, &o, &err), 0);
	assert_int_equal(o.size, old);
	assert_int_equal(o.bank, MB_ALG_SHA256);        /* "bank": "sha256" */
	assert_int_equal(o.pcr_mask, (1u << 0) | (1u << 7)); /* "selection": [0, 7] */
	assert_null(o.values);
	assert_null(o.predicted);
	for (size_t i = old; i < sizeof(o); i++)
		assert_int_equal(((const uint8_t *) &o)[i], 0xaa);
	/* today's caller: the parent is set too (the file's: no persistent handle) */
	memset(&o, 0xaa, sizeof(o));
	o.size = sizeof(o);
	assert_int_equal(mb_reseal_seal_options(s, NULL, 0, &o, &err), 0);
	assert_int_equal(o.parent, MB_SEAL_PARENT_TEMPLATE);
	assert_int_equal(o.n_more_predicted, 0);
	assert_null(o.pin);
	/* size never set */
	memset(&o, 0, sizeof(o));
	assert_int_equal(mb_reseal_seal_options(s, NULL, 0, &o, &err), -EINVAL);
	mb_sealed_free(s);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_older_caller),
		cmocka_unit_test(test_size_zero_and_newer_caller),
		cmocka_unit_test(test_filled_as_far_as_the_caller_knows),
		cmocka_unit_test(test_boot_older_caller),
		cmocka_unit_test(test_boot_size_zero_and_newer_caller),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
