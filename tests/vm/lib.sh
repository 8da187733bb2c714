# shellcheck shell=bash disable=SC2034
# Real measured boot under QEMU: OVMF (PCRs 0-7) -> GRUB 2 with its tpm module (PCRs 8, 9)
# -> a Debian kernel whose initramfs (packed by mboot initramfs pack) prints the firmware event log and the PCRs of every bank
# to the serial console. Everything comes from Debian packages; nothing here needs root.
#
# Sourced by run-scenario.sh. Public functions start with vm_; the caller sets:
#   MBOOT         the mboot binary (required by the scenarios, optional for a plain boot)
#   MB_VM_CACHE   cache folder for the downloaded kernel (default tests/vm/cache)
#   MB_VM_ACCEL   kvm | tcg | auto (default auto: KVM when a probe boot proves it works)
#   MB_VM_TIMEOUT hard limit of one boot in seconds (default 300)

set -euo pipefail

VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MB_VM_CACHE=${MB_VM_CACHE:-$VM_DIR/cache}
MB_VM_ACCEL=${MB_VM_ACCEL:-auto}
MB_VM_TIMEOUT=${MB_VM_TIMEOUT:-300}

# Fixed inputs. PCR 0 depends on the VM shape, PCR 5 on the GPT (disk GUID, partition GUID and
# geometry), PCR 1 on the boot variables OVMF writes into a fresh copy of its variable store.
VM_MACHINE=q35
VM_CPU=${MB_VM_CPU:-qemu64}
VM_MEM=${MB_VM_MEM:-512}
VM_SMP=${MB_VM_SMP:-1}
VM_RTC=2024-01-01T00:00:00
VM_DISK_GUID=6D626F6F-7400-4000-8000-0000000000D1
VM_ESP_GUID=6D626F6F-7400-4000-8000-0000000000E5
VM_ESP_TYPE=C12A7328-F81F-11D2-BA4B-00A0C93EC93B
VM_FAT_SERIAL=6d620001
VM_ESP_MIB=64
# Every file in the ESP and the initramfs gets this timestamp (mtools reads SOURCE_DATE_EPOCH).
VM_EPOCH=1704067200
VM_CMDLINE_DEFAULT="console=ttyS0,115200 quiet loglevel=1 panic=-1 rdinit=/init"
VM_GRUB_MODULES="normal configfile echo boot fat part_gpt tpm linuxefi linux"
OVMF_CODE=${OVMF_CODE:-/usr/share/OVMF/OVMF_CODE_4M.fd}
OVMF_VARS=${OVMF_VARS:-/usr/share/OVMF/OVMF_VARS_4M.fd}
# More QEMU options for the firmware a chain needs (the Secure Boot chain's SMM flash).
VM_QEMU_ARGS=()
# on: the boot's writes to DIR/disk.img are thrown away; off: they are kept (the Debian guest).
VM_DISK_SNAPSHOT=on
# What vm_boot builds the boot's files with (vm_prepare: GRUB chain; vm_prepare_secureboot).
VM_PREPARE=vm_prepare

vm_say() { printf 'vm: %s\n' "$*" >&2; }
vm_die() { printf 'vm: FAIL: %s\n' "$*" >&2; exit 1; }

