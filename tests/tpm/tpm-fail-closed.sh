#!/bin/bash
# The ways a tampered boot used to be called good (PITFALLS §F, 31-36), each against a swtpm
# that holds the forged boot or with the values its TPM would hold: every one is refused, naming
# why. The base is the real GRUB boot of ima-evm-utils' sample machine and the policy generated
# from it (rules required, with maxima).
# shellcheck source=tests/tpm/swtpm-env.sh
. "${MB_TPM_TESTS:-$(dirname "$0")}/swtpm-env.sh"
M=${MBOOT:?}
F=${MB_FORGE:?}
C=${MB_TESTDATA:?}/corpus
LOG=$C/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9
KERNEL=/boot/vmlinuz-5.7.0-rc2+.signed
ARGS="root=UUID=119f1a79-c391-4e37-905d-3a503284cadb ro quiet splash ima-policy=tcb"

boot() { # boot LOG [BANKS]: a fresh swtpm holding that boot's PCRs
	swtpm_stop 2>/dev/null || true
	swtpm_start
	swtpm_banks "${2:-sha1 sha256}"
	"$M" log extend --tcti "$TCTI" "$1" >"$WORK/extend" 2>&1 || { echo "log extend $1: $(cat "$WORK/extend")"; exit 1; }
}

"$M" policy generate --from-log "$LOG" -o "$WORK/gen.json" || { echo "FAIL policy generate"; exit 1; }
boot "$LOG"
"$M" verify --log "$LOG" --no-userspace-log --policy "$WORK/gen.json" >"$WORK/out" &&
	ok "the real boot meets the policy generated from it" || bad "the real boot: $(cat "$WORK/out")"

# 31. The userspace log as a hiding place: the boot ran a second linux command with init=/bin/sh
# (both events at the end of PCR 8); the log shown has them moved into a userspace log, so the
# firmware log is exactly the good one and the PCR values still match.
"$F" "$LOG" "$WORK/evil.bin" append 8 grub_cmd "linux $KERNEL $ARGS init=/bin/sh"
"$F" "$WORK/evil.bin" "$WORK/evil.bin" append 8 kernel_cmdline "$KERNEL $ARGS init=/bin/sh"
boot "$WORK/evil.bin"
"$F" "$WORK/evil.bin" "$WORK/shown.bin" move-tail 8 2 "$WORK/us.log"
cmp -s "$WORK/shown.bin" "$LOG" || bad "move-tail did not leave the good log"
"$M" verify --log "$WORK/shown.bin" --userspace-log "$WORK/us.log" --policy "$WORK/gen.json" --json >"$WORK/v.json"
rc=$?
[ $rc -eq 1 ] && jq -e '.verified == false and ([.pcrs[] | select(.pcr == 8) | .verdict] | unique == ["userspace-not-allowed"])' \
	"$WORK/v.json" >/dev/null && ok "31: the tail of PCR 8 moved into the userspace log: PCR 8 userspace-not-allowed (exit 1)" ||
	bad "31: userspace escape: exit $rc, $(jq -c '[.verified, [.pcrs[] | select(.pcr == 8) | .verdict]]' "$WORK/v.json")"
"$M" verify --log "$WORK/shown.bin" --userspace-log "$WORK/us.log" --userspace-pcrs 8,11-15 >/dev/null
rc=$?
[ $rc -eq 1 ] && ok "31: ... also when --userspace-pcrs allows PCR 8 (the firmware log extends it)" ||
	bad "31: --userspace-pcrs 8: exit $rc"
# Userspace records in a PCR the policy governs are judged like events: a rule of type
# "userspace" allows them; another record there is a violation.
printf 'enter-initrd' >"$WORK/phase"
boot "$LOG"
"$M" measure --pcr 11 --text enter-initrd --log "$WORK/us11.log" >/dev/null || bad "measure --pcr 11"
"$M" measure --pcr 11 --text evil-phase --log "$WORK/us11.log" >/dev/null || bad "measure --pcr 11"
jq --arg d "$(sha256sum <"$WORK/phase" | cut -d' ' -f1)" \
	'.pcrs["11"] = {"rules": [{"type": "userspace", "digests": [{"sha256": $d, "description": "enter-initrd"}]},
				  {"type": "userspace", "text": "leave-initrd|sysinit|ready"}]}' "$WORK/gen.json" >"$WORK/gen11.json"
