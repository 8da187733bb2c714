# shellcheck shell=bash disable=SC2034
# A real Debian 12 system as the guest (the vm-debian scenario, tests/vm/README.md): built with
# mmdebstrap from Debian's packages, booted by OVMF (Secure Boot on) -> Debian's shim -> Debian's
# signed GRUB -> Debian's grub.cfg (update-grub) -> a Debian kernel with its initramfs-tools
# initramfs -> systemd. The host talks to it through a "job disk" (vdb, FAT): at boot a systemd
# unit of the image runs /job.sh from it, keeps the output there and powers off.
#
# Sourced by run-scenario.sh after lib.sh. Needs root (mmdebstrap --mode=root, mke2fs -d of a
# root-owned tree) and the Debian mirror the host's apt uses, once per package list (cached).

# The disk: GPT, p1 the ESP (vm_disk_esp's GUIDs and FAT serial), p2 the root (ext4), p3 an
# empty partition the guest makes a LUKS2 data volume of.
VM_DEB_ROOT_UUID=6d626f6f-7400-4000-8000-0000000000f2
VM_DEB_ROOT_GUID=6D626F6F-7400-4000-8000-0000000000D2
VM_DEB_DATA_GUID=6D626F6F-7400-4000-8000-0000000000D3
VM_DEB_LINUX_TYPE=0FC63DAF-8483-4772-8E79-3D69D8477DE4
VM_DEB_ROOT_MIB=3072
VM_DEB_DATA_MIB=64
VM_DEB_JOB_MIB=384
# What the image holds besides minbase (mboot comes later, from the job disk). The kernel is added
# by vm_debian_image: the older of the two newest Debian 12 ABIs, the update installs the newest.
VM_DEB_PACKAGES="systemd-sysv udev kmod initramfs-tools grub-efi-amd64 grub-efi-amd64-signed shim-signed
grub-common grub2-common cryptsetup e2fsprogs libtss2-esys-3.0.2-0 libtss2-mu0 libtss2-rc0 libtss2-tctildr0
libtss2-tcti-device0 libjansson4 libssl3 libcryptsetup12 zlib1g"

# vm_deb_sources: one-line apt sources of the host's Debian mirror (deb.debian.org or whatever
# /etc/apt/sources.list* name for bookworm, bookworm-updates and bookworm-security).
vm_deb_sources() {
	local f
	{
		for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
			[ -r "$f" ] && sed -n 's/^deb \(\[[^]]*\] \)\{0,1\}\([^ ]*\) \(bookworm[a-z-]*\) \(.*\)$/deb \2 \3 main/p' "$f"
		done
		for f in /etc/apt/sources.list.d/*.sources; do
			[ -r "$f" ] || continue
			# deb822 stanzas: URIs, Suites
			awk 'BEGIN { RS = ""; FS = "\n" }
				{ u = ""; s = ""; t = "";
				  for (i = 1; i <= NF; i++) {
					if ($i ~ /^URIs:/) { u = $i; sub(/^URIs:[ \t]*/, "", u) }
					if ($i ~ /^Suites:/) { s = $i; sub(/^Suites:[ \t]*/, "", s) }
					if ($i ~ /^Types:/) { t = $i } }
				  if (t !~ /deb( |$)/ && t !~ /deb$/) next
				  n = split(u, us, " "); m = split(s, ss, " ");
				  for (a = 1; a <= n; a++) for (b = 1; b <= m; b++)
					if (ss[b] ~ /^bookworm/) print "deb " us[a] " " ss[b] " main" }' "$f"
		done
	} | sort -u
}

# vm_deb_kernels: "OLD NEW", the two newest linux-image-6.1.0-N-amd64 apt can install
# (apt-cache policy has a candidate); without a package index, the two newest in the cache.
vm_deb_kernels() {
	local l
	l=$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64$' 2>/dev/null | awk '{ print $1 }' | sort -V |
		while read -r p; do
			apt-cache policy "$p" 2>/dev/null | awk -v p="$p" '/^ *Candidate: [0-9]/ { print p }'
		done | tail -n 2) || true
	if [ "$(wc -w <<<"$l")" -lt 2 ]; then
		l=$(ls "$MB_VM_CACHE"/deb/linux-image-6.1.0-*-amd64_*.deb 2>/dev/null | sed 's,.*/,,; s,_.*,,' | sort -uV | tail -n 2)
	fi
	[ "$(wc -w <<<"$l")" = 2 ] || vm_die "cannot find two Debian 12 kernel packages (apt-cache search linux-image-6.1.0-N-amd64)"
	echo $l
}

