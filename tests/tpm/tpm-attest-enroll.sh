#!/bin/bash
# The verifier's enrollment (mboot attest challenge) against swtpms manufactured with EK
# certificates by swtpm_localca. The request is built from tpm2-tools' output (tpm2_createek,
# tpm2_createak, tpm2_nvread of the EK certificate); the challenge is activated by
# tpm2_activatecredential, which must return the very credential whose SHA-256 the state holds:
# RSA 2048 EK (with its certificate), ECC P-384 EK (high range, with its certificate) and ECC
# P-256 EK (no certificate: trust on first use). Then each refusal with its reason: an EK
# certificate from another CA, an EK certificate for another key, a response with a credential
# from another swtpm, an AK without `restricted`, an AK name that is not its public's; and
# malformed files (exit 2), outputs kept without --force. Last, mboot's own machine side
# (attest enroll, attest activate) against the verifier's.
. "${MB_TPM_TESTS:-$(dirname "$0")}/swtpm-env.sh"
M=${MBOOT:?}
command -v jq >/dev/null || { echo "SKIP: jq not installed"; exit 77; }

b64() { base64 -w0 "$1"; }
hexof() { xxd -p -c 256 "$1"; }
request() { # request EK_PUB CERT_DER|- AK_PUB AK_NAME OUT
	local cert=null
	[ "$2" = - ] || cert="\"$(b64 "$2")\""
	printf '{"version": 1, "kind": "mboot-attest-request", "ek": {"public": "%s", "certificate": %s, "nv_index": null}, "ak": {"public": "%s", "name": "%s"}}\n' \
		"$(b64 "$1")" "$cert" "$(b64 "$3")" "$(hexof "$4")" > "$5"
}
# tpm2_makecredential's file: magic, version 1, TPM2B_ID_OBJECT, TPM2B_ENCRYPTED_SECRET
credfile() { # credfile CHALLENGE OUT
	{ printf '\272\334\300\336\000\000\000\001'
	  jq -r .credential_blob "$1" | base64 -d
	  jq -r .encrypted_secret "$1" | base64 -d; } > "$2"
}
response() { # response AK_NAME_HEX CREDENTIAL_FILE OUT
	printf '{"version": 1, "kind": "mboot-attest-response", "ak_name": "%s", "credential": "%s"}\n' \
		"$1" "$(b64 "$2")" > "$3"
}
# activate CHALLENGE EK(ctx or handle) AK_CTX OUT [policy]: tpm2_activatecredential; "policy"
# authorizes the EK with its PolicySecret(endorsement) (the low-range templates), else empty auth.
activate() {
	local auth=()
	credfile "$1" "$WORK/cred.bin"
	tpm2_flushcontext -t >/dev/null
	if [ "${5:-}" = policy ]; then
		tpm2_startauthsession --policy-session -S "$WORK/s.ctx" >/dev/null || fail "tpm2_startauthsession"
		tpm2_policysecret -S "$WORK/s.ctx" -c e >/dev/null || fail "tpm2_policysecret"
		auth=(-P "session:$WORK/s.ctx")
	fi
	tpm2_activatecredential -c "$3" -C "$2" -i "$WORK/cred.bin" -o "$4" "${auth[@]}" >/dev/null 2>"$WORK/act.err"
	local rc=$?
	[ "${5:-}" = policy ] && tpm2_flushcontext "$WORK/s.ctx" >/dev/null
	return $rc
}
expect() { # expect RC WHAT WORDS... : runs nothing; checks $rc and that stderr has WORDS
	local want=$1 what=$2
	shift 2
	[ "$rc" -eq "$want" ] || fail "$what: exit $rc, expected $want: $(cat "$WORK/err")"
	[ $# -eq 0 ] || grep -qF -- "$*" "$WORK/err" || fail "$what: no \"$*\" in: $(cat "$WORK/err")"
}
challenge() { # challenge REQUEST OUT_CHALLENGE OUT_STATE CA-OPTIONS...
	local req=$1 ch=$2 st=$3
	shift 3
	"$M" attest challenge -i "$req" "$@" -o "$ch" --state "$st" >/dev/null 2>"$WORK/err"
}
check() { "$M" attest challenge --state "$1" -i "$2" -o "$3" >/dev/null 2>"$WORK/err"; }

# ---- machine A: manufactured with EK certificates by CA "a" ----
swtpm_start_ek_enroll a
CA=$SWTPM_DIR/a/ca
A=$WORK/a
mkdir -p "$A"
tpm2_createek -c "$A/ek.ctx" -G rsa -u "$A/ek.pub" -f tss >/dev/null || fail "tpm2_createek"
tpm2_createak -C "$A/ek.ctx" -c "$A/ak.ctx" -G ecc -g sha256 -s ecdsa -u "$A/ak.pub" -f tss -n "$A/ak.name" \
	-r "$A/ak.priv" >/dev/null || fail "tpm2_createak"
tpm2_flushcontext -t >/dev/null
tpm2_nvread 0x01c00002 -o "$A/ekcert.der" 2>/dev/null || fail "tpm2_nvread RSA EK certificate"
tpm2_nvread 0x01c00016 -o "$A/ekcert384.der" 2>/dev/null || fail "tpm2_nvread ECC P-384 EK certificate"
tpm2_readpublic -c 0x81010016 -o "$A/ek384.pub" -f tss >/dev/null || fail "tpm2_readpublic 0x81010016"
openssl verify -CAfile "$CA/swtpm-localca-rootca-cert.pem" -untrusted "$CA/issuercert.pem" \
	<(openssl x509 -inform der -in "$A/ekcert.der") >/dev/null || fail "openssl does not verify the EK certificate"

# 1. RSA EK with its certificate, CAs as a directory (root, intermediate, and the CA's keys
# and config, which are skipped): challenge, tpm2_activatecredential, check.
request "$A/ek.pub" "$A/ekcert.der" "$A/ak.pub" "$A/ak.name" "$A/req.json"
challenge "$A/req.json" "$A/ch.json" "$A/st.json" --ek-ca "$CA"; rc=$?
expect 0 "challenge (RSA EK)"
[ "$(jq -r .kind "$A/ch.json")" = mboot-attest-challenge ] || fail "challenge kind"
[ "$(jq -r .ak_name "$A/ch.json")" = "$(hexof "$A/ak.name")" ] || fail "challenge ak_name is not tpm2_createak's name"
[ "$(stat -c %a "$A/st.json")" = 600 ] || fail "state mode $(stat -c %a "$A/st.json")"
activate "$A/ch.json" "$A/ek.ctx" "$A/ak.ctx" "$A/cred" policy || fail "tpm2_activatecredential: $(cat "$WORK/act.err")"
[ "$(wc -c < "$A/cred")" -eq 32 ] || fail "credential of $(wc -c < "$A/cred") bytes"
[ "$(sha256sum < "$A/cred" | cut -d' ' -f1)" = "$(jq -r .credential_sha256 "$A/st.json")" ] ||
	fail "the TPM's credential is not the one whose digest the state holds"
grep -q "$(hexof "$A/cred")" "$A/st.json" "$A/ch.json" && fail "the credential is in the state or challenge in clear"
response "$(hexof "$A/ak.name")" "$A/cred" "$A/resp.json"
check "$A/st.json" "$A/resp.json" "$A/machine.json"; rc=$?
expect 0 "check (RSA EK)"
[ "$(jq -r .kind "$A/machine.json")" = mboot-machine ] || fail "machine kind"
[ "$(jq -r .ak_public "$A/machine.json")" = "$(b64 "$A/ak.pub")" ] || fail "machine ak_public"
[ "$(jq -r .ak_name "$A/machine.json")" = "$(hexof "$A/ak.name")" ] || fail "machine ak_name"
[ "$(jq -r .ek_public "$A/machine.json")" = "$(b64 "$A/ek.pub")" ] || fail "machine ek_public"
[ "$(jq -r .ek_certificate_sha256 "$A/machine.json")" = "$(sha256sum < "$A/ekcert.der" | cut -d' ' -f1)" ] ||
	fail "machine ek_certificate_sha256 is not sha256sum of the certificate"
jq -r .enrolled "$A/machine.json" | grep -qE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$' ||
	fail "machine enrolled: $(jq -r .enrolled "$A/machine.json")"

# Outputs are kept without --force (exit 2), replaced with it.
challenge "$A/req.json" "$A/ch.json" "$A/st.json" --ek-ca "$CA"; rc=$?
expect 2 "challenge over an existing state" "exists"
check "$A/st.json" "$A/resp.json" "$A/machine.json"; rc=$?
expect 2 "check over an existing machine record" "exists"
cp "$A/ch.json" "$A/ch.old"
challenge "$A/req.json" "$A/ch.json" "$A/st2.json" --ek-ca "$CA" --force; rc=$?
expect 0 "challenge --force"
cmp -s "$A/ch.json" "$A/ch.old" && fail "two challenges are the same bytes"

# 2. ECC P-384 EK (high range: SHA-384 nameAlg, AES-256) with its certificate; CAs as files.
request "$A/ek384.pub" "$A/ekcert384.der" "$A/ak.pub" "$A/ak.name" "$A/req384.json"
challenge "$A/req384.json" "$A/ch384.json" "$A/st384.json" --ek-ca-file "$CA/issuercert.pem" \
	--ek-ca-file "$CA/swtpm-localca-rootca-cert.pem"; rc=$?
expect 0 "challenge (ECC P-384 EK)"
activate "$A/ch384.json" 0x81010016 "$A/ak.ctx" "$A/cred384" || fail "tpm2_activatecredential P-384: $(cat "$WORK/act.err")"
response "$(hexof "$A/ak.name")" "$A/cred384" "$A/resp384.json"
check "$A/st384.json" "$A/resp384.json" "$A/machine384.json"; rc=$?
expect 0 "check (ECC P-384 EK)"
[ "$(jq -r .ek_certificate_sha256 "$A/machine384.json")" = "$(sha256sum < "$A/ekcert384.der" | cut -d' ' -f1)" ] ||
	fail "machine384 ek_certificate_sha256"

# 3. ECC P-256 EK of the low range (tpm2_createek -G ecc; no certificate for it): trust on first use.
tpm2_createek -c "$A/ekc.ctx" -G ecc -u "$A/ekc.pub" -f tss >/dev/null || fail "tpm2_createek -G ecc"
request "$A/ekc.pub" - "$A/ak.pub" "$A/ak.name" "$A/reqc.json"
challenge "$A/reqc.json" "$A/chc.json" "$A/stc.json" --ek-ca "$CA"; rc=$?
expect 1 "a request without an EK certificate" "refused: the request has no EK certificate"
challenge "$A/reqc.json" "$A/chc.json" "$A/stc.json" --allow-no-ek-cert; rc=$?
expect 0 "challenge (ECC P-256 EK, --allow-no-ek-cert)"
activate "$A/chc.json" "$A/ekc.ctx" "$A/ak.ctx" "$A/credc" policy || fail "tpm2_activatecredential P-256: $(cat "$WORK/act.err")"
response "$(hexof "$A/ak.name")" "$A/credc" "$A/respc.json"
check "$A/stc.json" "$A/respc.json" "$A/machinec.json"; rc=$?
expect 0 "check (ECC P-256 EK)"
[ "$(jq -r .ek_certificate_sha256 "$A/machinec.json")" = null ] || fail "machinec names a certificate nobody checked"

# 3b. The EK certificate's own checks, on certificates for A's RSA EK made here by python3
# cryptography under a test CA: dates are not enforced unless --ek-check-validity (the machine
# record notes an expired one); a CA certificate and a signing-only one are refused; the NV
# padding tpm2_nvread leaves after the DER is dropped.
if python3 -c 'import cryptography' 2>/dev/null; then
	tpm2_print -t TPM2B_PUBLIC -f pem "$A/ek.pub" > "$A/ek.pem" || fail "tpm2_print EK to PEM"
	python3 - "$A" <<'PY' || fail "making the test EK certificates"
import datetime, sys
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
d = sys.argv[1]
ek = serialization.load_pem_public_key(open(d + "/ek.pem", "rb").read())
ca_key = ec.generate_private_key(ec.SECP256R1())
name = lambda cn: x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])
now = datetime.datetime.now(datetime.timezone.utc)
ca = (x509.CertificateBuilder().subject_name(name("test EK CA")).issuer_name(name("test EK CA"))
      .public_key(ca_key.public_key()).serial_number(1).not_valid_before(now - datetime.timedelta(days=1))
      .not_valid_after(now + datetime.timedelta(days=3650))
      .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
      .sign(ca_key, hashes.SHA256()))
