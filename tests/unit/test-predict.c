/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mb_predict on a real GRUB boot (ima-evm-utils' sample machine, SHA-1 + SHA-256 banks).
 * GRUB extends PCR 8 with H(the text after "grub_cmd: " / "kernel_cmdline: ") and PCR 9 with
 * H(each file it loads). A new command line must move PCR 8, and only it, to exactly the value
 * of extending today's PCR 8 events with the new texts; a new kernel must move PCR 9, and only
 * it, to the value of extending with the file's digest at both kernel events. The expected
 * values are computed here with OpenSSL's EVP (not mboot's digest code) and, for SHA-256, also
 * checked against constants computed with the openssl command when this test was written:
 *   h() { printf '%s' "$1" | openssl dgst -sha256 -binary | xxd -p -c 64; }
 *   extend() { printf '%s%s' "$1" "$2" | xxd -r -p | openssl dgst -sha256 -binary | xxd -p -c 64; }
 * run over the PCR 8 (PCR 9) sha256 digests of `mboot log show --json` from 64 zeros, with
 * events 129, 153 and 158 (130 and 154) replaced (OpenSSL 3.0.19).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <fcntl.h>

#include <openssl/evp.h>

#include <mboot/mboot.h>
#include "corpus-util.h"
#include "shared/hex.h"

#define SAMPLE "ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9"
#define NEW_ARGS "root=/dev/sda1 ro"

/* openssl (see above): PCR 8 after the new command line, PCR 9 after the new kernel. */
#define PCR8_NEW_SHA256 "e35710a6cfe1aed341b7f25ea01df3847d2c9d0e3cd0f6207e222728b625c857"
#define PCR9_NEW_SHA256 "af4b07d4b8b97f49c937a289e51a3e13608b2c7ec4d7a19dc420bb2affef4cf3"
/* printf 'linux /boot/vmlinuz-5.7.0-rc2+ root=/dev/sda1 ro' | openssl dgst -sha256 */
#define LINUX_CMD_SHA256 "da3b6d529cd737d5498247908d6c0768aaa201e0c5ecd7e674c9c9a6be41fbb7"
/* openssl dgst -sha256 of the kernel file written by write_kernel() */
#define KERNEL_SHA256 "f9fa281d5fe156c801b8b2f8a8dcefff50266726bc37dc864026c3849ec491a0"

static mb_event_log *sample(void)
{
	mb_event_log *log = corpus_log(SAMPLE);

	assert_non_null(log);
	return log;
}

static const EVP_MD *md_of(uint16_t alg)
{
	return alg == MB_ALG_SHA1 ? EVP_sha1() : alg == MB_ALG_SHA256 ? EVP_sha256() : NULL;
}

static void evp(uint16_t alg, const void *p, size_t n, uint8_t *out)
{
	unsigned len = 0;

	assert_int_equal(EVP_Digest(p, n, out, &len, md_of(alg), NULL), 1);
}

/* pcr = H(pcr || d) */
static void extend(uint16_t alg, uint8_t *pcr, const uint8_t *d)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	size_t n = (size_t) EVP_MD_get_size(md_of(alg));
	unsigned len = 0;

	assert_non_null(c);
	assert_int_equal(EVP_DigestInit_ex(c, md_of(alg), NULL), 1);
	assert_int_equal(EVP_DigestUpdate(c, pcr, n), 1);
	assert_int_equal(EVP_DigestUpdate(c, d, n), 1);
	assert_int_equal(EVP_DigestFinal_ex(c, pcr, &len), 1);
	EVP_MD_CTX_free(c);
}

/*
 * PCR `pcr` of bank alg, from zeros over today's events of that PCR; replace(number, out)
 * returns true when the event's digest is to be out instead.
 */
typedef bool (*replace_fn)(uint32_t number, uint16_t alg, uint8_t *out);

static void expected_pcr(const mb_event_log *log, uint32_t pcr, uint16_t alg, replace_fn replace, uint8_t *out)
{
	size_t i;

	memset(out, 0, MB_DIGEST_MAX);
	for (i = 0; i < mb_event_log_count(log); i++) {
		const mb_event *ev = mb_event_log_event(log, i);
		const mb_event_digest *d = mb_event_digest_for(ev, alg);
		uint8_t nd[MB_DIGEST_MAX];

		if (ev->pcr != pcr || !d)
			continue;
		if (replace(ev->number, alg, nd))
			extend(alg, out, nd);
		else
			extend(alg, out, d->bytes);
	}
}

