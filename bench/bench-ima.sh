#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Judging IMA lists at scale (issue 32; docs/ima.md, "Speed"). A binary list written by hashlib
# (bench/ima-gen.py: ima-ng, SHA-256 file digests, SHA-1 template hashes, a boot_aggregate and
# N entries; PCR values with PCR 10 replayed in the sha1 and sha256 banks) and a policy whose
# allowlist holds P paths (the list's and others). In process, one core (bench/bench-ima, this
# thread's CPU, medians): (a) the policy's load, (b) mb_ima_log_parse + mb_policy_check_ima
# without PCR values (parse, template-hash check, one allowlist lookup an entry), (c) the same
# with the PCR values (PCR 10 replayed in the banks they hold, boot_aggregate checked).
# Beside it, the reference: 'evmctl ima_measurement' (ima-evm-utils) on the same list with the
# same PCR values (parse, template hashes, replay of both banks; no allowlist), and
# 'mboot ima replay --pcrs' doing that same job; CPU time of whole processes (user + system,
# /usr/bin/time, medians of R runs), so both pay their start.
# Usage: bench/bench-ima.sh [BUILD_DIR]   Environment: P (allowlist paths, 100000), R (runs, 5),
# SECS (CPU seconds per in-process measure, 3).
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
M=$B/mboot
[ -x "$M" ] && [ -x "$B/bench/bench-ima" ] || { echo "build first: meson setup $B && ninja -C $B"; exit 2; }
command -v evmctl >/dev/null || { echo "evmctl (ima-evm-utils) is needed: scripts/install-deps"; exit 2; }
P=${P:-100000}
R=${R:-5}
SECS=${SECS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# CPU seconds (user + system) of one run of "$@", which must succeed
secs() {
	/usr/bin/time -f '%U %S' -o "$tmp/t" "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }
	awk '{ printf "%.3f\n", $1 + $2 }' "$tmp/t"
}
# evmctl's --pcrs files: the kernel's sysfs form ("PCR-10: 12 AB ..."), one a bank
evm_pcrs() {
	python3 -c 'import sys
bank = None
for line in open(sys.argv[1]):
    t = line.split()
    if len(t) == 1 and t[0].endswith(":"):
        bank = t[0][:-1]
    elif bank == sys.argv[2]:
        v = t[-1][2:]
        print("PCR-%02d: %s" % (int(t[0].rstrip(":")), " ".join(v[i:i + 2] for i in range(0, len(v), 2))))' "$1" "$2"
}

printf '%-8s %9s %9s %14s %14s %11s %11s %11s %7s\n' entries "load s" "list MiB" "judge e/s" "+PCR10 e/s" \
	"evmctl s" "mboot s" "evmctl e/s" ratio
for N in 10000 100000; do
	python3 bench/ima-gen.py "$N" "$tmp/list" "$tmp/pcrs.txt" "$tmp/pol.json" "$P"
	evm_pcrs "$tmp/pcrs.txt" sha1 >"$tmp/evm-sha1"
	evm_pcrs "$tmp/pcrs.txt" sha256 >"$tmp/evm-sha256"
	"$B/bench/bench-ima" "$tmp/pol.json" "$tmp/list" "$tmp/pcrs.txt" "$SECS" >"$tmp/in" ||
		{ echo "bench-ima failed" >&2; exit 1; }
	# both must accept the list and its PCR values before they are timed
	evmctl ima_measurement --pcrs sha1,"$tmp/evm-sha1" --pcrs sha256,"$tmp/evm-sha256" "$tmp/list" \
		>/dev/null 2>&1 || { echo "evmctl does not accept the list" >&2; exit 1; }
	"$M" ima replay "$tmp/list" --pcrs "$tmp/pcrs.txt" >/dev/null || { echo "mboot does not accept it" >&2; exit 1; }
	evm=$(for _ in $(seq "$R"); do
		secs evmctl ima_measurement --pcrs sha1,"$tmp/evm-sha1" --pcrs sha256,"$tmp/evm-sha256" "$tmp/list"
	done | median)
	mb=$(for _ in $(seq "$R"); do secs "$M" ima replay "$tmp/list" --pcrs "$tmp/pcrs.txt"; done | median)
	awk -v n="$N" -v evm="$evm" -v mb="$mb" -v size="$(stat -c %s "$tmp/list")" '
		/^load_s/ { load = $2 } /^judge_eps/ { j = $2 } /^judge_pcr_eps/ { jp = $2 }
		END { printf "%-8d %9.3f %9.1f %14d %14d %11.3f %11.3f %11d %7.2f\n", n, load, size / 1048576, j, jp,
			evm, mb, (evm > 0 ? n / evm : 0), (mb > 0 ? evm / mb : 0) }' "$tmp/in"
done
echo "load: the $P-path policy; judge: parse + template-hash check + lookup, in process; +PCR10: and the"
echo "replay of the sha1 and sha256 banks; evmctl s / mboot s: 'evmctl ima_measurement' and 'mboot ima"
echo "replay --pcrs' of the list (whole processes, CPU); ratio: evmctl s / mboot s (over 1: mboot is faster)"
