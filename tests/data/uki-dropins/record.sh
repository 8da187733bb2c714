#!/bin/bash
# Records log.bin and pcrs.json of this folder: one real boot of systemd-boot + a UKI (as the
# uki scenario of tests/vm builds them) with test.raw and test.cred in the UKI's .extra.d/.
# Run from the source tree with MBOOT=build/mboot; writes into OUT (default /tmp/uki-dropins).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../../vm/lib.sh
. "$here/../../vm/lib.sh"
out=${1:-/tmp/uki-dropins}
rm -rf "$out"
mkdir -p "$out"
vm_initramfs "$out/initrd.in" plain
d=$out/boot
vm_prepare_uki "$d" "$VM_CMDLINE_DEFAULT" "$out/initrd.in"
vm_disk_esp "$d/disk.img" "$d/BOOTX64.EFI=/EFI/BOOT/BOOTX64.EFI" \
	"$d/loader.conf=/loader/loader.conf" "$d/uki.efi=$VM_UKI_PATH" \
	"$here/test.raw=$VM_UKI_PATH.extra.d/test.raw" "$here/test.cred=$VM_UKI_PATH.extra.d/test.cred"
vm_boot_dir "$d"
vm_extract "$d"
vm_say "recorded $d/log.bin and $d/pcrs.json"
