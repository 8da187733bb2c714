#!/bin/bash
# Signed policies (TPM2_PolicyAuthorize) against a swtpm, checked with tpm2-tools and
# openssl: the authorising key's name is tpm2_loadexternal's; the sealed policy digest is a
# tpm2_policyauthorize trial session's; the approved policy is a tpm2_policypcr trial's and
# the RSA signature is byte for byte `openssl dgst -sha256 -sign`'s (ECDSA: openssl verifies
# it); tpm2-tools alone unseals an mboot-sealed secret with mboot's signature. Then the
# release flow: a new signature, no reseal. Refused: a signature for other values, from
# another key, forged; malformed signature files are input errors.
. "${MB_TPM_TESTS:-$(dirname "$0")}/swtpm-env.sh"
M=${MBOOT:?}

pcr_hex() { tpm2_pcrread "sha256:$1" | sed -n "s/^ *$1 *: 0x//p" | tr 'A-F' 'a-f'; }
expect_rc() { # expect_rc WANT WHAT: checks $rc
	[ "$rc" -eq "$1" ] || fail "$2: exit $rc, expected $1: $(cat "$WORK/err" 2>/dev/null)"
}
trial_pcr() { # trial_pcr SEL OUT: tpm2-tools' PolicyPCR digest of the current PCRs
	tpm2_startauthsession -S "$WORK/s.ctx" >/dev/null || fail "tpm2_startauthsession"
	tpm2_policypcr -S "$WORK/s.ctx" -l "$1" -L "$2" >/dev/null || fail "tpm2_policypcr"
	tpm2_flushcontext "$WORK/s.ctx" >/dev/null
}
K=$WORK/keys
mkdir -p "$K"
openssl genrsa -out "$K/rsa.pem" 2048 2>/dev/null || fail "openssl genrsa"
openssl rsa -in "$K/rsa.pem" -pubout -out "$K/rsa.pub" 2>/dev/null || fail "openssl rsa -pubout"
openssl genrsa -out "$K/other.pem" 3072 2>/dev/null || fail "openssl genrsa"
openssl ecparam -name prime256v1 -genkey -noout -out "$K/ec.pem" || fail "openssl ecparam"
openssl ec -in "$K/ec.pem" -pubout -out "$K/ec.pub" 2>/dev/null || fail "openssl ec -pubout"

swtpm_start
tpm2_pcrextend "0:sha256=$(printf '%064x' 1)" "7:sha256=$(printf '%064x' 7)" || fail "tpm2_pcrextend"
printf 'disk key \0\377 for the fleet\n' > "$WORK/secret"

# 1. Sealing: the key's name and the policy digest are what the TPM and tpm2-tools compute.
"$M" seal --authorized-by "$K/rsa.pub" -i "$WORK/secret" -o "$WORK/sealed" 2>"$WORK/err" ||
	fail "seal --authorized-by: $(cat "$WORK/err")"
[ "$(stat -c %a "$WORK/sealed")" = 600 ] || fail "sealed file mode $(stat -c %a "$WORK/sealed")"
[ "$(jq -r .policy.kind "$WORK/sealed")" = authorize ] || fail "policy kind $(jq -r .policy.kind "$WORK/sealed")"
jq -e 'has("pcrs")' "$WORK/sealed" >/dev/null && fail "an authorize policy keeps PCR values"
tpm2_loadexternal -C o -G rsa -u "$K/rsa.pub" -c "$WORK/k.ctx" -n "$WORK/rsa.name" >/dev/null || fail "tpm2_loadexternal"
tpm2_flushcontext -t >/dev/null
name=$(xxd -p -c 64 "$WORK/rsa.name")
[ "$(jq -r .policy.key.name "$WORK/sealed")" = "$name" ] || fail "key name $(jq -r .policy.key.name "$WORK/sealed"), tpm2_loadexternal $name"
tpm2_startauthsession -S "$WORK/s.ctx" >/dev/null || fail "tpm2_startauthsession"
: > "$WORK/none"
tpm2_policyauthorize -S "$WORK/s.ctx" -i "$WORK/none" -n "$WORK/rsa.name" -L "$WORK/auth.dig" >/dev/null ||
	fail "tpm2_policyauthorize trial"
