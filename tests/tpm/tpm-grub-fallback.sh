#!/bin/bash
# The kernel hook's three PCR states on the real Debian GRUB 2.06 boot (tests/data/grub-model,
# PROVENANCE) rebuilt in a swtpm: a secret sealed to PCRs 8 and 9 and a LUKS2 disk image's key
# enrolled to them (mboot luks, the hook's second half), then update-grub's config for
# both kernels (boot-grub-both.cfg) and hooks/mboot-reseal for the new kernel. It reseals to
# today's values, the next boot's default entry (the new kernel) and the fallback to today's
# kernel from the menu's Advanced options (predict --grub-entry-kernel).
# - The expected PCR 8 of the next default and of the fallback are built by hand from GRUB's
#   logged strings and the config's text (tests/grub-model-fallback.sh), PCR 9 with sha256sum.
# - The sealed PolicyOR digest equals tpm2-tools' trial sessions: tpm2_policypcr of today's TPM,
#   of the two hand-built states (-f), then tpm2_policyor of the three.
# - Each of the three boots (the predicted logs extended into the rebooted swtpm, whose PCRs
#   then equal the hand-built values) unseals; the kernel-bump config's default boot, a fallback
#   with another initrd, and today's config with the new kernel do not.
# - A fallback no entry loads: the hook reseals to today's and the next default only and says so.
# - mboot reseal with a fourth, identical prediction: still three branches (deduplicated).
. "${MB_TPM_TESTS:-$(dirname "$0")}/swtpm-env.sh"
M=${MBOOT:?}
S=${MB_SOURCE_ROOT:?}
D=$MB_TESTDATA/grub-model
LOG=$D/log.bin
BOTH=$D/boot-grub-both.cfg
ESP='(hd0,gpt1)/EFI/BOOT/grub.cfg'
BOOT='(hd0,gpt1)/boot/grub/grub.cfg'
OLD=6.1.0-57-amd64
NEW=6.1.0-58-amd64

started=0
boot() { # boot LOG: the same TPM (its keys survive), rebooted, holding that boot's PCRs
	if [ $started = 0 ]; then
		swtpm_start
		swtpm_banks "sha1 sha256 sha384 sha512"
		started=1
	else
		swtpm_reset
	fi
	"$M" log extend --tcti "$TCTI" "$1" >"$WORK/extend" 2>&1 || fail "log extend $1: $(cat "$WORK/extend")"
}
pcr_hex() { tpm2_pcrread "sha256:$1" | sed -n "s/^ *$1 *: 0x//p" | tr 'A-F' 'a-f'; }
unseals() { # the sealed file and the LUKS2 disk's token both open on this boot
	"$M" unseal -i "$WORK/sealed.d/disk.sealed" --log "$1" 2>"$WORK/unseal.err" | cmp -s - "$WORK/secret" &&
		"$M" luks unlock "$IMG" --test >/dev/null 2>>"$WORK/unseal.err"
}
locked() { # neither opens on this boot
	! "$M" unseal -i "$WORK/sealed.d/disk.sealed" --log "$1" >/dev/null 2>&1 &&
		! "$M" luks unlock "$IMG" --test >/dev/null 2>&1
}
command -v cryptsetup >/dev/null || fail "cryptsetup is not installed (scripts/install-deps)"

# the hand-built values
"$M" log show --json "$LOG" >"$WORK/log.json" || fail "log show"
# shellcheck source=../grub-model-fallback.sh
. "$S/tests/grub-model-fallback.sh"
grub_fallback_expect "$WORK/log.json" "$D/boot-grub.cfg" "$BOTH" "$OLD" "$WORK" "$NEW"
[ -z "$FB_ERR" ] || fail "building the expected strings:$FB_ERR"
cp /usr/lib/shim/mmx64.efi.signed "$WORK/vmlinuz-$NEW" # a PE: under Secure Boot its Authenticode digest counts
head -c 50000 /dev/urandom >"$WORK/initrd.img-$NEW"
NEXT8=$FB_NEXT8
NEXT9=$(grub_pcr9 "$WORK/log.json" "$BOTH" "$WORK/vmlinuz-$NEW" "$WORK/initrd.img-$NEW")
FALL8=$FB_PCR8
FALL9=$FB_PCR9

# today's boot: the log replays in the swtpm to what the recording guest's TPM read
boot "$LOG"
[ "$(pcr_hex 8)" = "$(jq -r '.sha256["8"]' "$D/pcrs.json")" ] && [ "$FB_TODAY8" = "$(pcr_hex 8)" ] &&
	[ "$(pcr_hex 9)" = "$(jq -r '.sha256["9"]' "$D/pcrs.json")" ] || fail "today's PCR 8/9 in the swtpm"
