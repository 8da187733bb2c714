#!/bin/bash
# `mboot policy generate --from-log LOG --efi-var/--sbat-level/--mok-list`: the policy of the boot
# after a Secure Boot update, on a real Secure Boot machine with shim (keylime's
# mb_log_secureboot.bin). The updates are made here by efitools and openssl; the PCR 7 (and 14)
# value the policy must hold is computed outside mboot: the UEFI_VARIABLE_DATA built with
# printf/xxd, hashed and replayed over tpm2_eventlog's digests by openssl (secureboot-lib.sh, as
# test-predict-secureboot). Today's log must fail the post-update policy on PCR 7 alone; an
# update that makes PCR 7 unpredictable, or matches no event, is refused (exit 1, no file);
# hostile signature lists exit 2.
set -u
M=${MBOOT:?}
LOG=${MB_TESTDATA:?}/corpus/keylime-tests/mb_log_secureboot.bin
# shellcheck source=tests/cli/secureboot-lib.sh
. "$(dirname "$0")/secureboot-lib.sh"
sb_begin

# PCR $1's value in policy $2 (sha256), "" when it has none
value() { jq -r --arg p "$1" '.pcrs[$p].values.sha256 // ""' "$2"; }
# verify LOG (PCRs as tpm2_eventlog's digests replay: the log is intact) against policy $1: the
# exit code, the PCRs the policy found violated (JSON in $W/v.json)
"$M" log replay "$LOG" >"$W/pcrs.txt" 2>/dev/null || bad "log replay"
check() {
	local rc
	"$M" verify --log "${2:-$LOG}" --no-userspace-log --pcrs "${3:-$W/pcrs.txt}" --policy "$1" --json >"$W/v.json" 2>/dev/null
	rc=$?
	echo "$rc $(jq -r '[.policy.violations[].pcr] | unique | map(tostring) | join(",")' "$W/v.json")"
}
gen() { "$M" policy generate --from-log "$LOG" "$@" 2>"$W/err"; }

# No update: PCR 7 as tpm2_eventlog's digests replay, and today's boot meets the policy.
gen -o "$W/today.json"; rc=$?
[ "$rc" = 0 ] && [ "$(value 7 "$W/today.json")" = "$(replay 7 -1 -)" ] &&
	ok "no update: PCR 7 is openssl's replay of tpm2_eventlog's digests" || bad "no update: rc $rc, PCR 7 $(value 7 "$W/today.json")"
[ "$(check "$W/today.json")" = "0 " ] && ok "no update: today's log meets the policy" || bad "no update: verify says $(check "$W/today.json")"

# db += a signed update (efitools): today's db followed by the ESL.
openssl req -new -x509 -newkey rsa:2048 -nodes -subj "/CN=mboot test db/" -keyout "$W/db.key" -out "$W/db.crt" \
	-days 30 2>/dev/null || bad "openssl req db"
openssl req -new -x509 -newkey rsa:2048 -nodes -subj "/CN=mboot test kek/" -keyout "$W/kek.key" -out "$W/kek.crt" \
	-days 30 2>/dev/null || bad "openssl req kek"
cert-to-efi-sig-list -g 11111111-2222-3333-4444-555555555555 "$W/db.crt" "$W/db.esl" >/dev/null
sign-efi-sig-list -a -g 11111111-2222-3333-4444-555555555555 -k "$W/kek.key" -c "$W/kek.crt" db "$W/db.esl" "$W/db.auth" >/dev/null 2>&1
[ -s "$W/db.esl" ] && [ -s "$W/db.auth" ] || bad "efitools made no ESL / authenticated update"
{ var_data "$n_db" | xxd -r -p; cat "$W/db.esl"; } >"$W/db.next"
want_db=$(replay 7 "$n_db" "$(var_event "$GUID_SECDB" db "$W/db.next" | sha256_hex)")
gen --efi-var db+="$W/db.auth" -o "$W/db.json"; rc=$?
[ "$rc" = 0 ] && [ "$(value 7 "$W/db.json")" = "$want_db" ] &&
	ok "db += signed ESL: the policy's PCR 7 is openssl's replay with the new db event" ||
	bad "db append: rc $rc, PCR 7 $(value 7 "$W/db.json"), want $want_db ($(cat "$W/err"))"