# vm_deb_download PKG: the path of PKG's .deb in $MB_VM_CACHE/deb, downloaded once with apt-get.
vm_deb_download() {
	local pkg=$1 deb
	mkdir -p "$MB_VM_CACHE/deb"
	(
		flock 9
		if ! ls "$MB_VM_CACHE/deb/${pkg}"_*.deb >/dev/null 2>&1; then
			vm_say "downloading $pkg into $MB_VM_CACHE/deb"
			(cd "$MB_VM_CACHE/deb" && apt-get -o APT::Sandbox::User=root download "$pkg" >&2) ||
				vm_die "apt-get download $pkg failed"
		fi
	) 9>"$MB_VM_CACHE/.lock"
	deb=$(ls "$MB_VM_CACHE/deb/${pkg}"_*.deb | sort -V | tail -n 1)
	printf '%s\n' "$deb"
}

# The guest's side of the job disk: a unit after everything else, which mounts vdb, runs job.sh
# from it (output in out/ there, and on the serial console between markers) and powers off.
vm_deb_guest_files() {
	local root=$1
	install -d "$root/usr/local/sbin" "$root/etc/systemd/system/graphical.target.wants" "$root/var/log/journal"
	cat >"$root/usr/local/sbin/mbvm-job" <<-'EOF'
		#!/bin/bash
		# mboot VM test: run the host's job from the second disk, keep its output there, power off.
		con=/dev/ttyS0
		echo "MBVM-JOB-START $(uname -r)" >"$con"
		mkdir -p /mnt/job
		for i in $(seq 60); do [ -b /dev/vdb ] && break; sleep 1; done
		if mount -t vfat /dev/vdb /mnt/job; then
			mkdir -p /mnt/job/out
			cd /mnt/job || exit 1
			rc=0
			bash /mnt/job/job.sh >/mnt/job/out/job.log 2>&1 || rc=$?
			echo "$rc" >/mnt/job/out/job.rc
			journalctl -b --no-pager -o short-monotonic >/mnt/job/out/journal.txt 2>&1
			{ echo; echo MBVM-BEGIN-JOB; cat /mnt/job/out/job.log; echo MBVM-END-JOB
			  echo MBVM-BEGIN-JOB-RC; echo "$rc"; echo MBVM-END-JOB-RC; } >"$con"
			cd /
			sync
			umount /mnt/job
		else
			echo "MBVM-JOB-NO-DISK" >"$con"
		fi
		printf '\nMBVM-DONE\n' >"$con"
		systemctl poweroff --no-block
	EOF
	chmod 0755 "$root/usr/local/sbin/mbvm-job"
	cat >"$root/etc/systemd/system/mbvm-job.service" <<-'EOF'
		[Unit]
		Description=mboot VM test job (from the second disk)
		After=multi-user.target

		[Service]
		Type=oneshot
		ExecStart=/usr/local/sbin/mbvm-job
		TimeoutStartSec=infinity

		[Install]
		WantedBy=graphical.target
	EOF
	ln -sf /etc/systemd/system/mbvm-job.service "$root/etc/systemd/system/graphical.target.wants/mbvm-job.service"
	# A fixed machine id: no first-boot setup, and the same journal folder every boot.
	printf '6d626f6f74766d64656269616e000001\n' >"$root/etc/machine-id"
	printf 'mbootvm\n' >"$root/etc/hostname"
	cat >"$root/etc/fstab" <<-EOF
		UUID=$VM_DEB_ROOT_UUID / ext4 errors=remount-ro 0 1
		UUID=$VM_ESP_UUID /boot/efi vfat umask=0077 0 0
	EOF
	mkdir -p "$root/boot/efi"
	# Under TCG a kernel package's postinst is most of boot 1: the new kernel's initramfs gets the
	# modules this machine needs (the image's own, built in the chroot, keeps "most"), and dpkg
	# does not fsync each of its 4,000 files.
	printf 'MODULES=dep\n' >"$root/etc/initramfs-tools/conf.d/mbvm-modules"
	printf 'force-unsafe-io\n' >"$root/etc/dpkg/dpkg.cfg.d/mbvm-unsafe-io"
	# /etc/default/grub: Debian's file with the serial console (GRUB's and the kernel's) and a
	# 10 s menu, so that a person (QEMU's keyboard) has time to pick an entry under TCG.
	sed -i -e 's/^GRUB_TIMEOUT=.*/GRUB_TIMEOUT=10/' \
		-e 's/^GRUB_CMDLINE_LINUX=.*/GRUB_CMDLINE_LINUX="console=ttyS0,115200"/' \
		-e 's/^#\{0,1\}GRUB_TERMINAL=.*/GRUB_TERMINAL=console/' "$root/etc/default/grub"
	grep -q '^GRUB_TERMINAL=console' "$root/etc/default/grub" || echo 'GRUB_TERMINAL=console' >>"$root/etc/default/grub"
}