mkdir -p "$WORK/sealed.d" "$WORK/kept"
printf 'disk key\n' >"$WORK/secret"
"$M" seal --pcrs 8,9 --log "$LOG" -i "$WORK/secret" -o "$WORK/sealed.d/disk.sealed" --force || fail "seal"
# and a LUKS2 disk whose key is enrolled to the same PCRs (the hook reseals its token too)
IMG=$WORK/disk.img
printf 'correct horse' >"$WORK/pw"
truncate -s 20M "$IMG"
cryptsetup luksFormat -q --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 --key-file "$WORK/pw" "$IMG" ||
	fail "luksFormat"
"$M" luks enroll "$IMG" --pcrs 8,9 --log "$LOG" --key-file "$WORK/pw" >/dev/null 2>"$WORK/err" || fail "enroll: $(cat "$WORK/err")"
# The machine's ESP (GRUB's (hd0,gpt1)) with the configs that booted, kept before update-grub
# by the 00-mboot-keep-booted hook; then update-grub writes the config for both kernels.
mkdir -p "$WORK/esp/EFI/BOOT" "$WORK/esp/boot/grub"
cp "$D/esp-grub.cfg" "$WORK/esp/EFI/BOOT/grub.cfg"
cp "$D/boot-grub.cfg" "$WORK/esp/boot/grub/grub.cfg"
export MBOOT=$M MBOOT_LOG=$LOG MBOOT_SEALED_DIR=$WORK/sealed.d MBOOT_RESEAL_STRICT=1 MBOOT_GRUB_BOOTED_DIR=$WORK/kept
export MBOOT_GRUB_MAP="(hd0,gpt1)=$WORK/esp" # where the ESP is mounted: a temp folder, not /boot/efi
MBOOT_RESEAL=$S/hooks/mboot-reseal "$S/hooks/kernel/00-mboot-keep-booted.in" $NEW "$WORK/vmlinuz-$NEW" 2>"$WORK/hook.err" ||
	fail "00-mboot-keep-booted: $(cat "$WORK/hook.err")"
[ -s "$WORK/hook.err" ] && fail "00-mboot-keep-booted said: $(cat "$WORK/hook.err")"
cmp -s "$D/boot-grub.cfg" "$WORK/kept/$(printf '%s' "$BOOT" | sha256sum | cut -c1-64)" &&
	cmp -s "$D/esp-grub.cfg" "$WORK/kept/$(printf '%s' "$ESP" | sha256sum | cut -c1-64)" ||
	fail "00-mboot-keep-booted: the copies are not the configs that booted"
cp "$BOTH" "$WORK/esp/boot/grub/grub.cfg"

# the hook, as after update-grub, with NO configuration of the GRUB side (no MBOOT_PREDICT_ARGS):
# the new config is found where it booted from, the fallback is the running kernel (a path that
# does not exist here: the kernel and initrd that booted today stay as the log has them)
export MBOOT_LUKS_DEVICES=$IMG
unset MBOOT_PREDICT_ARGS
MBOOT_FALLBACK_KERNEL=$WORK/absent/boot/vmlinuz-$OLD "$S/hooks/mboot-reseal" "$WORK/vmlinuz-$NEW" \
	"$WORK/initrd.img-$NEW" 2>"$WORK/hook.err" || fail "hook: $(cat "$WORK/hook.err")"
grep -q "resealed to this boot, the next one and a fallback to $WORK/absent/boot/vmlinuz-$OLD" "$WORK/hook.err" ||
	fail "hook said: $(cat "$WORK/hook.err")"
grep -q "$IMG: LUKS tokens resealed to this boot, the next one and a fallback to $WORK/absent/boot/vmlinuz-$OLD" \
	"$WORK/hook.err" || fail "hook said (LUKS): $(cat "$WORK/hook.err")"
[ "$(jq -r '.policy.branches | length' "$WORK/sealed.d/disk.sealed")" = 3 ] ||
	fail "branches: $(jq -c .policy "$WORK/sealed.d/disk.sealed")"
tok=$("$M" luks list "$IMG" --json | jq -r '.tokens[0].token')
cryptsetup token export --token-id "$tok" "$IMG" >"$WORK/token.json" || fail "token export"