tpm2_flushcontext "$WORK/s.ctx" >/dev/null
want=$(xxd -p -c 64 "$WORK/auth.dig")
[ "$(jq -r .policy.digest "$WORK/sealed")" = "$want" ] || fail "policy digest $(jq -r .policy.digest "$WORK/sealed"), tpm2_policyauthorize trial $want"
grep -aq "for the fleet" "$WORK/sealed" && fail "the secret is in the sealed file"
echo "ok: seal --authorized-by: key name == tpm2_loadexternal's ($name), policy == tpm2_policyauthorize trial ($want)"

# 2. Signing: approved policy == tpm2_policypcr trial; RSA signature == openssl dgst -sign.
"$M" pcrs --json > "$WORK/now.json" || fail "pcrs"
"$M" policy sign --key "$K/rsa.pem" --pcrs 0,7 --values "$WORK/now.json" -o "$WORK/a.sig" >/dev/null 2>"$WORK/err" ||
	fail "policy sign: $(cat "$WORK/err")"
trial_pcr sha256:0,7 "$WORK/approved.bin"
[ "$(jq -r .policy "$WORK/a.sig")" = "$(xxd -p -c 64 "$WORK/approved.bin")" ] ||
	fail "approved policy $(jq -r .policy "$WORK/a.sig"), tpm2_policypcr trial $(xxd -p -c 64 "$WORK/approved.bin")"
[ "$(jq -r .key.name "$WORK/a.sig")" = "$name" ] || fail "signature's key name"
openssl dgst -sha256 -sign "$K/rsa.pem" -out "$WORK/openssl.sig" "$WORK/approved.bin" || fail "openssl dgst -sign"
[ "$(jq -r .signature.value "$WORK/a.sig")" = "$(base64 -w0 "$WORK/openssl.sig")" ] ||
	fail "RSA signature differs from openssl dgst -sha256 -sign's"
echo "ok: policy sign: approved policy == tpm2_policypcr trial; RSASSA bytes == openssl dgst -sha256 -sign"

# 3. Unseal with the signature; tpm2-tools alone unseals it too, with mboot's signature.
"$M" unseal -i "$WORK/sealed" --signature "$WORK/a.sig" 2>"$WORK/err" | cmp - "$WORK/secret" ||
	fail "unseal --signature: $(cat "$WORK/err")"
# tpm2-tools' default SRK made persistent at 0x81000001 is the parent both tools load under.
tpm2_createprimary -C o -G ecc256:aes128cfb -c "$WORK/srk.ctx" >/dev/null || fail "tpm2_createprimary"
tpm2_evictcontrol -C o -c "$WORK/srk.ctx" 0x81000001 >/dev/null || fail "tpm2_evictcontrol"
tpm2_flushcontext -t >/dev/null
"$M" seal --authorized-by "$K/rsa.pub" -i "$WORK/secret" -o "$WORK/sealed-srk" || fail "seal under the persistent SRK"
[ "$(jq -r .parent.handle "$WORK/sealed-srk")" = 0x81000001 ] || fail "parent $(jq -c .parent "$WORK/sealed-srk")"
jq -r .public "$WORK/sealed-srk" | base64 -d > "$WORK/obj.pub"
jq -r .private "$WORK/sealed-srk" | base64 -d > "$WORK/obj.priv"
jq -r .signature.value "$WORK/a.sig" | base64 -d > "$WORK/a.sig.bin"
tpm2_load -C 0x81000001 -u "$WORK/obj.pub" -r "$WORK/obj.priv" -c "$WORK/obj.ctx" >/dev/null || fail "tpm2_load of mboot's object"
tpm2_flushcontext -t >/dev/null
tpm2_loadexternal -C o -G rsa -u "$K/rsa.pub" -c "$WORK/k.ctx" >/dev/null || fail "tpm2_loadexternal"
tpm2_verifysignature -c "$WORK/k.ctx" -g sha256 -m "$WORK/approved.bin" -s "$WORK/a.sig.bin" -f rsassa \
	-t "$WORK/ticket" >/dev/null || fail "tpm2_verifysignature of mboot's signature"
tpm2_flushcontext -t >/dev/null
tpm2_startauthsession --policy-session -S "$WORK/s.ctx" >/dev/null || fail "policy session"
tpm2_policypcr -S "$WORK/s.ctx" -l sha256:0,7 >/dev/null || fail "tpm2_policypcr"
tpm2_policyauthorize -S "$WORK/s.ctx" -i "$WORK/approved.bin" -n "$WORK/rsa.name" -t "$WORK/ticket" >/dev/null ||
	fail "tpm2_policyauthorize"