[ "$(value 0 "$W/db.json")" = "$(value 0 "$W/today.json")" ] && [ "$(jq -c '.pcrs["8"]' "$W/db.json")" = "$(jq -c '.pcrs["8"]' "$W/today.json")" ] &&
	ok "db append: PCR 0's value and PCR 8's rules are today's" || bad "db append changed PCR 0 or 8"
[ "$(check "$W/db.json")" = "1 7" ] && jq -e '.policy.violations[] | select(.pcr == 7) | .reason | test("the policy expects '"$want_db"'")' "$W/v.json" >/dev/null &&
	ok "db append: today's log fails the post-update policy on PCR 7 alone" || bad "db append: verify of today's log says $(check "$W/db.json")"
# the boot predict expects after the update meets it
"$M" predict --log "$LOG" --efi-var db+="$W/db.auth" --write-log "$W/next.bin" >"$W/next.pcrs" 2>/dev/null
[ "$(check "$W/db.json" "$W/next.bin" "$W/next.pcrs")" = "0 " ] && ok "db append: predict's next boot meets the policy" ||
	bad "db append: predict's next boot: $(check "$W/db.json" "$W/next.bin" "$W/next.pcrs")"

# The artifacts form with --from-log takes the update too.
cp /usr/lib/shim/mmx64.efi.signed "$W/vmlinuz" # a PE: shim measures the kernel
printf 'initrd' >"$W/initrd.img"
"$M" policy generate --kernel "$W/vmlinuz" --initrd "$W/initrd.img" --cmdline "root=/dev/sda1 ro" --from-log "$LOG" \
	--efi-var db+="$W/db.auth" -o "$W/art.json" 2>"$W/err"; rc=$?
[ "$rc" = 0 ] && [ "$(value 7 "$W/art.json")" = "$want_db" ] && ok "artifacts form + db append: PCR 7 is openssl's" ||
	bad "artifacts + db: rc $rc, PCR 7 $(value 7 "$W/art.json"), want $want_db ($(cat "$W/err"))"

# dbx += a hash no booted binary has (an ESL built with printf): PCR 7 as openssl replays it.
h=$(printf 'not booted' | sha256_hex)
printf '2616c4c14c509240aca941f9369343284c0000000000000030000000%s%s' 11111111222233334444555555555555 "$h" |
	xxd -r -p >"$W/hash.esl"
{ var_data "$n_dbx" | xxd -r -p; cat "$W/hash.esl"; } >"$W/dbx.next"
want=$(replay 7 "$n_dbx" "$(var_event "$GUID_SECDB" dbx "$W/dbx.next" | sha256_hex)")
gen --efi-var dbx+="$W/hash.esl" -o "$W/dbx.json"; rc=$?
[ "$rc" = 0 ] && [ "$(value 7 "$W/dbx.json")" = "$want" ] && ok "dbx += a hash: the policy's PCR 7 is openssl's" ||
	bad "dbx append: rc $rc, PCR 7 $(value 7 "$W/dbx.json"), want $want ($(cat "$W/err"))"

# shim's SbatLevel (PCR 7) and MokList (PCR 14; rules, or a value with --firmware-pcrs).
printf 'sbat,1,2023012900\nshim,2\ngrub,3\ngrub.debian,4\n' >"$W/sbat.csv"
want=$(replay 7 "$n_sbat" "$(var_event "$GUID_SHIM" SbatLevel "$W/sbat.csv" | sha256_hex)")
gen --sbat-level "$W/sbat.csv" -o "$W/sbat.json"; rc=$?
[ "$rc" = 0 ] && [ "$(value 7 "$W/sbat.json")" = "$want" ] && ok "--sbat-level: the policy's PCR 7 is openssl's" ||
	bad "--sbat-level: rc $rc, PCR 7 $(value 7 "$W/sbat.json"), want $want ($(cat "$W/err"))"