vm_need_tools() {
	local t missing=()
	for t in qemu-system-x86_64 swtpm grub-mkimage mformat mcopy mmd sfdisk cpio busybox \
		timeout jq base64 apt-get apt-cache dpkg-deb flock ldd sha256sum; do
		command -v "$t" >/dev/null 2>&1 || missing+=("$t")
	done
	[ -r "$OVMF_CODE" ] || missing+=("$OVMF_CODE")
	[ -r "$OVMF_VARS" ] || missing+=("$OVMF_VARS")
	[ -d /usr/lib/grub/x86_64-efi ] || missing+=(/usr/lib/grub/x86_64-efi)
	[ ${#missing[@]} -eq 0 ] || vm_die "missing: ${missing[*]}"
}

# --- kernel -----------------------------------------------------------------------------------

# The linux-image package apt resolves linux-image-amd64 to, e.g. linux-image-6.1.0-57-amd64.
vm_kernel_package() {
	apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | sed -n 1p
}

# Prints the path of a cached vmlinuz, downloading the package once (apt-get download, the only
# network access) and unpacking only its /boot with dpkg-deb.
vm_kernel() {
	local pkg dir deb
	mkdir -p "$MB_VM_CACHE"
	pkg=$(vm_kernel_package)
	if [ -z "$pkg" ]; then
		# No package index: use what an earlier run cached.
		dir=$(ls -d "$MB_VM_CACHE"/linux-image-*/ 2>/dev/null | sort | tail -n 1)
		[ -n "$dir" ] || vm_die "apt-cache knows no linux-image-amd64 and the cache is empty"
		pkg=$(basename "$dir")
	fi
	dir=$MB_VM_CACHE/$pkg
	(
		flock 9
		if ! ls "$dir"/boot/vmlinuz-* >/dev/null 2>&1; then
			vm_say "downloading $pkg into $MB_VM_CACHE"
			mkdir -p "$MB_VM_CACHE/deb"
			(cd "$MB_VM_CACHE/deb" && apt-get -o APT::Sandbox::User=root download "$pkg" >&2) ||
				vm_die "apt-get download $pkg failed"
			deb=$(ls "$MB_VM_CACHE/deb/${pkg}"_*.deb | tail -n 1)
			rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
			dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir.tmp" --wildcards './boot/*' ||
				vm_die "unpacking $deb failed"
			rm -rf "$dir" && mv "$dir.tmp" "$dir"
		fi
	) 9>"$MB_VM_CACHE/.lock"
	ls "$dir"/boot/vmlinuz-* | sed -n 1p
}

# --- initramfs --------------------------------------------------------------------------------

# vm_initramfs OUT [MODE[,MODE...]] [extra-file...]
# A busybox initramfs whose /init reports the firmware log and the PCRs and powers off.
# With "with-mboot" (and "luks", "kupdate", "unseal") it also carries $MBOOT and every library
# ldd names, and runs `mboot log replay --json` on the kernel's log. MODE may list several,
# comma-separated (e.g. "efivars,unseal": the kernel modules of both, one order). Extra files
# land in /extra/ (used to change the initrd bytes without changing its behaviour).
vm_initramfs() {
	local out=$1 modes=${2:-plain} root lib
	local -a kmods=()
	shift 2 || shift $#
	root=$(mktemp -d "${out}.root.XXXXXX")
	mkdir -p "$root"/{bin,dev,proc,sys,tmp,extra}
	if vm_mode_in "$modes" luks; then
		# usr-merged, as mkinitramfs lays out Debian 12's initramfs: the hook's copies land in
		# /usr/lib, where /lib/x86_64-linux-gnu/cryptsetup (libcryptsetup's plugin folder) points.
		mkdir -p "$root/usr/lib" "$root/usr/lib64"
		ln -s usr/lib "$root/lib"
		ln -s usr/lib64 "$root/lib64"
	fi
	cp /bin/busybox "$root/bin/busybox"
	cp "$VM_DIR/guest-init.sh" "$root/init"
	chmod 0755 "$root/init" "$root/bin/busybox"
	if vm_mode_in "$modes" with-mboot luks kupdate unseal; then
		[ -x "${MBOOT:-}" ] || vm_die "MBOOT is not set to an executable"
		cp "$MBOOT" "$root/bin/mboot"
		# Every shared object the binary needs, at the path ldd resolved (the dynamic loader
		# included), so the guest's loader finds them with its default search path.
		# What is dlopen()ed, ldd does not name: mboot loads jansson, libcrypto and zlib at their
		# first use, tpm2-tss at its first TPM command (src/lib/tpm/tss2-dl.c), and tpm2-tss's
		# TCTI loader opens the device TCTI.
		dl=""
		for so in libjansson.so.4 libcrypto.so.3 libz.so.1 libtss2-esys.so.0 libtss2-mu.so.0 \
			libtss2-rc.so.0 libtss2-tctildr.so.0 libtss2-tcti-device.so.0; do
			lib=$(ldconfig -p | sed -n "s/.*$so .*=> //p" | sed -n 1p)
			[ -n "$lib" ] || vm_die "$so not found (scripts/install-deps installs tpm2-tss)"
			dl="$dl $lib"
		done
		# shellcheck disable=SC2086 # dl: a list of paths without spaces
		for lib in $( (ldd "$MBOOT"; for l in $dl; do echo "$l"; ldd "$l"; done) | grep -o '/[^ )]*' | sort -u); do
			mkdir -p "$root$(dirname "$lib")"
			cp -L "$lib" "$root$lib"
			# libmboot.so from the build tree: the binary finds it through its RUNPATH
			# ($ORIGIN), so it goes next to /bin/mboot as well.
			if [ "$(dirname "$lib")" = "$(dirname "$(readlink -f "$MBOOT")")" ]; then
				cp -L "$lib" "$root/bin/"
			fi
		done
	fi
	vm_mode_in "$modes" luks && vm_initramfs_luks "$root"
	vm_mode_in "$modes" kupdate && vm_initramfs_kupdate "$root"
	# unseal: mboot and the second virtio disk's modules; the guest unseals each *.sealed of the
	# host's archive on that disk (the uki and secureboot scenarios: secrets sealed to a predicted boot)
	if vm_mode_in "$modes" unseal; then
		printf 'the uki scenario: unseal what the host sealed\n' >"$root/extra/unseal"
		kmods+=(virtio_pci virtio_blk)
	fi
	# efivars: efivarfs for the guest, which writes the variables /extra/efivars lists (guest-init.sh)
	vm_mode_in "$modes" efivars && kmods+=(efivarfs)
	# ima: the second virtio disk is a FAT file system (vm_ima_disk) the guest mounts and runs
	# files from: IMA's tcb policy measures nothing on the initramfs (tmpfs), but FAT is measured.
	# FAT's default codepage (437) and iocharset (ascii) are modules too.
	if vm_mode_in "$modes" ima; then
		printf 'the inguest scenario: IMA measures what runs from the second disk\n' >"$root/extra/ima"
		kmods+=(virtio_pci virtio_blk vfat nls_cp437 nls_ascii)
	fi
	[ ${#kmods[@]} -eq 0 ] || vm_kernel_modules "$root/lib/modules/mboot-vm" "${kmods[@]}"
	for f in "$@"; do cp "$f" "$root/extra/"; done
	# Packed by mboot itself (deterministic: sorted, owner 0, fixed mtime and inode numbers);
	# modes made independent of the umask.
	chmod -R u=rwX,go=rX "$root"
	"$MBOOT" initramfs pack "$root" -o "$out" --force --compress none --mtime "$VM_EPOCH" >/dev/null ||
		vm_die "mboot initramfs pack failed"
	rm -rf "$root"
}

# vm_ima_disk OUT FILES: the inguest scenario's second disk, a FAT file system without a partition
# table (fixed serial, SOURCE_DATE_EPOCH): known.sh, a shell script the guest runs before its
# first IMA snapshot (in the policy generated from that list), and unknown/true, a copy of
# the static busybox (the applet `true` by its name) the guest runs after it: the unknown
# binary. The two files are also left in the folder FILES.
vm_ima_disk() {
	local out=$1 d=$2
	rm -rf "$d" && mkdir -p "$d"
	printf '#!/bin/sh\necho "known.sh ran"\n' >"$d/known.sh"
	cp /bin/busybox "$d/true"
	chmod 0755 "$d/known.sh" "$d/true"
	rm -f "$out"
	truncate -s 4M "$out"
	export SOURCE_DATE_EPOCH=$VM_EPOCH
	mformat -i "$out" -N 6d620010 -v MBOOTIMA -T 8192 -h 64 -s 32 :: || vm_die "mformat failed"
	mmd -i "$out" ::/unknown
	mcopy -i "$out" "$d/known.sh" ::/known.sh
	mcopy -i "$out" "$d/true" ::/unknown/true
	unset SOURCE_DATE_EPOCH
}

# vm_mode_in MODES NAME...: true when the comma-separated list MODES (vm_initramfs) names one of NAME.
vm_mode_in() {
	local m
	for m in "${@:2}"; do
		case ",$1," in *",$m,"*) return 0 ;; esac
	done
	return 1
}

# vm_kernel_modules DEST MODULE...: the kernel's MODULEs and every module they depend on (their
# .modinfo "depends=" and "softdep=pre:", recursively), from the cached linux-image package, into DEST, with
# DEST/order listing them dependencies first, for insmod. The package ships no modules.dep
# (depmod makes it at install), so the dependencies are read here.
vm_kernel_modules() {
	local dest=$1 kernel dir pkg deb mods m
	shift
	kernel=$(vm_kernel)
	dir=$(dirname "$(dirname "$kernel")")
	pkg=$(basename "$dir")
	mods=$dir/modules-3 # -3: with fs/efivarfs, fs/fat, fs/nls (a folder of another name is an older unpacking)
	(
		flock 9
		if [ ! -d "$mods" ]; then
			deb=$(ls "$MB_VM_CACHE/deb/${pkg}"_*.deb 2>/dev/null | tail -n 1)
			[ -n "$deb" ] || vm_die "the package of $pkg is not in $MB_VM_CACHE/deb (delete $dir to download it again)"
			rm -rf "$mods.tmp" && mkdir -p "$mods.tmp"
			dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$mods.tmp" --wildcards './lib/modules/*/modules.order' \
				'./lib/modules/*/kernel/crypto/*' './lib/modules/*/kernel/drivers/virtio/*' \
				'./lib/modules/*/kernel/drivers/block/*' './lib/modules/*/kernel/drivers/md/*' \
				'./lib/modules/*/kernel/fs/efivarfs/*' './lib/modules/*/kernel/fs/fat/*' \
				'./lib/modules/*/kernel/fs/nls/*' ||
				vm_die "unpacking the modules of $deb failed"
			mv "$mods.tmp" "$mods"
		fi
	) 9>"$MB_VM_CACHE/.lock"
	mods=$(ls -d "$mods"/lib/modules/*/ | sed -n 1p)
	mkdir -p "$dest"
	: >"$dest/order"
	vm_module_add() {
		local name=$1 path dep
		grep -qx "${name//-/_}.ko" "$dest/order.names" 2>/dev/null && return 0
		path=$(awk -v n="$name" '{ b = $0; sub(/.*\//, "", b); sub(/\.ko$/, "", b); gsub(/-/, "_", b);
			m = n; gsub(/-/, "_", m); if (b == m) { print; exit } }' "$mods/modules.order")
		[ -n "$path" ] && [ -f "$mods/$path" ] || vm_die "kernel module $name is not in the unpacked package ($path)"
		# depends= are hard dependencies; "softdep=pre: ..." are what modprobe loads first (xts
		# needs ecb, and says so only there).
		# Into a file, not /dev/stdout: objcopy replaces its output by rename, and with its
		# stdout closed it turns the /dev/stdout link into a regular file (seen on this machine).
		objcopy -O binary --only-section=.modinfo "$mods/$path" "$dest/.modinfo" ||
			vm_die "objcopy cannot read the .modinfo of $path"
		for dep in $(tr '\0' '\n' <"$dest/.modinfo" |
			sed -n 's/^depends=//p; s/^softdep=pre: *\([^:]*\)$/\1/p' | tr ', ' '  '); do
			vm_module_add "$dep"
		done
		cp "$mods/$path" "$dest/"
		basename "$path" >>"$dest/order"
		echo "${name//-/_}.ko" >>"$dest/order.names"
	}
	for m in "$@"; do vm_module_add "$m"; done
	rm -f "$dest/order.names" "$dest/.modinfo"
}

# vm_initramfs_luks ROOT: what the luks scenario's guest adds to a with-mboot initramfs: what
# mboot's initramfs-tools hook copies (run as mkinitramfs runs it, on mboot as `meson install`
# lays it out), cryptsetup (as cryptsetup-initramfs copies it), the kernel modules for the second
# virtio disk and dm-crypt, and a stand-in for cryptsetup's askpass (nobody types at the console:
# it says it was asked and gives no passphrase).
vm_initramfs_luks() {
	local root=$1 build inst hf
	build=${MB_BUILD_ROOT:-$(dirname "$(readlink -f "$MBOOT")")}
	[ -f "$build/build.ninja" ] || vm_die "the luks scenario needs the build folder of $MBOOT (set MB_BUILD_ROOT)"
	inst=$(mktemp -d "${root}.inst.XXXXXX")
	meson install -C "$build" --no-rebuild --quiet --destdir "$inst" >"$inst.log" 2>&1 ||
		vm_die "meson install --destdir failed: $(tail -n 5 "$inst.log")"
	hf=/usr/share/initramfs-tools/hook-functions
	[ -r "$hf" ] || hf=$VM_DIR/../hook-functions-shim.sh
	local hook
	hook=$(find "$inst" -path '*/share/initramfs-tools/hooks/mboot' | sed -n 1p)
	[ -n "$hook" ] || vm_die "meson install put no initramfs-tools hook (built without LUKS support?)"
	env DESTDIR="$root" verbose=n MBOOT_HOOK_ROOT="$inst" MBOOT_HOOK_FUNCTIONS="$hf" sh "$hook" >&2 ||
		vm_die "the initramfs-tools hook failed"
	(
		export DESTDIR=$root verbose=n
		# shellcheck source=/dev/null # initramfs-tools' hook-functions or the shim
		. "$hf"
		copy_exec "$(command -v cryptsetup)" /sbin/cryptsetup || exit 1
	) || vm_die "copying cryptsetup failed"
	# A sanitized plugin in an uninstrumented cryptsetup needs the sanitizer's runtime loaded
	# first (the hook has copied it: ldd names it): the guest preloads what this file names.
	ldd "$(find "$root" -name libcryptsetup-token-mboot.so | sed -n 1p)" |
		sed -n 's/^[[:blank:]]*\(libasan\.so[^ ]*\) => \([^ ]*\).*/\2/p' >"$root/extra/luks-preload"
	rm -rf "$inst" "$inst.log"
	mkdir -p "$root/lib/cryptsetup"
	cat >"$root/lib/cryptsetup/askpass" <<-'EOF'
		#!/bin/sh
		echo "MBVM-ASKPASS $1" >&2
	EOF
	chmod 0755 "$root/lib/cryptsetup/askpass"
	vm_kernel_modules "$root/lib/modules/mboot-vm" virtio_pci virtio_blk dm-crypt xts algif_skcipher
}

# vm_initramfs_kupdate ROOT: what the kernel-update scenario's guest adds to a with-mboot
# initramfs: mboot's kernel hooks at the paths meson installs them to with a prefix of /usr
# (/usr/lib/mboot/mboot-reseal, /etc/kernel/postinst.d/zzz-mboot-reseal; the hook with its
# @PKGLIBDIR@ made /usr/lib/mboot, as configure_file does), and the kernel
# modules for the second virtio disk, which carries the host's files in (a tar archive).
vm_initramfs_kupdate() {
	local root=$1 hooks=$VM_DIR/../../hooks
	install -D -m 0755 "$hooks/mboot-reseal" "$root/usr/lib/mboot/mboot-reseal"
	mkdir -p "$root/etc/kernel/postinst.d"
	sed 's|@PKGLIBDIR@|/usr/lib/mboot|g' "$hooks/kernel/zzz-mboot-reseal.in" >"$root/etc/kernel/postinst.d/zzz-mboot-reseal"
	chmod 0755 "$root/etc/kernel/postinst.d/zzz-mboot-reseal"
	printf 'the kernel-update scenario\n' >"$root/extra/kupdate"
	vm_kernel_modules "$root/lib/modules/mboot-vm" virtio_pci virtio_blk
}

# --- GRUB and the disk ------------------------------------------------------------------------

vm_grub_image() {
	local out=$1
	# No embedded config: the prefix makes GRUB read /EFI/BOOT/grub.cfg from the partition it
	# was started from, so the config is a file GRUB measures into PCR 9 like any other.
	# shellcheck disable=SC2086
	grub-mkimage -O x86_64-efi -p /EFI/BOOT -o "$out" $VM_GRUB_MODULES
}

# vm_grub_cfg OUT CMDLINE
vm_grub_cfg() {
	# Debian's plain linux/initrd take a legacy path that leaves the kernel without the event
	# log; linuxefi/initrdefi hand over through the EFI stub, which passes the log on.
	cat >"$1" <<EOF
set timeout=0
echo mboot-vm: loading kernel
linuxefi /vmlinuz $2
initrdefi /initrd.img
boot
EOF
}

# vm_disk OUT GRUB_EFI GRUB_CFG VMLINUZ INITRD: the ESP of the GRUB chain.
vm_disk() {
	vm_disk_esp "$1" "$2=/EFI/BOOT/BOOTX64.EFI" "$3=/EFI/BOOT/grub.cfg" "$4=/vmlinuz" "$5=/initrd.img"
}

# vm_disk_esp OUT SOURCE=/ESP/PATH...
# A GPT disk with one EFI system partition, built as a regular file: sfdisk writes the table
# with fixed GUIDs, mtools formats and fills the FAT at the partition's offset, making the
# folders each ESP path needs, in the order given.
vm_disk_esp() {
	local out=$1 esp start=2048 sectors pair src dst d rest part made=" " bytes=0 mib=$VM_ESP_MIB
	shift
	# VM_ESP_MIB, or more when the files need it (an ASan build's initramfs is over 50 MB): the
	# size is in the GPT that PCR 5 measures, so it only grows when it must
	for pair in "$@"; do bytes=$((bytes + $(stat -c %s "${pair%=*}"))); done
	[ $(((bytes >> 20) + 8)) -le "$mib" ] || mib=$(((bytes >> 20) + 16))
	sectors=$((mib * 2048))
	esp=$out.esp
	rm -f "$out" "$esp"
	truncate -s $(((start + sectors + 2048) * 512)) "$out"
	sfdisk --quiet --no-reread --no-tell-kernel "$out" <<EOF >/dev/null
label: gpt
label-id: $VM_DISK_GUID
first-lba: 34
start=$start, size=$sectors, type=$VM_ESP_TYPE, uuid=$VM_ESP_GUID, name="EFI System"
EOF
	truncate -s $((sectors * 512)) "$esp"
	export SOURCE_DATE_EPOCH=$VM_EPOCH
	mformat -i "$esp" -N "$VM_FAT_SERIAL" -v MBOOTESP -T "$sectors" -h 64 -s 32 -H "$start" :: ||
		vm_die "mformat failed"
	for pair in "$@"; do
		src=${pair%=*} dst=${pair##*=} d=
		rest=${dst#/}
		while [[ $rest == */* ]]; do
			part=${rest%%/*} rest=${rest#*/} d=$d/$part
			[[ $made == *" $d "* ]] || { mmd -i "$esp" "::$d"; made="$made$d "; }
		done
		mcopy -i "$esp" "$src" "::$dst"
	done
	unset SOURCE_DATE_EPOCH
	dd if="$esp" of="$out" bs=512 seek=$start conv=notrunc status=none
	rm -f "$esp"
}

# vm_prepare DIR CMDLINE INITRD: GRUB image, grub.cfg and disk image in DIR.
vm_prepare() {
	local dir=$1 cmdline=$2 initrd=$3 kernel
	mkdir -p "$dir"
	kernel=$(vm_kernel)
	vm_grub_image "$dir/BOOTX64.EFI"
	vm_grub_cfg "$dir/grub.cfg" "$cmdline"
	vm_disk "$dir/disk.img" "$dir/BOOTX64.EFI" "$dir/grub.cfg" "$kernel" "$initrd"
	cp "$initrd" "$dir/initrd.img"
	printf '%s\n' "$cmdline" >"$dir/cmdline"
	printf '%s\n' "$(basename "$(dirname "$(dirname "$kernel")")")" >"$dir/kernel-package"
}

# --- A Debian-shaped GRUB boot (the kernel-update scenario, tests/data/grub-model/record.sh) ----
# GRUB's image carries what Debian's generated grub.cfg uses; its prefix stays /EFI/BOOT, where
# the ESP's stub config sends GRUB on to /boot/grub/grub.cfg as grub-install's does.
VM_DEBIAN_GRUB_MODULES="$VM_GRUB_MODULES search search_fs_uuid gzio test loadenv all_video"
# The ESP's file system UUID as grub-probe and blkid print it (the FAT serial VM_FAT_SERIAL).
VM_ESP_UUID=6D62-0001
# GRUB_CMDLINE_LINUX of the test machine's /etc/default/grub.
VM_GRUB_CMDLINE="console=ttyS0,115200 loglevel=1 panic=-1 rdinit=/init"
# /etc/grub.d scripts that run (grub-mkconfig runs the executable ones): all of grub-common's by
# default; record.sh keeps to 00_header and 10_linux, as the recorded configs were made.
VM_GRUB_D=${VM_GRUB_D:-}
# GRUB_TIMEOUT of the test machine's /etc/default/grub: 0 boots the default entry at once (what
# record.sh recorded); the kernel-update scenario sets Debian's 5, so that its menu shows with a
# countdown and boot 3 can pick an entry from it (VM_KEYS).
VM_GRUB_TIMEOUT=${VM_GRUB_TIMEOUT:-0}

# vm_kver_next KVER: the next Debian kernel ABI, 6.1.0-57-amd64 -> 6.1.0-58-amd64.
vm_kver_next() {
	awk -F- '{ $2 = $2 + 1; print }' OFS=- <<<"$1"
}

# vm_grub_esp_stub OUT: the ESP's grub.cfg as Debian's grub-install writes it.
vm_grub_esp_stub() {
	printf "search.fs_uuid %s root hd0,gpt1 \nset prefix=(\$root)'/boot/grub'\nconfigfile \$prefix/grub.cfg\n" \
		"$VM_ESP_UUID" >"$1"
}

# vm_grub_mkconfig OUT KVER...: /boot/grub/grub.cfg as Debian's update-grub writes it on the test
# machine with the kernels /boot/vmlinuz-KVER (and their initrd.img-KVER) installed. The real
# update-grub -> grub-mkconfig -> /etc/grub.d of grub-common run in a private mount namespace
# (unshare -m; -r too when not root) where /boot is a scratch folder holding empty kernel files,
# /etc/default holds the test machine's grub file (a serial console, so GRUB_TERMINAL=console
# as Debian's file suggests: no gfxterm, whose font this ESP lacks), and grub-probe and grub-mkrelpath are
# stand-ins that describe the test disk's ESP (/dev/vda1, FAT, UUID VM_ESP_UUID, GPT): nothing
# of the host's is read or written. The one edit: linux/initrd -> linuxefi/initrdefi (see
# vm_grub_cfg: Debian's plain linux hands the kernel no event log).
vm_grub_mkconfig() {
	local out=$1 w k s ns=-m
	shift
	w=$(mktemp -d "${out}.mkconfig.XXXXXX")
	mkdir -p "$w/boot/grub" "$w/default" "$w/bin"
	for k in "$@"; do : >"$w/boot/vmlinuz-$k" && : >"$w/boot/initrd.img-$k"; done
	cat >"$w/bin/grub-probe" <<-EOP
		#!/bin/sh
		# stand-in for grub-probe: the test disk's ESP, whatever is asked about
		t=
		prev=
		for a in "\$@"; do
			case "\$a" in --target=*) t=\${a#--target=} ;; esac
			[ "\$prev" = -t ] && t=\$a
			prev=\$a
		done
		case "\$t" in
		partmap) echo gpt ;; fs) echo fat ;; fs_uuid) echo $VM_ESP_UUID ;; abstraction | hints_string) ;;
		compatibility_hint) echo hd0,gpt1 ;; device) echo /dev/vda1 ;; drive) echo '(hd0,gpt1)' ;;
		*) exit 1 ;;
		esac
	EOP
	# shellcheck disable=SC2016 # the stand-in's own $1
	printf '#!/bin/sh\necho "$1"\n' >"$w/bin/grub-mkrelpath"
	chmod +x "$w/bin/grub-probe" "$w/bin/grub-mkrelpath"
	cat >"$w/default/grub" <<-EOF
		GRUB_DEFAULT=0
		GRUB_TIMEOUT=$VM_GRUB_TIMEOUT
		GRUB_TIMEOUT_STYLE=menu
		GRUB_DISTRIBUTOR=Debian
		GRUB_CMDLINE_LINUX_DEFAULT=""
		GRUB_CMDLINE_LINUX="$VM_GRUB_CMDLINE"
		GRUB_DISABLE_OS_PROBER=true
		GRUB_DISABLE_RECOVERY=true
		GRUB_TERMINAL=console
	EOF
	mkdir -p "$w/grub.d"
	if [ -n "$VM_GRUB_D" ]; then
		for s in $VM_GRUB_D; do cp -p "/etc/grub.d/$s" "$w/grub.d/"; done
	else
		cp -p /etc/grub.d/* "$w/grub.d/"
	fi
	[ "$(id -u)" = 0 ] || ns=-rm
	# shellcheck disable=SC2016 # expanded by the inner sh
	unshare "$ns" sh -c 'mount --bind "$1/boot" /boot && mount --bind "$1/default" /etc/default &&
		mount --bind "$1/grub.d" /etc/grub.d && mount --bind "$1/bin/grub-probe" /usr/sbin/grub-probe &&
		mount --bind "$1/bin/grub-mkrelpath" /usr/bin/grub-mkrelpath &&
		exec env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin update-grub' sh "$w" >"$w/mkconfig.log" 2>&1 ||
		vm_die "update-grub failed: $(cat "$w/mkconfig.log")"
	sed -e 's/^\([[:blank:]]*\)linux\t/\1linuxefi\t/' -e 's/^\([[:blank:]]*\)initrd\t/\1initrdefi\t/' \
		"$w/boot/grub/grub.cfg" >"$out"
	rm -rf "$w"
}

# vm_prepare_debian DIR INITRD KVER: the Debian-shaped GRUB boot in DIR: GRUB (BOOTX64.EFI), the
# ESP's stub config (esp-grub.cfg), update-grub's config for kernel KVER (boot-grub.cfg), and
# disk.img with them at /EFI/BOOT/ and /boot/grub/, the cached kernel as /boot/vmlinuz-KVER and
# INITRD as /boot/initrd.img-KVER (a copy in DIR/initrd.img).
vm_prepare_debian() {
	local dir=$1 initrd=$2 kver=$3 kernel
	mkdir -p "$dir"
	kernel=$(vm_kernel)
	VM_GRUB_MODULES=$VM_DEBIAN_GRUB_MODULES vm_grub_image "$dir/BOOTX64.EFI"
	vm_grub_esp_stub "$dir/esp-grub.cfg"
	vm_grub_mkconfig "$dir/boot-grub.cfg" "$kver"
	cp "$initrd" "$dir/initrd.img"
	vm_disk_esp "$dir/disk.img" "$dir/BOOTX64.EFI=/EFI/BOOT/BOOTX64.EFI" "$dir/esp-grub.cfg=/EFI/BOOT/grub.cfg" \
		"$dir/boot-grub.cfg=/boot/grub/grub.cfg" "$kernel=/boot/vmlinuz-$kver" "$dir/initrd.img=/boot/initrd.img-$kver"
	printf '%s\n' "$(basename "$(dirname "$(dirname "$kernel")")")" >"$dir/kernel-package"
}

# vm_esp_put DISK SOURCE=/ESP/PATH...: write files into the ESP of a vm_disk_esp disk in place
# (overwriting; the folders must exist), as a package or update-grub writes /boot.
vm_esp_put() {
	local disk=$1 pair
	shift
	export SOURCE_DATE_EPOCH=$VM_EPOCH
	for pair in "$@"; do
		mcopy -o -i "$disk@@$((2048 * 512))" "${pair%=*}" "::${pair##*=}" || vm_die "mcopy into $disk failed"
	done
	unset SOURCE_DATE_EPOCH
}

# --- one boot ---------------------------------------------------------------------------------

VM_SWTPM_PID=
VM_QEMU_PID=
vm_cleanup() {
	[ -z "$VM_QEMU_PID" ] || kill "$VM_QEMU_PID" 2>/dev/null || true
	[ -z "$VM_SWTPM_PID" ] || kill "$VM_SWTPM_PID" 2>/dev/null || true
	[ -z "$VM_QEMU_PID" ] || wait "$VM_QEMU_PID" 2>/dev/null || true
	[ -z "$VM_SWTPM_PID" ] || wait "$VM_SWTPM_PID" 2>/dev/null || true
	VM_QEMU_PID='' VM_SWTPM_PID=''
}
trap vm_cleanup EXIT
trap 'vm_cleanup; exit 130' INT TERM

# vm_ek_ca DIR: a private swtpm_localca (its CA in DIR/ca, never /var/lib) and the
# swtpm_setup configuration that manufactures a TPM with EK certificates signed by it (RSA 2048
# at 0x01c00002, ECC P-384 at 0x01c00016) and all four PCR banks, as the boots without it have.
# DIR/ca-certs/ gets the root and the issuing CA certificate once the first TPM is made.
vm_ek_ca() {
	local d=$1
	mkdir -p "$d/ca" "$d/ca-certs"
	cat >"$d/localca.conf" <<-EOC
		statedir = $d/ca
		signingkey = $d/ca/signkey.pem
		issuercert = $d/ca/issuercert.pem
		certserial = $d/ca/certserial
	EOC
	printf -- '--platform-manufacturer mboot-test\n--platform-version 2.1\n--platform-model QEMU\n' >"$d/localca.options"
	cat >"$d/setup.conf" <<-EOC
		create_certs_tool = /usr/bin/swtpm_localca
		create_certs_tool_config = $d/localca.conf
		create_certs_tool_options = $d/localca.options
	EOC
}

# vm_qemu DIR ACCEL LIMIT [FIRST_OUTPUT_LIMIT]: boot DIR/disk.img once with a fresh TPM and
# variable store. With VM_EK_CA set (a vm_ek_ca folder) the TPM is manufactured with EK
# certificates first; with VM_ATTEST_SOCK set the guest gets a second serial line (ttyS1),
# a Unix socket there that the host's side of a conversation connects to. Returns 0 when the guest printed its end marker, 1 otherwise; 2 when KVM hit
# an emulation failure (the guest is then stuck, so it is killed at once instead of waiting
# for LIMIT); 3 when nothing reached the serial console within FIRST_OUTPUT_LIMIT seconds.
vm_qemu() {
	local dir=$1 accel=$2 limit=$3 first=${4:-0} tpm t0 rc=1 waited=0
	if [ -n "${VM_TPM_STATE:-}" ]; then
		tpm=$VM_TPM_STATE
		mkdir -p "$tpm"
	else
		tpm=$(mktemp -d /tmp/mb-vm-tpm.XXXXXX)
	fi
	cp "$OVMF_VARS" "$dir/vars.fd"
	rm -f "$dir/serial.raw" "$dir/qemu.err"
	if [ -n "${VM_EK_CA:-}" ]; then
		swtpm_setup --tpm2 --tpmstate "$tpm" --config "$VM_EK_CA/setup.conf" --create-ek-cert \
			--pcr-banks sha1,sha256,sha384,sha512 >"$dir/swtpm-setup.log" 2>&1 ||
			{ cat "$dir/swtpm-setup.log" >&2; vm_die "swtpm_setup could not make a TPM with EK certificates"; }
		cp "$VM_EK_CA/ca/swtpm-localca-rootca-cert.pem" "$VM_EK_CA/ca/issuercert.pem" "$VM_EK_CA/ca-certs/"
	fi
	local -a attest_args=() disk_args=()
	if [ -n "${VM_EXTRA_DISK:-}" ]; then
		# shellcheck disable=SC2054 # QEMU's option values have commas
		disk_args=(-drive if=none,id=disk1,format=raw,file="$VM_EXTRA_DISK"
			-device virtio-blk-pci,drive=disk1)
	fi
	if [ -n "${VM_ATTEST_SOCK:-}" ]; then
		rm -f "$VM_ATTEST_SOCK"
		attest_args=(-serial "unix:$VM_ATTEST_SOCK,server=on,wait=off")
	fi
	swtpm socket --tpm2 --tpmstate dir="$tpm" --ctrl type=unixio,path="$tpm/ctrl.sock" \
		--flags not-need-init,startup-clear --log file="$dir/swtpm.log" &
	VM_SWTPM_PID=$!
	while [ ! -S "$tpm/ctrl.sock" ]; do
		kill -0 "$VM_SWTPM_PID" 2>/dev/null || { vm_cleanup; vm_die "swtpm did not start"; }
		sleep 0.1
	done
	local -a accel_args
	if [ "$accel" = kvm ]; then accel_args=(-accel kvm); else accel_args=(-accel tcg); fi
	# With VM_KEYS: a monitor on a Unix socket, for vm_keys_step's sendkey.
	local monitor=none step=0 off=0
	rm -f "$dir/monitor.sock" "$dir/keys.log"
	[ ${#VM_KEYS[@]} -eq 0 ] || monitor=unix:$dir/monitor.sock,server=on,wait=off
	t0=$(date +%s.%N)
	timeout -k 5 "$limit" qemu-system-x86_64 \
		-machine "$VM_MACHINE" "${accel_args[@]}" -cpu "$VM_CPU" -m "$VM_MEM" -smp "$VM_SMP" \
		-rtc base="$VM_RTC",clock=vm \
		"${VM_QEMU_ARGS[@]}" \
		-drive if=pflash,format=raw,unit=0,readonly=on,file="$OVMF_CODE" \
		-drive if=pflash,format=raw,unit=1,file="$dir/vars.fd" \
		-drive if=none,id=disk0,format=raw,file="$dir/disk.img,snapshot=$VM_DISK_SNAPSHOT" \
		-device virtio-blk-pci,drive=disk0,bootindex=1 "${disk_args[@]}" \
		-chardev socket,id=chrtpm,path="$tpm/ctrl.sock" \
		-tpmdev emulator,id=tpm0,chardev=chrtpm -device tpm-crb,tpmdev=tpm0 \
		-nic none -vga none -display none -monitor "$monitor" -nodefaults \
		-serial file:"$dir/serial.raw" "${attest_args[@]}" -no-reboot \
		2>"$dir/qemu.err" &
	VM_QEMU_PID=$!
	# Poll: stop early on the end marker or on a KVM emulation failure (QEMU does not exit
	# on its own then).
	while kill -0 "$VM_QEMU_PID" 2>/dev/null; do
		if grep -q 'KVM internal error\|emulation failure' "$dir/qemu.err" 2>/dev/null; then
			rc=2
			break
		fi
		if [ "$first" -gt 0 ] && [ $((waited / 2)) -ge "$first" ] && [ ! -s "$dir/serial.raw" ]; then
			rc=3
			break
		fi
		[ $step -ge ${#VM_KEYS[@]} ] || vm_keys_step "$dir"
		sleep 0.5
		waited=$((waited + 1))
	done
	if [ $rc -ge 2 ]; then
		kill "$VM_QEMU_PID" 2>/dev/null || true
	fi
	wait "$VM_QEMU_PID" 2>/dev/null || true
	VM_QEMU_PID=
	kill "$VM_SWTPM_PID" 2>/dev/null || true
	wait "$VM_SWTPM_PID" 2>/dev/null || true
	VM_SWTPM_PID=
	[ -n "${VM_TPM_STATE:-}" ] || rm -rf "$tpm"
	rm -f "$tpm/ctrl.sock" "$dir/monitor.sock"
	awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f\n", b - a }' >"$dir/seconds"
	tr -d '\r' <"$dir/serial.raw" >"$dir/serial.log" 2>/dev/null || : >"$dir/serial.log"
	[ $rc -ge 2 ] && return $rc
	if [ $step -lt ${#VM_KEYS[@]} ]; then
		local typed
		typed=$(cat "$dir/keys.log" 2>/dev/null | tr '\n' ' ')
		printf 'the console never showed "%s" (key step %d of %d; before it: %s)\n' "${VM_KEYS[$step]}" \
			$((step / 2 + 1)) $((${#VM_KEYS[@]} / 2)) "${typed:-nothing typed}" >"$dir/keys.err"
		return 4
	fi
	grep -q '^MBVM-DONE$' "$dir/serial.log" && return 0
	return 1
}

# vm_tpm_run STATE CMD...: CMD run on the host against the guest's TPM, the swtpm state folder
# STATE (the one VM_TPM_STATE names for the boots), with TPM2TOOLS_TCTI set to it; CMD's exit
# code. The state is made on first use, as vm_qemu's swtpm would (tpm2-tss's swtpm TCTI
# finds the control socket at the data socket's path + .ctrl).
vm_tpm_run() {
	local state=$1 sock pid rc=0
	shift
	mkdir -p "$state"
	sock=$state/host.sock
	rm -f "$sock" "$sock.ctrl"
	swtpm socket --tpm2 --tpmstate dir="$state" --server type=unixio,path="$sock" \
		--ctrl type=unixio,path="$sock.ctrl" --flags not-need-init,startup-clear \
		--log file="$state/host-swtpm.log" </dev/null &
	pid=$!
	while [ ! -S "$sock" ] || [ ! -S "$sock.ctrl" ]; do
		kill -0 "$pid" 2>/dev/null || vm_die "swtpm on $state did not start"
		sleep 0.1
	done
	TPM2TOOLS_TCTI=swtpm:path=$sock "$@" || rc=$?
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	rm -f "$sock" "$sock.ctrl"
	return $rc
}

# Key presses for the next boots (a person at GRUB's menu): VM_KEYS=(TEXT KEYS TEXT KEYS ...).
# In turn, once TEXT shows on the serial console (after where the previous TEXT was found),
# KEYS (QEMU's key names, blank-separated: down ret ...) are typed on the PS/2 keyboard through
# QEMU's monitor (HMP sendkey), which OVMF puts in ConIn, where GRUB reads. A boot that ends
# before every TEXT showed fails (vm_qemu returns 4, vm_boot_dir prints the serial tail).
# DIR/keys.log says when each step was taken.
VM_KEYS=()

# vm_keys_step DIR: one poll of vm_qemu's loop (its locals step and off): type the next KEYS
# when their TEXT has shown up.
vm_keys_step() {
	local dir=$1 text=${VM_KEYS[$step]} keys=${VM_KEYS[$((step + 1))]} at
	[ -s "$dir/serial.raw" ] && [ -S "$dir/monitor.sock" ] || return 0
	# the byte offset, from off, just past the first TEXT (grep reads to the end: no SIGPIPE)
	at=$(tail -c +$((off + 1)) "$dir/serial.raw" | grep -a -b -o -F -- "$text" | sed -n 1p)
	[ -n "$at" ] || return 0
	# shellcheck disable=SC2086 # KEYS: QEMU key names, blank-separated
	python3 - "$dir/monitor.sock" $keys <<'PY' >>"$dir/keys.log" 2>&1 || return 0
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(60)
s.connect(sys.argv[1])
got = b""
def prompts(n):  # the banner ends with the monitor's prompt; each command gets another
    global got
    while got.count(b"(qemu)") < n:
        d = s.recv(4096)
        if not d:
            sys.exit("the monitor closed")
        got += d
prompts(1)
for i, k in enumerate(sys.argv[2:]):
    s.sendall(b"sendkey " + k.encode() + b"\n")
    prompts(i + 2)
s.close()
PY
	off=$((off + ${at%%:*} + ${#text}))
	printf '%s s: "%s" up to byte %d; typed %s\n' "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')" \
		"$text" "$off" "$keys" >>"$dir/keys.log"
	step=$((step + 2))
}

# Decide once per process whether KVM works: a full boot with KVM must reach the end marker
# (and print something within 20 s). The first real boot doubles as the probe, so a working KVM
# costs nothing extra. A failed probe is remembered for this host boot (keyed by the kernel's
# boot_id and the QEMU version) so later test processes do not pay for it again.
VM_ACCEL_USED=
vm_kvm_verdict_file() {
	local id
	id=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo unknown)
	printf '%s/kvm-broken.%s.%s\n' "$MB_VM_CACHE" "$id" \
		"$(qemu-system-x86_64 --version | sed -n 1p | tr -c 'A-Za-z0-9.\n' _)"
}
vm_boot_dir() {
	local dir=$1 rc verdict
	if [ -z "$VM_ACCEL_USED" ]; then
		case "$MB_VM_ACCEL" in
		tcg) VM_ACCEL_USED=tcg ;;
		kvm) VM_ACCEL_USED=kvm ;;
		auto)
			mkdir -p "$MB_VM_CACHE"
			verdict=$(vm_kvm_verdict_file)
			if ! { [ -w /dev/kvm ] && [ -r /dev/kvm ]; }; then
				vm_say "no usable /dev/kvm"
			elif [ -f "$verdict" ]; then
				vm_say "KVM failed its probe earlier in this host boot: $(cat "$verdict")"
			else
				rc=0
				vm_qemu "$dir" kvm 90 20 || rc=$?
				if [ $rc -eq 0 ]; then
					VM_ACCEL_USED=kvm
					vm_say "accelerator: kvm (probe boot reached the end marker in $(cat "$dir/seconds") s)"
					return 0
				fi
				printf 'rc %s after %s s: %s\n' "$rc" "$(cat "$dir/seconds")" \
					"$(head -c 200 "$dir/qemu.err" | tr '\n' ' ')" >"$verdict"
				vm_say "KVM does not work here ($(cat "$verdict")); falling back to TCG"
			fi
			VM_ACCEL_USED=tcg
			;;
		*) vm_die "MB_VM_ACCEL must be kvm, tcg or auto" ;;
		esac
		vm_say "accelerator: $VM_ACCEL_USED"
	fi
	rc=0
	vm_qemu "$dir" "$VM_ACCEL_USED" "$MB_VM_TIMEOUT" || rc=$?
	[ $rc -eq 0 ] || {
		tail -n 30 "$dir/serial.log" >&2 || true
		cat "$dir/qemu.err" >&2 || true
		[ $rc -ne 4 ] || vm_die "boot in $dir: $(cat "$dir/keys.err") ($(cat "$dir/seconds") s)"
		vm_die "boot in $dir did not finish (rc $rc, accel $VM_ACCEL_USED, $(cat "$dir/seconds") s)"
	}
}

# vm_section FILE NAME: the lines between MBVM-BEGIN-NAME and MBVM-END-NAME.
vm_section() {
	awk -v b="MBVM-BEGIN-$2" -v e="MBVM-END-$2" '$0 == e { on = 0 } on { print } $0 == b { on = 1 }' "$1"
}

# Turns what the guest printed into files: log.bin (the firmware log, checked against the
# SHA-256 the guest computed), pcrs.json ({"sha256": {"0": "hex", ...}, ...}), banks, and
# guest-replay.json / guest-replay.rc when the guest ran mboot.
vm_extract() {
	local dir=$1 want got
	vm_section "$dir/serial.log" LOG | base64 -d >"$dir/log.bin" || vm_die "$dir: log section is not base64"
	want=$(vm_section "$dir/serial.log" LOG-SHA256 | awk '{ print $1 }')
	got=$(sha256sum "$dir/log.bin" | awk '{ print $1 }')
	[ -n "$want" ] && [ "$want" = "$got" ] ||
		vm_die "$dir: log transfer corrupted (guest sha256 '$want', host '$got')"
	vm_section "$dir/serial.log" PCRS |
		jq -R -n '[inputs | select(length > 0) | split(" ")] |
			reduce .[] as $p ({}; .[$p[0]][$p[1]] = ($p[2] | ascii_downcase))' >"$dir/pcrs.json" ||
		vm_die "$dir: cannot read the PCR section"
	[ "$(jq 'length' "$dir/pcrs.json")" -gt 0 ] || vm_die "$dir: the guest printed no PCR"
	if grep -q '^MBVM-BEGIN-MBOOT-REPLAY$' "$dir/serial.log"; then
		vm_section "$dir/serial.log" MBOOT-REPLAY >"$dir/guest-replay.json"
		vm_section "$dir/serial.log" MBOOT-REPLAY-RC >"$dir/guest-replay.rc"
	fi
}

# vm_boot DIR CMDLINE INITRD: prepare, boot, extract. Prints one summary line.
vm_boot() {
	local dir=$1
	"$VM_PREPARE" "$@"
	vm_boot_dir "$dir"
	vm_extract "$dir"
	vm_say "boot $(basename "$dir"): $VM_ACCEL_USED, $(cat "$dir/seconds") s, log $(stat -c %s "$dir/log.bin") bytes, banks $(jq -r 'keys | join(",")' "$dir/pcrs.json")"
}

# --- systemd-boot and a Unified Kernel Image (the uki scenario) -------------------------------

VM_SDBOOT_EFI=${VM_SDBOOT_EFI:-/usr/lib/systemd/boot/efi/systemd-bootx64.efi}
VM_SDSTUB_EFI=${VM_SDSTUB_EFI:-/usr/lib/systemd/boot/efi/linuxx64.efi.stub}
# Where systemd-boot finds a Type #2 entry on its own (no loader entry file names it).
VM_UKI_PATH=/EFI/Linux/mboot-vm.efi

# vm_uki OUT KERNEL INITRD OSREL CMDLINE_FILE: a UKI built as systemd-stub(7) documents it
# (objcopy adds the sections to the stub). Each section gets a VMA past the previous one (the
# stub's own first), so none overlaps: page-aligned, the kernel at a 2 MiB boundary.
vm_uki() {
	local out=$1 kernel=$2 initrd=$3 osrel=$4 cmdline=$5 next vma size s args=()
	# End of the stub's last section, from objdump's "Idx Name Size VMA ..." rows.
	next=0
	while read -r size vma; do
		[ $((0x$vma + 0x$size)) -le "$next" ] || next=$((0x$vma + 0x$size))
	done < <(objdump -h "$VM_SDSTUB_EFI" | awk '$1 ~ /^[0-9]+$/ { print $3, $4 }')
	[ "$next" -gt 0 ] || vm_die "cannot read the sections of $VM_SDSTUB_EFI"
	for s in .osrel:"$osrel" .cmdline:"$cmdline" .linux:"$kernel" .initrd:"$initrd"; do
		local name=${s%%:*} file=${s#*:} align=4096
		[ "$name" = .linux ] && align=$((2 * 1024 * 1024))
		vma=$(((next + align - 1) / align * align))
		size=$(stat -c %s "$file")
		args+=(--add-section "$name=$file" --change-section-vma "$(printf '%s=0x%x' "$name" "$vma")")
		next=$((vma + size))
	done
	objcopy "${args[@]}" "$VM_SDSTUB_EFI" "$out" || vm_die "objcopy could not build the UKI $out"
	# objcopy stamps the COFF header with the current time (binutils 2.40 ignores
	# SOURCE_DATE_EPOCH for PE): set it to VM_EPOCH and recompute the PE checksum over the
	# result, so the same inputs give the same UKI. Authenticode skips the checksum, not the stamp.
	python3 - "$out" "$VM_EPOCH" <<'PY' || vm_die "cannot fix the timestamp of $out"
import struct, sys
path, stamp = sys.argv[1], int(sys.argv[2])
img = bytearray(open(path, "rb").read())
pe = struct.unpack_from("<I", img, 0x3C)[0]
struct.pack_into("<I", img, pe + 8, stamp)           # COFF TimeDateStamp
sum_at = pe + 24 + 64                                 # optional header CheckSum
struct.pack_into("<I", img, sum_at, 0)
total = 0
for (word,) in struct.iter_unpack("<H", img + b"\0" * (len(img) % 2)):
    total += word
    total = (total & 0xFFFF) + (total >> 16)
struct.pack_into("<I", img, sum_at, (total + len(img)) & 0xFFFFFFFF)
open(path, "wb").write(img)
PY
}

# vm_prepare_uki DIR CMDLINE INITRD: systemd-boot as the removable-media loader, a loader.conf
# VM_UKI_EXTRA (space-separated host paths) go into the UKI's .extra.d/ folder and DIR/extra.d.
# (timeout 0) and a UKI (the kernel, INITRD, a fixed os-release and CMDLINE) in /EFI/Linux/,
# which systemd-boot finds by itself (Type #2 entry). DIR keeps every section file and the
# images, for the host's own digests.
vm_prepare_uki() {
	local dir=$1 cmdline=$2 initrd=$3 kernel
	mkdir -p "$dir"
	kernel=$(vm_kernel)
	cp "$VM_SDBOOT_EFI" "$dir/BOOTX64.EFI"
	printf 'timeout 0\n' >"$dir/loader.conf"
	printf 'NAME="mboot VM test"\nID=mbootvm\nVERSION_ID=1\nPRETTY_NAME="mboot VM test UKI"\n' >"$dir/osrel"
	# The .cmdline section: the command line exactly, no newline.
	printf '%s' "$cmdline" >"$dir/cmdline.sect"
	cp "$initrd" "$dir/initrd.img"
	vm_uki "$dir/uki.efi" "$kernel" "$dir/initrd.img" "$dir/osrel" "$dir/cmdline.sect"
	# the UKI's drop-in folder (systemd-stub's *.raw, *.cred): the files of VM_UKI_EXTRA, if any
	local extra=() f
	if [ -n "${VM_UKI_EXTRA:-}" ]; then
		mkdir -p "$dir/extra.d"
		for f in $VM_UKI_EXTRA; do
			cp "$f" "$dir/extra.d/"
			extra+=("$f=$VM_UKI_PATH.extra.d/$(basename "$f")")
		done
	fi
	vm_disk_esp "$dir/disk.img" "$dir/BOOTX64.EFI=/EFI/BOOT/BOOTX64.EFI" \
		"$dir/loader.conf=/loader/loader.conf" "$dir/uki.efi=$VM_UKI_PATH" "${extra[@]}"
	printf '%s\n' "$cmdline" >"$dir/cmdline"
	printf '%s\n' "$(basename "$(dirname "$(dirname "$kernel")")")" >"$dir/kernel-package"
}

# vm_boot_uki DIR CMDLINE INITRD: prepare (systemd-boot + UKI), boot, extract.
vm_boot_uki() {
	local dir=$1
	vm_prepare_uki "$@"
	vm_boot_dir "$dir"
	vm_extract "$dir"
	vm_say "boot $(basename "$dir"): $VM_ACCEL_USED, $(cat "$dir/seconds") s, log $(stat -c %s "$dir/log.bin") bytes, banks $(jq -r 'keys | join(",")' "$dir/pcrs.json")"
}

# --- the Secure Boot chain --------------------------------------------------------------------
# OVMF with Secure Boot on and Microsoft's keys enrolled -> Debian's shim (signed by Microsoft)
# -> Debian's monolithic GRUB and Debian's kernel (both signed by Debian, whose CA shim carries).

VM_SB_OVMF_CODE=/usr/share/OVMF/OVMF_CODE_4M.secboot.fd
VM_SB_OVMF_VARS=/usr/share/OVMF/OVMF_VARS_4M.ms.fd
VM_SB_SHIM=/usr/lib/shim/shimx64.efi.signed
VM_SB_GRUB_PACKAGE='grub-efi-amd64-signed'

# vm_secureboot_firmware: the firmware settings of the Secure Boot chain for the boots that
# follow. The secboot build of OVMF keeps its variables behind SMM: q35 with SMM, and the
# flash writable only from SMM.
vm_secureboot_firmware() {
	OVMF_CODE=$VM_SB_OVMF_CODE
	OVMF_VARS=$VM_SB_OVMF_VARS
	VM_MACHINE=q35,smm=on
	# shellcheck disable=SC2054 # one QEMU option value with commas
	VM_QEMU_ARGS=(-global driver=cfi.pflash01,property=secure,value=on)
	VM_PREPARE=vm_prepare_secureboot
}

# vm_signed_grub [IMAGE]: prints the path of one of Debian's signed GRUB images (default
# grubx64.efi.signed, the one grub-install puts on disks; gcdx64.efi.signed is the CD image,
# its prefix /boot/grub), downloading grub-efi-amd64-signed once (apt-get download, as for the
# kernel) and unpacking its images. Without a package index the newest cached version is used;
# with none cached the test is skipped (77).
vm_signed_grub() {
	local pkg=$VM_SB_GRUB_PACKAGE ver dir deb d=usr/lib/grub/x86_64-efi-signed f
	f=$d/${1:-grubx64.efi.signed}
	mkdir -p "$MB_VM_CACHE"
	ver=$(apt-cache policy "$pkg" 2>/dev/null | sed -n 's/^ *Candidate: \([^ (]*\)$/\1/p' | sed -n 1p)
	if [ -z "$ver" ]; then
		dir=$(ls -d "$MB_VM_CACHE/$pkg"_*/ 2>/dev/null | sort -V | tail -n 1)
		if [ -z "$dir" ]; then
			vm_say "SKIP: apt-cache knows no $pkg and $MB_VM_CACHE has none"
			exit 77
		fi
		dir=${dir%/}
	else
		dir=$MB_VM_CACHE/${pkg}_$ver
	fi
	(
		flock 9
		if [ ! -f "$dir/$d/grubx64.efi.signed" ] || [ ! -f "$dir/$d/gcdx64.efi.signed" ]; then
			vm_say "downloading $pkg $ver into $MB_VM_CACHE"
			mkdir -p "$MB_VM_CACHE/deb"
			(cd "$MB_VM_CACHE/deb" && apt-get -o APT::Sandbox::User=root download "$pkg=$ver" >&2) ||
				vm_die "apt-get download $pkg=$ver failed"
			deb=$MB_VM_CACHE/deb/${pkg}_${ver//:/%3a}_amd64.deb # apt's name for it
			rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
			dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir.tmp" "./$d/grubx64.efi.signed" "./$d/gcdx64.efi.signed" ||
				vm_die "unpacking $deb failed"
			rm -rf "$dir" && mv "$dir.tmp" "$dir"
		fi
	) 9>"$MB_VM_CACHE/.lock"
	[ -f "$dir/$f" ] || vm_die "grub-efi-amd64-signed has no $f"
	printf '%s\n' "$dir/$f"
}

