/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What mboot knows of GRUB (src/lib/grub): word splitting as GRUB's manual documents it
 * (https://www.gnu.org/software/grub/manual/html_node/Shell_002dlike-scripting.html, "Quoting":
 * blanks separate words; quotes group and disappear; a bare backslash escapes the next
 * character; in single quotes nothing is special; in double quotes a backslash escapes only
 * $, " and \; "$var" is a variable, which mboot keeps as written since it cannot expand it),
 * the grub.cfg reader (also against hostile files), and the kind of GRUB's PCR 8 strings as the
 * chain of events binds it, on crafted sequences and on a real GRUB boot.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <mboot/mboot.h>
#include "corpus-util.h"
#include "lib/grub/grub.h"

/* Split s, check the words are exactly want[] (NULL-terminated). */
/* grub_split_words() appends to ws and its caller frees ws, error or not: so does the test
 * before an assertion on a failed allocation leaves it (the oom suite). */
static int split_words(const char *s, const char *end, grub_words *ws)
{
	int r = grub_split_words(s, end, ws);

	if (r == -ENOMEM)
		grub_words_done(ws);
	return r;
}

static void split_is(const char *s, const char *const *want)
{
	grub_words ws = { 0 };
	size_t n = 0;

	assert_int_equal(split_words(s, s + strlen(s), &ws), 0);
	while (want[n])
		n++;
	if (ws.n != n) {
		size_t i;

		fprintf(stderr, "split of [%s]: %zu words, want %zu:", s, ws.n, n);
		for (i = 0; i < ws.n; i++)
			fprintf(stderr, " [%s]", ws.w[i]);
		fprintf(stderr, "\n");
	}
	assert_int_equal(ws.n, n);
	for (n = 0; n < ws.n; n++)
		assert_string_equal(ws.w[n], want[n]);
	grub_words_done(&ws);
}

#define SPLIT(s, ...) split_is((s), (const char *const[]) { __VA_ARGS__, NULL })

static void test_split_blanks(void **state)
{
	(void) state;
	SPLIT("linux /vmlinuz root=/dev/sda1 ro", "linux", "/vmlinuz", "root=/dev/sda1", "ro");
	SPLIT("\t linux\t\t/vmlinuz   ro  ", "linux", "/vmlinuz", "ro");
	/* A CRLF config: the CR is a blank, not part of the last word. */
	SPLIT("initrd /initrd.img\r", "initrd", "/initrd.img");
	split_is("", (const char *const[]) { NULL });
	split_is("   \t ", (const char *const[]) { NULL });
}

static void test_split_quotes(void **state)
{
	(void) state;
	/* Quotes group blanks into one word and disappear. */
	SPLIT("linux /vmlinuz \"root=/dev/sda1 ro\"", "linux", "/vmlinuz", "root=/dev/sda1 ro");
	SPLIT("menuentry 'Ubuntu, with Linux 5.7' --class ubuntu", "menuentry", "Ubuntu, with Linux 5.7", "--class", "ubuntu");
	/* Quoted and bare parts next to each other make one word. */
	SPLIT("one'two'three\"four\"five", "onetwothreefourfive");
	SPLIT("'a b'\"c d\"e", "a bc de");
	/* An empty quoted argument is still an argument. */
	SPLIT("echo a \"\" b", "echo", "a", "", "b");
	SPLIT("echo a '' b", "echo", "a", "", "b");
	/* Each kind of quote is literal inside the other. */
	SPLIT("\"it's\" 'say \"hi\"'", "it's", "say \"hi\"");
}

static void test_split_backslash(void **state)
{
	(void) state;
	/* A bare backslash keeps the next character literally, blank or quote included. */
	SPLIT("a\\ b c", "a b", "c");
	SPLIT("\\\"x\\\" \\'y\\'", "\"x\"", "'y'");
	SPLIT("a\\\\b", "a\\b");
	SPLIT("\\$root", "$root");
	/* In single quotes a backslash is an ordinary character. */
	SPLIT("'a\\b' 'c\\\\d' 'e\\$f'", "a\\b", "c\\\\d", "e\\$f");
	/* In double quotes it escapes only $, " and \; before anything else it stays. */
	SPLIT("\"a\\\"b\" \"c\\\\d\" \"e\\$f\"", "a\"b", "c\\d", "e$f");
	SPLIT("\"a\\b\" \"\\n\" \"x\\ y\"", "a\\b", "\\n", "x\\ y");
}

static void test_split_variables_comments(void **state)
{
	(void) state;
	/* mboot does not expand variables: $x, ${x} and "$x" are kept as written. */
	SPLIT("linux ($root)/vmlinuz $vt_handoff", "linux", "($root)/vmlinuz", "$vt_handoff");
	SPLIT("echo ${foo} \"$foo\" a${foo}b", "echo", "${foo}", "$foo", "a${foo}b");
	/* A comment starts only at the beginning of a word. */
	SPLIT("# linux /vmlinuz", NULL);
	SPLIT("linux /vmlinuz ro # quiet", "linux", "/vmlinuz", "ro");
	SPLIT("echo a###b a# #b", "echo", "a###b", "a#");
	SPLIT("echo \\# '#' \"#\"", "echo", "#", "#", "#");
}

static void test_split_appends_and_caps(void **state)
{
	grub_words ws = { 0 };
	char line[4 * GRUB_MAX_WORDS + 8];
	size_t i;

	(void) state;
	assert_int_equal(split_words("a b", &"a b"[3], &ws), 0);
	assert_int_equal(split_words("c", &"c"[1], &ws), 0);
	assert_int_equal(ws.n, 3);
	assert_string_equal(ws.w[2], "c");
	grub_words_done(&ws);
	assert_int_equal(ws.n, 0);

	/* Exactly GRUB_MAX_WORDS words fit; one more is refused, not written past the array. */
	line[0] = 0;
	for (i = 0; i < GRUB_MAX_WORDS; i++)
		strcat(line, "w ");
	assert_int_equal(split_words(line, line + strlen(line), &ws), 0);
	assert_int_equal(ws.n, GRUB_MAX_WORDS);
	grub_words_done(&ws);
	strcat(line, "x");
	assert_int_equal(split_words(line, line + strlen(line), &ws), -E2BIG);
	assert_int_equal(ws.n, GRUB_MAX_WORDS);
	grub_words_done(&ws);

	/* The end pointer bounds the split: no read past it, NUL or not. */
	assert_int_equal(split_words("ab cd", &"ab cd"[4], &ws), 0);
	assert_int_equal(ws.n, 2);
	assert_string_equal(ws.w[1], "c");
	grub_words_done(&ws);
}

static void test_join(void **state)
{
	grub_words ws = { 0 };
	const char *s = "linux /vmlinuz  'root=a b'\tro";
	char *j;

	(void) state;
	assert_int_equal(split_words(s, s + strlen(s), &ws), 0);
	/* As GRUB joins argv for "grub_cmd: ": single spaces, quotes gone, nothing re-quoted. */
	j = grub_join(&ws, 0);
	assert_string_equal(j, "linux /vmlinuz root=a b ro");
	free(j);
	j = grub_join(&ws, 2);
	assert_string_equal(j, "root=a b ro");
	free(j);
	j = grub_join(&ws, ws.n);
	assert_string_equal(j, "");
	free(j);
	grub_words_done(&ws);
}

static void test_is_cmd(void **state)
{
	(void) state;
	assert_true(grub_is_cmd("linux", "linux"));
	assert_true(grub_is_cmd("linuxefi", "linux"));
	assert_true(grub_is_cmd("linux16", "linux"));
	assert_true(grub_is_cmd("initrd", "initrd"));
	assert_true(grub_is_cmd("initrdefi", "initrd"));
	assert_true(grub_is_cmd("initrd16", "initrd"));
	assert_false(grub_is_cmd("linux_gfx_mode", "linux"));
	assert_false(grub_is_cmd("linuxe", "linux"));
	assert_false(grub_is_cmd("linux32", "linux"));
	assert_false(grub_is_cmd("linuxefi16", "linux"));
	assert_false(grub_is_cmd("Linux", "linux"));
	assert_false(grub_is_cmd("linu", "linux"));
	assert_false(grub_is_cmd("", "linux"));
	assert_false(grub_is_cmd("initrd", "linux"));
}

/* A grub.cfg as grub-mkconfig writes it (Debian/Ubuntu 10_linux), two entries. */
static const char sample_cfg[] =
	"### BEGIN /etc/grub.d/10_linux ###\n"
	"function gfxmode {\n"
	"\tset gfxpayload=\"${1}\"\n"
	"}\n"
	"menuentry 'Ubuntu' --class ubuntu $menuentry_id_option 'gnulinux-simple-119f' {\n"
	"\trecordfail\n"
	"\tinsmod gzio\n"
	"\tsearch --no-floppy --fs-uuid --set=root 119f1a79-c391-4e37-905d-3a503284cadb\n"
	"\techo\t'Loading Linux 5.7.0-rc2+ ...'\n"
	"\tlinux\t/boot/vmlinuz-5.7.0-rc2+ root=UUID=119f1a79 ro  quiet splash $vt_handoff\n"
	"\techo\t'Loading initial ramdisk ...'\n"
	"\tinitrd\t/boot/initrd.img-5.7.0-rc2+ /boot/microcode.cpio\n"
	"}\n"
	"menuentry 'Ubuntu, older' {\n"
	"\tlinuxefi /boot/vmlinuz-old root=/dev/sda1\n"
	"\tinitrdefi /boot/initrd-old\n"
	"}\n";

static void words_are(const grub_words *ws, const char *const *want)
{
	size_t n = 0;

	while (want[n])
		n++;
	assert_int_equal(ws->n, n);
	for (n = 0; n < ws->n; n++)
		assert_string_equal(ws->w[n], want[n]);
}

static void test_cfg_entry(void **state)
{
	grub_entry e = { 0 };
	mb_error err = { 0 };
	char path[] = "/tmp/mb-test-grub-XXXXXX";
	int fd;

	(void) state;
	assert_int_equal(grub_parse_cfg_entry(sample_cfg, strlen(sample_cfg), "grub.cfg", &e, &err), 0);
	/* The first (default) entry's lines, words as GRUB splits them. */
	words_are(&e.linux_line, (const char *const[]) { "linux", "/boot/vmlinuz-5.7.0-rc2+", "root=UUID=119f1a79", "ro",
							 "quiet", "splash", "$vt_handoff", NULL });
	words_are(&e.initrd_line, (const char *const[]) { "initrd", "/boot/initrd.img-5.7.0-rc2+", "/boot/microcode.cpio", NULL });
	grub_entry_done(&e);

	/* The file reader is the same parser behind file_read. */
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, sample_cfg, strlen(sample_cfg)), (ssize_t) strlen(sample_cfg));
	close(fd);
	assert_int_equal(grub_read_cfg_entry(path, &e, &err), 0);
	assert_string_equal(e.linux_line.w[1], "/boot/vmlinuz-5.7.0-rc2+");
	assert_string_equal(e.initrd_line.w[1], "/boot/initrd.img-5.7.0-rc2+");
	grub_entry_done(&e);
	unlink(path);

	/* Only a linux line: no initrd is fine; no final newline is fine. */
	assert_int_equal(grub_parse_cfg_entry("linux16 /k a=\"b c\"", 18, "x", &e, &err), 0);
	words_are(&e.linux_line, (const char *const[]) { "linux16", "/k", "a=b c", NULL });
	assert_int_equal(e.initrd_line.n, 0);
	grub_entry_done(&e);
}

