/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/fail.h"
#include "shared/fileio.h"
#include "shared/hex.h"
#include "tool/options.h"
#include "tool/tool.h"
#include "tool/verbs.h"

static const char initramfs_help[] =
	"Usage: mboot initramfs COMMAND [OPTIONS]\n\n"
	"  pack DIR -o FILE [--force] [--compress none|gzip|zstd] [--mtime EPOCH] [--json] [--policy-rule]\n"
	"                    a deterministic cpio (newc) archive of DIR, and its digests\n"
	"  list FILE [--json]        the entries of an initramfs (plain, gzip or zstd, concatenated)\n"
	"  verify FILE DIR [--compress C] [--mtime EPOCH] [--json]\n"
	"                    whether FILE is exactly what 'pack' makes from DIR\n\n"
	"The format rules are in docs/initramfs.md.\n";

static const char pack_help[] =
	"Usage: mboot initramfs pack DIR -o FILE [--force] [--compress none|gzip|zstd] [--mtime EPOCH]\n"
	"                            [--json [--compact]] [--policy-rule]\n\n"
	"Write a cpio \"newc\" archive of the tree under DIR whose bytes depend only on the names,\n"
	"types, permission bits, contents, symlink targets, device numbers and hard links of the\n"
	"files: DIR itself as \".\" (its mode becomes that of / when unpacked), then every entry\n"
	"sorted bytewise by path, owner and group 0, one mtime, inode numbers from 0 in archive\n"
	"order, normalised link counts, padded to 512\n"
	"bytes. Symlinks are stored, never followed. Sockets are refused; so is a file that changes\n"
	"while it is read. Then print the SHA-1, SHA-256 and SHA-384 digests of FILE.\n\n"
	"  -o, --output FILE   where to write, atomically; an existing FILE is kept, exit 2,\n"
	"                      unless --force\n"
	"  --force             replace an existing FILE (a temp file beside it, renamed over it)\n"
	"  --compress C        none (default), gzip (zlib level 6, no name, mtime 0, OS 3) or\n"
	"                      zstd (level 3, checksum, content size, one thread)\n"
	"  --mtime EPOCH       mtime of every entry; default $SOURCE_DATE_EPOCH, else 0\n"
	"  --json              {\"file\", \"size\", \"compress\", \"entries\", \"mtime\", \"cpio_size\",\n"
	"                       \"cpio_sha256\", \"digests\": {\"sha256\": ...}}\n"
	"  --compact           the JSON on one line (implies --json)\n"
	"  --policy-rule       print a policy (docs/policy.md) whose PCR 9 rules allow this initrd:\n"
	"                      GRUB's EV_IPL (required) and the EFI stub's EV_EVENT_TAG; it loads\n"
	"                      as it is, its rules go into a fuller policy (\"policy\" inside --json)\n\n"
	"Exit: 0 written, 2 usage or input error (unreadable tree, socket, file changed).\n";

static const char list_help[] =
	"Usage: mboot initramfs list FILE [--json [--compact]]\n\n"
	"Print the entries of an initramfs: mode, links, owner, size, mtime, name (symlink target,\n"
	"device numbers). FILE may hold several concatenated archives, each plain cpio (newc) or\n"
	"gzip or zstd compressed, as the kernel accepts. The file is untrusted and read as a stream:\n"
	"sizes are checked and capped (name 4096 bytes, file 2 GiB, 1,000,000 entries, 2 GiB\n"
	"decompressed, 256 times the compressed size + 16 MiB, 1 MiB of NUL padding in a row;\n"
	"docs/initramfs.md); names that are absolute or contain '..' are refused. Nothing is written.\n\n"
	"  --json     {\"file\", \"size\", \"digests\", \"segments\": [...], \"entries\": [...]}\n"
	"  --compact  the JSON on one line (implies --json)\n\n"
	"Exit: 0 listed, 2 unreadable or malformed (the message names the byte offset).\n";

