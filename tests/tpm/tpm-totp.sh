#!/bin/bash
# mboot totp against a swtpm: init seals a seed to PCRs 0 and 7 and shows an otpauth URI whose
# secret, given to oathtool (an independent TOTP implementation), gives the code `totp show`
# prints; after PCR 7 is extended the seed no longer unseals: exit 1, PCR 7 named.
. "${MB_TPM_TESTS:-$(dirname "$0")}/swtpm-env.sh"
M=${MBOOT:?}
command -v oathtool >/dev/null || fail "oathtool not installed"

swtpm_start
tpm2_pcrextend "0:sha256=$(printf '%064x' 1)" "7:sha256=$(printf '%064x' 7)" || fail "tpm2_pcrextend"

"$M" totp init --pcrs 0,7 -o "$WORK/totp.sealed" --account test-host >"$WORK/init" 2>"$WORK/err" ||
	fail "totp init: $(cat "$WORK/err")"
uri=$(grep '^otpauth://totp/' "$WORK/init") || fail "no otpauth URI: $(cat "$WORK/init")"
case $uri in
otpauth://totp/mboot:test-host\?secret=*\&issuer=mboot\&algorithm=SHA1\&digits=6\&period=30) ;;
*) fail "URI shape: $uri" ;;
esac
secret=$(printf '%s' "$uri" | sed 's/.*secret=\([A-Z2-7]*\).*/\1/')
[ ${#secret} -eq 32 ] || fail "a 160-bit seed is 32 base32 characters, got ${#secret}"
grep -q "$(printf '\xe2\x96\x88')" "$WORK/init" || fail "no QR code drawn"
[ "$(stat -c %a "$WORK/totp.sealed")" = 600 ] || fail "sealed file mode"
grep -q "$secret" "$WORK/totp.sealed" && fail "the seed is in the sealed file"
echo "ok: totp init: URI with a 160-bit base32 seed, a QR code, the seed sealed (not in the file)"

# An existing SEALED (the seed a phone already holds) is kept byte for byte, exit 2, unless
# --force; --pcrs none is refused even with --force.
cp "$WORK/totp.sealed" "$WORK/totp.orig"
"$M" totp init --pcrs 0,7 -o "$WORK/totp.sealed" >"$WORK/out" 2>"$WORK/err"; rc=$?
[ $rc -eq 2 ] || fail "totp init over an existing file: exit $rc, expected 2"
grep -q "already exists; not replaced (give --force" "$WORK/err" || fail "refusal not said: $(cat "$WORK/err")"
grep -q otpauth "$WORK/out" && fail "a refused init showed a seed"
cmp -s "$WORK/totp.sealed" "$WORK/totp.orig" || fail "a refused totp init changed the sealed file"
"$M" totp init --pcrs none --force -o "$WORK/totp-none.sealed" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] && [ ! -e "$WORK/totp-none.sealed" ] || fail "totp init --pcrs none --force: exit $rc"
"$M" totp init --pcrs 0,7 -o "$WORK/totp.sealed" --force --account test-host >"$WORK/init" 2>"$WORK/err" ||
	fail "totp init --force: $(cat "$WORK/err")"
cmp -s "$WORK/totp.sealed" "$WORK/totp.orig" && fail "totp init --force did not replace the file"
[ "$(stat -c %a "$WORK/totp.sealed")" = 600 ] || fail "replaced sealed file mode"
secret=$(grep '^otpauth://totp/' "$WORK/init" | sed 's/.*secret=\([A-Z2-7]*\).*/\1/')
echo "ok: totp init over an existing file: exit 2, unchanged, no seed shown; --force replaces it (0600); --pcrs none refused"

# The code at the same moment from both; retried once across a 30 s boundary.
for _ in 1 2; do
	ours=$("$M" totp show -i "$WORK/totp.sealed" 2>"$WORK/err" | cut -d' ' -f1) ||
		fail "totp show: $(cat "$WORK/err")"
	theirs=$(oathtool --totp -b "$secret")
	[ "$ours" = "$theirs" ] && break
done
[ "$ours" = "$theirs" ] || fail "totp show $ours, oathtool $theirs"
echo "ok: totp show ($ours) equals oathtool --totp on the seed from the URI"

# --digits 8 is sealed with the seed: show prints 8 digits without being told, as oathtool does.
"$M" totp init --pcrs 0,7 -o "$WORK/totp8.sealed" --digits 8 --account test-host >"$WORK/init8" 2>"$WORK/err" ||
	fail "totp init --digits 8: $(cat "$WORK/err")"
grep -q '&digits=8&' "$WORK/init8" || fail "URI without digits=8"
secret8=$(grep '^otpauth://totp/' "$WORK/init8" | sed 's/.*secret=\([A-Z2-7]*\).*/\1/')
for _ in 1 2; do
	ours=$("$M" totp show -i "$WORK/totp8.sealed" 2>"$WORK/err" | cut -d' ' -f1) || fail "totp show (8): $(cat "$WORK/err")"
	theirs=$(oathtool --totp --digits=8 -b "$secret8")
	[ "$ours" = "$theirs" ] && break
done
[ "$ours" = "$theirs" ] && [ ${#ours} -eq 8 ] || fail "totp show of a --digits 8 seed: $ours, oathtool $theirs"
echo "ok: totp init --digits 8: show prints the 8-digit code oathtool gives ($ours)"

tpm2_pcrextend "7:sha256=$(printf '%064x' 8)" || fail "tpm2_pcrextend"
"$M" totp show -i "$WORK/totp.sealed" >"$WORK/out" 2>"$WORK/err"
rc=$?
[ $rc -eq 1 ] || fail "totp show after PCR 7 moved: exit $rc, expected 1"
grep -q "PCR 7" "$WORK/err" "$WORK/out" || fail "PCR 7 not named: $(cat "$WORK/err")"
[ -s "$WORK/out" ] && grep -q '^[0-9]\{6\} ' "$WORK/out" && fail "a code was printed"
echo "ok: after PCR 7 moved, no code: exit 1, PCR 7 named"
# Signed policies: the seed sealed --authorized-by a key; a code only with a signature for today's values.
openssl genrsa -out "$WORK/rel.pem" 2048 2>/dev/null || fail "openssl genrsa"
openssl rsa -in "$WORK/rel.pem" -pubout -out "$WORK/rel.pub" 2>/dev/null || fail "openssl rsa -pubout"
"$M" totp init --authorized-by "$WORK/rel.pub" -o "$WORK/totp-auth.sealed" --account test-host >"$WORK/init" 2>"$WORK/err" ||
	fail "totp init --authorized-by: $(cat "$WORK/err")"
grep -q "sealed in $WORK/totp-auth.sealed to policies signed by the key of $WORK/rel.pub" "$WORK/init" ||
	fail "totp init --authorized-by says: $(head -2 "$WORK/init")"
secret=$(grep '^otpauth://totp/' "$WORK/init" | sed 's/.*secret=\([A-Z2-7]*\).*/\1/')
"$M" pcrs --json > "$WORK/now.json"
"$M" policy sign --key "$WORK/rel.pem" --pcrs 0,7 --values "$WORK/now.json" -o "$WORK/now.sig" >/dev/null || fail "policy sign"
"$M" totp show -i "$WORK/totp-auth.sealed" >"$WORK/out" 2>"$WORK/err"; rc=$?
[ $rc -eq 2 ] || fail "totp show without --signature: exit $rc, expected 2"
for _ in 1 2; do
	ours=$("$M" totp show -i "$WORK/totp-auth.sealed" --signature "$WORK/now.sig" 2>"$WORK/err" | cut -d' ' -f1) ||
		fail "totp show --signature: $(cat "$WORK/err")"
	theirs=$(oathtool --totp -b "$secret")
	[ "$ours" = "$theirs" ] && break
done
[ "$ours" = "$theirs" ] || fail "totp show --signature $ours, oathtool $theirs"
tpm2_pcrextend "0:sha256=$(printf '%064x' 9)" || fail "tpm2_pcrextend"
"$M" totp show -i "$WORK/totp-auth.sealed" --signature "$WORK/now.sig" >"$WORK/out" 2>"$WORK/err"; rc=$?
[ $rc -eq 1 ] || fail "totp show after PCR 0 moved: exit $rc, expected 1"
grep -q "PCR 0" "$WORK/err" || fail "PCR 0 not named: $(cat "$WORK/err")"
echo "ok: totp --authorized-by: the code (== oathtool) only with a signature for today's PCRs"
echo "tpm-totp: all passed"
