/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_TESTS_PG_CONTROL_H
#define MBOOT_TESTS_PG_CONTROL_H
/*
 * A C test stops ("stop") or starts ("start") the private PostgreSQL its wrapper script runs,
 * through the FIFOs pg-env.sh's pg_control_serve made in $MB_PG_CONTROL, and waits until it is
 * done. Returns 0, or -1 when $MB_PG_CONTROL is not set (no server to control) or the wrapper
 * did not answer "ok".
 */
int pg_control(const char *what);
#endif
