#!/bin/bash
# The kernel-update hooks against a swtpm: a real GRUB boot (ima-evm-utils' sample machine) is
# rebuilt in a swtpm and a secret sealed to its PCRs 8 and 9; the Debian postinst.d hook and the
# kernel-install plugin are then run for a new kernel and initrd. After each, the next boot
# (its log extended into the rebooted swtpm) unseals, and so does a fallback to today's boot.
. "${MB_TPM_TESTS:-$(dirname "$0")}/swtpm-env.sh"
M=${MBOOT:?}
S=${MB_SOURCE_ROOT:?}
LOG=$MB_TESTDATA/corpus/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9

started=0
boot() { # boot LOG: the same TPM (its keys survive), rebooted, holding that boot's PCRs
	if [ $started = 0 ]; then
		swtpm_start
		swtpm_banks "sha1 sha256" # allocates and resets: the TPM waits for TPM2_Startup
		started=1
	else
		swtpm_reset
	fi
	"$M" log extend --tcti "$TCTI" "$1" >"$WORK/extend" 2>&1 || fail "log extend $1: $(cat "$WORK/extend")"
}

export MBOOT=$M MBOOT_LOG=$LOG MBOOT_SEALED_DIR=$WORK/sealed.d MBOOT_RESEAL_STRICT=1
export MBOOT_RESEAL=$S/hooks/mboot-reseal
# the copies of the GRUB configs that booted, which the hook keeps when there are none: a temp folder
export MBOOT_GRUB_BOOTED_DIR=$WORK/grub-booted
mkdir -p "$MBOOT_SEALED_DIR"
printf 'disk key\n' >"$WORK/secret"
# A kernel updated in place: the version GRUB boots today, rebuilt (Debian's point releases keep
# the ABI name). Under another name nothing says how GRUB will load it (below).
V=5.7.0-rc2+

for hook in postinst kernel-install; do
	boot "$LOG"
	"$M" seal --pcrs 8,9 --log "$LOG" -i "$WORK/secret" -o "$MBOOT_SEALED_DIR/disk.sealed" --force || fail "seal"
	head -c 100000 /dev/urandom >"$WORK/vmlinuz-$V"
	head -c 50000 /dev/urandom >"$WORK/initrd.img-$V"
	if [ $hook = postinst ]; then
		# Debian's postinst.d hook: the version and the image; the initrd is $MBOOT_BOOT_DIR/initrd.img-VERSION.
		MBOOT_BOOT_DIR=$WORK "$S/hooks/kernel/zzz-mboot-reseal.in" "$V" "$WORK/vmlinuz-$V" 2>"$WORK/hook.err" ||
			fail "$hook: $(cat "$WORK/hook.err")"
	else
		"$S/hooks/kernel/99-zz-mboot-reseal.install.in" add "$V" "$WORK/entry" "$WORK/vmlinuz-$V" "$WORK/initrd.img-$V" \
			2>"$WORK/hook.err" || fail "$hook: $(cat "$WORK/hook.err")"
	fi
	grep -q "resealed to this boot and the next one" "$WORK/hook.err" || fail "$hook said: $(cat "$WORK/hook.err")"
	[ "$(jq -r .policy.kind "$MBOOT_SEALED_DIR/disk.sealed")" = or ] || fail "$hook: not a PolicyOR"

	# The next boot, as the new kernel and initrd will measure themselves (exit 1: PCR 4, which
	# the secret is not sealed to, cannot be predicted on this machine).
	"$M" predict --log "$LOG" --kernel "$WORK/vmlinuz-$V" --initrd "$WORK/initrd.img-$V" --write-log "$WORK/next.bin" \
		--json >"$WORK/next.json"
	[ $? = 1 ] && [ "$(jq -c '.unpredictable | keys' "$WORK/next.json")" = '["4"]' ] || fail "predict: $(jq -c .unpredictable "$WORK/next.json")"
	boot "$WORK/next.bin"
	"$M" unseal -i "$MBOOT_SEALED_DIR/disk.sealed" --log "$WORK/next.bin" | cmp -s - "$WORK/secret" ||
		fail "$hook: the next boot does not unseal"
	boot "$LOG"
	"$M" unseal -i "$MBOOT_SEALED_DIR/disk.sealed" --log "$LOG" | cmp -s - "$WORK/secret" ||
		fail "$hook: a fallback to today's boot does not unseal"
	echo "ok: $hook hook: resealed; the next boot and a fallback to today's both unseal"
