#!/bin/bash
# The measured-boot loop, end to end, on any machine.
#
# With a TPM (/dev/tpmrm0 and a readable firmware log): verify this machine's own boot.
# Without: start a private swtpm, "boot" it by replaying a real recorded log (a GCE VM
# running Ubuntu 21.04, from tests/data/corpus) with `mboot log extend`, show
# `mboot verify` succeeding, then tamper with copies of the log (the kernel command line
# changed; an event removed) and show verify failing and naming what changed. Then the
# secrets: a disk key sealed to this boot, a kernel update predicted and resealed before
# the "reboot" (the swtpm is reset and the predicted boot replayed into it), a tampered
# boot refused with the reason, and a key sealed to a vendor's signed policy. Last, the
# tenant's view (remote attestation): a verifier with no TPM enrolls the machine's TPM (its
# EK certificate checked against the manufacturer's CA: here a private swtpm_localca), then
# trusts a quote of the good boot and refuses one of the tampered boot, naming the event.
# swtpm is stopped at the end, whatever happens.
#
# Usage: demo/demo.sh [BUILD_DIR]   (default: build)   --swtpm forces the swtpm demo
set -u
cd "$(dirname "$0")/.." || exit 2
B=build
FORCE_SWTPM=0
for a in "$@"; do
	case $a in
	--swtpm) FORCE_SWTPM=1 ;;
	*) B=$a ;;
	esac
done
M=$B/mboot
T=$B/tests/tpm/mb-tamper
[ -x "$M" ] && [ -x "$T" ] || { echo "build first: meson setup $B && ninja -C $B"; exit 2; }
SYSLOG=/sys/kernel/security/tpm0/binary_bios_measurements

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; local rc=$?; printf '(exit %d)\n' $rc; return $rc; }
# The same, showing only what did not verify.
run_failures() {
	printf '$ %s\n' "$*"
	"$@" > "$WORK/out" 2>&1
	local rc=$?
	grep -v "  verified  " "$WORK/out"
	printf '(exit %d)\n' $rc
}

if [ $FORCE_SWTPM = 0 ] && [ -e /dev/tpmrm0 ] && [ -r "$SYSLOG" ]; then
	step "This machine has a TPM: its live PCRs, then its own boot log checked against them"
	run "$M" pcrs --bank sha256
	run "$M" verify
	exit $?
fi

export MB_TPM_TESTS=tests/tpm
. tests/tpm/swtpm-env.sh    # private swtpm in a temp dir, stopped on exit
set +u
LOG=tests/data/corpus/go-tpm-tools/ubuntu-2104-no-secure-boot.bin

step "No TPM here: a private swtpm ($SWTPM_DIR/sock) with the banks of the recorded log"
swtpm_start_ek_cert sha1,sha256,sha384 # manufactured: EK certificates, as a real TPM has
swtpm_banks "sha1 sha256 sha384"
echo "TCTI=$TCTI"

step "Boot it: replay a real machine's recorded log into the TPM, event by event"
run "$M" log extend "$LOG" || exit 1

step "The TPM now holds what that machine's TPM held (compare with the recorded truth)"
run "$M" pcrs --bank sha256 --pcr 0-9,14
echo "recorded on the real machine (go-tpm-tools test data):"
jq -r '.banks.sha256 | to_entries[] | "  \(.key): \(.value)"' "$LOG.pcrs.json" | head -5
echo "  ..."

step "Verify the log against the TPM"
run "$M" verify --log "$LOG" --no-userspace-log

step "A policy from this known-good boot (firmware PCR values, GRUB's commands), and the boot judged against it"
run "$M" policy generate --from-log "$LOG" -o "$WORK/policy.json"
printf '$ %s\n' "$M verify --log $LOG --no-userspace-log --policy $WORK/policy.json"
"$M" verify --log "$LOG" --no-userspace-log --policy "$WORK/policy.json" | sed -n '/^Policy/,$p'

step "Tamper 1: the kernel command line in a copy of the log gets 'init=/bin/sh' (same length)"
python3 - "$LOG" "$WORK/cmdline.log" <<'PY'
import sys
data = open(sys.argv[1], 'rb').read()
old = b'console=ttyS0 panic=-1'
new = b'init=/bin/sh  panic=-1'
assert len(old) == len(new) and old in data
open(sys.argv[2], 'wb').write(data.replace(old, new))
PY
strings "$WORK/cmdline.log" | grep "^kernel_cmdline" | cut -c1-120
run_failures "$M" verify --log "$WORK/cmdline.log" --no-userspace-log

step "Tamper 2: one event (the first boot application, PCR 4) removed from a copy"
e=$("$M" log show --json "$LOG" | jq '[.events[] | select(.type == "EV_EFI_BOOT_SERVICES_APPLICATION")][0].index')
"$T" "$LOG" "$WORK/removed.log" remove "$e"
run_failures "$M" verify --log "$WORK/removed.log" --no-userspace-log

step "Tamper 3: an event the TPM never saw inserted into a copy (a GRUB command in PCR 8)"
last=$("$M" log show --json "$LOG" | jq '[.events[] | select(.pcr == 8)][-1].index')
"$T" "$LOG" "$WORK/added.log" add "$last" 8 "grub_cmd: linux /boot/vmlinuz init=/bin/sh"
run_failures "$M" verify --log "$WORK/added.log" --no-userspace-log

reboot() { # reboot LOG: reset the swtpm and replay LOG into it, as a boot would
	swtpm_reset
	"$M" log extend "$1" > /dev/null 2>&1 || exit 1
	echo "(rebooted: $1 replayed into the TPM)"
}
CMDLINE="root=PARTUUID=6443a6ae-e5e9-4df7-9a06-d1329e50f33c ro console=ttyS0 panic=-1"