tpm2_unseal -c "$WORK/obj.ctx" -p session:"$WORK/s.ctx" > "$WORK/tools.out" || fail "tpm2_unseal"
tpm2_flushcontext "$WORK/s.ctx" >/dev/null
tpm2_flushcontext -t >/dev/null
cmp -s "$WORK/tools.out" "$WORK/secret" || fail "tpm2_unseal gave other bytes"
tpm2_evictcontrol -C o -c 0x81000001 >/dev/null || fail "evict"
echo "ok: unseal --signature gives the secret; so do tpm2_verifysignature + policypcr + policyauthorize + unseal"

# 4. A release: the PCRs move; the old signature fails naming the PCR; a new one works, no reseal.
cp "$WORK/sealed" "$WORK/sealed.orig"
tpm2_pcrextend "7:sha256=$(printf '%064x' 8)" || fail "tpm2_pcrextend"
"$M" unseal -i "$WORK/sealed" --signature "$WORK/a.sig" > "$WORK/out" 2>"$WORK/err"; rc=$?
expect_rc 1 "unseal with the old release's signature"
[ -s "$WORK/out" ] && fail "a failed unseal wrote to stdout"
grep -q "PCR 7 (sha256) differs: signed .*, now $(pcr_hex 7)" "$WORK/err" || fail "PCR 7 not named: $(cat "$WORK/err")"
grep -q "PCR 0 " "$WORK/err" && fail "PCR 0 named: $(cat "$WORK/err")"
"$M" pcrs --json > "$WORK/now2.json"
"$M" policy sign --key "$K/rsa.pem" --pcrs 0,7 --values "$WORK/now2.json" -o "$WORK/b.sig" >/dev/null || fail "policy sign (new release)"
"$M" unseal -i "$WORK/sealed" --signature "$WORK/a.sig" --signature "$WORK/b.sig" | cmp - "$WORK/secret" ||
	fail "unseal with the new release's signature"
cmp -s "$WORK/sealed" "$WORK/sealed.orig" || fail "the sealed file changed"
"$M" reseal -i "$WORK/sealed" > "$WORK/out" 2>"$WORK/err"; rc=$?
expect_rc 2 "reseal of a signed-policy secret"
grep -q "signed policies" "$WORK/err" || fail "reseal refusal not explained: $(cat "$WORK/err")"
echo "ok: after the PCRs moved, the old signature exits 1 naming PCR 7; the new one unseals; the sealed file is untouched"

# 5. A signature for other values fails: as shipped (mboot names the PCR), and forged to claim
#    today's values (policy recomputed by tpm2_policypcr) with the old signature: the TPM refuses.
"$M" unseal -i "$WORK/sealed" --signature "$WORK/a.sig" >/dev/null 2>"$WORK/err"; rc=$?
expect_rc 1 "signature for other values"
trial_pcr sha256:0,7 "$WORK/approved2.bin"
jq --arg v "$(pcr_hex 7)" --arg p "$(xxd -p -c 64 "$WORK/approved2.bin")" '.pcrs.values["7"]=$v | .policy=$p' \
	"$WORK/a.sig" > "$WORK/forged.sig"
"$M" unseal -i "$WORK/sealed" --signature "$WORK/forged.sig" > "$WORK/out" 2>"$WORK/err"; rc=$?
expect_rc 1 "a signature over other values, relabelled"
[ -s "$WORK/out" ] && fail "a refused unseal wrote to stdout"
grep -q "TPM_RC_SIGNATURE" "$WORK/err" || fail "the TPM's refusal not said: $(cat "$WORK/err")"
echo "ok: a signature for other values exits 1; relabelled to today's values, the TPM refuses it (TPM_RC_SIGNATURE)"

# 6. A signature from another key fails: named by mboot; relabelled with the sealed key's name, the TPM refuses.
"$M" policy sign --key "$K/other.pem" --pcrs 0,7 --values "$WORK/now2.json" -o "$WORK/other.sig" >/dev/null || fail "sign with another key"
"$M" unseal -i "$WORK/sealed" --signature "$WORK/other.sig" > "$WORK/out" 2>"$WORK/err"; rc=$?
expect_rc 1 "signature from another key"
grep -q "other.sig: signed by key 000b.*, but the secret is sealed to key $name" "$WORK/err" || fail "other key not said: $(cat "$WORK/err")"
"$M" unseal -i "$WORK/sealed" --signature "$WORK/other.sig" --signature "$WORK/a.sig" --json > "$WORK/report.json" 2>"$WORK/err"; rc=$?
expect_rc 1 "unseal --json, no signature fits"
jq -e --arg n "$name" '.unsealed == false and .signatures[0].sealed_key == $n and (.signatures[0].file | endswith("other.sig"))
	and ([.pcrs[].pcr] == [7]) and (.pcrs[0].signature | endswith("a.sig"))' "$WORK/report.json" >/dev/null ||
	fail "--json report: $(cat "$WORK/report.json")"
