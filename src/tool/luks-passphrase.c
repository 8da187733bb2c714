/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mboot luks: an existing passphrase of a LUKS2 device, from the terminal or a key file. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "tool/luks-passphrase.h"
#include "tool/tool.h"

#define KEY_FILE_MAX 8192

/* The passphrase, from the terminal with echo off (its newline dropped), into the locked page. */
int luks_read_passphrase_tty(const char *device, secret_buf *pw)
{
	struct termios old, quiet;
	int fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
	bool restore = false;
	int rc = EXIT_OK;

	if (fd < 0) {
		tool_errorf("luks enroll: no terminal to ask for a passphrase of %s: give --key-file FILE", device);
		return EXIT_USAGE;
	}
	dprintf(fd, "Enter an existing passphrase of %s: ", device);
	if (tcgetattr(fd, &old) == 0) {
		quiet = old;
		quiet.c_lflag &= ~(tcflag_t) ECHO;
		restore = tcsetattr(fd, TCSAFLUSH, &quiet) == 0;
	}
	for (;;) {
		char c;
		ssize_t n = read(fd, &c, 1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || c == '\n')
			break;
		if (pw->size == pw->cap) {
			tool_errorf("luks enroll: the passphrase is longer than %zu bytes", pw->cap);
			rc = EXIT_USAGE;
			break;
		}
		pw->p[pw->size++] = (uint8_t) c;
	}
	if (restore)
		(void) tcsetattr(fd, TCSAFLUSH, &old);
	dprintf(fd, "\n");
	close(fd);
	if (rc == EXIT_OK && pw->size == 0) {
		tool_errorf("luks enroll: no passphrase given");
		rc = EXIT_USAGE;
	}
	return rc;
}

/* A key file's bytes, all of them (as cryptsetup --key-file takes them), with read(2): no stdio buffer. */
int luks_read_key_file(const char *path, secret_buf *pw)
{
	int fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = pw->cap < KEY_FILE_MAX ? pw->cap : KEY_FILE_MAX;
	int rc = EXIT_OK;

	if (fd < 0) {
		tool_errorf("%s: %s", path, strerror(errno));
		return EXIT_USAGE;
	}
	for (;;) {
		uint8_t extra;
		ssize_t n = pw->size < cap ? read(fd, pw->p + pw->size, cap - pw->size) : read(fd, &extra, 1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			tool_errorf("%s: %s", path, strerror(errno));
			rc = EXIT_USAGE;
			break;
		}
		if (n == 0)
			break;
		if (pw->size == cap) {
			explicit_bzero(&extra, 1);
			tool_errorf("%s: a key file of more than %zu bytes is not taken", path, cap);
			rc = EXIT_USAGE;
			break;
		}
		pw->size += (size_t) n;
	}
	if (fd != STDIN_FILENO)
		close(fd);
	if (rc == EXIT_OK && pw->size == 0) {
		tool_errorf("%s: the key file is empty", path);
		rc = EXIT_USAGE;
	}
	return rc;
}
