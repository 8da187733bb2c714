#!/bin/bash
# Recovery keys and the way back in after an update (docs/luks.md), on LUKS2 image files and a
# swtpm holding a real boot: `mboot luks enroll --recovery-key` prints a key of 64 modhex
# letters (256 bits) that cryptsetup itself accepts on exactly the new keyslot (argon2id, as
# luksAddKey makes it), marked by an "mboot-recovery" token; two enrolls give two keys. Then a
# PCR changes (tpm2_pcrextend): the token no longer unseals, `mboot luks reseal` alone exits 1,
# with a wrong passphrase exits 2 and the image is byte for byte unchanged, and with the
# recovery key (--key-file) or the passphrase (--passphrase, on stdin) it makes a new key in a
# new keyslot that the plugin (`cryptsetup open --test-passphrase --token-only`) opens on this
# boot, while the old keyslot and token are gone and the recovery keyslot still opens.
. "${MB_TPM_TESTS:-$(dirname "$0")}/swtpm-env.sh"
M=${MBOOT:?}
C=${MB_TESTDATA:?}/corpus
command -v cryptsetup >/dev/null || { echo "SKIP: cryptsetup not installed"; exit 77; }
. "${MB_TPM_TESTS:-$(dirname "$0")}/luks-plugin.sh"
[ -f "$PLUGIN_DIR/libcryptsetup-token-mboot.so" ] || fail "no plugin in $PLUGIN_DIR"

# opens_slot IMG SLOT KEYFILE: cryptsetup (not mboot) accepts the key file on that keyslot
opens_slot() { cryptsetup open --test-passphrase --key-slot "$2" --key-file "$3" "$1" 2>/dev/null; }
token_only() { # token_only IMG: the plugin opens IMG on this boot
	[ "$HAVE_NS" = 1 ] || return 0
	with_plugin cryptsetup open --test-passphrase --token-only "$1" </dev/null 2>"$WORK/err"
}
key_of() { sed -n 's/^Recovery key: //p' "$1"; }

LOG=$C/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9
swtpm_start
swtpm_banks "sha1 sha256"
swtpm_reset
"$M" log extend --tcti "$TCTI" "$LOG" >"$WORK/extend" 2>&1 || fail "log extend: $(cat "$WORK/extend")"
printf 'correct horse' > "$WORK/pw"
IMG=$WORK/disk.img
format "$IMG"

# 1. enroll --recovery-key: keyslot 1 and token 0 for the TPM, keyslot 2 and token 1 for the key.
"$M" luks enroll "$IMG" --pcrs 7,8,9 --log none --key-file "$WORK/pw" --recovery-key >"$WORK/out" 2>"$WORK/err"; rc=$?
expect_rc 0 "enroll --recovery-key"
grep -q "token 0, keyslot 1: a new key sealed to PCRs 7,8,9" "$WORK/out" || fail "enroll said: $(cat "$WORK/out")"
grep -q "keyslot 2: a recovery key .*shown only this once: write it down" "$WORK/out" || fail "no write-it-down line: $(cat "$WORK/out")"
[ "$(grep -c '^Recovery key: ' "$WORK/out")" = 1 ] || fail "the key is not printed exactly once: $(cat "$WORK/out")"
grep -q '[▀▄█]' "$WORK/out" && fail "a QR code on a stdout that is not a terminal"
KEY1=$(key_of "$WORK/out")
[[ $KEY1 =~ ^([cbdefghijklnrtuv]{8}-){7}[cbdefghijklnrtuv]{8}$ ]] || fail "not 8 groups of 8 modhex letters: '$KEY1'"
printf '%s' "$KEY1" > "$WORK/rk1"
cryptsetup luksDump "$IMG" > "$WORK/dump" || fail "luksDump"
sed -n '/^  2: luks2$/,/^  [0-9]*: /p' "$WORK/dump" | grep -q 'PBKDF: *argon2id' ||
	fail "keyslot 2 is not argon2id (luksAddKey's default): $(cat "$WORK/dump")"
