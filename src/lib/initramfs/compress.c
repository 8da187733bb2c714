/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reproducible compression of a finished cpio archive, and bounded decompression of
 * untrusted ones. The gzip header carries no name and mtime 0, and its OS byte is fixed
 * (RFC 1952 §2.3.1); zstd frames are made single-threaded, without dictionary, with the
 * content size and a checksum (RFC 8878 §3.1.1.1). Output equality across machines holds
 * for the same zlib / libzstd versions: docs/initramfs.md says what is stable and what not.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>


#include "shared/fail.h"
#include "lib/initramfs/initramfs-internal.h"
#include <zlib.h>
#include "lib/initramfs/zstd-dl.h"

MB_EXPORT const char *mb_compress_name(mb_compress c)
{
	switch (c) {
	case MB_COMPRESS_NONE: return "none";
	case MB_COMPRESS_GZIP: return "gzip";
	case MB_COMPRESS_ZSTD: return "zstd";
	}
	return NULL;
}

MB_EXPORT int mb_compress_from_name(const char *name, mb_compress *ret)
{
	if (strcmp(name, "none") == 0)
		*ret = MB_COMPRESS_NONE;
	else if (strcmp(name, "gzip") == 0)
		*ret = MB_COMPRESS_GZIP;
	else if (strcmp(name, "zstd") == 0)
		*ret = MB_COMPRESS_ZSTD;
	else
		return -EINVAL;
	return 0;
}

mb_compress compress_detect(const uint8_t *p, size_t n)
{
	/* RFC 1952 §2.3.1 ID1 ID2 CM(deflate); RFC 8878 §3.1.1 magic 0xFD2FB528 (LE). */
	if (n >= 3 && p[0] == 0x1f && p[1] == 0x8b && p[2] == 8)
		return MB_COMPRESS_GZIP;
	if (n >= 4 && p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd)
		return MB_COMPRESS_ZSTD;
	return MB_COMPRESS_NONE;
}

static int gzip_compress(const uint8_t *in, size_t in_size, uint8_t **ret, size_t *ret_size, mb_error *err)
{
	z_stream zs = { 0 };
	gz_header hdr = { 0 };
	uint8_t *out = NULL;
	size_t cap;
	int zr, rc;

	if (deflateInit2(&zs, MB_GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return set_error(err, -ENOMEM, "zlib: cannot initialise deflate");
	/* time 0, no name, no comment, no extra, no header CRC; OS fixed. */
	hdr.os = MB_GZIP_OS;
	if (deflateSetHeader(&zs, &hdr) != Z_OK) {
		rc = set_error(err, -EIO, "zlib: cannot set the gzip header");
		goto out;
	}
	cap = deflateBound(&zs, in_size) + 64;
	out = malloc(cap);
	if (!out) {
		rc = set_error(err, -ENOMEM, "out of memory compressing");
		goto out;
	}
	zs.next_out = out;
	zs.next_in = (Bytef *) in;
	/* Feed in pieces that fit uInt; the output buffer holds the whole bound. */
	for (;;) {
		size_t in_left = in_size - (size_t) ((const uint8_t *) zs.next_in - in);
		size_t out_left = cap - (size_t) (zs.next_out - out);

		zs.avail_in = in_left > (1u << 30) ? 1u << 30 : (uInt) in_left;
		zs.avail_out = out_left > (1u << 30) ? 1u << 30 : (uInt) out_left;
		zr = deflate(&zs, zs.avail_in == in_left ? Z_FINISH : Z_NO_FLUSH);
		if (zr == Z_STREAM_END)
			break;
		if (zr != Z_OK && zr != Z_BUF_ERROR) {
			rc = set_error(err, -EIO, "zlib: deflate failed (%d)", zr);
			goto out;
		}
		if ((size_t) (zs.next_out - out) >= cap) {
			rc = set_error(err, -EIO, "zlib: output over deflateBound");
			goto out;
		}
	}
	*ret_size = (size_t) (zs.next_out - out);
	*ret = out;
	out = NULL;
	rc = 0;
out:
	deflateEnd(&zs);
	free(out);
	return rc;
}

static int zstd_compress(const uint8_t *in, size_t in_size, uint8_t **ret, size_t *ret_size, mb_error *err)
{
	ZSTD_CCtx *cctx;
	size_t cap, n;
	uint8_t *out = NULL;
	int rc = dlopen_zstd(err);

	if (rc < 0)
		return rc;
	cctx = sym_ZSTD_createCCtx();
	cap = sym_ZSTD_compressBound(in_size);
	if (!cctx)
		return set_error(err, -ENOMEM, "zstd: cannot create a context");
	if (sym_ZSTD_isError(sym_ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, MB_ZSTD_LEVEL)) ||
	    sym_ZSTD_isError(sym_ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1)) ||
	    sym_ZSTD_isError(sym_ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1)) ||
	    sym_ZSTD_isError(sym_ZSTD_CCtx_setParameter(cctx, ZSTD_c_dictIDFlag, 0))) {
		rc = set_error(err, -EIO, "zstd: cannot set parameters");
		goto out;
	}
	out = malloc(cap ? cap : 1);
	if (!out) {
		rc = set_error(err, -ENOMEM, "out of memory compressing");
		goto out;
	}
	/* One shot: one frame, content size known, no worker threads. */
	n = sym_ZSTD_compress2(cctx, out, cap, in, in_size);
	if (sym_ZSTD_isError(n)) {
		rc = set_error(err, -EIO, "zstd: %s", sym_ZSTD_getErrorName(n));
		goto out;
	}
	*ret = out;
	*ret_size = n;
	out = NULL;
	rc = 0;