static const char verify_help[] =
	"Usage: mboot initramfs verify FILE DIR [--compress none|gzip|zstd] [--mtime EPOCH]\n"
	"                              [--json [--compact]]\n\n"
	"Pack DIR as 'mboot initramfs pack' would (same options; --compress defaults to the\n"
	"compression FILE uses) and compare with FILE byte for byte. When they differ, name the\n"
	"first entry that differs and how.\n\n"
	"  --json      {\"file\", \"dir\", \"result\", \"compress\", \"mtime\", \"digests\", \"first_difference\"}\n"
	"  --compact   the JSON on one line (implies --json)\n\n"
	"Exit: 0 identical, 1 different, 2 usage or input error (malformed FILE, unreadable DIR).\n";

typedef struct args {
	const char *output;
	tool_json json;
	bool policy, has_compress, has_mtime, force;
	mb_initramfs_opts opts;
	int n_paths;
	const char *paths[2];
} args;

static int parse_epoch(const char *s, uint32_t *ret)
{
	unsigned long long v = 0;
	const char *p;

	if (!*s)
		return -EINVAL;
	for (p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		v = v * 10 + (unsigned) (*p - '0');
		if (v > UINT32_MAX)
			return -ERANGE;
	}
	*ret = (uint32_t) v;
	return 0;
}

static int compress_option(void *target, const char *arg, const char *verb)
{
	args *a = target;

	if (mb_compress_from_name(arg, &a->opts.compress) < 0)
		return tool_usage_error(verb, "unknown compression '%s' (none, gzip, zstd)", arg);
	a->has_compress = true;
	return EXIT_OK;
}

static int mtime_option(void *target, const char *arg, const char *verb)
{
	args *a = target;

	if (parse_epoch(arg, &a->opts.mtime) < 0)
		return tool_usage_error(verb, "bad --mtime '%s' (seconds since 1970, 0..4294967295)", arg);
	a->has_mtime = true;
	return EXIT_OK;
}

/* allowed: o output (and --force), c compress, m mtime, j json, p policy-rule. Returns -1 after --help. */
static int parse_args(const char *verb, const char *help, int argc, char **argv, const char *allowed,
		      int want_paths, args *a)
{
	/* Every option, and the letter of allowed a verb needs for it. */
	const struct {
		char need;
		tool_option opt;
	} all[] = {
		{ 'o', TOOL_OPT_STR("output", 'o', &a->output) },
		{ 'o', TOOL_OPT_BOOL("force", 0, &a->force) },
		{ 'c', TOOL_OPT_FN("compress", 0, a, compress_option) },
		{ 'm', TOOL_OPT_FN("mtime", 0, a, mtime_option) },
		{ 'j', TOOL_OPT_JSON(&a->json) },
		{ 'j', TOOL_OPT_COMPACT(&a->json) },
		{ 'p', TOOL_OPT_BOOL("policy-rule", 0, &a->policy) },
	};
	tool_option opts[sizeof(all) / sizeof(all[0]) + 1];
	const char *sde;
	size_t i, n = 0;
	int rc;

	memset(a, 0, sizeof(*a));
	a->opts.size = sizeof(a->opts);
	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (strchr(allowed, all[i].need))
			opts[n++] = all[i].opt;
	opts[n] = (tool_option) TOOL_OPT_END;
	rc = tool_parse_options(verb, help, opts, argc, argv, want_paths);
	if (rc != TOOL_OPTS_GO_ON)
		return rc == EXIT_OK ? -1 : rc;
	for (; optind < argc; optind++) {
		if (a->n_paths >= want_paths)
			return tool_usage_error(verb, "unexpected argument '%s'", argv[optind]);
		a->paths[a->n_paths++] = argv[optind];
	}
	if (a->n_paths < want_paths)
		return tool_usage_error(verb, "missing %s", a->n_paths == 0 && want_paths == 2 ? "FILE and DIR"
							     : strcmp(verb, "initramfs pack") == 0 ? "DIR"
							     : a->n_paths == 0 ? "FILE" : "DIR");
	if (strchr(allowed, 'm') && !a->has_mtime) {
		sde = getenv("SOURCE_DATE_EPOCH");
		if (sde && *sde && parse_epoch(sde, &a->opts.mtime) < 0)
			return tool_usage_error(verb, "bad SOURCE_DATE_EPOCH '%s'", sde);
	}
	return 0;
}