open(d + "/testca.pem", "wb").write(ca.public_bytes(serialization.Encoding.PEM))
def ku(**on):
    f = dict(digital_signature=False, content_commitment=False, key_encipherment=False, data_encipherment=False,
             key_agreement=False, key_cert_sign=False, crl_sign=False, encipher_only=False, decipher_only=False)
    f.update(on)
    return x509.KeyUsage(**f)
def leaf(out, serial, ca_flag, usage, start, end):
    b = (x509.CertificateBuilder().subject_name(name("EK")).issuer_name(ca.subject).public_key(ek)
         .serial_number(serial).not_valid_before(start).not_valid_after(end)
         .add_extension(x509.BasicConstraints(ca=ca_flag, path_length=None), critical=True)
         .add_extension(usage, critical=True))
    open(d + "/" + out, "wb").write(b.sign(ca_key, hashes.SHA256()).public_bytes(serialization.Encoding.DER))
year = datetime.timedelta(days=365)
leaf("ek-good.der", 2, False, ku(key_encipherment=True), now - year, now + year)
leaf("ek-expired.der", 3, False, ku(key_encipherment=True), now - 3 * year, now - year)
leaf("ek-ca.der", 4, True, ku(key_encipherment=True, key_cert_sign=True), now - year, now + year)
leaf("ek-sign.der", 5, False, ku(digital_signature=True), now - year, now + year)
PY
	openssl verify -CAfile "$A/testca.pem" <(openssl x509 -inform der -in "$A/ek-good.der") >/dev/null ||
		fail "openssl does not verify the test EK certificate"
	openssl verify -CAfile "$A/testca.pem" <(openssl x509 -inform der -in "$A/ek-expired.der") >/dev/null 2>&1 &&
		fail "openssl verifies the expired test EK certificate"
	for c in good expired ca sign; do
		request "$A/ek.pub" "$A/ek-$c.der" "$A/ak.pub" "$A/ak.name" "$A/req-$c.json"
	done
	challenge "$A/req-good.json" "$A/x.json" "$A/xs.json" --ek-ca-file "$A/testca.pem" --force; rc=$?
	expect 0 "a valid EK certificate (keyEncipherment, CA:FALSE)"
	[ "$(jq -r .ek_certificate_expired "$A/xs.json")" = false ] || fail "a valid certificate noted expired"
	challenge "$A/req-expired.json" "$A/x.json" "$A/xs.json" --ek-ca-file "$A/testca.pem" --force; rc=$?
	expect 0 "an expired EK certificate (dates not enforced by default)"
	[ "$(jq -r .ek_certificate_expired "$A/xs.json")" = true ] || fail "the expired certificate is not noted"
	activate "$A/x.json" "$A/ek.ctx" "$A/ak.ctx" "$A/credx" policy || fail "tpm2_activatecredential: $(cat "$WORK/act.err")"
	response "$(hexof "$A/ak.name")" "$A/credx" "$A/respx.json"
	rm -f "$A/machinex.json"
	check "$A/xs.json" "$A/respx.json" "$A/machinex.json"; rc=$?
	expect 0 "check (expired EK certificate)"
	[ "$(jq -r .ek_certificate_expired "$A/machinex.json")" = true ] || fail "the machine record does not note the expiry"
	challenge "$A/req-expired.json" "$A/x.json" "$A/xs.json" --ek-ca-file "$A/testca.pem" --force --ek-check-validity; rc=$?
	expect 1 "an expired EK certificate with --ek-check-validity" "certificate has expired"
	challenge "$A/req-ca.json" "$A/x.json" "$A/xs.json" --ek-ca-file "$A/testca.pem" --force; rc=$?
	expect 1 "an EK certificate that is a CA" "basicConstraints CA:TRUE"
	challenge "$A/req-sign.json" "$A/x.json" "$A/xs.json" --ek-ca-file "$A/testca.pem" --force; rc=$?
	expect 1 "a signing-only EK certificate" "keyUsage does not allow keyEncipherment"
	for pad in '\377' '\000'; do
		{ cat "$A/ekcert.der"; head -c 200 /dev/zero | tr '\000' "$pad"; } > "$A/ekcert-padded.der"
		request "$A/ek.pub" "$A/ekcert-padded.der" "$A/ak.pub" "$A/ak.name" "$A/req-padded.json"
		challenge "$A/req-padded.json" "$A/x.json" "$A/xs.json" --ek-ca "$CA" --force; rc=$?
		expect 0 "the swtpm's EK certificate with 200 bytes of NV padding ($pad)"
		[ "$(jq -r .ek_certificate_sha256 "$A/xs.json")" = "$(sha256sum < "$A/ekcert.der" | cut -d' ' -f1)" ] ||
			fail "padded: the fingerprint is not the certificate's"
	done
	{ cat "$A/ekcert.der"; printf 'x'; } > "$A/ekcert-junk.der"
	request "$A/ek.pub" "$A/ekcert-junk.der" "$A/ak.pub" "$A/ak.name" "$A/req-junk.json"
	challenge "$A/req-junk.json" "$A/x.json" "$A/xs.json" --ek-ca "$CA" --force; rc=$?
	expect 2 "an EK certificate followed by other bytes than padding" "not one DER"
	echo "ok: EK certificate dates, CA flag, keyUsage and NV padding"
	rm -f "$A/x.json" "$A/xs.json"