[ "$(jq -r '.pcrs[0].actual' "$WORK/report.json")" = "$(pcr_hex 7)" ] || fail "--json: actual is not tpm2_pcrread's PCR 7"
jq --arg n "$name" '.key.name=$n' "$WORK/other.sig" > "$WORK/other-relabelled.sig"
"$M" unseal -i "$WORK/sealed" --signature "$WORK/other-relabelled.sig" > "$WORK/out" 2>"$WORK/err"; rc=$?
expect_rc 1 "another key's signature relabelled"
grep -q "TPM_RC_SIGNATURE" "$WORK/err" || fail "the TPM's refusal not said: $(cat "$WORK/err")"
# a refused signature first does not hide a good one after it
"$M" unseal -i "$WORK/sealed" --signature "$WORK/other-relabelled.sig" --signature "$WORK/b.sig" > "$WORK/out" 2>"$WORK/err" ||
	fail "a refused signature before a good one: $(cat "$WORK/err")"
cmp -s "$WORK/out" "$WORK/secret" || fail "a refused signature before a good one: wrong secret"
grep -q "other-relabelled.sig: .*TPM_RC_SIGNATURE" "$WORK/err" || fail "the refused signature not said: $(cat "$WORK/err")"
"$M" unseal -i "$WORK/sealed" > "$WORK/out" 2>"$WORK/err"; rc=$?
expect_rc 2 "unseal of a signed-policy secret without --signature"
echo "ok: a signature from another key exits 1 (named; relabelled: the TPM refuses)"

# 7. ECC P-256: ECDSA signatures verify with openssl, and unseal.
"$M" seal --authorized-by "$K/ec.pub" -i "$WORK/secret" -o "$WORK/sealed-ec" || fail "seal --authorized-by an EC key"
tpm2_loadexternal -C o -G ecc -u "$K/ec.pub" -c "$WORK/k.ctx" -n "$WORK/ec.name" >/dev/null || fail "tpm2_loadexternal ec"
tpm2_flushcontext -t >/dev/null
[ "$(jq -r .policy.key.name "$WORK/sealed-ec")" = "$(xxd -p -c 64 "$WORK/ec.name")" ] || fail "EC key name differs from tpm2_loadexternal's"
"$M" policy sign --key "$K/ec.pem" --pcrs 0,7 --values "$WORK/now2.json" -o "$WORK/ec.sig" >/dev/null || fail "sign with the EC key"
[ "$(jq -r .signature.scheme "$WORK/ec.sig")" = ecdsa ] || fail "scheme"
jq -r .signature.value "$WORK/ec.sig" | base64 -d > "$WORK/ec.sig.der"
openssl dgst -sha256 -verify "$K/ec.pub" -signature "$WORK/ec.sig.der" "$WORK/approved2.bin" >/dev/null ||
	fail "openssl does not verify mboot's ECDSA signature"
"$M" unseal -i "$WORK/sealed-ec" --signature "$WORK/ec.sig" | cmp - "$WORK/secret" || fail "unseal with an ECDSA signature"
# an ECDSA signature offered for the RSA-sealed secret: refused before the TPM is asked to verify (exit 1)
jq --arg n "$name" '.key.name=$n' "$WORK/ec.sig" > "$WORK/ec-relabelled.sig"
"$M" unseal -i "$WORK/sealed" --signature "$WORK/ec-relabelled.sig" > "$WORK/out" 2>"$WORK/err"; rc=$?
expect_rc 1 "an ECDSA signature for the RSA-sealed secret"
grep -q "the signature is ECDSA, the key the secret is sealed to RSA" "$WORK/err" || fail "scheme mismatch not said: $(cat "$WORK/err")"
echo "ok: ECC P-256: name == tpm2_loadexternal's, openssl verifies the ECDSA signature, unseal works"

