#!/bin/bash
# `mboot predict` on a real GRUB boot (ima-evm-utils' sample machine): given the boot's own
# command line it rebuilds GRUB's measured strings byte for byte (the predicted log is the real
# log); given a new kernel its PCR 9 event carries sha256sum's digest; what it cannot predict
# exits 1 and is named.
set -u
M=${MBOOT:?}
C=${MB_TESTDATA:?}/corpus
LOG=$C/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }

"$M" predict --help | grep -q "Usage: mboot predict" && ok "--help" || bad "--help"
# docs/predict.md says what each option of --help predicts, and calls none of them "not yet predicted".
S=${MB_SOURCE_ROOT:?}
undocumented=$(for o in $("$M" predict --help | grep -oE -- '--[a-z-]+' | sort -u); do
	grep -q -- "\`$o" "$S/docs/predict.md" || echo "$o"; done)
[ -z "$undocumented" ] && ok "docs/predict.md documents every option of predict --help" ||
	bad "docs/predict.md lacks:" $undocumented
tr '\n' ' ' <"$S/docs/predict.md" | grep -oiE "not yet predicted[^.]*\." | grep -qiE "PCR 4|EFI application" &&
	bad "docs/predict.md calls --efi (PCR 4 EFI applications) not yet predicted" || ok "docs/predict.md: --efi is predicted"
"$M" predict --log "$LOG" --bogus >/dev/null 2>&1; [ $? = 2 ] && ok "unknown option: exit 2" || bad "unknown option"
"$M" predict --log "$W/none" >/dev/null 2>&1; [ $? = 2 ] && ok "missing log: exit 2" || bad "missing log"

"$M" predict --log "$LOG" --write-log "$W/same.bin" >/dev/null && cmp -s "$W/same.bin" "$LOG" &&
	ok "nothing replaced: the predicted log is the real log" || bad "no-change prediction differs"

# The command line this machine really booted with (its kernel_cmdline event, from the log):
real=$("$M" log show --json "$LOG" | jq -r '.events[] | .data' | while read -r h; do printf '%s' "$h" | xxd -r -p | tr -d '\0'; echo; done |
	sed -n 's/^kernel_cmdline: [^ ]* //p' | head -1)
[ -n "$real" ] || bad "no kernel_cmdline in the sample log"
"$M" predict --log "$LOG" --cmdline "$real" --write-log "$W/rebuilt.bin" >/dev/null
cmp -s "$W/rebuilt.bin" "$LOG" && ok "GRUB's linux commands and kernel_cmdline rebuilt from '$real' equal the real ones byte for byte" ||
	bad "rebuilt GRUB strings differ from the real log"

# (updated in place: the name GRUB loads today; test-predict-honest gives another name)
mkdir -p "$W/new"
head -c 10000 /dev/urandom >"$W/new/vmlinuz-5.7.0-rc2+"
# A new kernel: its PCR 9 file events are recomputed, but this machine's shim also measured each
# kernel GRUB loaded into PCR 4 (events 131, 132, 155, 156), which a file's digest does not give:
# exit 1, PCR 4 unpredictable and without a value (this used to exit 0 with PCR 4 unchanged).
"$M" predict --log "$LOG" --kernel "$W/new/vmlinuz-5.7.0-rc2+" --json --write-log "$W/k.bin" >"$W/k.json"; rc=$?
want=$(sha256sum <"$W/new/vmlinuz-5.7.0-rc2+" | cut -d' ' -f1)
[ $rc = 1 ] && [ "$(jq -c .changed "$W/k.json")" = "[9]" ] && [ "$(jq -c '.unpredictable | keys' "$W/k.json")" = '["4"]' ] &&
	jq -e '.unpredictable["4"] | test("event 131")' "$W/k.json" >/dev/null &&
	jq -e '[.banks[] | has("4")] == [false, false] and [.banks[] | has("9")] == [true, true]' "$W/k.json" >/dev/null &&
	"$M" log show --json --pcr 9 "$W/k.bin" | jq -e --arg d "$want" '[.events[] | select(.digests.sha256 == $d)] | length == 2' >/dev/null &&
	ok "a new kernel: PCR 9 changes, both kernel file events carry sha256sum's digest; PCR 4 (the kernel's EFI application events) unpredictable, no value" ||
	bad "new kernel: rc $rc $(jq -c '[.changed, .unpredictable]' "$W/k.json")"

# Two configs measured (the ESP's grub.cfg and /boot/grub/grub.cfg): a bare FILE is ambiguous.
printf 'linux /boot/vmlinuz-5.7.0-rc2+ root=/dev/sda1 ro\ninitrd /boot/initrd.img-5.7.0-rc2+\n' >"$W/grub.cfg"
"$M" predict --log "$LOG" --grub-cfg "$W/grub.cfg" >"$W/a.out" 2>"$W/a.err"; rc=$?
[ $rc = 2 ] && [ ! -s "$W/a.out" ] && grep -qF '(hd0,gpt1)/EFI/ubuntu/grub.cfg, (hd0,gpt2)/boot/grub/grub.cfg' "$W/a.err" &&
	ok "--grub-cfg FILE when two configs were measured: exit 2, both measured paths named" || bad "ambiguous --grub-cfg: rc $rc $(cat "$W/a.err")"

# A grub.cfg that does not run today's commands: PCR 8 cannot be predicted, and says why.
"$M" predict --log "$LOG" --grub-cfg "(hd0,gpt2)/boot/grub/grub.cfg=$W/grub.cfg" --json >"$W/u.json"; rc=$?
[ $rc = 1 ] && jq -e '.unpredictable["8"] | test("grub.cfg changed")' "$W/u.json" >/dev/null &&
	ok "a grub.cfg without today's commands: exit 1, PCR 8 named as unpredictable" || bad "unpredictable: rc $rc $(jq -c .unpredictable "$W/u.json")"
# One reason, not one per command: the first missing command named, the others counted.
jq -e '.unpredictable["8"] | (split("is not in it") | length) == 2 and test("[0-9]+ more of today.s commands are not in it") and length < 500' \
	"$W/u.json" >/dev/null && ok "PCR 8's reason names the first missing command and counts the rest" ||
	bad "PCR 8's reason repeats itself: $(jq -r '.unpredictable["8"] | .[0:300]' "$W/u.json")"

echo "predict cli: $fails failed"
[ "$fails" = 0 ]
