#!/bin/bash
# Tampering: a swtpm holds the boot of a real machine (arch-linux-workstation.bin, two
# banks, rebuilt with `mboot log extend`; its true values are checked in tpm-corpus);
# `mboot verify` of each altered copy of the log must exit 1 and name the right PCR.
. "${MB_TPM_TESTS:-$(dirname "$0")}/swtpm-env.sh"
M=${MBOOT:?}
T=${MB_TAMPER:?}
LOG=${MB_TESTDATA:?}/corpus/go-tpm-tools/arch-linux-workstation.bin

swtpm_start
swtpm_banks "sha1 sha256"
"$M" log extend --tcti "$TCTI" "$LOG" >/dev/null 2>&1 || fail "log extend"
"$M" verify --log "$LOG" > "$WORK/v" || fail "the untouched log does not verify: $(cat "$WORK/v")"
echo "ok: untouched log verifies"

# Event facts from the untouched log: "index pcr type digest_check".
"$M" log show --json "$LOG" | jq -r '.events[] | "\(.index) \(.pcr) \(.type) \(.digest_check)"' > "$WORK/events"
pcr_of() { awk -v i="$1" '$1 == i { print $2 }' "$WORK/events"; }
type_of() { awk -v i="$1" '$1 == i { print $3 }' "$WORK/events"; }

# expect NAME "PCRS" VERDICT -- tamper args: PCRS are the PCRs (sorted, space separated)
# whose sha256 value must fail with VERDICT; nothing else may fail.
expect() {
	local name=$1 pcrs=$2 verdict=$3
	shift 4
	"$T" "$LOG" "$WORK/t.log" "$@" || fail "$name: mb-tamper $*"
	"$M" verify --log "$WORK/t.log" --json > "$WORK/v.json"
	local rc=$?
	[ $rc -eq 1 ] || fail "$name: verify exited $rc, expected 1"
	local got
	got=$(jq -r '[.pcrs[] | select(.bank == "sha256" and .verdict != "verified" and .verdict != "not-covered") | .pcr] | unique | map(tostring) | join(" ")' "$WORK/v.json")
	[ "$got" = "$pcrs" ] || fail "$name: failing sha256 PCRs '$got', expected '$pcrs'"
	local v
	v=$(jq -r --arg p "${pcrs%% *}" '[.pcrs[] | select(.bank == "sha256" and (.pcr|tostring) == $p) | .verdict][0]' "$WORK/v.json")
	[ "$v" = "$verdict" ] || fail "$name: PCR ${pcrs%% *} verdict '$v', expected '$verdict'"
	"$M" verify --log "$WORK/t.log" > "$WORK/v.txt"
	echo "ok: $name: exit 1, PCR $pcrs $verdict"
}

# 1. Edited data of an event whose digest covers its data (the SecureBoot variable).
e=$(awk '$3 == "EV_EFI_VARIABLE_DRIVER_CONFIG" && $4 == "match" { print $1; exit }' "$WORK/events")
expect "edited event data (event $e)" "$(pcr_of "$e")" data-mismatch -- edit-data "$e"
grep -q "event $e (EV_EFI_VARIABLE_DRIVER_CONFIG): its data does not hash" "$WORK/v.txt" || fail "event $e not named"

# 2. A removed event (the first boot application, PCR 4).
e=$(awk '$3 == "EV_EFI_BOOT_SERVICES_APPLICATION" { print $1; exit }' "$WORK/events")
expect "removed event $e" "$(pcr_of "$e")" mismatch -- remove "$e"

# 3. Two events swapped across PCRs: a PCR 2 driver and the PCR 4 separator trade PCRs.
a=$(awk '$3 == "EV_EFI_BOOT_SERVICES_DRIVER" { print $1; exit }' "$WORK/events")
b=$(awk '$2 == 4 && $3 == "EV_SEPARATOR" { print $1; exit }' "$WORK/events")
expect "events $a and $b swapped across PCRs" "$(printf '%s\n' "$(pcr_of "$a")" "$(pcr_of "$b")" | sort -n | tr '\n' ' ' | sed 's/ $//')" \
	mismatch -- swap-pcr "$a" "$b"

