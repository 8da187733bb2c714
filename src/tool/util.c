/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "shared/json.h"

#include "shared/fileio.h"
#include "tool/tool.h"

void tool_report(const char *what, const mb_error *err)
{
	if (err->has_offset)
		fprintf(stderr, "mboot: %s: at byte %llu (0x%llx): %s\n", what,
			(unsigned long long) err->offset, (unsigned long long) err->offset, err->message);
	else
		fprintf(stderr, "mboot: %s: %s\n", what, err->message[0] ? err->message : mb_strerror(err->code));
	tool_dl_hint(err->message);
}

void tool_errorf(const char *fmt, ...)
{
	va_list ap;

	fputs("mboot: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void tool_notef(const char *fmt, ...)
{
	va_list ap;

	fputs("mboot: note: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int tool_usage_error(const char *verb, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "mboot %s: ", verb);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see 'mboot %s --help')\n", verb);
	return EXIT_USAGE;
}

int tool_dispatch(const char *verb, const char *help, const tool_command *cmds, int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		fputs(help, stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fputs(help, stdout);
		return EXIT_OK;
	}
	for (i = 0; cmds[i].name; i++)
		if (strcmp(argv[1], cmds[i].name) == 0)
			return cmds[i].run(argc - 1, argv + 1);
	return tool_usage_error(verb, "unknown command '%s'", argv[1]);
}

int tool_bank_arg(const char *verb, const char *name, const mb_digest_info **ret)
{
	*ret = mb_digest_by_name(name);
	if (!*ret)
		return tool_usage_error(verb, "unknown bank '%s'", name);
	return EXIT_OK;
}

int tool_bank_list_add(const char *verb, const char *name, uint16_t algs[MB_MAX_BANKS], size_t *n)
{
	const mb_digest_info *d;
	size_t i;

	if (tool_bank_arg(verb, name, &d) != EXIT_OK)
		return EXIT_USAGE;
	for (i = 0; i < *n; i++)
		if (algs[i] == d->alg)
			return EXIT_OK;
	if (*n >= MB_MAX_BANKS)
		return tool_usage_error(verb, "too many --bank options");
	algs[(*n)++] = d->alg;
	return EXIT_OK;
}

int tool_efi_binary(const char *verb, char *arg, bool with_old, mb_efi_binary *e, tool_efi_digests *store)
{
	static const uint16_t algs[] = { MB_ALG_SHA1, MB_ALG_SHA256, MB_ALG_SHA384, MB_ALG_SHA512 };
	char *path = arg, *eq = strchr(arg, '=');
	mb_error err = { 0 };

	if (with_old) {
		if (!eq || eq == arg || !eq[1])
			return tool_usage_error(verb, "--efi takes OLD=NEW, two EFI binaries");
		*eq = '\0';
		path = eq + 1;
		if (mb_pe_authenticode_file(arg, 0, algs, 4, store->old_digest, &err) < 0) {
			tool_report(arg, &err);
			return EXIT_USAGE;
		}
	}
	if (mb_pe_authenticode_file(path, 0, algs, 4, store->digest, &err) < 0) {
		tool_report(path, &err);
		return EXIT_USAGE;
	}
	memcpy(store->algs, algs, sizeof(algs));
	e->algs = store->algs;
	e->digest = (const uint8_t (*)[MB_DIGEST_MAX]) store->digest;
	e->old_digest = with_old ? (const uint8_t (*)[MB_DIGEST_MAX]) store->old_digest : NULL;
	e->n = 4;
	e->file = path;
	e->old_file = with_old ? arg : NULL;
	e->description = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	return EXIT_OK;
}

int tool_check_output(const char *verb, const char *path, bool force)
{
	struct stat st;

	if (force || strcmp(path, "-") == 0 || lstat(path, &st) < 0)
		return EXIT_OK;
	tool_errorf("%s: %s already exists; not replaced (give --force to replace it)", verb, path);
	return EXIT_USAGE;
}

int tool_write_output(const char *verb, const char *path, const void *data, size_t size, unsigned mode, bool force)
{
	mb_error err = { 0 };
	int r = file_write(path, data, size, mode, force, &err);

	if (r == -EEXIST) { /* created by someone else since tool_check_output */
		tool_errorf("%s: %s already exists; not replaced (give --force to replace it)", verb, path);
		return EXIT_USAGE;
	}
	if (r < 0) {
		tool_report(path, &err);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

int tool_load_log(const char *path, mb_event_log **ret)
{
	mb_error err = { 0 };
	uint8_t *buf = NULL;
	size_t size = 0;
	int rc;

	rc = file_read(path, MB_LOG_MAX_SIZE, &buf, &size, &err);
	if (rc < 0) {
		tool_report(path, &err);
		/* the kernel's log missing: a machine without a TPM (or securityfs), not a bad path */
		if ((rc == -ENOENT || rc == -EACCES) && strcmp(path, MB_DEFAULT_LOG) == 0)
			fputs(rc == -ENOENT ? "mboot: hint: this machine exposes no firmware event log (no TPM, or securityfs "
					      "is not mounted: mount -t securityfs securityfs /sys/kernel/security);\n"
					      "  read a recorded boot instead: mboot log show LOG, mboot verify --log LOG --pcrs FILE\n"
					    : "mboot: hint: the firmware event log is readable by root only: run as root, or read a "
					      "copy with --log LOG\n", stderr);
		return EXIT_USAGE;
	}
	rc = mb_event_log_parse_take(buf, size, ret, &err);
	if (rc < 0) {
		tool_report(path, &err);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/*
 * SELECTION@FILE: the text before the first '@' starts with a bank name and a colon. A file
 * whose own name looks like that is read as ./NAME. Returns the '@', or NULL for a plain path.
 */
static const char *selection_at(const char *arg)
{
	const char *at = strchr(arg, '@'), *colon = strchr(arg, ':');
	char bank[16];
	size_t n;

	if (!at || !colon || colon > at)
		return NULL;
	n = (size_t) (colon - arg);
	if (n == 0 || n >= sizeof(bank))
		return NULL;
	memcpy(bank, arg, n);
	bank[n] = 0;
	return mb_digest_by_name(bank) ? at : NULL;
}

int tool_parse_pcr_selection(const char *s, uint16_t *algs, uint32_t *pcrs, size_t max, size_t *ret_n)
{
	size_t n = 0;

	for (;;) {
		const char *end = strchr(s, '+'), *colon;
		size_t len = end ? (size_t) (end - s) : strlen(s);
		char part[128], *list;
		const mb_digest_info *d;

		if (len == 0 || len >= sizeof(part) || n >= max)
			return -EINVAL;
		memcpy(part, s, len);
		part[len] = 0;
		colon = strchr(part, ':');
		if (!colon)
			return -EINVAL;
		list = part + (colon - part);
		*list++ = 0;
		d = mb_digest_by_name(part);
		if (!d || tool_parse_pcr_list(list, &pcrs[n]) < 0)
			return -EINVAL;
		algs[n++] = d->alg;
		if (!end)
			break;
		s = end + 1;
	}
	*ret_n = n;
	return 0;
}

int tool_load_pcrs(const char *path, mb_pcr_values *v)
{
	const char *at = selection_at(path), *file = at ? at + 1 : path;
	uint16_t algs[MB_MAX_BANKS];
	uint32_t pcrs[MB_MAX_BANKS];
	size_t n_banks = 0;
	mb_error err = { 0 };
	uint8_t *buf = NULL;
	size_t size = 0;
	int r;

	if (at) {
		char sel[256];
		size_t len = (size_t) (at - path);

		if (len < sizeof(sel)) {
			memcpy(sel, path, len);
			sel[len] = 0;
		}
		if (len >= sizeof(sel) || tool_parse_pcr_selection(sel, algs, pcrs, MB_MAX_BANKS, &n_banks) < 0) {
			tool_errorf("%s: bad PCR selection before '@' (tpm2_pcrread's, e.g. sha256:0,1,7+sha1:0-7)",
				    path);
			return EXIT_USAGE;
		}
	}
	r = file_read(file, 1u << 20, &buf, &size, &err);
	if (r < 0) {
		tool_report(file, &err);
		return EXIT_USAGE;
	}
	if (at)
		r = mb_pcr_values_parse_digests(buf, size, algs, pcrs, n_banks, v, &err);
	else
		r = mb_pcr_values_parse((const char *) buf, size, v, &err);
	if (r < 0) {
		tool_report(file, &err);
		if (!at && memchr(buf, 0, size))
			tool_errorf("%s: binary? the digests of tpm2_pcrread -o are read as SELECTION@FILE, "
				    "with the selection given to tpm2_pcrread, e.g. sha256:0,1,7@%s", file, file);
	}
	free(buf);
	return r < 0 ? EXIT_USAGE : EXIT_OK;
}

int tool_print_pcr_values(const mb_pcr_values *v)
{
	char *s = mb_pcr_values_to_text(v);

	if (!s) {
		tool_errorf("out of memory");
		return EXIT_USAGE;
	}
	fputs(s, stdout);
	free(s);
	return EXIT_OK;
}

mb_pcr_values *tool_pcr_values_new(void)
{
	mb_pcr_values *v = mb_pcr_values_new();

	if (!v)
		tool_errorf("out of memory");
	return v;
}

bool tool_pcr_values_has_bank(const mb_pcr_values *v, uint16_t alg)
{
	size_t b;

	for (b = 0; b < mb_pcr_values_n_banks(v); b++)
		if (mb_pcr_values_bank_alg(v, b) == alg)
			return true;
	return false;
}

int tool_load_pcr_bank(const char *path, uint16_t alg, uint32_t mask, const char *pcrs_what, mb_pcr_bank *ret)
{
	mb_pcr_values *v = tool_pcr_values_new();
	int rc = v ? tool_load_pcrs(path, v) : EXIT_USAGE;

	if (rc == EXIT_OK && mb_pcr_values_get_bank(v, alg, ret) < 0) {
		tool_errorf("%s: has no %s bank (the %s need it)", path, mb_digest_by_alg(alg)->name, pcrs_what);
		rc = EXIT_USAGE;
	} else if (rc == EXIT_OK && (ret->present & mask) != mask) {
		uint32_t missing = mask & ~ret->present;
		char list[MB_PCR_COUNT * 4] = "";
		size_t n = 0;

		/* Name them: the user has to find each one in the file. */
		for (uint32_t p = 0; p < MB_PCR_COUNT; p++)
			if (missing & (1u << p))
				n += (size_t) snprintf(list + n, sizeof(list) - n, "%s%u", n ? "," : "", p);
		tool_errorf("%s: has no %s value for PCR %s (of the %s)", path, mb_digest_by_alg(alg)->name, list,
			    pcrs_what);
		rc = EXIT_USAGE;
	}
	mb_pcr_values_free(v);
	return rc;
}

int tool_parse_pcr_list(const char *s, uint32_t *ret)
{
	uint32_t mask = 0;
	const char *p = s;

	if (strcmp(s, "all") == 0) {
		*ret = (1u << MB_PCR_COUNT) - 1;
		return 0;
	}
	while (*p) {
		unsigned long lo, hi;
		char *end;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		errno = 0;
		lo = strtoul(p, &end, 10);
		if (errno)
			return -EINVAL;
		hi = lo;
		if (*end == '-') {
			p = end + 1;
			if (*p < '0' || *p > '9')
				return -EINVAL;
			errno = 0;
			hi = strtoul(p, &end, 10);
			if (errno)
				return -EINVAL;
		}
		if (lo > hi || hi >= MB_PCR_COUNT)
			return -EINVAL;
		for (; lo <= hi; lo++)
			mask |= 1u << lo;
		p = end;
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			return -EINVAL; /* a trailing comma too: "1," is a list cut short */
	}
	if (!mask)
		return -EINVAL;
	*ret = mask;
	return 0;
}

int tool_parse_uint(const char *s, unsigned min, unsigned max, unsigned *ret)
{
	unsigned long v;
	char *end;

	/* digits only: strtoul would take leading blanks, a sign and wrap "-1" around */
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*ret = (unsigned) v;
	return 0;
}


int tool_tpm_open(const char *tcti, mb_tpm **ret)
{
	mb_error err = { 0 };

	/* tpm2-tss logs warnings to stderr by default; mboot reports errors itself, once. */
	setenv("TSS2_LOG", "all+none", 0);
	if (mb_tpm_open(tcti, ret, &err) < 0) {
		tool_report("TPM", &err);
		if (err.code == MB_ERR_TPM)
			fputs("mboot: hint: point mboot at a TPM with --tcti (e.g. swtpm:path=SOCKET, device:/dev/tpm0)\n"
			      "  or $TPM2TOOLS_TCTI; without a TPM, verify reads a recorded boot with --log LOG --pcrs FILE\n",
			      stderr);
		/* -EOPNOTSUPP: tpm2-tss cannot be loaded; no TPM can be used either way */
		return err.code == MB_ERR_TPM || err.code == -EOPNOTSUPP ? EXIT_TPM : EXIT_USAGE;
	}
	return EXIT_OK;
}

int tool_tpm_exit(const mb_error *err)
{
	tool_report("TPM", err);
	return err->code == -EINVAL ? EXIT_USAGE : EXIT_TPM;
}

json_layout tool_json_layout(tool_json style)
{
	return style == TOOL_JSON_COMPACT ? JSON_LAYOUT_COMPACT : JSON_LAYOUT_PRETTY;
}

int tool_json_print(tool_json style, const json_t *o)
{
	char *text;

	if (!o) {
		puts("null");
		return EXIT_OK;
	}
	/* The tool is one short run: any allocation that failed since it began may have cost o a member. */
	text = json_write_built(o, tool_json_layout(style), (json_build_mark){ 0 });
	return tool_json_text_print(text);
}

int tool_stdout_sink(void *ctx, const char *text, size_t len)
{
	(void) ctx;
	return fwrite(text, 1, len, stdout) == len ? 0 : -EIO;
}

int tool_json_text_print(char *text)
{
	if (!text) {
		tool_errorf("out of memory");
		return EXIT_USAGE;
	}
	puts(text);
	free(text);
	return EXIT_OK;
}
