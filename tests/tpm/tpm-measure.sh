#!/bin/bash
# `mboot measure` and the userspace log: digests against tpm2_pcrevent and openssl,
# 2 processes x 500 concurrent measurements (1000 whole records, verify exits 0),
# records outside the PCRs userspace measures into (or on top of the firmware's) refused,
# a truncated last record reported, a TPM dying mid-measure logs nothing, a tampered
# userspace record fails verify on its PCR.
. "${MB_TPM_TESTS:-$(dirname "$0")}/swtpm-env.sh"
M=${MBOOT:?}
LOG=${MB_TESTDATA:?}/corpus/go-tpm-tools/arch-linux-workstation.bin
PROXY=${MB_TPM_TESTS:-$(dirname "$0")}/tpm-proxy.py
US=$WORK/measure.log

swtpm_start
# Digests: the record's, tpm2_pcrevent's (same file, all four banks) and openssl's.
printf 'kernel command line: quiet splash' > "$WORK/f"
"$M" measure --pcr 16 --file "$WORK/f" --log "$US" --json --description "test" > "$WORK/rec.json" || fail "measure exited $?"
tpm2_pcrevent "$WORK/f" > "$WORK/pcrevent" || fail "tpm2_pcrevent"
for bank in sha1 sha256 sha384 sha512; do
	mine=$(jq -r --arg b "$bank" '.digests[] | select(.hashAlg == $b) | .digest' "$WORK/rec.json")
	theirs=$(awk -v b="$bank:" '$1 == b { print $2 }' "$WORK/pcrevent")
	ossl=$(openssl dgst "-$bank" -r "$WORK/f" | cut -d' ' -f1)
	[ -n "$mine" ] && [ "$mine" = "$theirs" ] && [ "$mine" = "$ossl" ] ||
		fail "$bank: record '$mine', tpm2_pcrevent '$theirs', openssl '$ossl'"
done
want=$( { head -c 32 /dev/zero; openssl dgst -sha256 -binary "$WORK/f"; } | openssl dgst -sha256 -r | cut -d' ' -f1)
got=$(tpm2_pcrread sha256:16 | awk '/16 *:/ { print tolower(substr($NF, 3)) }')
[ "$got" = "$want" ] || fail "PCR 16 after measure: tpm2_pcrread $got, openssl $want"
[ "$(head -c 1 "$US" | od -An -tx1 | tr -d ' ')" = 1e ] || fail "record does not start with RS"
[ "$(tail -c 1 "$US" | od -An -tx1 | tr -d ' ')" = 0a ] || fail "record does not end with a newline"
echo "ok: measure --file: digests == tpm2_pcrevent == openssl in 4 banks; PCR 16 == openssl extend"

# --text measures the string's bytes (no NUL); --stdin what stdin holds.
"$M" measure --pcr 9 --text "enter-initrd" --log "$US" --json > "$WORK/rec.json" || fail "measure --text"
[ "$(jq -r '.digests[] | select(.hashAlg == "sha256") | .digest' "$WORK/rec.json")" = \
  "$(printf enter-initrd | sha256sum | cut -d' ' -f1)" ] || fail "--text digest"
printf 'from stdin' | "$M" measure --pcr 9 --stdin --log "$US" --json > "$WORK/rec.json" || fail "measure --stdin"
[ "$(jq -r '.digests[] | select(.hashAlg == "sha1") | .digest' "$WORK/rec.json")" = \
  "$(printf 'from stdin' | sha1sum | cut -d' ' -f1)" ] || fail "--stdin digest"
echo "ok: --text and --stdin digests == sha256sum/sha1sum"

# Usage errors.
"$M" measure --pcr 24 --text x --log "$US" 2>/dev/null; [ $? -eq 2 ] || fail "--pcr 24 accepted"
"$M" measure --pcr 1 --text x --file y --log "$US" 2>/dev/null; [ $? -eq 2 ] || fail "two inputs accepted"
"$M" measure --text x --log "$US" 2>/dev/null; [ $? -eq 2 ] || fail "missing --pcr accepted"
"$M" measure --pcr 1 --file "$WORK/none" --log "$US" 2>/dev/null; [ $? -eq 2 ] || fail "missing file accepted"
echo "ok: usage errors exit 2"