step "Seal a disk key to this boot: PCR 4 (boot applications), 8 (GRUB commands, kernel command line), 9 (files GRUB read)"
head -c 32 /dev/urandom > "$WORK/disk.key"
run "$M" seal --pcrs 4,8,9 --log "$LOG" -i "$WORK/disk.key" -o "$WORK/disk.sealed"
printf '$ %s\n' "$M unseal -i $WORK/disk.sealed | cmp - $WORK/disk.key"
"$M" unseal -i "$WORK/disk.sealed" --log "$LOG" | cmp - "$WORK/disk.key" && echo "the same 32 bytes: unsealed"

step "A kernel update: predict the next boot from today's log and the new kernel, and reseal before rebooting"
head -c 300000 /dev/urandom > "$WORK/vmlinuz-5.11.0-1007-gcp"   # stands in for the new kernel image
run "$M" reseal -i "$WORK/disk.sealed" --predict-args --log "$LOG" --kernel "$WORK/vmlinuz-5.11.0-1007-gcp" \
	--kernel-path /boot/vmlinuz-5.11.0-1007-gcp
"$M" predict --log "$LOG" --kernel "$WORK/vmlinuz-5.11.0-1007-gcp" --kernel-path /boot/vmlinuz-5.11.0-1007-gcp \
	--write-log "$WORK/next.log" > /dev/null

step "Reboot into the new kernel: the key unseals; so does a fallback to the old one"
reboot "$WORK/next.log"
"$M" unseal -i "$WORK/disk.sealed" --log "$WORK/next.log" | cmp - "$WORK/disk.key" && echo "new kernel: unsealed"
reboot "$LOG"
"$M" unseal -i "$WORK/disk.sealed" --log "$LOG" | cmp - "$WORK/disk.key" && echo "old kernel: unsealed"

step "Someone boots the old kernel with init=/bin/sh: the key stays sealed, and mboot says why"
"$M" predict --log "$LOG" --cmdline "$CMDLINE init=/bin/sh" --write-log "$WORK/evil.log" > /dev/null
reboot "$WORK/evil.log"
printf '$ %s\n' "$M unseal -i $WORK/disk.sealed --log $WORK/evil.log"
"$M" unseal -i "$WORK/disk.sealed" --log "$WORK/evil.log" 2>&1 >/dev/null | cut -c1-200
echo "(exit ${PIPESTATUS[0]})"

step "Signed policies: a key sealed once to a vendor's signing key; each release ships a signature, nothing is resealed"
reboot "$LOG"
openssl genrsa -out "$WORK/vendor.pem" 2048 2>/dev/null
openssl rsa -in "$WORK/vendor.pem" -pubout -out "$WORK/vendor.pub" 2>/dev/null
run "$M" seal --authorized-by "$WORK/vendor.pub" -i "$WORK/disk.key" -o "$WORK/fleet.sealed"
"$M" log replay --json "$LOG" > "$WORK/today.json"
run "$M" policy sign --key "$WORK/vendor.pem" --pcrs 4,8,9 --values "$WORK/today.json" -o "$WORK/release-1006.sig"
"$M" unseal -i "$WORK/fleet.sealed" --signature "$WORK/release-1006.sig" | cmp - "$WORK/disk.key" &&
	echo "release 1006's signature: unsealed"
"$M" log replay --json "$WORK/next.log" > "$WORK/next.json"
run "$M" policy sign --key "$WORK/vendor.pem" --pcrs 4,8,9 --values "$WORK/next.json" -o "$WORK/release-1007.sig"
reboot "$WORK/next.log"
"$M" unseal -i "$WORK/fleet.sealed" --signature "$WORK/release-1006.sig" --signature "$WORK/release-1007.sig" |
	cmp - "$WORK/disk.key" && echo "after the update, release 1007's signature: unsealed (the sealed file never changed)"

step "Remote attestation: the verifier (no TPM, does not trust this machine) enrolls its TPM"
reboot "$LOG"
mkdir -p "$WORK/ek-ca" && cp "$SWTPM_EK_CA" "$SWTPM_EK_ISSUER" "$WORK/ek-ca/"
run "$M" attest enroll --ak-file "$WORK/ak.json" -o "$WORK/request.json"
run "$M" attest challenge -i "$WORK/request.json" --ek-ca "$WORK/ek-ca" -o "$WORK/challenge.json" \
	--state "$WORK/state.json"
run "$M" attest activate --ak-file "$WORK/ak.json" -i "$WORK/challenge.json" -o "$WORK/response.json"
run "$M" attest challenge --state "$WORK/state.json" -i "$WORK/response.json" -o "$WORK/machine.json"

step "Each boot, the verifier sends a nonce; the machine quotes; the verifier judges quote, log and policy"
nonce=$(openssl rand -hex 16)
run "$M" quote --ak-file "$WORK/ak.json" --nonce "$nonce" --log "$LOG" -o "$WORK/evidence.json"
run "$M" attest verify "$WORK/evidence.json" --machine "$WORK/machine.json" --nonce "$nonce" \
	--policy "$WORK/policy.json"
reboot "$WORK/evil.log"
nonce=$(openssl rand -hex 16)
"$M" quote --ak-file "$WORK/ak.json" --nonce "$nonce" --log "$WORK/evil.log" -o "$WORK/evidence-evil.json"
echo "(rebooted with init=/bin/sh and quoted)"
run "$M" attest verify "$WORK/evidence-evil.json" --machine "$WORK/machine.json" --nonce "$nonce" \
	--policy "$WORK/policy.json"

step "Done: swtpm is stopped on exit"
exit 0
