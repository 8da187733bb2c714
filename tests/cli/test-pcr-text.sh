#!/bin/bash
# One text layout for PCR values (issue 13): `mboot log replay` and `mboot predict` print
# tpm2_pcrread's layout (the layout `mboot pcrs` prints; tests/tpm/tpm-pcrs.sh compares it with
# tpm2_pcrread byte for byte), every such output and its --json reads back with
# `verify --pcrs`, and a bank without values never prints a bare heading.
set -u
M=${MBOOT:?}
C=${MB_TESTDATA:?}/corpus
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }

# A real boot: StartupLocality 3, sha1 and sha256, PCRs 0-7 and more.
L=$C/go-tpm-tools/gdc-host.bin

# log replay: the layout, line by line ("  sha256:" then "    N : 0x<UPPER HEX>", N left-aligned
# in two columns), the values those of --json.
"$M" log replay "$L" >"$W/replay.txt" 2>/dev/null || bad "log replay exited $?"
grep -vqE '^(  (sha1|sha256|sha384|sha512|sm3_256):|    [0-9] : 0x[0-9A-F]+|    [12][0-9]: 0x[0-9A-F]+)$' "$W/replay.txt" &&
	bad "log replay: lines outside tpm2_pcrread's layout: $(grep -vE '^(  [a-z0-9_]+:|    [0-9 ]{2}: 0x[0-9A-F]+)$' "$W/replay.txt" | head -3)" ||
	ok "log replay prints tpm2_pcrread's layout"
want=$("$M" log replay --json "$L" | jq -r '.banks | to_entries[] | .key as $b | .value | to_entries[] | "\($b) \(.key) \(.value)"' | sort)
got=$(awk '/^  [a-z0-9_]+:$/ { b = $1; sub(/:/, "", b); next } { k = $1; sub(/:/, "", k); v = $NF; sub(/^0x/, "", v); print b, k, tolower(v) }' \
	"$W/replay.txt" | sort)
[ -n "$want" ] && [ "$got" = "$want" ] && ok "log replay text holds the values of --json ($(echo "$want" | wc -l))" ||
	bad "log replay text and --json differ"

# Each output reads back: verify --pcrs of it verifies the log it came from.
"$M" log replay --json "$L" >"$W/replay.json"
for f in replay.txt replay.json; do
	"$M" verify --log "$L" --pcrs "$W/$f" --no-userspace-log >"$W/v.out" 2>&1 && grep -q "^verified: " "$W/v.out" &&
		ok "log replay ($f) reads back with verify --pcrs" || bad "log replay ($f) does not read back: $(tail -2 "$W/v.out")"
done

# predict: the predicted values print as a PCR file; the notes (what changes) go to stderr; the
# values read back and verify the predicted log, text and --json alike.
# (A new command line, which this boot lets mboot predict in full: a new --kernel leaves PCR 4
# unpredictable here, see test-predict.sh.)
P=$C/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9
"$M" predict --log "$P" --cmdline "root=/dev/sda1 ro" --write-log "$W/next.bin" >"$W/next.txt" 2>"$W/next.err"; rc=$?
[ $rc = 0 ] && grep -q "PCR 8" "$W/next.err" && ! grep -qi "pcr 8\|changes" "$W/next.txt" &&
	ok "predict: values on stdout, notes on stderr" || bad "predict: rc $rc, stdout $(head -c 300 "$W/next.txt")"
"$M" predict --log "$P" --cmdline "root=/dev/sda1 ro" --json >"$W/next.json"
for f in next.txt next.json; do
	"$M" verify --log "$W/next.bin" --pcrs "$W/$f" --no-userspace-log >"$W/v.out" 2>&1 && grep -q "^verified: " "$W/v.out" &&
		ok "predict ($f) reads back and verifies the predicted log" || bad "predict ($f) does not read back: $(tail -2 "$W/v.out")"
done
# Same layout as log replay: the predicted log replayed prints exactly what predict printed.
"$M" log replay "$W/next.bin" 2>/dev/null | diff -u - "$W/next.txt" >"$W/d" && ok "predict text == log replay text of the predicted log" ||
	bad "predict and log replay print differently: $(head -8 "$W/d")"
# What cannot be predicted is on stderr, and has no value in the file (it used to print a guess).
printf 'linux /boot/vmlinuz-other root=/dev/sda1\n' >"$W/grub.cfg"
"$M" predict --log "$P" --grub-cfg "(hd0,gpt2)/boot/grub/grub.cfg=$W/grub.cfg" >"$W/u.txt" 2>"$W/u.err"; rc=$?
"$M" verify --log "$P" --pcrs "$W/u.txt" --no-userspace-log >"$W/v.out" 2>&1; v=$?
[ $rc = 1 ] && grep -q "PCR 8 cannot be predicted" "$W/u.err" && ! grep -q "predict" "$W/u.txt" &&
	! grep -qE '^ *8 *:' "$W/u.txt" && grep -qE '^ *9 *:' "$W/u.txt" && [ $v = 1 ] && grep -q "PCR  8 sha256  no-value" "$W/v.out" &&
	ok "unpredictable PCR 8: exit 1, named on stderr; the file has PCR 9 and no PCR 8 (verify: no value)" ||
	bad "unpredictable: predict rc $rc, verify rc $v: $(head -3 "$W/u.err")"

# A bank without values (a log of only its header: sha256 announced, nothing extended) prints
# no heading, in log replay and in predict; the JSON keeps its empty object.
python3 -c '
import struct, sys
d = open(sys.argv[1], "rb").read()
n = struct.unpack_from("<I", d, 28)[0]
sys.stdout.buffer.write(d[:32 + n])' "$L" >"$W/header.bin"
out=$("$M" log replay "$W/header.bin" 2>/dev/null); rc=$?
[ $rc = 0 ] && [ -z "$out" ] && ok "log replay: no heading for an empty bank" || bad "log replay of an empty bank printed '$out' (rc $rc)"
out=$("$M" predict --log "$W/header.bin" 2>/dev/null); rc=$?
[ $rc = 0 ] && [ -z "$out" ] && ok "predict: no heading for an empty bank" || bad "predict of an empty bank printed '$out' (rc $rc)"
"$M" log replay --json "$W/header.bin" | jq -e '.banks == {"sha256": {}}' >/dev/null &&
	ok "log replay --json: the empty bank is an empty object" || bad "log replay --json of an empty bank"

echo "pcr text cli: $fails failed"
[ "$fails" = 0 ]