static void hex_is(const uint8_t *b, size_t n, const char *want)
{
	char buf[2 * MB_DIGEST_MAX + 1];

	assert_string_equal(hex_format(b, n, buf), want);
}

static bool new_cmdline(uint32_t number, uint16_t alg, uint8_t *out)
{
	/* GRUB's texts for the sample boot's linux commands (events 129, 153) and the command line
	 * the second one built (158), with the new arguments. */
	static const char *const texts[] = {
		"linux /boot/vmlinuz-5.7.0-rc2+ " NEW_ARGS,
		"linux /boot/vmlinuz-5.7.0-rc2+.signed " NEW_ARGS,
		"/boot/vmlinuz-5.7.0-rc2+.signed " NEW_ARGS,
	};
	int k = number == 129 ? 0 : number == 153 ? 1 : number == 158 ? 2 : -1;

	if (k < 0)
		return false;
	evp(alg, texts[k], strlen(texts[k]), out);
	return true;
}

/* Every PCR but those in `moved` keeps today's value in every bank; those in `absent` (the
 * unpredictable ones) have no value. */
static void others_unchanged_but(const mb_event_log *log, const mb_predict_result *r, uint32_t moved, uint32_t absent)
{
	mb_pcr_values today;
	size_t b;
	uint32_t p;

	assert_int_equal(mb_replay_log(log, SIZE_MAX, &today, NULL, NULL), 0);
	assert_int_equal(r->values->n_banks, today.n_banks);
	for (b = 0; b < today.n_banks; b++) {
		const mb_pcr_bank *t = &today.banks[b], *n = pcrv_bank_const(r->values, t->alg);

		assert_non_null(n);
		assert_int_equal(n->present, t->present & ~absent);
		for (p = 0; p < MB_PCR_COUNT; p++) {
			if (!(n->present & (1u << p)))
				continue;
			if (moved & (1u << p))
				assert_memory_not_equal(n->value[p], t->value[p], t->size);
			else
				assert_memory_equal(n->value[p], t->value[p], t->size);
		}
	}
}

static void others_unchanged(const mb_event_log *log, const mb_predict_result *r, uint32_t moved)
{
	others_unchanged_but(log, r, moved, 0);
}

static void changed_events_are(const mb_event_log *log, const mb_predict_result *r, const uint32_t *numbers, size_t n)
{
	mb_diff d;
	size_t i;

	assert_int_equal(mb_log_diff(log, r->next_log, &d, NULL), 0);
	assert_int_equal(d.n_entries, n);
	for (i = 0; i < n; i++) {
		assert_int_equal(d.entries[i].kind, MB_DIFF_CHANGED);
		assert_int_equal(d.entries[i].a->number, numbers[i]);
		assert_int_equal(d.entries[i].b->number, numbers[i]);
	}
	mb_diff_done(&d);
}

static void test_constants_are_openssls(void **state)
{
	uint8_t d[MB_DIGEST_MAX];
	static const char t[] = "linux /boot/vmlinuz-5.7.0-rc2+ " NEW_ARGS;

	(void) state;
	/* EVP in this test computes what `openssl dgst` printed. */
	evp(MB_ALG_SHA256, t, strlen(t), d);
	hex_is(d, 32, LINUX_CMD_SHA256);
}

static void test_new_cmdline(void **state)
{
	mb_event_log *log = sample();
	mb_boot_artifacts boot = { .size = sizeof(mb_boot_artifacts), .cmdline = NEW_ARGS };
	mb_predict_input in = { .size = sizeof(mb_predict_input), .log = log, .boot = &boot };
	mb_predict_result r;
	mb_error err = { 0 };
	uint16_t algs[] = { MB_ALG_SHA1, MB_ALG_SHA256 };
	size_t i;

	(void) state;
	assert_int_equal(mb_predict(&in, &r, &err), 0);
	assert_int_equal(r.changed, 1u << 8);
	assert_int_equal(r.unpredictable, 0);
	/* The predicted log differs from today's in those three events only (the initrd commands
	 * are rewritten too, to the same text). */
	changed_events_are(log, &r, (const uint32_t[]) { 129, 153, 158 }, 3);
	for (i = 0; i < 2; i++) {
		uint8_t want[MB_DIGEST_MAX];
		const mb_pcr_bank *bank = pcrv_bank_const(r.values, algs[i]);

		assert_non_null(bank);
		expected_pcr(log, 8, algs[i], new_cmdline, want);
		assert_memory_equal(bank->value[8], want, bank->size);
		if (algs[i] == MB_ALG_SHA256)
			hex_is(bank->value[8], 32, PCR8_NEW_SHA256);
	}
	others_unchanged(log, &r, 1u << 8);
	mb_predict_result_done(&r);
	mb_event_log_free(log);
}