# vm_deb_update_grub ROOT: Debian's update-grub in the new root (chroot, mmdebstrap's mounts),
# with grub-probe and grub-mkrelpath standing in for the disk the root will be on (/dev/vda2,
# ext4, VM_DEB_ROOT_UUID): the chroot's own disk is the host's. In the guest the real ones run.
vm_deb_update_grub() {
	local root=$1 f
	for f in usr/sbin/grub-probe usr/bin/grub-mkrelpath; do mv "$root/$f" "$root/$f.mbvm-real"; done
	cat >"$root/usr/sbin/grub-probe" <<-EOP
		#!/bin/sh
		t=
		prev=
		for a in "\$@"; do
			case "\$a" in --target=*) t=\${a#--target=} ;; esac
			[ "\$prev" = -t ] && t=\$a
			prev=\$a
		done
		case "\$t" in
		partmap) echo gpt ;; fs) echo ext2 ;; fs_uuid) echo $VM_DEB_ROOT_UUID ;; abstraction | hints_string) ;;
		compatibility_hint) echo hd0,gpt2 ;; device) echo /dev/vda2 ;; drive) echo '(hd0,gpt2)' ;;
		*) exit 1 ;;
		esac
	EOP
	# shellcheck disable=SC2016 # the stand-in's own $1
	printf '#!/bin/sh\necho "$1"\n' >"$root/usr/bin/grub-mkrelpath"
	chmod 0755 "$root/usr/sbin/grub-probe" "$root/usr/bin/grub-mkrelpath"
	local rc=0
	chroot "$root" update-grub || rc=$?
	for f in usr/sbin/grub-probe usr/bin/grub-mkrelpath; do mv "$root/$f.mbvm-real" "$root/$f"; done
	return $rc
}