/* A hostile or broken config: a negative errno with a message naming the file, e empty. */
static void refused(const char *text, size_t size, int want)
{
	grub_entry e = { 0 };
	mb_error err = { 0 };

	assert_int_equal(grub_parse_cfg_entry(text, size, "hostile.cfg", &e, &err), want);
	assert_non_null(strstr(err.message, "hostile.cfg"));
	assert_int_equal(e.linux_line.n, 0);
	assert_int_equal(e.initrd_line.n, 0);
}

static void test_cfg_hostile(void **state)
{
	char *big, *p;
	uint8_t garbage[4096];
	size_t i;
	uint32_t x = 0x12345678;
	grub_entry e = { 0 };
	mb_error err = { 0 };
	char path[] = "/tmp/mb-test-grub-XXXXXX";
	FILE *f;
	int fd;

	(void) state;
	refused("", 0, -EBADMSG);
	refused("initrd /i\n# linux /k\n", 21, -EBADMSG);
	/* "linux" alone loads nothing: not taken as the entry's kernel. */
	refused("linux\n", 6, -EBADMSG);
	/* Truncated in the middle of the command word, and inside a quote. */
	refused("menuentry x {\n\tlin", 18, -EBADMSG);
	{
		grub_entry q = { 0 };

		assert_int_equal(grub_parse_cfg_entry("linux /k 'ro quiet", 18, "x", &q, &err), 0);
		words_are(&q.linux_line, (const char *const[]) { "linux", "/k", "ro quiet", NULL });
		grub_entry_done(&q);
	}
	/* A linux line of more words than GRUB_MAX_WORDS. */
	big = malloc(8 * GRUB_MAX_WORDS + 16);
	assert_non_null(big);
	p = big + sprintf(big, "linux /k");
	for (i = 0; i < GRUB_MAX_WORDS; i++)
		p += sprintf(p, " a");
	refused(big, (size_t) (p - big), -E2BIG);
	free(big);
	/* Binary garbage (NULs, no newline for long stretches): refused or read, never a crash. */
	for (i = 0; i < sizeof(garbage); i++) {
		x = x * 1103515245u + 12345u;
		garbage[i] = (uint8_t) (x >> 16);
	}
	if (grub_parse_cfg_entry((const char *) garbage, sizeof(garbage), "garbage", &e, &err) == 0)
		grub_entry_done(&e);
	memcpy(garbage, "linux\0/k\n", 9);
	refused((const char *) garbage, 9, -EBADMSG);

	/* Bigger than GRUB_CFG_MAX: the file reader refuses it before parsing. */
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	assert_int_equal(fputs("linux /k\n", f) >= 0, 1);
	assert_int_equal(fseek(f, GRUB_CFG_MAX, SEEK_SET), 0);
	assert_int_equal(fputc('\n', f), '\n');
	fclose(f);
	err = (mb_error) { 0 };
	assert_true(grub_read_cfg_entry(path, &e, &err) < 0);
	assert_true(err.message[0] != 0);
	assert_int_equal(e.linux_line.n, 0);
	unlink(path);
	err = (mb_error) { 0 };
	assert_true(grub_read_cfg_entry("/nonexistent/grub.cfg", &e, &err) < 0);
	assert_true(err.message[0] != 0);
}

