/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One userspace measurement, as a transaction: lock the log, extend every active bank, append. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mboot/measure.h>
#include <mboot/tpm.h>
#include "shared/fail.h"
#include "shared/fileio.h"
#include "shared/options.h"

static int mkdir_parents(const char *path)
{
	char *dir = strdup(path), *p;

	if (!dir)
		return -ENOMEM;
	for (p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			int r = -errno;

			free(dir);
			return r;
		}
		*p = '/';
	}
	free(dir);
	return 0;
}

/* The digests for the TPM's active banks that hold the PCR, in the TPM's order. */
static int pick_digests(mb_tpm *tpm, const mb_measure_input *in, mb_event_digest *use, size_t *n_use, mb_error *err)
{
	mb_tpm_bank banks[MB_MAX_BANKS];
	size_t n_banks = 0, i, k;
	int r = mb_tpm_banks(tpm, banks, MB_MAX_BANKS, &n_banks, err);

	if (r < 0)
		return r;
	*n_use = 0;
	for (i = 0; i < n_banks; i++) {
		for (k = 0; k < in->n_digests; k++)
			if (in->digests[k].alg == banks[i].alg)
				break;
		if (k == in->n_digests) {
			const mb_digest_info *d = mb_digest_by_alg(banks[i].alg);

			/* a bank left out would be a PCR nobody can verify */
			return set_error(err, MB_ERR_MEASURE_BANK, "the TPM has an active %s bank (0x%04x) that mboot cannot "
				       "hash; refusing to leave it unextended", d ? d->name : "unknown", banks[i].alg);
		}
		if (banks[i].pcrs & (1u << in->pcr))
			use[(*n_use)++] = in->digests[k];
	}
	if (*n_use == 0)
		return set_error(err, MB_ERR_MEASURE_BANK, "no active bank of the TPM holds PCR %u", in->pcr);
	return 0;
}

MB_EXPORT int mb_measure(const char *tcti, const mb_measure_input *in_opt, char **ret_record, size_t *ret_size,
			 mb_error *err)
{
	mb_measure_input in_buf;
	const mb_measure_input *in = &in_buf;
	mb_event_digest use[MB_MAX_BANKS];
	size_t n_use = 0, size = 0;
	char *record = NULL;
	mb_tpm *tpm = NULL;
	struct stat st;
	int fd = -1, r;

	if (ret_record)
		*ret_record = NULL;
	r = OPTIONS_TAKE(in_buf, in_opt, err);
	if (r < 0)
		return r;
	if (in->pcr >= MB_PCR_COUNT)
		return set_error(err, -EINVAL, "PCR %u: there are only %u PCRs", in->pcr, MB_PCR_COUNT);
	/*
	 * Lock before talking to the TPM: a TPM that serves one connection at a time (swtpm)
	 * would otherwise deadlock two writers, each holding what the other waits for.
	 */
	r = mkdir_parents(in->log_path);
	if (r < 0)
		return set_error(err, r, "%s: cannot create its folder: %s", in->log_path, strerror(-r));
	/*
	 * O_NOFOLLOW: measure often runs as root, and later fchmods and appends to what it opened;
	 * a symlink planted at the log's path would turn that onto another file.
	 */
	r = file_open_locked(in->log_path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW, 0600, LOCK_EX,
			   in->lock_timeout_ms, &fd, err);
	if (r < 0)
		return prefix_error(err, r, in->log_path);
	if (fstat(fd, &st) < 0) {
		r = set_error(err, -errno, "%s: %s", in->log_path, strerror(errno));
		goto out;
	}
	r = mb_tpm_open(tcti, &tpm, err);
	if (r < 0)
		goto out;
	r = pick_digests(tpm, in, use, &n_use, err);
	if (r < 0)
		goto out;
	r = mb_cel_format_record(in->pcr, use, n_use, in->content_type, in->content_json, &record, &size);
	if (r < 0) {
		r = set_error(err, r, "the record cannot be made (%s)", r == -ENOMEM ? "out of memory" : "bad content");
		goto out;
	}
	/* Sticky bit: "extended, not yet logged". */
	if (fchmod(fd, (st.st_mode & 07777) | S_ISVTX) < 0) {
		r = set_error(err, -errno, "%s: %s", in->log_path, strerror(errno));
		goto out;
	}
	r = mb_tpm_extend(tpm, in->pcr, use, n_use, err);
	if (r < 0) {
		(void) fchmod(fd, st.st_mode & 07777 & ~S_ISVTX); /* nothing extended: nothing to log */
		goto out;
	}
	r = fd_write_all(fd, record, size);
	if (r < 0) {
		r = set_error(err, -EIO, "%s: PCR %u was extended but the record could not be written (%s): the log "
			    "stays marked incomplete", in->log_path, in->pcr, strerror(-r));
		goto out;
	}
	(void) fchmod(fd, st.st_mode & 07777 & ~S_ISVTX);
	if (ret_record) {
		*ret_record = record;
		record = NULL;
	}
	if (ret_size)
		*ret_size = size;
	r = 0;
out:
	mb_tpm_free(tpm);
	if (fd >= 0)
		close(fd);
	free(record);
	return r;
}
