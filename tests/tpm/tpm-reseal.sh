#!/bin/bash
# mboot reseal against a swtpm: the PolicyOR digest equals tpm2-tools' (trial sessions:
# tpm2_policypcr per branch, with the predicted branch from a values file, then
# tpm2_policyor); after reseal with predicted values (computed by openssl) both the new
# boot and the old one unseal; a reseal in the new state drops the old branch.
. "${MB_TPM_TESTS:-$(dirname "$0")}/swtpm-env.sh"
M=${MBOOT:?}

pcr_hex() { tpm2_pcrread "sha256:$1" | sed -n "s/^ *$1 *: 0x//p" | tr 'A-F' 'a-f'; }
A=$(printf 'this boot' | openssl dgst -sha256 -r | cut -d' ' -f1)
E=$(printf 'the update' | openssl dgst -sha256 -r | cut -d' ' -f1)
old_boot() { swtpm_reset; tpm2_startup -c || fail "startup"; tpm2_pcrextend 7:sha256=$A || fail "extend"; }
new_boot() { old_boot; tpm2_pcrextend 7:sha256=$E || fail "extend"; }

swtpm_start
tpm2_pcrextend 7:sha256=$A || fail "extend"
printf 'disk\0key\n' > "$WORK/secret"
"$M" seal --pcrs 0,7 -i "$WORK/secret" -o "$WORK/sealed" || fail "seal"

# The next boot's PCR 7, by openssl: SHA256(PCR7 || E).
p0=$(pcr_hex 0)
p7=$( { pcr_hex 7 | xxd -r -p; echo "$E" | xxd -r -p; } | openssl dgst -sha256 -r | cut -d' ' -f1)
printf '{"banks": {"sha256": {"0": "%s", "7": "%s"}}}\n' "$p0" "$p7" > "$WORK/next.json"
"$M" reseal -i "$WORK/sealed" --values "$WORK/next.json" > "$WORK/out" || fail "reseal: $(cat "$WORK/out")"
[ "$(jq -r .policy.kind "$WORK/sealed")" = or ] || fail "policy kind $(jq -r .policy.kind "$WORK/sealed")"
[ "$(stat -c %a "$WORK/sealed")" = 600 ] || fail "mode after reseal"

# tpm2-tools: branch 0 = PolicyPCR of the current PCRs; branch 1 = PolicyPCR of the predicted
# values (-f: the raw values in selection order); then PolicyOR of both.
tpm2_startauthsession -S "$WORK/s.ctx" >/dev/null
tpm2_policypcr -S "$WORK/s.ctx" -l sha256:0,7 -L "$WORK/b0.dig" >/dev/null || fail "policypcr b0"
tpm2_flushcontext "$WORK/s.ctx"
{ echo "$p0" | xxd -r -p; echo "$p7" | xxd -r -p; } > "$WORK/next.bin"
tpm2_startauthsession -S "$WORK/s.ctx" >/dev/null
tpm2_policypcr -S "$WORK/s.ctx" -l sha256:0,7 -f "$WORK/next.bin" -L "$WORK/b1.dig" >/dev/null || fail "policypcr b1"
tpm2_flushcontext "$WORK/s.ctx"
tpm2_startauthsession -S "$WORK/s.ctx" >/dev/null
tpm2_policyor -S "$WORK/s.ctx" -l "sha256:$WORK/b0.dig,$WORK/b1.dig" -L "$WORK/or.dig" >/dev/null || fail "policyor"
tpm2_flushcontext "$WORK/s.ctx"
want=$(xxd -p -c 64 "$WORK/or.dig")
got=$(jq -r .policy.digest "$WORK/sealed")
[ "$got" = "$want" ] || fail "PolicyOR digest $got, tpm2_policyor trial $want"
echo "ok: reseal's PolicyOR digest == tpm2_policypcr x2 + tpm2_policyor trial ($want)"