/* A PCR 8 EV_IPL event carrying text (with GRUB's trailing NUL). */
static mb_event ipl(uint32_t pcr, const char *text)
{
	mb_event ev = { 0 };

	ev.pcr = pcr;
	ev.type = MB_EV_IPL;
	ev.data = (const uint8_t *) text;
	ev.data_size = (uint32_t) strlen(text) + 1;
	return ev;
}

static void split_label(const mb_event *ev, grub_string_kind want, const char *want_text)
{
	const uint8_t *text = NULL;
	size_t len = 0;

	assert_int_equal(grub_string_split(ev, &text, &len), want);
	if (want == GRUB_STRING_NONE)
		return;
	assert_int_equal(len, strlen(want_text));
	assert_memory_equal(text, want_text, len);
}

static void test_string_split(void **state)
{
	mb_event ev;

	(void) state;
	ev = ipl(8, "grub_cmd: linux /vmlinuz ro");
	split_label(&ev, GRUB_STRING_CMD, "linux /vmlinuz ro");
	/* Without the NUL GRUB writes: the same text. */
	ev.data_size--;
	split_label(&ev, GRUB_STRING_CMD, "linux /vmlinuz ro");
	ev = ipl(8, "kernel_cmdline: /vmlinuz ro");
	split_label(&ev, GRUB_STRING_KERNEL_CMDLINE, "/vmlinuz ro");
	ev = ipl(8, "module_cmdline: /initrd x");
	split_label(&ev, GRUB_STRING_MODULE_CMDLINE, "/initrd x");
	ev = ipl(8, "grub_cmd: ");
	split_label(&ev, GRUB_STRING_CMD, "");
	assert_string_equal(grub_string_prefix(GRUB_STRING_KERNEL_CMDLINE), "kernel_cmdline: ");
	assert_string_equal(grub_string_prefix(GRUB_STRING_NONE), "");
	/* A rewritten event keeps the label form of today's (GRUB 2.02's from Fedora 31's log,
	 * corpus fwupd/binary_bios_measurements-v1: "grub_cmd ", "grub_kernel_cmdline "). */
#define LIKE(k, s) grub_string_label_like(k, (const uint8_t *) (s), strlen(s))
	assert_string_equal(LIKE(GRUB_STRING_KERNEL_CMDLINE, "grub_cmd: set x=1"), "kernel_cmdline: ");
	assert_string_equal(LIKE(GRUB_STRING_CMD, "kernel_cmdline: /vmlinuz"), "grub_cmd: ");
	assert_string_equal(LIKE(GRUB_STRING_MODULE_CMDLINE, "grub_cmd: x"), "module_cmdline: ");
	assert_string_equal(LIKE(GRUB_STRING_KERNEL_CMDLINE, "grub_cmd linux /vmlinuz"), "grub_kernel_cmdline ");
	assert_string_equal(LIKE(GRUB_STRING_CMD, "grub_kernel_cmdline /vmlinuz"), "grub_cmd ");
	assert_string_equal(LIKE(GRUB_STRING_MODULE_CMDLINE, "grub_cmd x"), "");
	assert_string_equal(LIKE(GRUB_STRING_CMD, "grub_cmd:x"), "grub_cmd ");
#undef LIKE

	/* GRUB 2.02 with Fedora's/RHEL's TPM patches: "kind text", no colon; the same kinds. */
	ev = ipl(8, "grub_cmd linux (hd2,gpt2)/vmlinuz ro");
	split_label(&ev, GRUB_STRING_CMD, "linux (hd2,gpt2)/vmlinuz ro");
	ev = ipl(8, "grub_kernel_cmdline (hd2,gpt2)/vmlinuz ro");
	split_label(&ev, GRUB_STRING_KERNEL_CMDLINE, "(hd2,gpt2)/vmlinuz ro");
	{
		const uint8_t *text;
		size_t len, label_len = 0;
		static const char data[] = "grub_kernel_cmdline /k x"; /* the NUL included */

		assert_int_equal(grub_string_parse((const uint8_t *) data, sizeof(data), &text, &len, &label_len),
				 GRUB_STRING_KERNEL_CMDLINE);
		assert_int_equal(label_len, 20);
		assert_int_equal(len, 4);
		assert_int_equal(grub_string_parse((const uint8_t *) "kernel_cmdline: /k", 18, &text, &len, &label_len),
				 GRUB_STRING_KERNEL_CMDLINE);
		assert_int_equal(label_len, 16);
		/* Only the upstream label is the kind's name. */
		assert_string_equal(grub_string_prefix(GRUB_STRING_CMD), "grub_cmd: ");
	}

	/* Not GRUB's: no separator, another label, another PCR or type, no data. */
	ev = ipl(8, "grub_cmdlinux");
	split_label(&ev, GRUB_STRING_NONE, NULL);
	ev = ipl(8, "grub_kernel_cmdline");
	split_label(&ev, GRUB_STRING_NONE, NULL);
	ev = ipl(8, "grub_linuxefi Kernel"); /* the 2.02 patches' PCR 9 file label */
	split_label(&ev, GRUB_STRING_NONE, NULL);
	ev = ipl(8, "grub_cmd:linux");
	split_label(&ev, GRUB_STRING_NONE, NULL);
	ev = ipl(8, "grub_cmd");
	split_label(&ev, GRUB_STRING_NONE, NULL);
	ev = ipl(8, "kernel_cmdline:");
	split_label(&ev, GRUB_STRING_NONE, NULL);
	ev = ipl(8, "(hd0,gpt2)/boot/grub/grub.cfg");
	split_label(&ev, GRUB_STRING_NONE, NULL);
	ev = ipl(9, "grub_cmd: linux /vmlinuz");
	split_label(&ev, GRUB_STRING_NONE, NULL);
	ev = ipl(8, "grub_cmd: linux /vmlinuz");
	ev.type = MB_EV_EVENT_TAG;
	split_label(&ev, GRUB_STRING_NONE, NULL);
	ev = ipl(8, "");
	ev.data_size = 0;
	split_label(&ev, GRUB_STRING_NONE, NULL);
}

