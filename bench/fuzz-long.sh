#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# On demand, not in CI: run every libFuzzer target until it has done MB_FUZZ_RUNS executions
# (default 10 million), nproc targets at a time, from the seed corpora. Prints per target the
# executions, exec/s, coverage (cov) and time; keeps crash, leak, timeout and oom files in
# BUILD/fuzz-results/artifacts/<target>/ and prints them (scripts/fuzz-run does the work).
# Exit status non-zero when any target crashed or left an artifact.
# Usage: bench/fuzz-long.sh [BUILD_DIR]   (default build-fuzz, configured here when missing).
# Environment: MB_FUZZ_RUNS (executions per target), MB_FUZZ_JOBS (default nproc).
set -eu
cd "$(dirname "$0")/.."
B=${1:-build-fuzz}
CC=clang scripts/build "$B" -Dfuzzing=true -Dtests=false -Db_sanitize=address,undefined -Db_lundef=false
exec scripts/fuzz-run -j "${MB_FUZZ_JOBS:-$(nproc)}" "$B" -runs="${MB_FUZZ_RUNS:-10000000}"