grep -A1 '^  1: mboot-recovery$' "$WORK/dump" | grep -q 'Keyslot: *2' || fail "no mboot-recovery token 1 on keyslot 2: $(cat "$WORK/dump")"
for s in 0 1; do opens_slot "$IMG" $s "$WORK/rk1" && fail "the recovery key opens keyslot $s"; done
opens_slot "$IMG" 2 "$WORK/rk1" || fail "cryptsetup does not take the recovery key on keyslot 2"
other=v; [ "${KEY1: -1}" = v ] && other=c # another last letter
opens_slot "$IMG" 2 <(printf '%s' "${KEY1%?}$other") && fail "keyslot 2 takes another key (the last letter changed)"
[ "$("$M" luks list "$IMG" --json | jq -c .recovery_keyslots)" = "[2]" ] || fail "list --json: $("$M" luks list "$IMG" --json)"
"$M" luks list "$IMG" | grep -qx "Recovery key: keyslot 2" || fail "list: $("$M" luks list "$IMG")"
grep -rqF "$KEY1" "$WORK" --exclude=out --exclude=rk1 && fail "the recovery key is in a file: $(grep -rlF "$KEY1" "$WORK")"
echo "ok: enroll --recovery-key: 64 modhex letters; cryptsetup takes them on keyslot 2 (argon2id) only; token 1 marks it"

# 2. Two more keys (enroll on another image; add-recovery): all different, 256 bits each.
IMG2=$WORK/other.img
format "$IMG2"
"$M" luks enroll "$IMG2" --pcrs 7 --log none --key-file "$WORK/pw" --recovery-key >"$WORK/out2" 2>"$WORK/err"; rc=$?
expect_rc 0 "second enroll --recovery-key"
"$M" luks add-recovery "$IMG2" --key-file "$WORK/pw" >"$WORK/out3" 2>"$WORK/err"; rc=$?
expect_rc 0 "add-recovery"
KEY2=$(key_of "$WORK/out2") KEY3=$(key_of "$WORK/out3")
python3 - "$KEY1" "$KEY2" "$KEY3" <<'PY' || fail "keys: $KEY1 $KEY2 $KEY3"
import sys
alphabet = "cbdefghijklnrtuv"          # modhex: hex digit i is alphabet[i]
keys = sys.argv[1:]
raw = [bytes.fromhex("".join("0123456789abcdef"[alphabet.index(c)] for c in k.replace("-", ""))) for k in keys]
assert all(len(r) == 32 for r in raw), "not 256 bits"
assert len(set(raw)) == len(raw), "two keys are the same"
assert set("".join(keys).replace("-", "")) == set(alphabet), "the 192 letters do not use all 16"
PY
opens_slot "$IMG2" 3 <(printf '%s' "$KEY3") || fail "add-recovery's key does not open keyslot 3"
echo "ok: three recovery keys, 32 distinct bytes each, all 16 modhex letters used"

# 3. An update changes PCR 8: the token no longer unseals; reseal alone changes nothing (1).
token_only "$IMG" || fail "the plugin does not open the enrolled disk: $(cat "$WORK/err")"
tpm2_pcrextend "8:sha256=$(printf 'update' | sha256sum | cut -d' ' -f1)" || fail "tpm2_pcrextend"
token_only "$IMG" && fail "the plugin still opens after PCR 8 changed"
sha256sum "$IMG" > "$WORK/img.sum"
"$M" luks reseal "$IMG" >"$WORK/out" 2>"$WORK/err"; rc=$?
expect_rc 1 "reseal without a passphrase on a boot that cannot unseal"
grep -q "PCR 8" "$WORK/err" || fail "reseal does not name PCR 8: $(cat "$WORK/err")"
# a wrong passphrase: 2, the image byte for byte as before
cryptsetup luksDump "$IMG" > "$WORK/dump.before"
printf 'wrong horse\n' | "$M" luks reseal "$IMG" --passphrase >"$WORK/out" 2>"$WORK/err"; rc=$?
expect_rc 2 "reseal with a wrong passphrase"
grep -q "the passphrase opens no keyslot" "$WORK/err" || fail "wrong passphrase said: $(cat "$WORK/err")"
sha256sum -c --quiet "$WORK/img.sum" || fail "a wrong passphrase changed the image: $(diff "$WORK/dump.before" <(cryptsetup luksDump "$IMG"))"
"$M" luks reseal "$IMG" --passphrase --key-file "$WORK/pw" >/dev/null 2>"$WORK/err"; rc=$?
expect_rc 2 "--passphrase with --key-file"
echo "ok: locked out: reseal alone exit 1 naming PCR 8; a wrong passphrase exit 2, the image unchanged"

