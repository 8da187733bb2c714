#!/bin/bash
# `mboot predict` of PCR 7 (Secure Boot variables, shim's SbatLevel) and PCR 14 (shim's MokList)
# on a real Secure Boot machine with shim (keylime's mb_log_secureboot.bin). The updates are
# made by efitools (cert-to-efi-sig-list, sign-efi-sig-list, hash-to-efi-sig-list) from openssl
# certificates; the expected event is a UEFI_VARIABLE_DATA built here with printf/xxd around
# the variable value tpm2_eventlog prints, hashed by openssl, and the expected PCR is the replay
# of tpm2_eventlog's digests with that one replaced, also by openssl.
set -u
M=${MBOOT:?}
LOG=${MB_TESTDATA:?}/corpus/keylime-tests/mb_log_secureboot.bin
NOSHIM=$MB_TESTDATA/corpus/go-attestation/sb_cert_eventlog
# shellcheck source=tests/cli/secureboot-lib.sh
. "$(dirname "$0")/secureboot-lib.sh"
sb_begin
predicted() { awk -v p="$1" '$1 == p || $1 == p":" { print tolower(substr($NF, 3)) }' "$2"; }

# Nothing changes: PCR 7 and 14 as tpm2_eventlog's digests replay.
"$M" predict --log "$LOG" >"$W/none.txt" 2>/dev/null
[ "$(predicted 7 "$W/none.txt")" = "$(replay 7 -1 -)" ] && [ "$(predicted 14 "$W/none.txt")" = "$(replay 14 -1 -)" ] &&
	ok "no change: PCR 7 and 14 equal the replay of tpm2_eventlog's digests" || bad "no-change PCR 7/14 differ from tpm2_eventlog's replay"

# A test db key and KEK; the db ESL (efitools), signed as an append by the KEK.
for k in db kek; do
	openssl req -new -x509 -newkey rsa:2048 -nodes -subj "/CN=mboot test $k/" -keyout "$W/$k.key" -out "$W/$k.crt" \
		-days 30 2>/dev/null || bad "openssl req $k"
done
cert-to-efi-sig-list -g 11111111-2222-3333-4444-555555555555 "$W/db.crt" "$W/db.esl" >/dev/null
sign-efi-sig-list -a -g 11111111-2222-3333-4444-555555555555 -k "$W/kek.key" -c "$W/kek.crt" db "$W/db.esl" "$W/db.auth" >/dev/null 2>&1
[ -s "$W/db.esl" ] && [ -s "$W/db.auth" ] || bad "efitools made no ESL / authenticated update"

# db += the signed update: today's db (tpm2_eventlog's VariableData) followed by the ESL.
{ var_data "$n_db" | xxd -r -p; cat "$W/db.esl"; } >"$W/db.next"
want_ev=$(var_event "$GUID_SECDB" db "$W/db.next" | sha256_hex)
"$M" predict --log "$LOG" --efi-var db+="$W/db.auth" --write-log "$W/db-append.bin" >"$W/db-append.txt" 2>"$W/err"; rc=$?
got_ev=$("$M" log show --json "$W/db-append.bin" | jq -r ".events[] | select(.index == $n_db) | .digests.sha256")
[ "$rc" = 0 ] && [ "$got_ev" = "$want_ev" ] && ok "db += signed ESL: event $n_db's digest is openssl's over the UEFI_VARIABLE_DATA" ||
	bad "db append: rc $rc, event digest $got_ev, want $want_ev ($(cat "$W/err"))"
[ "$(predicted 7 "$W/db-append.txt")" = "$(replay 7 "$n_db" "$want_ev")" ] && ok "db += signed ESL: PCR 7 is the replay with that event" ||
	bad "db append: PCR 7 $(predicted 7 "$W/db-append.txt"), want $(replay 7 "$n_db" "$want_ev")"
[ "$(predicted 14 "$W/db-append.txt")" = "$(replay 14 -1 -)" ] && ok "db append: PCR 14 unchanged" || bad "db append moved PCR 14"
# The same ESL, unsigned and replacing db: the Microsoft UEFI CA that verified shim is gone.
"$M" predict --log "$LOG" --efi-var db="$W/db.esl" >"$W/db-replace.txt" 2>"$W/err"; rc=$?
[ "$rc" = 1 ] && [ -z "$(predicted 7 "$W/db-replace.txt")" ] && grep -q "PCR 7 cannot be predicted.*Microsoft Corporation UEFI CA 2011.*not in the new db" "$W/err" &&
	ok "db replaced without the CA that verified shim: PCR 7 unpredictable, no value, exit 1" ||
	bad "db replace: rc $rc, PCR 7 '$(predicted 7 "$W/db-replace.txt")', $(cat "$W/err")"