/* Feed texts (PCR 8 EV_IPL, or "9:..." for a PCR 9 file, "-" for a PCR 8 non-GRUB event) to a
 * fresh walk; check each kind. */
static void walk_is(const char *const *texts, const grub_string_kind *want)
{
	grub_string_walk w = { 0 };
	size_t i;

	for (i = 0; texts[i]; i++) {
		mb_event ev;
		grub_string_kind k;

		if (strncmp(texts[i], "9:", 2) == 0) {
			ev = ipl(9, texts[i] + 2);
		} else if (strcmp(texts[i], "-") == 0) {
			ev = ipl(8, "\x01\x02");
			ev.type = MB_EV_EVENT_TAG;
		} else {
			ev = ipl(8, texts[i]);
		}
		k = grub_string_walk_next(&w, &ev);
		if (k != want[i])
			fprintf(stderr, "walk: event %zu [%s]: kind %d, want %d\n", i, texts[i], (int) k, (int) want[i]);
		assert_int_equal(k, want[i]);
	}
}

#define CMD GRUB_STRING_CMD
#define KCL GRUB_STRING_KERNEL_CMDLINE
#define MCL GRUB_STRING_MODULE_CMDLINE
#define NON GRUB_STRING_NONE
#define WALK(texts, ...) walk_is((const char *const[]) { texts, NULL }, (const grub_string_kind[]) { __VA_ARGS__ })
#define T(...) __VA_ARGS__

