#!/bin/bash
# The machine's side of remote attestation (docs/attest.md) against a swtpm manufactured by
# swtpm_setup --create-ek-cert, checked with tpm2-tools and openssl: the request's EK is
# tpm2_createek's and swtpm_setup's, its certificate is tpm2_nvread's and holds that key; the
# AK has exactly the attributes of a restricted signing key; tpm2_checkquote accepts mboot's
# quotes (and not with another nonce); the evidence's PCR values are tpm2_pcrread's; mboot's
# activation opens tpm2_makecredential's credential. Errors: no AK file, malformed challenges
# (exit 2), a challenge for another AK (exit 1: refused). Then the high range: the ECC P-384 EK.
. "${MB_TPM_TESTS:-$(dirname "$0")}/swtpm-env.sh"
M=${MBOOT:?}
LOG=${MB_TESTDATA:?}/corpus/go-tpm-tools/arch-linux-workstation.bin
command -v openssl >/dev/null || { echo "SKIP: openssl not installed"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }

expect_rc() { # expect_rc WANT WHAT: checks $rc
	[ "$rc" -eq "$1" ] || fail "$2: exit $rc, expected $1: $(cat "$WORK/err" 2>/dev/null)"
}
b64field() { jq -er "$1" "$2" | base64 -d > "$3" || fail "$2: no base64 field $1"; }
# name of a TPM2B_PUBLIC file with a SHA-256 name: 000b || SHA-256(TPMT_PUBLIC), by sha256sum
name_of() { echo "000b$(tail -c +3 "$1" | sha256sum | cut -d' ' -f1)"; }
# tpm2_makecredential's file (magic, version, TPM2B_ID_OBJECT, TPM2B_ENCRYPTED_SECRET) as a challenge
to_challenge() { # to_challenge CRED AK_NAME OUT
	python3 - "$1" "$2" "$3" <<'EOF' || fail "cannot convert $1"
import base64, json, struct, sys
d = open(sys.argv[1], 'rb').read()
assert d[:8] == bytes.fromhex('badcc0de00000001'), d[:8].hex()
p = 8
parts = []
for _ in range(2):
    n = struct.unpack('>H', d[p:p + 2])[0]
    parts.append(d[p:p + 2 + n])
    p += 2 + n
assert p == len(d)
json.dump({"version": 1, "kind": "mboot-attest-challenge", "ak_name": sys.argv[2],
           "credential_blob": base64.b64encode(parts[0]).decode(),
           "encrypted_secret": base64.b64encode(parts[1]).decode()}, open(sys.argv[3], 'w'))
EOF
}

swtpm_start_ek_cert sha1,sha256
tpm2_pcrextend "0:sha256=$(printf '%064x' 1),sha1=$(printf '%040x' 1)" \
	"7:sha256=$(printf '%064x' 7),sha1=$(printf '%040x' 7)" >/dev/null || fail "tpm2_pcrextend"

# 1. Enroll: the AK file is 0600 and kept; the request's EK is the TPM's RSA EK.
"$M" attest enroll --ak-file "$WORK/ak.json" -o "$WORK/req.json" 2>"$WORK/err" || fail "enroll: $(cat "$WORK/err")"
[ "$(stat -c %a "$WORK/ak.json")" = 600 ] || fail "AK file mode $(stat -c %a "$WORK/ak.json")"
cp "$WORK/ak.json" "$WORK/ak.keep"
rc=0; "$M" attest enroll --ak-file "$WORK/ak.json" -o "$WORK/req2.json" 2>"$WORK/err" || rc=$?
expect_rc 2 "enroll over an existing AK file"
grep -q "already exists" "$WORK/err" || fail "enroll over an AK file: $(cat "$WORK/err")"
cmp -s "$WORK/ak.json" "$WORK/ak.keep" || fail "enroll without --force changed the AK file"
[ ! -e "$WORK/req2.json" ] || fail "enroll without --force wrote a request"
echo "ok: AK file 0600, not replaced without --force (exit 2)"