# dbx += today's dbx (all duplicates, UEFI SetVariable appends none) and an Authenticode hash.
EFI_BIN=$(ls /usr/lib/shim/shimx64.efi /usr/lib/systemd/boot/efi/systemd-bootx64.efi 2>/dev/null | head -1)
hash-to-efi-sig-list "$EFI_BIN" "$W/hash.esl" >/dev/null
var_data "$n_dbx" | xxd -r -p >"$W/dbx.today"
cat "$W/dbx.today" "$W/hash.esl" >"$W/dbx.update"
cat "$W/dbx.today" "$W/hash.esl" >"$W/dbx.next"
want_ev=$(var_event "$GUID_SECDB" dbx "$W/dbx.next" | sha256_hex)
"$M" predict --log "$LOG" --efi-var dbx+="$W/dbx.update" >"$W/dbx.txt" 2>"$W/err"; rc=$?
[ "$rc" = 0 ] && [ "$(predicted 7 "$W/dbx.txt")" = "$(replay 7 "$n_dbx" "$want_ev")" ] &&
	ok "dbx += (today's entries + a hash): today's entries not appended again, PCR 7 as openssl replays it" ||
	bad "dbx append: rc $rc, PCR 7 $(predicted 7 "$W/dbx.txt"), want $(replay 7 "$n_dbx" "$want_ev"); $(cat "$W/err")"
"$M" predict --log "$LOG" --efi-var dbx+="$W/dbx.today" >"$W/dbx-same.txt" 2>/dev/null
[ "$(predicted 7 "$W/dbx-same.txt")" = "$(replay 7 -1 -)" ] && ok "dbx += its own entries: PCR 7 unchanged" || bad "dbx += duplicates moved PCR 7"
# The same entry (owner and data, 48 bytes) in a list of another signature type is no duplicate
# for EDK2, which compares entries within lists of the same type: the whole list is appended.
first=$(xxd -p -s 28 -l 48 "$W/dbx.today" | tr -d '\n')
printf '%s%s' "00112233445566778899aabbccddeeff4c0000000000000030000000" "$first" | xxd -r -p >"$W/other-type.esl"
cat "$W/dbx.today" "$W/other-type.esl" >"$W/dbx.next2"
want_ev=$(var_event "$GUID_SECDB" dbx "$W/dbx.next2" | sha256_hex)
"$M" predict --log "$LOG" --efi-var dbx+="$W/other-type.esl" >"$W/dbx-type.txt" 2>"$W/err"; rc=$?
[ "$rc" = 0 ] && [ "$(predicted 7 "$W/dbx-type.txt")" = "$(replay 7 "$n_dbx" "$want_ev")" ] &&
	ok "dbx += today's first entry in a list of another type: appended, PCR 7 as openssl replays it" ||
	bad "dbx += another type: rc $rc, PCR 7 $(predicted 7 "$W/dbx-type.txt"), want $(replay 7 "$n_dbx" "$want_ev"); $(cat "$W/err")"
# dbx revoking the certificate that verified shim (today's authority event's, by efitools).
n_auth=$(awk '/^- EventNum:/ { n = $3 } /EV_EFI_VARIABLE_AUTHORITY/ { a = n } /UnicodeName: db$/ && a == n { print n; exit }' "$W/log.yaml")
var_data "$n_auth" | cut -c33- | xxd -r -p | openssl x509 -inform DER -out "$W/ca.pem" 2>/dev/null
cert-to-efi-sig-list "$W/ca.pem" "$W/ca.esl" >/dev/null
"$M" predict --log "$LOG" --efi-var dbx+="$W/ca.esl" >"$W/revoke.txt" 2>"$W/err"; rc=$?
[ "$rc" = 1 ] && [ -z "$(predicted 7 "$W/revoke.txt")" ] && grep -q "PCR 7 cannot be predicted.*dbx revokes" "$W/err" &&
	ok "dbx revokes the CA of authority event $n_auth: PCR 7 unpredictable" || bad "dbx revocation: rc $rc, $(cat "$W/err")"