static void test_string_walk(void **state)
{
	(void) state;
	/* GRUB's order: the linux command, its file (PCR 9), then the command line it built. */
	WALK(T("grub_cmd: linux /vmlinuz root=/dev/sda1 ro", "9:/vmlinuz", "kernel_cmdline: /vmlinuz root=/dev/sda1 ro"),
	     CMD, NON, KCL);
	WALK(T("grub_cmd: linuxefi /vmlinuz", "kernel_cmdline: /vmlinuz"), CMD, KCL);
	WALK(T("grub_cmd: linux16 /vmlinuz x", "kernel_cmdline: /vmlinuz x"), CMD, KCL);
	/* The label is not measured: a command line relabelled as a command is still the command
	 * line, and a command relabelled as a command line is still a command. */
	WALK(T("grub_cmd: linux /vmlinuz ro", "grub_cmd: /vmlinuz ro"), CMD, KCL);
	WALK(T("kernel_cmdline: set root=(hd0)", "kernel_cmdline: /vmlinuz ro"), CMD, CMD);
	WALK(T("grub_cmd: echo hi", "kernel_cmdline: /vmlinuz ro"), CMD, CMD);
	/* After a linux command, a string that does not start with its path is a command. */
	WALK(T("grub_cmd: linux /vmlinuz ro", "grub_cmd: set x=/vmlinuz"), CMD, CMD);
	WALK(T("grub_cmd: linux /vmlinuz ro", "kernel_cmdline: /vmlinuz-old ro"), CMD, CMD);
	WALK(T("grub_cmd: linux_gfx_mode /vmlinuz", "kernel_cmdline: /vmlinuz"), CMD, CMD);
	/* "linux" without a path loads nothing. */
	WALK(T("grub_cmd: linux", "kernel_cmdline: "), CMD, CMD);
	/* A path GRUB re-quotes cannot be compared: the chain alone decides. */
	WALK(T("grub_cmd: linux \"/my kernel\" ro", "kernel_cmdline: \"/my kernel\" ro"), CMD, KCL);
	/* Other kernel and module loaders measure their command line after themselves. */
	WALK(T("grub_cmd: multiboot /xen.gz dom0_mem=1G", "kernel_cmdline: /xen.gz dom0_mem=1G"), CMD, KCL);
	WALK(T("grub_cmd: multiboot2 /xen.gz", "grub_cmd: anything"), CMD, KCL);
	WALK(T("grub_cmd: module2 /vmlinuz console=hvc0", "module_cmdline: /vmlinuz console=hvc0"), CMD, MCL);
	WALK(T("grub_cmd: xen_module /initrd", "grub_cmd: x"), CMD, MCL);
	/* Only right after: another GRUB string, or any other PCR 8 event, in between breaks it. */
	WALK(T("grub_cmd: linux /vmlinuz ro", "grub_cmd: echo", "kernel_cmdline: /vmlinuz ro"), CMD, CMD, CMD);
	WALK(T("grub_cmd: linux /vmlinuz ro", "-", "kernel_cmdline: /vmlinuz ro"), CMD, NON, CMD);
	WALK(T("grub_cmd: multiboot /xen", "kernel_cmdline: /xen", "kernel_cmdline: /xen"), CMD, KCL, CMD);
}