/* Fedora 31's GRUB 2.02 (fwupd's log, SHA-1): "grub_cmd linux ..." hashed with its NUL (#102),
 * "grub_kernel_cmdline ..." without (#105), as `mboot log show` finds them. */
#define FC31_KERNEL "(hd2,gpt2)/vmlinuz-5.3.12-300.fc31.x86_64"

static bool new_fedora_cmdline(uint32_t number, uint16_t alg, uint8_t *out)
{
	static const char cmd[] = "linux " FC31_KERNEL " " NEW_ARGS; /* sizeof: with the NUL */
	static const char line[] = FC31_KERNEL " " NEW_ARGS;

	if (number == 102)
		evp(alg, cmd, sizeof(cmd), out);
	else if (number == 105)
		evp(alg, line, strlen(line), out);
	return number == 102 || number == 105;
}

static void test_fedora_cmdline(void **state)
{
	mb_event_log *log = corpus_log("fwupd/binary_bios_measurements-v1");
	mb_boot_artifacts boot = { .size = sizeof(mb_boot_artifacts), .cmdline = NEW_ARGS };
	mb_predict_input in = { .size = sizeof(mb_predict_input), .log = log, .boot = &boot };
	mb_predict_result r;
	mb_error err = { 0 };
	uint8_t want[MB_DIGEST_MAX];
	const mb_event *ev;
	static const char cmd[] = "grub_cmd linux " FC31_KERNEL " " NEW_ARGS;
	static const char line[] = "grub_kernel_cmdline " FC31_KERNEL " " NEW_ARGS;

	(void) state;
	assert_non_null(log);
	assert_int_equal(mb_predict(&in, &r, &err), 0);
	assert_int_equal(r.changed, 1u << 8);
	assert_int_equal(r.unpredictable, 0);
	changed_events_are(log, &r, (const uint32_t[]) { 102, 105 }, 2);
	expected_pcr(log, 8, MB_ALG_SHA1, new_fedora_cmdline, want);
	assert_memory_equal(pcrv_bank_const(r.values, MB_ALG_SHA1)->value[8], want, 20);
	/* The new strings keep this GRUB's labels. */
	ev = mb_event_log_event(r.next_log, 102);
	assert_int_equal(ev->data_size, sizeof(cmd));
	assert_memory_equal(ev->data, cmd, sizeof(cmd));
	ev = mb_event_log_event(r.next_log, 105);
	assert_int_equal(ev->data_size, sizeof(line));
	assert_memory_equal(ev->data, line, sizeof(line));
	others_unchanged(log, &r, 1u << 8);
	mb_predict_result_done(&r);
	mb_event_log_free(log);
}

static uint8_t kernel_digest[MB_MAX_BANKS][MB_DIGEST_MAX];

static bool new_kernel(uint32_t number, uint16_t alg, uint8_t *out)
{
	/* The sample boot loads two kernels: /boot/vmlinuz-5.7.0-rc2+ (130) and its .signed
	 * copy (154); the prediction replaces both files with the one new kernel. */
	if (number != 130 && number != 154)
		return false;
	memcpy(out, kernel_digest[alg == MB_ALG_SHA256], MB_DIGEST_MAX);
	return true;
}

