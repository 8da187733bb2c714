#!/bin/bash
# `mboot pcrs` against tpm2_pcrread on the same swtpm, bank by bank, after extends made
# with tpm2-tools, and an extend value recomputed with openssl.
. "${MB_TPM_TESTS:-$(dirname "$0")}/swtpm-env.sh"
M=${MBOOT:?}

# tpm2_pcrread's YAML -> "bank pcr hex" lines (lower case), sorted.
norm_pcrread() { awk '/^ *[a-z0-9_]+:$/ { gsub(/[ :]/, ""); b = $0; next }
	/^ *[0-9]+ *: *0x/ { split($0, f, ":"); gsub(/ /, "", f[1]); v = f[2]; gsub(/ |0x/, "", v);
	print b, f[1], tolower(v) }' | sort; }
# mboot's JSON -> the same lines, with jq.
norm_json() { jq -r '.banks | to_entries[] | .key as $b | .value | to_entries[] | "\($b) \(.key) \(.value)"' | sort; }

swtpm_start
# Some history in three banks, written by tpm2-tools.
tpm2_pcrextend "0:sha1=$(printf 'a%.0s' {1..40})" || fail "tpm2_pcrextend"
tpm2_pcrextend "7:sha256=$(printf '%064x' 7),sha384=$(printf '%096x' 7)" || fail "tpm2_pcrextend"
echo -n "mboot" > "$WORK/data"
tpm2_pcrevent 16 "$WORK/data" >/dev/null || fail "tpm2_pcrevent"
tpm2_pcrextend "23:sha512=$(printf '%0128x' 23)" || fail "tpm2_pcrextend"

tpm2_pcrread > "$WORK/pcrread.yaml" || fail "tpm2_pcrread"
"$M" pcrs --json > "$WORK/pcrs.json" || fail "mboot pcrs --json exited $?"
norm_pcrread < "$WORK/pcrread.yaml" > "$WORK/a"
norm_json < "$WORK/pcrs.json" > "$WORK/b"
[ "$(wc -l < "$WORK/a")" -eq 96 ] || fail "tpm2_pcrread gave $(wc -l < "$WORK/a") values, expected 4 banks x 24"
diff -u "$WORK/a" "$WORK/b" || fail "mboot pcrs --json differs from tpm2_pcrread"
cp "$WORK/a" "$WORK/a.all"
echo "ok: mboot pcrs --json == tpm2_pcrread (4 banks x 24 PCRs)"

# Text output is tpm2_pcrread's, byte for byte (the layout log replay and predict print too).
"$M" pcrs | norm_pcrread > "$WORK/c"
diff -u "$WORK/a" "$WORK/c" || fail "mboot pcrs (text) differs from tpm2_pcrread"
"$M" pcrs | diff -u "$WORK/pcrread.yaml" - || fail "mboot pcrs is not tpm2_pcrread's text byte for byte"
"$M" pcrs --bank sha256 --pcr 0,7,16,23 | diff -u <(tpm2_pcrread sha256:0,7,16,23) - ||
	fail "mboot pcrs --bank/--pcr is not tpm2_pcrread's text byte for byte"
echo "ok: mboot pcrs text == tpm2_pcrread byte for byte"

# Bank by bank, with a PCR selection.
for bank in sha1 sha256 sha384 sha512; do
	tpm2_pcrread "$bank:0,7,16,23" | norm_pcrread > "$WORK/a"
	"$M" pcrs --bank "$bank" --pcr 0,7,16,23 --json | norm_json > "$WORK/b"
	[ "$(wc -l < "$WORK/b")" -eq 4 ] || fail "$bank: expected 4 values"
	diff -u "$WORK/a" "$WORK/b" || fail "$bank: mboot pcrs --bank differs from tpm2_pcrread"
done
echo "ok: --bank/--pcr per bank == tpm2_pcrread"

# PCR 16 sha256 = SHA256(zeros || SHA256("mboot")), computed by openssl.
want=$( { head -c 32 /dev/zero; printf mboot | openssl dgst -sha256 -binary; } | openssl dgst -sha256 -r | cut -d' ' -f1)
got=$("$M" pcrs --bank sha256 --pcr 16 --json | jq -r '.banks.sha256["16"]')
[ "$got" = "$want" ] || fail "PCR 16: mboot $got, openssl $want"
echo "ok: PCR 16 sha256 equals openssl's extend ($want)"

# As few TPM2_PCR_Read calls as the TPM allows: it returns at most 8 digests a call, so
# 96 values take 12 calls and sha256 PCRs 0-7 one. Counted by a proxy on the command
# stream (TPM_CC_PCR_Read = 0x0000017e).
PROXY=${MB_TPM_TESTS:-$(dirname "$0")}/tpm-proxy.py
"$M" pcrs --json --tcti "cmd:python3 $PROXY $SWTPM_DIR/sock 0 0 $WORK/trace" > "$WORK/b2.json" || fail "pcrs through the proxy"
norm_json < "$WORK/b2.json" | diff -u "$WORK/a.all" - || fail "pcrs through the proxy differ"
n=$(grep -c '^0000017e$' "$WORK/trace")
[ "$n" -eq 12 ] || fail "$n TPM2_PCR_Read calls for 96 values, expected 12"
: > "$WORK/trace"
"$M" pcrs --bank sha256 --pcr 0-7 --tcti "cmd:python3 $PROXY $SWTPM_DIR/sock 0 0 $WORK/trace" > /dev/null || fail "pcrs through the proxy"
n=$(grep -c '^0000017e$' "$WORK/trace")
[ "$n" -eq 1 ] || fail "$n TPM2_PCR_Read calls for sha256 PCRs 0-7, expected 1"
echo "ok: 12 TPM2_PCR_Read calls for 4 banks x 24 PCRs, 1 for 8 values"

# The TCTI comes from $TPM2TOOLS_TCTI when --tcti is not given, and --tcti wins over it.
TPM2TOOLS_TCTI="swtpm:path=$SWTPM_DIR/nonexistent" "$M" pcrs --tcti "$TCTI" --pcr 0 >/dev/null ||
	fail "--tcti did not override \$TPM2TOOLS_TCTI"
echo "ok: --tcti overrides \$TPM2TOOLS_TCTI"

# A TPM that replayed a real boot (arch-linux-workstation.bin: sha1 and sha256): `mboot
# pcrs` and `mboot log replay` print the same text for the PCRs the log extends, and every
# output, text or JSON, reads back with verify --pcrs.
L=${MB_TESTDATA:?}/corpus/go-tpm-tools/arch-linux-workstation.bin
swtpm_start
swtpm_banks "sha1 sha256"
"$M" log extend --tcti "$TCTI" "$L" > "$WORK/out" 2>&1 || fail "log extend exited $?: $(cat "$WORK/out")"
list=$("$M" log replay --json --bank sha256 "$L" | jq -r '.banks.sha256 | keys | map(tonumber) | sort | join(",")')
"$M" log replay --bank sha256 "$L" 2>/dev/null > "$WORK/replay.txt"
diff -u <("$M" pcrs --bank sha256 --pcr "$list") "$WORK/replay.txt" || fail "pcrs and log replay print differently"
echo "ok: diff <(mboot pcrs --bank sha256 --pcr $list) <(mboot log replay --bank sha256): no difference"
"$M" pcrs --pcr "$list" > "$WORK/p.txt"
"$M" pcrs --pcr "$list" --json > "$WORK/p.json"
"$M" log replay "$L" 2>/dev/null > "$WORK/r.txt"
"$M" log replay --json "$L" > "$WORK/r.json"
for f in p.txt p.json r.txt r.json; do
	"$M" verify --log "$L" --no-userspace-log --pcrs "$WORK/$f" > "$WORK/v" 2>&1 || fail "$f does not read back: $(tail -2 "$WORK/v")"
done
echo "ok: pcrs and log replay, text and --json, read back with verify --pcrs"

# tpm2_pcrread -o: the digests alone, read as SELECTION@FILE. The values mboot reads (verify
# --json's "actual") are those tpm2_pcrread printed, the selection given in any order.
sel="sha256:$(tr , "\n" <<<"$list" | sort -rn | paste -sd,)+sha1:$list"
tpm2_pcrread "$sel" -o "$WORK/pcrs.bin" > "$WORK/pcrs.yaml" || fail "tpm2_pcrread -o"
n=$(tr ',' '\n' <<<"$list" | wc -l)
[ "$(stat -c %s "$WORK/pcrs.bin")" -eq $((n * 52)) ] || fail "tpm2_pcrread -o wrote $(stat -c %s "$WORK/pcrs.bin") bytes"
"$M" verify --log "$L" --no-userspace-log --pcrs "$sel@$WORK/pcrs.bin" --json > "$WORK/v.json" ||
	fail "verify --pcrs SELECTION@FILE exited $?: $(jq -c . "$WORK/v.json")"
jq -r '.pcrs[] | "\(.bank) \(.pcr) \(.actual)"' "$WORK/v.json" | sort > "$WORK/got"
norm_pcrread < "$WORK/pcrs.yaml" > "$WORK/want"
[ "$(wc -l < "$WORK/want")" -eq $((2 * n)) ] || fail "tpm2_pcrread printed $(wc -l < "$WORK/want") values"
diff -u "$WORK/want" "$WORK/got" || fail "the values read from tpm2_pcrread -o differ from its YAML"
echo "ok: tpm2_pcrread -o $sel: mboot reads the $((2 * n)) values tpm2_pcrread printed"

# Hostile: the wrong selection (size), a file cut short or grown, a bad selection, the file
# without its selection: exit 2 and a message that says what is wrong.
expect2() { # expect2 WHAT PATTERN ARG
	"$M" verify --log "$L" --no-userspace-log --pcrs "$3" > "$WORK/h" 2>&1
	local rc=$?
	[ $rc -eq 2 ] && grep -q "$2" "$WORK/h" || fail "$1: exit $rc, $(cat "$WORK/h")"
}
expect2 "selection of another size" "takes $((n * 32))" "sha256:$list@$WORK/pcrs.bin"
head -c -1 "$WORK/pcrs.bin" > "$WORK/cut.bin"
expect2 "file cut short" "$((n * 52 - 1)) bytes" "$sel@$WORK/cut.bin"
{ cat "$WORK/pcrs.bin"; printf x; } > "$WORK/long.bin"
expect2 "file with a byte more" "$((n * 52 + 1)) bytes" "$sel@$WORK/long.bin"
: > "$WORK/empty.bin"
expect2 "empty file" "0 bytes" "$sel@$WORK/empty.bin"
expect2 "PCR 24" "bad PCR selection" "sha256:24@$WORK/pcrs.bin"
expect2 "a bank named twice" "named twice" "sha256:0+sha256:1@$WORK/pcrs.bin"
expect2 "no PCR list" "bad PCR selection" "sha256:@$WORK/pcrs.bin"
expect2 "binary without a selection" "SELECTION@FILE" "$WORK/pcrs.bin"
echo "ok: hostile tpm2_pcrread -o input: exit 2 with a message"

# A bank with no value in the selection (sha1 allocated for PCRs 0-7 only, then --pcr 16)
# prints no heading: the output is tpm2_pcrread's for sha256 alone.
swtpm_start
tpm2_pcrallocate "sha1:0,1,2,3,4,5,6,7+sha256:all+sha384:none+sha512:none" > /dev/null || fail "tpm2_pcrallocate"
swtpm_reset
tpm2_startup -c || fail "tpm2_startup"
"$M" pcrs --pcr 16 | diff -u <(tpm2_pcrread sha256:16) - || fail "mboot pcrs printed an empty bank"
echo "ok: no heading for a bank without values (sha1 has no PCR 16)"
