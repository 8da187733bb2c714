#!/bin/bash
# The demo (demo/demo.sh --swtpm) runs to the end, every step says what it should, and
# leaves no swtpm behind.
set -u
ROOT=${MB_SOURCE_ROOT:?}
B=${MB_BUILD_ROOT:?}
command -v swtpm >/dev/null || { echo "SKIP: swtpm not installed"; exit 77; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$ROOT/demo/demo.sh" "$B" --swtpm > "$out" 2>&1 || { cat "$out"; echo "FAIL: demo exited $?"; exit 1; }
dir=$(sed -n 's/.*a private swtpm (\(.*\)\/sock).*/\1/p' "$out")
[ -n "$dir" ] || { echo "FAIL: no swtpm dir in the output"; exit 1; }
[ -e "$dir" ] && { echo "FAIL: $dir left behind"; exit 1; }
pgrep -f "swtpm socket.*$dir" >/dev/null && { echo "FAIL: swtpm left running"; exit 1; }
check() { grep -q -- "$1" "$out" || { cat "$out"; echo "FAIL: demo output lacks: $1"; exit 1; }; }
check "extended 105 events into 3 banks"
check "verified: 33 PCR values match the log"
check "PCR  8 sha256  data-mismatch"
check "event 96 (EV_IPL): its data does not hash to its digest"
check "PCR  4 sha256  mismatch"
check "the value matches without event 103"
check "the same 32 bytes: unsealed"
check "Resealed to .*: the current values or the predicted ones (PolicyOR)"
check "new kernel: unsealed"
check "old kernel: unsealed"
check "^PCR 8: changed: #96 EV_IPL: kernel_cmdline: /boot/vmlinuz-5.11.0-1006-gcp"
check "release 1006's signature: unsealed"
check "after the update, release 1007's signature: unsealed"
check "Enrolled: the machine record is"
check "^trusted: the quote is the enrolled AK's, for this nonce"
check "policy-violated: PCR 8 event 96 \"kernel_cmdline: /boot/vmlinuz-5.11.0-1006-gcp .* init=/bin/sh\""
[ "$(grep -c '^(exit 1)$' "$out")" -eq 5 ] || { echo "FAIL: the three tampered logs, the init=/bin/sh unseal and its attestation must each exit 1"; exit 1; }
echo "ok: demo: boot rebuilt, verified, three tamperings each exit 1 and are named; a key sealed, resealed"
echo "    for a predicted kernel update, unsealed after the reboot and on a fallback, refused (PCR 8"
echo "    named) on an init=/bin/sh boot; signed policies unseal across the update; a remote verifier"
echo "    enrolls the TPM, trusts the good boot's quote and refuses the init=/bin/sh one; swtpm stopped"