static void test_new_kernel(void **state)
{
	mb_event_log *log = sample();
	/* named as the file GRUB loads today: a kernel updated in place (another name moves PCR 8) */
	char dir[] = "/tmp/mb-test-kernel-XXXXXX", path[sizeof(dir) + 32];
	mb_boot_artifacts boot = { .size = sizeof(mb_boot_artifacts), .kernel = path };
	mb_predict_input in = { .size = sizeof(mb_predict_input), .log = log, .boot = &boot };
	mb_predict_result r;
	mb_error err = { 0 };
	uint16_t algs[] = { MB_ALG_SHA1, MB_ALG_SHA256 };
	char *text = malloc(3000 * 24 + 1); /* 3000 lines of 24 bytes, and sprintf's NUL */
	size_t n = 0, i;
	int fd;

	(void) state;
	assert_non_null(text);
	for (i = 0; i < 3000; i++)
		n += (size_t) sprintf(text + n, "mboot test kernel %05zu\n", i);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/vmlinuz-5.7.0-rc2+", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, n), (ssize_t) n);
	close(fd);
	evp(MB_ALG_SHA1, text, n, kernel_digest[0]);
	evp(MB_ALG_SHA256, text, n, kernel_digest[1]);
	hex_is(kernel_digest[1], 32, KERNEL_SHA256);

	assert_int_equal(mb_predict(&in, &r, &err), 0);
	assert_int_equal(r.changed, 1u << 9);
	/* After each linux command, PCR 4 got the kernel as an EFI application (events 131, 132,
	 * 155, 156: shim's Verify, LoadImage): no --kernel says what the new one's will be. */
	assert_int_equal(r.unpredictable, 1u << 4);
	assert_non_null(strstr(r.why[4], "event 131"));
	assert_int_equal(r.unmatched, 0);
	changed_events_are(log, &r, (const uint32_t[]) { 130, 154 }, 2);
	for (i = 0; i < 2; i++) {
		uint8_t want[MB_DIGEST_MAX];
		const mb_pcr_bank *bank = pcrv_bank_const(r.values, algs[i]);

		assert_non_null(bank);
		expected_pcr(log, 9, algs[i], new_kernel, want);
		assert_memory_equal(bank->value[9], want, bank->size);
		if (algs[i] == MB_ALG_SHA256)
			hex_is(bank->value[9], 32, PCR9_NEW_SHA256);
	}
	others_unchanged_but(log, &r, 1u << 9, 1u << 4);
	mb_predict_result_done(&r);

	/* The same kernel under update-grub's new name: GRUB's linux and kernel_cmdline strings
	 * will name a path nothing gave, so PCR 8 has no value (it used to keep today's path). */
	snprintf(path + strlen(dir), sizeof(path) - strlen(dir), "/vmlinuz-6.1.0-57-amd64");
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, n), (ssize_t) n);
	close(fd);
	assert_int_equal(mb_predict(&in, &r, &err), 0);
	assert_int_equal(r.unpredictable, 1u << 4 | 1u << 8);
	assert_non_null(strstr(r.why[8], "vmlinuz-6.1.0-57-amd64 is not a file GRUB loads today (/boot/vmlinuz-5.7.0-rc2+)"));
	mb_predict_result_done(&r);
	/* ... unless the path GRUB will load it by is given */
	boot.kernel_path = "/boot/vmlinuz-6.1.0-57-amd64";
	assert_int_equal(mb_predict(&in, &r, &err), 0);
	assert_int_equal(r.unpredictable, 1u << 4);
	assert_int_equal(r.changed, 1u << 8 | 1u << 9);
	mb_predict_result_done(&r);
	unlink(path);
	snprintf(path + strlen(dir), sizeof(path) - strlen(dir), "/vmlinuz-5.7.0-rc2+");
	unlink(path);
	rmdir(dir);
	mb_event_log_free(log);
	free(text);
}

/*
 * The kernel's PCR 4 events named with --efi OLD=NEW: each distinct digest there (131 and 155
 * are the same Authenticode digest, of the kernel and its .signed copy) replaced. While one is
 * left, PCR 4 stays unpredictable; with all, it is today's PCR 4 with those events' digests
 * replaced, extended here with OpenSSL.
 */
static uint8_t app_new[3][2][MB_DIGEST_MAX], app_old[3][2][MB_DIGEST_MAX];
static const mb_event_log *app_log;

static bool new_kernel_apps(uint32_t number, uint16_t alg, uint8_t *out)
{
	const mb_event_digest *d = mb_event_digest_for(mb_event_log_event(app_log, number), alg);
	size_t k;

	if (number < 131)
		return false;
	for (k = 0; k < 3; k++)
		if (memcmp(d->bytes, app_old[k][alg == MB_ALG_SHA256], d->size) == 0) {
			memcpy(out, app_new[k][alg == MB_ALG_SHA256], d->size);
			return true;
		}
	return false;
}

