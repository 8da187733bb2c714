#!/bin/bash
# The policy cases of issue 5 on a real GRUB boot (ima-evm-utils' sample machine), judged with
# `mboot verify --pcrs` (no TPM needed: each log is checked against the values its own boot
# would leave, so the log verifies and the policy decides): a policy generated from the log
# verifies it; another machine's log, checked against the PCRs its real TPM held, fails and
# names its events; a changed kernel command line, a different kernel, an extra GRUB command,
# and a text whose digest was swapped for another event's each exit 1 with that event named.
set -u
M=${MBOOT:?}
C=${MB_TESTDATA:?}/corpus
T=${MB_TAMPER:?}
LOG=$C/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }

"$M" policy generate --from-log "$LOG" -o "$W/policy.json" || { echo "FAIL policy generate"; exit 1; }

# judge NAME LOG [PCRS]: verify --policy --json into $W/NAME.json; prints the exit code.
judge() {
	local pcrs=${3:-}
	if [ -z "$pcrs" ]; then
		"$M" log replay --json "$2" >"$W/$1.pcrs.json"
		pcrs=$W/$1.pcrs.json
	fi
	"$M" verify --log "$2" --pcrs "$pcrs" --no-userspace-log --policy "$W/policy.json" --json >"$W/$1.json"
	echo $?
}
# names NAME JQ_FILTER: is there a violation matching the filter?
names() { jq -e "[.policy.violations[] | select($2)] | length > 0" "$W/$1.json" >/dev/null; }

[ "$(judge same "$LOG")" = 0 ] && jq -e '.policy.ok' "$W/same.json" >/dev/null &&
	ok "the policy generated from the log verifies that log" || bad "same log: $(jq -c .policy "$W/same.json")"

# Another machine, against the PCR values its own TPM held (go-tpm-tools' recorded truth).
OTHER=$C/go-tpm-tools/ubuntu-2104-no-secure-boot.bin
rc=$(judge other "$OTHER" "$OTHER.pcrs.json")
[ "$rc" = 1 ] && jq -e '.log_verified and (.verified | not) and (.policy.ok | not)' "$W/other.json" >/dev/null &&
	names other '.pcr == 0' && names other '.pcr == 8 and .event != null and (.text | startswith("grub_cmd: search.fs_uuid fadc363a"))' &&
	ok "another machine's log verifies against its TPM, breaks the policy, names its firmware values and its GRUB commands" ||
	bad "other machine: exit $rc: $(jq -c '.policy.violations[0:3]' "$W/other.json")"

# Another kernel command line (init=/bin/sh), as that boot would log it.
"$M" predict --log "$LOG" --cmdline "root=UUID=119f1a79-c391-4e37-905d-3a503284cadb ro quiet splash ima-policy=tcb init=/bin/sh" \
	--write-log "$W/cmdline.bin" >/dev/null
rc=$(judge cmdline "$W/cmdline.bin")
[ "$rc" = 1 ] && names cmdline '.pcr == 8 and ((.text // "") | test("^kernel_cmdline: .* init=/bin/sh$"))' &&
	ok "a changed kernel command line: exit 1, the kernel_cmdline event named" || bad "cmdline: exit $rc"

# Another kernel: GRUB's PCR 9 event for it carries another digest.
head -c 4096 /dev/urandom >"$W/other-kernel"
"$M" predict --log "$LOG" --kernel "$W/other-kernel" --write-log "$W/kernel.bin" >/dev/null
want=$(sha256sum <"$W/other-kernel" | cut -d' ' -f1)
rc=$(judge kernel "$W/kernel.bin")
[ "$rc" = 1 ] && names kernel ".pcr == 9 and .digest == \"$want\"" &&
	ok "a different kernel digest: exit 1, the PCR 9 event with sha256sum's digest named" || bad "kernel: exit $rc"

# An extra GRUB command, logged as GRUB logs one.
n=$("$M" log show --json "$LOG" | jq '[.events[] | select(.pcr == 8)][-1].index')
"$T" "$LOG" "$W/extra.bin" add-grub "$n" "set debug=all" || bad "mb-tamper add-grub"
rc=$(judge extra "$W/extra.bin")
[ "$rc" = 1 ] && names extra '.pcr == 8 and .text == "grub_cmd: set debug=all"' &&
	ok "an extra GRUB command: exit 1, named" || bad "extra command: exit $rc: $(jq -c .policy "$W/extra.json")"

# A text whose digest was swapped for another event's: the texts no longer prove anything.
read -r a b < <("$M" log show --json "$LOG" | jq -r '[.events[] | select(.pcr == 8)] | "\(.[0].index) \(.[1].index)"')
"$T" "$LOG" "$W/swapped.bin" swap-digests "$a" "$b" || bad "mb-tamper swap-digests"
rc=$(judge swapped "$W/swapped.bin")
[ "$rc" = 1 ] && jq -e "[.pcrs[] | select(.pcr == 8 and (.events_digest_mismatch // [] | index($a) != null))] | length > 0" "$W/swapped.json" >/dev/null &&
	ok "a text whose digest was swapped for another's: exit 1, event $a named (its data does not hash)" ||
	bad "swapped digests: exit $rc: $(jq -c '[.pcrs[] | select(.pcr == 8)]' "$W/swapped.json")"

echo "tpm-policy-cases: $fails failed"
[ "$fails" = 0 ]
