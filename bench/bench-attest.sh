#!/bin/bash
# attest verify of a real boot's evidence (ima-evm-utils' GRUB machine: 162 events, sha1 and
# sha256, replayed into a private swtpm and quoted there by tpm2_quote) with the policy generated
# from that boot: verifications per second in-process (bench-attest: mb_attest_verify in a loop,
# one core) and per process (mboot attest verify), beside the pipeline a verifier would otherwise
# run: tpm2_checkquote (signature, nonce, pcrDigest) then tpm2_eventlog (parse the log; it
# does not compare with the quoted values, nor judge a policy). Prints the ratios (> 1: mboot faster).
# Usage: bench/bench-attest.sh [BUILD_DIR] [N]   (defaults: build, 200 process runs each)
set -eEu
export LC_ALL=C
cd "$(dirname "$0")/.."
B=${1:-build}
N=${2:-200}
M=$(realpath "$B/mboot" 2>/dev/null) && [ -x "$M" ] || { echo "build first: meson setup $B && ninja -C $B"; exit 2; }
BA=$(realpath "$B/bench/bench-attest")
LOG=$(realpath tests/data/corpus/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9)
E="python3 $(realpath tests/tpm/attest-evidence.py)"
# shellcheck source=../tests/tpm/swtpm-env.sh
. tests/tpm/swtpm-env.sh
cd "$WORK"
NONCE=00112233445566778899aabbccddeeff
swtpm_start
swtpm_banks "sha1 sha256"
"$M" log extend --tcti "$TCTI" "$LOG" >/dev/null
tpm2_createprimary -Q -C o -g sha256 -G ecc -c prim.ctx && tpm2_flushcontext -t
tpm2_create -Q -C prim.ctx -G ecc256:ecdsa-sha256:null -u ak.pub -r ak.priv \
	-a 'fixedtpm|fixedparent|sensitivedataorigin|userwithauth|restricted|sign' && tpm2_flushcontext -t
tpm2_load -Q -C prim.ctx -u ak.pub -r ak.priv -c ak.ctx -n ak.name && tpm2_flushcontext -t
tpm2_readpublic -Q -c ak.ctx -o ak.pem -f pem && tpm2_flushcontext -t
$E machine --ak-pub ak.pub --ak-name ak.name -o machine.json
tpm2_quote -Q -c ak.ctx -l sha1:all+sha256:all -q $NONCE -m q.msg -s q.sig -o q.values -F values -g sha256
tpm2_flushcontext -t
$E assemble --attest q.msg --sig q.sig --values q.values --selection sha1:all+sha256:all --ak-pub ak.pub \
	--eventlog "$LOG" -o evidence.json
# tpm2_checkquote reads tpm2_quote's serialized PCR file: a second quote of the same PCRs for it
tpm2_quote -Q -c ak.ctx -l sha1:all+sha256:all -q $NONCE -m t.msg -s t.sig -o t.pcrs -g sha256
tpm2_flushcontext -t
"$M" policy generate --from-log "$LOG" -o policy.json
"$M" attest verify evidence.json --machine machine.json --nonce $NONCE --policy policy.json >/dev/null
tpm2_checkquote -Q -u ak.pem -m t.msg -s t.sig -f t.pcrs -g sha256 -q $NONCE
swtpm_stop
# KEEP=DIR keeps the evidence, machine record and policy (for profiling bench-attest)
[ -z "${KEEP:-}" ] || cp -r "$WORK" "$KEEP"

inproc=$("$BA" evidence.json machine.json $NONCE policy.json 3 | awk '{print $2}')
# the fleet verifier's case: later evidence of a boot judged before (quote checked in full, the
# logs' judgment taken: mb_attest_verify's judged_lookup)
once=$("$BA" evidence.json machine.json $NONCE policy.json 3 once | awk '{print $2}')
per_sec() { # per_sec CMD...: runs per second of N runs
	local t0 t1 i
	t0=$(date +%s.%N)
	for ((i = 0; i < N; i++)); do "$@" >/dev/null || { echo "failed: $*"; exit 1; }; done
	t1=$(date +%s.%N)
	echo "$N / ($t1 - $t0)" | bc -l
}
mb_proc=$(per_sec "$M" attest verify evidence.json --machine machine.json --nonce $NONCE --policy policy.json)
pipeline() { tpm2_checkquote -Q -u ak.pem -m t.msg -s t.sig -f t.pcrs -g sha256 -q $NONCE && tpm2_eventlog "$LOG"; }
ref=$(per_sec pipeline)
printf 'evidence: %d bytes, %d events, policy of %d bytes\n' "$(stat -c %s evidence.json)" \
	"$("$M" log show "$LOG" --json | jq '.events | length')" "$(stat -c %s policy.json)"
printf '%-52s %10.0f /s\n' "mboot, in-process (mb_attest_verify loop, 1 core)" "$inproc"
printf '%-52s %10.0f /s\n' "mboot, in-process, the boot judged before (1 core)" "$once"
printf '%-52s %10.1f /s\n' "mboot attest verify, one process each" "$mb_proc"
printf '%-52s %10.1f /s\n' "tpm2_checkquote + tpm2_eventlog, one pipeline each" "$ref"
printf 'ratio in-process / pipeline: %.1f (boot judged before: %.1f)   per process / pipeline: %.2f   (aim: 5000/s in-process)\n' \
	"$(echo "$inproc / $ref" | bc -l)" "$(echo "$once / $ref" | bc -l)" "$(echo "$mb_proc / $ref" | bc -l)"