else
	echo "SKIP (part): python3 cryptography missing, EK certificate extension cases not run"
fi

# 4. Refused: an EK certificate for another key (A's P-384 certificate with A's RSA EK).
request "$A/ek.pub" "$A/ekcert384.der" "$A/ak.pub" "$A/ak.name" "$A/req-wrongkey.json"
challenge "$A/req-wrongkey.json" "$A/x.json" "$A/xs.json" --ek-ca "$CA"; rc=$?
expect 1 "an EK certificate for another key" "refused: the EK certificate is for another key"

# 5. Refused: an AK without `restricted` (otherwise an AK's attributes), made with tpm2_create.
tpm2_flushcontext -t >/dev/null
tpm2_createprimary -C o -c "$A/prim.ctx" >/dev/null || fail "tpm2_createprimary"
tpm2_create -C "$A/prim.ctx" -G ecc -u "$A/ak2.pub" -r "$A/ak2.priv" \
	-a "fixedtpm|fixedparent|sensitivedataorigin|userwithauth|sign" >/dev/null 2>"$WORK/err" ||
	fail "tpm2_create: $(cat "$WORK/err")"
tpm2_flushcontext -t >/dev/null
tpm2_load -C "$A/prim.ctx" -u "$A/ak2.pub" -r "$A/ak2.priv" -n "$A/ak2.name" -c "$A/ak2.ctx" >/dev/null \
	2>"$WORK/err" || fail "tpm2_load: $(cat "$WORK/err")"