/* Which loader command an event is, in either label form. */
static void test_event_kind(void **state)
{
	static const struct {
		const char *text;
		grub_event_kind kind;
	} cases[] = {
		{ "grub_cmd: linux /vmlinuz ro", GRUB_EVENT_LINUX },
		{ "grub_cmd: linuxefi /vmlinuz", GRUB_EVENT_LINUX },
		{ "grub_cmd: linux16 /vmlinuz", GRUB_EVENT_LINUX },
		{ "grub_cmd: linux", GRUB_EVENT_LINUX },
		{ "grub_cmd: linux_gfx_mode keep", GRUB_EVENT_NONE },
		{ "grub_cmd: linuxefi2 /vmlinuz", GRUB_EVENT_NONE },
		{ "grub_cmd: initrdefi /initrd.img", GRUB_EVENT_INITRD },
		{ "kernel_cmdline: /vmlinuz ro", GRUB_EVENT_KERNEL_CMDLINE },
		{ "module_cmdline: /initrd", GRUB_EVENT_NONE },
		{ "grub_cmd linux (hd2,gpt2)/vmlinuz ro", GRUB_EVENT_LINUX },
		{ "grub_cmd initrd (hd2,gpt2)/initramfs.img", GRUB_EVENT_INITRD },
		{ "grub_kernel_cmdline (hd2,gpt2)/vmlinuz ro", GRUB_EVENT_KERNEL_CMDLINE },
		{ "grub_cmd insmod gzio", GRUB_EVENT_NONE },
	};
	size_t i;

	(void) state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		mb_event ev = ipl(8, cases[i].text);

		if (grub_event_kind_of(&ev) != cases[i].kind)
			fprintf(stderr, "[%s]: kind %d, want %d\n", cases[i].text, (int) grub_event_kind_of(&ev),
				(int) cases[i].kind);
		assert_int_equal(grub_event_kind_of(&ev), cases[i].kind);
		ev.pcr = 9;
		assert_int_equal(grub_event_kind_of(&ev), GRUB_EVENT_NONE);
	}
}

