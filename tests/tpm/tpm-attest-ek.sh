#!/bin/bash
# mboot's own EKs (attest enroll) against what tools outside mboot make on the same TPM, one
# kind at a time: mboot picks the EK whose certificate index exists, so the certificate indices
# of one swtpm manufactured by swtpm_setup (RSA 2048 at 0x01c00002, ECC P-384 at 0x01c00016, its
# CA's certificates) are removed or added between the rounds:
#   L-1 RSA 2048  swtpm's certificate;  mboot's EK = tpm2_createek -G rsa, and the persisted 0x81010001
#   L-2 ECC P-256 a certificate for tpm2_createek -G ecc's key, signed by the CA with openssl,
#                 in 0x01c0000a (swtpm_setup makes none);  mboot's EK = tpm2_createek -G ecc
#   H-3 ECC P-384 swtpm's certificate;  mboot's EK = swtpm_setup's persisted 0x81010016
# Each EK's TPM2B_PUBLIC is compared byte for byte, its Name with tpm2_readpublic's; then the
# whole enrollment (enroll, challenge with the CA, activate, check) must succeed, which it only
# does when mboot's EK is the key the certificate is for and mboot's template recreates it.
# shellcheck source=tests/tpm/swtpm-env.sh
. "${MB_TPM_TESTS:-$(dirname "$0")}/swtpm-env.sh"
M=${MBOOT:?}
command -v jq >/dev/null || { echo "SKIP: jq not installed"; exit 77; }
command -v openssl >/dev/null || { echo "SKIP: openssl not installed"; exit 77; }

hexof() { xxd -p -c 256 "$1"; }
# name_of TPM2B_PUBLIC: the Name, nameAlg || H(TPMT_PUBLIC), as hex (SHA-256 and SHA-384 only)
name_of() {
	local alg
	alg=$(tail -c +5 "$1" | head -c 2 | xxd -p)
	case $alg in
	000b) printf '000b%s\n' "$(tail -c +3 "$1" | sha256sum | cut -d' ' -f1)" ;;
	000c) printf '000c%s\n' "$(tail -c +3 "$1" | sha384sum | cut -d' ' -f1)" ;;
	*) echo "nameAlg $alg" ;;
	esac
}
nv_has() { tpm2_getcap handles-nv-index | grep -qi "$1"; }

# enroll WHAT KIND NV_INDEX OUTSIDE_PUB OUTSIDE_NAME: mboot's enrollment with the EK KIND, its
# EK against tpm2-tools' (TPM2B_PUBLIC and Name), then the verifier's challenge with swtpm's CA,
# mboot's activation and the check.
enroll() {
	local what=$1 kind=$2 index=$3 pub=$4 name=$5 d=$WORK/$2
	mkdir -p "$d"
	tpm2_flushcontext -t >/dev/null
	if ! "$M" attest enroll --ak-file "$d/ak.json" -o "$d/req.json" >/dev/null 2>"$WORK/err"; then
		bad "$what: attest enroll: $(cat "$WORK/err")"
		return
	fi
	check "$what: the AK file's ek is $kind" [ "$(jq -r .ek "$d/ak.json")" = "$kind" ]
	check "$what: the request's ek.nv_index is $index" [ "$(jq -r .ek.nv_index "$d/req.json")" = "$index" ]
	jq -r .ek.public "$d/req.json" | base64 -d > "$d/ek.pub"
	check "$what: mboot's EK TPM2B_PUBLIC is tpm2-tools'" cmp -s "$d/ek.pub" "$pub"
	check "$what: mboot's EK Name is tpm2_readpublic's" [ "$(name_of "$d/ek.pub")" = "$(hexof "$name")" ]
	jq -r .ek.certificate "$d/req.json" | base64 -d > "$d/cert.der"
	check "$what: the request's certificate is the one in $index" cmp -s "$d/cert.der" "$WORK/cert-$kind.der"
	if ! "$M" attest challenge -i "$d/req.json" --ek-ca "$CA" -o "$d/ch.json" --state "$d/st.json" \
		>/dev/null 2>"$WORK/err"; then
		bad "$what: attest challenge (the certificate's key against mboot's EK): $(cat "$WORK/err")"
		return
	fi
	if ! "$M" attest activate -i "$d/ch.json" --ak-file "$d/ak.json" -o "$d/resp.json" >/dev/null 2>"$WORK/err"; then
		bad "$what: attest activate (mboot's EK made again): $(cat "$WORK/err")"
		return
	fi
	if "$M" attest challenge --state "$d/st.json" -i "$d/resp.json" -o "$d/machine.json" >/dev/null 2>"$WORK/err"; then
		ok "$what: enrolled (challenge, activate, check)"
	else
		bad "$what: attest challenge --state (check): $(cat "$WORK/err")"
	fi
	check "$what: the machine record's EK is tpm2-tools'" \
		[ "$(jq -r .ek_public "$d/machine.json" 2>/dev/null)" = "$(base64 -w0 "$pub")" ]
}