static void test_kernel_efi(void **state)
{
	static const uint16_t algs[] = { MB_ALG_SHA1, MB_ALG_SHA256 };
	static const uint32_t events[] = { 131, 132, 156 };
	mb_event_log *log = sample();
	mb_efi_binary efi[3];
	/* an empty kernel, named as the one GRUB loads today */
	char dir[] = "/tmp/mb-test-kernel-XXXXXX", path[sizeof(dir) + 32];
	mb_boot_artifacts boot = { .size = sizeof(mb_boot_artifacts), .kernel = path, .efi = efi, .n_efi = 1 };
	mb_predict_input in = { .size = sizeof(mb_predict_input), .log = log, .boot = &boot };
	mb_predict_result r;
	mb_error err = { 0 };
	size_t k, i;

	(void) state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/vmlinuz-5.7.0-rc2+", dir);
	k = (size_t) open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true((int) k >= 0);
	close((int) k);
	app_log = log;
	for (k = 0; k < 3; k++) {
		const mb_event *ev = mb_event_log_event(log, events[k]);

		assert_int_equal(ev->type, MB_EV_EFI_BOOT_SERVICES_APPLICATION);
		for (i = 0; i < 2; i++) {
			memcpy(app_old[k][i], mb_event_digest_for(ev, algs[i])->bytes, mb_event_digest_for(ev, algs[i])->size);
			evp(algs[i], &k, sizeof(k), app_new[k][i]);
		}
		efi[k] = (mb_efi_binary) { .description = "vmlinuz", .n = 2, .algs = algs,
					   .digest = (const uint8_t (*)[MB_DIGEST_MAX]) app_new[k],
					   .old_digest = (const uint8_t (*)[MB_DIGEST_MAX]) app_old[k] };
	}
	assert_int_equal(mb_predict(&in, &r, &err), 0);
	assert_int_equal(r.unpredictable, 1u << 4);
	assert_non_null(strstr(r.why[4], "event 132"));
	mb_predict_result_done(&r);

	boot.n_efi = 3;
	assert_int_equal(mb_predict(&in, &r, &err), 0);
	assert_int_equal(r.unpredictable, 0);
	assert_int_equal(r.unmatched | r.unmatched_efi, 0);
	assert_int_equal(r.changed, 1u << 4 | 1u << 9);
	for (i = 0; i < 2; i++) {
		uint8_t want[MB_DIGEST_MAX];
		const mb_pcr_bank *bank = pcrv_bank_const(r.values, algs[i]);

		expected_pcr(log, 4, algs[i], new_kernel_apps, want);
		assert_memory_equal(bank->value[4], want, bank->size);
	}
	mb_predict_result_done(&r);
	mb_event_log_free(log);
	unlink(path);
	rmdir(dir);
}

/*
 * An EFI application replaced (predict --efi OLD=NEW): the events of PCR 4 that carry OLD's
 * digests (the sample's event 40 and any copy of it) get NEW's, everything else stays. The
 * digests are the caller's arrays the mb_efi_binary points at.
 */
static uint8_t efi_new[2][MB_DIGEST_MAX], efi_old[2][MB_DIGEST_MAX];
static const mb_event_log *efi_log;

static bool new_efi_app(uint32_t number, uint16_t alg, uint8_t *out)
{
	const mb_event *ev = mb_event_log_event(efi_log, number);
	const mb_event_digest *d = mb_event_digest_for(ev, MB_ALG_SHA256);

	if (ev->type != MB_EV_EFI_BOOT_SERVICES_APPLICATION || !d || memcmp(d->bytes, efi_old[1], 32) != 0)
		return false;
	memcpy(out, efi_new[alg == MB_ALG_SHA256], MB_DIGEST_MAX);
	return true;
}

