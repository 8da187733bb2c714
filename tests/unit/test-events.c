/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The event-data decoder against outside truth:
 *  - upstream tpm2_eventlog's expected YAML (tpm2-tools test fixtures, libefivar >= 39
 *    device-path text) for the same events of the same logs: variable GUIDs and names,
 *    SecureBoot, Boot#### descriptions and device paths, signature lists, image-load
 *    device paths, GPT headers and partitions, EFI action strings, GRUB/shim/sd-boot
 *    strings. The YAML is read with plain line matching below.
 *  - a sweep over every event of every log in tests/data/corpus: nothing the spec
 *    defines decodes as "raw with an error", except the events listed as genuinely
 *    malformed;
 *  - hand-built hostile buffers: truncations, absurd lengths, overrunning lists.
 */
#include <ctype.h>
#include <dirent.h>
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

#include "shared/json.h"

#include <mboot/eventlog.h>
#include <mboot/events.h>
#include "shared/fileio.h"

/*
 * jansson holds integers up to 2^63 - 1; the decoders' can be larger (GPT attribute bits). Such
 * a number (19 or 20 digits, outside strings) is put in quotes here, and expect_u64 reads it
 * back from the string.
 */
static char *quote_big_integers(const char *text)
{
	size_t n = strlen(text), i, o = 0;
	char *out = malloc(2 * n + 1);
	bool in_string = false;

	assert_non_null(out);
	for (i = 0; i < n; i++) {
		char c = text[i];

		if (in_string) {
			out[o++] = c;
			if (c == '\\' && i + 1 < n)
				out[o++] = text[++i];
			else if (c == '"')
				in_string = false;
		} else if (c == '"') {
			in_string = true;
			out[o++] = c;
		} else if (c >= '0' && c <= '9') {
			size_t len = strspn(text + i, "0123456789");
			bool big = len > 19 || (len == 19 && strncmp(text + i, "9223372036854775807", 19) > 0);

			if (big)
				out[o++] = '"';
			memcpy(out + o, text + i, len);
			o += len;
			if (big)
				out[o++] = '"';
			i += len - 1;
		} else {
			out[o++] = c;
		}
	}
	out[o] = '\0';
	return out;
}

/* The decoded data as jansson reads the library's JSON text of it: the checks below look at
 * fields by their JSON names, as a user of `log show --json` does. NULL on out-of-memory. */