out:
	sym_ZSTD_freeCCtx(cctx);
	free(out);
	return rc;
}

void follow_init(follow_state *f)
{
	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->cond, NULL);
}

void follow_destroy(follow_state *f)
{
	pthread_cond_destroy(&f->cond);
	pthread_mutex_destroy(&f->lock);
}

void follow_publish(follow_state *f, size_t avail, bool done, bool failed)
{
	pthread_mutex_lock(&f->lock);
	f->avail = avail;
	f->done = done;
	f->failed = failed;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
}

int follow_wait(follow_state *f, size_t have, size_t *ret_avail, bool *ret_done)
{
	int rc = 0;

	pthread_mutex_lock(&f->lock);
	while (f->avail <= have && !f->done && !f->failed)
		pthread_cond_wait(&f->cond, &f->lock);
	if (f->failed)
		rc = -ECANCELED;
	*ret_avail = f->avail;
	*ret_done = f->done;
	pthread_mutex_unlock(&f->lock);
	return rc;
}

size_t gzip_bound(size_t n)
{
	z_stream zs = { 0 };
	size_t b;

	if (deflateInit2(&zs, MB_GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return n + n / 8 + 1024; /* not reached in practice; generous anyway */
	b = deflateBound(&zs, n) + 64;
	deflateEnd(&zs);
	return b;
}

int gzip_follow(const uint8_t *in, follow_state *fin, uint8_t *out, size_t out_cap, follow_state *fout,
		   mb_error *err)
{
	z_stream zs = { 0 };
	gz_header hdr = { 0 };
	size_t fed = 0, avail = 0;
	bool done = false;
	int zr, rc;

	if (deflateInit2(&zs, MB_GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		follow_publish(fout, 0, true, true);
		return set_error(err, -ENOMEM, "zlib: cannot initialise deflate");
	}
	hdr.os = MB_GZIP_OS;
	if (deflateSetHeader(&zs, &hdr) != Z_OK) {
		rc = set_error(err, -EIO, "zlib: cannot set the gzip header");
		goto out;
	}
	zs.next_out = out;
	for (;;) {
		rc = follow_wait(fin, fed, &avail, &done);
		if (rc < 0) {
			set_error(err, rc, "packing failed");
			goto out;
		}
		/* Feed what is there; Z_FINISH only once everything is. */
		for (;;) {
			size_t in_left = avail - fed;
			size_t out_left = out_cap - (size_t) (zs.next_out - out);
			int flush;

			zs.next_in = (Bytef *) (in + fed);
			zs.avail_in = in_left > (1u << 30) ? 1u << 30 : (uInt) in_left;
			zs.avail_out = out_left > (1u << 30) ? 1u << 30 : (uInt) out_left;
			flush = done && zs.avail_in == in_left ? Z_FINISH : Z_NO_FLUSH;
			zr = deflate(&zs, flush);
			fed = (size_t) ((const uint8_t *) zs.next_in - in);
			if (zr == Z_STREAM_END)
				break;
			if (zr != Z_OK && zr != Z_BUF_ERROR) {
				rc = set_error(err, -EIO, "zlib: deflate failed (%d)", zr);
				goto out;
			}
			if ((size_t) (zs.next_out - out) >= out_cap) {
				rc = set_error(err, -EIO, "zlib: output over deflateBound");
				goto out;
			}
			if (flush == Z_NO_FLUSH && fed == avail)
				break;
		}
		if (zr == Z_STREAM_END)
			break;
		follow_publish(fout, (size_t) (zs.next_out - out), false, false);
	}
	follow_publish(fout, (size_t) (zs.next_out - out), true, false);
	rc = 0;
out:
	if (rc < 0)
		follow_publish(fout, (size_t) (zs.next_out - out), true, true);
	deflateEnd(&zs);
	return rc;
}

int compress_buffer(mb_compress c, const uint8_t *in, size_t in_size, uint8_t **ret, size_t *ret_size,
		       mb_error *err)
{
	switch (c) {
	case MB_COMPRESS_GZIP:
		return gzip_compress(in, in_size, ret, ret_size, err);
	case MB_COMPRESS_ZSTD:
		return zstd_compress(in, in_size, ret, ret_size, err);
	case MB_COMPRESS_NONE:
		break;
	}
	return set_error(err, -EOPNOTSUPP, "no such compression");
}

struct inflater {
	mb_compress compress;
	z_stream zs;
	ZSTD_DCtx *zd;
};

inflater *inflater_free(inflater *z)
{
	if (!z)
		return NULL;
	if (z->compress == MB_COMPRESS_GZIP)
		inflateEnd(&z->zs);
	if (z->zd) /* libzstd may never have been loaded */
		sym_ZSTD_freeDCtx(z->zd);
	free(z);
	return NULL;
}

int inflater_new(mb_compress c, inflater **ret, mb_error *err)
{
	inflater *z = calloc(1, sizeof(*z));

	if (!z)
		return set_error(err, -ENOMEM, "out of memory");
	z->compress = c;
	if (c == MB_COMPRESS_GZIP) {
		if (inflateInit2(&z->zs, 15 + 16) != Z_OK) {
			free(z);
			return set_error(err, -ENOMEM, "zlib: cannot initialise inflate");
		}
	} else if (c == MB_COMPRESS_ZSTD) {
		int rc = dlopen_zstd(err);

		if (rc < 0) {
			free(z);
			return rc;
		}
		z->zd = sym_ZSTD_createDCtx();
		/* A frame may ask for a window of up to 2^31 bytes, all of it allocated by us: cap it. */
		if (!z->zd || sym_ZSTD_isError(sym_ZSTD_DCtx_setParameter(z->zd, ZSTD_d_windowLogMax, MB_ZSTD_WINDOW_LOG_MAX))) {
			sym_ZSTD_freeDCtx(z->zd);
			free(z);
			return set_error(err, -ENOMEM, "zstd: cannot create a context");
		}
	} else {
		free(z);
		return set_error(err, -EOPNOTSUPP, "no such compression");
	}
	*ret = z;
	return 0;
}

int inflater_step(inflater *z, const uint8_t *in, size_t in_n, size_t *ret_used, uint8_t *out, size_t out_n,
		     size_t *ret_made, bool *ret_end, mb_error *err)
{
	*ret_used = *ret_made = 0;
	*ret_end = false;
	if (z->compress == MB_COMPRESS_GZIP) {
		int zr;

		z->zs.next_in = (Bytef *) in;
		z->zs.avail_in = in_n > (1u << 30) ? 1u << 30 : (uInt) in_n;
		z->zs.next_out = out;
		z->zs.avail_out = out_n > (1u << 30) ? 1u << 30 : (uInt) out_n;
		zr = inflate(&z->zs, Z_NO_FLUSH);
		*ret_used = (size_t) ((const uint8_t *) z->zs.next_in - in);
		*ret_made = (size_t) (z->zs.next_out - out);
		if (zr == Z_STREAM_END) {
			*ret_end = true;
			return 0;
		}
		/* Z_BUF_ERROR: no progress possible with this input; the caller knows whether more comes. */
		if (zr == Z_OK || zr == Z_BUF_ERROR)
			return 0;
		return set_error_at(err, -EBADMSG, *ret_used, "gzip data corrupt: %s",
				  z->zs.msg ? z->zs.msg : "inflate error");
	} else {
		ZSTD_inBuffer ib = { in, in_n, 0 };
		ZSTD_outBuffer ob = { out, out_n, 0 };
		size_t zr = sym_ZSTD_decompressStream(z->zd, &ob, &ib);

		*ret_used = ib.pos;
		*ret_made = ob.pos;
		if (sym_ZSTD_isError(zr)) {
			if (sym_ZSTD_getErrorCode(zr) == ZSTD_error_frameParameter_windowTooLarge)
				return set_error_at(err, -E2BIG, ib.pos, "zstd frame needs a window over %u MiB "
						  "(more memory than list and verify allow)",
						  1u << (MB_ZSTD_WINDOW_LOG_MAX - 20));
			return set_error_at(err, -EBADMSG, ib.pos, "zstd data corrupt: %s", sym_ZSTD_getErrorName(zr));
		}
		/* 0: the frame is decoded and flushed; the next frame, if any, is the next segment. */
		*ret_end = zr == 0;
		return 0;
	}
}