/* Digests of the banks mboot prints for files: sha1, sha256, sha384. */
static const uint16_t file_algs[] = { MB_ALG_SHA1, MB_ALG_SHA256, MB_ALG_SHA384 };

static void print_digests(const mb_event_digest *d, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const mb_digest_info *info = mb_digest_by_alg(d[i].alg);
		char hex[2 * MB_DIGEST_MAX + 1];

		if (info && d[i].size == info->size)
			printf("%-7s %s\n", info->name, hex_format(d[i].bytes, d[i].size, hex));
	}
}

/* The packed file's digests, as d[3]. */
static void pack_digests(const mb_initramfs_stats *st, mb_event_digest d[3])
{
	d[0] = (mb_event_digest) { MB_ALG_SHA1, sizeof(st->sha1), st->sha1 };
	d[1] = (mb_event_digest) { MB_ALG_SHA256, sizeof(st->sha256), st->sha256 };
	d[2] = (mb_event_digest) { MB_ALG_SHA384, sizeof(st->sha384), st->sha384 };
}

/* The policy allowing this initrd in PCR 9 (mb_policy_generate_initrd), its text, or NULL (said). */
static char *initrd_policy(const mb_initramfs_stats *st, const char *file)
{
	mb_event_digest d[3];
	mb_error err = { 0 };
	char *text = NULL;

	pack_digests(st, d);
	if (mb_policy_generate_initrd(file, d, 3, &text, &err) < 0)
		tool_report("initramfs pack --policy-rule", &err);
	return text;
}

/* A failed mb_initramfs_pack(DIR): entries inside DIR are named relative to it, so DIR leads the
 * message, unless the message already starts with DIR (DIR itself could not be opened). */
static void report_pack(const char *dir, const mb_error *err)
{
	size_t n = strlen(dir);

	if (strncmp(err->message, dir, n) == 0 && err->message[n] == ':')
		fprintf(stderr, "mboot: %s\n", err->message);
	else
		tool_report(dir, err);
}

static int cmd_pack(int argc, char **argv)
{
	const char *verb = "initramfs pack";
	mb_initramfs_stats st = { 0 };
	mb_error err = { 0 };
	uint8_t *out = NULL;
	size_t size = 0;
	char hex[65], *policy = NULL;
	mb_event_digest d[3];
	struct stat dst;
	args a;
	int rc;

	rc = parse_args(verb, pack_help, argc, argv, "ocmjp", 1, &a);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	if (!a.output)
		return tool_usage_error(verb, "missing -o FILE");
	rc = tool_check_output(verb, a.output, a.force);
	if (rc)
		return rc;
	rc = mb_initramfs_pack(a.paths[0], &a.opts, &out, &size, &st, &err);
	if (rc < 0) {
		report_pack(a.paths[0], &err);
		return EXIT_USAGE;
	}
	/* DIR's own mode becomes the mode of / in the booted system; mktemp -d makes 0700. */
	if (stat(a.paths[0], &dst) == 0 && (dst.st_mode & 0005) != 0005)
		fprintf(stderr, "mboot: warning: %s has mode %04o: the root directory of the unpacked "
			"initramfs gets this mode (chmod 755 it?)\n", a.paths[0], (unsigned) (dst.st_mode & 07777));
	rc = tool_write_output(verb, a.output, out, size, 0644, a.force);
	free(out);
	if (rc)
		return rc;
	/* the library hashed the result while it was being made */
	pack_digests(&st, d);
	if (a.policy) {
		policy = initrd_policy(&st, a.output);
		if (!policy)
			return EXIT_USAGE;
	}
	if (a.json) {
		rc = tool_json_text_print(mb_initramfs_pack_to_json(a.output, size, &a.opts, &st, policy,
								    a.json == TOOL_JSON_PRETTY));
		free(policy);
		return rc;
	} else if (a.policy) {
		return tool_json_text_print(policy); /* the policy alone, pretty, as the library wrote it */
	} else {
		printf("%s: %zu bytes (%s), %zu entries, mtime %u, cpio %zu bytes sha256 %s\n", a.output, size,
		       mb_compress_name(a.opts.compress), st.entries, a.opts.mtime, st.cpio_size,
		       hex_format(st.cpio_sha256, sizeof(st.cpio_sha256), hex));
		print_digests(d, 3);
	}
	return EXIT_OK;
}

