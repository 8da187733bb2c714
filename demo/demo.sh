#!/bin/bash
# The measured-boot loop, end to end, on any machine.
#
# With a TPM (/dev/tpmrm0 and a readable firmware log): verify this machine's own boot.
# Without: start a private swtpm, "boot" it by replaying a real recorded log (a GCE VM
# running Ubuntu 21.04, from tests/data/corpus) with `mboot log extend`, show
# `mboot verify` succeeding, then tamper with copies of the log (the kernel command line
# changed; an event removed) and show verify failing and naming what changed.
# swtpm is stopped at the end, whatever happens.
#
# Usage: demo/demo.sh [BUILD_DIR]   (default: build)   --swtpm forces the swtpm demo
set -u
cd "$(dirname "$0")/.."
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

MB_TPM_TESTS=tests/tpm
. tests/tpm/swtpm-env.sh    # private swtpm in a temp dir, stopped on exit
set +u
LOG=tests/data/corpus/go-tpm-tools/ubuntu-2104-no-secure-boot.bin

step "No TPM here: a private swtpm ($SWTPM_DIR/sock) with the banks of the recorded log"
swtpm_start
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

step "Done: swtpm is stopped on exit"
exit 0
