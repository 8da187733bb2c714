#!/bin/bash
# Makes boot-grub-both.cfg (see PROVENANCE): the /boot/grub/grub.cfg update-grub writes once the
# next kernel (KVER_NEXT) is installed beside today's (KVER), for the test disk's ESP, as record.sh
# makes its configs (tests/vm/lib.sh vm_grub_mkconfig: Debian's own update-grub limited to
# 00_header and 10_linux, stand-ins for grub-probe and grub-mkrelpath, scratch /boot in a private
# mount namespace, linux/initrd -> linuxefi/initrdefi). Not booted: tests/cli/test-predict-grub-model.sh
# checks what predict --grub-entry makes of it against GRUB's strings built by hand from its text.
#   tests/data/grub-model/record-both.sh [KVER [KVER_NEXT [OUT]]]   (unshare -m, or -rm when not root)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../../vm/lib.sh
# shellcheck disable=SC1091
. "$here/../../vm/lib.sh"
KVER=${1:-6.1.0-57-amd64}
KVER_NEXT=${2:-6.1.0-58-amd64}
out=${3:-$here/boot-grub-both.cfg}
export VM_GRUB_D="00_header 10_linux"
vm_grub_mkconfig "$out" "$KVER" "$KVER_NEXT"