# A boot (the firmware log) plus 2 x 500 concurrent measurements of PCRs 11 and 15 (systemd's).
swtpm_start
swtpm_banks "sha1 sha256"
"$M" log extend "$LOG" >/dev/null 2>&1 || fail "log extend"
rm -f "$US"
worker() {
	local i
	for i in $(seq 500); do
		"$M" measure --pcr "$1" --text "$2 $i" --log "$US" || { echo "worker $2: measure $i exited $?"; return 1; }
	done
}
worker 11 a > "$WORK/wa" 2>&1 &
pa=$!
worker 15 b > "$WORK/wb" 2>&1 &
pb=$!
wait $pa || fail "worker a: $(cat "$WORK/wa")"
wait $pb || fail "worker b: $(cat "$WORK/wb")"
n=$(jq --seq -c . < "$US" 2>/dev/null | wc -l)
[ "$n" -eq 1000 ] || fail "$n records parse, expected 1000"
[ "$(tr -cd '\036' < "$US" | wc -c)" -eq 1000 ] || fail "not 1000 record separators"
[ "$(wc -l < "$US")" -eq 1000 ] || fail "not 1000 newlines"
[ "$(jq --seq -r 'select(.pcr == 11) | .content.text' < "$US" 2>/dev/null | sort -u | wc -l)" -eq 500 ] ||
	fail "PCR 11 records lost or duplicated"
[ -k "$US" ] && fail "log left marked incomplete"
"$M" verify --log "$LOG" --userspace-log "$US" > "$WORK/v" || fail "verify exited $?: $(cat "$WORK/v")"
grep -q "PCR 11 sha256  verified         0 events + 500 userspace records" "$WORK/v" || fail "PCR 11 not verified: $(cat "$WORK/v")"
grep -q "PCR 15 sha256  verified         0 events + 500 userspace records" "$WORK/v" || fail "PCR 15 not verified"
echo "ok: 2 x 500 concurrent measures: 1000 whole records (jq --seq), verify exits 0"

# Without the userspace log, PCRs 11 and 15 carry no claim; PCR values of the TPM
# against a tampered userspace record: PCR 15 fails and is named.
awk 'BEGIN { RS = "\036"; ORS = "" } NR > 1 { if (!done && $0 ~ /"pcr":15/) { sub(/"text":"b /, "\"text\":\"B "); sub(/"digest":"[0-9a-f]/, "\"digest\":\"f"); done = 1 } print "\036" $0 }' \
	"$US" > "$WORK/tampered.log"
cmp -s "$US" "$WORK/tampered.log" && fail "tampering did nothing"
"$M" verify --log "$LOG" --userspace-log "$WORK/tampered.log" --json > "$WORK/v.json"
[ $? -eq 1 ] || fail "tampered userspace log: expected exit 1"
[ "$(jq -r '[.pcrs[] | select(.verdict == "mismatch") | .pcr] | unique | map(tostring) | join(" ")' "$WORK/v.json")" = 15 ] ||
	fail "tampered userspace log: PCR 15 not the one named"
echo "ok: a tampered userspace record fails PCR 15"

# Userspace records belong where userspace measures (11-15 by default, --userspace-pcrs), never
# on top of the firmware's events: a record in PCR 9 (GRUB's) fails although the value matches.
cp "$US" "$WORK/us9.log"
"$M" measure --pcr 9 --text "moved here" --log "$WORK/us9.log" >/dev/null || fail "measure --pcr 9"
"$M" verify --log "$LOG" --userspace-log "$WORK/us9.log" --json > "$WORK/v.json"
[ $? -eq 1 ] || fail "a userspace record in PCR 9 verified"
[ "$(jq -r '[.pcrs[] | select(.verdict == "userspace-not-allowed") | .pcr] | unique | map(tostring) | join(" ")' "$WORK/v.json")" = 9 ] ||
	fail "PCR 9 not named userspace-not-allowed: $(jq -c '[.pcrs[] | select(.verdict != "verified")]' "$WORK/v.json")"
"$M" verify --log "$LOG" --userspace-log "$WORK/us9.log" --userspace-pcrs 9,11-15 > "$WORK/v" ||
	fail "--userspace-pcrs 9,11-15 did not verify: $(cat "$WORK/v")"