mok=$(sha256_hex <"$W/db.esl")
gen --mok-list "$W/db.esl" -o "$W/mok.json"; rc=$?
[ "$rc" = 0 ] && jq -e --arg d "$mok" '[.pcrs["14"].rules[].digests[]?.sha256] | index($d)' "$W/mok.json" >/dev/null &&
	[ "$(value 7 "$W/mok.json")" = "$(replay 7 -1 -)" ] && [ "$(check "$W/mok.json")" = "1 14" ] &&
	ok "--mok-list: PCR 14's rule has openssl's H(file), PCR 7 today's, today's log fails on PCR 14" ||
	bad "--mok-list: rc $rc, verify $(check "$W/mok.json"), $(cat "$W/err")"
gen --mok-list "$W/db.esl" --firmware-pcrs 0-7,14 -o "$W/mok14.json"; rc=$?
[ "$rc" = 0 ] && [ "$(value 14 "$W/mok14.json")" = "$(replay 14 "$n_mok" "$mok")" ] &&
	ok "--mok-list --firmware-pcrs 0-7,14: PCR 14's value is openssl's replay" ||
	bad "--mok-list value: rc $rc, PCR 14 $(value 14 "$W/mok14.json"), want $(replay 14 "$n_mok" "$mok")"

# Refused, nothing written, exit 1: PCR 7 (and 4) unpredictable, or a variable without an event.
refused() {
	local what=$1 pattern=$2 rc
	shift 2
	rm -f "$W/refused.json"
	gen "$@" -o "$W/refused.json"; rc=$?
	[ "$rc" = 1 ] && [ ! -e "$W/refused.json" ] && grep -q -- "$pattern" "$W/err" && ok "$what: refused, exit 1 ($(head -c 150 "$W/err"))" ||
		bad "$what: rc $rc, $(cat "$W/err")"
}
n_auth=$(awk '/^- EventNum:/ { n = $3 } /EV_EFI_VARIABLE_AUTHORITY/ { a = n } /UnicodeName: db$/ && a == n { print n; exit }' "$W/log.yaml")
var_data "$n_auth" | cut -c33- | xxd -r -p | openssl x509 -inform DER -out "$W/ca.pem" 2>/dev/null
cert-to-efi-sig-list "$W/ca.pem" "$W/ca.esl" >/dev/null
refused "dbx revokes the CA that verified shim" "PCR 7 cannot be predicted.*event $n_auth: the new dbx revokes the certificate" \
	--efi-var dbx+="$W/ca.esl"