tpm2_flushcontext -t >/dev/null
request "$A/ek.pub" "$A/ekcert.der" "$A/ak2.pub" "$A/ak2.name" "$A/req-unrestricted.json"
challenge "$A/req-unrestricted.json" "$A/x.json" "$A/xs.json" --ek-ca "$CA"; rc=$?
expect 1 "an AK without restricted" "refused: the AK is not restricted"

# 6. Refused: an AK name that is not its public's (the unrestricted key's name on the AK).
request "$A/ek.pub" "$A/ekcert.der" "$A/ak.pub" "$A/ak2.name" "$A/req-name.json"
challenge "$A/req-name.json" "$A/x.json" "$A/xs.json" --ek-ca "$CA"; rc=$?
expect 1 "an AK name of another key" "refused: ak.name is not the Name of ak.public"
[ -e "$A/x.json" ] || [ -e "$A/xs.json" ] && fail "a refused request left a challenge or state"

# 7. EK certificates carry TCG extensions OpenSSL has no code for: a critical
# subjectDirectoryAttributes (which `openssl verify` refuses) passes on the EK certificate; a
# critical extension of any other unknown OID does not. Both signed with CA a's issuer key.
tpm2_flushcontext -t >/dev/null
tpm2_readpublic -c 0x81010001 -o "$A/ek.pem" -f pem >/dev/null || fail "tpm2_readpublic 0x81010001"
for oid in 2.5.29.9 1.2.3.4; do
	printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,keyEncipherment\n%s=critical,DER:3000\n' "$oid" \
		> "$A/ext.cnf"
	openssl x509 -new -subj "/CN=ek $oid" -force_pubkey "$A/ek.pem" -CA "$CA/issuercert.pem" -CAkey "$CA/signkey.pem" \
		-extfile "$A/ext.cnf" -days 1 -outform der -out "$A/crit.der" 2>"$WORK/err" ||
		fail "openssl x509 -new: $(cat "$WORK/err")"
	request "$A/ek.pub" "$A/crit.der" "$A/ak.pub" "$A/ak.name" "$A/req-crit.json"
	challenge "$A/req-crit.json" "$A/x.json" "$A/xs.json" --ek-ca "$CA" --force; rc=$?
	if [ "$oid" = 2.5.29.9 ]; then
		openssl verify -CAfile "$CA/swtpm-localca-rootca-cert.pem" -untrusted "$CA/issuercert.pem" \
			<(openssl x509 -inform der -in "$A/crit.der") >/dev/null 2>&1 &&
			fail "openssl verify accepts a critical subjectDirectoryAttributes: the case tests nothing"
		expect 0 "an EK certificate with a critical subjectDirectoryAttributes"
		rm -f "$A/x.json" "$A/xs.json"
	else
		expect 1 "an EK certificate with a critical unknown extension" "unhandled critical extension"
	fi