"$M" verify --log "$LOG" --userspace-log "$WORK/us11.log" --policy "$WORK/gen11.json" --json >"$WORK/v.json"
rc=$?
[ $rc -eq 1 ] && jq -e '.log_verified and ([.policy.violations[] | select(.pcr == 11) | .userspace_record] == [1]) and
	([.policy.violations[] | select(.pcr == 11) | .text] == ["evil-phase"])' "$WORK/v.json" >/dev/null &&
	ok "31: userspace records are judged: the one no rule allows (record 1, evil-phase) is named" ||
	bad "31: userspace records not judged: exit $rc, $(jq -c .policy.violations "$WORK/v.json")"

# 32. An event with a SHA-1 digest only, on a TPM with only the SHA-256 bank: the SHA-256 replay
# skips it (the value still matches), and a SHA-1 text digest used to satisfy a required rule.
jq '.pcrs["8"].rules += [{"type": "EV_IPL", "text": "grub_cmd: set check_signatures=enforce", "required": true}]' \
	"$WORK/gen.json" >"$WORK/gen-sig.json"
"$F" "$LOG" "$WORK/sha1only.bin" append-bank sha1 grub_cmd "set check_signatures=enforce"
boot "$LOG" sha256
"$M" verify --log "$WORK/sha1only.bin" --no-userspace-log --policy "$WORK/gen-sig.json" --json >"$WORK/v.json"
rc=$?
[ $rc -eq 1 ] && jq -e '[.pcrs[] | select(.pcr == 8) | .verdict] == ["bank-not-in-log"] and .policy.checked == false' \
	"$WORK/v.json" >/dev/null && ok "32: an event without the SHA-256 digest: PCR 8 bank-not-in-log, policy not judged (exit 1)" ||
	bad "32: incomplete bank: exit $rc, $(jq -c '[[.pcrs[] | select(.pcr == 8) | .verdict], .policy.ok]' "$WORK/v.json")"

# 33. Governed but empty: every PCR 9 event dropped from the log, against an allow-list policy
# (no rule required) while the TPM's PCR 9 is not the reset value.
jq '.pcrs["9"].rules |= map(del(.required))' "$WORK/gen.json" >"$WORK/gen-allow.json"
"$F" "$LOG" "$WORK/no9.bin" drop-pcr 9
boot "$LOG"
"$M" verify --log "$WORK/no9.bin" --no-userspace-log --policy "$WORK/gen-allow.json" --json >"$WORK/v.json"
rc=$?
[ $rc -eq 1 ] && jq -e '.policy.pcrs["9"] == "violated" and any(.policy.violations[]; .pcr == 9 and (.reason | test("not its reset value")))' \
	"$WORK/v.json" >/dev/null && ok "33: a governed PCR without events but with a value: violated (exit 1)" ||
	bad "33: governed but empty: exit $rc, $(jq -c '.policy' "$WORK/v.json")"

# 34. GRUB's label is outside the digest: a second linux command with init=/bin/sh, its
# kernel_cmdline relabelled grub_cmd so that it escapes the max-1 command-line rule.
cat >"$WORK/p34.json" <<EOF
{"version": 1, "pcrs": {"8": {"rules": [
  {"type": "EV_IPL", "required": true, "max": 1, "text": "kernel_cmdline: /boot/vmlinuz-[0-9.]+-rc[0-9]+\\\\+(\\\\.signed)? root=UUID=[0-9a-f-]{36} ro quiet splash ima-policy=tcb.*"},
  {"type": "EV_IPL", "required": true, "text": "grub_cmd: linux /boot/vmlinuz-[0-9.]+-rc[0-9]+\\\\+(\\\\.signed)? root=UUID=[0-9a-f-]{36} ro quiet splash ima-policy=tcb.*"},
  {"type": "EV_IPL", "text": "(?s)grub_cmd: (?!linux ).*"}]}}}
EOF
boot "$LOG"
"$M" verify --log "$LOG" --no-userspace-log --policy "$WORK/p34.json" >"$WORK/out" &&
	ok "34: the real boot meets the command-line policy (GRUB's own labels agree with mboot's)" ||
	bad "34: the real boot: $(cat "$WORK/out")"
"$F" "$LOG" "$WORK/relabel.bin" append 8 grub_cmd "linux $KERNEL $ARGS init=/bin/sh"
"$F" "$WORK/relabel.bin" "$WORK/relabel.bin" append 8 grub_cmd "$KERNEL $ARGS init=/bin/sh"
boot "$WORK/relabel.bin"
"$M" verify --log "$WORK/relabel.bin" --no-userspace-log --policy "$WORK/p34.json" --json >"$WORK/v.json"
rc=$?
[ $rc -eq 1 ] && jq -e '.log_verified and any(.policy.violations[]; .pcr == 8 and (.reason | test("GRUB measured it as \"kernel_cmdline\""))) and
	any(.policy.violations[]; .pcr == 8 and (.reason | test("maximum")))' "$WORK/v.json" >/dev/null &&
	ok "34: a kernel_cmdline relabelled grub_cmd is named and counted as a command line (max 1 exceeded)" ||
	bad "34: relabel: exit $rc, $(jq -c '.policy.violations' "$WORK/v.json")"

