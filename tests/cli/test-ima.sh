#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# 'mboot ima show / replay' against Python's hashlib (ima-ref.py, the kernel's rules written
# again, run now): every entry's template-hash check and PCR 10 in the sha1 and sha256 banks,
# both forms, over the corpus's binary (tpm2-tss) and ASCII (keylime, ima-evm-utils) lists;
# --pcrs: a file holding Python's PCR 10 matches (0), one bit off does not (1); boot_aggregate
# against the firmware log's PCRs; hostile lists exit 2 with the byte offset.
set -eu -o pipefail

M=${MBOOT:?}
C=${MB_TESTDATA:?}/corpus
REF="python3 $(dirname "$0")/ima-ref.py"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

lists="tpm2-tss/sml-ima-ng-sha1.bin tpm2-tss/sml-ima-sha1.bin tpm2-tss/sml-ima-sig-sha256.bin
tpm2-tss/sml-ima-sha1-invalidated.bin tpm2-tss/sml-ima-sig-sha256-invalidated.bin
keylime/ima/ima-log-sha1 keylime/ima/ima-log-sha256 keylime/ima/ima-log-sha384 keylime/ima/ima-log-sha512
keylime/ima/ima-log-unknown ima-evm-utils/test_ascii_runtime_measurements
ima-evm-utils/sample-ascii_runtime_measurements-pcrs-8-9
keylime-tests/ima_log.txt rust-keylime/ima/ima_log.txt rust-keylime/ima/ascii_runtime_measurements"