# PCR 4 is the firmware's (this log extends it): a record there fails even when allowed.
cp "$US" "$WORK/us4.log"
"$M" measure --pcr 4 --text "an EFI binary moved out of the firmware log" --log "$WORK/us4.log" >/dev/null || fail "measure --pcr 4"
"$M" verify --log "$LOG" --userspace-log "$WORK/us4.log" --userspace-pcrs 4,11-15 > "$WORK/v"
[ $? -eq 1 ] && grep -q "PCR  4 sha256  userspace-not-allowed 1 userspace record extends PCR 4 on top of the firmware's" "$WORK/v" ||
	fail "a userspace record on top of the firmware's PCR 4: $(grep "PCR  4" "$WORK/v")"
echo "ok: userspace records in PCR 9 (not allowed by default) and PCR 4 (the firmware's) fail verify"

# A truncated last record is reported (exit 2, offset named), never silently dropped.
head -c -5 "$US" > "$WORK/cut.log"
"$M" verify --log "$LOG" --userspace-log "$WORK/cut.log" > "$WORK/out" 2>&1
[ $? -eq 2 ] || fail "truncated userspace log: expected exit 2"
grep -q "truncated" "$WORK/out" && grep -q "at byte" "$WORK/out" || fail "truncation not reported: $(cat "$WORK/out")"
printf '\036{"pcr": 9, "digests": [' > "$WORK/bad.log"; printf '\n' >> "$WORK/bad.log"
"$M" verify --log "$LOG" --userspace-log "$WORK/bad.log" > /dev/null 2>&1; [ $? -eq 2 ] || fail "malformed record accepted"
printf 'garbage' > "$WORK/bad.log"
"$M" verify --log "$LOG" --userspace-log "$WORK/bad.log" > /dev/null 2>&1; [ $? -eq 2 ] || fail "garbage accepted"
echo "ok: truncated or malformed userspace logs exit 2 with the offset"

# The TPM dies during the extend: exit 3, nothing logged, log not left marked.
cp "$US" "$WORK/before.log"
# Commands of a measure: GetCapability, PCR_Extend (the 2nd, killed).
"$M" measure --pcr 9 --text late --log "$US" --tcti "cmd:python3 $PROXY $SWTPM_DIR/sock 2 $SWTPM_PID" > "$WORK/out" 2>&1
[ $? -eq 3 ] || fail "TPM died: expected exit 3: $(cat "$WORK/out")"
grep -q "lost the connection to the TPM" "$WORK/out" || fail "unclear message: $(cat "$WORK/out")"
cmp -s "$US" "$WORK/before.log" || fail "a record was written although the extend failed"
[ -k "$US" ] && fail "log left marked incomplete after a failed extend"
echo "ok: TPM killed during measure: exit 3, nothing logged: $(cat "$WORK/out")"

# The userspace log is never waited on forever. A FIFO (read by someone, or by no one) is
# refused at once by measure and verify: exit 2, the path named, nothing extended.
# `timeout` turns a hang into exit 124 instead of a stuck test.
swtpm_start # the one before died with the proxy
mkfifo "$WORK/fifo"
pcr16() { tpm2_pcrread sha256:16 | awk '/16 *:/ { print $NF }'; }
pcr16=$(pcr16)
[ -n "$pcr16" ] || fail "tpm2_pcrread sha256:16"
timeout 20 "$M" measure --pcr 16 --text x --log "$WORK/fifo" > "$WORK/out" 2>&1; rc=$?
[ $rc -eq 2 ] || fail "measure --log FIFO (no reader): exit $rc, expected 2 (124: it hung): $(cat "$WORK/out")"
grep -q "fifo: not a regular file" "$WORK/out" || fail "measure --log FIFO (no reader): $(cat "$WORK/out")"
( exec 3< "$WORK/fifo"; sleep 5 ) & # a reader: the open succeeds, then fstat refuses
reader=$!
timeout 20 "$M" measure --pcr 16 --text x --log "$WORK/fifo" > "$WORK/out" 2>&1; rc=$?
kill $reader 2>/dev/null; wait $reader 2>/dev/null
[ $rc -eq 2 ] || fail "measure --log FIFO (a reader): exit $rc, expected 2 (124: it hung): $(cat "$WORK/out")"
grep -q "fifo: a FIFO, not a regular file" "$WORK/out" || fail "measure --log FIFO (a reader): $(cat "$WORK/out")"
[ "$(pcr16)" = "$pcr16" ] || fail "a refused measure extended PCR 16"
timeout 20 "$M" verify --log "$LOG" --userspace-log "$WORK/fifo" > "$WORK/out" 2>&1; rc=$?
[ $rc -eq 2 ] || fail "verify --userspace-log FIFO: exit $rc, expected 2 (124: it hung): $(cat "$WORK/out")"
grep -q "fifo: a FIFO, not a regular file" "$WORK/out" || fail "verify --userspace-log FIFO: $(cat "$WORK/out")"
"$M" measure --pcr 16 --text x --log /dev/null > "$WORK/out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "/dev/null: a character device, not a regular file" "$WORK/out" || fail "measure --log /dev/null: exit $rc: $(cat "$WORK/out")"
ln -s "$US" "$WORK/link.log"
"$M" measure --pcr 16 --text x --log "$WORK/link.log" > "$WORK/out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "link.log: is a symbolic link" "$WORK/out" || fail "measure --log SYMLINK: exit $rc: $(cat "$WORK/out")"
echo "ok: a FIFO, a device or a symlink as the userspace log: exit 2 at once (measure and verify), nothing extended"