done

# Malformed input is exit 2, with the file named.
printf '{"version": 2, "kind": "mboot-attest-request"}' > "$A/bad.json"
challenge "$A/bad.json" "$A/x.json" "$A/xs.json" --ek-ca "$CA"; rc=$?
expect 2 "version 2" "field \"version\" is not 1"
jq '.ak.public = "AAAA"' "$A/req.json" > "$A/bad.json"
challenge "$A/bad.json" "$A/x.json" "$A/xs.json" --ek-ca "$CA"; rc=$?
expect 2 "a truncated AK public" "ak.public"
head -c 100 "$A/resp.json" > "$A/bad.json"
check "$A/st.json" "$A/bad.json" "$A/x.json"; rc=$?
expect 2 "a truncated response"
"$M" attest challenge -i "$A/req.json" --ek-ca "$CA" -o "$A/x.json" >/dev/null 2>"$WORK/err"; rc=$?
expect 2 "no --state" "needs"
"$M" attest challenge --ek-ca "$WORK/nonexistent" -i "$A/req.json" -o "$A/x.json" --state "$A/xs.json" \
	>/dev/null 2>"$WORK/err"; rc=$?
expect 2 "a missing CA directory"

# ---- machine B: another swtpm, manufactured by another CA "b" ----
swtpm_start_ek_enroll b
B=$WORK/b
mkdir -p "$B"
tpm2_createek -c "$B/ek.ctx" -G rsa -u "$B/ek.pub" -f tss >/dev/null || fail "tpm2_createek (B)"
tpm2_createak -C "$B/ek.ctx" -c "$B/ak.ctx" -G ecc -g sha256 -s ecdsa -u "$B/ak.pub" -f tss -n "$B/ak.name" \
	-r "$B/ak.priv" >/dev/null || fail "tpm2_createak (B)"