[ "$(jq -r '.version, .kind' "$WORK/req.json" | tr '\n' ' ')" = "1 mboot-attest-request " ] || fail "request kind"
b64field .ek.public "$WORK/req.json" "$WORK/ek.pub"
tpm2_createek -c "$WORK/ek.ctx" -G rsa -u "$WORK/ek-tools.pub" >/dev/null || fail "tpm2_createek"
cmp -s "$WORK/ek.pub" "$WORK/ek-tools.pub" || fail "the request's EK public is not tpm2_createek -G rsa's"
tpm2_readpublic -c "$WORK/ek.ctx" -f pem -o "$WORK/ek.pem" >/dev/null || fail "tpm2_readpublic of the EK"
tpm2_flushcontext -t >/dev/null || fail "tpm2_flushcontext -t"
tpm2_readpublic -c 0x81010001 -o "$WORK/ek-setup.pub" >/dev/null || fail "tpm2_readpublic 0x81010001"
cmp -s "$WORK/ek.pub" "$WORK/ek-setup.pub" || fail "the request's EK public is not the EK swtpm_setup persisted"
echo "ok: EK public == tpm2_createek -G rsa == swtpm_setup's EK at 0x81010001"

# 2. The EK certificate: tpm2_nvread's bytes; its key is the EK; it chains to the private CA.
[ "$(jq -r .ek.nv_index "$WORK/req.json")" = 0x01c00002 ] || fail "nv_index $(jq -r .ek.nv_index "$WORK/req.json")"
b64field .ek.certificate "$WORK/req.json" "$WORK/ek.der"
tpm2_nvread 0x01c00002 -C o -o "$WORK/nv.der" >/dev/null 2>&1 || fail "tpm2_nvread 0x01c00002"
cmp -s "$WORK/ek.der" "$WORK/nv.der" || fail "the request's EK certificate is not tpm2_nvread's"
openssl x509 -inform DER -in "$WORK/ek.der" -noout -pubkey > "$WORK/cert-key.pem" || fail "openssl x509 of the certificate"
cmp -s "$WORK/cert-key.pem" "$WORK/ek.pem" || fail "the certificate's key is not the EK: $(cat "$WORK/cert-key.pem")"
openssl x509 -inform DER -in "$WORK/ek.der" -out "$WORK/ek.crt"
openssl verify -partial_chain -CAfile "$SWTPM_EK_ISSUER" -ignore_critical "$WORK/ek.crt" >/dev/null ||
	fail "the EK certificate is not signed by swtpm_localca's issuer"
echo "ok: EK certificate == tpm2_nvread 0x01c00002, its key == the EK (openssl), issued by the private CA"

# 3. The AK: a restricted signing key, as tpm2_print reads it; its name is SHA-256 of its public area.
check_ak() { # check_ak AKFILE SCHEME
	b64field .public "$1" "$WORK/akf.pub"
	tpm2_print -t TPM2B_PUBLIC "$WORK/akf.pub" > "$WORK/ak.txt" || fail "tpm2_print of the AK"
	attrs=$(sed -n '/^attributes:/,/raw:/s/^ *value: //p' "$WORK/ak.txt")
	[ "$attrs" = "fixedtpm|fixedparent|sensitivedataorigin|userwithauth|restricted|sign" ] ||
		fail "$1: AK attributes $attrs"
	scheme=$(sed -n '/^scheme:/,/raw:/s/^ *value: //p' "$WORK/ak.txt")
	halg=$(sed -n '/^scheme-halg:/,/raw:/s/^ *value: //p' "$WORK/ak.txt")
	[ "$scheme/$halg" = "$2/sha256" ] || fail "$1: AK scheme $scheme/$halg, expected $2/sha256"
	[ "$(jq -r .name "$1")" = "$(name_of "$WORK/akf.pub")" ] || fail "$1: AK name is not SHA-256 of its public area"
}
check_ak "$WORK/ak.json" ecdsa
grep -q "NIST p256" "$WORK/ak.txt" || fail "the ECC AK is not on P-256: $(cat "$WORK/ak.txt")"
cmp -s <(jq -r .ak.public "$WORK/req.json") <(jq -r .public "$WORK/ak.json") || fail "the request's AK is not the AK file's"
[ "$(jq -r .ak.name "$WORK/req.json")" = "$(jq -r .name "$WORK/ak.json")" ] || fail "the request's AK name"
"$M" attest enroll --ak-alg rsa --ak-file "$WORK/ak-rsa.json" -o "$WORK/req-rsa.json" 2>"$WORK/err" ||
	fail "enroll --ak-alg rsa: $(cat "$WORK/err")"