# tpm2-tools' trial sessions: today's PCRs, then the two hand-built states, then the OR
trial() { # trial OUT [VALUES_FILE]
	tpm2_startauthsession -S "$WORK/s.ctx" >/dev/null || fail "startauthsession"
	tpm2_policypcr -S "$WORK/s.ctx" -l sha256:8,9 ${2:+-f "$2"} -L "$1" >/dev/null || fail "policypcr $1"
	tpm2_flushcontext "$WORK/s.ctx"
}
trial "$WORK/b0.dig"
printf '%s%s' "$NEXT8" "$NEXT9" | xxd -r -p >"$WORK/next.vals"
printf '%s%s' "$FALL8" "$FALL9" | xxd -r -p >"$WORK/fall.vals"
trial "$WORK/b1.dig" "$WORK/next.vals"
trial "$WORK/b2.dig" "$WORK/fall.vals"
tpm2_startauthsession -S "$WORK/s.ctx" >/dev/null
tpm2_policyor -S "$WORK/s.ctx" -l "sha256:$WORK/b0.dig,$WORK/b1.dig,$WORK/b2.dig" -L "$WORK/or.dig" >/dev/null ||
	fail "policyor"
tpm2_flushcontext "$WORK/s.ctx"
want=$(xxd -p -c 64 "$WORK/or.dig")
got=$(jq -r .policy.digest "$WORK/sealed.d/disk.sealed")
[ "$got" = "$want" ] || fail "PolicyOR digest $got, tpm2-tools trial $want"
[ "$(jq -r .mboot.sealed.policy.digest "$WORK/token.json")" = "$want" ] ||
	fail "the LUKS token's PolicyOR digest $(jq -r .mboot.sealed.policy.digest "$WORK/token.json"), tpm2-tools trial $want"
echo "ok: the hook sealed the file and the LUKS token to 3 states; the PolicyOR digest is tpm2_policyor's of today's and the hand-built next default and fallback ($want)"

# each of the three boots unseals, holding the hand-built values
"$M" predict --log "$LOG" --grub-booted-dir "$WORK/kept" --grub-cfg "$BOOT=$BOTH" --kernel "$WORK/vmlinuz-$NEW" \
	--initrd "$WORK/initrd.img-$NEW" --write-log "$WORK/next.bin" >/dev/null 2>"$WORK/err" || fail "predict next: $(cat "$WORK/err")"
"$M" predict --log "$LOG" --grub-booted-dir "$WORK/kept" --grub-cfg "$BOOT=$BOTH" --grub-entry "1>1" \
	--write-log "$WORK/fall.bin" >/dev/null 2>"$WORK/err" || fail "predict fallback: $(cat "$WORK/err")"
boot "$WORK/next.bin"
[ "$(pcr_hex 8)" = "$NEXT8" ] && [ "$(pcr_hex 9)" = "$NEXT9" ] || fail "the next boot's PCRs are not the hand-built ones"
unseals "$WORK/next.bin" || fail "the next boot (the new kernel, default entry) does not unseal: $(cat "$WORK/unseal.err")"
boot "$WORK/fall.bin"
[ "$(pcr_hex 8)" = "$FALL8" ] && [ "$(pcr_hex 9)" = "$FALL9" ] || fail "the fallback's PCRs are not the hand-built ones"
unseals "$WORK/fall.bin" || fail "the fallback (Advanced options > $OLD) does not unseal: $(cat "$WORK/unseal.err")"
boot "$LOG"
unseals "$LOG" || fail "today's boot does not unseal: $(cat "$WORK/unseal.err")"
echo "ok: today's boot, the next default boot and the fallback to $OLD from the new menu each unseal and open the disk"

# nothing else does: the kernel-bump config's default (another grub.cfg), the fallback with
# another initrd, the new kernel under today's config
mkdir -p "$WORK/other"
head -c 50000 /dev/urandom >"$WORK/other/initrd.img-$OLD" # the name the entry loads, other bytes
"$M" predict --log "$LOG" --grub-booted-dir "$WORK/kept" --grub-cfg "$BOOT=$D/boot-grub-next.cfg" \
	--kernel "$WORK/vmlinuz-$NEW" --initrd "$WORK/initrd.img-$NEW" --write-log "$WORK/o1.bin" >/dev/null 2>&1 || fail "predict o1"
"$M" predict --log "$LOG" --grub-booted-dir "$WORK/kept" --grub-cfg "$BOOT=$BOTH" --grub-entry "1>1" \
	--initrd "$WORK/other/initrd.img-$OLD" --write-log "$WORK/o2.bin" >/dev/null 2>&1 || fail "predict o2"
# the new kernel under today's config, whose entry loads today's kernel path: --kernel is not
# that file, so PCR 9 has no value (it used to be predicted with the new kernel's digest there)
"$M" predict --log "$LOG" --grub-booted-dir "$WORK/kept" --grub-cfg "$BOOT=$D/boot-grub.cfg" \
	--kernel "$WORK/vmlinuz-$NEW" >/dev/null 2>"$WORK/err" && fail "predict o3: a value for the kernel GRUB does not load"
