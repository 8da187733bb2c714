#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The policy's "ima" section and 'mboot verify --ima-log' against hashlib: a self-consistent IMA
# list (ima-policy-ref.py: the 826 paths of rust-keylime's list, the boot_aggregate of a real
# firmware log's PCRs as tpm2_eventlog replays them, PCR 10 replayed by Python) meets the policy
# generated from it; one file's digest changed (template hash recomputed) is a violation naming
# that path and digest; an edited entry, a dropped entry, a list of another boot fail; an
# excluded path is skipped; "unlisted": "ignore"; Keylime's runtime policy imported; hostile
# "ima" sections and Keylime files exit 2.
set -eu -o pipefail

M=${MBOOT:?}
C=${MB_TESTDATA:?}/corpus
REF="python3 $(dirname "$0")/ima-policy-ref.py"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

SRC=$C/rust-keylime/ima/ascii_runtime_measurements
L=$C/tpm2-tools/event-sd-boot-fedora37.bin
tpm2_eventlog "$L" 2>/dev/null | sed -n '/^pcrs:/,$p' | sed 1d >"$T/pcrs0.txt"
$REF "$SRC" "$T/pcrs0.txt" "$T/list" "$T/pcrs.txt" >/dev/null
n=$(wc -l <"$T/list")
[ "$n" = 826 ] || fail "the reference list has $n entries, not 826"
verify() { "$M" verify --log "$L" --no-userspace-log "$@"; }

# generated from the list: every path with hashlib's digest
"$M" policy generate --from-ima-log "$T/list" -o "$T/pol.json"
want=$(awk 'NR > 1 { print $5 " " $4 }' "$T/list" | sort -u | sha256sum)
got=$(jq -r '.ima.digests | to_entries[] | .key + " " + .value[]' "$T/pol.json" | sort -u | sha256sum)
[ "$want" = "$got" ] || fail "generated allowlist is not the list's paths and digests"
jq -e '.ima.digests | has("boot_aggregate") | not' "$T/pol.json" >/dev/null || fail "boot_aggregate in the allowlist"
ok "policy generate --from-ima-log: $(jq '.ima.digests | length' "$T/pol.json") paths with the list's digests"

rc=0
verify --pcrs "$T/pcrs.txt" --policy "$T/pol.json" --ima-log "$T/list" --json >"$T/v.json" || rc=$?
[ $rc = 0 ] || fail "the list does not meet the policy generated from it (exit $rc): $(jq -c .ima "$T/v.json")"
jq -e --argjson n "$n" '.verified and .ima.ok and .ima.entries == $n and .ima.allowed == $n - 1 and
	.ima.boot_aggregate == "match" and .ima.pcr10 == [{"bank": "sha256", "match": "recomputed"}]' "$T/v.json" \
	>/dev/null || fail "verify --json: $(jq -c '.ima | del(.violations)' "$T/v.json")"
verify --pcrs "$T/pcrs.txt" --policy "$T/pol.json" --ima-log "$T/list" | grep -q '^The IMA list meets the policy' ||
	fail "text verdict"
ok "verify --ima-log: $n entries meet the generated policy, PCR 10 and boot_aggregate as hashlib's"

# one file's digest changed, the list consistent (template hash and PCR 10 follow)
read -r tpath tdigest < <($REF "$SRC" "$T/pcrs0.txt" "$T/list2" "$T/pcrs2.txt" --tamper 100)
rc=0
verify --pcrs "$T/pcrs2.txt" --policy "$T/pol.json" --ima-log "$T/list2" --json >"$T/v.json" || rc=$?
[ $rc = 1 ] || fail "tampered file: exit $rc, want 1"
jq -e --arg p "$tpath" --arg d "$tdigest" '.verified == false and (.ima.violations | length) == 1 and
	.ima.violations[0].path == $p and .ima.violations[0].digest == $d and .ima.violations[0].entry == 100 and
	(.ima.violations[0].reason | test("1 other digest"))' "$T/v.json" >/dev/null ||
	fail "tampered file's violation: $(jq -c .ima.violations "$T/v.json")"