"$M" unseal -i "$WORK/sealed" | cmp - "$WORK/secret" || fail "unseal in the old state after reseal"
new_boot
[ "$(pcr_hex 7)" = "$p7" ] || fail "openssl's prediction $p7 != tpm2_pcrread"
"$M" unseal -i "$WORK/sealed" | cmp - "$WORK/secret" || fail "unseal in the new state"
old_boot
"$M" unseal -i "$WORK/sealed" | cmp - "$WORK/secret" || fail "unseal after falling back to the old state"
echo "ok: after reseal the old boot, the predicted new boot and a fallback to the old boot all unseal"

# A third state unseals under neither branch: exit 1, PCR 7 named.
tpm2_pcrextend 7:sha256=$E || fail "extend"
tpm2_pcrextend 7:sha256=$E || fail "extend"
"$M" unseal -i "$WORK/sealed" > "$WORK/out" 2>&1; rc=$?
[ $rc -eq 1 ] || fail "unseal in a third state exited $rc: $(cat "$WORK/out")"
grep -q "None of the 2 PCR states" "$WORK/out" || fail "no branch message: $(cat "$WORK/out")"
grep -q "^PCR 7 (sha256) differs" "$WORK/out" || fail "PCR 7 not named: $(cat "$WORK/out")"
"$M" reseal -i "$WORK/sealed" -o "$WORK/x" > "$WORK/out" 2>&1; rc=$?
[ $rc -eq 1 ] || fail "reseal in a third state exited $rc"
[ -e "$WORK/x" ] && fail "reseal wrote a file though it could not unseal"
echo "ok: a third state unseals under no branch (exit 1, PCR 7 named); reseal there exits 1"

# Boot into the new state and reseal without predictions: the old branch is dropped.
new_boot
"$M" reseal -i "$WORK/sealed" > /dev/null || fail "reseal in the new state"
[ "$(jq -r .policy.kind "$WORK/sealed")" = pcr ] || fail "policy kind after the second reseal"
"$M" unseal -i "$WORK/sealed" | cmp - "$WORK/secret" || fail "unseal in the new state after the second reseal"
old_boot
"$M" unseal -i "$WORK/sealed" > /dev/null 2>&1; rc=$?
[ $rc -eq 1 ] || fail "the old state still unseals after the second reseal (exit $rc)"
echo "ok: reseal in the new state drops the old branch: the old boot no longer unseals"

# The secret is not in the sealed file; a malformed branch is an input error naming it.
new_boot
p7b=$( { echo "$p7" | xxd -r -p; echo "$E" | xxd -r -p; } | openssl dgst -sha256 -r | cut -d' ' -f1)
printf '{"banks": {"sha256": {"0": "%s", "7": "%s"}}}\n' "$p0" "$p7b" > "$WORK/next2.json"
"$M" reseal -i "$WORK/sealed" --values "$WORK/next2.json" -o "$WORK/or.json" >/dev/null || fail "reseal -o"
[ "$(jq -r .policy.kind "$WORK/or.json")" = or ] || fail "second OR reseal"
grep -q "disk" "$WORK/or.json" && fail "secret in the sealed file"
jq '.policy.branches[1].values["7"] = "00"' "$WORK/or.json" > "$WORK/bad.json"
"$M" unseal -i "$WORK/bad.json" >/dev/null 2>"$WORK/err"; rc=$?
[ $rc -eq 2 ] || fail "malformed branch exited $rc"
grep -q '"policy.branches.1.values.7"' "$WORK/err" || fail "branch field not named: $(cat "$WORK/err")"
jq ".policy.branches[1].values[\"7\"] = \"$(printf '%064x' 1)\"" "$WORK/or.json" > "$WORK/bad.json"
"$M" unseal -i "$WORK/bad.json" >/dev/null 2>"$WORK/err"; rc=$?
[ $rc -eq 2 ] || fail "edited branch exited $rc"
grep -q '"policy.digest" is not the PolicyOR digest' "$WORK/err" || fail "OR digest check: $(cat "$WORK/err")"
jq '.policy.branches |= .[0:1]' "$WORK/or.json" > "$WORK/bad.json"
"$M" unseal -i "$WORK/bad.json" >/dev/null 2>"$WORK/err"; rc=$?
[ $rc -eq 2 ] || fail "one-branch OR exited $rc"
echo "ok: malformed or edited PolicyOR branches exit 2 naming the field"

