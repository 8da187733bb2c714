#!/bin/bash
# mboot log replay / log show --json against tpm2_eventlog (tpm2-tools), on real logs and on a
# generated crypto-agile log of 100,000 events (SHA-1 + SHA-256), in the same run.
# Prints events per second and the ratio (wall time, best of R); then, for the generated log, the
# ratios of CPU time (user + system, medians of paired runs: bench/paired), which a busy machine
# disturbs less; and replay's cost over the bare hashing (hash-floor: OpenSSL doing only the
# extends the replay cannot avoid).
# Usage: bench/bench-eventlog.sh [BUILD_DIR]   (default: build)
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
MBOOT=$B/mboot
command -v tpm2_eventlog >/dev/null || { echo "tpm2_eventlog (tpm2-tools) is needed"; exit 2; }
[ -x "$MBOOT" ] || { echo "build first: meson setup $B && ninja -C $B"; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
N=100000
"$B/bench/gen-log" $N "$tmp/gen.log"

# best of R runs, in seconds
best() {
	local r=${R:-5} i t best=
	for ((i = 0; i < r; i++)); do
		local s e
		s=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; e=$(date +%s.%N)
		t=$(echo "$e - $s" | bc -l)
		if [ -z "$best" ] || [ "$(echo "$t < $best" | bc -l)" = 1 ]; then best=$t; fi
	done
	echo "$best"
}

printf '%-44s %8s %12s %12s %12s %9s\n' log events "mboot s" "tpm2_evlog s" "mboot ev/s" ratio
row() { # row LABEL EVENTS MBOOT_T REF_T
	printf '%-44s %8s %12.4f %12.4f %12.0f %8.1fx\n' "$1" "$2" "$3" "$4" "$(echo "$2 / $3" | bc -l)" "$(echo "$4 / $3" | bc -l)"
}

for log in tests/data/corpus/go-tpm-tools/gdc-host.bin tests/data/corpus/tpm2-tss/binary_measurements_hcrtm.bin \
	tests/data/corpus/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9 "$tmp/gen.log"; do
	ev=$("$MBOOT" log show --json "$log" | jq '.events | length')
	ref=$(R=3 best tpm2_eventlog "$log")
	name=$(basename "$log")
	[ "$log" = "$tmp/gen.log" ] && name="generated ($N events, sha1+sha256)"
	row "replay: $name" "$ev" "$(best "$MBOOT" log replay "$log")" "$ref"
	row "show --json: $name" "$ev" "$(best "$MBOOT" log show --json "$log")" "$ref"
done

# cpu LABEL MBOOT_ARGS...: mboot and tpm2_eventlog on the generated log, in pairs (RC runs).
RC=${RC:-5}
cpu() {
	local label=$1 out mc rc mw rw ratio
	shift
	out=$("$B/bench/paired" -a "$RC" "$MBOOT" "$@" "$tmp/gen.log" -- tpm2_eventlog "$tmp/gen.log") ||
		{ echo "failed: $*"; exit 1; }
	read -r mc rc mw rw ratio <<<"$out"
	printf '%-44s mboot %8.1f ms (wall %8.1f)  tpm2_eventlog %8.1f ms (wall %8.1f)  cpu ratio %5.1fx\n' \
		"$label" "$mc" "$mw" "$rc" "$rw" "$ratio"
}
printf '\nCPU time (user + system), generated log of %d events, medians of %d paired runs:\n' $N "$RC"
cpu "replay" log replay
cpu "show --json" log show --json
cpu "show --json --compact" log show --json --compact

floor=$(best "$B/bench/hash-floor" $N)
rep=$(best "$MBOOT" log replay "$tmp/gen.log")
printf '\nreplay of %d events: %.4f s; OpenSSL doing only its extends: %.4f s; ratio %.2f (aim <= 1.5)\n' \
	$N "$rep" "$floor" "$(echo "$rep / $floor" | bc -l)"