static void mode_string(uint32_t mode, char out[11])
{
	static const char types[] = "?pc?d?b?-?l?s???";
	int i;

	out[0] = types[(mode >> 12) & 15];
	for (i = 0; i < 9; i++)
		out[1 + i] = mode & (0400u >> i) ? "rwxrwxrwx"[i] : '-';
	if (mode & S_ISUID)
		out[3] = out[3] == 'x' ? 's' : 'S';
	if (mode & S_ISGID)
		out[6] = out[6] == 'x' ? 's' : 'S';
	if (mode & S_ISVTX)
		out[9] = out[9] == 'x' ? 't' : 'T';
	out[10] = 0;
}

static void print_entry(const mb_cpio_entry *e)
{
	char mode[11], *name = mb_initramfs_name_escape(e->name, e->name_len);

	mode_string(e->mode, mode);
	printf("%s %3u %u/%u %10u %10u %s", mode, e->nlink, e->uid, e->gid, e->size, e->mtime, name ? name : "?");
	if ((e->mode & S_IFMT) == S_IFLNK) {
		char *t = mb_initramfs_name_escape((const char *) e->data, e->size);

		printf(" -> %s", t ? t : "?");
		free(t);
	} else if ((e->mode & S_IFMT) == S_IFCHR || (e->mode & S_IFMT) == S_IFBLK)
		printf(" [%u:%u]", e->rdevmajor, e->rdevminor);
	putchar('\n');
	free(name);
}

/* What list and verify learn about FILE while it streams through the parser. */
typedef struct file_info {
	mb_digest_ctx *ctx[3]; /* file_algs */
	uint64_t size;
	uint8_t md[3][MB_DIGEST_MAX];
} file_info;

static int tap_file(const uint8_t *data, size_t size, void *userdata, mb_error *err)
{
	file_info *fi = userdata;
	size_t i;

	if (fi->size + size > MB_CPIO_TOTAL_MAX)
		return set_error(err, -E2BIG, "file over %zu bytes", MB_CPIO_TOTAL_MAX);
	fi->size += size;
	for (i = 0; i < 3; i++)
		if (mb_digest_ctx_update(fi->ctx[i], data, size) < 0)
			return set_error(err, -EIO, "cannot hash the file");
	return 0;
}

static int open_input(const char *path, mb_error *err)
{
	int fd = strcmp(path, "-") == 0 ? dup(STDIN_FILENO) : open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return set_error(err, -errno, "cannot open: %s", strerror(errno));
	return fd;
}

/*
 * Parse FILE as a stream (never all of it in memory, whatever it holds or expands to) and
 * hash it on the way.
 */
static int load(const char *path, file_info *fi, mb_initramfs **ret)
{
	mb_error err = { 0 };
	size_t i;
	int fd, rc;

	memset(fi, 0, sizeof(*fi));
	for (i = 0; i < 3; i++)
		if (mb_digest_ctx_new(file_algs[i], &fi->ctx[i]) < 0) {
			set_error(&err, -ENOMEM, "cannot hash the file");
			goto fail;
		}
	fd = open_input(path, &err);
	if (fd < 0)
		goto fail;
	rc = mb_initramfs_parse_fd(fd, tap_file, fi, ret, &err);
	close(fd);
	if (rc < 0)
		goto fail;
	for (i = 0; i < 3; i++)
		if (mb_digest_ctx_final(fi->ctx[i], fi->md[i]) < 0) {
			*ret = mb_initramfs_free(*ret);
			set_error(&err, -EIO, "cannot hash the file");
			goto fail;
		}
	for (i = 0; i < 3; i++)
		mb_digest_ctx_free(fi->ctx[i]);
	return EXIT_OK;
fail:
	for (i = 0; i < 3; i++)
		mb_digest_ctx_free(fi->ctx[i]);
	tool_report(path, &err);
	return EXIT_USAGE;
}