done

# A refusal names what changed: the kernel updated in place is "same path, other contents" with
# sha256sum's digest prefixes, not "X → X"; a long command line with one word added shows where
# the two differ, its common start cut.
boot "$LOG"
"$M" seal --pcrs 8,9 --log "$LOG" -i "$WORK/secret" -o "$WORK/kept-log.sealed" --force || fail "seal with the log"
"$M" predict --log "$LOG" --kernel "$WORK/vmlinuz-$V" --cmdline \
	"root=UUID=119f1a79-c391-4e37-905d-3a503284cadb ro quiet splash ima-policy=tcb vt.handoff=7 init=/bin/sh" \
	--write-log "$WORK/other.bin" >/dev/null 2>&1
boot "$WORK/other.bin"
"$M" unseal -i "$WORK/kept-log.sealed" --log "$WORK/other.bin" >/dev/null 2>"$WORK/unseal.err" && fail "another boot unsealed"
old9=$("$M" log show --json --pcr 9 "$LOG" | jq -r '[.events[] | select(.decoded.path? == "/boot/vmlinuz-5.7.0-rc2+")][0].digests.sha256')
new9=$(sha256sum <"$WORK/vmlinuz-$V" | cut -c1-16)
grep -qF "EV_IPL: file /boot/vmlinuz-$V → #$("$M" log show --json --pcr 9 "$LOG" | jq -r '[.events[] | select(.decoded.path? == "/boot/vmlinuz-5.7.0-rc2+")][0].index'): same path, other contents (sha256 ${old9:0:16}… → $new9…)" \
	"$WORK/unseal.err" || fail "same path: $(cat "$WORK/unseal.err")"
grep -q 'PCR 8: changed: #[0-9]* EV_IPL: kernel_cmdline: /boot/vmlinuz-5.7.0-rc2+.signed root=UU\[…[0-9]* same…\]-policy=tcb vt.handoff=7 → #[0-9]* EV_IPL: kernel_cmdline: /boot/vmlinuz-5.7.0-rc2+.signed root=UU\[…[0-9]* same…\]-policy=tcb vt.handoff=7 init=/bin/sh$' \
	"$WORK/unseal.err" || fail "long command line: $(grep 'PCR 8' "$WORK/unseal.err")"
echo "ok: a refusal says 'same path, other contents' with sha256sum's prefixes, and cuts a long common start"

# A kernel under a new name, and no copies of the GRUB configs that booted: GRUB's linux command
# will name a path predict cannot know, so nothing is resealed and the hook says why (it used to
# reseal to today's path, and the next boot needed a recovery key).
boot "$LOG"
"$M" seal --pcrs 8,9 --log "$LOG" -i "$WORK/secret" -o "$MBOOT_SEALED_DIR/disk.sealed" --force || fail "seal"
cp "$MBOOT_SEALED_DIR/disk.sealed" "$WORK/before"
cp "$WORK/vmlinuz-$V" "$WORK/vmlinuz-6.9"
MBOOT_BOOT_DIR=$WORK "$S/hooks/kernel/zzz-mboot-reseal.in" 6.9 "$WORK/vmlinuz-6.9" 2>"$WORK/hook.err" &&
	fail "a renamed kernel: the strict hook succeeded: $(cat "$WORK/hook.err")"
grep -q "initrd.img-6.9 does not exist: predicting without an initrd" "$WORK/hook.err" &&
	grep -q "PCR 8 cannot be predicted: the kernel $WORK/vmlinuz-6.9 is not a file GRUB loads today" "$WORK/hook.err" &&
	grep -q "disk.sealed: NOT resealed" "$WORK/hook.err" || fail "a renamed kernel: $(cat "$WORK/hook.err")"