app=$(awk '/^- EventNum:/ { n = $3 } /EventType: EV_EFI_BOOT_SERVICES_APPLICATION/ { on = 1 }
	on && /Digest:/ { gsub(/"/, "", $2); print n, $2; exit }' "$W/log.yaml")
printf '2616c4c14c509240aca941f9369343284c0000000000000030000000%s%s' 11111111222233334444555555555555 "${app#* }" |
	xxd -r -p >"$W/app-hash.esl"
refused "dbx revokes the Authenticode hash of shim (event ${app%% *})" "PCR 4 cannot be predicted: event ${app%% *}: the new dbx holds.*PCR 7 cannot be predicted" \
	--efi-var dbx+="$W/app-hash.esl"
refused "db replaced without the CA that verified shim" "PCR 7 cannot be predicted.*Microsoft Corporation UEFI CA 2011.*not in the new db" \
	--efi-var db="$W/db.esl"
refused "dbt, which the log does not measure" "dbt ($W/db.esl): today's log has no PCR 7" --efi-var dbt="$W/db.esl"

# Hostile and truncated files, bad names, no --from-log: exit 2, said, nothing written.
hostile() {
	rm -f "$W/hostile.json"
	"$M" policy generate "$@" -o "$W/hostile.json" 2>"$W/err"; local rc=$?
	[ "$rc" = 2 ] && [ -s "$W/err" ] && [ ! -e "$W/hostile.json" ] && ok "hostile ${*: -1}: exit 2 ($(head -c 120 "$W/err"))" ||
		bad "hostile $*: exit $rc, $(cat "$W/err")"
}
head -c 100 "$W/db.esl" >"$W/trunc.esl"; hostile --from-log "$LOG" --efi-var db+="$W/trunc.esl"
grep -q "SignatureListSize .* overruns" "$W/err" && ok "truncated ESL: the message says which size overruns" || bad "truncated ESL: $(cat "$W/err")"
cp "$W/err" "$W/err.trunc"
{ esl_hdr 60 00000000 ffffffff | xxd -r -p; head -c 32 /dev/zero; } >"$W/huge.esl"; hostile --from-log "$LOG" --efi-var dbx+="$W/huge.esl"
{ esl_hdr 20 00000000 30000000 | xxd -r -p; } >"$W/short.esl"; hostile --from-log "$LOG" --efi-var KEK="$W/short.esl"
head -c 40 "$W/db.auth" >"$W/auth-trunc"; hostile --from-log "$LOG" --efi-var db+="$W/auth-trunc"
# The messages name the list's offset in the file: 0 for a bare ESL, after the
# EFI_VARIABLE_AUTHENTICATION_2 header (sign-efi-sig-list's output less the ESL it signed) for an update.
esl_size=$(od -An -tu4 -j16 -N4 "$W/db.esl" | tr -d ' ')
grep -q "offset 0: SignatureListSize $esl_size overruns the value (100 bytes left)" "$W/err.trunc" &&
	ok "truncated ESL: offset 0 and SignatureListSize $esl_size (od) named" || bad "truncated ESL offset: $(cat "$W/err.trunc")"
auth_len=$(($(stat -c %s "$W/db.auth") - $(stat -c %s "$W/db.esl")))
head -c $(($(stat -c %s "$W/db.auth") - 10)) "$W/db.auth" >"$W/auth-cut"; hostile --from-log "$LOG" --efi-var db+="$W/auth-cut"
grep -q "offset $auth_len: SignatureListSize $esl_size overruns" "$W/err" &&
	ok "update cut short: the list named at file offset $auth_len" || bad "update cut short: $(cat "$W/err")"
# SignatureSize 0 and below the owner GUID; a header on an x509 list; a list without signatures
{ esl_hdr 44 00000000 00000000 | xxd -r -p; head -c 16 /dev/zero; } >"$W/sig0.esl"; hostile --from-log "$LOG" --efi-var db+="$W/sig0.esl"
grep -q "offset 0: SignatureSize 0 < 16" "$W/err" && ok "SignatureSize 0 said" || bad "SignatureSize 0: $(cat "$W/err")"
{ esl_hdr 44 00000000 0f000000 | xxd -r -p; head -c 16 /dev/zero; } >"$W/sig15.esl"; hostile --from-log "$LOG" --efi-var db+="$W/sig15.esl"
{ esl_hdr 76 10000000 20000000 | xxd -r -p; head -c 48 /dev/zero; } >"$W/hdr.esl"; hostile --from-log "$LOG" --efi-var db+="$W/hdr.esl"
grep -q "SignatureHeaderSize 16 invalid for this list (must be 0" "$W/err" && ok "x509 list with a SignatureHeaderSize said" || bad "header: $(cat "$W/err")"
{ esl_hdr 28 00000000 30000000 | xxd -r -p; } >"$W/empty.esl"; hostile --from-log "$LOG" --efi-var db+="$W/empty.esl"
grep -q "offset 0: no signatures" "$W/err" && ok "a list without signatures said" || bad "empty list: $(cat "$W/err")"
hostile --from-log "$LOG" --mok-list "$W/trunc.esl"
hostile --from-log "$LOG" --efi-var Boot0000="$W/db.esl"
hostile --from-log "$LOG" --efi-var "=$W/db.esl"
hostile --from-log "$LOG" --efi-var db="$W/missing"
hostile --kernel "$W/vmlinuz" --initrd "$W/initrd.img" --cmdline ro --efi-var db+="$W/db.auth"

echo "policy secureboot: $fails failed"
[ "$fails" = 0 ]
