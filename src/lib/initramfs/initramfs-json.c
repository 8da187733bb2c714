/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The initramfs documents (docs/initramfs.md): `initramfs pack --json`
 * (mb_initramfs_pack_to_json), `initramfs list --json` (mb_initramfs_write_json, streamed: an
 * archive of a million entries is never one tree) and `initramfs verify --json`
 * (mb_initramfs_verify_to_json). The tool only picks the layout.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <mboot/digest.h>
#include <mboot/initramfs.h>
#include "shared/fail.h"
#include "shared/hex.h"
#include "shared/json.h"
#include "shared/jsonout.h"

MB_EXPORT char *mb_initramfs_name_escape(const char *s, size_t n)
{
	static const char hex_lower[] = "0123456789abcdef";
	char *out = malloc(4 * n + 1), *p = out;
	size_t i;

	if (!out)
		return NULL;
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char) s[i];

		if (ch < 0x20 || ch >= 0x7f || ch == '\\') {
			*p++ = '\\';
			*p++ = 'x';
			*p++ = hex_lower[ch >> 4];
			*p++ = hex_lower[ch & 15];
		} else {
			*p++ = (char) ch;
		}
	}
	*p = 0;
	return out;
}

/* An escaped copy as a JSON string ("" when out of memory, noted as the build's failure). */
static json_t *escaped_json(const char *s, size_t n)
{
	char *e = mb_initramfs_name_escape(s, n);
	json_t *v;

	if (!e)
		json_build_note_failure();
	v = json_text(e ? e : "");
	free(e);
	return v;
}

/* {"sha1": hex, ...} in the order given; a digest of an unknown bank is left out. */
static json_t *digests_json(const mb_event_digest *d, size_t n)
{
	json_t *o = json_object();

	for (size_t i = 0; i < n; i++) {
		const mb_digest_info *info = mb_digest_by_alg(d[i].alg);

		if (info && d[i].size == info->size)
			json_object_set_new(o, info->name, json_hex(d[i].bytes, d[i].size));
	}
	return o;
}

static const char *type_name(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return "file";
	case S_IFDIR: return "dir";
	case S_IFLNK: return "symlink";
	case S_IFCHR: return "char";
	case S_IFBLK: return "block";
	case S_IFIFO: return "fifo";
	case S_IFSOCK: return "socket";
	}
	return "unknown";
}

static json_t *entry_json(const mb_cpio_entry *e)
{
	json_t *o = json_object();
	char *name = mb_initramfs_name_escape(e->name, e->name_len), buf[32];

	if (!name)
		json_build_note_failure();
	json_object_set_new(o, "name", json_text(name ? name : ""));
	/* a name that needed escapes: its bytes as they are, too */
	if (name && strlen(name) != e->name_len)
		json_object_set_new(o, "name_hex", json_hex((const uint8_t *) e->name, e->name_len));
	free(name);
	json_object_set_new(o, "type", json_text(type_name(e->mode)));
	snprintf(buf, sizeof(buf), "%04o", e->mode & 07777);
	json_object_set_new(o, "mode", json_text(buf));
	json_object_set_new(o, "uid", json_integer(e->uid));
	json_object_set_new(o, "gid", json_integer(e->gid));
	json_object_set_new(o, "nlink", json_integer(e->nlink));
	json_object_set_new(o, "mtime", json_integer(e->mtime));
	json_object_set_new(o, "ino", json_integer(e->ino));
	json_object_set_new(o, "size", json_integer(e->size));
	json_object_set_new(o, "segment", json_integer(e->segment));
	json_object_set_new(o, "offset", json_integer((json_int_t) e->offset));
	if ((e->mode & S_IFMT) == S_IFLNK)
		json_object_set_new(o, "target", escaped_json((const char *) e->data, e->size));
	if ((e->mode & S_IFMT) == S_IFCHR || (e->mode & S_IFMT) == S_IFBLK) {
		snprintf(buf, sizeof(buf), "%u:%u", e->rdevmajor, e->rdevminor);
		json_object_set_new(o, "rdev", json_text(buf));
	}
	if ((e->mode & S_IFMT) == S_IFREG && e->size)
		json_object_set_new(o, "sha256", json_hex(e->sha256, sizeof(e->sha256)));
	return o;
}

static json_t *segments_json(const mb_initramfs *a)
{
	json_t *segs = json_array();

	for (size_t i = 0; i < mb_initramfs_segment_count(a); i++) {
		const mb_cpio_segment *s = mb_initramfs_segment_at(a, i);
		json_t *so = json_object();

		json_object_set_new(so, "compress", json_text(mb_compress_name(s->compress)));
		json_object_set_new(so, "offset", json_integer((json_int_t) s->file_offset));
		json_object_set_new(so, "size", json_integer((json_int_t) s->file_size));
		json_object_set_new(so, "cpio_size", json_integer((json_int_t) s->cpio_size));
		json_array_append_new(segs, so);
	}
	return segs;
}