cmp -s "$WORK/before" "$MBOOT_SEALED_DIR/disk.sealed" || fail "a renamed kernel: the sealed file changed"
echo "ok: a kernel under a new name with no GRUB config to say its path: NOT resealed, PCR 8 named (no initrd: said)"

# A secret sealed to signed policies is left alone: a release ships a signature instead.
openssl genrsa -out "$WORK/rel.pem" 2048 2>/dev/null || fail "openssl genrsa"
openssl rsa -in "$WORK/rel.pem" -pubout -out "$WORK/rel.pub" 2>/dev/null || fail "openssl rsa"
"$M" seal --authorized-by "$WORK/rel.pub" -i "$WORK/secret" -o "$MBOOT_SEALED_DIR/fleet.sealed" || fail "seal --authorized-by"
cp "$MBOOT_SEALED_DIR/fleet.sealed" "$WORK/fleet.before"
"$MBOOT_RESEAL" "$WORK/vmlinuz-$V" "$WORK/initrd.img-$V" 2>"$WORK/hook.err" || fail "hook with a signed-policy secret: $(cat "$WORK/hook.err")"
grep -q "fleet.sealed: sealed to signed policies: nothing to reseal" "$WORK/hook.err" || fail "not said: $(cat "$WORK/hook.err")"
cmp -s "$WORK/fleet.before" "$MBOOT_SEALED_DIR/fleet.sealed" || fail "the signed-policy file changed"
rm "$MBOOT_SEALED_DIR/fleet.sealed"
echo "ok: a secret sealed to signed policies is skipped by the hook (and said so); the others are resealed"

# The documented MBOOT_PREDICT_ARGS: one argument per line, so a command line keeps its blanks.
# The next boot measures kernel_cmdline with exactly "root=/dev/sda1 ro quiet": it unseals.
boot "$LOG"
"$M" seal --pcrs 8,9 --log "$LOG" -i "$WORK/secret" -o "$MBOOT_SEALED_DIR/disk.sealed" --force || fail "seal"
MBOOT_PREDICT_ARGS='--cmdline
root=/dev/sda1 ro quiet' "$MBOOT_RESEAL" "$WORK/vmlinuz-$V" "$WORK/initrd.img-$V" 2>"$WORK/hook.err" ||
	fail "MBOOT_PREDICT_ARGS with --cmdline: $(cat "$WORK/hook.err")"
"$M" predict --log "$LOG" --kernel "$WORK/vmlinuz-$V" --initrd "$WORK/initrd.img-$V" \
	--cmdline "root=/dev/sda1 ro quiet" --write-log "$WORK/next.bin" --json >"$WORK/next.json"
[ $? = 1 ] && [ "$(jq -c '.unpredictable | keys' "$WORK/next.json")" = '["4"]' ] || fail "predict --cmdline: $(jq -c .unpredictable "$WORK/next.json")"
grep -aq 'kernel_cmdline: [^ ]* root=/dev/sda1 ro quiet' "$WORK/next.bin" || fail "the predicted log has no such command line"
boot "$WORK/next.bin"
"$M" unseal -i "$MBOOT_SEALED_DIR/disk.sealed" --log "$WORK/next.bin" | cmp -s - "$WORK/secret" ||
	fail "resealed with --cmdline: the next boot does not unseal"
echo "ok: MBOOT_PREDICT_ARGS one per line (--cmdline, root=/dev/sda1 ro quiet): the next boot unseals"
boot "$LOG"

# Nothing predictable: the hook says so and (strict) fails; the sealed file is left as it was.
cp "$MBOOT_SEALED_DIR/disk.sealed" "$WORK/before"
MBOOT_PREDICT_ARGS='--grub-cfg
/dev/null' "$MBOOT_RESEAL" "$WORK/vmlinuz-$V" 2>"$WORK/hook.err" && fail "unpredictable: the hook succeeded"
cmp -s "$WORK/before" "$MBOOT_SEALED_DIR/disk.sealed" || fail "the sealed file changed"
grep -q "NOT resealed" "$WORK/hook.err" || fail "no warning: $(cat "$WORK/hook.err")"
echo "ok: when the next boot cannot be predicted, nothing is resealed and the hook says so"