verify --pcrs "$T/pcrs2.txt" --policy "$T/pol.json" --ima-log "$T/list2" >"$T/v.txt" || true
grep -qF "$tpath $tdigest" "$T/v.txt" || fail "text output does not name $tpath $tdigest"
ok "a changed file ($tpath) is a violation naming its path and digest (exit 1)"

# the tampered list against the good PCR 10: not the replay
rc=0
verify --pcrs "$T/pcrs.txt" --policy "$T/pol.json" --ima-log "$T/list2" --json >"$T/v.json" || rc=$?
[ $rc = 1 ] && jq -e '.ima.pcr10[0].match == "none" and any(.ima.violations[]; .reason | test("PCR 10"))' \
	"$T/v.json" >/dev/null || fail "PCR 10 mismatch not reported (exit $rc)"
ok "a list that does not replay to PCR 10 fails"

# a sha1 bank beside: PCR 10 as kernels before 5.11 extend it (hashlib: each SHA-256 template
# hash cut to 20 bytes) is "padded"; a wrong one is "none" and a violation naming the bank
sha1_pcr10() { # LIST [wrong]: the sha1 bank's PCR 10, tpm2_pcrread's form
	python3 -c 'import hashlib, sys
p = bytes(20)
for line in open(sys.argv[1]):
    p = hashlib.sha1(p + bytes.fromhex(line.split()[1])[:20]).digest()
print("  sha1:\n    10 : 0x" + (hashlib.sha1(p).hexdigest() if len(sys.argv) > 2 else p.hex()))' "$@"
}
{ cat "$T/pcrs.txt"; sha1_pcr10 "$T/list"; } >"$T/pcrs-sha1.txt"
# (the firmware log's sha1 bank has no PCRs 0-9 in the file: only the "ima" part is judged here)
verify --pcrs "$T/pcrs-sha1.txt" --policy "$T/pol.json" --ima-log "$T/list" --json >"$T/v.json" || true
jq -e '.ima.ok and .ima.pcr10 == [{"bank": "sha1", "match": "padded"}, {"bank": "sha256", "match": "recomputed"}]' \
	"$T/v.json" >/dev/null || fail "padded sha1 bank: $(jq -c .ima "$T/v.json")"
{ cat "$T/pcrs.txt"; sha1_pcr10 "$T/list" wrong; } >"$T/pcrs-sha1.txt"
rc=0
verify --pcrs "$T/pcrs-sha1.txt" --policy "$T/pol.json" --ima-log "$T/list" --json >"$T/v.json" || rc=$?
[ $rc = 1 ] && jq -e '(.ima.ok | not) and
	.ima.pcr10 == [{"bank": "sha1", "match": "none"}, {"bank": "sha256", "match": "recomputed"}]
	and any(.ima.violations[]; .reason | test("PCR 10 \\(sha1\\)"))' "$T/v.json" >/dev/null ||
	fail "wrong sha1 bank (exit $rc): $(jq -c .ima "$T/v.json")"
ok "PCR 10 of a sha1 bank as older kernels extend it (padded), and a wrong one (none)"

# an entry edited without its template hash; an entry dropped
$REF "$SRC" "$T/pcrs0.txt" "$T/list3" "$T/pcrs3.txt" --edit 7 >/dev/null
rc=0
verify --pcrs "$T/pcrs3.txt" --policy "$T/pol.json" --ima-log "$T/list3" --json >"$T/v.json" || rc=$?
[ $rc = 1 ] && jq -e '.ima.violations[0].entry == 7 and (.ima.violations[0].reason | test("altered"))' \
	"$T/v.json" >/dev/null || fail "edited entry (exit $rc): $(jq -c .ima.violations "$T/v.json")"