/* FILE's digests as the documents take them, pointing into fi. */
static void file_digests(const file_info *fi, mb_event_digest d[3])
{
	for (size_t i = 0; i < 3; i++)
		d[i] = (mb_event_digest) { file_algs[i], (uint16_t) mb_digest_by_alg(file_algs[i])->size, fi->md[i] };
}

static int cmd_list(int argc, char **argv)
{
	mb_initramfs *ar = NULL;
	mb_event_digest d[3];
	mb_error err = { 0 };
	file_info fi;
	size_t i;
	args a;
	int rc;

	rc = parse_args("initramfs list", list_help, argc, argv, "j", 1, &a);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	rc = load(a.paths[0], &fi, &ar);
	if (rc)
		return rc;
	file_digests(&fi, d);
	if (a.json) {
		/* Written entry by entry: a tree of JSON objects for every entry would take far more
		 * memory than the entries themselves. Stdout may then hold half a document: said. */
		if (mb_initramfs_write_json(ar, a.paths[0], fi.size, d, 3, a.json == TOOL_JSON_PRETTY, tool_stdout_sink,
					    NULL, &err) < 0) {
			tool_report("initramfs list", &err);
			rc = EXIT_USAGE;
		}
		if (fflush(stdout) != 0)
			rc = EXIT_USAGE;
	} else {
		for (i = 0; i < mb_initramfs_segment_count(ar); i++) {
			const mb_cpio_segment *s = mb_initramfs_segment_at(ar, i);

			printf("# archive %zu at byte %llu: %s, %llu bytes, cpio %zu bytes\n", i,
			       (unsigned long long) s->file_offset, mb_compress_name(s->compress),
			       (unsigned long long) s->file_size, s->cpio_size);
		}
		for (i = 0; i < mb_initramfs_entry_count(ar); i++)
			print_entry(mb_initramfs_entry_at(ar, i));
		printf("# %zu entries\n", mb_initramfs_entry_count(ar));
		print_digests(d, 3);
	}
	mb_initramfs_free(ar);
	return rc;
}

/*
 * Compare FILE, read again in chunks, with the packed bytes: 0 identical, 1 different
 * (*ret_first the first differing byte), negative when it cannot be read.
 */
static int compare_file(const char *path, const uint8_t *out, size_t osize, size_t *ret_first, mb_error *err)
{
	uint8_t buf[65536];
	size_t at = 0;
	int fd, rc = 0;

	fd = open_input(path, err);
	if (fd < 0)
		return fd;
	for (;;) {
		ssize_t n = fd_read_some(fd, buf, sizeof(buf));
		size_t k = 0;

		if (n < 0) {
			rc = set_error(err, (int) n, "read error: %s", strerror((int) -n));
			break;
		}
		if (n == 0) {
			rc = at != osize;
			break;
		}
		while (k < (size_t) n && at + k < osize && buf[k] == out[at + k])
			k++;
		if (k < (size_t) n) {
			at += k;
			rc = 1;
			break;
		}
		at += k;
	}
	close(fd);
	*ret_first = at;
	return rc;
}

