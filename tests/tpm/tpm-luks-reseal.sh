#!/bin/bash
# mboot luks reseal and the kernel-update hook on a LUKS2 image file, on a swtpm holding a real
# boot (ima-evm-utils' GRUB machine, replayed by `mboot log extend`): a key enrolled to PCRs
# 7,8,9; the hook (MBOOT_LUKS_DEVICES=image) reseals its token to this boot OR the one a new
# kernel and initrd will make (`mboot predict`). The new token's branches are tpm2_pcrread's
# values of this boot and, after the "reboot" (a reset, the predicted log replayed), of that
# boot; `cryptsetup open --test-passphrase --token-only` (the plugin, bind-mounted in `unshare
# -m` as tpm-luks.sh does) and `mboot luks unlock --test` open the disk before and after the
# reboot, and not on a wrong boot (another kernel). Tokens sealed --authorized-by are skipped;
# the default device list comes from crypttab. Crash injection: the reseal is killed (SIGKILL,
# from the LD_PRELOAD shim mb-crash-writes.c) at its Nth write or sync to the image, N = 1, 2,
# ... until it completes, once with whole writes and once with the killed write half done; after
# each kill a good boot opens the disk with some token (this one always, the next one once the
# new token is on the disk), and a clean reseal leaves exactly one mboot token for the keyslot.
. "${MB_TPM_TESTS:-$(dirname "$0")}/swtpm-env.sh"
M=${MBOOT:?}
S=${MB_SOURCE_ROOT:?}
C=${MB_TESTDATA:?}/corpus
SHIM=${MB_CRASH_SHIM:?}
command -v cryptsetup >/dev/null || { echo "SKIP: cryptsetup not installed"; exit 77; }
. "${MB_TPM_TESTS:-$(dirname "$0")}/luks-plugin.sh"
[ -f "$PLUGIN_DIR/libcryptsetup-token-mboot.so" ] || fail "no plugin in $PLUGIN_DIR"
[ -f "$SHIM" ] || fail "no crash shim $SHIM"
START=$SECONDS

LOG=$C/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9
swtpm_start
swtpm_banks "sha1 sha256"
boot() { # boot LOG: a reset and that boot's measurements (the TPM's keys survive, as in a reboot)
	swtpm_reset
	"$M" log extend --tcti "$TCTI" "$1" >"$WORK/extend" 2>&1 || fail "log extend $1: $(cat "$WORK/extend")"
}
# opens STATE: this boot opens IMG with a token, through the plugin and through mboot
opens() {
	local what=$1 img=${2:-$IMG}
	if [ "$HAVE_NS" = 1 ]; then
		with_plugin cryptsetup open --test-passphrase --token-only "$img" </dev/null 2>"$WORK/err"; rc=$?
		expect_rc 0 "$what: cryptsetup open --test-passphrase --token-only"
	fi
	"$M" luks unlock "$img" --test >/dev/null 2>"$WORK/err"; rc=$?
	expect_rc 0 "$what: mboot luks unlock --test"
}
refused() { # refused WHAT: neither the plugin nor mboot opens IMG on this boot
	if [ "$HAVE_NS" = 1 ]; then
		with_plugin cryptsetup open --test-passphrase --token-only "$IMG" </dev/null 2>"$WORK/err"; rc=$?
		[ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] || fail "$1: cryptsetup --token-only exit $rc: $(cat "$WORK/err")"
		grep -q "PCR 9 (sha256) differs" "$WORK/err" || fail "$1: the plugin does not name PCR 9: $(cat "$WORK/err")"
	fi
	"$M" luks unlock "$IMG" --test >/dev/null 2>"$WORK/err"; rc=$?
	expect_rc 1 "$1: mboot luks unlock --test"
}
n_mboot_tokens() { cryptsetup luksDump "$1" | grep -c '^  [0-9]*: mboot$'; }

boot "$LOG"
printf 'correct horse' > "$WORK/pw"
IMG=$WORK/disk.img
truncate -s 20M "$IMG"
cryptsetup luksFormat -q --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 --key-file "$WORK/pw" "$IMG" ||
	fail "luksFormat"
"$M" luks enroll "$IMG" --pcrs 7,8,9 --log "$LOG" --key-file "$WORK/pw" >/dev/null 2>"$WORK/err" ||
	fail "enroll: $(cat "$WORK/err")"
cp "$IMG" "$WORK/enrolled.img"
cryptsetup token export --token-id 0 "$IMG" | jq -r '.mboot.events // empty' > "$WORK/events.enrolled"
[ -s "$WORK/events.enrolled" ] || fail "enroll --log kept no event summary"