$REF "$SRC" "$T/pcrs0.txt" "$T/list4" "$T/pcrs4.txt" --drop 9 >/dev/null
rc=0
verify --pcrs "$T/pcrs4.txt" --policy "$T/pol.json" --ima-log "$T/list4" >/dev/null || rc=$?
[ $rc = 1 ] || fail "dropped entry: exit $rc"
ok "an edited entry (template hash not its fields') and a dropped one fail"

# boot_aggregate of another boot: PCR 0 changed in the values
sed 's/^\(    0  : 0x\)./\1f/' "$T/pcrs.txt" >"$T/pcrs-other.txt"
rc=0
verify --pcrs "$T/pcrs-other.txt" --no-userspace-log --ima-log "$T/list" --json >"$T/v.json" 2>/dev/null || rc=$?
[ $rc = 1 ] && jq -e '.ima.boot_aggregate == "mismatch"' "$T/v.json" >/dev/null ||
	fail "boot_aggregate of other PCRs (exit $rc)"
ok "boot_aggregate against other PCRs 0-9 fails"

# excluded: the changed path matched by a pattern is skipped
jq --arg x "$(dirname "$tpath")/libudev\\.so\\..*" '.ima.excludes = [$x]' "$T/pol.json" >"$T/pol-x.json"
verify --pcrs "$T/pcrs2.txt" --policy "$T/pol-x.json" --ima-log "$T/list2" --json >"$T/v.json" ||
	fail "excluded path still a violation: $(jq -c .ima.violations "$T/v.json")"
jq -e '.ima.excluded == 1' "$T/v.json" >/dev/null || fail "excluded count"
ok "a path an \"excludes\" pattern matches is skipped"

# unlisted: a path the allowlist does not name
jq --arg p "$tpath" 'del(.ima.digests[$p])' "$T/pol.json" >"$T/pol-u.json"
rc=0
verify --pcrs "$T/pcrs.txt" --policy "$T/pol-u.json" --ima-log "$T/list" --json >"$T/v.json" || rc=$?
[ $rc = 1 ] && jq -e --arg p "$tpath" '.ima.violations[0].path == $p and
	(.ima.violations[0].reason | test("not in the policy"))' "$T/v.json" >/dev/null || fail "unlisted path (exit $rc)"
jq '.ima.unlisted = "ignore"' "$T/pol-u.json" >"$T/pol-i.json"
verify --pcrs "$T/pcrs.txt" --policy "$T/pol-i.json" --ima-log "$T/list" --json >"$T/v.json" &&
	jq -e '.ima.unlisted == 1' "$T/v.json" >/dev/null || fail "\"unlisted\": \"ignore\""
ok "an unlisted path is a violation, or ignored with \"unlisted\": \"ignore\""

# a policy with an "ima" section needs the list
rc=0
verify --pcrs "$T/pcrs.txt" --policy "$T/pol.json" >/dev/null 2>&1 || rc=$?
[ $rc = 2 ] || fail "ima policy without --ima-log: exit $rc"
ok "a policy with an \"ima\" section and no --ima-log: exit 2"

# Keylime's runtime policy (corpus): its digests as sha256, its excludes anchored at the start only
K=$C/keylime/ima/policy-sha256
"$M" policy generate --ima-import-keylime "$K" >"$T/kl.json"
want=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["digests"]; print(sorted((p, "sha256:" + h) for p in d for h in d[p]))' "$K")
got=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["ima"]["digests"]; print(sorted((p, h) for p in d for h in d[p]))' "$T/kl.json")
[ "$want" = "$got" ] || fail "keylime import: $got, want $want"
"$M" policy lint "$T/kl.json" >/dev/null || fail "imported policy does not load"
jq '.excludes = ["/tmp/", "/var/log/.*\\.log"] | .keyrings = {".ima": ["'"$(printf '%064d' 1)"'"]}' "$K" >"$T/kl2"
"$M" policy generate --ima-import-keylime "$T/kl2" --from-ima-log "$T/list" >"$T/kl2.json"
jq -e '.ima.excludes == ["(?:/tmp/)[\\s\\S]*", "(?:/var/log/.*\\.log)[\\s\\S]*"] and (.ima["ima-buf"][".ima"] | length) == 1
	and (.ima.digests | length) > 800' "$T/kl2.json" >/dev/null || fail "keylime excludes/keyrings: $(jq -c '.ima | del(.digests)' "$T/kl2.json")"
