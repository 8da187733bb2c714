#!/bin/bash
# Run every real-boot scenario by hand:  MBOOT=build/mboot tests/vm/run-all.sh [SCENARIO...]
# Results go to $MB_VM_OUT (default /tmp/mboot-vm-results)/<scenario>/. Exit 1 if any failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ -n "${MBOOT:-}" ] || { echo "usage: MBOOT=build/mboot $0 [baseline|repeat|changes|inguest|luks ...]" >&2; exit 2; }
MBOOT=$(realpath "$MBOOT") || exit 2
export MBOOT
export MB_VM_OUT=${MB_VM_OUT:-/tmp/mboot-vm-results}
[ $# -gt 0 ] || set -- baseline repeat changes inguest luks
failed=()
start=$(date +%s)
for s in "$@"; do
	t0=$(date +%s)
	if "$here/run-scenario.sh" "$s"; then r=passed; else r=FAILED; failed+=("$s"); fi
	printf '=== vm %s: %s in %d s\n' "$s" "$r" $(($(date +%s) - t0))
done
printf '=== vm: %d scenario(s) in %d s, failed: %s\n' $# $(($(date +%s) - start)) "${failed[*]:-none}"
[ ${#failed[@]} -eq 0 ]