/* grub_create_loader_cmdline's quoting (GRUB's lib/cmdline.c): a word with a blank is quoted,
 * backslash and quotes escaped. */
static void test_loader_cmdline(void **state)
{
	char w0[] = "ro", w1[] = "a b", w2[] = "x\\y", w3[] = "\"q\"", w4[] = "it's";
	grub_words args = { .n = 5, .w = { w0, w1, w2, w3, w4 } }, none = { 0 };
	char *s;

	(void) state;
	s = grub_loader_cmdline("/vmlinuz", &args);
	assert_string_equal(s, "/vmlinuz ro \"a b\" x\\\\y \\\"q\\\" it\\'s");
	free(s);
	s = grub_loader_cmdline("/my kernel", &none);
	assert_string_equal(s, "\"/my kernel\"");
	free(s);
}

/* Fedora 31's GRUB 2.02 (fwupd's log): the chain agrees with every label in that form too. */
static void test_string_walk_fedora_boot(void **state)
{
	size_t size, i, n_cmdline = 0, n_grub = 0;
	uint8_t *b = corpus_load("fwupd/binary_bios_measurements-v1", &size);
	mb_event_log *log = NULL;
	grub_string_walk w = { 0 };

	(void) state;
	assert_non_null(b);
	assert_int_equal(mb_event_log_parse_take(b, size, &log, NULL), 0);
	for (i = 0; i < mb_event_log_count(log); i++) {
		const mb_event *ev = mb_event_log_event(log, i);
		const uint8_t *text;
		size_t len;
		grub_string_kind label = grub_string_split(ev, &text, &len), kind = grub_string_walk_next(&w, ev);

		assert_int_equal(kind, label);
		n_grub += kind != GRUB_STRING_NONE;
		if (kind == GRUB_STRING_KERNEL_CMDLINE) {
			n_cmdline++;
			assert_int_equal(ev->number, 105);
			assert_int_equal(grub_event_kind_of(ev), GRUB_EVENT_KERNEL_CMDLINE);
		}
		if (ev->number == 102)
			assert_int_equal(grub_event_kind_of(ev), GRUB_EVENT_LINUX);
		if (ev->number == 106)
			assert_int_equal(grub_event_kind_of(ev), GRUB_EVENT_INITRD);
	}
	assert_int_equal(n_cmdline, 1);
	assert_int_equal(n_grub, 58); /* every PCR 8 event */
	mb_event_log_free(log);
}