ok "Keylime's runtime policy imported (digests, excludes as re.match, keyrings), merged with a list"

# ima-sig (docs/policy.md, "keys"): entry 50 signed with openssl pkeyutl (RSA, then ECDSA) over
# its file digest, the signature header as ima-evm-utils writes it (type 3, version 2, sha256 = 4,
# the key id = the last 4 bytes of the certificate's subject key identifier); its path left out
# of the allowlist: allowed by the signature alone, and only by the policy's key.
read -r sp sd < <($REF "$SRC" "$T/pcrs0.txt" /dev/null /dev/null --digest 50)
echo "$sd" | xxd -r -p >"$T/d.bin"
sign() { # sign KEY CERT: the sig field, hex
	local kid
	openssl pkeyutl -sign -inkey "$1" -pkeyopt digest:sha256 -in "$T/d.bin" -out "$T/s.bin"
	kid=$(openssl x509 -in "$2" -noout -ext subjectKeyIdentifier | tail -1 | tr -d ' :')
	python3 -c 'import sys; s = open(sys.argv[1], "rb").read()
print((bytes([3, 2, 4]) + bytes.fromhex(sys.argv[2][-8:]) + len(s).to_bytes(2, "big") + s).hex())' "$T/s.bin" "$kid"
}
openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=ima-rsa -keyout "$T/rsa.pem" -out "$T/rsa.crt" -days 30 2>/dev/null
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=ima-ec -keyout "$T/ec.pem" \
	-out "$T/ec.crt" -days 30 2>/dev/null
for kind in rsa ec; do
	sig=$(sign "$T/$kind.pem" "$T/$kind.crt")
	$REF "$SRC" "$T/pcrs0.txt" "$T/lsig" "$T/psig.txt" --sig 50 "$sig"
	jq --arg p "$sp" --rawfile c "$T/$kind.crt" 'del(.ima.digests[$p]) | .ima.keys = [$c]' "$T/pol.json" >"$T/pol-k.json"
	verify --pcrs "$T/psig.txt" --policy "$T/pol-k.json" --ima-log "$T/lsig" --json >"$T/v.json" ||
		fail "$kind-signed entry: $(jq -c .ima.violations "$T/v.json")"
	jq -e '.ima.signed == 1' "$T/v.json" >/dev/null || fail "$kind: signed count"
done
ok "an ima-sig entry signed by a key of the policy's \"keys\" (RSA, ECDSA) is allowed"
jq --arg p "$sp" 'del(.ima.digests[$p])' "$T/pol.json" >"$T/pol-nk.json"
jq --arg p "$sp" --rawfile c "$T/rsa.crt" 'del(.ima.digests[$p]) | .ima.keys = [$c]' "$T/pol.json" >"$T/pol-rsa.json"
rc=0
verify --pcrs "$T/psig.txt" --policy "$T/pol-nk.json" --ima-log "$T/lsig" --json >"$T/v.json" || rc=$?
[ $rc = 1 ] || fail "signed entry without keys: exit $rc"
rc=0
verify --pcrs "$T/psig.txt" --policy "$T/pol-rsa.json" --ima-log "$T/lsig" --json >"$T/v.json" || rc=$?
[ $rc = 1 ] && jq -e --arg p "$sp" '.ima.violations[0].path == $p and
	(.ima.violations[0].reason | test("key the policy does not list"))' "$T/v.json" >/dev/null ||
	fail "ECDSA-signed entry against the RSA key (exit $rc): $(jq -c .ima.violations "$T/v.json")"
