#!/bin/bash
# Records the real GRUB boot the grub-model tests check against (see PROVENANCE):
#   MBOOT=build/mboot tests/data/grub-model/record.sh [OUTDIR]
# 1. grub.cfg made by Debian's own grub-mkconfig scripts (/etc/grub.d/00_header, 10_linux of
#    grub-common) for a kernel /boot/vmlinuz-$KVER on the test disk's ESP: grub-probe and
#    grub-mkrelpath are stand-ins that describe that disk (a FAT ESP, UUID 6D62-0001), and /boot
#    is a scratch folder bind-mounted in a private mount namespace, so nothing of the host's is
#    read or written. The one edit: linux/initrd become linuxefi/initrdefi (tests/vm/lib.sh says
#    why: Debian's plain linux hands over without the event log).
# 2. The ESP config is the stub grub-install writes (search.fs_uuid, set prefix, configfile).
# 3. One boot under QEMU + OVMF + swtpm (tests/vm/lib.sh), GRUB built with its tpm module.
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
VM_GRUB_MODULES="normal configfile echo boot fat part_gpt tpm linuxefi linux search search_fs_uuid gzio test loadenv all_video"
GRUB_CMDLINE="console=ttyS0,115200 loglevel=1 panic=-1 rdinit=/init"

cat >"$work/grub-probe" <<'EOP'
#!/bin/sh
# stand-in for grub-probe: the test disk's ESP, whatever is asked about
t=
prev=
for a in "$@"; do
	case "$a" in --target=*) t=${a#--target=} ;; esac
	[ "$prev" = -t ] && t=$a
	prev=$a
done
case "$t" in
partmap) echo gpt ;; fs) echo fat ;; fs_uuid) echo 6D62-0001 ;; abstraction | hints_string) ;;
compatibility_hint) echo hd0,gpt1 ;; device) echo /dev/vda1 ;; drive) echo '(hd0,gpt1)' ;;
*) exit 1 ;;
esac
EOP
# shellcheck disable=SC2016 # the stand-in's own $1
printf '#!/bin/sh\necho "$1"\n' >"$work/grub-mkrelpath"
chmod +x "$work/grub-probe" "$work/grub-mkrelpath"

# mkconfig KVER OUT: Debian's 00_header + 10_linux for one kernel, as grub-mkconfig runs them
mkconfig() {
	rm -rf "${work:?}/boot"
	mkdir -p "$work/boot"
	: >"$work/boot/vmlinuz-$1"
	: >"$work/boot/initrd.img-$1"
	# shellcheck disable=SC2016 # expanded by the inner sh
	unshare -m sh -c 'mount --bind "$1/boot" /boot && exec env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		grub_probe="$1/grub-probe" grub_mkrelpath="$1/grub-mkrelpath" pkgdatadir=/usr/share/grub \
		GRUB_DEVICE=/dev/vda1 GRUB_DEVICE_UUID=6D62-0001 GRUB_DEVICE_BOOT=/dev/vda1 \
		GRUB_DEVICE_BOOT_UUID=6D62-0001 GRUB_FS=fat GRUB_DISTRIBUTOR=Debian GRUB_DEFAULT=0 \
		GRUB_TIMEOUT=0 GRUB_CMDLINE_LINUX_DEFAULT= GRUB_CMDLINE_LINUX="$2" \
		GRUB_DISABLE_OS_PROBER=true GRUB_DISABLE_RECOVERY=true GRUB_TERMINAL=console \
		sh -c "/etc/grub.d/00_header && /etc/grub.d/10_linux"' sh "$work" "$GRUB_CMDLINE" >"$2.raw" 2>"$work/mkconfig.err" ||
		vm_die "grub.d scripts failed: $(cat "$work/mkconfig.err")"
	sed -e 's/^\([[:blank:]]*\)linux\t/\1linuxefi\t/' -e 's/^\([[:blank:]]*\)initrd\t/\1initrdefi\t/' "$2.raw" >"$2"
	rm -f "$2.raw"
}
vm_need_tools
kernel=$(vm_kernel)
# the version bump: the ABI number one up (6.1.0-57-amd64 -> 6.1.0-58-amd64)
KVER=$(basename "$kernel" | sed 's/^vmlinuz-//')
KVER_NEXT=$(echo "$KVER" | awk -F- '{ $2 = $2 + 1; print }' OFS=-)
mkconfig "$KVER" "$out/boot-grub.cfg"
mkconfig "$KVER_NEXT" "$out/boot-grub-next.cfg"
printf "search.fs_uuid 6D62-0001 root hd0,gpt1 \nset prefix=(\$root)'/boot/grub'\nconfigfile \$prefix/grub.cfg\n" >"$out/esp-grub.cfg"

vm_initramfs "$work/initrd.img" plain
# shellcheck disable=SC2086 # a list of module names
grub-mkimage -O x86_64-efi -p /EFI/BOOT -o "$work/BOOTX64.EFI" $VM_GRUB_MODULES
sectors=$((VM_ESP_MIB * 2048))
truncate -s $(((2048 + sectors + 2048) * 512)) "$work/disk.img"
sfdisk --quiet --no-reread --no-tell-kernel "$work/disk.img" <<EOT >/dev/null
label: gpt
label-id: $VM_DISK_GUID
first-lba: 34
start=2048, size=$sectors, type=$VM_ESP_TYPE, uuid=$VM_ESP_GUID, name="EFI System"
EOT
truncate -s $((sectors * 512)) "$work/esp"
export SOURCE_DATE_EPOCH=$VM_EPOCH
mformat -i "$work/esp" -N "$VM_FAT_SERIAL" -v MBOOTESP -T "$sectors" -h 64 -s 32 -H 2048 ::
mmd -i "$work/esp" ::/EFI ::/EFI/BOOT ::/boot ::/boot/grub
mcopy -i "$work/esp" "$work/BOOTX64.EFI" ::/EFI/BOOT/BOOTX64.EFI
mcopy -i "$work/esp" "$out/esp-grub.cfg" ::/EFI/BOOT/grub.cfg
mcopy -i "$work/esp" "$out/boot-grub.cfg" ::/boot/grub/grub.cfg
mcopy -i "$work/esp" "$kernel" "::/boot/vmlinuz-$KVER"
mcopy -i "$work/esp" "$work/initrd.img" "::/boot/initrd.img-$KVER"
unset SOURCE_DATE_EPOCH
dd if="$work/esp" of="$work/disk.img" bs=512 seek=2048 conv=notrunc status=none
vm_boot_dir "$work"
vm_extract "$work"
cp "$work/log.bin" "$out/log.bin"
cp "$work/pcrs.json" "$out/pcrs.json"
vm_say "recorded: $out/log.bin ($(stat -c %s "$out/log.bin") bytes), kernel $(basename "$kernel")"