# dbx revoking the Authenticode SHA-256 of today's first EFI application (tpm2_eventlog's digest),
# an ESL built here: the boot stops there, PCR 4 and 7 unpredictable.
app=$(awk '/^- EventNum:/ { n = $3 } /EventType: EV_EFI_BOOT_SERVICES_APPLICATION/ { on = 1 }
	on && /Digest:/ { gsub(/"/, "", $2); print n, $2; exit }' "$W/log.yaml")
printf '2616c4c14c509240aca941f9369343284c0000000000000030000000%s%s' 11111111222233334444555555555555 "${app#* }" |
	xxd -r -p >"$W/app-hash.esl"
"$M" predict --log "$LOG" --efi-var dbx+="$W/app-hash.esl" >"$W/app.txt" 2>"$W/err"; rc=$?
[ "$rc" = 1 ] && [ -z "$(predicted 4 "$W/app.txt")" ] && [ -z "$(predicted 7 "$W/app.txt")" ] &&
	grep -q "PCR 4 cannot be predicted.*event ${app%% *}: the new dbx holds" "$W/err" &&
	ok "dbx revokes the Authenticode hash of event ${app%% *}: PCR 4 and 7 unpredictable" || bad "dbx hash revocation: rc $rc, $(cat "$W/err")"

# shim's SbatLevel (its CSV text) in PCR 7.
printf 'sbat,1,2023012900\nshim,2\ngrub,3\ngrub.debian,4\n' >"$W/sbat.csv"
want_ev=$(var_event "$GUID_SHIM" SbatLevel "$W/sbat.csv" | sha256_hex)
"$M" predict --log "$LOG" --sbat-level "$W/sbat.csv" >"$W/sbat.txt" 2>"$W/err"; rc=$?
[ "$rc" = 0 ] && [ "$(predicted 7 "$W/sbat.txt")" = "$(replay 7 "$n_sbat" "$want_ev")" ] &&
	ok "--sbat-level: PCR 7 with shim's SbatLevel event recomputed (openssl)" ||
	bad "--sbat-level: rc $rc, PCR 7 $(predicted 7 "$W/sbat.txt"), want $(replay 7 "$n_sbat" "$want_ev"); $(cat "$W/err")"
# today's SbatLevel given back: the real digest
var_data "$n_sbat" | xxd -r -p >"$W/sbat.today"
"$M" predict --log "$LOG" --sbat-level "$W/sbat.today" >"$W/sbat-same.txt" 2>/dev/null
[ "$(predicted 7 "$W/sbat-same.txt")" = "$(replay 7 -1 -)" ] && ok "--sbat-level with today's text: PCR 7 unchanged" || bad "--sbat-level today's moved PCR 7"

# shim's MokList in PCR 14: H(contents).
want_ev=$(sha256_hex <"$W/db.esl")
"$M" predict --log "$LOG" --mok-list "$W/db.esl" >"$W/mok.txt" 2>"$W/err"; rc=$?
[ "$rc" = 0 ] && [ "$(predicted 14 "$W/mok.txt")" = "$(replay 14 "$n_mok" "$want_ev")" ] &&
	[ "$(predicted 7 "$W/mok.txt")" = "$(replay 7 -1 -)" ] && ok "--mok-list: PCR 14's MokList event is H(file), PCR 7 unchanged" ||
	bad "--mok-list: rc $rc, PCR 14 $(predicted 14 "$W/mok.txt"), want $(replay 14 "$n_mok" "$want_ev"); $(cat "$W/err")"

# Changes that match nothing: named, no values, exit 1.
"$M" predict --log "$LOG" --efi-var dbt="$W/db.esl" >"$W/out" 2>"$W/err"; rc=$?
[ "$rc" = 1 ] && [ ! -s "$W/out" ] && grep -q -- "--efi-var dbt=.*matched no event" "$W/err" && ok "dbt on a log without dbt: unmatched, exit 1" ||
	bad "dbt unmatched: rc $rc"
"$M" predict --log "$NOSHIM" --mok-list "$W/db.esl" --json >"$W/out" 2>/dev/null; rc=$?
[ "$rc" = 1 ] && [ "$(jq -r '.unmatched[0].option' "$W/out")" = "--efi-var" ] && [ "$(jq '.banks | length' "$W/out")" = 0 ] &&
	ok "--mok-list on a boot without shim: unmatched (--json), no values" || bad "--mok-list without shim: rc $rc $(cat "$W/out")"

# Hostile files and bad names exit 2.
hostile() {
	"$M" predict --log "$LOG" "$@" >/dev/null 2>"$W/err"; local rc=$?
	[ "$rc" = 2 ] && ok "hostile $*: exit 2 ($(head -c 120 "$W/err"))" || bad "hostile $*: exit $rc"
}
head -c 100 "$W/db.esl" >"$W/trunc.esl"; hostile --efi-var db="$W/trunc.esl"
{ esl_hdr 60 00000000 00000000 | xxd -r -p; head -c 32 /dev/zero; } >"$W/size0.esl"; hostile --efi-var db+="$W/size0.esl"
{ esl_hdr 60 00000000 ffffffff | xxd -r -p; head -c 32 /dev/zero; } >"$W/huge.esl"; hostile --efi-var dbx="$W/huge.esl"
{ esl_hdr 20 00000000 30000000 | xxd -r -p; } >"$W/short.esl"; hostile --efi-var KEK="$W/short.esl"
{ esl_hdr 60 ffffff00 10000000 | xxd -r -p; head -c 32 /dev/zero; } >"$W/hdr.esl"; hostile --efi-var db="$W/hdr.esl"
{ head -c 16 "$W/db.auth"; printf '\xff\xff\xff\x7f'; tail -c +21 "$W/db.auth"; } >"$W/auth-huge"; hostile --efi-var db+="$W/auth-huge"
head -c 40 "$W/db.auth" >"$W/auth-trunc"; hostile --efi-var db+="$W/auth-trunc"
hostile --mok-list "$W/trunc.esl"
hostile --efi-var Boot0000="$W/db.esl"
hostile --efi-var SbatLevel+="$W/sbat.csv"
hostile --efi-var "=$W/db.esl"
hostile --efi-var db="$W/missing"

echo "predict secureboot: $fails failed"
[ "$fails" = 0 ]
