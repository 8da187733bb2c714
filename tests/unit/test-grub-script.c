/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The GRUB execution model (src/lib/grub/grub-script.c) against a real GRUB: the boot recorded
 * in tests/data/grub-model (Debian's GRUB 2.06 with its tpm module, configs made by Debian's
 * grub-mkconfig scripts; PROVENANCE there). Today's PCR 8 strings are read from that log, so
 * every expected string here comes from GRUB, not from the model.
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

#include "corpus-util.h"

#include <mboot/mboot.h>
#include "lib/grub/grub-script.h"

#define ESP_PATH "(hd0,gpt1)/EFI/BOOT/grub.cfg"
#define BOOT_PATH "(hd0,gpt1)/boot/grub/grub.cfg"

static char *load(const char *name, size_t *size)
{
	char rel[256];
	char *buf;

	snprintf(rel, sizeof(rel), "grub-model/%s", name);
	buf = (char *) testdata_load(rel, size);
	assert_non_null(buf);
	return buf;
}

/* Today's PCR 8 strings of the recorded boot, with their kinds as the event chain binds them. */
static grub_model_string *today_strings(size_t *n)
{
	size_t size, i, k = 0;
	char *bytes = load("log.bin", &size);
	mb_event_log *log = NULL;
	mb_error err = { 0 };
	grub_string_walk w = { 0 };
	grub_model_string *s;

	assert_int_equal(mb_event_log_parse((const uint8_t *) bytes, size, &log, &err), 0);
	s = calloc(mb_event_log_count(log), sizeof(*s));
	assert_non_null(s);
	for (i = 0; i < mb_event_log_count(log); i++) {
		const mb_event *ev = mb_event_log_event(log, i);
		grub_string_kind kind = grub_string_walk_next(&w, ev);

		if (kind == GRUB_STRING_NONE)
			continue;
		s[k].kind = kind;
		s[k].text = grub_string_text(ev, NULL);
		assert_non_null(s[k].text);
		k++;
	}
	mb_event_log_free(log);
	free(bytes);
	*n = k;
	return s;
}

static void strings_free(grub_model_string *s, size_t n)
{
	while (n--)
		free(s[n].text);
	free(s);
}

typedef struct configs {
	grub_model_config c[2];
	char *text[2];
} configs;

static void configs_load(configs *c, const char *boot_cfg)
{
	c->text[0] = load("esp-grub.cfg", &c->c[0].size);
	c->c[0].text = c->text[0];
	c->c[0].path = ESP_PATH;
	c->text[1] = load(boot_cfg, &c->c[1].size);
	c->c[1].text = c->text[1];
	c->c[1].path = BOOT_PATH;
}

static void configs_free(configs *c)
{
	free(c->text[0]);
	free(c->text[1]);
}

/* The model runs the configs that booted and measures exactly what GRUB measured. */
static void test_reproduces_real_boot(void **state)
{
	size_t n, i;
	grub_model_string *today = today_strings(&n);
	grub_model *m = grub_model_new();
	grub_model_run run;
	configs c;

	(void) state;
	assert_non_null(m);
	configs_load(&c, "boot-grub.cfg");
	/* the recording holds the whole chain: stub, configfile, the entry, the kernel line */
	assert_true(n > 30);
	assert_string_equal(today[2].text, "configfile (hd0,gpt1)/boot/grub/grub.cfg");
	assert_int_equal(grub_model_check(m, c.c, 2, today, n, true, &run), 0);
	if (run.why)
		fprintf(stderr, "model: %s\n", run.why);
	assert_null(run.why);
	assert_int_equal(run.n, n);
	for (i = 0; i < n; i++) {
		assert_int_equal(run.s[i].kind, today[i].kind);
		assert_string_equal(run.s[i].text, today[i].text);
	}
	grub_model_run_done(&run);
	grub_model_free(m);
	configs_free(&c);
	strings_free(today, n);
}

/* Replace every "from" in s by "to" (a new string). */
static char *replace_all(const char *s, const char *from, const char *to)
{
	size_t fl = strlen(from), tl = strlen(to), n = 0;
	const char *p;
	char *out, *o;

	for (p = s; (p = strstr(p, from)); p += fl)
		n++;
	out = malloc(strlen(s) + n * (tl > fl ? tl - fl : 0) + 1);
	assert_non_null(out);
	for (o = out, p = s; *p;) {
		if (!strncmp(p, from, fl)) {
			memcpy(o, to, tl);
			o += tl;
			p += fl;
		} else {
			*o++ = *p++;
		}
	}
	*o = 0;
	return out;
}