static int cmd_verify(int argc, char **argv)
{
	const char *verb = "initramfs verify";
	mb_initramfs *ar = NULL, *mine = NULL;
	uint8_t *out = NULL;
	size_t osize = 0, idx = 0, first = 0;
	mb_error err = { 0 };
	char what[512] = "";
	file_info fi;
	args a;
	int rc, ret = EXIT_USAGE;

	rc = parse_args(verb, verify_help, argc, argv, "cmj", 2, &a);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	/* FILE is read twice (parsed, then compared): a pipe cannot be. */
	if (strcmp(a.paths[0], "-") == 0)
		return tool_usage_error(verb, "FILE must be a file, not '-' (it is read twice)");
	/* Malformed FILE is an input error before DIR is even read. */
	rc = load(a.paths[0], &fi, &ar);
	if (rc)
		return rc;
	if (!a.has_compress)
		a.opts.compress = mb_initramfs_segment_at(ar, 0)->compress;
	if (mb_initramfs_pack(a.paths[1], &a.opts, &out, &osize, NULL, &err) < 0) {
		report_pack(a.paths[1], &err);
		goto out;
	}
	rc = fi.size == osize ? compare_file(a.paths[0], out, osize, &first, &err) : 1;
	if (rc < 0) {
		tool_report(a.paths[0], &err);
		goto out;
	}
	if (rc == 0) {
		uint8_t md[MB_DIGEST_MAX];

		/* Read twice: the bytes compared must be the bytes parsed and hashed. */
		if (mb_digest(MB_ALG_SHA256, out, osize, md) < 0 || memcmp(md, fi.md[1], 32) != 0) {
			set_error(&err, -ESTALE, "the file changed while it was read");
			tool_report(a.paths[0], &err);
			goto out;
		}
		ret = EXIT_OK;
	} else {
		if (mb_initramfs_parse(out, osize, &mine, &err) < 0) {
			tool_report("packed archive", &err);
			goto out;
		}
		ret = EXIT_FAILED;
		if (mb_initramfs_compare(ar, mine, &idx, what, sizeof(what)) == 0) {
			if (fi.size != osize)
				first = 0, compare_file(a.paths[0], out, osize, &first, &err);
			snprintf(what, sizeof(what), "same entries, different bytes from byte %zu "
				 "(compression or padding)", first);
			idx = SIZE_MAX;
		}
	}
	if (a.json) {
		const mb_cpio_entry *e = NULL;
		mb_event_digest d[3];

		if (ret == EXIT_FAILED && idx != SIZE_MAX && !(e = mb_initramfs_entry_at(ar, idx)))
			e = mb_initramfs_entry_at(mine, idx);
		file_digests(&fi, d);
		rc = tool_json_text_print(mb_initramfs_verify_to_json(a.paths[0], a.paths[1], &a.opts, d, 3,
								      ret == EXIT_FAILED ? what : NULL, idx, e,
								      a.json == TOOL_JSON_PRETTY));
		if (rc)
			ret = rc;
	} else if (ret == EXIT_OK) {
		printf("%s: identical to what 'pack' makes from %s (%s, mtime %u)\n", a.paths[0], a.paths[1],
		       mb_compress_name(a.opts.compress), a.opts.mtime);
	} else if (idx == SIZE_MAX) {
		printf("%s: differs from %s: %s\n", a.paths[0], a.paths[1], what);
	} else {
		const mb_cpio_entry *e = mb_initramfs_entry_at(ar, idx);
		char *n;

		if (!e)
			e = mb_initramfs_entry_at(mine, idx);
		n = e ? mb_initramfs_name_escape(e->name, e->name_len) : NULL;
		printf("%s: differs from %s at entry %zu '%s': %s%s\n", a.paths[0], a.paths[1], idx, n ? n : "?",
		       what, strcmp(what, "missing") == 0 ? " (in FILE, present in DIR)"
		       : strcmp(what, "extra") == 0 ? " (in FILE, absent from DIR)" : " (FILE vs DIR)");
		if (strncmp(what, "mtime ", 6) == 0 && e && !a.has_mtime)
			printf("hint: FILE was packed with mtime %u: pass --mtime %u or set SOURCE_DATE_EPOCH\n",
			       e->mtime, e->mtime);
		free(n);
	}
out:
	mb_initramfs_free(ar);
	mb_initramfs_free(mine);
	free(out);
	return ret;
}

static const tool_command initramfs_commands[] = {
	{ "pack", cmd_pack },
	{ "list", cmd_list },
	{ "verify", cmd_verify },
	{ NULL, NULL },
};

int verb_initramfs(int argc, char **argv)
{
	return tool_dispatch("initramfs", initramfs_help, initramfs_commands, argc, argv);
}