/* On a real GRUB boot, the chain agrees with every label, and finds its one command line. */
static void test_string_walk_real_boot(void **state)
{
	size_t size, i, n_cmdline = 0, n_grub = 0;
	uint8_t *b = corpus_load("ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9", &size);
	mb_event_log *log = NULL;
	grub_string_walk w = { 0 };

	(void) state;
	assert_non_null(b);
	assert_int_equal(mb_event_log_parse_take(b, size, &log, NULL), 0);
	for (i = 0; i < mb_event_log_count(log); i++) {
		const mb_event *ev = mb_event_log_event(log, i);
		const uint8_t *text;
		size_t len;
		grub_string_kind label = grub_string_split(ev, &text, &len), kind = grub_string_walk_next(&w, ev);

		assert_int_equal(kind, label);
		n_grub += kind != GRUB_STRING_NONE;
		if (kind == GRUB_STRING_KERNEL_CMDLINE) {
			n_cmdline++;
			assert_int_equal(ev->number, 158);
		}
	}
	assert_int_equal(n_cmdline, 1);
	assert_true(n_grub > 100);
	mb_event_log_free(log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_blanks),
		cmocka_unit_test(test_split_quotes),
		cmocka_unit_test(test_split_backslash),
		cmocka_unit_test(test_split_variables_comments),
		cmocka_unit_test(test_split_appends_and_caps),
		cmocka_unit_test(test_join),
		cmocka_unit_test(test_is_cmd),
		cmocka_unit_test(test_cfg_entry),
		cmocka_unit_test(test_cfg_hostile),
		cmocka_unit_test(test_string_split),
		cmocka_unit_test(test_string_walk),
		cmocka_unit_test(test_string_walk_real_boot),
		cmocka_unit_test(test_event_kind),
		cmocka_unit_test(test_loader_cmdline),
		cmocka_unit_test(test_string_walk_fedora_boot),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