# the RSA signature with one bit flipped (the template hash follows: only the signature is wrong)
sig=$(sign "$T/rsa.pem" "$T/rsa.crt")
sig=${sig:0:40}$(printf '%x' $(( 0x${sig:40:1} ^ 1 )))${sig:41}
$REF "$SRC" "$T/pcrs0.txt" "$T/lsig" "$T/psig.txt" --sig 50 "$sig"
rc=0
verify --pcrs "$T/psig.txt" --policy "$T/pol-rsa.json" --ima-log "$T/lsig" --json >"$T/v.json" || rc=$?
[ $rc = 1 ] && jq -e '.ima.violations[0].reason | test("does not verify")' "$T/v.json" >/dev/null ||
	fail "a flipped signature bit (exit $rc): $(jq -c .ima.violations "$T/v.json")"
ok "... not without the key, not by another key, not with a bit of the signature flipped"

# hostile: each exits 2 with a message
i=0
for doc in '{"version":1,"pcrs":{},"ima":[]}' \
	'{"version":1,"pcrs":{},"ima":{"digests":{"/a":"sha256:00"}}}' \
	'{"version":1,"pcrs":{},"ima":{"digests":{"/a":["sha256:zz"]}}}' \
	'{"version":1,"pcrs":{},"ima":{"digests":{"/a":[]}}}' \
	'{"version":1,"pcrs":{},"ima":{"digests":{"/a":["'"$(printf '%064d' 0)"'"],"/a":["'"$(printf '%064d' 0)"'"]}}}' \
	'{"version":1,"pcrs":{},"ima":{"digests":{},"bogus":1}}' \
	'{"version":1,"pcrs":{},"ima":{"excludes":["(a+)+b"]}}' \
	'{"version":1,"pcrs":{},"ima":{"excludes":["("]}}' \
	'{"version":1,"pcrs":{},"ima":{"excludes":[1]}}' \
	'{"version":1,"pcrs":{},"ima":{"unlisted":"maybe"}}' \
	'{"version":1,"pcrs":{},"ima":{"ima-buf":{"x":["md5:00"]}}}' \
	'{"version":1,"pcrs":{},"ima":{"digests":{"/a":["sha256:'"$(printf '%062d' 0)"'"]}}}' \
	'{"version":1,"pcrs":{},"ima":{"keys":["not a certificate"]}}' \
	'{"version":1,"pcrs":{},"ima":{"keys":[1]}}' '{"version":1,"pcrs":{},"ima":{"keys":{}}}'; do
	i=$((i + 1))
	printf '%s' "$doc" >"$T/h$i.json"
	rc=0
	"$M" policy lint "$T/h$i.json" >/dev/null 2>"$T/err" || rc=$?
	[ $rc = 2 ] && [ -s "$T/err" ] || fail "hostile ima section $i exits $rc: $doc"
done
python3 -c 'import sys; print("{\"version\":1,\"pcrs\":{},\"ima\":{\"digests\":{\"/" + "a" * 5000 + "\":[\"" + "0" * 64 + "\"]}}}")' >"$T/long.json"
rc=0
"$M" policy lint "$T/long.json" >/dev/null 2>&1 || rc=$?
[ $rc = 2 ] || fail "a 5000-byte path: exit $rc"
for doc in '[]' '{"digests":[]}' '{"digests":{"/a":["xyz"]}}' '{"excludes":"x"}' '{"unknown":1}' '{"keyrings":{"k":"x"}}'; do
	printf '%s' "$doc" >"$T/k.json"
	rc=0
	"$M" policy generate --ima-import-keylime "$T/k.json" >/dev/null 2>&1 || rc=$?
	[ $rc = 2 ] || fail "hostile Keylime policy exits $rc: $doc"
done
ok "hostile \"ima\" sections ($i, and a 5000-byte path) and Keylime files exit 2"