# 4. reseal --key-file (the recovery key): a new key in keyslot 3, token 2; token 0 and keyslot 1 gone.
"$M" luks reseal "$IMG" --key-file "$WORK/rk1" >"$WORK/out" 2>"$WORK/err"; rc=$?
expect_rc 0 "reseal --key-file RECOVERY-KEY"
grep -q "a new key in keyslot 3, sealed to the current values: token 2 (removed: token 0 keyslot 1)" "$WORK/out" ||
	fail "reseal said: $(cat "$WORK/out")"
cryptsetup luksDump "$IMG" > "$WORK/dump" || fail "luksDump"
grep -q '^  1: luks2$' "$WORK/dump" && fail "the old keyslot 1 is still there: $(cat "$WORK/dump")"
grep -q '^  0: mboot$' "$WORK/dump" && fail "the old token 0 is still there"
for s in 0 2 3; do grep -q "^  $s: luks2$" "$WORK/dump" || fail "keyslot $s missing: $(cat "$WORK/dump")"; done
cryptsetup token export --token-id 2 "$IMG" > "$WORK/token.json" || fail "token export 2"
jq -e '.type == "mboot" and .keyslots == ["3"] and (.mboot | has("events") | not)' "$WORK/token.json" >/dev/null ||
	fail "token 2: $(cat "$WORK/token.json")"
[ "$(jq -r '.mboot.sealed.pcrs.values["8"]' "$WORK/token.json")" = "$(pcr_hex 8)" ] ||
	fail "token 2's PCR 8 is not tpm2_pcrread's: $(jq -c .mboot.sealed.pcrs "$WORK/token.json")"
token_only "$IMG" || fail "the plugin does not open the disk after reseal --key-file: $(cat "$WORK/err")"
"$M" luks unlock "$IMG" --test >/dev/null 2>"$WORK/err" || fail "unlock --test after reseal: $(cat "$WORK/err")"
opens_slot "$IMG" 2 "$WORK/rk1" || fail "the recovery keyslot no longer opens"
opens_slot "$IMG" 0 "$WORK/pw" || fail "the passphrase keyslot no longer opens"
echo "ok: reseal --key-file RECOVERY-KEY: keyslot 3 + token 2 (tpm2_pcrread's PCR 8), the plugin opens; keyslot 1 and token 0 gone; recovery still opens"

# 5. Again, with the passphrase on stdin (--passphrase): keyslot 1 (free again) and token 0.
tpm2_pcrextend "8:sha256=$(printf 'update 2' | sha256sum | cut -d' ' -f1)" || fail "tpm2_pcrextend"
token_only "$IMG" && fail "the plugin still opens after the second update"
printf 'correct horse\n' | "$M" luks reseal "$IMG" --passphrase >"$WORK/out" 2>"$WORK/err"
# shellcheck disable=SC2034 # rc: read by expect_rc (luks-plugin.sh)
rc=$?
expect_rc 0 "reseal --passphrase (stdin)"
grep -q "a new key in keyslot 1, sealed to the current values: token 0 (removed: token 2 keyslot 3)" "$WORK/out" ||
	fail "reseal --passphrase said: $(cat "$WORK/out")"
token_only "$IMG" || fail "the plugin does not open the disk after reseal --passphrase: $(cat "$WORK/err")"
[ "$(cryptsetup luksDump "$IMG" | grep -c '^  [0-9]*: luks2$')" = 3 ] || fail "not 3 keyslots: $(cryptsetup luksDump "$IMG")"
# remove may now take the last TPM token: the recovery keyslot and the passphrase remain
"$M" luks remove "$IMG" --token 0 >/dev/null 2>"$WORK/err" || fail "remove: $(cat "$WORK/err")"
opens_slot "$IMG" 2 "$WORK/rk1" || fail "the recovery keyslot no longer opens after remove"
echo "ok: reseal --passphrase: keyslot 1 + token 0, the plugin opens; token 2 and keyslot 3 gone"