# and one with ima-modsig, ima-buf and a path with a space (a fuzz seed)
files=$(for l in $lists; do echo "$C/$l"; done; echo "${MB_SOURCE_ROOT:?}/fuzz/corpus/ima/ascii-modsig-buf-sig")
for f in $files; do
	l=${f#"$C/"}
	$REF "$f" > "$T/ref"
	rc=0
	"$M" ima show --json "$f" > "$T/show.json" 2>/dev/null || rc=$?
	want=0
	grep -q ' bad$' "$T/ref" && want=1
	[ "$rc" = "$want" ] || fail "$l: ima show exits $rc, want $want"
	jq -r '.entries[] | "\(.number) \(.template_hash_check)"' "$T/show.json" > "$T/checks"
	grep -v '^pcr10' "$T/ref" | diff -u - "$T/checks" || fail "$l: template-hash checks differ from hashlib's"
	"$M" ima replay --json "$f" > "$T/replay.json" 2>/dev/null || true
	for bank in sha1 sha256; do
		for form in recomputed padded; do
			want=$(awk -v b=$bank -v f=$form '$1 == "pcr10" && $2 == b && $3 == f { print $4 }' "$T/ref")
			got=$(jq -r ".banks.$bank.\"10\".$form" "$T/replay.json")
			[ "$got" = "$want" ] || fail "$l: $bank PCR 10 $form: mboot $got, hashlib $want"
		done
	done
	ok "$l: $(wc -l < "$T/checks") entries' checks and PCR 10 (sha1, sha256; recomputed, padded) as hashlib's"
done

# sm3: the keylime list's template hashes are SM3's when named so (hashlib's sm3 agrees)
if python3 -c 'import hashlib; hashlib.new("sm3")' 2>/dev/null; then
	"$M" ima show --bank sm3_256 --json "$C/keylime/ima/ima-log-sm3_256" | jq -r '.entries[1].template_hash_check' |
		grep -qx ok || fail "sm3_256 list with --bank sm3_256"
	python3 - "$C/keylime/ima/ima-log-sm3_256" <<'PY' || fail "hashlib's sm3 disagrees"
import hashlib, struct, sys
line = open(sys.argv[1]).read().splitlines()[1].split(' ')
algo, hexd = line[3].split(':')
d = algo.encode() + b':\0' + bytes.fromhex(hexd)
n = line[4].encode() + b'\0'
h = hashlib.new('sm3', struct.pack('<I', len(d)) + d + struct.pack('<I', len(n)) + n).hexdigest()
sys.exit(h != line[1])
PY
	ok "sm3_256 template hashes with --bank sm3_256, as hashlib's sm3"
fi

# --pcrs: the firmware log's PCRs 0-9 and hashlib's PCR 10 (sha256, recomputed) match; a flipped one does not
l=ima-evm-utils/sample-ascii_runtime_measurements-pcrs-8-9
"$M" log replay --json "$C/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9" > "$T/fw.json"
p10=$($REF "$C/$l" | awk '$1 == "pcr10" && $2 == "sha256" && $3 == "recomputed" { print $4 }')
jq --arg v "$p10" '{banks: {sha256: (.banks.sha256 + {"10": $v})}}' "$T/fw.json" > "$T/good.json"
"$M" ima replay --pcrs "$T/good.json" "$C/$l" > "$T/out" || fail "--pcrs with the right PCR 10: exit $?"
grep -qx 'boot_aggregate: match' "$T/out" || fail "boot_aggregate not matched: $(cat "$T/out")"
grep -qx 'sha256 PCR 10: recomputed' "$T/out" || fail "PCR 10 not matched as recomputed"
bad=$(printf '%s' "$p10" | sed 's/^./0/;t;s/^/x/')
[ "$bad" != "$p10" ] || bad=1${p10:1}
jq --arg v "$bad" '{banks: {sha256: (.banks.sha256 + {"10": $v})}}' "$T/fw.json" > "$T/bad.json"
rc=0
"$M" ima replay --pcrs "$T/bad.json" "$C/$l" > /dev/null 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "--pcrs with a wrong PCR 10 exits $rc, want 1"
# boot_aggregate of the older kernel (sha256 over PCRs 0-7)
"$M" log replay --json "$C/ima-evm-utils/test_binary_bios_measurements" > "$T/fw2.json"
# (exit 1: the firmware log has no PCR 10 to compare with)
"$M" ima replay --json --pcrs "$T/fw2.json" "$C/ima-evm-utils/test_ascii_runtime_measurements" > "$T/agg.json" \
	2>/dev/null || true
jq -r .boot_aggregate "$T/agg.json" | grep -qx match-pcrs-0-7 || fail "older boot_aggregate (PCRs 0-7)"
ok "--pcrs: PCR 10 and boot_aggregate match (0), a wrong PCR 10 does not (1); 0-7 boot_aggregate named"

# hostile lists: exit 2, the offset in the message
good=$C/tpm2-tss/sml-ima-ng-sha1.bin
head -c 130 "$good" > "$T/trunc"                 # cut in the second entry's template data (its length at 121)
head -c 100 "$good" > "$T/tail"                  # 13 bytes of the second entry: less than its head
python3 - "$good" "$T" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
t = sys.argv[2]
open(t + '/pcr99', 'wb').write(struct.pack('<I', 99) + d[4:])
e1 = 87  # the second entry's offset; its template name length is at 87 + 24
open(t + '/namelen', 'wb').write(d[:e1 + 24] + struct.pack('<I', 200) + d[e1 + 28:e1 + 60])
open(t + '/bigname', 'wb').write(d[:e1 + 24] + struct.pack('<I', 5000) + d[e1 + 28:])
open(t + '/oversized', 'wb').write(d[:e1 + 34] + struct.pack('<I', 0x7fffffff) + d[e1 + 38:])
PY
expect2() { # FILE OFFSET WHAT
	local rc=0
	"$M" ima show "$1" > /dev/null 2> "$T/err" || rc=$?
	[ "$rc" = 2 ] || fail "$3: exit $rc, want 2"
	grep -q "at byte $2 " "$T/err" || fail "$3: no offset $2 in: $(cat "$T/err")"
	ok "$3: exit 2, $(sed "s|$T/||" "$T/err")"
}
expect2 "$T/trunc" 121 "truncated"
"$M" ima show --json "$T/tail" 2> "$T/err" | jq -c .incomplete_tail | grep -qx '{"offset":87,"size":13}' ||
	fail "a record shorter than its head is not named as the tail"
grep -q 'incomplete last record of 13 bytes at offset 87' "$T/err" || fail "the tail is not said"
ok "a last record shorter than its head (PCR, hash, name length): the entries before it, the tail named"
expect2 "$T/pcr99" 0 "PCR 99"
expect2 "$T/namelen" 111 "template name length past the end"
expect2 "$T/bigname" 111 "oversized template name length"
expect2 "$T/oversized" 121 "oversized template data length"
expect2 "$C/tpm2-tss/sml-ima-ng-sha1-invalidated.bin" 34 "tpm2-tss's invalidated ima-ng sample (cut in its first entry)"
expect2 "$C/rust-keylime/ima/invalid_ima_log.txt" 0 "rust-keylime's invalid list"
: > "$T/empty"
expect2 "$T/empty" 0 "empty list"