tpm2_flushcontext -t >/dev/null
tpm2_nvread 0x01c00002 -o "$B/ekcert.der" 2>/dev/null || fail "tpm2_nvread (B)"

# 8. Refused: an EK certificate from another CA (B's, checked against A's CA).
request "$B/ek.pub" "$B/ekcert.der" "$B/ak.pub" "$B/ak.name" "$B/req.json"
challenge "$B/req.json" "$B/x.json" "$B/xs.json" --ek-ca "$CA"; rc=$?
expect 1 "an EK certificate from another CA" "refused: the EK certificate does not chain to the EK CAs given"
challenge "$B/req.json" "$B/ch.json" "$B/st.json" --ek-ca "$CA" --ek-ca "$SWTPM_DIR/b/ca"; rc=$?
expect 0 "challenge (B, both CAs)"

# 9. A's challenge cannot be activated on B (its TPM refuses the integrity check), and a
# response carrying the credential B's TPM did recover (for its own challenge) is refused.
activate "$A/ch384.json" 0x81010016 "$B/ak.ctx" "$B/x" && fail "B's TPM activated A's challenge"
activate "$B/ch.json" "$B/ek.ctx" "$B/ak.ctx" "$B/cred" policy || fail "tpm2_activatecredential (B): $(cat "$WORK/act.err")"
response "$(hexof "$A/ak.name")" "$B/cred" "$B/resp-for-a.json"
check "$A/st2.json" "$B/resp-for-a.json" "$B/x.json"; rc=$?
expect 1 "a credential from another swtpm" "refused: the response's credential is not the challenge's"
[ -e "$B/x.json" ] && fail "a refused response left a machine record"
# ... and B's own answer to B's challenge is accepted.
response "$(hexof "$B/ak.name")" "$B/cred" "$B/resp.json"
check "$B/st.json" "$B/resp.json" "$B/machine.json"; rc=$?
expect 0 "check (B)"