# 8. Hostile input: malformed signature files and keys are input errors (exit 2), never a crash.
bad() { # bad WHAT FILE
	"$M" unseal -i "$WORK/sealed" --signature "$2" > "$WORK/out" 2>"$WORK/err"; rc=$?
	expect_rc 2 "$1"
	[ -s "$WORK/out" ] && fail "$1: wrote to stdout"
	return 0
}
head -c 100 "$WORK/b.sig" > "$WORK/t.sig"; bad "truncated signature file" "$WORK/t.sig"
head -c 2000000 /dev/zero | tr '\0' ' ' > "$WORK/big.sig"; bad "oversized signature file" "$WORK/big.sig"
jq '.pcrs.values["7"]="00"' "$WORK/b.sig" > "$WORK/h1.sig"; bad "short PCR value" "$WORK/h1.sig"
jq '.policy="'"$(printf '%064x' 0)"'"' "$WORK/b.sig" > "$WORK/h2.sig"; bad "policy not of the values" "$WORK/h2.sig"
jq '.signature.scheme="rsapss"' "$WORK/b.sig" > "$WORK/h3.sig"; bad "unknown scheme" "$WORK/h3.sig"
jq '.signature.value="!!!!"' "$WORK/b.sig" > "$WORK/h4.sig"; bad "bad base64" "$WORK/h4.sig"
jq --arg v "$(head -c 2000 /dev/urandom | base64 -w0)" '.signature.value=$v' "$WORK/b.sig" > "$WORK/h5.sig"; bad "oversized signature" "$WORK/h5.sig"
jq '.pcrs.selection=[] | .pcrs.values={}' "$WORK/b.sig" > "$WORK/h6.sig"; bad "no PCRs" "$WORK/h6.sig"
grep -q "approves any boot" "$WORK/err" || fail "empty selection not explained: $(cat "$WORK/err")"
jq '.key.name="000b00"' "$WORK/b.sig" > "$WORK/h7.sig"; bad "short key name" "$WORK/h7.sig"
jq '.signature.scheme="ecdsa"' "$WORK/b.sig" > "$WORK/h8.sig"; bad "RSA bytes called ECDSA (not DER)" "$WORK/h8.sig"
jq --arg v "$(head -c 600 /dev/urandom | base64 -w0)" '.signature.value=$v' "$WORK/b.sig" > "$WORK/h9.sig"; bad "600-byte RSA signature" "$WORK/h9.sig"
jq '.policy.key.name="'"000b$(printf '%064x' 0)"'"' "$WORK/sealed" > "$WORK/h.sealed"
"$M" unseal -i "$WORK/h.sealed" --signature "$WORK/b.sig" >/dev/null 2>"$WORK/err"; rc=$?
expect_rc 2 "sealed file whose key name is not its key's"
grep -q 'policy.key.name' "$WORK/err" || fail "field not named: $(cat "$WORK/err")"
jq '.policy.digest="'"$(printf '%064x' 1)"'"' "$WORK/sealed" > "$WORK/h.sealed"
"$M" unseal -i "$WORK/h.sealed" --signature "$WORK/b.sig" >/dev/null 2>"$WORK/err"; rc=$?
expect_rc 2 "sealed file whose digest is not PolicyAuthorize's"
head -c 300 "$K/rsa.pub" > "$WORK/cut.pem"
"$M" seal --authorized-by "$WORK/cut.pem" -i "$WORK/secret" -o "$WORK/x" 2>"$WORK/err"; rc=$?
expect_rc 2 "truncated public key"
openssl ecparam -name secp384r1 -genkey -noout -out "$K/p384.pem"
"$M" seal --authorized-by "$K/p384.pem" -i "$WORK/secret" -o "$WORK/x" 2>"$WORK/err"; rc=$?
expect_rc 2 "a P-384 key"
grep -q "P-256" "$WORK/err" || fail "curve not explained: $(cat "$WORK/err")"
"$M" seal --authorized-by "$K/rsa.pub" --pcrs 7 -i "$WORK/secret" -o "$WORK/x" 2>"$WORK/err"; rc=$?
expect_rc 2 "--authorized-by with --pcrs"
"$M" policy sign --key "$K/rsa.pub" --pcrs 7 --values "$WORK/now2.json" -o "$WORK/x" 2>"$WORK/err"; rc=$?
expect_rc 2 "policy sign with a public key"
echo "ok: malformed signature files, sealed files and keys: exit 2 with the field named"
echo "PASS"
