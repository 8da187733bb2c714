#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# IMA entries judged in attestation evidence (docs/attest.md, "IMA"), the fleet's steady case:
# a boot's later evidence carries N new entries (default 10,000), judged on top of the IMA state
# the last verdict left. A private swtpm holds a real boot (ima-evm-utils' GRUB machine) and a
# PCR 10 extended as a kernel extends it for an ima-ng list written with hashlib
# (tests/tpm/ima-build.py), N entries known to the policy's allowlist (its "ima" section has
# N + 1 paths and the firmware PCRs). bench-attest (mb_attest_verify in a loop, one core) on
# that evidence and on the same boot's evidence without a list: the difference is the IMA
# list's cost, printed as entries/s. The reference, in the same run: `evmctl ima_measurement`
# (ima-evm-utils) replaying the same binary list (parse, template hashes, PCR 10), entries/s.
# Usage: bench/bench-ima-attest.sh [BUILD_DIR]   Environment: N (new entries, 10000).
set -eEu
export LC_ALL=C
cd "$(dirname "$0")/.."
B=${1:-build}
N=${N:-10000}
M=$(realpath "$B/mboot" 2>/dev/null) && [ -x "$M" ] || { echo "build first: meson setup $B && ninja -C $B"; exit 2; }
BA=$(realpath "$B/bench/bench-attest")
IB="python3 $(realpath tests/tpm/ima-build.py)"
LOG=$(realpath tests/data/corpus/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9)
command -v evmctl >/dev/null || { echo "needs evmctl: apt-get install ima-evm-utils"; exit 2; }
# shellcheck source=../tests/tpm/swtpm-env.sh
. tests/tpm/swtpm-env.sh
cd "$WORK"
NONCE=00112233445566778899aabbccddeeff
swtpm_start_ek_cert sha1,sha256 >/dev/null
swtpm_banks "sha1 sha256"
"$M" log extend --tcti "$TCTI" "$LOG" >/dev/null
mkdir -p ca && cp "$SWTPM_EK_CA" "$SWTPM_EK_ISSUER" ca/
"$M" attest enroll --tcti "$TCTI" --ak-file ak.json -o request.json
"$M" attest challenge -i request.json --ek-ca ca -o challenge.json --state state.json >/dev/null
"$M" attest activate --tcti "$TCTI" --ak-file ak.json -i challenge.json -o response.json
"$M" attest challenge --state state.json -i response.json -o machine.json >/dev/null

# N distinct files, each a path and a content: the first N entries, then N more of the same files.
mkdir -p files
python3 - "$N" <<'PY'
import sys
for i in range(int(sys.argv[1])):
    open('files/%d' % i, 'w').write('file %d\n' % i)
PY
args() { for ((i = 0; i < N; i++)); do printf '/usr/lib/x86_64-linux-gnu/bench/%03d/lib%d.so=files/%d\n' $((i / 100)) "$i" "$i"; done; }
args >args.txt
tpm2_pcrread sha256:0,1,2,3,4,5,6,7,8,9 >pcrs09.txt
# shellcheck disable=SC2046
$IB new pcrs09.txt list.bin $(cat args.txt) >ext.txt
sed 's/^/10:/' ext.txt | xargs -n 200 tpm2_pcrextend
"$M" policy generate --from-log "$LOG" --from-ima-log list.bin -o policy.json
"$M" quote --tcti "$TCTI" --ak-file ak.json --nonce $NONCE --log "$LOG" --ima-log list.bin -o ev1.json
"$M" attest verify ev1.json --machine machine.json --nonce $NONCE --policy policy.json --ima-state-out st1.json >/dev/null
# shellcheck disable=SC2046
$IB add list.bin $(cat args.txt) >ext2.txt
sed 's/^/10:/' ext2.txt | xargs -n 200 tpm2_pcrextend
"$M" quote --tcti "$TCTI" --ak-file ak.json --nonce $NONCE --log "$LOG" --ima-log list.bin --ima-start $((N + 1)) -o ev2.json
"$M" attest verify ev2.json --machine machine.json --nonce $NONCE --policy policy.json --ima-state st1.json --json >v2.json || {
	echo "the evidence of $N new entries is not trusted: $(jq -c .reasons v2.json)"; exit 1; }
[ "$(jq '.ima.new_entries' v2.json)" = "$N" ] || { echo "not $N new entries judged: $(jq -c .ima v2.json)"; exit 1; }
"$M" quote --tcti "$TCTI" --ak-file ak.json --nonce $NONCE --log "$LOG" --no-ima-log -o ev0.json
"$M" policy generate --from-log "$LOG" -o policy-fw.json
swtpm_stop
[ -z "${KEEP:-}" ] || cp -r "$WORK" "$KEEP"

with=$(MB_BENCH_IMA_STATE=st1.json "$BA" ev2.json machine.json $NONCE policy.json 3 | awk '{print $2}')
without=$("$BA" ev0.json machine.json $NONCE policy-fw.json 3 | awk '{print $2}')
per_entry=$(echo "(1 / $with - 1 / $without) / $N" | bc -l)
mine=$(echo "1 / $per_entry" | bc -l)
# evmctl: the whole list (2N + 1 entries), its own replay of PCR 10; the best of 3 runs
best=
for _ in 1 2 3; do
	t0=$(date +%s.%N)
	evmctl ima_measurement list.bin >/dev/null 2>&1 || true
	t1=$(date +%s.%N)
	t=$(echo "$t1 - $t0" | bc -l)
	if [ -z "$best" ] || [ "$(echo "$t < $best" | bc -l)" = 1 ]; then best=$t; fi
done
ref=$(echo "(2 * $N + 1) / $best" | bc -l)
printf 'evidence of %d new entries: %d bytes; policy of %d paths, %d bytes\n' "$N" "$(stat -c %s ev2.json)" \
	"$(jq '.ima.digests | length' policy.json)" "$(stat -c %s policy.json)"
printf '%-62s %10.1f /s\n' "mb_attest_verify, evidence with $N new IMA entries" "$with"
printf '%-62s %10.1f /s\n' "mb_attest_verify, the same boot's evidence without a list" "$without"
printf '%-62s %10.0f /s\n' "IMA entries judged (replay in sha256 + allowlist), 1 core" "$mine"
printf '%-62s %10.0f /s\n' "evmctl ima_measurement (replay only, one process)" "$ref"
printf 'ratio mboot / evmctl: %.1f   (aim: 1,000,000 entries/s)\n' "$(echo "$mine / $ref" | bc -l)"