# The real use: a corpus GRUB boot replayed into the TPM, sealed to PCRs 4,8,9; `mboot predict`
# gives the values of a boot with another kernel command line; reseal to them; the predicted
# boot (its log replayed after a reset) unseals, and so does the old one.
C=${MB_TESTDATA:?}/corpus
LOG=$C/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9
swtpm_banks "sha1 sha256"
boot() { swtpm_reset; "$M" log extend --tcti "$TCTI" "$1" >"$WORK/extend" 2>&1 || fail "log extend $1: $(cat "$WORK/extend")"; }
boot "$LOG"
"$M" seal --pcrs 4,8,9 --log "$LOG" -i "$WORK/secret" -o "$WORK/grub.sealed" || fail "seal on the corpus boot"
CMD="root=UUID=119f1a79-c391-4e37-905d-3a503284cadb ro quiet splash ima-policy=tcb nomodeset"
"$M" predict --log "$LOG" --cmdline "$CMD" --json > "$WORK/next.json" || fail "predict --json"
"$M" predict --log "$LOG" --cmdline "$CMD" --write-log "$WORK/next.bin" > /dev/null || fail "predict --write-log"
"$M" reseal -i "$WORK/grub.sealed" --values "$WORK/next.json" --log "$LOG" > /dev/null || fail "reseal to the prediction"
[ "$(jq -r .policy.kind "$WORK/grub.sealed")" = or ] || fail "the prediction did not move PCR 8"
boot "$WORK/next.bin"
"$M" unseal -i "$WORK/grub.sealed" | cmp - "$WORK/secret" || fail "the predicted boot does not unseal"
boot "$LOG"
"$M" unseal -i "$WORK/grub.sealed" | cmp - "$WORK/secret" || fail "the old boot does not unseal after reseal"
echo "ok: corpus GRUB boot: reseal to 'mboot predict --cmdline' values; the predicted boot and the old one unseal"

# -o OUT: an existing file that is not SEALED is kept byte for byte (exit 2) unless --force;
# SEALED through a symlink is replaced where the link points, and the link stays a link.
printf 'keep\n' > "$WORK/other"
cp "$WORK/other" "$WORK/other.orig"
"$M" reseal -i "$WORK/grub.sealed" -o "$WORK/other" >/dev/null 2>"$WORK/err"; rc=$?
[ $rc -eq 2 ] || fail "reseal -o an existing file: exit $rc, expected 2: $(cat "$WORK/err")"
grep -q "already exists; not replaced (give --force" "$WORK/err" || fail "refusal not said: $(cat "$WORK/err")"
cmp -s "$WORK/other" "$WORK/other.orig" || fail "a refused reseal changed the file"
"$M" reseal -i "$WORK/grub.sealed" -o "$WORK/other" --force >/dev/null 2>"$WORK/err" || fail "reseal --force: $(cat "$WORK/err")"
"$M" unseal -i "$WORK/other" | cmp - "$WORK/secret" || fail "reseal --force output does not unseal"
[ "$(stat -c %a "$WORK/other")" = 600 ] || fail "reseal --force output mode $(stat -c %a "$WORK/other")"
mkdir -p "$WORK/store"
cp "$WORK/grub.sealed" "$WORK/store/real.sealed"
ln -s "$WORK/store/real.sealed" "$WORK/link.sealed"
cp "$WORK/store/real.sealed" "$WORK/real.before"
"$M" reseal -i "$WORK/link.sealed" >/dev/null 2>"$WORK/err" || fail "reseal through a symlink: $(cat "$WORK/err")"
[ -L "$WORK/link.sealed" ] || fail "reseal replaced the symlink instead of its target"
cmp -s "$WORK/store/real.sealed" "$WORK/real.before" && fail "reseal through a symlink did not rewrite its target"
"$M" unseal -i "$WORK/link.sealed" | cmp - "$WORK/secret" || fail "unseal after reseal through a symlink"
[ "$(find "$WORK/store" "$WORK" -maxdepth 1 -name '*.tmp*' | wc -l)" -eq 0 ] || fail "temp files left"
echo "ok: reseal -o an existing other file: exit 2, unchanged; --force replaces it; SEALED behind a symlink rewritten in place"
