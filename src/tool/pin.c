/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading a PIN for TPM + PIN (docs/seal.md): from a file, the terminal (no echo) or stdin,
 * with read(2) into a locked page, never through stdio or argv; wiped by the caller.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "shared/fileio.h"
#include "tool/pin.h"
#include "tool/tool.h"

bool pin_reads_stdin(const char *pin_file)
{
	if (pin_file)
		return strcmp(pin_file, "-") == 0;
	return !isatty(STDIN_FILENO);
}

/* Bytes from fd into pin until a newline (line) or the end; the newline is not kept. */
static int read_pin_bytes(int fd, bool line, secret_page *pin, const char *what)
{
	pin->size = 0;
	for (;;) {
		uint8_t c;
		ssize_t n = fd_read_some(fd, &c, 1);

		if (n < 0) {
			tool_errorf("%s: %s", what, strerror((int) -n));
			return EXIT_USAGE;
		}
		if (n == 0 || (line && c == '\n'))
			break;
		if (pin->size > MB_PIN_MAX || pin->size == pin->cap) {
			tool_errorf("%s: the PIN is longer than %u bytes", what, MB_PIN_MAX);
			return EXIT_USAGE;
		}
		pin->p[pin->size++] = c;
		explicit_bzero(&c, 1);
	}
	/* a file's one trailing newline (and a CR before it) is not part of the PIN */
	if (!line && pin->size && pin->p[pin->size - 1] == '\n')
		pin->size--;
	if (pin->size && pin->p[pin->size - 1] == '\r')
		pin->size--;
	if (pin->size > MB_PIN_MAX) {
		tool_errorf("%s: the PIN is longer than %u bytes", what, MB_PIN_MAX);
		return EXIT_USAGE;
	}
	if (pin->size == 0) {
		tool_errorf("%s: the PIN is empty", what);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/* Ask on the terminal (stdin), echo off; the prompt on stderr. */
static int ask(const char *prompt, secret_page *pin)
{
	struct termios old, quiet;
	bool restore;
	int rc;

	fprintf(stderr, "%s", prompt);
	fflush(stderr);
	restore = tcgetattr(STDIN_FILENO, &old) == 0;
	if (restore) {
		quiet = old;
		quiet.c_lflag &= ~(tcflag_t) (ECHO | ECHONL);
		quiet.c_lflag |= ICANON;
		(void) tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
	}
	rc = read_pin_bytes(STDIN_FILENO, true, pin, "PIN");
	if (restore)
		(void) tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
	fputc('\n', stderr);
	return rc;
}

int pin_read(const char *verb, const char *pin_file, bool confirm, secret_page *pin)
{
	secret_page again = { 0 };
	int rc, fd;

	/* MB_PIN_MAX + 1: a longer PIN is seen, not cut */
	if (secret_page_alloc(pin, MB_PIN_MAX + 1) < 0) {
		tool_errorf("out of memory");
		return EXIT_USAGE;
	}
	if (pin_file && strcmp(pin_file, "-") != 0) {
		fd = open(pin_file, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			tool_errorf("%s: %s", pin_file, strerror(errno));
			rc = EXIT_USAGE;
			goto out;
		}
		rc = read_pin_bytes(fd, false, pin, pin_file);
		close(fd);
		goto out;
	}
	if (pin_file || !isatty(STDIN_FILENO)) {
		rc = read_pin_bytes(STDIN_FILENO, true, pin, "stdin");
		goto out;
	}
	rc = ask("Enter PIN: ", pin);
	if (rc || !confirm)
		goto out;
	if (secret_page_alloc(&again, MB_PIN_MAX + 1) < 0) {
		tool_errorf("out of memory");
		rc = EXIT_USAGE;
		goto out;
	}
	rc = ask("Enter PIN again: ", &again);
	if (rc == EXIT_OK && (again.size != pin->size || memcmp(again.p, pin->p, pin->size) != 0)) {
		tool_errorf("%s: the two PINs differ", verb);
		rc = EXIT_USAGE;
	}
	secret_page_free(&again);
out:
	if (rc)
		secret_page_free(pin);
	return rc;
}

int pin_for_luks(const char *device, const char *verb, int token, bool asked, const char *pin_file, secret_page *pin)
{
	mb_luks_entry *e = NULL;
	mb_error err = { 0 };
	size_t n = 0;
	bool needed = false;

	if (mb_luks_list(device, &e, &n, &err) < 0) {
		tool_report(verb, &err);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < n; i++)
		if (e[i].parsed && (token < 0 || e[i].token == token) && mb_luks_token_pin(e[i].parsed))
			needed = true;
	mb_luks_list_free(e, n);
	if (!needed) {
		if (asked)
			fprintf(stderr, "mboot: note: %s: no token to use needs a PIN\n", device);
		return EXIT_OK;
	}
	return pin_read(verb, pin_file, false, pin);
}

int pin_wrong(mb_tpm *tpm)
{
	mb_tpm_da_status da;
	mb_error err = { 0 };

	if (!tpm || mb_tpm_da_status_read(tpm, &da, &err) < 0) {
		tool_errorf("wrong PIN (the TPM counts failed attempts against its dictionary-attack protection)");
		return EXIT_FAILED;
	}
	if (da.in_lockout || da.counter >= da.max_tries)
		tool_errorf("wrong PIN; the TPM is now in dictionary-attack lockout (%u failed attempts): no PIN is "
			    "tried until it recovers (one attempt every %u s), or the lockout is cleared with the lockout "
			    "authorisation (tpm2_dictionarylockout -c)", da.counter, da.interval);
	else
		tool_errorf("wrong PIN (the TPM counts failed attempts: %u more before lockout)",
			    da.max_tries - da.counter);
	return EXIT_FAILED;
}