check_ak "$WORK/ak-rsa.json" rsassa
grep -q "^bits: 2048" "$WORK/ak.txt" || fail "the RSA AK has not 2048 bits"
echo "ok: AKs (ECC P-256 ECDSA, RSA 2048 RSASSA) restricted signing keys per tpm2_print; names by sha256sum"

# 4. Quotes: tpm2_checkquote accepts them with the nonce, refuses another; the values are tpm2_pcrread's.
printf '{"content_type":"test"}\n' > "$WORK/userspace.log"
check_quote() { # check_quote EVIDENCE NONCE
	b64field .ak_public "$1" "$WORK/ev-ak.pub"
	tpm2_print -t TPM2B_PUBLIC -f pem "$WORK/ev-ak.pub" > "$WORK/ev-ak.pem" || fail "AK public to PEM"
	b64field .quote.attest "$1" "$WORK/q.msg"
	b64field .quote.signature "$1" "$WORK/q.sig"
	tpm2_checkquote -u "$WORK/ev-ak.pem" -m "$WORK/q.msg" -s "$WORK/q.sig" -q "$2" >/dev/null 2>"$WORK/err" ||
		fail "tpm2_checkquote refuses $1: $(cat "$WORK/err")"
	if tpm2_checkquote -u "$WORK/ev-ak.pem" -m "$WORK/q.msg" -s "$WORK/q.sig" -q "${2%??}ff" >/dev/null 2>&1; then
		fail "tpm2_checkquote accepts $1 with another nonce"
	fi
}
pcrread_lines() { # bank pcr value, from tpm2_pcrread
	tpm2_pcrread "$1" | awk '/^ *sha[0-9]+:$/ { b = $1; sub(":", "", b); next }
		/^ *[0-9]+ *: *0x/ { l = $0; gsub(/[ :]+/, " ", l); split(l, f, " ")
			v = tolower(f[2]); sub("0x", "", v); print b, f[1], v }' | sort
}
evidence_lines() { jq -r '.pcrs.banks | to_entries[] | .key as $b | .value | to_entries[] | "\($b) \(.key) \(.value)"' "$1" | sort; }

nonce=$(openssl rand -hex 20)
"$M" quote --nonce "$nonce" --ak-file "$WORK/ak.json" --log "$LOG" --userspace-log "$WORK/userspace.log" \
	-o "$WORK/ev.json" 2>"$WORK/err" || fail "quote: $(cat "$WORK/err")"
[ "$(jq -r '.version, .kind' "$WORK/ev.json" | tr '\n' ' ')" = "1 mboot-evidence " ] || fail "evidence kind"
check_quote "$WORK/ev.json" "$nonce"
diff <(evidence_lines "$WORK/ev.json") <(pcrread_lines sha1:all+sha256:all) > "$WORK/diff" ||
	fail "evidence PCR values are not tpm2_pcrread's: $(head "$WORK/diff")"
[ "$(evidence_lines "$WORK/ev.json" | wc -l)" = 48 ] || fail "evidence has not 2 banks x 24 PCRs"
b64field .eventlog "$WORK/ev.json" "$WORK/ev-log"
cmp -s "$WORK/ev-log" "$LOG" || fail "the evidence's event log is not the log's bytes"
b64field .userspace_log "$WORK/ev.json" "$WORK/ev-us"
cmp -s "$WORK/ev-us" "$WORK/userspace.log" || fail "the evidence's userspace log is not the log's bytes"
jq -er '.created | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$")' "$WORK/ev.json" >/dev/null ||
	fail "created is not RFC 3339 UTC"
