#!/bin/bash
# `mboot verify --policy` against a TPM: the real GRUB boot of ima-evm-utils' sample machine is
# rebuilt in a swtpm (its true SHA-1 PCRs, from that machine's PCR dump, are checked first);
# the hand-written example policy of docs/policy.md and a policy generated from the log hold;
# a boot with another kernel command line verifies but breaks the policy, naming the event;
# a log whose command-line text was edited fails verification and the policy is not trusted.
. "${MB_TPM_TESTS:-$(dirname "$0")}/swtpm-env.sh"
M=${MBOOT:?}
C=${MB_TESTDATA:?}/corpus
S=${MB_SOURCE_ROOT:?}
LOG=$C/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9

boot() { # boot LOG: a fresh swtpm holding that boot's PCRs
	swtpm_stop 2>/dev/null || true
	swtpm_start
	swtpm_banks "sha1 sha256"
	"$M" log extend --tcti "$TCTI" "$1" >"$WORK/extend" 2>&1 || fail "log extend $1: $(cat "$WORK/extend")"
}

boot "$LOG"
# The rebuilt TPM holds what the real one held (tsspcrread dump, SHA-1, PCRs 0-9).
"$M" pcrs --json --bank sha1 >"$WORK/pcrs.json" || fail "mboot pcrs"
for pcr in 0 1 2 3 4 5 6 7 8 9; do
	want=$(sed -n "s/^$pcr: //p" "$C/ima-evm-utils/sample-tpm-2.0-pcrs-8-9" | head -1)
	got=$(jq -r ".banks.sha1[\"$pcr\"]" "$WORK/pcrs.json")
	[ "$want" = "$got" ] || fail "PCR $pcr is $got, the real machine had $want"
done
echo "ok: swtpm holds the real machine's SHA-1 PCRs 0-9"

"$M" verify --log "$LOG" --no-userspace-log --policy "$S/docs/policy-example.json" >"$WORK/out" ||
	fail "verify --policy example exited $?: $(cat "$WORK/out")"
grep -q "meets the policy" "$WORK/out" || fail "no verdict: $(cat "$WORK/out")"
echo "ok: the documented example policy holds on the real boot"

"$M" policy generate --from-log "$LOG" -o "$WORK/gen.json" || fail "policy generate"
"$M" verify --log "$LOG" --no-userspace-log --policy "$WORK/gen.json" --json >"$WORK/out.json" ||
	fail "verify --policy generated exited $?"
jq -e '.verified and .policy.ok and .policy.checked' "$WORK/out.json" >/dev/null || fail "JSON verdict: $(cat "$WORK/out.json")"
echo "ok: a policy generated from the log holds (JSON verdict)"

# Another boot of the same machine with init=/bin/sh on the kernel command line: the log is
# honest (it verifies), the policy refuses it and names the kernel_cmdline event.
"$M" predict --log "$LOG" --cmdline "root=UUID=119f1a79-c391-4e37-905d-3a503284cadb ro quiet splash ima-policy=tcb init=/bin/sh" \
	--write-log "$WORK/evil.bin" >/dev/null || fail "predict for the other boot"
boot "$WORK/evil.bin"
"$M" verify --log "$WORK/evil.bin" --no-userspace-log --policy "$S/docs/policy-example.json" --json >"$WORK/evil.json"
rc=$?
[ $rc -eq 1 ] || fail "verify --policy on the init=/bin/sh boot exited $rc, expected 1"
jq -e '.log_verified == true and .verified == false and .policy.ok == false' "$WORK/evil.json" >/dev/null || fail "verdicts: $(cat "$WORK/evil.json")"
jq -e '.policy.violations | any(.pcr == 8 and (.text // "" | test("^kernel_cmdline: .*init=/bin/sh$")) and (.reason | test("no rule")))' \
	"$WORK/evil.json" >/dev/null || fail "the kernel_cmdline event is not named: $(jq -c .policy "$WORK/evil.json")"
echo "ok: a boot with init=/bin/sh verifies but breaks the policy, naming the kernel_cmdline event"

# The honest TPM state, but the log's command-line text edited: verification fails (the data does
# not hash to its digest) and the policy is not judged on evidence that proves nothing.
boot "$LOG"
n=$("$M" log show --json "$LOG" | jq '[.events[] | select(.data | startswith("6b65726e656c5f636d646c696e65"))][0].index')
"$MB_TAMPER" "$LOG" "$WORK/edited.bin" edit-data "$n" || fail "mb-tamper"
"$M" verify --log "$WORK/edited.bin" --no-userspace-log --policy "$S/docs/policy-example.json" >"$WORK/out"
rc=$?
[ $rc -eq 1 ] || fail "verify of an edited log exited $rc"
grep -q "not checked" "$WORK/out" || fail "the policy was judged on an unverified log: $(cat "$WORK/out")"
echo "ok: an edited log fails verification; the policy is not judged on it"

# A broken policy: exit 2 before any TPM access, with the line.
printf '{"version": 1,\n"pcrs": {"8": {"rules": [{"type": "EV_IPL", "text": "(a+)+$"}]}}}\n' >"$WORK/bad.json"
"$M" verify --log "$LOG" --policy "$WORK/bad.json" 2>"$WORK/err"
[ $? -eq 2 ] && grep -q "line 2: pcrs.8.rules\[0\]" "$WORK/err" || fail "bad policy: $(cat "$WORK/err")"
echo "ok: a hostile policy is refused (exit 2, line and field)"
echo "tpm-policy: all passed"
