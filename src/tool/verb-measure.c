/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mboot measure: extend every active bank and append the record to the userspace log. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/json.h"

#include "tool/options.h"
#include "tool/tool.h"
#include "tool/verbs.h"

#define TEXT_MAX (1u << 20)

static const char measure_help[] =
	"Usage: mboot measure --pcr N (--file FILE | --text STRING | --stdin) [--description D]\n"
	"                     [--log FILE] [--lock-timeout SECONDS] [--json]\n"
	"                     [--compact] [--tcti TCTI]\n\n"
	"Measure like a boot stage does: hash the input with every active PCR bank's algorithm,\n"
	"extend PCR N in all of them with one TPM2_PCR_Extend, and append a record to the\n"
	"userspace measurement log, which 'mboot verify' replays after the firmware log.\n\n"
	"The log is a JSON text sequence (RFC 7464: 0x1E, one JSON object, newline) of TCG\n"
	"CEL-JSON records, the layout of systemd's /run/log/systemd/tpm2-measure.log:\n"
	"  {\"pcr\": N, \"digests\": [{\"hashAlg\": \"sha256\", \"digest\": \"<hex>\"}, ...],\n"
	"   \"content_type\": \"mboot\", \"content\": {\"description\": ..., \"file\"|\"text\"|\"stdin\": ...}}\n"
	"The writer holds an exclusive flock on the log from before the extend until the record\n"
	"is written, so concurrent measurements never interleave or get lost, and sets the\n"
	"file's sticky bit meanwhile: a writer that dies in between leaves the log marked\n"
	"incomplete. The log must be a regular file (a FIFO, device or symbolic link is refused),\n"
	"and a lock another process holds longer than the lock timeout is an error, not a hang.\n\n"
	"  --pcr N           the PCR (0-23)\n"
	"  --file FILE       measure the file's contents\n"
	"  --text STRING     measure the string's bytes (no terminating NUL)\n"
	"  --stdin           measure what stdin holds\n"
	"  --description D   a note kept in the record\n"
	"  --log FILE        the log (default " MB_CEL_DEFAULT_PATH "; its directory is created)\n"
	"  --lock-timeout SECONDS\n"
	"                    how long to wait for another writer's lock on the log (default 10;\n"
	"                    0: do not wait)\n"
	"  --json            print the record\n"
	"  --compact         the JSON on one line, as the log holds it (implies --json)\n"
	"  --tcti TCTI       the TPM; default $TPM2TOOLS_TCTI, else " MB_TPM_DEFAULT_TCTI "\n\n"
	"Exit: 0 measured and logged, 2 usage or input error (including a log that is not a\n"
	"regular file, or locked past the timeout: nothing measured), 3 TPM error (nothing logged).\n";

typedef struct digests {
	size_t n;
	mb_event_digest d[MB_MAX_BANKS];
	uint8_t bytes[MB_MAX_BANKS][MB_DIGEST_MAX];
} digests;

/* Hash with every algorithm mboot can compute, before any lock is taken. */
static int hash_input(int fd, const char *text, digests *out)
{
	mb_digest_ctx *ctx[MB_MAX_BANKS] = { 0 };
	size_t i, n = 0;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < mb_digest_count() && n < MB_MAX_BANKS; i++) {
		const mb_digest_info *d = mb_digest_at(i);

		if (mb_digest_ctx_new(d->alg, &ctx[n]) < 0)
			continue; /* e.g. sm3_256 without OpenSSL support */
		out->d[n].alg = d->alg;
		out->d[n].size = d->size;
		out->d[n].bytes = out->bytes[n];
		n++;
	}
	if (text) {
		for (i = 0; i < n; i++)
			if (mb_digest_ctx_update(ctx[i], text, strlen(text)) < 0)
				goto out;
	} else {
		uint8_t buf[65536];

		for (;;) {
			ssize_t k = read(fd, buf, sizeof(buf));

			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0)
				goto out;
			if (k == 0)
				break;
			for (i = 0; i < n; i++)
				if (mb_digest_ctx_update(ctx[i], buf, (size_t) k) < 0)
					goto out;
		}
	}
	for (i = 0; i < n; i++)
		if (mb_digest_ctx_final(ctx[i], out->bytes[i]) < 0)
			goto out;
	out->n = n;
	rc = 0;