cmp -s <(jq -r .ak_public "$WORK/ev.json") <(jq -r .public "$WORK/ak.json") || fail "the evidence's AK is not the AK file's"
echo "ok: tpm2_checkquote accepts the quote over all PCRs of sha1+sha256 (not with another nonce); values == tpm2_pcrread; logs carried byte for byte"

nonce=$(openssl rand -hex 8)
"$M" quote --nonce "$nonce" --ak-file "$WORK/ak-rsa.json" --pcrs 0,7 --bank sha256 --log /nonexistent-default \
	-o "$WORK/ev2.json" 2>"$WORK/err" && fail "quote with a missing named --log succeeded"
"$M" quote --nonce "$nonce" --ak-file "$WORK/ak-rsa.json" --pcrs 0,7 --bank sha256 --userspace-log "$WORK/userspace.log" \
	-o "$WORK/ev2.json" 2>"$WORK/err" || fail "quote --pcrs 0,7 --bank sha256: $(cat "$WORK/err")"
check_quote "$WORK/ev2.json" "$nonce"
diff <(evidence_lines "$WORK/ev2.json") <(pcrread_lines sha256:0,7) > "$WORK/diff" ||
	fail "evidence (PCRs 0,7 sha256) is not tpm2_pcrread's: $(head "$WORK/diff")"
if [ ! -e /sys/kernel/security/tpm0/binary_bios_measurements ]; then
	[ "$(jq -r .eventlog "$WORK/ev2.json")" = null ] || fail "no firmware log, yet an eventlog"
fi
echo "ok: RSA AK quote of sha256 PCRs 0,7 accepted by tpm2_checkquote; values == tpm2_pcrread"

# The nonce is what the TPM takes as qualifyingData (TPM2B_DATA): 2 and 64 bytes, and none ('').
for nonce in 0011 "$(openssl rand -hex 64)"; do
	"$M" quote --nonce "$nonce" --ak-file "$WORK/ak.json" --pcrs 0 --bank sha256 -o "$WORK/ev3.json" --force 2>"$WORK/err" ||
		fail "quote --nonce of $((${#nonce} / 2)) bytes: $(cat "$WORK/err")"
	check_quote "$WORK/ev3.json" "$nonce"
done
"$M" quote --nonce '' --ak-file "$WORK/ak.json" --pcrs 0 --bank sha256 -o "$WORK/ev3.json" --force 2>"$WORK/err" ||
	fail "quote --nonce '': $(cat "$WORK/err")"
b64field .quote.attest "$WORK/ev3.json" "$WORK/q.msg"
tpm2_print -t TPMS_ATTEST "$WORK/q.msg" > "$WORK/q.txt" || fail "tpm2_print TPMS_ATTEST"
grep -Eq '^extraData: *$' "$WORK/q.txt" || fail "quote --nonce '': extraData not empty per tpm2_print: $(grep extraData "$WORK/q.txt")"
echo "ok: quote --nonce of 2 and 64 bytes accepted by tpm2_checkquote; --nonce '' gives an empty extraData (tpm2_print)"

# 5. Activation of tpm2_makecredential's credential for the AK's name.
ak_name=$(jq -r .name "$WORK/ak.json")
head -c 32 /dev/urandom > "$WORK/secret"
tpm2_makecredential -T none -u "$WORK/ek.pub" -s "$WORK/secret" -n "$ak_name" -o "$WORK/cred" >/dev/null 2>&1 ||
	fail "tpm2_makecredential"
to_challenge "$WORK/cred" "$ak_name" "$WORK/challenge.json"
"$M" attest activate -i "$WORK/challenge.json" --ak-file "$WORK/ak.json" -o "$WORK/resp.json" 2>"$WORK/err" ||
	fail "activate: $(cat "$WORK/err")"
[ "$(jq -r '.version, .kind, .ak_name' "$WORK/resp.json" | tr '\n' ' ')" = "1 mboot-attest-response $ak_name " ] ||
	fail "response: $(cat "$WORK/resp.json")"