# A secret sealed to PCR 4 too: this machine measured the kernel into PCR 4 (shim), which the
# hook's --kernel cannot predict. reseal refuses, naming PCR 4; the hook says NOT resealed.
"$M" seal --pcrs 4,8,9 --log "$LOG" -i "$WORK/secret" -o "$MBOOT_SEALED_DIR/disk.sealed" --force || fail "seal 4,8,9"
cp "$MBOOT_SEALED_DIR/disk.sealed" "$WORK/before"
"$M" reseal -i "$MBOOT_SEALED_DIR/disk.sealed" --tcti "$TCTI" --predict-args --log "$LOG" --kernel "$WORK/vmlinuz-$V" \
	>"$WORK/reseal.out" 2>"$WORK/reseal.err"
rc=$?
[ $rc = 1 ] && grep -q "PCR 4 cannot be predicted" "$WORK/reseal.err" && grep -q "Nothing resealed" "$WORK/reseal.err" &&
	! grep -q "Resealed" "$WORK/reseal.out" || fail "reseal with PCR 4 sealed: rc $rc $(cat "$WORK/reseal.err")"
"$MBOOT_RESEAL" "$WORK/vmlinuz-$V" "$WORK/initrd.img-$V" 2>"$WORK/hook.err" && fail "PCR 4 sealed: the hook succeeded"
grep -q "disk.sealed: NOT resealed" "$WORK/hook.err" && ! grep -q "resealed to this boot" "$WORK/hook.err" ||
	fail "PCR 4 sealed: $(cat "$WORK/hook.err")"
cmp -s "$WORK/before" "$MBOOT_SEALED_DIR/disk.sealed" || fail "PCR 4 sealed: the sealed file changed"
echo "ok: sealed to PCR 4, which a new kernel moves unpredictably here: reseal exits 1 naming PCR 4, the hook says NOT resealed"

# A change that matches nothing in today's log: a systemd-boot machine's log (no GRUB file
# events) and the hook's --kernel. Nothing is resealed, whatever PCRs the secret is sealed to.
SDLOG=$MB_TESTDATA/corpus/tpm2-tools/event-sd-boot-fedora37.bin
"$M" seal --pcrs 8,9 --log "$LOG" -i "$WORK/secret" -o "$MBOOT_SEALED_DIR/disk.sealed" --force || fail "seal 8,9"
cp "$MBOOT_SEALED_DIR/disk.sealed" "$WORK/before"
"$M" reseal -i "$MBOOT_SEALED_DIR/disk.sealed" --tcti "$TCTI" --predict-args --log "$SDLOG" --kernel "$WORK/vmlinuz-$V" \
	>"$WORK/reseal.out" 2>"$WORK/reseal.err"
rc=$?
[ $rc = 1 ] && grep -q -- "--kernel $WORK/vmlinuz-$V matched no event" "$WORK/reseal.err" && grep -q "Nothing resealed" "$WORK/reseal.err" ||
	fail "reseal with an unmatched --kernel: rc $rc $(cat "$WORK/reseal.err")"
MBOOT_LOG=$SDLOG "$MBOOT_RESEAL" "$WORK/vmlinuz-$V" 2>"$WORK/hook.err" && fail "unmatched --kernel: the hook succeeded"
grep -q "disk.sealed: NOT resealed" "$WORK/hook.err" || fail "unmatched --kernel: $(cat "$WORK/hook.err")"
cmp -s "$WORK/before" "$MBOOT_SEALED_DIR/disk.sealed" || fail "unmatched --kernel: the sealed file changed"
echo "ok: --kernel matching no event (systemd-boot log): reseal exits 1 naming --kernel, the hook says NOT resealed"
echo "tpm-hooks: all passed"