# 35. A PCR-values file with PCR 0 only: the other PCRs the log extends have no value.
"$M" pcrs --json >"$WORK/pcrs.json" || bad "mboot pcrs"
jq '.banks |= map_values({"0": .["0"]})' "$WORK/pcrs.json" >"$WORK/pcr0.json"
"$M" verify --log "$WORK/relabel.bin" --pcrs "$WORK/pcr0.json" --no-userspace-log --json >"$WORK/v.json"
rc=$?
[ $rc -eq 1 ] && jq -e '.verified == false and any(.pcrs[]; .verdict == "no-value")' "$WORK/v.json" >/dev/null &&
	ok "35: values for PCR 0 only do not verify the log (no-value, exit 1)" || bad "35: partial values: exit $rc"

# Policies that used to load: "08" beside "8" (the later replaced the strict one), and none at all.
printf '{"version": 1, "pcrs": {"8": {"rules": [{"type": "EV_IPL", "text": "grub_cmd: x"}]}, "08": {"rules": [{"type": "EV_IPL", "text": "(?s).*"}]}}}\n' >"$WORK/p08.json"
"$M" policy lint "$WORK/p08.json" 2>"$WORK/err"
rc=$?
[ $rc -eq 2 ] && grep -q 'pcrs.08' "$WORK/err" && ok "a policy with \"08\" beside \"8\" is refused: $(cat "$WORK/err")" ||
	bad "\"08\": exit $rc $(cat "$WORK/err")"
printf '{"version": 1, "pcrs": {}}\n' >"$WORK/empty.json"
"$M" policy lint "$WORK/empty.json" 2>"$WORK/err"
rc=$?
[ $rc -eq 2 ] && grep -q 'governs no PCR' "$WORK/err" && ok "an empty policy is refused" || bad "empty policy: exit $rc"

# 36. Regular-expression backtracking the load-time probe misses, on 3,000 events: judged (and
# failed) within the check's step budget, not at 200,000 steps an event.
printf '{"version": 1, "pcrs": {"8": {"rules": [{"type": "EV_IPL", "text": "grub_cmd: (\\\\w+\\\\s?)+!"}, {"type": "EV_IPL", "text": "(?s).*"}]}}}\n' \
	>"$WORK/p36.json"
"$M" policy lint "$WORK/p36.json" >/dev/null 2>&1 || bad "36: the probe now refuses the pattern: pick another"
"$F" "$LOG" "$WORK/redos.bin" append 8 grub_cmd "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-!" 3000
"$M" log replay --json "$WORK/redos.bin" >"$WORK/redos.pcrs"
start=$(date +%s%N)
timeout 60 "$M" verify --log "$WORK/redos.bin" --pcrs "$WORK/redos.pcrs" --no-userspace-log --policy "$WORK/p36.json" --json >"$WORK/v.json"
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
[ $rc -eq 1 ] && [ "$ms" -lt 3000 ] && jq -e 'any(.policy.violations[]; .reason | test("budget"))' "$WORK/v.json" >/dev/null &&
	ok "36: 3,000 hostile events against a backtracking rule: refused in $ms ms (budget spent, named)" ||
	bad "36: regex budget: exit $rc in $ms ms"

# The explanation of a mismatch: 24 PCRs x 900 events, every value wrong: the single-edit search
# is capped (said so), not quadratic.
cp "$LOG" "$WORK/many.bin"
for pcr in $(seq 0 23); do
	"$F" "$WORK/many.bin" "$WORK/many.bin" append "$pcr" grub_cmd "x" 900 || bad "forge PCR $pcr"
done
"$M" log replay --json "$WORK/many.bin" | jq '.banks |= map_values(map_values("00" + .[2:]))' >"$WORK/wrong.pcrs"
start=$(date +%s%N)
timeout 120 "$M" verify --log "$WORK/many.bin" --pcrs "$WORK/wrong.pcrs" --no-userspace-log --json >"$WORK/v.json"
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
[ $rc -eq 1 ] && [ "$ms" -lt 5000 ] && jq -e 'any(.pcrs[]; .edit_search_capped == true)' "$WORK/v.json" >/dev/null &&
	ok "explaining 48 mismatching PCR values of ~900 events: $ms ms, the search capped and said so" ||
	bad "explanation: exit $rc in $ms ms"

echo "tpm-fail-closed: $failures failed"
[ "$failures" -eq 0 ]