b64field .credential "$WORK/resp.json" "$WORK/got"
cmp -s "$WORK/got" "$WORK/secret" || fail "the response's credential is not the secret tpm2_makecredential sealed"
echo "ok: activation opens tpm2_makecredential's credential; response credential == the secret"

# 6. Refusals and errors.
rc=0; "$M" quote --nonce "$nonce" --ak-file "$WORK/none.json" 2>"$WORK/err" >/dev/null || rc=$?
expect_rc 2 "quote without an AK file"
grep -q "attest enroll" "$WORK/err" || fail "no AK file: $(cat "$WORK/err")"
rc=0; "$M" attest activate -i "$WORK/challenge.json" --ak-file "$WORK/none.json" 2>"$WORK/err" >/dev/null || rc=$?
expect_rc 2 "activate without an AK file"
for n in 001 "$(printf '%0130d' 0)" zz11223344556677; do
	rc=0; "$M" quote --nonce "$n" --ak-file "$WORK/ak.json" 2>"$WORK/err" >/dev/null || rc=$?
	expect_rc 2 "quote --nonce $n"
done

# A firmware log the verifier would refuse as malformed (empty, cut short) is refused before any quote.
head -c 100 "$LOG" > "$WORK/short.log"
for bad in /dev/null "$WORK/short.log"; do
	rc=0; "$M" quote --nonce "$nonce" --ak-file "$WORK/ak.json" --log "$bad" -o "$WORK/bad-evidence.json" \
		2>"$WORK/err" >/dev/null || rc=$?
	expect_rc 2 "quote --log $bad"
	[ ! -e "$WORK/bad-evidence.json" ] || fail "quote --log $bad wrote evidence"
done

malformed() { # malformed WHAT JQ-FILTER
	jq "$2" "$WORK/challenge.json" > "$WORK/bad.json"
	rc=0; "$M" attest activate -i "$WORK/bad.json" --ak-file "$WORK/ak.json" 2>"$WORK/err" >/dev/null || rc=$?
	expect_rc 2 "challenge with $1"
}
malformed "another kind" '.kind = "mboot-attest-response"'
malformed "version 2" '.version = 2'
malformed "no credential_blob" 'del(.credential_blob)'
malformed "a credential_blob not base64" '.credential_blob = "@@@@"'
malformed "a truncated TPM2B_ID_OBJECT" '.credential_blob = (.credential_blob | @base64d | .[0:10] | @base64)'
malformed "an encrypted_secret with bytes after it" '.encrypted_secret = ("AAEA" + .encrypted_secret)'
malformed "an odd-length ak_name" '.ak_name = "000"'
printf '{"version": 1, "kind": "mboot-attest-challenge",' > "$WORK/bad.json"
rc=0; "$M" attest activate -i "$WORK/bad.json" --ak-file "$WORK/ak.json" 2>"$WORK/err" >/dev/null || rc=$?
expect_rc 2 "a challenge cut short"
echo "ok: no AK file, bad nonces and 8 malformed challenges: exit 2"

# A credential made for another AK (the RSA one): refused (exit 1) whether the challenge names
# that AK, or names this one (then the TPM's HMAC check over the name fails: TPM_RC_INTEGRITY).
other=$(jq -r .name "$WORK/ak-rsa.json")
tpm2_makecredential -T none -u "$WORK/ek.pub" -s "$WORK/secret" -n "$other" -o "$WORK/cred2" >/dev/null 2>&1 ||
	fail "tpm2_makecredential for the other AK"