# vm_debian_image: the path of the cached disk image (built once per package list and builder):
# mmdebstrap -> /boot/grub/grub.cfg by update-grub -> ext4 (mke2fs -d) + ESP (mtools, as
# grub-install --removable --uefi-secure-boot lays it out) in one GPT disk (sfdisk). No loop device.
vm_debian_image() {
	local kernels old key dir sources
	kernels=$(vm_deb_kernels)
	old=${kernels% *}
	sources=$(vm_deb_sources)
	[ -n "$sources" ] || vm_die "no bookworm source in /etc/apt/sources.list*"
	# The key: what goes into the image (the package list, the kernel, the functions that build
	# it, the disk's layout), not the rest of this file.
	key=$({ echo "$VM_DEB_PACKAGES $old $VM_DEB_ROOT_UUID $VM_DEB_ROOT_MIB $VM_DEB_DATA_MIB $VM_ESP_MIB $VM_EPOCH"
		declare -f vm_deb_sources vm_deb_guest_files vm_deb_update_grub vm_deb_assemble; } | sha256sum | cut -c1-16)
	dir=$MB_VM_CACHE/debian-$key
	mkdir -p "$MB_VM_CACHE"
	(
		flock 9
		[ -f "$dir/disk.img" ] && exit 0
		[ "$(id -u)" = 0 ] || vm_die "building the Debian image needs root (mmdebstrap --mode=root)"
		command -v mmdebstrap >/dev/null || vm_die "missing: mmdebstrap"
		rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
		local t0 pk
		t0=$(date +%s)
		pk=$(echo $VM_DEB_PACKAGES "$old" | tr ' ' ,)
		vm_say "building the Debian 12 guest ($old) with mmdebstrap into $dir"
		printf '%s\n' "$sources" >"$dir.tmp/sources.list"
		# The customize hook (mmdebstrap runs it with sh, the root folder as $1): this file's functions.
		printf '#!/bin/bash\nset -eu\n. "%s/lib.sh"\n. "%s/debian.sh"\ntrap - EXIT INT TERM\nvm_deb_guest_files "$1"\nvm_deb_update_grub "$1"\n' \
			"$VM_DIR" "$VM_DIR" >"$dir.tmp/customize.sh"
		# shellcheck disable=SC2016 # $1: mmdebstrap's root folder
		mmdebstrap --mode=root --variant=minbase --include="$pk" \
			--customize-hook="bash $dir.tmp/customize.sh \"\$1\"" \
			bookworm "$dir.tmp/root" - <"$dir.tmp/sources.list" >"$dir.tmp/mmdebstrap.log" 2>&1 ||
			{ tail -n 40 "$dir.tmp/mmdebstrap.log" >&2; vm_die "mmdebstrap failed (log: $dir.tmp/mmdebstrap.log)"; }
		vm_deb_assemble "$dir.tmp/root" "$dir.tmp/disk.img"
		echo "$old" >"$dir.tmp/kernel"
		echo $(($(date +%s) - t0)) >"$dir.tmp/build-seconds"
		rm -rf "$dir.tmp/root" "$dir"
		mv "$dir.tmp" "$dir"
		vm_say "Debian image built in $(cat "$dir/build-seconds") s"
	) 9>"$MB_VM_CACHE/.debian.lock" || exit 1
	printf '%s\n' "$dir"
}

# vm_deb_assemble ROOT OUT: the disk image from the root folder.
vm_deb_assemble() {
	local root=$1 out=$2 esp_start=2048 esp_sectors root_start root_sectors data_start data_sectors
	esp_sectors=$((VM_ESP_MIB * 2048))
	root_start=$((esp_start + esp_sectors))
	root_sectors=$((VM_DEB_ROOT_MIB * 2048))
	data_start=$((root_start + root_sectors))
	data_sectors=$((VM_DEB_DATA_MIB * 2048))
	rm -f "$out"
	truncate -s $(((data_start + data_sectors + 2048) * 512)) "$out"
	sfdisk --quiet --no-reread --no-tell-kernel "$out" <<-EOF >/dev/null || vm_die "sfdisk failed"
		label: gpt
		label-id: $VM_DISK_GUID
		first-lba: 34
		start=$esp_start, size=$esp_sectors, type=$VM_ESP_TYPE, uuid=$VM_ESP_GUID, name="EFI System"
		start=$root_start, size=$root_sectors, type=$VM_DEB_LINUX_TYPE, uuid=$VM_DEB_ROOT_GUID, name="root"
		start=$data_start, size=$data_sectors, type=$VM_DEB_LINUX_TYPE, uuid=$VM_DEB_DATA_GUID, name="data"
	EOF
	mke2fs -q -t ext4 -U "$VM_DEB_ROOT_UUID" -L root -d "$root" -E offset=$((root_start * 512)) \
		"$out" $((root_sectors / 2))k || vm_die "mke2fs -d failed"
	# The ESP as grub-install --removable lays it out on a Secure Boot capable Debian: shim as the
	# removable loader, Debian's signed GRUB beside it, its stub config where that GRUB's built-in
	# prefix (/EFI/debian) looks, sending it to the root's /boot/grub/grub.cfg.
	local w
	w=$(mktemp -d)
	printf "search.fs_uuid %s root hd0,gpt2 \nset prefix=(\$root)'/boot/grub'\nconfigfile \$prefix/grub.cfg\n" \
		"$VM_DEB_ROOT_UUID" >"$w/grub.cfg"
	export SOURCE_DATE_EPOCH=$VM_EPOCH
	local esp="$out@@$((esp_start * 512))"
	mformat -i "$esp" -N "$VM_FAT_SERIAL" -v MBOOTESP -T "$esp_sectors" -h 64 -s 32 -H "$esp_start" :: ||
		vm_die "mformat failed"
	mmd -i "$esp" ::/EFI ::/EFI/BOOT ::/EFI/debian
	mcopy -i "$esp" "$root/usr/lib/shim/shimx64.efi.signed" ::/EFI/BOOT/BOOTX64.EFI
	mcopy -i "$esp" "$root/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed" ::/EFI/BOOT/grubx64.efi
	mcopy -i "$esp" "$root/usr/lib/shim/mmx64.efi.signed" ::/EFI/BOOT/mmx64.efi
	mcopy -i "$esp" "$w/grub.cfg" ::/EFI/debian/grub.cfg
	unset SOURCE_DATE_EPOCH
	rm -rf "$w"
}

