#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ima-modsig's appended signature against the policy's "keys" (docs/policy.md, "IMA"): a file
# signed at test time by 'openssl cms -sign' (PKCS#7 SignedData, detached, DER, as a kernel
# module carries it; without signed attributes, then with them), its d-modsig hashlib's SHA-256
# of the file, the entry written by ima-policy-ref.py (the kernel's five fields: d-ng, n-ng, an
# empty sig, d-modsig, modsig) into a list PCR 10 replays by hashlib. Signed by a key of the
# policy's: allowed (signed); by another: a violation naming the signer; a corrupted signature,
# another d-modsig, hostile bytes (cut, garbage): a violation, exit 1, no crash.
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
"$M" policy generate --from-ima-log "$T/list" -o "$T/pol.json"
read -r sp _ < <($REF "$SRC" "$T/pcrs0.txt" /dev/null /dev/null --digest 50)
verify() { "$M" verify --log "$L" --no-userspace-log "$@"; }

head -c 5000 /dev/urandom >"$T/module.ko"
dmod=sha256:$(python3 -c 'import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())' \
	"$T/module.ko")
openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=modsig-rsa -keyout "$T/rsa.pem" -out "$T/rsa.crt" \
	-days 30 2>/dev/null
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=modsig-ec -keyout "$T/ec.pem" \
	-out "$T/ec.crt" -days 30 2>/dev/null
# cms KIND [openssl cms options]: the file's PKCS#7 by KIND's key, hex
cms() {
	local kind=$1
	shift
	openssl cms -sign -binary -outform DER -md sha256 -signer "$T/$kind.crt" -inkey "$T/$kind.pem" \
		-in "$T/module.ko" -out "$T/sig.der" "$@"
	xxd -p "$T/sig.der" | tr -d '\n'
}
# judge HEX [DMODSIG] POLICY: verify's document of the list with entry 50 an ima-modsig entry
judge() {
	$REF "$SRC" "$T/pcrs0.txt" "$T/lmod" "$T/pmod.txt" --modsig 50 "${3:-$dmod}" "$1"
	rc=0
	verify --pcrs "$T/pmod.txt" --policy "$2" --ima-log "$T/lmod" --json >"$T/v.json" || rc=$?
}
jq --arg p "$sp" 'del(.ima.digests[$p])' "$T/pol.json" >"$T/pol-nk.json"
jq --arg p "$sp" --rawfile c "$T/rsa.crt" 'del(.ima.digests[$p]) | .ima.keys = [$c]' "$T/pol.json" >"$T/pol-rsa.json"
jq --arg p "$sp" --rawfile c "$T/ec.crt" 'del(.ima.digests[$p]) | .ima.keys = [$c]' "$T/pol.json" >"$T/pol-ec.json"
jq --arg p "$sp" --rawfile c "$T/ec.crt" --rawfile r "$T/rsa.crt" 'del(.ima.digests[$p]) | .ima.keys = [$c, $r]' \
	"$T/pol.json" >"$T/pol-both.json"

rsa_noattr=$(cms rsa -noattr)
openssl cms -cmsout -inform DER -in "$T/sig.der" -print | grep -A1 'signedAttrs:' | grep -q '<ABSENT>' ||
	fail "openssl wrote signed attributes with -noattr"
for s in "rsa $rsa_noattr pol-rsa" "ec $(cms ec -nocerts) pol-ec" "ec $(cms ec -noattr) pol-both"; do
	read -r kind hex pol <<<"$s"
	judge "$hex" "$T/$pol.json"
	[ $rc = 0 ] || fail "$kind-signed module, $pol (exit $rc): $(jq -c .ima.violations "$T/v.json")"
	jq -e '.ima.signed == 1 and .ima.ok and (.ima.pcr10[0].match == "recomputed")' "$T/v.json" >/dev/null ||
		fail "$kind: $(jq -c '.ima | del(.violations)' "$T/v.json")"
done
ok "an ima-modsig entry whose PKCS#7 a key of \"keys\" signed (RSA without signed attributes, ECDSA with) is signed"

judge "$rsa_noattr" "$T/pol-ec.json"
[ $rc = 1 ] && jq -e --arg p "$sp" '(.ima.violations | length) == 1 and .ima.violations[0].path == $p and
	(.ima.violations[0].reason |
	 test("appended signature is by a key the policy does not list \\(issuer /CN=modsig-rsa, serial"))' \
	"$T/v.json" >/dev/null || fail "RSA-signed module against the EC key (exit $rc): $(jq -c .ima.violations "$T/v.json")"
judge "$rsa_noattr" "$T/pol-nk.json"
[ $rc = 1 ] && jq -e '.ima.violations[0].reason | test("not in the policy.s allowlist$")' "$T/v.json" >/dev/null ||
	fail "signed module, no keys (exit $rc): $(jq -c .ima.violations "$T/v.json")"
ok "... not by a key the policy does not list (the violation names the signer), not without keys"

# the signature's last byte flipped (RSA without attributes: the signature ends the DER)
bad=${rsa_noattr:0:-2}$(printf '%02x' $(( 0x${rsa_noattr: -2} ^ 1 )))
judge "$bad" "$T/pol-rsa.json"
[ $rc = 1 ] && jq -e '.ima.violations[0].reason | test("appended signature does not verify")' "$T/v.json" >/dev/null ||
	fail "a flipped signature bit (exit $rc): $(jq -c .ima.violations "$T/v.json")"
# another file's digest as d-modsig, without and with signed attributes (messageDigest)
other=sha256:$(printf 'other' | sha256sum | cut -d' ' -f1)
judge "$rsa_noattr" "$T/pol-rsa.json" "$other"
[ $rc = 1 ] && jq -e '.ima.violations[0].reason | test("does not verify")' "$T/v.json" >/dev/null ||
	fail "another d-modsig (exit $rc): $(jq -c .ima.violations "$T/v.json")"
judge "$(cms rsa)" "$T/pol-rsa.json" "$other"
[ $rc = 1 ] && jq -e '.ima.violations[0].reason | test("does not verify")' "$T/v.json" >/dev/null ||
	fail "another d-modsig, signed attributes (exit $rc): $(jq -c .ima.violations "$T/v.json")"
# a d-modsig of SHA-512 against a SHA-256 signature
judge "$rsa_noattr" "$T/pol-rsa.json" "sha512:$(printf 'x' | sha512sum | cut -d' ' -f1)"
[ $rc = 1 ] || fail "a sha512 d-modsig: exit $rc"
ok "a flipped signature bit, another file's digest (messageDigest too), another algorithm: violations"

for h in "${rsa_noattr:0:200}" "${rsa_noattr}00" "$(head -c 300 /dev/urandom | xxd -p | tr -d '\n')" 3000 \
	"$(openssl x509 -in "$T/rsa.crt" -outform DER | xxd -p | tr -d '\n')"; do
	judge "$h" "$T/pol-rsa.json"
	[ $rc = 1 ] && jq -e '.ima.violations[0].reason | test("appended signature is not a PKCS#7 signature")' \
		"$T/v.json" >/dev/null || fail "hostile modsig ${h:0:20}... (exit $rc): $(jq -c .ima.violations "$T/v.json")"
done
ok "hostile modsig bytes (cut, trailing byte, garbage, a bare certificate): violations, exit 1"