# vm_prepare_secureboot DIR CMDLINE INITRD: the ESP as a removable medium boots it under Secure
# Boot: shim as /EFI/BOOT/BOOTX64.EFI and GRUB beside it as grubx64.efi, which shim loads
# (no fbx64.efi, so shim does not hand over to the fallback, which would write boot entries and
# reset). Debian's GRUB image has its prefix built in: it reads /EFI/debian/grub.cfg.
# DIR keeps copies of shim and GRUB for the host's Authenticode hashes. VM_SB_GRUB names
# another of Debian's signed images (an update of GRUB), VM_SB_GRUB_CFG where it reads grub.cfg.
VM_SB_GRUB=grubx64.efi.signed
VM_SB_GRUB_CFG=/EFI/debian/grub.cfg
vm_prepare_secureboot() {
	local dir=$1 cmdline=$2 initrd=$3 kernel grub
	mkdir -p "$dir"
	kernel=$(vm_kernel)
	grub=$(vm_signed_grub "$VM_SB_GRUB")
	cp "$VM_SB_SHIM" "$dir/shimx64.efi"
	cp "$grub" "$dir/grubx64.efi"
	vm_grub_cfg "$dir/grub.cfg" "$cmdline"
	vm_disk_esp "$dir/disk.img" "$dir/shimx64.efi=/EFI/BOOT/BOOTX64.EFI" "$dir/grubx64.efi=/EFI/BOOT/grubx64.efi" \
		"$dir/grub.cfg=$VM_SB_GRUB_CFG" "$kernel=/vmlinuz" "$initrd=/initrd.img"
	cp "$initrd" "$dir/initrd.img"
	printf '%s\n' "$cmdline" >"$dir/cmdline"
	printf '%s\n' "$(basename "$(dirname "$(dirname "$kernel")")")" >"$dir/kernel-package"
	printf '%s\n' "$(basename "${grub%/usr/lib/grub/*}")" >"$dir/grub-package"
}
