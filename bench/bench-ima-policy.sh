#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The policy's "ima" section at scale (docs/policy.md, "IMA"): a 100,000-path allowlist loaded
# by 'mboot policy lint' (JSON read under mboot's rules, the path table built) against Python's
# json.load of the same file (a parse alone, no table); then 'mboot verify --ima-log' of an
# N-entry IMA list (tests/cli/ima-policy-ref.py: a consistent list, PCR 10 replayed by hashlib)
# against the policy generated from it: parse, template-hash check, replay into five banks and
# one lookup per entry. Medians of R runs, CPU time (user + system, /usr/bin/time).
# Usage: bench/bench-ima-policy.sh [BUILD_DIR]   Environment: N (paths, 100000), R (runs, 5).
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
M=$B/mboot
[ -x "$M" ] || { echo "build first: meson setup $B && ninja -C $B"; exit 2; }
N=${N:-100000}
R=${R:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# CPU seconds (user + system) of one run of "$@": a shared machine's wall time says little
secs() {
	/usr/bin/time -f '%U %S' -o "$tmp/t" "$@" >/dev/null || true
	awk '{ printf "%.2f\n", $1 + $2 }' "$tmp/t"
}

python3 - "$N" "$tmp/src" <<'PY'
import hashlib, sys
n = int(sys.argv[1])
with open(sys.argv[2], 'w') as f:
    f.write('10 %s ima-ng sha1:%s boot_aggregate\n' % ('0' * 40, '0' * 40))
    for i in range(n):
        p = '/usr/lib/x86_64-linux-gnu/bench/%06d/libbench-%d.so.1' % (i // 100, i)
        f.write('10 %s ima-ng sha1:%s %s\n' % ('0' * 40, hashlib.sha1(p.encode()).hexdigest(), p))
PY
L=tests/data/corpus/tpm2-tools/event-sd-boot-fedora37.bin
tpm2_eventlog "$L" 2>/dev/null | sed -n '/^pcrs:/,$p' | sed 1d >"$tmp/pcrs0.txt"
python3 tests/cli/ima-policy-ref.py "$tmp/src" "$tmp/pcrs0.txt" "$tmp/list" "$tmp/pcrs.txt"
"$M" policy generate --from-ima-log "$tmp/list" -o "$tmp/pol.json"
size=$(stat -c %s "$tmp/pol.json")

load=$(for _ in $(seq "$R"); do secs "$M" policy lint "$tmp/pol.json"; done | median)
py=$(for _ in $(seq "$R"); do secs python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/pol.json"; done | median)
pystart=$(for _ in $(seq "$R"); do secs python3 -c 'pass'; done | median)
verify=$(for _ in $(seq "$R"); do
	secs "$M" verify --log "$L" --no-userspace-log --pcrs "$tmp/pcrs.txt" --policy "$tmp/pol.json" --ima-log "$tmp/list"
done | median)
printf '%-58s %8s\n' "what ($N paths, policy $((size / 1024)) KiB)" "CPU s"
printf '%-58s %8s\n' "mboot policy lint (load: JSON + path table)" "$load"
printf '%-58s %8s\n' "python3 json.load of the same file (parse only)" "$py"
printf '%-58s %8s\n' "python3 start alone" "$pystart"
printf '%-58s %8s\n' "mboot verify --ima-log ($N entries + policy load)" "$verify"
awk -v l="$load" -v v="$verify" -v n="$N" 'BEGIN {
	printf "judging (verify minus load): %.0f entries/s\n", (v - l > 0) ? n / (v - l) : 0 }'