# 3b. Two events of one PCR in the other order (Boot#### variables, PCR 1).
a=$(awk '$3 == "EV_EFI_VARIABLE_BOOT" { print $1; exit }' "$WORK/events")
expect "events $a and $((a + 1)) reordered" "$(pcr_of "$a")" mismatch -- swap "$a" "$((a + 1))"
[ "$(jq -c --argjson p "$(pcr_of "$a")" '.pcrs[] | select(.bank == "sha256" and .pcr == $p) | .matches_with_events_swapped' "$WORK/v.json")" = "[$a,$((a + 1))]" ] ||
	fail "the reordering is not named"
grep -q "matches with events $a and $((a + 1)) in the other order" "$WORK/v.txt" || fail "reordering not explained"

# 4. An added event: a boot loader line that never reached the TPM, before the last event.
last=$(tail -n 1 "$WORK/events" | cut -d' ' -f1)
expect "added event" 8 mismatch -- add "$last" 8 "linux /vmlinuz init=/bin/sh"
[ "$(jq -r '.pcrs[] | select(.bank == "sha256" and .pcr == 8) | .matches_without_event' "$WORK/v.json")" = "$last" ] ||
	fail "the added event ($last) is not named"
grep -q "matches without event $last" "$WORK/v.txt" || fail "added event not explained"
# ... and appended after the last event: the TPM value is a prefix of the log.
expect "event appended" 8 mismatch -- add "$((last + 1))" 8 "linux /vmlinuz init=/bin/sh"
[ "$(jq -r '.pcrs[] | select(.bank == "sha256" and .pcr == 8) | .last_agreeing_event' "$WORK/v.json")" = "$last" ] ||
	fail "the last agreeing event ($last) is not named"

# 5. A digest replaced (the second boot application's).
e=$(awk '$3 == "EV_EFI_BOOT_SERVICES_APPLICATION" { n++; if (n == 2) { print $1; exit } }' "$WORK/events")
expect "digest of event $e replaced" "$(pcr_of "$e")" mismatch -- digest "$e"

# 6. A log cut short after the first boot application: PCR 4 misses its second one
#    (PCR 8, now without events, is reported not covered: 8-23 carry no claim).
e=$(awk '$3 == "EV_EFI_BOOT_SERVICES_APPLICATION" { n++; if (n == 2) { print $1; exit } }' "$WORK/events")
expect "log cut before event $e" "$(pcr_of "$e")" mismatch -- cut "$e"

# 7. The SHA-256 bank dropped from the two-bank log: every PCR the log touches fails
#    in sha256 (the TPM has the bank, the log does not), while sha1 still verifies.
expected=$(awk '$4 != "not-extended" { print $2 }' "$WORK/events" | sort -n | uniq | tr '\n' ' ' | sed 's/ $//')
expect "sha256 bank dropped" "$expected" bank-not-in-log -- drop-bank sha256
n1=$(jq '[.pcrs[] | select(.bank == "sha1" and .verdict == "verified")] | length' "$WORK/v.json")
[ "$n1" -gt 0 ] || fail "sha1 should still verify"
# Limited with --bank sha1 it verifies, and sha256 is reported unverified, never verified.
"$M" verify --log "$WORK/t.log" --bank sha1 --json > "$WORK/v.json" || fail "--bank sha1 should verify"
[ "$(jq '[.pcrs[] | select(.bank == "sha256" and .verdict == "verified")] | length' "$WORK/v.json")" -eq 0 ] ||
	fail "sha256 reported verified"
[ "$(jq '[.pcrs[] | select(.bank == "sha256" and .verdict == "unverified")] | length' "$WORK/v.json")" -gt 0 ] ||
	fail "sha256 not reported unverified"
echo "ok: --bank sha1 verifies the sha1 bank and reports sha256 unverified"