/*
 * The kernel bump grub-mkconfig made (boot-grub-next.cfg): GRUB would measure today's strings
 * with the new version wherever the config names it (the entries' blocks, the echo, linux,
 * initrd, kernel_cmdline) and nothing else changes.
 */
static void test_predicts_kernel_bump(void **state)
{
	size_t n, i, nsize, osize;
	grub_model_string *today = today_strings(&n);
	grub_model *m = grub_model_new();
	grub_model_run run;
	configs c, next;
	char *old_text = load("boot-grub.cfg", &osize), *new_text = load("boot-grub-next.cfg", &nsize);
	const char *ov = strstr(old_text, "vmlinuz-"), *nv = strstr(new_text, "vmlinuz-");
	char oldver[64], newver[64];

	(void) state;
	assert_non_null(m);
	assert_non_null(ov);
	assert_non_null(nv);
	snprintf(oldver, sizeof(oldver), "%.*s", (int) strcspn(ov + 8, " \t\n"), ov + 8);
	snprintf(newver, sizeof(newver), "%.*s", (int) strcspn(nv + 8, " \t\n"), nv + 8);
	assert_string_not_equal(oldver, newver);
	configs_load(&c, "boot-grub.cfg");
	configs_load(&next, "boot-grub-next.cfg");
	assert_int_equal(grub_model_check(m, c.c, 2, today, n, true, &run), 0);
	assert_null(run.why);
	grub_model_run_done(&run);
	assert_int_equal(grub_model_predict(m, next.c, 2, true, NULL, &run), 0);
	if (run.why)
		fprintf(stderr, "model: %s\n", run.why);
	assert_null(run.why);
	assert_int_equal(run.n, n);
	for (i = 0; i < n; i++) {
		char *want = replace_all(today[i].text, oldver, newver);

		assert_int_equal(run.s[i].kind, today[i].kind);
		assert_string_equal(run.s[i].text, want);
		free(want);
	}
	grub_model_run_done(&run);
	grub_model_free(m);
	configs_free(&c);
	configs_free(&next);
	free(old_text);
	free(new_text);
	strings_free(today, n);
}

/* A config that is not the one that booted: refused, naming the first string that differs. */
static void test_refuses_other_config(void **state)
{
	size_t n, size;
	grub_model_string *today = today_strings(&n);
	grub_model *m = grub_model_new();
	grub_model_run run;
	configs c;
	char *edited;

	(void) state;
	assert_non_null(m);
	configs_load(&c, "boot-grub.cfg");
	size = c.c[1].size;
	edited = malloc(size + 32);
	assert_non_null(edited);
	memcpy(edited, "insmod extra\n", 13);
	memcpy(edited + 13, c.text[1], size);
	c.c[1].text = edited;
	c.c[1].size = size + 13;
	assert_int_equal(grub_model_check(m, c.c, 2, today, n, true, &run), 0);
	assert_non_null(run.why);
	assert_string_equal(run.why, "GRUB string 4 differs: today's grub_cmd: \"[ -s (hd0,gpt1)/boot/grub/grubenv ]\", "
				     "the model's grub_cmd: \"insmod extra\"");
	grub_model_run_done(&run);
	/* nothing learned from a failed check: predicting says why instead of guessing */
	assert_int_equal(grub_model_predict(m, c.c, 2, true, NULL, &run), 0);
	assert_non_null(run.why);
	grub_model_run_done(&run);
	free(edited);
	grub_model_free(m);
	configs_free(&c);
	strings_free(today, n);
}

/* A new condition today's boot never ran: unpredictable, never a guess. */
static void test_unknown_condition_refused(void **state)
{
	size_t n;
	grub_model_string *today = today_strings(&n);
	grub_model *m = grub_model_new();
	grub_model_run run;
	configs c;
	static const char extra[] = "if [ -f $prefix/other ]; then set x=1; fi\n";
	char *edited;

	(void) state;
	assert_non_null(m);
	configs_load(&c, "boot-grub.cfg");
	assert_int_equal(grub_model_check(m, c.c, 2, today, n, true, &run), 0);
	assert_null(run.why);
	grub_model_run_done(&run);
	edited = malloc(c.c[1].size + sizeof(extra));
	assert_non_null(edited);
	memcpy(edited, extra, sizeof(extra) - 1);
	memcpy(edited + sizeof(extra) - 1, c.text[1], c.c[1].size);
	c.c[1].text = edited;
	c.c[1].size += sizeof(extra) - 1;
	assert_int_equal(grub_model_predict(m, c.c, 2, true, NULL, &run), 0);
	assert_non_null(run.why);
	assert_string_equal(run.why, "whether `[ -f (hd0,gpt1)/boot/grub/other ]` succeeds decides what GRUB runs, "
				     "and today's boot did not run it");
	grub_model_run_done(&run);
	free(edited);
	grub_model_free(m);
	configs_free(&c);
	strings_free(today, n);
}