grep -q "PCR 9 cannot be predicted.*the entry that boots loads the kernel /boot/vmlinuz-$OLD, and --kernel names $WORK/vmlinuz-$NEW" \
	"$WORK/err" || fail "predict o3: $(cat "$WORK/err")"
for o in o1 o2; do
	boot "$WORK/$o.bin"
	locked "$WORK/$o.bin" || fail "$o: a boot that is none of the three unseals or opens the disk"
done
echo "ok: the kernel-bump config's boot, the fallback with another initrd, the new kernel under today's config: refused"

# a fallback that cannot be predicted (no entry loads that kernel): today's and the next default
# only, said on stderr, not a failure
boot "$LOG"
MBOOT_FALLBACK_KERNEL=/boot/vmlinuz-0.0.0-none "$S/hooks/mboot-reseal" "$WORK/vmlinuz-$NEW" "$WORK/initrd.img-$NEW" \
	2>"$WORK/hook.err" || fail "hook without a fallback: $(cat "$WORK/hook.err")"
grep -q "fallback to /boot/vmlinuz-0.0.0-none from the GRUB menu cannot be sealed to" "$WORK/hook.err" &&
	grep -q -- "--grub-entry-kernel /boot/vmlinuz-0.0.0-none names no menu entry" "$WORK/hook.err" &&
	grep -q "disk.sealed: resealed to this boot and the next one" "$WORK/hook.err" || fail "hook said: $(cat "$WORK/hook.err")"
[ "$(jq -r '.policy.branches | length' "$WORK/sealed.d/disk.sealed")" = 2 ] || fail "branches without the fallback"
boot "$WORK/next.bin"
unseals "$WORK/next.bin" || fail "without the fallback: the next boot does not unseal"
boot "$WORK/fall.bin"
locked "$WORK/fall.bin" || fail "without the fallback: the fallback unseals or opens the disk"
echo "ok: a fallback no entry loads: resealed to today's and the next default only, said on stderr"

# mboot reseal with the three states and a fourth identical to the fallback (--values of its
# hand-built PCRs): deduplicated, the same PolicyOR digest
boot "$LOG"
printf '{"banks": {"sha256": {"8": "%s", "9": "%s"}}}\n' "$FALL8" "$FALL9" >"$WORK/fall.json"
"$M" reseal -i "$WORK/sealed.d/disk.sealed" --tcti "$TCTI" --values "$WORK/fall.json" \
	--predict-args --log "$LOG" --grub-booted-dir "$WORK/kept" --grub-cfg "$BOOT=$BOTH" --kernel "$WORK/vmlinuz-$NEW" \
	--initrd "$WORK/initrd.img-$NEW" \
	--predict-args --log "$LOG" --grub-booted-dir "$WORK/kept" --grub-cfg "$BOOT=$BOTH" --grub-entry-kernel "/boot/vmlinuz-$OLD" \
	>"$WORK/out" 2>"$WORK/err" || fail "reseal with 3 predictions: $(cat "$WORK/err")"
got=$(jq -r .policy.digest "$WORK/sealed.d/disk.sealed")
[ "$(jq -r '.policy.branches | length' "$WORK/sealed.d/disk.sealed")" = 3 ] && grep -q "2 predicted states" "$WORK/out" ||
	fail "dedup: $(jq -c '.policy.branches | length' "$WORK/sealed.d/disk.sealed") $(cat "$WORK/out")"
# the branch order is today's, then the predictions as given: --values (the fallback) first
tpm2_startauthsession -S "$WORK/s.ctx" >/dev/null
tpm2_policyor -S "$WORK/s.ctx" -l "sha256:$WORK/b0.dig,$WORK/b2.dig,$WORK/b1.dig" -L "$WORK/or2.dig" >/dev/null ||
	fail "policyor"
tpm2_flushcontext "$WORK/s.ctx"
[ "$got" = "$(xxd -p -c 64 "$WORK/or2.dig")" ] || fail "PolicyOR after dedup $got, tpm2-tools $(xxd -p -c 64 "$WORK/or2.dig")"
# 8 predicted states: more than a PolicyOR takes
args=()
for _ in 1 2 3 4 5 6 7 8; do args+=(--values "$WORK/fall.json"); done
"$M" reseal -i "$WORK/sealed.d/disk.sealed" --tcti "$TCTI" "${args[@]}" >"$WORK/out" 2>"$WORK/err"
rc=$?
[ $rc = 2 ] && grep -q "at most 7" "$WORK/err" || fail "8 --values: rc $rc $(cat "$WORK/err")"
echo "ok: reseal --values + 2 --predict-args: a 4th state equal to the fallback is sealed once (tpm2_policyor's digest); 8 states: exit 2"

