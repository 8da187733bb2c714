#!/bin/bash
# Makes boot-grub-both.cfg (see PROVENANCE): the /boot/grub/grub.cfg update-grub writes once the
# next kernel (KVER_NEXT) is installed beside today's (KVER): Debian's own /etc/grub.d/00_header
# and 10_linux (grub-common 2.06-13+deb12u2) run exactly as record.sh runs them (the same
# grub-probe/grub-mkrelpath stand-ins for the test disk's ESP, the same variables, a scratch /boot
# bind-mounted in a private mount namespace, linux/initrd -> linuxefi/initrdefi), with both
# kernels in /boot. Not booted: tests/cli/test-predict-grub-model.sh checks what predict
# --grub-entry makes of it against GRUB's strings built by hand from its text.
#   tests/data/grub-model/record-both.sh [KVER [KVER_NEXT [OUT]]]   (as root: unshare -m)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
KVER=${1:-6.1.0-57-amd64}
KVER_NEXT=${2:-6.1.0-58-amd64}
out=${3:-$here/boot-grub-both.cfg}
GRUB_CMDLINE="console=ttyS0,115200 loglevel=1 panic=-1 rdinit=/init"
work=$(mktemp -d /tmp/mb-grub-both.XXXXXX)
trap 'rm -rf "$work"' EXIT

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
mkdir -p "$work/boot"
for v in "$KVER" "$KVER_NEXT"; do
	: >"$work/boot/vmlinuz-$v"
	: >"$work/boot/initrd.img-$v"
done
# shellcheck disable=SC2016 # expanded by the inner sh
unshare -m sh -c 'mount --bind "$1/boot" /boot && exec env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
	grub_probe="$1/grub-probe" grub_mkrelpath="$1/grub-mkrelpath" pkgdatadir=/usr/share/grub \
	GRUB_DEVICE=/dev/vda1 GRUB_DEVICE_UUID=6D62-0001 GRUB_DEVICE_BOOT=/dev/vda1 \
	GRUB_DEVICE_BOOT_UUID=6D62-0001 GRUB_FS=fat GRUB_DISTRIBUTOR=Debian GRUB_DEFAULT=0 \
	GRUB_TIMEOUT=0 GRUB_CMDLINE_LINUX_DEFAULT= GRUB_CMDLINE_LINUX="$2" \
	GRUB_DISABLE_OS_PROBER=true GRUB_DISABLE_RECOVERY=true GRUB_TERMINAL=console \
	sh -c "/etc/grub.d/00_header && /etc/grub.d/10_linux"' sh "$work" "$GRUB_CMDLINE" >"$work/raw" 2>"$work/err" || {
	cat "$work/err" >&2
	exit 1
}
sed -e 's/^\([[:blank:]]*\)linux\t/\1linuxefi\t/' -e 's/^\([[:blank:]]*\)initrd\t/\1initrdefi\t/' "$work/raw" >"$out"