/*
 * The fallback to today's kernel after the update (boot-grub-both.cfg: what update-grub writes
 * with both kernels installed, PROVENANCE): someone picks "Advanced options > ... with Linux
 * OLD". GRUB measures no key press, so the strings are today's up to the first entry's
 * definition, the definitions of the new config, the submenu's setparams and its entries'
 * definitions, the chosen entry's setparams and then today's entry commands, unchanged (the
 * same kernel). Picked by numbers, by title and id, and by the kernel it loads.
 */
static void test_fallback_entry(void **state)
{
	size_t n, i, k, first_entry, setp;
	grub_model_string *today = today_strings(&n);
	grub_model *m = grub_model_new();
	grub_model_run run;
	configs c, both;
	static const grub_model_choice choices[] = {
		{ "1>1", NULL },
		{ "Advanced options for Debian GNU/Linux>Debian GNU/Linux, with Linux 6.1.0-57-amd64", NULL },
		{ "gnulinux-advanced-6D62-0001>gnulinux-6.1.0-57-amd64-advanced-6D62-0001", NULL },
		{ NULL, "/boot/vmlinuz-6.1.0-57-amd64" },
		{ NULL, "/mnt/boot/vmlinuz-6.1.0-57-amd64" },
	};
	static const grub_model_choice wrong[] = {
		{ "2", NULL }, { "1", NULL }, { "0>1", NULL }, { "1>7", NULL }, { "Advanced>x", NULL },
		{ NULL, "/boot/vmlinuz-6.1.0-99-amd64" }, { NULL, "vmlinuz-6.1.0-57-amd64" },
	};

	(void) state;
	assert_non_null(m);
	configs_load(&c, "boot-grub.cfg");
	configs_load(&both, "boot-grub-both.cfg");
	assert_int_equal(grub_model_check(m, c.c, 2, today, n, true, &run), 0);
	assert_null(run.why);
	grub_model_run_done(&run);
	for (first_entry = 0; first_entry < n && strncmp(today[first_entry].text, "menuentry ", 10); first_entry++)
		;
	for (setp = 0; setp < n && strcmp(today[setp].text, "setparams Debian GNU/Linux"); setp++)
		;
	assert_true(first_entry < setp && setp < n);
	for (k = 0; k < sizeof(choices) / sizeof(choices[0]); k++) {
		assert_int_equal(grub_model_predict(m, both.c, 2, true, &choices[k], &run), 0);
		if (run.why)
			fprintf(stderr, "model: %s\n", run.why);
		assert_null(run.why);
		assert_false(run.no_entry);
		assert_string_equal(run.entry, "1>1");
		/* 2 definitions, submenu setparams, 2 inner definitions, entry setparams */
		assert_int_equal(run.n, first_entry + 6 + (n - setp - 1));
		for (i = 0; i < first_entry; i++)
			assert_string_equal(run.s[i].text, today[i].text);
		assert_true(strstr(run.s[first_entry].text, "linuxefi\t/boot/vmlinuz-6.1.0-58-amd64") != NULL);
		assert_true(strncmp(run.s[first_entry + 1].text, "submenu Advanced options for Debian GNU/Linux --id "
				    "gnulinux-advanced-6D62-0001 {", 75) == 0);
		assert_string_equal(run.s[first_entry + 2].text, "setparams Advanced options for Debian GNU/Linux");
		assert_true(strncmp(run.s[first_entry + 3].text, "menuentry Debian GNU/Linux, with Linux 6.1.0-58-amd64 ", 54) == 0);
		assert_true(strncmp(run.s[first_entry + 4].text, "menuentry Debian GNU/Linux, with Linux 6.1.0-57-amd64 ", 54) == 0);
		assert_string_equal(run.s[first_entry + 5].text, "setparams Debian GNU/Linux, with Linux 6.1.0-57-amd64");
		for (i = setp + 1; i < n; i++) {
			assert_int_equal(run.s[first_entry + 6 + i - setp - 1].kind, today[i].kind);
			assert_string_equal(run.s[first_entry + 6 + i - setp - 1].text, today[i].text);
		}
		grub_model_run_done(&run);
	}
	for (k = 0; k < sizeof(wrong) / sizeof(wrong[0]); k++) {
		assert_int_equal(grub_model_predict(m, both.c, 2, true, &wrong[k], &run), 0);
		assert_non_null(run.why);
		assert_true(run.no_entry);
		grub_model_run_done(&run);
	}
	/* the default entry of the same config: the new kernel, not a pick */
	assert_int_equal(grub_model_predict(m, both.c, 2, true, NULL, &run), 0);
	assert_null(run.why);
	assert_null(run.entry);
	assert_string_equal(run.s[run.n - 1].text, "initrdefi /boot/initrd.img-6.1.0-58-amd64");
	grub_model_run_done(&run);
	grub_model_free(m);
	configs_free(&c);
	configs_free(&both);
	strings_free(today, n);
}

