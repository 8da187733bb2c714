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

# Text output uses tpm2_pcrread's layout.
"$M" pcrs | norm_pcrread > "$WORK/c"
diff -u "$WORK/a" "$WORK/c" || fail "mboot pcrs (text) differs from tpm2_pcrread"
echo "ok: mboot pcrs text == tpm2_pcrread"

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