# A lock another process holds (util-linux flock): measure gives up after --lock-timeout,
# verify after its 10 s; exit 2, the path named. The lock released, measure works again.
command -v flock >/dev/null || fail "flock (util-linux) is not installed"
cp "$US" "$WORK/before.log"
# shellcheck disable=SC2016 # $1 is the inner shell's
flock -x "$US" sh -c 'touch "$1"; exec sleep 60' sh "$WORK/held" > /dev/null 2>&1 &
holder=$!
for _ in $(seq 100); do [ -e "$WORK/held" ] && break; sleep 0.1; done
[ -e "$WORK/held" ] || fail "flock did not take the lock"
ms() { date +%s%3N; }
t0=$(ms)
timeout 30 "$M" measure --pcr 16 --text x --log "$US" --lock-timeout 2 > "$WORK/out" 2>&1; rc=$?
t1=$(ms)
timeout 40 "$M" verify --log "$LOG" --userspace-log "$US" > "$WORK/vout" 2>&1; vrc=$?
t2=$(ms)
pkill -P $holder; kill $holder 2>/dev/null; wait $holder 2>/dev/null
[ $rc -eq 2 ] || fail "measure with the log locked: exit $rc, expected 2 (124: it hung): $(cat "$WORK/out")"
grep -qF "$US: another process holds a lock on it; gave up after 2.0 s" "$WORK/out" || fail "measure, log locked: $(cat "$WORK/out")"
[ $((t1 - t0)) -ge 1900 ] && [ $((t1 - t0)) -lt 10000 ] || fail "measure --lock-timeout 2 returned after $((t1 - t0)) ms"
[ $vrc -eq 2 ] || fail "verify with the log locked: exit $vrc, expected 2 (124: it hung): $(cat "$WORK/vout")"
grep -qF "$US: another process holds a lock on it; gave up after 10.0 s" "$WORK/vout" || fail "verify, log locked: $(cat "$WORK/vout")"
[ $((t2 - t1)) -ge 9900 ] && [ $((t2 - t1)) -lt 25000 ] || fail "verify returned after $((t2 - t1)) ms, not 10 s"
cmp -s "$US" "$WORK/before.log" || fail "the locked log changed"
[ "$(pcr16)" = "$pcr16" ] || fail "a measure that timed out extended PCR 16"
timeout 30 "$M" measure --pcr 16 --text x --log "$US" --lock-timeout 0 || fail "measure after the lock was released"
[ "$(pcr16)" != "$pcr16" ] || fail "PCR 16 not extended after the lock was released"
"$M" measure --pcr 16 --text x --log "$US" --lock-timeout 1x 2>/dev/null; [ $? -eq 2 ] || fail "--lock-timeout 1x accepted"
echo "ok: log locked by flock: measure exit 2 after $((t1 - t0)) ms (--lock-timeout 2), verify after $((t2 - t1)) ms: $(cat "$WORK/out")"