# Secure Boot: shim measures the kernel GRUB's linux command loads into PCR 4 as well, by its
# Authenticode digest. Today's log with that event for the running kernel (pesign's digest of a
# PE standing in for it), a secret sealed to PCRs 4, 8 and 9: the hook, unconfigured, finds the
# running kernel's digest in PCR 4 and gives predict --efi RUNNING=NEW itself. The next boot (the
# next.bin above with the new kernel's event, pesign's digest) and the fallback (fall.bin with the
# running kernel's) unseal; the new kernel with the running kernel's PCR 4 does not.
command -v pesign >/dev/null || fail "pesign is not installed (scripts/install-deps)"
mkdir -p "$WORK/sb/boot" "$WORK/sb.d"
cp /usr/lib/shim/fbx64.efi.signed "$WORK/sb/boot/vmlinuz-$OLD"
RUN_AUTH=$(pesign -h -i "$WORK/sb/boot/vmlinuz-$OLD" | awk '{ print $2 }')
NEW_AUTH=$(pesign -h -i "$WORK/vmlinuz-$NEW" | awk '{ print $2 }')
[ ${#RUN_AUTH} = 64 ] && [ ${#NEW_AUTH} = 64 ] || fail "pesign -h: '$RUN_AUTH' '$NEW_AUTH'"
# UEFI_IMAGE_LOAD_EVENT: location, length, link-time address, device path length 4, End node
printf '\0\0\0\0\0\0\0\0\0\0\1\0\0\0\0\0\0\0\0\0\0\0\0\0\4\0\0\0\0\0\0\0\177\377\4\0' >"$WORK/load-event"
app() { # app IN OUT SHA256: IN with the kernel's EV_EFI_BOOT_SERVICES_APPLICATION appended
	"${MB_FORGE:?}" "$1" "$2" append-event 4 0x80000003 "$WORK/load-event" "sha256=$3" ||
		fail "mb-forge append-event $1"
}
app "$LOG" "$WORK/sb.bin" "$RUN_AUTH"
app "$WORK/next.bin" "$WORK/sb-next.bin" "$NEW_AUTH"
app "$WORK/fall.bin" "$WORK/sb-fall.bin" "$RUN_AUTH"
app "$WORK/next.bin" "$WORK/sb-stale.bin" "$RUN_AUTH"
boot "$WORK/sb.bin"
"$M" seal --pcrs 4,8,9 --log "$WORK/sb.bin" -i "$WORK/secret" -o "$WORK/sb.d/disk.sealed" --force || fail "seal to 4,8,9"
cp "$BOTH" "$WORK/esp/boot/grub/grub.cfg"
MBOOT_LOG=$WORK/sb.bin MBOOT_SEALED_DIR=$WORK/sb.d MBOOT_LUKS_DEVICES='' \
	MBOOT_RUNNING_KERNEL=$WORK/sb/boot/vmlinuz-$OLD MBOOT_FALLBACK_KERNEL=$WORK/absent/boot/vmlinuz-$OLD \
	"$S/hooks/mboot-reseal" "$WORK/vmlinuz-$NEW" "$WORK/initrd.img-$NEW" 2>"$WORK/hook.err" ||
	fail "hook under Secure Boot: $(cat "$WORK/hook.err")"
grep -q "disk.sealed: resealed to this boot, the next one and a fallback" "$WORK/hook.err" ||
	fail "hook under Secure Boot said: $(cat "$WORK/hook.err")"
sb_unseals() { "$M" unseal -i "$WORK/sb.d/disk.sealed" --log "$1" 2>"$WORK/unseal.err" | cmp -s - "$WORK/secret"; }
for b in sb-next sb-fall sb; do
	boot "$WORK/$b.bin"
	sb_unseals "$WORK/$b.bin" || fail "Secure Boot: $b does not unseal: $(cat "$WORK/unseal.err")"
done
boot "$WORK/sb-stale.bin"
sb_unseals "$WORK/sb-stale.bin" && fail "Secure Boot: the new kernel with the running kernel's PCR 4 unseals"
echo "ok: Secure Boot (shim measures the kernel into PCR 4): the unconfigured hook reseals to PCRs 4, 8, 9 of the next boot (pesign's digest of the new kernel) and the fallback"
echo "tpm-grub-fallback: all passed"