swtpm_start_ek_enroll a
CA=$SWTPM_DIR/a/ca
tpm2_nvread 0x01c00002 -o "$WORK/cert-rsa2048.der" 2>/dev/null || fail "tpm2_nvread 0x01c00002"
tpm2_nvread 0x01c00016 -o "$WORK/cert-ecc-p384.der" 2>/dev/null || fail "tpm2_nvread 0x01c00016"
nv_has 0x1c0000a && fail "swtpm_setup made a P-256 EK certificate: this test's L-2 round needs revisiting"

# L-1: RSA 2048, the first index mboot looks for.
tpm2_createek -c "$WORK/rsa.ctx" -G rsa -u "$WORK/rsa.pub" -f tss >/dev/null || fail "tpm2_createek -G rsa"
tpm2_readpublic -c "$WORK/rsa.ctx" -n "$WORK/rsa.name" >/dev/null || fail "tpm2_readpublic (RSA EK)"
tpm2_readpublic -c 0x81010001 -o "$WORK/rsa-persisted.pub" -f tss >/dev/null || fail "tpm2_readpublic 0x81010001"
cmp -s "$WORK/rsa.pub" "$WORK/rsa-persisted.pub" || fail "tpm2_createek -G rsa is not swtpm_setup's EK"
enroll "RSA 2048 (L-1)" rsa2048 0x01c00002 "$WORK/rsa.pub" "$WORK/rsa.name"

# L-2: ECC P-256. Without the RSA certificate, a certificate for tpm2_createek -G ecc's key
# (signed with the CA's issuer key, as swtpm_localca signs) in 0x01c0000a, which mboot takes
# before 0x01c00016.
tpm2_flushcontext -t >/dev/null
tpm2_nvundefine -C p 0x01c00002 >/dev/null || fail "tpm2_nvundefine 0x01c00002"
tpm2_createek -c "$WORK/p256.ctx" -G ecc -u "$WORK/p256.pub" -f tss >/dev/null || fail "tpm2_createek -G ecc"
tpm2_readpublic -c "$WORK/p256.ctx" -n "$WORK/p256.name" -o "$WORK/p256.pem" -f pem >/dev/null ||
	fail "tpm2_readpublic (P-256 EK)"
printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,keyAgreement\n' > "$WORK/ext.cnf"
openssl x509 -new -subj "/CN=mboot-test P-256 EK" -force_pubkey "$WORK/p256.pem" -CA "$CA/issuercert.pem" \
	-CAkey "$CA/signkey.pem" -extfile "$WORK/ext.cnf" -days 1 -outform der -out "$WORK/cert-ecc-p256.der" \
	2>"$WORK/err" || fail "openssl x509 -new: $(cat "$WORK/err")"
tpm2_nvdefine 0x01c0000a -C p -s "$(wc -c < "$WORK/cert-ecc-p256.der")" \
	-a "ppwrite|ppread|ownerread|authread|platformcreate|no_da" >/dev/null || fail "tpm2_nvdefine 0x01c0000a"
tpm2_nvwrite 0x01c0000a -C p -i "$WORK/cert-ecc-p256.der" >/dev/null || fail "tpm2_nvwrite 0x01c0000a"
enroll "ECC P-256 (L-2)" ecc-p256 0x01c0000a "$WORK/p256.pub" "$WORK/p256.name"

# H-3: ECC P-384, swtpm_setup's certificate alone.
tpm2_flushcontext -t >/dev/null
tpm2_nvundefine -C p 0x01c0000a >/dev/null || fail "tpm2_nvundefine 0x01c0000a"
tpm2_readpublic -c 0x81010016 -o "$WORK/p384.pub" -f tss -n "$WORK/p384.name" >/dev/null ||
	fail "tpm2_readpublic 0x81010016"
enroll "ECC P-384 (H-3)" ecc-p384 0x01c00016 "$WORK/p384.pub" "$WORK/p384.name"

[ "$failures" -eq 0 ] || fail "$failures checks failed"
echo "ok: mboot's L-1, L-2 and H-3 EKs are tpm2-tools' and swtpm_setup's, and enroll against their certificates"
