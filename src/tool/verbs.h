/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_TOOL_VERBS_H
#define MB_TOOL_VERBS_H

/* Each verb gets argv from its own name on (argv[0] = "log", ...) and returns the exit code. */
int verb_log(int argc, char **argv);
int verb_hash(int argc, char **argv);

#endif