# The update: a new kernel and initrd (GRUB measures them into PCR 9); the next boot's log, and
# a wrong boot's (another kernel).
# updated in place, under the names GRUB loads today (other names move PCR 8: test-predict-honest)
K=vmlinuz-5.7.0-rc2+
mkdir -p "$WORK/new" "$WORK/evil"
head -c 100000 /dev/urandom >"$WORK/new/$K"
head -c 50000 /dev/urandom >"$WORK/new/initrd.img-5.7.0-rc2+"
head -c 100000 /dev/urandom >"$WORK/evil/$K"
# predict exits 1: shim-less GRUB had the kernel measured into PCR 4 too, which it cannot
# predict; the key is sealed to 7,8,9 only, whose events the written log carries
for k in new:next evil:evil; do
	"$M" predict --log "$LOG" --kernel "$WORK/${k%%:*}/$K" --initrd "$WORK/new/initrd.img-5.7.0-rc2+" \
		--write-log "$WORK/${k#*:}.bin" >/dev/null 2>"$WORK/err"
	rc=$?
	[ $rc = 1 ] && grep -q "PCR 4 cannot be predicted" "$WORK/err" && [ -s "$WORK/${k#*:}.bin" ] ||
		fail "predict the ${k#*:} boot: exit $rc: $(cat "$WORK/err")"
done
PREDICT=(--predict-args --log "$LOG" --kernel "$WORK/new/$K" --initrd "$WORK/new/initrd.img-5.7.0-rc2+")

# 1. The hook reseals the token: one new token for keyslot 1, the old one gone; its branches are
#    tpm2_pcrread's values now and after the reboot.
export MBOOT=$M MBOOT_LOG=$LOG MBOOT_SEALED_DIR=$WORK/sealed.d MBOOT_RESEAL_STRICT=1 MBOOT_LUKS_DEVICES=$IMG
export MBOOT_GRUB_BOOTED_DIR=$WORK/grub-booted # the hook keeps copies of the configs that booted: not in /var/lib
mkdir -p "$MBOOT_SEALED_DIR"
"$S/hooks/mboot-reseal" "$WORK/new/$K" "$WORK/new/initrd.img-5.7.0-rc2+" 2>"$WORK/hook.err" ||
	fail "hook: $(cat "$WORK/hook.err")"
grep -qx "mboot-reseal: $IMG: LUKS tokens resealed to this boot and the next one" "$WORK/hook.err" ||
	fail "hook said: $(cat "$WORK/hook.err")"
"$M" luks list "$IMG" --json | jq -e '[.tokens[] | {token, keyslot, policy, bank, pcrs}] == [{"token": 1, "keyslot": 1, "policy": "or", "bank": "sha256", "pcrs": [7, 8, 9]}]' \
	>/dev/null || fail "after the hook: $("$M" luks list "$IMG" --json)"
[ "$(n_mboot_tokens "$IMG")" = 1 ] || fail "luksDump: not one mboot token: $(cryptsetup luksDump "$IMG")"
cryptsetup token export --token-id 1 "$IMG" > "$WORK/token.json" || fail "token export"
# the enrolled boot's event summary goes along, so a refusal still names events
[ "$(jq -r '.mboot.events // empty' "$WORK/token.json")" = "$(cat "$WORK/events.enrolled")" ] ||
	fail "the resealed token lost the event summary"
jq -e '.keyslots == ["1"] and (.mboot.sealed.policy.branches | length) == 2' "$WORK/token.json" >/dev/null ||
	fail "token: $(cat "$WORK/token.json")"