/* What b holds, to the sink; a failure of the build or of b is -ENOMEM. */
static int flush_to(jsonout *b, json_build_mark mark, mb_text_sink sink, void *ctx, mb_error *err)
{
	int rc;

	if (b->oom || json_build_failed(mark))
		return set_error(err, -ENOMEM, "out of memory");
	if (b->n == 0)
		return 0;
	rc = sink(ctx, b->p, b->n);
	b->n = 0;
	if (rc < 0)
		return set_error(err, rc, "the output failed: %s", mb_strerror(rc));
	return 0;
}

/* A tree, written into b and dropped. */
static void put_tree(jsonout *b, json_t *v)
{
	if (!v) {
		b->oom = true;
		return;
	}
	jsonout_json(b, v);
	json_decref(v);
}

MB_EXPORT int mb_initramfs_write_json(const mb_initramfs *a, const char *file, uint64_t size,
				      const mb_event_digest *digests, size_t n_digests, bool pretty,
				      mb_text_sink sink, void *ctx, mb_error *err)
{
	json_build_mark mark = json_build_begin();
	jsonout b = { .pretty = pretty };
	int rc = 0;

	if (!a || !file || (!digests && n_digests) || !sink)
		return set_error(err, -EINVAL, "no archive, file name or sink");
	jsonout_open(&b, '{');
	jsonout_key(&b, "file");
	jsonout_string(&b, file, strlen(file));
	jsonout_key(&b, "size");
	jsonout_u64(&b, size);
	jsonout_key(&b, "digests");
	put_tree(&b, digests_json(digests, n_digests));
	jsonout_key(&b, "segments");
	put_tree(&b, segments_json(a));
	jsonout_key(&b, "entries");
	jsonout_open(&b, '[');
	for (size_t i = 0; rc == 0 && i < mb_initramfs_entry_count(a); i++) {
		jsonout_next(&b);
		put_tree(&b, entry_json(mb_initramfs_entry_at(a, i)));
		if (b.n >= MB_JSONOUT_FLUSH || b.oom)
			rc = flush_to(&b, mark, sink, ctx, err);
	}
	jsonout_close(&b, ']');
	jsonout_close(&b, '}');
	jsonout_lit(&b, "\n");
	if (rc == 0)
		rc = flush_to(&b, mark, sink, ctx, err);
	free(b.p);
	return rc;
}

MB_EXPORT char *mb_initramfs_pack_to_json(const char *file, uint64_t size, const mb_initramfs_opts *opts,
					  const mb_initramfs_stats *st, const char *policy_json, bool pretty)
{
	const mb_event_digest d[] = {
		{ MB_ALG_SHA1, sizeof(st->sha1), st->sha1 },
		{ MB_ALG_SHA256, sizeof(st->sha256), st->sha256 },
		{ MB_ALG_SHA384, sizeof(st->sha384), st->sha384 },
	};
	json_build_mark mark = json_build_begin();
	json_t *o = json_object();
	char *out = NULL;

	json_object_set_new(o, "file", json_text(file));
	json_object_set_new(o, "size", json_integer((json_int_t) size));
	json_object_set_new(o, "compress", json_text(mb_compress_name(opts->compress)));
	json_object_set_new(o, "entries", json_integer((json_int_t) st->entries));
	json_object_set_new(o, "mtime", json_integer(opts->mtime));
	json_object_set_new(o, "cpio_size", json_integer((json_int_t) st->cpio_size));
	json_object_set_new(o, "cpio_sha256", json_hex(st->cpio_sha256, sizeof(st->cpio_sha256)));
	json_object_set_new(o, "digests", digests_json(d, sizeof(d) / sizeof(d[0])));
	if (policy_json) {
		json_t *p = json_from_text(policy_json);

		if (!p)
			goto out; /* not JSON, or out of memory: no document rather than one without it */
		json_object_set_new(o, "policy", p);
	}
	out = json_write_built(o, pretty ? JSON_LAYOUT_PRETTY : JSON_LAYOUT_COMPACT, mark);
out:
	json_decref(o);
	return out;
}

MB_EXPORT char *mb_initramfs_verify_to_json(const char *file, const char *dir, const mb_initramfs_opts *opts,
					    const mb_event_digest *digests, size_t n_digests, const char *what,
					    size_t entry, const mb_cpio_entry *e, bool pretty)
{
	json_build_mark mark = json_build_begin();
	json_t *o = json_object();
	char *out;

	json_object_set_new(o, "file", json_text(file));
	json_object_set_new(o, "dir", json_text(dir));
	json_object_set_new(o, "result", json_text(what ? "different" : "identical"));
	json_object_set_new(o, "compress", json_text(mb_compress_name(opts->compress)));
	json_object_set_new(o, "mtime", json_integer(opts->mtime));
	json_object_set_new(o, "digests", digests_json(digests, n_digests));
	if (what) {
		json_t *d = json_object();

		if (entry != SIZE_MAX) {
			json_object_set_new(d, "entry", json_integer((json_int_t) entry));
			if (e)
				json_object_set_new(d, "name", escaped_json(e->name, e->name_len));
		}
		json_object_set_new(d, "what", json_text(what));
		json_object_set_new(o, "first_difference", d);
	}
	out = json_write_built(o, pretty ? JSON_LAYOUT_PRETTY : JSON_LAYOUT_COMPACT, mark);
	json_decref(o);
	return out;
}