to_challenge "$WORK/cred2" "$other" "$WORK/other.json"
rc=0; "$M" attest activate -i "$WORK/other.json" --ak-file "$WORK/ak.json" -o "$WORK/r2" 2>"$WORK/err" || rc=$?
expect_rc 1 "a challenge for another AK"
grep -q "another AK" "$WORK/err" || fail "another AK: $(cat "$WORK/err")"
to_challenge "$WORK/cred2" "$ak_name" "$WORK/other.json"
rc=0; "$M" attest activate -i "$WORK/other.json" --ak-file "$WORK/ak.json" -o "$WORK/r2" 2>"$WORK/err" || rc=$?
expect_rc 1 "a credential for another AK's name under this AK's name"
grep -q "cannot open the credential" "$WORK/err" || fail "credential for another name: $(cat "$WORK/err")"
[ ! -e "$WORK/r2" ] || fail "a refused activation wrote a response"
"$M" attest activate -i "$WORK/other.json" --ak-file "$WORK/ak-rsa.json" -o "$WORK/r3" 2>"$WORK/err" &&
	fail "the RSA AK opened a challenge that names the ECC AK"
to_challenge "$WORK/cred2" "$other" "$WORK/other.json"
"$M" attest activate -i "$WORK/other.json" --ak-file "$WORK/ak-rsa.json" -o "$WORK/r3" 2>"$WORK/err" ||
	fail "the RSA AK cannot open its own credential: $(cat "$WORK/err")"
echo "ok: a credential for another AK: exit 1 (named, or opened by the TPM and refused)"

# 7. The high range (EK Credential Profile 2.3): without the RSA certificate, enroll takes the
# ECC P-384 EK whose certificate swtpm_setup wrote at 0x01c00016 (template H-3).
tpm2_nvundefine -C p 0x01c00002 >/dev/null || fail "tpm2_nvundefine 0x01c00002"
"$M" attest enroll --ak-file "$WORK/ak-h.json" -o "$WORK/req-h.json" 2>"$WORK/err" || fail "enroll (high range): $(cat "$WORK/err")"
[ "$(jq -r .ek.nv_index "$WORK/req-h.json")" = 0x01c00016 ] || fail "high range: nv_index $(jq -r .ek.nv_index "$WORK/req-h.json")"
b64field .ek.public "$WORK/req-h.json" "$WORK/ek-h.pub"
tpm2_readpublic -c 0x81010016 -o "$WORK/ek-h-setup.pub" >/dev/null || fail "tpm2_readpublic 0x81010016"
cmp -s "$WORK/ek-h.pub" "$WORK/ek-h-setup.pub" || fail "the P-384 EK is not the one swtpm_setup persisted at 0x81010016"
b64field .ek.certificate "$WORK/req-h.json" "$WORK/ek-h.der"
tpm2_nvread 0x01c00016 -C o -o "$WORK/nv-h.der" >/dev/null 2>&1 || fail "tpm2_nvread 0x01c00016"
cmp -s "$WORK/ek-h.der" "$WORK/nv-h.der" || fail "the P-384 EK certificate is not tpm2_nvread's"
ak_name=$(jq -r .name "$WORK/ak-h.json")
tpm2_makecredential -T none -u "$WORK/ek-h.pub" -s "$WORK/secret" -n "$ak_name" -o "$WORK/cred-h" >/dev/null 2>&1 ||
	fail "tpm2_makecredential for the P-384 EK"
to_challenge "$WORK/cred-h" "$ak_name" "$WORK/challenge-h.json"
"$M" attest activate -i "$WORK/challenge-h.json" --ak-file "$WORK/ak-h.json" -o "$WORK/resp-h.json" 2>"$WORK/err" ||
	fail "activate (P-384 EK): $(cat "$WORK/err")"
b64field .credential "$WORK/resp-h.json" "$WORK/got"
cmp -s "$WORK/got" "$WORK/secret" || fail "P-384 EK: the credential is not the secret"
echo "ok: high range: the P-384 EK == swtpm_setup's at 0x81010016, certificate == tpm2_nvread 0x01c00016, activation opens tpm2_makecredential's"

"$M" attest enroll --help | grep -q "^Usage: mboot attest enroll" || fail "enroll --help"
"$M" attest activate --help | grep -q "^Usage: mboot attest activate" || fail "activate --help"
"$M" quote --help | grep -q "^Usage: mboot quote" || fail "quote --help"
echo "PASS"