out:
	for (i = 0; i < MB_MAX_BANKS; i++)
		mb_digest_ctx_free(ctx[i]);
	return rc;
}

int verb_measure(int argc, char **argv)
{
	const char *file = NULL, *text = NULL, *desc = NULL, *log_path = MB_CEL_DEFAULT_PATH, *tcti = NULL;
	bool use_stdin = false;
	tool_json json = TOOL_JSON_OFF;
	unsigned pcr = MB_PCR_COUNT; /* none given */
	unsigned lock_timeout = TOOL_LOCK_TIMEOUT_MS / 1000;
	const tool_option options[] = {
		TOOL_OPT_NUMBER("pcr", 0, &pcr, 0, MB_PCR_COUNT - 1),
		TOOL_OPT_STR("file", 0, &file),
		TOOL_OPT_STR("text", 0, &text),
		TOOL_OPT_BOOL("stdin", 0, &use_stdin),
		TOOL_OPT_STR("description", 0, &desc),
		TOOL_OPT_STR("log", 0, &log_path),
		TOOL_OPT_NUMBER("lock-timeout", 0, &lock_timeout, 0, 3600),
		TOOL_OPT_JSON_STYLE(&json),
		TOOL_OPT_STR("tcti", 0, &tcti),
		TOOL_OPT_END,
	};
	digests all;
	size_t size = 0;
	mb_error err = { 0 };
	char *content_text = NULL;
	char *record = NULL;
	int rc, in_fd = -1;

	rc = tool_parse_options("measure", measure_help, options, argc, argv, 0);
	if (rc != TOOL_OPTS_GO_ON)
		return rc;
	if (pcr == MB_PCR_COUNT)
		return tool_usage_error("measure", "--pcr is required");
	if (!!file + !!text + use_stdin != 1)
		return tool_usage_error("measure", "give exactly one of --file, --text, --stdin");
	if (text && strlen(text) > TEXT_MAX)
		return tool_usage_error("measure", "--text longer than %u bytes", TEXT_MAX);

	if (file) {
		in_fd = open(file, O_RDONLY | O_CLOEXEC);
		if (in_fd < 0) {
			tool_errorf("%s: %s", file, strerror(errno));
			return EXIT_USAGE;
		}
	} else if (use_stdin)
		in_fd = STDIN_FILENO;
	rc = hash_input(in_fd, text, &all);
	if (file)
		close(in_fd);
	if (rc < 0) {
		tool_errorf("%s: cannot read or hash: %s", file ? file : text ? "--text" : "stdin", strerror(errno));
		return EXIT_USAGE;
	}

	content_text = mb_measure_content_json(desc, file, text);
	if (!content_text) {
		tool_errorf("out of memory");
		rc = EXIT_USAGE;
		goto out;
	}
	/* The TPM's own warnings: mboot reports errors itself, once (as tool_tpm_open). */
	setenv("TSS2_LOG", "all+none", 0);
	{
		mb_measure_input mi = { .size = sizeof(mb_measure_input), .pcr = (uint32_t) pcr, .digests = all.d, .n_digests = all.n,
					.content_type = "mboot",
					.content_json = content_text,
					.log_path = log_path, .lock_timeout_ms = lock_timeout * 1000 };

		if (mb_measure(tcti, &mi, &record, &size, &err) < 0) {
			tool_report("measure", &err);
			rc = err.code == MB_ERR_TPM || err.code == MB_ERR_MEASURE_BANK ? EXIT_TPM : EXIT_USAGE;
			goto out;
		}
	}
	if (json == TOOL_JSON_COMPACT) {
		fwrite(record + 1, 1, size - 1, stdout); /* after the record separator: one line */
	} else if (json) {
		json_t *o = NULL;

		/* the record mb_measure() just wrote, after its record separator */
		if (untrusted_json_parse(record + 1, size - 1, JSON_READ_MAX_DEPTH, &o, &err) < 0) {
			tool_report("measure", &err);
			rc = EXIT_USAGE;
			goto out;
		}
		tool_json_print(json, o);
		json_decref(o);
	}
	rc = EXIT_OK;
out:
	free(record);
	free(content_text);
	return rc;
}