/* Hostile configs: deep nesting, endless loops, recursion end with a reason, not a crash. */
static void test_hostile_bounded(void **state)
{
	static const char *const texts[] = {
		"function f { f\n}\nf\n",
		"while true; do echo x; done\n",
		"menuentry a { echo \"unterminated }\n",
		"set a=\x01\n",
		"echo $\n",
	};
	grub_model *m = grub_model_new();
	grub_model_run run;
	char deep[4096];
	size_t i, k = 0;

	(void) state;
	assert_non_null(m);
	for (i = 0; i < 200; i++)
		k += (size_t) snprintf(deep + k, sizeof(deep) - k, "if true; then ");
	snprintf(deep + k, sizeof(deep) - k, "echo x\n");
	for (i = 0; i <= sizeof(texts) / sizeof(texts[0]); i++) {
		grub_model_config c = { "(hd0)/grub.cfg", i < 5 ? texts[i] : deep, 0 };

		c.size = strlen(c.text);
		assert_int_equal(grub_model_predict(m, &c, 1, true, NULL, &run), 0);
		assert_non_null(run.why);
		assert_true(run.n <= GRUB_MODEL_MAX_STRINGS);
		grub_model_run_done(&run);
	}
	grub_model_free(m);
}

/* Memory is bounded like steps: a config that copies a big variable stops the run with the
 * reason (GRUB_MODEL_MAX_BYTES), and so does a command whose arguments together outgrow the
 * string GRUB would measure (before: the model's join failed and the run ended in -ENOMEM). */
static void test_memory_bounded(void **state)
{
	static const char *const tails[] = {
		"for i in 1 2 3 4 5 6 7 8 9 10; do\n for j in 1 2 3 4 5 6 7 8 9 10; do\n  set \"v$i$j=$a\"\n done\ndone\n",
		"echo $a $a $a\n",
	};
	static const char *const why[] = {
		"take more than 4 MiB", "a command longer than the model takes",
	};
	grub_model *m = grub_model_new();
	grub_model_run run;
	size_t big = 100000, i;

	(void) state;
	assert_non_null(m);
	for (i = 0; i < 2; i++) {
		size_t cap = big + strlen(tails[i]) + 16;
		char *text = malloc(cap);
		grub_model_config c = { "(hd0)/grub.cfg", text, 0 };

		assert_non_null(text);
		memcpy(text, "set a=", 6);
		memset(text + 6, 'x', big);
		snprintf(text + 6 + big, cap - 6 - big, "\n%s", tails[i]);
		c.size = strlen(text);
		assert_int_equal(grub_model_predict(m, &c, 1, true, NULL, &run), 0);
		assert_non_null(run.why);
		if (!strstr(run.why, why[i]))
			fail_msg("run %zu stopped: %s", i, run.why);
		grub_model_run_done(&run);
		free(text);
	}
	grub_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reproduces_real_boot),
		cmocka_unit_test(test_predicts_kernel_bump),
		cmocka_unit_test(test_fallback_entry),
		cmocka_unit_test(test_refuses_other_config),
		cmocka_unit_test(test_unknown_condition_refused),
		cmocka_unit_test(test_hostile_bounded),
		cmocka_unit_test(test_memory_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
