/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pg-control.h"

int pg_control(const char *what)
{
	const char *dir = getenv("MB_PG_CONTROL");
	char path[4200], ack[16] = { 0 };
	ssize_t n;
	int fd, ok;

	if (!dir || !*dir)
		return -1;
	snprintf(path, sizeof(path), "%s/req", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ok = dprintf(fd, "%s\n", what) > 0;
	close(fd);
	snprintf(path, sizeof(path), "%s/ack", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (!ok || fd < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	n = read(fd, ack, sizeof(ack) - 1);
	close(fd);
	return n >= 2 && memcmp(ack, "ok", 2) == 0 ? 0 : -1;
}