static void test_new_efi(void **state)
{
	mb_event_log *log = sample();
	static const uint16_t algs[] = { MB_ALG_SHA1, MB_ALG_SHA256 };
	mb_efi_binary efi = { .description = "shimx64.efi", .n = 2, .algs = algs,
			      .digest = (const uint8_t (*)[MB_DIGEST_MAX]) efi_new,
			      .old_digest = (const uint8_t (*)[MB_DIGEST_MAX]) efi_old };
	mb_boot_artifacts boot = { .size = sizeof(mb_boot_artifacts), .efi = &efi, .n_efi = 1 };
	mb_predict_input in = { .size = sizeof(mb_predict_input), .log = log, .boot = &boot };
	const mb_event *app = mb_event_log_event(log, 40);
	mb_predict_result r;
	mb_error err = { 0 };
	uint32_t changed[8];
	size_t n_changed = 0, i;

	(void) state;
	assert_int_equal(app->type, MB_EV_EFI_BOOT_SERVICES_APPLICATION);
	for (i = 0; i < 2; i++) {
		memcpy(efi_old[i], mb_event_digest_for(app, algs[i])->bytes, mb_event_digest_for(app, algs[i])->size);
		evp(algs[i], "new shim", 8, efi_new[i]);
	}
	efi_log = log;
	for (i = 0; i < mb_event_log_count(log); i++) {
		uint8_t d[MB_DIGEST_MAX];

		if (new_efi_app((uint32_t) i, MB_ALG_SHA256, d)) {
			assert_true(n_changed < 8);
			changed[n_changed++] = (uint32_t) i;
		}
	}
	assert_int_equal(mb_predict(&in, &r, &err), 0);
	assert_int_equal(r.changed, 1u << 4);
	assert_int_equal(r.unpredictable, 0);
	changed_events_are(log, &r, changed, n_changed);
	for (i = 0; i < 2; i++) {
		uint8_t want[MB_DIGEST_MAX];
		const mb_pcr_bank *bank = pcrv_bank_const(r.values, algs[i]);

		assert_non_null(bank);
		expected_pcr(log, 4, algs[i], new_efi_app, want);
		assert_memory_equal(bank->value[4], want, bank->size);
	}
	others_unchanged(log, &r, 1u << 4);
	mb_predict_result_done(&r);

	/* Without old digests the application replaces nothing, and the caller hears so: no values. */
	efi.old_digest = NULL;
	assert_int_equal(mb_predict(&in, &r, &err), 0);
	assert_int_equal(r.changed, 0);
	assert_int_equal(r.unmatched_efi, 1);
	assert_null(r.values);
	changed_events_are(log, &r, NULL, 0);
	mb_predict_result_done(&r);
	mb_event_log_free(log);
}

/*
 * A UKI boot: the systemd-boot VM of the corpus (tpm2-tools' event-sd-boot-fedora37.bin,
 * its command line in PCR 12, the stub's initrd tag in PCR 9) with what systemd-stub adds for
 * a UKI, a section name in PCR 11 (UTF-16 ".linux", EV_IPL) after the PCR 12 events. A new
 * initrd moves the UKI's sections (PCR 11) and its command line is not computed (PCR 12): both
 * unpredictable, without values; PCR 9's tag is still predicted. An --efi that matches no PCR 4
 * application leaves nothing predicted.
 */
static mb_event_log *uki_log(void)
{
	mb_event_log *sd = corpus_log("tpm2-tools/event-sd-boot-fedora37.bin"), *log = NULL;
	static const uint8_t section[] = { '.', 0, 'l', 0, 'i', 0, 'n', 0, 'u', 0, 'x', 0, 0, 0 };
	mb_log_writer *w = NULL;
	const uint8_t *bytes;
	size_t i, size;

	assert_non_null(sd);
	assert_int_equal(mb_log_writer_new(&w), 0);
	for (i = 0; i < mb_event_log_count(sd); i++) {
		const mb_event *ev = mb_event_log_event(sd, i);

		assert_int_equal(mb_log_writer_add_event(w, ev), 0);
		if (i == 24) { /* the second PCR 12 command line */
			assert_int_equal(ev->pcr, 12);
			assert_int_equal(mb_log_writer_add_hashed(w, 11, MB_EV_IPL, section, sizeof(section), section,
								  sizeof(section)), 0);
		}
	}
	bytes = mb_log_writer_data(w, &size);
	assert_int_equal(mb_event_log_parse(bytes, size, &log, NULL), 0);
	mb_log_writer_free(w);
	mb_event_log_free(sd);
	return log;
}