for p in 7 8 9; do
	[ "$(jq -r ".mboot.sealed.policy.branches[0].values[\"$p\"]" "$WORK/token.json")" = "$(pcr_hex $p)" ] ||
		fail "branch 0's PCR $p is not tpm2_pcrread's now: $(jq -c .mboot.sealed.policy "$WORK/token.json")"
done
opens "this boot, after the hook"
boot "$WORK/next.bin"
for p in 7 8 9; do
	[ "$(jq -r ".mboot.sealed.policy.branches[1].values[\"$p\"]" "$WORK/token.json")" = "$(pcr_hex $p)" ] ||
		fail "branch 1's PCR $p is not tpm2_pcrread's after the reboot"
done
opens "the next boot"
boot "$WORK/evil.bin"
refused "a boot of another kernel"
boot "$LOG"
opens "back on this boot"
echo "ok: hook: token 0 replaced by token 1 (PolicyOR of tpm2_pcrread's values now and after the reboot); the plugin and unlock --test open on this boot and the next, not on another kernel's"

# 1b. Several predicted states (a copy of the disk): the next boot and another kernel's, two
#     --predict-args groups; a third group equal to the first is sealed to once. The branches are
#     tpm2_pcrread's values of each boot, in the order given; each of the three boots opens it.
cp "$IMG" "$WORK/multi.img"
"$M" luks reseal "$WORK/multi.img" "${PREDICT[@]}" --predict-args --log "$LOG" --kernel "$WORK/evil/$K" \
	--initrd "$WORK/new/initrd.img-5.7.0-rc2+" "${PREDICT[@]}" >"$WORK/out" 2>"$WORK/err"; rc=$?
expect_rc 0 "luks reseal with three --predict-args"
tok=$("$M" luks list "$WORK/multi.img" --json | jq -r '.tokens[0].token')
cryptsetup token export --token-id "$tok" "$WORK/multi.img" > "$WORK/multi.json" || fail "token export"
[ "$(jq -r '.mboot.sealed.policy.branches | length' "$WORK/multi.json")" = 3 ] ||
	fail "three predictions, one a duplicate: not 3 branches: $(jq -c .mboot.sealed.policy "$WORK/multi.json")"
for b in 0:"$LOG" 1:"$WORK/next.bin" 2:"$WORK/evil.bin"; do
	boot "${b#*:}"
	for p in 7 8 9; do
		[ "$(jq -r ".mboot.sealed.policy.branches[${b%%:*}].values[\"$p\"]" "$WORK/multi.json")" = "$(pcr_hex $p)" ] ||
			fail "branch ${b%%:*}'s PCR $p is not tpm2_pcrread's of ${b#*:}"
	done
	opens "several predictions, the boot of branch ${b%%:*}" "$WORK/multi.img"
done
boot "$LOG"
echo "ok: luks reseal with three --predict-args (one a duplicate): 3 branches, tpm2_pcrread's values of each boot; each opens"

# 2. The next reseal, on the new boot without a prediction: back to one PolicyPCR branch, the token
#    slot alternates; the old boot no longer opens.
boot "$WORK/next.bin"
"$M" luks reseal "$IMG" >"$WORK/out" 2>"$WORK/err"; rc=$?
expect_rc 0 "luks reseal on the new boot"
grep -qx "$IMG: keyslot 1: resealed to the current values: token 0 (token 1 removed)" "$WORK/out" ||
	fail "reseal said: $(cat "$WORK/out")"
"$M" luks list "$IMG" --json | jq -e '[.tokens[] | [.token, .keyslot, .policy]] == [[0, 1, "pcr"]]' >/dev/null ||
	fail "after the reseal on the new boot: $("$M" luks list "$IMG" --json)"
opens "the new boot, resealed to it"
boot "$LOG"
refused "the old boot after the reseal on the new one"
echo "ok: a reseal on the new boot without prediction: one PolicyPCR token (0), the old one removed; the old boot no longer opens"

# 3. The hook: a token sealed to signed policies is skipped and said; crypttab gives the default
#    devices; a device that cannot be resealed fails the hook only when strict.
cp "$WORK/enrolled.img" "$IMG"
openssl genrsa -out "$WORK/rel.pem" 2048 2>/dev/null || fail "openssl genrsa"
openssl rsa -in "$WORK/rel.pem" -pubout -out "$WORK/rel.pub" 2>/dev/null || fail "openssl rsa"
"$M" luks enroll "$IMG" --authorized-by "$WORK/rel.pub" --key-file "$WORK/pw" >/dev/null 2>"$WORK/err" ||
	fail "enroll --authorized-by: $(cat "$WORK/err")"
cryptsetup token export --token-id 1 "$IMG" > "$WORK/signed.before" || fail "export the signed token"
"$M" luks reseal "$IMG" "${PREDICT[@]}" >"$WORK/out" 2>"$WORK/err"; rc=$?
expect_rc 0 "luks reseal with a signed-policy token"
grep -qx "$IMG: token 1 (keyslot 2) is sealed to signed policies: nothing to reseal (a release ships a signature)" "$WORK/out" ||
	fail "skip not said: $(cat "$WORK/out")"
grep -qx "$IMG: keyslot 1: resealed to the current values or the predicted ones (PolicyOR): token 2 (token 0 removed)" "$WORK/out" ||
	fail "reseal said: $(cat "$WORK/out")"
"$M" luks list "$IMG" --json | jq -e '[.tokens[] | [.keyslot, .policy]] | sort == [[1, "or"], [2, "authorize"]]' >/dev/null ||
	fail "after a reseal beside a signed-policy token: $("$M" luks list "$IMG" --json)"
cryptsetup token export --token-id 1 "$IMG" | cmp -s - "$WORK/signed.before" || fail "the signed-policy token changed"
"$M" luks reseal "$IMG" --token 1 >"$WORK/out" 2>"$WORK/err"; rc=$?
expect_rc 0 "luks reseal --token of a signed-policy token"
grep -q "sealed to signed policies: nothing to reseal" "$WORK/out" || fail "not said: $(cat "$WORK/out")"
cp "$WORK/enrolled.img" "$IMG"
format "$WORK/plain.img"
printf '%s\n' "# a comment" "root $IMG none luks" "data $WORK/plain.img none luks" "gone $WORK/missing.img none luks" \
	> "$WORK/crypttab"
(unset MBOOT_LUKS_DEVICES; MBOOT_CRYPTTAB=$WORK/crypttab "$S/hooks/mboot-reseal" "$WORK/new/$K" "$WORK/new/initrd.img-5.7.0-rc2+") \
	2>"$WORK/hook.err" || fail "hook with crypttab: $(cat "$WORK/hook.err")"
[ "$(cat "$WORK/hook.err")" = "mboot-reseal: $IMG: LUKS tokens resealed to this boot and the next one" ] ||
	fail "hook with crypttab said: $(cat "$WORK/hook.err")"
"$M" luks list "$IMG" --json | jq -e '[.tokens[].policy] == ["or"]' >/dev/null || fail "crypttab's device not resealed"
MBOOT_LUKS_DEVICES="$WORK/plain.img" "$S/hooks/mboot-reseal" "$WORK/new/$K" 2>"$WORK/hook.err"; rc=$?
expect_rc 1 "strict hook, a device without a token"
grep -q "plain.img: LUKS tokens NOT resealed (exit 2): the disk will need its passphrase after the reboot" "$WORK/hook.err" ||
	fail "not said: $(cat "$WORK/hook.err")"
MBOOT_RESEAL_STRICT=0 MBOOT_LUKS_DEVICES="$WORK/plain.img" "$S/hooks/mboot-reseal" "$WORK/new/$K" 2>"$WORK/hook.err"; rc=$?
expect_rc 0 "hook (not strict), a device without a token"
MBOOT_LUKS_DEVICES='' "$S/hooks/mboot-reseal" "$WORK/new/$K" 2>"$WORK/hook.err" || fail "MBOOT_LUKS_DEVICES empty"
[ -s "$WORK/hook.err" ] && fail "MBOOT_LUKS_DEVICES empty: $(cat "$WORK/hook.err")"
# a sealed PCR the update makes unpredictable: nothing written, exit 1
cp "$IMG" "$WORK/copy.img"
printf 'linux /boot/vmlinuz-6.9 root=/dev/sda1 ro\ninitrd /boot/initrd.img-6.9\n' > "$WORK/grub.cfg"
"$M" luks reseal "$IMG" --predict-args --log "$LOG" --grub-cfg "(hd0,gpt2)/boot/grub/grub.cfg=$WORK/grub.cfg" >/dev/null 2>"$WORK/err"; rc=$?
expect_rc 1 "luks reseal with an unpredictable PCR"
grep -q "^PCR 8 cannot be predicted: .*grub.cfg changed" "$WORK/err" || fail "not said: $(cat "$WORK/err")"
cmp -s "$IMG" "$WORK/copy.img" || fail "a refused reseal changed the image"
# a boot that cannot unseal the token: exit 1, PCR named, nothing written
boot "$WORK/evil.bin"
"$M" luks reseal "$WORK/copy.img" "${PREDICT[@]}" >/dev/null 2>"$WORK/err"; rc=$?
expect_rc 1 "luks reseal on a boot that cannot unseal"
grep -q "^PCR 9 (sha256) differs" "$WORK/err" || fail "PCR 9 not named: $(cat "$WORK/err")"
cmp -s "$IMG" "$WORK/copy.img" || fail "a reseal refused by the TPM changed the image"
boot "$LOG"
echo "ok: signed-policy tokens skipped (said, unchanged); crypttab's devices with a token are the default; a device that fails fails the hook only when strict; unpredictable PCRs and a wrong boot change nothing"

# 4. Crash injection: the reseal killed at its Nth write or sync to the image.
header_seqids() { # the sequence ids of the two LUKS2 binary headers (offset 0 and hdr_size)
	local size
	size=$((16#$(xxd -s 8 -l 8 -p "$1")))
	echo "$(xxd -s 16 -l 8 -p "$1") $(xxd -s $((size + 16)) -l 8 -p "$1")"
}
iterations=0 split_seen=0 both_seen=0 old_only=0 new_only=0
for torn in 0 1; do
	n=1
	while :; do
		iterations=$((iterations + 1))
		[ $iterations -le 60 ] || fail "more than 60 crash iterations"
		[ $((SECONDS - START)) -lt 600 ] || fail "the crash loop ran over 10 minutes"
		cp "$WORK/enrolled.img" "$IMG"
		MB_CRASH_FILE=$IMG MB_CRASH_AT=$n MB_CRASH_TORN=$torn LD_PRELOAD="${PRELOAD:+$PRELOAD:}$SHIM" \
			"$M" luks reseal "$IMG" "${PREDICT[@]}" >"$WORK/out" 2>"$WORK/err"; rc=$?
		[ $rc = 0 ] && break # it finished before its Nth write
		[ $rc = 137 ] || fail "torn=$torn N=$n: exit $rc, not SIGKILL: $(cat "$WORK/err")"
		# the TPM objects and sessions a killed process leaves (no resource manager here)
		tpm2_flushcontext -t >/dev/null 2>&1; tpm2_flushcontext -l >/dev/null 2>&1
		read -r s1 s2 <<<"$(header_seqids "$IMG")"
		[ "$s1" != "$s2" ] && split_seen=$((split_seen + 1))
		cp "$IMG" "$WORK/crashed.img"
		"$M" luks list "$WORK/crashed.img" --json > "$WORK/list.json" 2>"$WORK/err" || fail "torn=$torn N=$n: list: $(cat "$WORK/err")"
		jq -e '(.tokens | length) >= 1 and (.tokens | length) <= 2 and all(.tokens[]; .keyslot == 1)' "$WORK/list.json" >/dev/null ||
			fail "torn=$torn N=$n: tokens: $(cat "$WORK/list.json")"
		new=$(jq '[.tokens[] | select(.policy == "or")] | length' "$WORK/list.json")
		case "$(jq -c '[.tokens[].policy]' "$WORK/list.json")" in
		'["pcr"]') old_only=$((old_only + 1)) ;;
		'["or"]') new_only=$((new_only + 1)) ;;
		*) both_seen=$((both_seen + 1)) ;;
		esac
		opens "torn=$torn N=$n ($(jq -c '[.tokens[].policy]' "$WORK/list.json")), this boot" "$WORK/crashed.img"
		if [ "$new" -ge 1 ]; then
			boot "$WORK/next.bin"
			opens "torn=$torn N=$n, the next boot" "$WORK/crashed.img"
			boot "$LOG"
		fi
		"$M" luks reseal "$WORK/crashed.img" "${PREDICT[@]}" >"$WORK/out" 2>"$WORK/err"; rc=$?
		expect_rc 0 "torn=$torn N=$n: the reseal after the crash"
		"$M" luks list "$WORK/crashed.img" --json | jq -e '[.tokens[] | [.keyslot, .policy]] == [[1, "or"]]' >/dev/null ||
			fail "torn=$torn N=$n: after a clean reseal not exactly one token: $("$M" luks list "$WORK/crashed.img" --json)"
		[ "$(n_mboot_tokens "$WORK/crashed.img")" = 1 ] || fail "torn=$torn N=$n: luksDump: not one mboot token"
		"$M" luks unlock "$WORK/crashed.img" --test >/dev/null 2>"$WORK/err" || fail "torn=$torn N=$n: unlock after the clean reseal"
		n=$((n + 1))
	done
	[ $n -gt 4 ] || fail "torn=$torn: the reseal finished before its ${n}th write: the shim saw no writes"
	echo "ok: torn=$torn: killed at each of its $((n - 1)) writes and syncs to the image; after each this boot opens, the next one too once the new token is there; a clean reseal leaves one token"
done
# what the kills left: only the old token, both, only the new; and headers caught between their two copies
[ $old_only -ge 1 ] && [ $both_seen -ge 1 ] && [ $new_only -ge 1 ] ||
	fail "crash states not all seen: old only $old_only, both $both_seen, new only $new_only"
[ $split_seen -ge 1 ] || fail "no kill fell between the two header copies"
echo "ok: crash states seen: old token only $old_only, old and new $both_seen, new only $new_only; $split_seen kills between the two header copies ($iterations runs, $((SECONDS - START)) s)"
exit 0