static json_t *decode_json(const mb_event_log *log, const mb_event *ev)
{
	mb_event_decoded *dec = mb_event_decoded_new();
	json_t *o = NULL;
	char *text = NULL;

	if (dec && mb_event_decode(log, ev, dec) == 0)
		text = mb_event_decoded_json(dec);
	if (text) {
		char *quoted = quote_big_integers(text);

		o = json_loads(quoted, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
		free(quoted);
	}
	free(text);
	mb_event_decoded_free(dec);
	return o;
}

static const char *testdata(void)
{
	const char *d = getenv("MB_TESTDATA");

	return d ? d : "tests/data";
}

static mb_event_log *load_log(const char *rel)
{
	char path[1024];
	uint8_t *buf = NULL;
	size_t n = 0;
	mb_event_log *log = NULL;
	mb_error err;

	snprintf(path, sizeof(path), "%s/corpus/%s", testdata(), rel);
	if (file_read(path, MB_LOG_MAX_SIZE, &buf, &n, &err) < 0) {
		print_error("cannot read %s\n", path);
		free(buf);
		return NULL;
	}
	if (mb_event_log_parse(buf, n, &log, &err) < 0)
		log = NULL;
	free(buf);
	return log;
}

/* ---- tiny JSON path access: "a.b[2].c" ---- */
static json_t *jget(json_t *o, const char *path)
{
	char key[64];

	while (o && *path) {
		size_t n = strcspn(path, ".[");

		if (n) {
			if (n >= sizeof(key))
				return NULL;
			memcpy(key, path, n);
			key[n] = 0;
			if (!(o = json_object_get(o, key)))
				return NULL;
			path += n;
		}
		if (*path == '[') {
			char *end;
			long i = strtol(path + 1, &end, 10);

			if (*end != ']' || !json_is_array(o))
				return NULL;
			o = json_array_get(o, (size_t) i);
			path = end + 1;
		}
		if (*path == '.')
			path++;
	}
	return o;
}

static const char *jstr(json_t *o, const char *path)
{
	json_t *v = jget(o, path);

	return v ? json_string_value(v) : NULL;
}

/* ---- YAML scalars as tpm2_eventlog writes them ---- */

/* Double-quoted YAML: escapes \0 \n \t \\ \" \xHH; an escaped line end joins lines. */
static size_t yaml_dq(char **lines, size_t *li, size_t n_lines, const char *start, char *out, size_t out_size)
{
	const char *p = start;
	size_t len = 0;

	for (;;) {
		if (*p == 0) {
			/* An unescaped line break folds into a space. */
			if (*li + 1 >= n_lines)
				break;
			p = lines[++*li];
			while (*p == ' ')
				p++;
			if (len + 1 < out_size)
				out[len++] = ' ';
			continue;
		}
		if (*p == '"')
			break;
		if (*p == '\\') {
			char c = p[1], v = 0;

			p += 2;
			switch (c) {
			case '0': v = 0; break;
			case 'n': v = '\n'; break;
			case 't': v = '\t'; break;
			case '\\': v = '\\'; break;
			case '"': v = '"'; break;
			case 'x': {
				char h[3] = { p[0], p[1], 0 };

				v = (char) strtol(h, NULL, 16);
				p += 2;
				break;
			}
			case 0: /* escaped line break: continue on the next line, no space */
				if (*li + 1 >= n_lines)
					return len;
				p = lines[++*li];
				while (*p == ' ')
					p++;
				continue;
			default: v = c; break;
			}
			if (len + 1 < out_size)
				out[len++] = v;
			continue;
		}
		if (len + 1 < out_size)
			out[len++] = *p;
		p++;
	}
	out[len] = 0;
	return len;
}

/* Single-quoted YAML: '' is a quote. */
static void yaml_sq(const char *start, char *out, size_t out_size)
{
	size_t len = 0;
	const char *p = start;

	while (*p && len + 1 < out_size) {
		if (*p == '\'') {
			if (p[1] != '\'')
				break;
			p++;
		}
		out[len++] = *p++;
	}
	out[len] = 0;
}

/*
 * Device-path text up to what the UEFI spec leaves open: numbers may be written in
 * decimal or hex (libefivar prints Sata(1,65535,0), the spec's examples 0x...),
 * names are case-insensitive (SCSI/Scsi), and libefivar spells the PIWG firmware
 * volume node FvVol where the spec says Fv.
 */
static void norm_devpath(const char *in, char *out, size_t out_size)
{
	size_t len = 0;
	const char *p = in;

	while (*p && len + 24 < out_size) {
		size_t tok = strcspn(p, "(),/");

		if (tok > 0) {
			char buf[128], *end;
			unsigned long long v;

			if (tok < sizeof(buf)) {
				memcpy(buf, p, tok);
				buf[tok] = 0;
				errno = 0;
				v = strtoull(buf, &end, 0);
				if (isdigit((unsigned char) buf[0]) && *end == 0 && errno == 0) {
					len += (size_t) snprintf(out + len, out_size - len, "%llu", v);
					p += tok;
					continue;
				}
				if (strcasecmp(buf, "FvVol") == 0) {
					len += (size_t) snprintf(out + len, out_size - len, "fv");
					p += tok;
					continue;
				}
			}
			while (tok-- > 0 && len + 1 < out_size)
				out[len++] = (char) tolower((unsigned char) *p++);
			continue;
		}
		out[len++] = *p++;
	}
	out[len] = 0;
}

typedef struct yaml_check {
	const char *log;
	mb_event_log *events;
	long index;          /* current event */
	char type[64];
	json_t *dec;
	int list, sig, part; /* signature list, signature, partition cursors */
	unsigned checks, failures, subjects;
	bool in_action;
} yaml_check;

static void mismatch(yaml_check *c, const char *what, const char *want, const char *got)
{
	c->failures++;
	print_error("%s event %ld (%s): %s: tpm2_eventlog says \"%s\", mboot says \"%s\"\n", c->log, c->index, c->type,
		    what, want, got ? got : "(missing)");
}

static void expect_str(yaml_check *c, const char *path, const char *want)
{
	const char *got = jstr(c->dec, path);

	c->checks++;
	if (!got || strcmp(got, want) != 0)
		mismatch(c, path, want, got);
}

static void expect_u64(yaml_check *c, const char *path, const char *want_text)
{
	json_t *v = jget(c->dec, path);
	unsigned long long want = strtoull(want_text, NULL, 0);
	char got[32];

	c->checks++;
	if (json_is_string(v)) /* over 2^63 - 1: see quote_big_integers */
		snprintf(got, sizeof(got), "%s", json_string_value(v));
	else
		snprintf(got, sizeof(got), "%llu", v ? (unsigned long long) json_integer_value(v) : 0ull);
	if (!v || strtoull(got, NULL, 10) != want)
		mismatch(c, path, want_text, v ? got : NULL);
}

static void expect_devpath(yaml_check *c, const char *path, const char *want)
{
	const char *got = jstr(c->dec, path);
	char a[4096], b[4096];

	c->checks++;
	norm_devpath(want, a, sizeof(a));
	norm_devpath(got ? got : "", b, sizeof(b));
	if (!got || strcmp(a, b) != 0)
		mismatch(c, path, want, got);
}

/*
 * The certificate bytes as tpm2_eventlog printed them, the subject as openssl(1)
 * prints it: the decoder's "subject" must say the same.
 */
static void expect_openssl_subject(yaml_check *c, const char *path, const char *der_hex)
{
	char tmp[] = "/tmp/mb-test-cert-XXXXXX", cmd[256], line[2048], want[2048];
	const char *got = jstr(c->dec, path);
	size_t i, n = strlen(der_hex) / 2;
	FILE *f, *p;
	int fd;

	fd = mkstemp(tmp);
	assert_true(fd >= 0);
	f = fdopen(fd, "wb");
	assert_non_null(f);
	for (i = 0; i < n; i++) {
		char h[3] = { der_hex[2 * i], der_hex[2 * i + 1], 0 };

		fputc((int) strtol(h, NULL, 16), f);
	}
	fclose(f);
	snprintf(cmd, sizeof(cmd), "openssl x509 -inform DER -in %s -noout -subject -nameopt RFC2253", tmp);
	p = popen(cmd, "r");
	assert_non_null(p);
	line[0] = 0;
	if (!fgets(line, sizeof(line), p))
		line[0] = 0;
	assert_int_equal(pclose(p), 0);
	unlink(tmp);
	line[strcspn(line, "\n")] = 0;
	assert_true(strncmp(line, "subject=", 8) == 0);
	snprintf(want, sizeof(want), "%s", line + 8);
	c->checks++;
	c->subjects++;
	if (!got || strcmp(got, want) != 0)
		mismatch(c, path, want, got);
}

static void next_event(yaml_check *c)
{
	const mb_event *ev;

	json_decref(c->dec);
	c->dec = NULL;
	c->index++;
	c->list = c->sig = c->part = -1;
	c->in_action = false;
	c->type[0] = 0;
	ev = mb_event_log_event(c->events, (size_t) c->index);
	if (ev)
		c->dec = decode_json(c->events, ev);
}

/* EV_IPL strings: tpm2_eventlog shows the raw bytes; compare with what the decoder made of them. */
static void expect_ipl(yaml_check *c, const char *raw, size_t n)
{
	const char *kind = jstr(c->dec, "kind");
	char want[8192];

	c->checks++;
	if (!kind) {
		mismatch(c, "kind", "an EV_IPL kind", NULL);
		return;
	}
	if (strcmp(kind, "grub_command") == 0 || strcmp(kind, "grub_kernel_cmdline") == 0) {
		const char *text = jstr(c->dec, "text");
		size_t pl = strcspn(raw, " ") + 1;

		/* "<prefix> <text>\0" */
		snprintf(want, sizeof(want), "%.*s", (int) (n > pl + 1 ? n - pl - 1 : 0), raw + pl);
		if (!text || strcmp(text, want) != 0)
			mismatch(c, "text", want, text);
	} else if (strcmp(kind, "grub_file") == 0) {
		snprintf(want, sizeof(want), "%.*s", (int) (n ? n - 1 : 0), raw);
		if (!jstr(c->dec, "path") || strcmp(jstr(c->dec, "path"), want) != 0)
			mismatch(c, "path", want, jstr(c->dec, "path"));
	} else if (strcmp(kind, "shim_mok_variable") == 0) {
		snprintf(want, sizeof(want), "%.*s", (int) (n ? n - 1 : 0), raw);
		expect_str(c, "name", want);
		c->checks--;
	} else if (strcmp(kind, "utf16_string") == 0) {
		size_t i, w = 0;

		/* ASCII in UTF-16LE: every second byte is 0. */
		for (i = 0; i + 1 < n && w + 1 < sizeof(want); i += 2) {
			if (raw[i] == 0 && raw[i + 1] == 0)
				break;
			if (raw[i + 1] != 0)
				fail_msg("non-ASCII UTF-16 in the YAML of %s", c->log);
			want[w++] = raw[i];
		}
		want[w] = 0;
		expect_str(c, "text", want);
		c->checks--;
	} else if (strcmp(kind, "string") == 0) {
		snprintf(want, sizeof(want), "%.*s", (int) n, raw);
		expect_str(c, "text", want);
		c->checks--;
	} else {
		mismatch(c, "kind", "a string kind", kind);
	}
}

static void check_line(yaml_check *c, char **lines, size_t *li, size_t n_lines)
{
	const char *l = lines[*li];
	char v[8192], path[128];

#define FIELD(prefix) (strncmp(l, prefix, strlen(prefix)) == 0 ? l + strlen(prefix) : NULL)
	const char *s;

	if (FIELD("  PCRIndex: ")) {
		next_event(c);
		return;
	}
	if (!c->dec)
		return;
	if ((s = FIELD("  EventType: "))) {
		snprintf(c->type, sizeof(c->type), "%s", s);
		return;
	}
	if (c->in_action) {
		c->in_action = false;
		if ((s = FIELD("    ")))
			expect_str(c, "text", s);
		return;
	}
	if (FIELD("  Event: |-") && (strcmp(c->type, "EV_EFI_ACTION") == 0 || strcmp(c->type, "EV_ACTION") == 0)) {
		c->in_action = true;
		return;
	}
	if ((s = FIELD("    VariableName: ")))
		expect_str(c, "variable_guid", s);
	else if ((s = FIELD("    UnicodeName: ")))
		expect_str(c, "name", s);
	else if ((s = FIELD("      Enabled: '"))) {
		bool yes = strncmp(s, "Yes", 3) == 0;
		json_t *b = jget(c->dec, "load_option.active");

		if (!b)
			b = jget(c->dec, "secure_boot");
		if (!b)
			b = jget(c->dec, "enabled");
		c->checks++;
		if (!b || json_is_true(b) != yes)
			mismatch(c, "enabled", yes ? "Yes" : "No", !b ? NULL : json_is_boolean(b) ? "the other" : "not a boolean");
	} else if ((s = FIELD("      Description: \""))) {
		yaml_dq(lines, li, n_lines, s, v, sizeof(v));
		expect_str(c, "load_option.description", v);
	} else if ((s = FIELD("      DevicePath: '"))) {
		yaml_sq(s, v, sizeof(v));
		expect_devpath(c, "load_option.device_path", v);
	} else if ((s = FIELD("    DevicePath: '"))) {
		yaml_sq(s, v, sizeof(v));
		expect_devpath(c, "device_path", v);
	} else if ((s = FIELD("    - SignatureType: "))) {
		c->list++;
		c->sig = -1;
		snprintf(path, sizeof(path), "signature_lists[%d].type_guid", c->list);
		expect_str(c, path, s);
	} else if ((s = FIELD("      SignatureListSize: "))) {
		snprintf(path, sizeof(path), "signature_lists[%d].list_size", c->list);
		expect_u64(c, path, s);
	} else if ((s = FIELD("      SignatureHeaderSize: "))) {
		snprintf(path, sizeof(path), "signature_lists[%d].header_size", c->list);
		expect_u64(c, path, s);
	} else if ((s = FIELD("      SignatureSize: "))) {
		snprintf(path, sizeof(path), "signature_lists[%d].signature_size", c->list);
		expect_u64(c, path, s);
	} else if ((s = FIELD("      - SignatureOwner: "))) {
		c->sig++;
		snprintf(path, sizeof(path), "signature_lists[%d].signatures[%d].owner", c->list, c->sig);
		expect_str(c, path, s);
	} else if ((s = FIELD("        SignatureData: "))) {
		const char *type;

		snprintf(path, sizeof(path), "signature_lists[%d].type", c->list);
		type = jstr(c->dec, path);
		if (type && strcmp(type, "sha256") == 0) {
			snprintf(path, sizeof(path), "signature_lists[%d].signatures[%d].sha256", c->list, c->sig);
			expect_str(c, path, s);
		} else if (type && strcmp(type, "x509") == 0) {
			snprintf(path, sizeof(path), "signature_lists[%d].signatures[%d].subject", c->list, c->sig);
			expect_openssl_subject(c, path, s);
		}
	} else if ((s = FIELD("      DiskGUID: "))) {
		expect_str(c, "disk_guid", s);
	} else if ((s = FIELD("    NumberOfPartitions: "))) {
		expect_u64(c, "number_of_partitions", s);
	} else if ((s = FIELD("    - PartitionTypeGUID: "))) {
		c->part++;
		snprintf(path, sizeof(path), "partitions[%d].type_guid", c->part);
		expect_str(c, path, s);
	} else if ((s = FIELD("      UniquePartitionGUID: "))) {
		snprintf(path, sizeof(path), "partitions[%d].unique_guid", c->part);
		expect_str(c, path, s);
	} else if ((s = FIELD("      StartingLBA: "))) {
		snprintf(path, sizeof(path), "partitions[%d].starting_lba", c->part);
		expect_u64(c, path, s);
	} else if ((s = FIELD("      EndingLBA: "))) {
		snprintf(path, sizeof(path), "partitions[%d].ending_lba", c->part);
		expect_u64(c, path, s);
	} else if ((s = FIELD("      PartitionName: \""))) {
		yaml_dq(lines, li, n_lines, s, v, sizeof(v));
		snprintf(path, sizeof(path), "partitions[%d].name", c->part);
		expect_str(c, path, v);
	} else if ((s = FIELD("    String: \"")) && strcmp(c->type, "EV_IPL") == 0) {
		size_t n = yaml_dq(lines, li, n_lines, s, v, sizeof(v));

		expect_ipl(c, v, n);
	}
#undef FIELD
}

static unsigned check_against_yaml(const char *log_rel, unsigned *ret_checks)
{
	char path[1024];
	uint8_t *buf = NULL;
	size_t n = 0, n_lines = 0, i;
	char **lines = NULL, *p;
	mb_error err;
	yaml_check c = { .log = log_rel, .index = -1 };
	const char *base = strrchr(log_rel, '/') + 1;

	snprintf(path, sizeof(path), "%s/corpus/tpm2-tools/expected/event-pretty-39/%s.yaml", testdata(), base);
	assert_int_equal(file_read(path, 1u << 24, &buf, &n, &err), 0);
	c.events = load_log(log_rel);
	assert_non_null(c.events);
	lines = calloc(n + 1, sizeof(char *));
	assert_non_null(lines);
	for (p = (char *) buf; p && *p;) {
		char *nl = strchr(p, '\n');

		lines[n_lines++] = p;
		if (nl)
			*nl = 0;
		p = nl ? nl + 1 : NULL;
	}
	for (i = 0; i < n_lines; i++)
		check_line(&c, lines, &i, n_lines);
	/* Every event of the log is in the YAML. */
	assert_int_equal((size_t) (c.index + 1), mb_event_log_count(c.events));
	json_decref(c.dec);
	mb_event_log_free(c.events);
	free(lines);
	free(buf);
	*ret_checks = c.checks;
	if (c.subjects)
		print_message("%s: %u certificate subjects agree with openssl x509\n", log_rel, c.subjects);
	return c.failures;
}

static const char *const yaml_logs[] = {
	"tpm2-tools/event-arch-linux.bin",
	"tpm2-tools/event-bootorder.bin",
	"tpm2-tools/event-gce-ubuntu-2104-log.bin",
	"tpm2-tools/event-moklisttrusted.bin",
	"tpm2-tools/event-postcode.bin",
	"tpm2-tools/event-sd-boot-fedora37.bin",
	"tpm2-tools/event-uefi-sha1-log.bin",
	"tpm2-tools/event-uefiservices.bin",
};

static void test_agrees_with_tpm2_eventlog(void **state)
{
	unsigned failures = 0, total = 0;
	size_t i;

	for (i = 0; i < sizeof(yaml_logs) / sizeof(yaml_logs[0]); i++) {
		unsigned checks = 0;

		failures += check_against_yaml(yaml_logs[i], &checks);
		print_message("%s: %u values agree with tpm2_eventlog's expected YAML\n", yaml_logs[i], checks);
		assert_true(checks > 0);
		total += checks;
	}
	assert_int_equal(failures, 0);
	/* Enough ground covered that a decoder that drops fields cannot pass. */
	assert_true(total >= 800);
}

/* ---- sweep ---- */

/* Events that are malformed in the log itself, with why. */
static const struct {
	const char *log;
	uint32_t event;
	const char *reason;
} known_malformed[] = {
	{ "go-eventlog/ccel/CCEL_unpadded.data.bin", 17,
	  "TDVF logs the string \"LOADED_IMAGE::LoadOptions\" as EV_EVENT_TAG data, not a TCG_PCClientTaggedEvent" },
};

static bool is_known_malformed(const char *log, uint32_t event)
{
	size_t i;

	for (i = 0; i < sizeof(known_malformed) / sizeof(known_malformed[0]); i++)
		if (strcmp(known_malformed[i].log, log) == 0 && known_malformed[i].event == event)
			return true;
	return false;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

static unsigned sweep_dir(const char *root, const char *rel, unsigned *ret_events, unsigned *ret_logs)
{
	char path[1024];
	DIR *d;
	struct dirent *e;
	unsigned bad = 0;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	d = opendir(path);
	assert_non_null(d);
	while ((e = readdir(d))) {
		char sub[1024];
		mb_event_log *log;
		size_t i;

		if (e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s%s%s", rel, rel[0] ? "/" : "", e->d_name);
		if (e->d_type == DT_DIR) {
			bad += sweep_dir(root, sub, ret_events, ret_logs);
			continue;
		}
		if (ends_with(e->d_name, ".yaml") || ends_with(e->d_name, ".md") || ends_with(e->d_name, ".json") ||
		    ends_with(e->d_name, ".txt") || ends_with(e->d_name, ".b64") || ends_with(e->d_name, ".warn"))
			continue;
		/* Junk, IMA logs and logs the parser rejects are test-eventlog's and test-corpus's business. */
		log = load_log(sub);
		if (!log)
			continue;
		(*ret_logs)++;
		for (i = 0; i < mb_event_log_count(log); i++) {
			const mb_event *ev = mb_event_log_event(log, i);
			json_t *o = decode_json(log, ev);
			const char *kind = jstr(o, "kind"), *desc = jstr(o, "description");

			assert_non_null(o);
			assert_non_null(kind);
			assert_non_null(desc);
			{
				char *t = json_dumps(o, JSON_ENCODE_ANY);

				assert_non_null(t);
				free(t);
			}
			(*ret_events)++;
			if (mb_event_type_name(ev->type) && strcmp(kind, "raw") == 0 && jget(o, "error") &&
			    !is_known_malformed(sub, ev->number)) {
				print_error("%s event %u (%s): %s\n", sub, ev->number, mb_event_type_name(ev->type),
					    jstr(o, "error"));
				bad++;
			}
			json_decref(o);
		}
		mb_event_log_free(log);
	}
	closedir(d);
	return bad;
}

static void test_sweep_corpus(void **state)
{
	char root[1024];
	unsigned events = 0, logs = 0, bad;
	size_t i;

	snprintf(root, sizeof(root), "%s/corpus", testdata());
	bad = sweep_dir(root, "", &events, &logs);
	print_message("decoded %u events of %u logs\n", events, logs);
	assert_int_equal(bad, 0);
	assert_true(logs >= 40);
	/* The listed malformed events are still malformed (the list does not rot). */
	for (i = 0; i < sizeof(known_malformed) / sizeof(known_malformed[0]); i++) {
		mb_event_log *log = load_log(known_malformed[i].log);
		json_t *o;

		assert_non_null(log);
		o = decode_json(log, mb_event_log_event(log, known_malformed[i].event));
		assert_string_equal(jstr(o, "kind"), "raw");
		assert_non_null(jget(o, "error"));
		json_decref(o);
		mb_event_log_free(log);
	}
}

/* ---- facts other projects' tests state about these logs ---- */

static json_t *decode_nth(mb_event_log *log, size_t i)
{
	return decode_json(log, mb_event_log_event(log, i));
}

/* go-attestation secureboot_test.go: sb_cert_eventlog has 3 authority events after
 * the PCR 7 separator, the first verified by the Microsoft UEFI CA. */
static void test_sb_cert_authorities(void **state)
{
	mb_event_log *log = load_log("go-attestation/sb_cert_eventlog");
	size_t i, n = 0;
	bool separator = false;

	assert_non_null(log);
	for (i = 0; i < mb_event_log_count(log); i++) {
		const mb_event *ev = mb_event_log_event(log, i);
		json_t *o;

		if (ev->pcr != 7)
			continue;
		if (ev->type == MB_EV_SEPARATOR)
			separator = true;
		if (ev->type != MB_EV_EFI_VARIABLE_AUTHORITY)
			continue;
		assert_true(separator);
		o = decode_nth(log, i);
		assert_string_equal(jstr(o, "kind"), "efi_variable");
		if (n == 0) {
			assert_string_equal(jstr(o, "name"), "db");
			assert_string_equal(jstr(o, "variable_guid"), "d719b2cb-3d3a-4596-a3bc-dad00e67656f");
			assert_non_null(strstr(jstr(o, "signature.subject"), "CN=Microsoft Corporation UEFI CA 2011"));
		}
		n++;
		json_decref(o);
	}
	assert_int_equal(n, 3);
	mb_event_log_free(log);
}

/* go-tpm-tools eventlogwithsp800155.bin: GCE's SP800-155 Event3 records. */
static void test_sp800_155(void **state)
{
	mb_event_log *log = load_log("go-tpm-tools/eventlogwithsp800155.bin");
	size_t i, n = 0;

	assert_non_null(log);
	for (i = 0; i < mb_event_log_count(log); i++) {
		json_t *o = decode_nth(log, i);

		if (strcmp(jstr(o, "kind"), "sp800_155_reference") == 0) {
			/* The bytes say so: IANA PEN 11129 is Google. */
			assert_int_equal((int) json_integer_value(jget(o, "platform_manufacturer_id")), 11129);
			assert_string_equal(jstr(o, "platform_manufacturer"), "Google, Inc.");
			assert_string_equal(jstr(o, "platform_model"), "Google Compute Engine");
			assert_string_equal(jstr(o, "firmware_version"), "2.7");
			n++;
		}
		json_decref(o);
	}
	assert_int_equal(n, 2);
	mb_event_log_free(log);
}

/* The Spec ID header parsed by the decoder itself equals the log parser's view of it. */
static void test_spec_id_both_ways(void **state)
{
	mb_event_log *log = load_log("tpm2-tss/binary_measurements_hcrtm.bin");
	const mb_event *ev;
	json_t *a, *b;

	assert_non_null(log);
	ev = mb_event_log_event(log, 0);
	a = decode_json(log, ev);
	b = decode_json(NULL, ev);
	assert_string_equal(jstr(a, "kind"), "spec_id");
	assert_true(json_equal(a, b));
	/* tpm2-tss test/unit/fapi-eventlog.c: this machine logs sha1, sha256 and sm3_256. */
	assert_string_equal(jstr(a, "algorithms[0].algorithm"), "sha1");
	assert_string_equal(jstr(a, "algorithms[1].algorithm"), "sha256");
	assert_string_equal(jstr(a, "algorithms[2].algorithm"), "sm3_256");
	assert_int_equal((int) json_integer_value(jget(a, "algorithms[2].digest_size")), 32);
	json_decref(a);
	json_decref(b);
	mb_event_log_free(log);
}

/*
 * The typed tree itself, on a ThinkPad T480s log (sbctl corpus). The values are those
 * tpm2_eventlog prints for the same events: BootOrder's VariableData
 * "000001001700180019001a001c001d001e001b002300" (event 17), ImageLocationInMemory 0x69818018 and
 * ImageLengthInMemory 66592 (event 39); the GUID is EFI_GLOBAL_VARIABLE (UEFI spec §3.3).
 */
static void test_typed_tree(void **state)
{
	static const uint8_t global[16] = { 0x61, 0xdf, 0xe4, 0x8b, 0xca, 0x93, 0xd2, 0x11,
					    0xaa, 0x0d, 0x00, 0xe0, 0x98, 0x03, 0x2b, 0x8c };
	mb_event_log *log = load_log("sbctl/t480s_eventlog");
	mb_event_decoded *d = mb_event_decoded_new();
	const mb_decoded_node *root, *n, *item;

	(void) state;
	assert_non_null(d);
	assert_int_equal(mb_event_decode(log, mb_event_log_event(log, 17), d), 0);
	root = mb_event_decoded_root(d);
	assert_non_null(root);
	assert_int_equal(root->type, MB_DECODED_OBJECT);
	assert_null(root->key);
	assert_string_equal(mb_event_decoded_kind(d), "efi_variable");
	n = mb_decoded_get(root, "variable_guid");
	assert_non_null(n);
	assert_int_equal(n->type, MB_DECODED_GUID);
	assert_memory_equal(n->v.bytes.data, global, 16);
	assert_string_equal(mb_decoded_string(mb_decoded_get(root, "name")), "BootOrder");
	n = mb_decoded_get(root, "data_size");
	assert_int_equal(n->type, MB_DECODED_UINT);
	assert_int_equal(n->v.uint, 22);
	n = mb_decoded_get(root, "boot_order");
	assert_non_null(n);
	assert_int_equal(n->type, MB_DECODED_ARRAY);
	assert_int_equal(n->v.list.count, 11);
	item = n->v.list.first;
	assert_null(item->key);
	assert_string_equal(mb_decoded_string(item), "Boot0000");
	assert_string_equal(mb_decoded_string(item->next), "Boot0001");
	assert_string_equal(mb_decoded_string(item->next->next), "Boot0017");
	assert_string_equal(mb_decoded_string(n->v.list.last), "Boot0023");
	assert_null(n->v.list.last->next);

	/* The same holder for the next event: the old tree is gone, the new one typed. */
	assert_int_equal(mb_event_decode(log, mb_event_log_event(log, 39), d), 0);
	root = mb_event_decoded_root(d);
	assert_string_equal(mb_event_decoded_kind(d), "efi_image_load");
	n = mb_decoded_get(root, "image_location");
	assert_int_equal(n->type, MB_DECODED_ADDRESS);
	assert_true(n->v.uint == 0x69818018u);
	n = mb_decoded_get(root, "image_length");
	assert_int_equal(n->type, MB_DECODED_UINT);
	assert_int_equal(n->v.uint, 66592);
	assert_null(mb_decoded_get(root, "boot_order"));
	assert_null(mb_decoded_get(n, "anything")); /* not an object */

	/* No event: an error, and an empty holder. */
	assert_int_equal(mb_event_decode(log, NULL, d), -EINVAL);
	assert_null(mb_event_decoded_root(d));
	assert_string_equal(mb_event_decoded_kind(d), "");
	assert_null(mb_event_decoded_json(d));
	mb_event_decoded_free(d);
	mb_event_log_free(log);
}

/* ---- hostile buffers ---- */

static json_t *decode_buf(uint32_t pcr, uint32_t type, const void *data, size_t n)
{
	mb_event ev = { .pcr = pcr, .type = type, .data = data, .data_size = (uint32_t) n };

	return decode_json(NULL, &ev);
}

static void assert_raw_error(json_t *o, const char *needle)
{
	assert_non_null(o);
	assert_string_equal(jstr(o, "kind"), "raw");
	assert_non_null(jget(o, "error"));
	assert_non_null(jget(o, "hex"));
	assert_non_null(jget(o, "description"));
	if (needle && !strstr(jstr(o, "error"), needle))
		fail_msg("error \"%s\" does not mention \"%s\"", jstr(o, "error"), needle);
	json_decref(o);
}

static size_t put_u16(uint8_t *p, uint16_t v) { p[0] = (uint8_t) v; p[1] = (uint8_t) (v >> 8); return 2; }
static size_t put_u32(uint8_t *p, uint32_t v) { put_u16(p, (uint16_t) v); put_u16(p + 2, (uint16_t) (v >> 16)); return 4; }
static size_t put_u64(uint8_t *p, uint64_t v) { put_u32(p, (uint32_t) v); put_u32(p + 4, (uint32_t) (v >> 32)); return 8; }

static const uint8_t guid_global[16] = { 0x61, 0xdf, 0xe4, 0x8b, 0xca, 0x93, 0xd2, 0x11, 0xaa, 0x0d, 0x00, 0xe0, 0x98, 0x03, 0x2b, 0x8c };
static const uint8_t guid_secdb[16] = { 0xcb, 0xb2, 0x19, 0xd7, 0x3a, 0x3d, 0x96, 0x45, 0xa3, 0xbc, 0xda, 0xd0, 0x0e, 0x67, 0x65, 0x6f };
static const uint8_t guid_sha256[16] = { 0x26, 0x16, 0xc4, 0xc1, 0x4c, 0x50, 0x92, 0x40, 0xac, 0xa9, 0x41, 0xf9, 0x36, 0x93, 0x43, 0x28 };
static const uint8_t guid_x509[16] = { 0xa1, 0x59, 0xc0, 0xa5, 0xe4, 0x94, 0xa7, 0x4a, 0x87, 0xb5, 0xab, 0x15, 0x5c, 0x2b, 0xf0, 0x72 };

/* UEFI_VARIABLE_DATA with an ASCII name. */
static size_t variable(uint8_t *buf, const uint8_t guid[16], const char *name, const uint8_t *data, size_t n)
{
	size_t o = 0, i, nl = strlen(name);

	memcpy(buf, guid, 16);
	o += 16;
	o += put_u64(buf + o, nl);
	o += put_u64(buf + o, n);
	for (i = 0; i < nl; i++)
		o += put_u16(buf + o, (uint8_t) name[i]);
	memcpy(buf + o, data, n);
	return o + n;
}

static size_t sig_list(uint8_t *p, const uint8_t type[16], uint32_t list_size, uint32_t hdr, uint32_t sig_size)
{
	memcpy(p, type, 16);
	put_u32(p + 16, list_size);
	put_u32(p + 20, hdr);
	put_u32(p + 24, sig_size);
	return 28;
}

static void test_signature_lists_strict(void **state)
{
	uint8_t data[512], ev[1024];
	size_t n;
	json_t *o;

	/* A good sha256 list: two hashes. */
	memset(data, 0xab, sizeof(data));
	sig_list(data, guid_sha256, 28 + 2 * 48, 0, 48);
	n = variable(ev, guid_secdb, "dbx", data, 28 + 2 * 48);
	o = decode_buf(7, MB_EV_EFI_VARIABLE_DRIVER_CONFIG, ev, n);
	assert_string_equal(jstr(o, "kind"), "efi_variable");
	assert_int_equal((int) json_integer_value(jget(o, "signature_lists[0].count")), 2);
	assert_string_equal(jstr(o, "signature_lists[0].type"), "sha256");
	assert_string_equal(jstr(o, "signature_lists[0].signatures[1].sha256"),
			    "abababababababababababababababababababababababababababababababab");
	json_decref(o);

	/* SignatureHeaderSize > 0 on a sha256 list: its bytes would be read as hashes. */
	sig_list(data, guid_sha256, 28 + 16 + 48, 16, 48);
	n = variable(ev, guid_secdb, "dbx", data, 28 + 16 + 48);
	assert_raw_error(decode_buf(7, MB_EV_EFI_VARIABLE_DRIVER_CONFIG, ev, n), "SignatureHeaderSize");
	/* SignatureSize < 16. */
	sig_list(data, guid_x509, 28 + 8, 0, 8);
	n = variable(ev, guid_secdb, "db", data, 28 + 8);
	assert_raw_error(decode_buf(7, MB_EV_EFI_VARIABLE_DRIVER_CONFIG, ev, n), "SignatureSize 8 < 16");
	/* SignatureSize 0 (a division by zero waiting to happen). */
	sig_list(data, guid_x509, 28, 0, 0);
	n = variable(ev, guid_secdb, "db", data, 28);
	assert_raw_error(decode_buf(7, MB_EV_EFI_VARIABLE_DRIVER_CONFIG, ev, n), "SignatureSize 0");
	/* Not a multiple of SignatureSize. */
	sig_list(data, guid_sha256, 28 + 50, 0, 48);
	n = variable(ev, guid_secdb, "dbx", data, 28 + 50);
	assert_raw_error(decode_buf(7, MB_EV_EFI_VARIABLE_DRIVER_CONFIG, ev, n), "not a multiple");
	/* SignatureListSize overruns the variable. */
	sig_list(data, guid_sha256, 28 + 48 * 3, 0, 48);
	n = variable(ev, guid_secdb, "dbx", data, 28 + 48);
	assert_raw_error(decode_buf(7, MB_EV_EFI_VARIABLE_DRIVER_CONFIG, ev, n), "overruns");
	/* SignatureListSize smaller than its own header, and huge. */
	sig_list(data, guid_sha256, 4, 0, 48);
	n = variable(ev, guid_secdb, "dbx", data, 28);
	assert_raw_error(decode_buf(7, MB_EV_EFI_VARIABLE_DRIVER_CONFIG, ev, n), "SignatureListSize 4");
	sig_list(data, guid_sha256, 0xffffffffu, 0, 48);
	n = variable(ev, guid_secdb, "dbx", data, 28 + 48);
	assert_raw_error(decode_buf(7, MB_EV_EFI_VARIABLE_DRIVER_CONFIG, ev, n), "overruns");
	/* A good list then a truncated header: nothing harvested from the good one either. */
	sig_list(data, guid_sha256, 28 + 48, 0, 48);
	n = variable(ev, guid_secdb, "dbx", data, 28 + 48 + 10);
	o = decode_buf(7, MB_EV_EFI_VARIABLE_DRIVER_CONFIG, ev, n);
	assert_null(jget(o, "signature_lists"));
	assert_raw_error(o, "truncated header");
}

static void test_variable_hostile(void **state)
{
	uint8_t ev[256];
	size_t n;

	/* Shorter than the 32-byte header. */
	memcpy(ev, guid_global, 16);
	assert_raw_error(decode_buf(7, MB_EV_EFI_VARIABLE_DRIVER_CONFIG, ev, 20), "shorter than its 32-byte header");
	/* UnicodeNameLength huge (2^64-1 and 2^63: n * 2 must not wrap). */
	n = variable(ev, guid_global, "SecureBoot", (const uint8_t *) "\x01", 1);
	put_u64(ev + 16, UINT64_MAX);
	assert_raw_error(decode_buf(7, MB_EV_EFI_VARIABLE_DRIVER_CONFIG, ev, n), "UnicodeNameLength");
	put_u64(ev + 16, 1ull << 63);
	assert_raw_error(decode_buf(7, MB_EV_EFI_VARIABLE_DRIVER_CONFIG, ev, n), "UnicodeNameLength");
	/* VariableDataLength past the end. */
	n = variable(ev, guid_global, "SecureBoot", (const uint8_t *) "\x01", 1);
	put_u64(ev + 24, 2);
	assert_raw_error(decode_buf(7, MB_EV_EFI_VARIABLE_DRIVER_CONFIG, ev, n), "VariableDataLength");
	/* SecureBoot with 2 bytes of data. */
	n = variable(ev, guid_global, "SecureBoot", (const uint8_t *) "\x01\x00", 2);
	assert_raw_error(decode_buf(7, MB_EV_EFI_VARIABLE_DRIVER_CONFIG, ev, n), "SecureBoot");
	/* BootOrder of odd length. */
	n = variable(ev, guid_global, "BootOrder", (const uint8_t *) "\x01\x00\x02", 3);
	assert_raw_error(decode_buf(1, MB_EV_EFI_VARIABLE_BOOT, ev, n), "odd");
	/* Boot0001 whose description has no terminator, and whose FilePathListLength overruns. */
	n = variable(ev, guid_global, "Boot0001", (const uint8_t *) "\x01\x00\x00\x00\x04\x00" "A\0B\0", 10);
	assert_raw_error(decode_buf(1, MB_EV_EFI_VARIABLE_BOOT, ev, n), "NUL");
	n = variable(ev, guid_global, "Boot0001", (const uint8_t *) "\x01\x00\x00\x00\x40\x00" "A\0\0\0\x7f\xff\x04\x00", 14);
	assert_raw_error(decode_buf(1, MB_EV_EFI_VARIABLE_BOOT, ev, n), "FilePathListLength");
}

/* UEFI_IMAGE_LOAD_EVENT around a hand-made device path. */
static json_t *image_load(const uint8_t *dp, size_t n)
{
	uint8_t ev[4096];
	size_t o = 0;

	o += put_u64(ev + o, 0x1000);
	o += put_u64(ev + o, 0x2000);
	o += put_u64(ev + o, 0);
	o += put_u64(ev + o, n);
	memcpy(ev + o, dp, n);
	return decode_buf(4, MB_EV_EFI_BOOT_SERVICES_APPLICATION, ev, o + n);
}

static void test_devpath_hostile(void **state)
{
	static const uint8_t len0[] = { 0x04, 0x04, 0x00, 0x00, 0x7f, 0xff, 0x04, 0x00 };
	static const uint8_t len1[] = { 0x04, 0x04, 0x01, 0x00, 0x7f, 0xff, 0x04, 0x00 };
	static const uint8_t len3[] = { 0x01, 0x01, 0x03, 0x00, 0x7f, 0xff, 0x04, 0x00 };
	static const uint8_t overrun[] = { 0x01, 0x01, 0x40, 0x00, 0x00, 0x1f, 0x7f, 0xff, 0x04, 0x00 };
	static const uint8_t half_header[] = { 0x01, 0x01, 0x06 };
	static const uint8_t short_pci[] = { 0x01, 0x01, 0x05, 0x00, 0x00, 0x7f, 0xff, 0x04, 0x00 };
	static const uint8_t short_hd[] = { 0x04, 0x01, 0x08, 0x00, 1, 0, 0, 0 };
	uint8_t many[4 * 100], ev[64];
	size_t i;

	assert_raw_error(image_load(len0, sizeof(len0)), "length 0 < 4");
	assert_raw_error(image_load(len1, sizeof(len1)), "length 1 < 4");
	assert_raw_error(image_load(len3, sizeof(len3)), "length 3 < 4");
	assert_raw_error(image_load(overrun, sizeof(overrun)), "overruns");
	assert_raw_error(image_load(half_header, sizeof(half_header)), "truncated node header");
	assert_raw_error(image_load(short_pci, sizeof(short_pci)), "too short");
	assert_raw_error(image_load(short_hd, sizeof(short_hd)), "too short");
	/* More nodes than the cap: 100 end-of-instance nodes. */
	for (i = 0; i < 100; i++)
		memcpy(many + 4 * i, "\x7f\x01\x04\x00", 4);
	assert_raw_error(image_load(many, sizeof(many)), "more than 64 nodes");
	/* LengthOfDevicePath beyond the event, and 2^64-1. */
	memset(ev, 0, sizeof(ev));
	put_u64(ev + 24, 33);
	assert_raw_error(decode_buf(4, MB_EV_EFI_BOOT_SERVICES_APPLICATION, ev, 64), "LengthOfDevicePath");
	put_u64(ev + 24, UINT64_MAX);
	assert_raw_error(decode_buf(4, MB_EV_EFI_BOOT_SERVICES_APPLICATION, ev, 64), "LengthOfDevicePath");
	assert_raw_error(decode_buf(4, MB_EV_EFI_BOOT_SERVICES_DRIVER, ev, 31), "shorter than its 32-byte header");
}

static void test_devpath_nodes(void **state)
{
	/* Node layouts from the UEFI spec §10.3; text forms from §10.6. */
	static const uint8_t path[] = {
		0x02, 0x01, 0x0c, 0x00, 0xd0, 0x41, 0x03, 0x0a, 0x00, 0x00, 0x00, 0x00, /* PciRoot(0x0) */
		0x01, 0x01, 0x06, 0x00, 0x02, 0x1d,                                     /* Pci(0x1d,0x2) */
		0x03, 0x05, 0x06, 0x00, 0x03, 0x00,                                     /* USB(0x3,0x0) */
		0x03, 0x17, 0x10, 0x00, 0x01, 0x00, 0x00, 0x00, 1, 2, 3, 4, 5, 6, 7, 8, /* NVMe */
		0x04, 0x08, 0x18, 0x00, 0, 0, 0, 0, 0x00, 0x10, 0, 0, 0, 0, 0, 0, 0xff, 0x1f, 0, 0, 0, 0, 0, 0,
		0x7f, 0x01, 0x04, 0x00,                                                 /* next instance */
		0x03, 0x18, 0x0b, 0x00, 'h', 't', 't', 'p', ':', '/', '/',              /* Uri */
		0x01, 0x03, 0x18, 0x00, 0x0b, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0, 0, 0xff, 0xff, 0, 0x80, 0, 0, 0, 0, /* MemoryMapped */
		0x03, 0x1d, 0x05, 0x00, 0x01,                                           /* eMMC(0x1) */
		0x09, 0x09, 0x06, 0x00, 0xaa, 0xbb,                                     /* unknown */
		0x7f, 0xff, 0x04, 0x00,
	};
	json_t *o = image_load(path, sizeof(path));

	assert_string_equal(jstr(o, "kind"), "efi_image_load");
	assert_string_equal(jstr(o, "device_path"),
			    "PciRoot(0x0)/Pci(0x1d,0x2)/USB(0x3,0x0)/NVMe(0x1,08-07-06-05-04-03-02-01)/Offset(0x1000,0x1fff),"
			    "Uri(http://)/MemoryMapped(0xb,0x80000000,0x8000ffff)/eMMC(0x1)/Path(9,9,aabb)");
	assert_string_equal(jstr(o, "image_location"), "0x1000");
	assert_int_equal((int) json_integer_value(jget(o, "image_length")), 0x2000);
	json_decref(o);
}

static void test_gpt_hostile(void **state)
{
	uint8_t ev[92 + 8 + 128];
	size_t i;

	memset(ev, 0, sizeof(ev));
	memcpy(ev, "EFI PART", 8);
	put_u32(ev + 84, 128);
	put_u64(ev + 92, 1);
	/* A good one-entry table first. */
	{
		json_t *o = decode_buf(5, MB_EV_EFI_GPT_EVENT, ev, sizeof(ev));

		assert_string_equal(jstr(o, "kind"), "efi_gpt");
		assert_int_equal((int) json_integer_value(jget(o, "number_of_partitions")), 1);
		json_decref(o);
	}
	put_u64(ev + 92, UINT64_MAX);
	assert_raw_error(decode_buf(5, MB_EV_EFI_GPT_EVENT, ev, sizeof(ev)), "overrun");
	put_u64(ev + 92, 2);
	assert_raw_error(decode_buf(5, MB_EV_EFI_GPT_EVENT, ev, sizeof(ev)), "overrun");
	put_u64(ev + 92, 1);
	put_u32(ev + 84, 0);
	assert_raw_error(decode_buf(5, MB_EV_EFI_GPT_EVENT, ev, sizeof(ev)), "SizeOfPartitionEntry 0");
	put_u32(ev + 84, 128);
	memcpy(ev, "EFI PARX", 8);
	assert_raw_error(decode_buf(5, MB_EV_EFI_GPT_EVENT, ev, sizeof(ev)), "signature");
	memcpy(ev, "EFI PART", 8);
	for (i = 0; i < 100; i++)
		assert_raw_error(decode_buf(5, MB_EV_EFI_GPT_EVENT, ev, i), NULL);
}

static void test_small_structures_hostile(void **state)
{
	uint8_t b[64];

	memset(b, 0, sizeof(b));
	/* Event tag whose size overruns (and is huge). */
	put_u32(b, 0x8F3B22EC);
	put_u32(b + 4, 0xffffffffu);
	assert_raw_error(decode_buf(9, MB_EV_EVENT_TAG, b, 16), "taggedEventDataSize");
	assert_raw_error(decode_buf(9, MB_EV_EVENT_TAG, b, 7), "header");
	/* Handoff tables: absurd count. */
	put_u64(b, UINT64_MAX);
	assert_raw_error(decode_buf(1, MB_EV_EFI_HANDOFF_TABLES, b, 32), "NumberOfTables");
	/* BLOB2 whose description runs past the end. */
	b[0] = 200;
	assert_raw_error(decode_buf(0, MB_EV_EFI_PLATFORM_FIRMWARE_BLOB2, b, 20), "BlobDescriptionSize");
	assert_raw_error(decode_buf(0, MB_EV_EFI_PLATFORM_FIRMWARE_BLOB, b, 15), "truncated");
	assert_raw_error(decode_buf(0, MB_EV_EFI_PLATFORM_FIRMWARE_BLOB, b, 17), "after BlobLength");
	/* Separators that are not 4 bytes. */
	assert_raw_error(decode_buf(0, MB_EV_SEPARATOR, b, 3), "separator of 3 bytes");
	/* SP800-155: cut in its strings. */
	memset(b, 0, sizeof(b));
	memcpy(b, "SP800-155 Event3", 16);
	b[36] = 200;
	assert_raw_error(decode_buf(0, MB_EV_NO_ACTION, b, 64), "SP800-155");
	/* StartupLocality of the wrong size. */
	memcpy(b, "StartupLocality\0\x03\x03", 18);
	assert_raw_error(decode_buf(0, MB_EV_NO_ACTION, b, 18), "StartupLocality");
	/* Spec ID with numberOfAlgorithms out of range. */
	memset(b, 0, sizeof(b));
	memcpy(b, "Spec ID Event03", 16);
	put_u32(b + 24, 0xffffffffu);
	assert_raw_error(decode_buf(0, MB_EV_NO_ACTION, b, 64), "numberOfAlgorithms");
	/* EV_EFI_ACTION that is not text. */
	assert_raw_error(decode_buf(4, MB_EV_EFI_ACTION, "\x01\x02\x03", 3), "not a string");
}

static void test_known_values(void **state)
{
	json_t *o;

	o = decode_buf(0, MB_EV_SEPARATOR, "\0\0\0\0", 4);
	assert_string_equal(jstr(o, "result"), "success");
	json_decref(o);
	o = decode_buf(0, MB_EV_SEPARATOR, "\xff\xff\xff\xff", 4);
	assert_string_equal(jstr(o, "result"), "error");
	json_decref(o);
	o = decode_buf(0, MB_EV_SEPARATOR, "\x01\0\0\0", 4);
	assert_string_equal(jstr(o, "result"), "error");
	json_decref(o);
	o = decode_buf(0, MB_EV_NO_ACTION, "StartupLocality\0\x03", 17);
	assert_string_equal(jstr(o, "kind"), "startup_locality");
	assert_int_equal((int) json_integer_value(jget(o, "locality")), 3);
	json_decref(o);
	o = decode_buf(8, MB_EV_IPL, "kernel_cmdline: root=/dev/sda1 ro\0", 35);
	assert_string_equal(jstr(o, "kind"), "grub_kernel_cmdline");
	assert_string_equal(jstr(o, "text"), "root=/dev/sda1 ro");
	json_decref(o);
	o = decode_buf(14, MB_EV_IPL, "MokListX\0", 9);
	assert_string_equal(jstr(o, "kind"), "shim_mok_variable");
	assert_string_equal(jstr(o, "name"), "MokListX");
	json_decref(o);
	/* Linux's initrd tag (drivers/firmware/efi/libstub). */
	o = decode_buf(9, MB_EV_EVENT_TAG, "\xec\x22\x3b\x8f\x0d\x00\x00\x00Linux initrd\0", 21);
	assert_string_equal(jstr(o, "kind"), "event_tag");
	assert_string_equal(jstr(o, "tag_name"), "Linux initrd");
	assert_string_equal(jstr(o, "text"), "Linux initrd");
	json_decref(o);
	/* Bytes that are not UTF-8 never reach the JSON as such. */
	o = decode_buf(8, MB_EV_IPL, "grub_cmd: echo \xff\xc3\0", 18);
	assert_string_equal(jstr(o, "kind"), "grub_command");
	assert_string_equal(jstr(o, "text"), "echo ??");
	json_decref(o);
	/* A signature that fills less than its 16-byte field. */
	o = decode_buf(0, MB_EV_NO_ACTION, "NvIndexDynamic", 15);
	assert_string_equal(jstr(o, "kind"), "no_action");
	json_decref(o);
	o = decode_buf(0, MB_EV_NO_ACTION, "NvIndexDynamic\0\0\x01", 17);
	assert_string_equal(jstr(o, "kind"), "nv_index_dynamic");
	assert_string_equal(jstr(o, "hex"), "01");
	json_decref(o);
	/* TPM 1.2 EFI "Spec ID Event00": no algorithm table. */
	o = decode_buf(0, MB_EV_NO_ACTION, "Spec ID Event00\0\0\0\0\0\x02\x01\x00\x02\x00", 25);
	assert_string_equal(jstr(o, "kind"), "spec_id");
	assert_string_equal(jstr(o, "signature"), "Spec ID Event00");
	assert_int_equal((int) json_integer_value(jget(o, "spec_version_major")), 1);
	assert_int_equal((int) json_integer_value(jget(o, "spec_version_minor")), 2);
	assert_int_equal((int) json_integer_value(jget(o, "uintn_size")), 2);
	assert_null(jget(o, "algorithms"));
	json_decref(o);
	/* Unknown type: raw, no error. */
	o = decode_buf(0, 0x12345678, "ab", 2);
	assert_string_equal(jstr(o, "kind"), "raw");
	assert_null(jget(o, "error"));
	assert_string_equal(jstr(o, "hex"), "6162");
	json_decref(o);
	/* Raw data is shown in full up to 32 KiB; beyond, cut and said (hex_truncated). */
	{
		static uint8_t big[40000];
		size_t sizes[] = { 32768, 32769, 40000 };

		memset(big, 0xa5, sizeof(big));
		for (size_t k = 0; k < 3; k++) {
			o = decode_buf(0, 0x12345678, big, sizes[k]);
			assert_int_equal(strlen(jstr(o, "hex")), 2 * 32768);
			assert_true(strspn(jstr(o, "hex"), "a5") == 2 * 32768);
			if (sizes[k] > 32768)
				assert_true(json_is_true(jget(o, "hex_truncated")));
			else
				assert_null(jget(o, "hex_truncated"));
			json_decref(o);
		}
	}
	/* Lone surrogates in a UTF-16 name become U+FFFD, not a crash. */
	{
		uint8_t ev[64];
		size_t n = variable(ev, guid_global, "ab", (const uint8_t *) "", 0);

		ev[32] = 0x00;
		ev[33] = 0xd8;
		o = decode_buf(7, MB_EV_EFI_VARIABLE_DRIVER_CONFIG, ev, n);
		assert_string_equal(jstr(o, "name"), "\xef\xbf\xbd" "b");
		json_decref(o);
	}
}

/* Every prefix of every event of a few real logs, decoded as its own type and as
 * every other decodable type: no crash, and always kind + description. */
static void test_truncations(void **state)
{
	static const char *const logs[] = {
		"tpm2-tools/event-arch-linux.bin",
		"go-attestation/sb_cert_eventlog",
		"go-tpm-tools/eventlogwithsp800155.bin",
	};
	static const uint32_t types[] = {
		MB_EV_EFI_VARIABLE_DRIVER_CONFIG, MB_EV_EFI_VARIABLE_BOOT, MB_EV_EFI_VARIABLE_AUTHORITY,
		MB_EV_EFI_BOOT_SERVICES_APPLICATION, MB_EV_EFI_GPT_EVENT, MB_EV_EFI_HANDOFF_TABLES2,
		MB_EV_EFI_PLATFORM_FIRMWARE_BLOB2, MB_EV_EVENT_TAG, MB_EV_NO_ACTION, MB_EV_IPL, MB_EV_POST_CODE,
	};
	size_t l, i, t;
	unsigned decodes = 0;

	for (l = 0; l < sizeof(logs) / sizeof(logs[0]); l++) {
		mb_event_log *log = load_log(logs[l]);

		assert_non_null(log);
		for (i = 0; i < mb_event_log_count(log); i++) {
			const mb_event *ev = mb_event_log_event(log, i);
			uint32_t step = ev->data_size / 128 + 1, cut;

			for (cut = 0; cut <= ev->data_size; cut += step) {
				for (t = 0; t <= sizeof(types) / sizeof(types[0]); t++) {
					mb_event e = *ev;
					json_t *o;

					e.data_size = cut;
					if (t < sizeof(types) / sizeof(types[0]))
						e.type = types[t];
					o = decode_json(log, &e);
					assert_non_null(jstr(o, "kind"));
					assert_non_null(jstr(o, "description"));
					json_decref(o);
					decodes++;
				}
			}
		}
		mb_event_log_free(log);
	}
	print_message("%u truncated decodes\n", decodes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agrees_with_tpm2_eventlog),
		cmocka_unit_test(test_typed_tree),
		cmocka_unit_test(test_sweep_corpus),
		cmocka_unit_test(test_sb_cert_authorities),
		cmocka_unit_test(test_sp800_155),
		cmocka_unit_test(test_spec_id_both_ways),
		cmocka_unit_test(test_signature_lists_strict),
		cmocka_unit_test(test_variable_hostile),
		cmocka_unit_test(test_devpath_hostile),
		cmocka_unit_test(test_devpath_nodes),
		cmocka_unit_test(test_gpt_hostile),
		cmocka_unit_test(test_small_structures_hostile),
		cmocka_unit_test(test_known_values),
		cmocka_unit_test(test_truncations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