static void test_uki(void **state)
{
	mb_event_log *log = uki_log();
	char path[] = "/tmp/mb-test-initrd-XXXXXX";
	static const uint16_t algs[] = { MB_ALG_SHA256 };
	static const uint8_t nothing[1][MB_DIGEST_MAX];
	mb_efi_binary efi = { .description = "uki.efi", .n = 1, .algs = algs, .digest = nothing, .old_digest = nothing };
	mb_boot_artifacts boot = { .size = sizeof(mb_boot_artifacts), .initrd = path };
	mb_predict_input in = { .size = sizeof(mb_predict_input), .log = log, .boot = &boot };
	mb_predict_result r;
	mb_error err = { 0 };
	mb_pcr_bank bank;
	uint8_t want[MB_DIGEST_MAX] = { 0 }, d[MB_DIGEST_MAX];
	int fd;

	(void) state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "initrd", 6), 6);
	close(fd);
	assert_int_equal(mb_predict(&in, &r, &err), 0);
	unlink(path);
	assert_int_equal(r.unmatched, 0);
	assert_int_equal(r.unpredictable, 1u << 11 | 1u << 12);
	assert_non_null(strstr(r.why[11], "UKI"));
	assert_int_equal(mb_pcr_values_get_bank(r.values, MB_ALG_SHA256, &bank), 0);
	assert_int_equal(bank.present & (1u << 11 | 1u << 12), 0);
	/* PCR 9: zeros extended with H("initrd"), the tag's one event */
	evp(MB_ALG_SHA256, "initrd", 6, d);
	extend(MB_ALG_SHA256, want, d);
	assert_memory_equal(bank.value[9], want, 32);
	mb_predict_result_done(&r);

	boot = (mb_boot_artifacts) { .size = sizeof(mb_boot_artifacts), .efi = &efi, .n_efi = 1 };
	assert_int_equal(mb_predict(&in, &r, &err), 0);
	assert_int_equal(r.unmatched_efi, 1);
	assert_null(r.values);
	mb_predict_result_done(&r);
	mb_event_log_free(log);
}

/* `predict --json`'s document for a result built here: SHA-256("abc") (FIPS 180-2) as PCR 4's
 * value; changed PCRs listed only when every change matched; reasons and notes by PCR; the
 * unmatched rows as given; layouts as json.dumps(separators=(",", ":")) and jq print them. */
static void test_result_json(void **state)
{
	static const char *const rows[1][3] = { { "--efi", NULL, "no PCR 4 EFI application" } };
	static const uint8_t abc[32] = {
		0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23,
		0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad,
	};
	mb_predict_result r = { .changed = (1u << 4) | (1u << 9), .unpredictable = 1u << 8 };
	char why8[] = "grub.cfg \"x\"", why4[] = "kernel";
	char *text;

	(void) state;
	r.values = mb_pcr_values_new();
	assert_non_null(r.values);
	assert_int_equal(mb_pcr_values_set(r.values, MB_ALG_SHA256, 4, abc, 32, NULL), 0);
	r.why[8] = why8;
	r.why[4] = why4;
	text = mb_predict_result_to_json(&r, NULL, 0, false);
	assert_non_null(text);
	assert_string_equal(text, "{\"banks\":{\"sha256\":{\"4\":"
				  "\"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\"}},"
				  "\"changed\":[4,9],\"unpredictable\":{\"8\":\"grub.cfg \\\"x\\\"\"},\"unmatched\":[],"
				  "\"notes\":{\"4\":\"kernel\"}}");
	free(text);
	/* a change that matched nothing: no values, no PCR said to change */
	mb_pcr_values_free(r.values);
	r.values = NULL;
	r.unmatched_efi = 1;
	r.why[8] = NULL;
	text = mb_predict_result_to_json(&r, rows, 1, true);
	assert_non_null(text);
	assert_string_equal(text, "{\n  \"banks\": {},\n  \"changed\": [],\n  \"unpredictable\": {\n    \"8\": \"unknown\"\n  },\n"
				  "  \"unmatched\": [\n    {\n      \"option\": \"--efi\",\n      \"value\": \"\",\n"
				  "      \"why\": \"no PCR 4 EFI application\"\n    }\n  ],\n  \"notes\": {\n    \"4\": \"kernel\"\n  }\n}");
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_constants_are_openssls),
		cmocka_unit_test(test_result_json),
		cmocka_unit_test(test_new_cmdline),
		cmocka_unit_test(test_fedora_cmdline),
		cmocka_unit_test(test_new_kernel),
		cmocka_unit_test(test_new_efi),
		cmocka_unit_test(test_kernel_efi),
		cmocka_unit_test(test_uki),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
