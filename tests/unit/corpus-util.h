/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Helpers for tests over tests/data/corpus: loading files, reading ground truth. */
#ifndef MB_TEST_CORPUS_UTIL_H
#define MB_TEST_CORPUS_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mboot/mboot.h>
#include "lib/replay/pcr-values.h" /* the tests link the static core: they may read the values directly */

/* A path under $MB_TESTDATA/corpus; static storage, valid until the next call. */
const char *corpus_path(const char *rel);
/* Whole file, or NULL (with *size 0) if it cannot be read. */
uint8_t *corpus_load(const char *rel, size_t *size);
/* The same under $MB_TESTDATA itself ("uki-dropins/log.bin"); the file gets a NUL after its bytes. */
const char *testdata_path(const char *rel);
uint8_t *testdata_load(const char *rel, size_t *size);
/* The event log at rel, parsed; NULL if it cannot be read or parsed. */
mb_event_log *corpus_log(const char *rel);

/*
 * Ground truth from outside the project, in the upstream formats:
 *  - "json":   {"banks": {"sha1": {"0": "<hex>"}}} (transcribed upstream values)
 *  - "hirs":   one hex value a line, PCR 0 upwards (HIRS ExpectedPcrs.txt), bank from the size
 *  - "tss":    tsspcrread blocks ("pcrread: tsspcrread -halg sha1" then "N: <hex>" lines)
 * Parsed here with json-c / plain C, not with mboot's own PCR-file reader.
 */
bool truth_load(const char *rel, const char *kind, mb_pcr_values *ret);

#endif