# 10. mboot's own machine side, where it is built: attest enroll -> challenge -> attest activate -> check.
if "$M" attest enroll --help >/dev/null 2>&1; then
	tpm2_flushcontext -t >/dev/null
	"$M" attest enroll --ak-file "$B/ak.json" -o "$B/mreq.json" >/dev/null 2>"$WORK/err" ||
		fail "attest enroll: $(cat "$WORK/err")"
	challenge "$B/mreq.json" "$B/mch.json" "$B/mst.json" --ek-ca "$SWTPM_DIR/b/ca"; rc=$?
	expect 0 "challenge of mboot's own request"
	"$M" attest activate -i "$B/mch.json" --ak-file "$B/ak.json" -o "$B/mresp.json" >/dev/null 2>"$WORK/err" ||
		fail "attest activate: $(cat "$WORK/err")"
	check "$B/mst.json" "$B/mresp.json" "$B/mmachine.json"; rc=$?
	expect 0 "check of mboot's own response"
	[ "$(jq -r .ek_certificate_sha256 "$B/mmachine.json")" = "$(sha256sum < "$B/ekcert.der" | cut -d' ' -f1)" ] ||
		fail "mboot's enrollment: ek_certificate_sha256 is not the NV certificate's"
fi

echo "ok: attest challenge: RSA, P-384 and P-256 EKs activated by tpm2_activatecredential; 5 refusals with reasons"