# vm_deb_job_disk OUT DIR: a FAT image (vdb) with DIR's files (job.sh and what it needs).
vm_deb_job_disk() {
	local out=$1 src=$2
	rm -f "$out"
	truncate -s $((VM_DEB_JOB_MIB * 1024 * 1024)) "$out"
	mformat -i "$out" -v MBVMJOB :: || vm_die "mformat of the job disk failed"
	mcopy -s -i "$out" "$src"/* :: || vm_die "mcopy into the job disk failed"
}

# vm_deb_job_out DISK DEST: the job's out/ folder from the job disk.
vm_deb_job_out() {
	mkdir -p "$2"
	mcopy -s -n -i "$1" ::/out/* "$2/" 2>/dev/null || vm_say "the job disk $1 has no out/ folder"
}

# vm_deb_packages DEST: mboot's Debian packages built from this tree, in DEST. From MB_DEB_DIR
# when set; else scripts/build-debs --if-changed, once per build folder and tree
# (MB_BUILD_ROOT/tests/debs, shared with test-debs).
vm_deb_packages() {
	local dest=$1 src=${MB_DEB_DIR:-} top=$VM_DIR/../..
	if [ -z "$src" ]; then
		src=${MB_BUILD_ROOT:-$top/build}/tests/debs
		vm_say "mboot's Debian packages (scripts/build-debs --if-changed $src)"
		"$top/scripts/build-debs" --if-changed "$src" >"$src.log" 2>&1 ||
			{ tail -n 30 "$src.log" >&2; vm_die "scripts/build-debs failed (log: $src.log)"; }
	fi
	# What a LUKS user installs: the tool, its library, the token plugin and hooks (not -dev,
	# not the verifier, whose libraries the image does not have, nor debug symbols).
	ls "$src"/mboot_*.deb >/dev/null 2>&1 || vm_die "no mboot_*.deb in $src"
	mkdir -p "$dest"
	cp "$src"/mboot_*.deb "$src"/libmboot0_*.deb "$dest/"
	cp "$src"/mboot-luks_*.deb "$dest/" 2>/dev/null || true
}

# --- the scenario -----------------------------------------------------------------------------

# deb_boot NAME [TEXT KEYS ...]: boot the Debian disk ($out/disk.img, kept) with the job folder
# $out/NAME.job as vdb; the job's out/ lands in $out/NAME/out. Keys as VM_KEYS.
deb_boot() {
	local name=$1 dir=$out/$1 rc=0
	shift
	VM_KEYS=("$@")
	mkdir -p "$dir"
	mv "$out/disk.img" "$dir/disk.img"
	vm_deb_job_disk "$dir/job.img" "$out/$name.job"
	VM_EXTRA_DISK=$dir/job.img
	if [ -z "$VM_ACCEL_USED" ]; then
		case "$MB_VM_ACCEL" in kvm | tcg) VM_ACCEL_USED=$MB_VM_ACCEL ;; *) VM_ACCEL_USED=tcg ;; esac
	fi
	vm_say "boot $name ($VM_ACCEL_USED, limit $VM_DEB_TIMEOUT s)"
	vm_qemu "$dir" "$VM_ACCEL_USED" "$VM_DEB_TIMEOUT" || rc=$?
	VM_KEYS=()
	mv "$dir/disk.img" "$out/disk.img"
	vm_deb_job_out "$dir/job.img" "$dir/out"
	[ "${MB_VM_KEEP:-0}" = 1 ] || rm -f "$dir/job.img" "$dir/vars.fd"
	vm_say "boot $name: rc $rc, $(cat "$dir/seconds") s"
	echo "$name $(cat "$dir/seconds")" >>"$out/timings"
	if [ $rc -ne 0 ]; then
		tail -n 40 "$dir/serial.log" >&2 || true
		[ ! -f "$dir/keys.err" ] || cat "$dir/keys.err" >&2
		bad "boot $name finished (rc $rc: 1 = no end marker before $VM_DEB_TIMEOUT s, 4 = a menu text never showed)"
		return 1
	fi
	ok "boot $name: the guest ran its job and powered off ($(cat "$dir/seconds") s)"
}

# deb_val NAME KEY: the value the job printed as "MBVM KEY VALUE" in its log.
deb_val() { sed -n "s/^MBVM $2 //p" "$out/$1/out/job.log" 2>/dev/null | tail -n 1; }

# The job scripts (bash, run as root in the guest from the job disk's root, out/ for results).
deb_job_common() {
	cat <<-'EOF'
		val() { echo "MBVM $1 $2"; }
		val uname "$(uname -r)"
		val cmdline "$(cat /proc/cmdline)"
		val default-mboot "$([ -e /etc/default/mboot ] && echo present || echo absent)"
	EOF
}
deb_job_check() { # the checks of boots 2-4: the data volume, mboot verify, the journal
	cat <<-'EOF'
		rc=0; cryptsetup status data >out/cryptsetup-status.txt 2>&1 || rc=$?
		val status-rc $rc
		val active "$(systemctl is-active systemd-cryptsetup@data.service)"
		val mounted "$(findmnt -n -o SOURCE /srv/data)"
		val marker "$(cat /srv/data/marker 2>/dev/null)"
		journalctl -b --no-pager -u systemd-cryptsetup@data.service >out/cryptsetup-journal.txt 2>&1
		rc=0; mboot verify >out/verify.txt 2>&1 || rc=$?
		val verify-rc $rc
		mboot luks list /dev/vda3 >out/luks-list.txt 2>&1
		cp /var/log/apt/term.log out/ 2>/dev/null || true
		cp /sys/kernel/security/tpm0/binary_bios_measurements out/log.bin
		mboot pcrs --json >out/pcrs.json 2>&1
	EOF
}

vm_debian_scenario() {
	local kernels old new img newdeb pass t0
	t0=$(date +%s)
	VM_MEM=1024
	vm_secureboot_firmware
	VM_DISK_SNAPSHOT=off
	VM_TPM_STATE=$out/tpm
	VM_DEB_TIMEOUT=${MB_VM_DEBIAN_TIMEOUT:-1800}
	kernels=$(vm_deb_kernels)
	old=${kernels% *} new=${kernels#* }
	img=$(vm_debian_image)
	cp "$img/build-seconds" "$out/image-build-seconds" 2>/dev/null || true
	newdeb=$(vm_deb_download "$new")
	cp --sparse=always "$img/disk.img" "$out/disk.img"
	vm_say "Debian guest: $old, update to $new; image $img"

	# boot 1: install mboot, make and enroll the data volume, keep the booted GRUB configs,
	# install the newer kernel (its postinst.d hooks reseal).
	local j=$out/boot1.job
	mkdir -p "$j/debs"
	vm_deb_packages "$j/debs"
	cp "$newdeb" "$j/"
	pass=$(head -c 18 /dev/urandom | base64)
	printf '%s' "$pass" >"$out/passphrase"
	cp "$out/passphrase" "$j/passphrase"
	{
		deb_job_common
		cat <<-EOF
			NEWDEB=$(basename "$newdeb")
		EOF
		cat <<-'EOF'
			set -x
			rc=0; dpkg -i debs/*.deb >out/mboot-install.txt 2>&1 || rc=$?
			val mboot-install-rc $rc
			mboot --version
			# the boot's event log and PCRs (a real Secure Boot boot of Debian's chain, for study)
			cp /sys/kernel/security/tpm0/binary_bios_measurements out/log.bin
			mboot pcrs --json >out/pcrs.json 2>&1
			val default-mboot "$([ -e /etc/default/mboot ] && echo present || echo absent)"
			# the data volume: LUKS2 with the host's passphrase, an ext4 with a marker file
			cryptsetup luksFormat --batch-mode --type luks2 --key-file passphrase /dev/vda3
			cryptsetup open --key-file passphrase /dev/vda3 data0
			mkfs.ext4 -q /dev/mapper/data0
			mkdir -p /srv/data && mount /dev/mapper/data0 /srv/data && echo mboot-vm-data >/srv/data/marker
			umount /srv/data && cryptsetup close data0
			rc=0; mboot luks enroll /dev/vda3 --pcrs 0,2,4,7,8,9 --key-file passphrase --recovery-key >out/enroll.txt 2>&1 || rc=$?
			val enroll-rc $rc
			cat out/enroll.txt
			mboot luks list /dev/vda3 >out/luks-list.txt 2>&1
			echo "data UUID=$(cryptsetup luksUUID /dev/vda3) none luks,nofail" >>/etc/crypttab
			echo "/dev/mapper/data /srv/data ext4 nofail 0 2" >>/etc/fstab
			cat /etc/crypttab
			systemctl enable mboot-grub-booted.service
			val grub-booted-enabled "$(systemctl is-enabled mboot-grub-booted.service)"
			rc=0; mboot grub keep-booted >out/keep-booted.txt 2>&1 || rc=$?
			val keep-booted-rc $rc
			cat out/keep-booted.txt
			cp /boot/grub/grub.cfg out/grub-before.cfg
			rc=0; apt-get install -y "./$NEWDEB" >out/apt.txt 2>&1 || rc=$?
			val apt-rc $rc
			cat out/apt.txt
			cp /var/log/apt/term.log out/ 2>/dev/null || true
			cp /boot/grub/grub.cfg out/grub-after.cfg
			ls -l /boot /etc/mboot /var/lib/mboot 2>&1
			mboot luks list /dev/vda3 >out/luks-list-after.txt 2>&1
			sync
		EOF
	} >"$j/job.sh"
	deb_boot boot1 || { vm_deb_report; return; }
	check "boot 1 runs $old" test "$(deb_val boot1 uname)" = "${old#linux-image-}"
	check "boot 1: no /etc/default/mboot" test "$(deb_val boot1 default-mboot)" = absent
	check "boot 1: mboot installed from its Debian packages (dpkg -i)" test "$(deb_val boot1 mboot-install-rc)" = 0
	check "boot 1: mboot luks enroll --pcrs 0,2,4,7,8,9 --recovery-key exited 0" test "$(deb_val boot1 enroll-rc)" = 0
	# the recovery key enroll printed once (8 groups of 8 modhex letters), for boot 4
	sed -n 's/^Recovery key: //p' "$out/boot1/out/enroll.txt" 2>/dev/null | tr -d '\n' >"$out/recovery-key"
	check "boot 1: enroll printed a recovery key" \
		grep -Eqx '([cbdefghijklnrtuv]{8}-){7}[cbdefghijklnrtuv]{8}' "$out/recovery-key"
	check "boot 1: mboot grub keep-booted exited 0" test "$(deb_val boot1 keep-booted-rc)" = 0
	check "boot 1: apt-get install of $new exited 0" test "$(deb_val boot1 apt-rc)" = 0
	grep -a -A3 'mboot' "$out/boot1/out/apt.txt" 2>/dev/null | sed 's/^/  boot1 apt: /'
	check "boot 1: the reseal hook ran (its output in apt's log)" grep -q 'mboot-reseal' "$out/boot1/out/apt.txt"
	check "boot 1: the reseal hook printed no problem" \
		sh -c "! grep -a 'mboot-reseal:.*\(cannot\|not resealed\|fail\|error\|unpredictable\)' '$out/boot1/out/apt.txt'"

	# Boots 2-4 only boot and report: a shorter limit (a kernel that panics, e.g. on a command
	# line typed wrong, does not power off).
	VM_DEB_TIMEOUT=${MB_VM_DEBIAN_TIMEOUT_CHECK:-600}
	# boot 2: GRUB's default entry, the new kernel. The volume opens by its token.
	for b in boot2 boot3 boot4; do mkdir -p "$out/$b.job"; done
	cp "$out/recovery-key" "$out/boot4.job/recovery-key"
	{ deb_job_common; deb_job_check; } >"$out/boot2.job/job.sh"
	cp "$out/boot2.job/job.sh" "$out/boot3.job/job.sh"
	deb_boot boot2 && deb_expect_open boot2 "${new#linux-image-}"

	# boot 3: the old kernel, picked from GRUB's menu (Advanced options, third entry: new,
	# new recovery, old).
	deb_boot boot3 "Advanced options for Debian GNU/Linux" "down ret" \
		"with Linux ${old#linux-image-} (recovery mode)" "down down ret" &&
		deb_expect_open boot3 "${old#linux-image-}"

	# boot 4: the default entry with its command line edited at the menu ('e'; down to the
	# editor's last line, which is empty, then up three times: initrd, echo, linux; append a word,
	# ctrl-x boots). The token is refused.
	{
		deb_job_common
		deb_job_check
		cat <<-'EOF'
			grep -h 'mboot\|PCR' out/cryptsetup-journal.txt
			systemctl stop systemd-cryptsetup@data.service
			rc=0; cryptsetup open --key-file recovery-key /dev/vda3 data || rc=$?
			val recovery-rc $rc
			mount /dev/mapper/data /srv/data
			val marker-after "$(cat /srv/data/marker 2>/dev/null)"
		EOF
	} >"$out/boot4.job/job.sh"
	deb_boot boot4 "Advanced options for Debian GNU/Linux" "e" "/boot/initrd.img-" \
		"down down down down down down down down down down down down down down down down down down down down up up up end spc m b o o t dot e d i t e d ctrl-x" && {
		check "boot 4 runs $new" test "$(deb_val boot4 uname)" = "${new#linux-image-}"
		check "boot 4: the command line was edited (mboot.edited)" grep -q 'mboot.edited' <<<"$(deb_val boot4 cmdline)"
		check "boot 4: the volume is not opened by the token" test "$(deb_val boot4 status-rc)" != 0
		check "boot 4: the refusal names PCR 8 in systemd-cryptsetup's journal" grep -q 'PCR 8' "$out/boot4/out/cryptsetup-journal.txt"
		check "boot 4: the recovery key enroll printed in boot 1 opens it" test "$(deb_val boot4 recovery-rc)" = 0
		check "boot 4: the data is there" test "$(deb_val boot4 marker-after)" = mboot-vm-data
	}
	vm_deb_report
	echo "total $(($(date +%s) - t0))" >>"$out/timings"
	[ "${MB_VM_KEEP:-0}" = 1 ] || rm -f "$out/disk.img"
}

# deb_expect_open NAME KVER: boots 2 and 3: the right kernel, the volume opened by its token with
# no passphrase and mounted, mboot verify passes.
deb_expect_open() {
	local n=$1
	check "$n runs $2" test "$(deb_val "$n" uname)" = "$2"
	check "$n: no /etc/default/mboot" test "$(deb_val "$n" default-mboot)" = absent
	check "$n: systemd-cryptsetup@data is active" test "$(deb_val "$n" active)" = active
	check "$n: cryptsetup status data exits 0 (the volume is open)" test "$(deb_val "$n" status-rc)" = 0
	check "$n: /srv/data is mounted from /dev/mapper/data and holds the marker" \
		test "$(deb_val "$n" mounted) $(deb_val "$n" marker)" = "/dev/mapper/data mboot-vm-data"
	check "$n: mboot verify exits 0" test "$(deb_val "$n" verify-rc)" = 0
}

vm_deb_report() {
	local b
	for b in boot1 boot2 boot3 boot4; do
		[ -f "$out/$b/out/job.log" ] || continue
		sed -n 's/^MBVM /  '"$b"': /p' "$out/$b/out/job.log"
	done
	sed 's/^/  seconds: /' "$out/timings" 2>/dev/null || true
}
