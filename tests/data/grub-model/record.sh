#!/bin/bash
# Records the real GRUB boot the grub-model tests check against (see PROVENANCE):
#   MBOOT=build/mboot tests/data/grub-model/record.sh [OUTDIR]
# 1. grub.cfg made by Debian's own update-grub (grub-mkconfig, /etc/grub.d/00_header and 10_linux
#    of grub-common) for a kernel /boot/vmlinuz-$KVER on the test disk's ESP: tests/vm/lib.sh
#    vm_grub_mkconfig (stand-ins for grub-probe and grub-mkrelpath that describe that disk, a FAT
#    ESP with UUID 6D62-0001; /boot and /etc/default scratch folders bind-mounted in a private
#    mount namespace, so nothing of the host's is read or written). The one edit: linux/initrd
#    become linuxefi/initrdefi (lib.sh says why: Debian's plain linux hands over without the log).
# 2. The ESP config is the stub grub-install writes (search.fs_uuid, set prefix, configfile).
# 3. One boot under QEMU + OVMF + swtpm (lib.sh vm_prepare_debian), GRUB built with its tpm module.
# 4. A second grub.cfg for the kernel version bump (KVER_NEXT), made the same way, not booted.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../../vm/lib.sh
# shellcheck disable=SC1091
. "$here/../../vm/lib.sh"

out=${1:-$here}
mkdir -p "$out"
work=$(mktemp -d /tmp/mb-grub-model.XXXXXX)
trap 'vm_cleanup; rm -rf "$work"' EXIT
vm_need_tools
kernel=$(vm_kernel)
# the version bump: the ABI number one up (6.1.0-57-amd64 -> 6.1.0-58-amd64)
KVER=$(basename "$kernel" | sed 's/^vmlinuz-//')
KVER_NEXT=$(vm_kver_next "$KVER")
# grub.d's 00_header and 10_linux only, as the configs here were first recorded
export VM_GRUB_D="00_header 10_linux"
vm_initramfs "$work/initrd.in" plain
vm_prepare_debian "$work" "$work/initrd.in" "$KVER"
cp "$work/boot-grub.cfg" "$out/boot-grub.cfg"
cp "$work/esp-grub.cfg" "$out/esp-grub.cfg"
vm_grub_mkconfig "$out/boot-grub-next.cfg" "$KVER_NEXT"
vm_boot_dir "$work"
vm_extract "$work"
cp "$work/log.bin" "$out/log.bin"
cp "$work/pcrs.json" "$out/pcrs.json"
vm_say "recorded: $out/log.bin ($(stat -c %s "$out/log.bin") bytes), kernel $(basename "$kernel")"
