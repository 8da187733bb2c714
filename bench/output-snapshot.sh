#!/bin/bash
# output-snapshot.sh MBOOT OUTDIR: record what `mboot log show/replay` print (stdout, stderr and
# exit code) for every file of tests/data/corpus, a generated log, and cut and bit-flipped copies
# of a few logs. Run it with the binary before and after a change and `diff -r` the two
# directories: a speed-up must not change one output byte.
set -eu
cd "$(dirname "$0")/.."
MBOOT=$(realpath "$1")
OUT=$2
mkdir -p "$OUT"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
GEN=${GEN:-}

inputs=()
while IFS= read -r f; do inputs+=("$f"); done < <(find tests/data/corpus -type f | LC_ALL=C sort)
# Damaged inputs: error messages and offsets must stay the same too.
i=0
for f in tests/data/corpus/go-tpm-tools/gdc-host.bin tests/data/corpus/tpm2-tss/binary_measurements_hcrtm.bin \
	tests/data/corpus/tpm2-tools/event-uefi-sha1-log.bin; do
	[ -f "$f" ] || continue
	size=$(stat -c %s "$f")
	for cut in 1 7 31 32 33 68 69 70 100 $((size / 3)) $((size / 2)) $((size - 5)) $((size - 1)); do
		[ "$cut" -lt "$size" ] || continue
		head -c "$cut" "$f" >"$work/cut-$i-$cut"
		inputs+=("$work/cut-$i-$cut")
	done
	for bit in 3 40 250 400 777 1201 2000 3333; do
		[ $((bit / 8)) -lt "$size" ] || continue
		python3 - "$f" "$work/flip-$i-$bit" "$bit" <<'PY'
import sys
data = bytearray(open(sys.argv[1], 'rb').read())
bit = int(sys.argv[3])
data[bit // 8] ^= 1 << (bit % 8)
open(sys.argv[2], 'wb').write(data)
PY
		inputs+=("$work/flip-$i-$bit")
	done
	i=$((i + 1))
done
[ -n "$GEN" ] && inputs+=("$GEN")

n=0
for f in "${inputs[@]}"; do
	key=$(echo "$f" | sed -e "s|^$work/||" -e 's|/|_|g')
	for mode in "show --json" "show --json --compact" "show" "replay --json" "replay" "replay --json --bank sha256" \
		"show --json --pcr 0,4,8" "show --json --compact --pcr 0,4,8"; do
		m=$(echo "$mode" | tr ' ,' '__')
		# relative path in messages: same for both runs
		set +e
		(cd "$(dirname "$f")" && "$MBOOT" log $mode "$(basename "$f")") >"$OUT/$key.$m.out" 2>"$OUT/$key.$m.err"
		echo $? >"$OUT/$key.$m.rc"
		set -e
		n=$((n + 1))
	done
done
echo "$n outputs recorded in $OUT"
