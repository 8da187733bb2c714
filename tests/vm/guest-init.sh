#!/bin/busybox sh
# shellcheck shell=dash
# /init of the test initramfs (runs in the guest, busybox only). Prints, between markers that
# the host parses (tests/vm/lib.sh vm_extract):
#   SECUREBOOT   the kernel's Secure Boot messages, lockdown mode, the SecureBoot variable
#   LOG          base64 of /sys/kernel/security/tpm0/binary_bios_measurements
#   LOG-SHA256   its SHA-256, so the host can prove the serial transfer was exact
#   PCRS         "<bank> <index> <hex>" for every PCR of every bank in /sys/class/tpm/tpm0
#   MBOOT-REPLAY `mboot log replay --json` of the kernel's log, when /bin/mboot is present
#   MBOOT-PCRS, MBOOT-VERIFY  `mboot pcrs --json` and `mboot verify --json` on the guest's own TPM,
#                each with its exit code (-RC) and stderr (-ERR)
#   ATTEST-*     exit codes of attest enroll / activate / quote when /extra/attest asks for them
#   IMA<N>-*     the inguest scenario's IMA snapshots (/extra/ima), below
#   KUP-*        the kernel-update scenario's steps (/extra/kupdate), below
#   UNSEAL-*     the uki and secureboot scenarios' unseals of the host's sealed files (/extra/unseal), below
# then powers off.
/bin/busybox --install -s /bin
export PATH=/bin:/usr/bin:/sbin:/usr/sbin

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t securityfs securityfs /sys/kernel/security
mount -t devtmpfs devtmpfs /dev 2>/dev/null
dmesg -n 1

echo "MBVM-BEGIN-INFO"
uname -r
cat /proc/cmdline
echo "MBVM-END-INFO"

# Secure Boot as the kernel found it: its boot message, the lockdown Debian's kernel enters
# under Secure Boot, and the SecureBoot variable (attributes, then the value byte) when
# efivarfs is there.
echo "MBVM-BEGIN-SECUREBOOT"
dmesg | grep -i -E 'secure ?boot|lockdown' | sed 's/^\[[^]]*\] //'
echo "lockdown: $(cat /sys/kernel/security/lockdown 2>/dev/null)"
sbvar=/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c
mount -t efivarfs efivarfs /sys/firmware/efi/efivars 2>/dev/null
[ -r $sbvar ] && echo "SecureBoot variable:$(od -A n -t x1 $sbvar)"
echo "MBVM-END-SECUREBOOT"

# modules: the kernel modules lib.sh put in /lib/modules/mboot-vm, loaded in their order; once
# (efivars and disk2 both ask for them when the initramfs has both modes).
modules() {
	[ -e /tmp/modules-loaded ] && return 0
	: >/tmp/modules-loaded
	while read -r m; do
		insmod "/lib/modules/mboot-vm/$m" || echo "MBVM-INSMOD-FAILED $m"
	done </lib/modules/mboot-vm/order
}

# /extra/efivars: UEFI variables to write for the next boot, one per line "NAME-GUID ATTR_HEX
# DATA_HEX" (efivarfs: 4 bytes of attributes, then the data), with efivarfs from the modules.
# Each line's result, and the file as read back, between EFIVARS markers.
if [ -r /extra/efivars ]; then
	modules
	mount -t efivarfs efivarfs /sys/firmware/efi/efivars 2>/dev/null
	echo "MBVM-BEGIN-EFIVARS"
	while read -r name attr data; do
		f=/sys/firmware/efi/efivars/$name
		printf "$(echo "$attr$data" | sed 's/../\\x&/g')" >"$f" && echo "wrote $name: $(od -A n -t x1 "$f" | tr -d ' \n')" ||
			echo "FAILED $name"
	done </extra/efivars
	echo "MBVM-END-EFIVARS"
fi

# disk2: the modules, then up to 10 s for the second virtio disk, /dev/vdb, to appear (the luks
# and kernel-update scenarios).
disk2() {
	modules
	i=0
	while [ ! -b /dev/vdb ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
}

log=/sys/kernel/security/tpm0/binary_bios_measurements
# Copy first: securityfs gives short reads, and every consumer below reads the same bytes.
if cat "$log" >/tmp/log.bin; then
	echo "MBVM-BEGIN-LOG"
	base64 /tmp/log.bin
	echo "MBVM-END-LOG"
	echo "MBVM-BEGIN-LOG-SHA256"
	sha256sum /tmp/log.bin
	echo "MBVM-END-LOG-SHA256"
else
	echo "MBVM-NO-LOG"
fi

echo "MBVM-BEGIN-PCRS"
for bankdir in /sys/class/tpm/tpm0/pcr-*; do
	[ -d "$bankdir" ] || continue
	bank=${bankdir##*/pcr-}
	i=0
	while [ $i -lt 24 ]; do
		[ -r "$bankdir/$i" ] && echo "$bank $i $(cat "$bankdir/$i")"
		i=$((i + 1))
	done
done
echo "MBVM-END-PCRS"

if [ -x /bin/mboot ] && [ ! -e /extra/luks ]; then
	/bin/mboot log replay --json "$log" >/tmp/replay.json 2>/tmp/replay.err
	rc=$?
	echo "MBVM-BEGIN-MBOOT-REPLAY"
	cat /tmp/replay.json
	echo "MBVM-END-MBOOT-REPLAY"
	echo "MBVM-BEGIN-MBOOT-REPLAY-RC"
	echo "$rc"
	echo "MBVM-END-MBOOT-REPLAY-RC"
	echo "MBVM-BEGIN-MBOOT-REPLAY-ERR"
	cat /tmp/replay.err
	echo "MBVM-END-MBOOT-REPLAY-ERR"

	# The path a real user takes: the guest reads its own TPM and verifies its own boot.
	# Each exit code is saved before anything else runs: the host checks it.
	/bin/mboot pcrs --json --tcti device:/dev/tpmrm0 >/tmp/pcrs.json 2>/tmp/pcrs.err
	rc=$?
	echo "MBVM-BEGIN-MBOOT-PCRS-RC"
	echo "$rc"
	echo "MBVM-END-MBOOT-PCRS-RC"
	echo "MBVM-BEGIN-MBOOT-PCRS"
	cat /tmp/pcrs.json
	echo "MBVM-END-MBOOT-PCRS"
	echo "MBVM-BEGIN-MBOOT-PCRS-ERR"
	cat /tmp/pcrs.err
	echo "MBVM-END-MBOOT-PCRS-ERR"
	/bin/mboot verify --json --tcti device:/dev/tpmrm0 --no-userspace-log >/tmp/verify.json 2>/tmp/verify.err
	rc=$?
	echo "MBVM-BEGIN-MBOOT-VERIFY-RC"
	echo "$rc"
	echo "MBVM-END-MBOOT-VERIFY-RC"
	echo "MBVM-BEGIN-MBOOT-VERIFY"
	cat /tmp/verify.json
	echo "MBVM-END-MBOOT-VERIFY"
	echo "MBVM-BEGIN-MBOOT-VERIFY-ERR"
	cat /tmp/verify.err
	echo "MBVM-END-MBOOT-VERIFY-ERR"
fi

# IMA (the inguest scenario, /extra/ima; the kernel runs with ima_policy=tcb): the second virtio
# disk is a FAT file system (tests/vm/lib.sh vm_ima_disk), mounted at /mnt/ima, on which IMA
# measures what root runs (the initramfs is tmpfs, which the tcb policy does not measure).
# /mnt/ima/known.sh runs before snapshot 1, /mnt/ima/unknown/true (busybox) after it and the
# first quote, before snapshot 2. ima_snapshot N: the binary and ASCII lists copied out (in
# base64, with their SHA-256), PCR 10 of every bank from sysfs and mboot pcrs, read right after
# the copy (nothing runs from the disk in between), then mboot ima replay of the copy against
# those values and mboot verify --ima-log on the TPM itself, each with its exit code.
ima_snapshot() {
	n=$1
	i=/sys/kernel/security/ima
	cat $i/binary_runtime_measurements >/tmp/ima"$n".bin
	cat $i/ascii_runtime_measurements >/tmp/ima"$n".txt
	echo "MBVM-BEGIN-IMA$n-PCR10"
	for bankdir in /sys/class/tpm/tpm0/pcr-*; do
		[ -r "$bankdir/10" ] && echo "${bankdir##*/pcr-} $(cat "$bankdir/10")"
	done
	echo "MBVM-END-IMA$n-PCR10"
	/bin/mboot pcrs --json --tcti device:/dev/tpmrm0 >/tmp/imapcrs"$n".json 2>/tmp/ima.err
	ima_say PCRS-RC $?
	for f in bin txt; do
		echo "MBVM-BEGIN-IMA$n-$f"; base64 /tmp/ima"$n".$f; echo "MBVM-END-IMA$n-$f"
		ima_say "$f-SHA256" "$(sha256sum /tmp/ima"$n".$f | cut -d' ' -f1)"
	done
	/bin/mboot ima replay /tmp/ima"$n".bin --pcrs /tmp/imapcrs"$n".json --json >/tmp/imareplay"$n".json 2>>/tmp/ima.err
	ima_say REPLAY-RC $?
	ima_say REPLAY "$(cat /tmp/imareplay"$n".json)"
	/bin/mboot verify --tcti device:/dev/tpmrm0 --no-userspace-log --ima-log /tmp/ima"$n".bin --json \
		>/tmp/imaverify"$n".json 2>>/tmp/ima.err
	ima_say VERIFY-RC $?
	ima_say VERIFY "$(cat /tmp/imaverify"$n".json)"
	ima_say ERR "$(cat /tmp/ima.err)"
}
ima_say() { echo "MBVM-BEGIN-IMA$n-$1"; echo "$2"; echo "MBVM-END-IMA$n-$1"; }
# ima_unknown: the unknown binary runs, then snapshot 2; once.
ima_unknown() {
	[ -e /extra/ima ] && [ ! -e /tmp/ima2.bin ] || return 0
	n=2
	/mnt/ima/unknown/true
	ima_say UNKNOWN-RC $?
	ima_snapshot 2
}
if [ -x /bin/mboot ] && [ -e /extra/ima ]; then
	n=1
	disk2
	mkdir -p /mnt/ima
	mount -t vfat -o ro /dev/vdb /mnt/ima
	ima_say MOUNT-RC $?
	/mnt/ima/known.sh >/tmp/known.out
	ima_say KNOWN-RC $?
	ima_snapshot 1
fi

# The tenant's attestation (inguest scenario, tests/vm/attest-host.py on the host's side of
# ttyS1): enroll, answer the verifier's challenge, quote with its nonce; each exit code printed.
# With /extra/ima, the unknown binary runs after that quote, and a second quote (the host's
# second nonce, NONCE2) carries the list that names it.
if [ -x /bin/mboot ] && [ -e /extra/attest ] && [ -c /dev/ttyS1 ]; then
	t=device:/dev/tpmrm0
	stty -F /dev/ttyS1 raw -echo
	exec 3<>/dev/ttyS1
	say_rc() { echo "MBVM-BEGIN-ATTEST-$1-RC"; echo "$2"; echo "MBVM-END-ATTEST-$1-RC"; }
	/bin/mboot attest enroll --tcti $t --ak-file /tmp/ak.json -o /tmp/request.json 2>/tmp/attest.err
	say_rc ENROLL $?
	echo "REQUEST $(base64 -w 0 /tmp/request.json)" >&3
	read -r tag challenge <&3
	read -r tag2 nonce <&3
	read -r tag3 nonce2 <&3
	if [ "$tag" = CHALLENGE ] && [ "$tag2" = NONCE ] && [ "$tag3" = NONCE2 ]; then
		echo "$challenge" | base64 -d >/tmp/challenge.json
		/bin/mboot attest activate --tcti $t --ak-file /tmp/ak.json -i /tmp/challenge.json \
			-o /tmp/response.json 2>>/tmp/attest.err
		say_rc ACTIVATE $?
		/bin/mboot quote --tcti $t --ak-file /tmp/ak.json --nonce "$nonce" --log "$log" \
			-o /tmp/evidence.json 2>>/tmp/attest.err
		say_rc QUOTE $?
		echo "RESPONSE $(base64 -w 0 /tmp/response.json)" >&3
		echo "EVIDENCE $(base64 -w 0 /tmp/evidence.json)" >&3
		if [ -e /extra/ima ]; then
			ima_unknown
			/bin/mboot quote --tcti $t --ak-file /tmp/ak.json --nonce "$nonce2" --log "$log" \
				-o /tmp/evidence2.json 2>>/tmp/attest.err
			say_rc QUOTE2 $?
			echo "EVIDENCE2 $(base64 -w 0 /tmp/evidence2.json)" >&3
		fi
	fi
	echo "DONE" >&3
	echo "MBVM-BEGIN-ATTEST-ERR"; cat /tmp/attest.err; echo "MBVM-END-ATTEST-ERR"
fi
[ -x /bin/mboot ] && ima_unknown

# The luks scenario (/extra/luks): the second virtio disk holds a LUKS2 volume. Without an mboot
# token yet (first boot) the guest enrolls one, sealed to this boot's PCRs 0,4,7,8,9, with the
# passphrase in /extra/luks-passphrase. Then it unlocks the disk exactly as Debian's cryptroot
# does with `keyscript=` in crypttab (cryptsetup's lib/cryptsetup/functions: run_keyscript |
# unlock_mapping), with the keyscript and token plugin mboot's initramfs-tools hook put here.
# Unlocked: a known 4 KiB block is written once, the caches dropped, and the block read back
# from the mapping (LUKS-DATA: its size and the block's SHA-256).
if [ -e /extra/luks ]; then
	say() { echo "MBVM-BEGIN-$1"; echo "$2"; echo "MBVM-END-$1"; }
	export DM_DISABLE_UDEV=1 # no udev here: libdevmapper makes the /dev/mapper nodes itself
	# an ASan build's plugin in cryptsetup: the sanitizer runtime first (tests/vm/lib.sh)
	if [ -s /extra/luks-preload ]; then
		LD_PRELOAD=$(cat /extra/luks-preload)
		export LD_PRELOAD ASAN_OPTIONS=detect_leaks=0
	fi
	mkdir -p /run/cryptsetup
	disk2
	dev=/dev/vdb
	if ! cryptsetup luksDump "$dev" 2>/dev/null | grep -q '^  [0-9]*: mboot$'; then
		/bin/mboot luks enroll "$dev" --pcrs 0,4,7,8,9 --key-file /extra/luks-passphrase \
			--tcti device:/dev/tpmrm0 >/tmp/enroll.out 2>&1
		say LUKS-ENROLL-RC $?
		say LUKS-ENROLL "$(cat /tmp/enroll.out)"
	fi
	ks=$(ls /usr/lib/mboot/luks-keyscript /usr/local/lib/mboot/luks-keyscript 2>/dev/null | head -n 1)
	export CRYPTTAB_NAME=mbootvm CRYPTTAB_SOURCE=$dev CRYPTTAB_KEY=none CRYPTTAB_TRIED=0 \
		CRYPTTAB_OPTIONS="luks,keyscript=$ks"
	echo "MBVM-BEGIN-LUKS-UNLOCK"
	"$ks" "$CRYPTTAB_KEY" | cryptsetup -T1 --type=luks --key-file=- open -- "$CRYPTTAB_SOURCE" "$CRYPTTAB_NAME" 2>&1
	rc=$?
	echo "MBVM-END-LUKS-UNLOCK"
	say LUKS-UNLOCK-RC $rc
	m=/dev/mapper/$CRYPTTAB_NAME
	if [ -b "$m" ]; then
		i=0
		while [ $i -lt 128 ]; do
			printf 'mboot-luks-test line %03d ......\n' $i
			i=$((i + 1))
		done >/tmp/block
		if ! dd if="$m" bs=4096 count=1 2>/dev/null | cmp -s - /tmp/block; then
			dd if=/tmp/block of="$m" bs=4096 count=1 conv=fsync 2>/dev/null
		fi
		sync
		echo 3 >/proc/sys/vm/drop_caches
		say LUKS-DATA "$(blockdev --getsize64 "$m") $(dd if="$m" bs=4096 count=1 2>/dev/null | sha256sum | cut -d' ' -f1)"
		cryptsetup close "$CRYPTTAB_NAME"
	fi
fi

# The kernel-update scenario (/extra/kupdate): the second virtio disk is a tar archive from the
# host. With update/ in it (the first boot) this machine is set up as it booted (the ESP's stub
# config at /boot/efi/EFI/BOOT/grub.cfg, /boot/grub/grub.cfg, /etc/default/mboot), a secret is
# sealed to this boot's PCRs 0-9, the GRUB configs that booted are kept (as
# mboot-grub-booted.service does at startup), then the kernel update happens as Debian does it:
# the package's kernel and initramfs-tools' initrd land in /boot, update-grub's new grub.cfg
# replaces the old, and run-parts runs /etc/kernel/postinst.d, whose last hook is mboot's. With
# disk.sealed in it (the second and third boots): that file is unsealed. Every step's exit code is printed.
if [ -e /extra/kupdate ]; then
	kup() { echo "MBVM-BEGIN-KUP-$1"; cat "$2"; echo "MBVM-END-KUP-$1"; }
	kup_rc() { echo "MBVM-BEGIN-KUP-$1-RC"; echo "$2"; echo "MBVM-END-KUP-$1-RC"; }
	disk2
	in=/tmp/kup-in
	mkdir -p $in
	tar -xf /dev/vdb -C $in 2>/tmp/tar.err
	kup_rc TAR $?
	if [ -d $in/update ]; then
		u=$in/update
		mkdir -p /boot/efi/EFI/BOOT /boot/grub /etc/mboot/sealed.d /etc/default /var/lib
		cp $u/esp-grub.cfg /boot/efi/EFI/BOOT/grub.cfg
		cp $u/boot-grub.cfg /boot/grub/grub.cfg
		cp $u/default-mboot /etc/default/mboot
		mboot seal --pcrs 0,1,2,3,4,5,6,7,8,9 -i $u/secret -o /etc/mboot/sealed.d/disk.sealed >/tmp/seal.out 2>&1
		kup_rc SEAL $?
		kup SEAL-OUT /tmp/seal.out
		base64 /etc/mboot/sealed.d/disk.sealed >/tmp/sealed-before.b64
		kup SEALED-BEFORE /tmp/sealed-before.b64
		mboot grub keep-booted --json >/tmp/keep.json 2>/tmp/keep.err
		kup_rc KEEP $?
		kup KEEP /tmp/keep.json
		kup KEEP-ERR /tmp/keep.err
		v=$(cat $u/kver)
		cp $u/vmlinuz /boot/vmlinuz-"$v"
		cp $u/initrd.img /boot/initrd.img-"$v"
		cp $u/grub.cfg /boot/grub/grub.cfg
		/etc/kernel/postinst.d/zzz-mboot-reseal "$v" /boot/vmlinuz-"$v" >/tmp/hook.out 2>/tmp/hook.err
		kup_rc HOOK $?
		kup HOOK-ERR /tmp/hook.err
		# the hook's prediction made again, with its arguments (/etc/default/mboot's
		# MBOOT_PREDICT_ARGS, one a line), printed for the host to hold against the next boot
		. /etc/default/mboot
		IFS='
'
		set -f
		# shellcheck disable=SC2086 # one argument a line, as the hook splits them
		set -- ${MBOOT_PREDICT_ARGS:-}
		unset IFS
		set +f
		mboot predict --kernel /boot/vmlinuz-"$v" --initrd /boot/initrd.img-"$v" "$@" --json \
			>/tmp/predict.json 2>/tmp/predict.err
		kup_rc PREDICT $?
		kup PREDICT /tmp/predict.json
		kup PREDICT-ERR /tmp/predict.err
		# and the hook's third state: the running kernel picked from the new GRUB menu (its
		# MBOOT_FALLBACK_KERNEL default; not in /boot here, so today's kernel digests stay)
		mboot predict "$@" --grub-entry-kernel /boot/vmlinuz-"$(uname -r)" --json \
			>/tmp/predict-fallback.json 2>/tmp/predict-fallback.err
		kup_rc PREDICT-FALLBACK $?
		kup PREDICT-FALLBACK /tmp/predict-fallback.json
		kup PREDICT-FALLBACK-ERR /tmp/predict-fallback.err
		base64 /etc/mboot/sealed.d/disk.sealed >/tmp/sealed.b64
		kup SEALED /tmp/sealed.b64
	fi
	if [ -f $in/disk.sealed ]; then
		mboot unseal -i $in/disk.sealed -o /tmp/secret.out >/tmp/unseal.out 2>&1
		kup_rc UNSEAL $?
		kup UNSEAL-OUT /tmp/unseal.out
		[ -f /tmp/secret.out ] && sha256sum /tmp/secret.out | cut -d' ' -f1 >/tmp/secret.sha256
		kup UNSEAL-SHA256 /tmp/secret.sha256
	fi
fi

# The uki and secureboot scenarios (/extra/unseal): the second virtio disk is a tar archive from the host, as in
# the kernel-update scenario, of secrets the host sealed with this TPM to the PCRs it predicted
# for this boot. Each NAME.sealed is unsealed; its exit code, mboot's output and the SHA-256 of
# what it released are printed (UNSEAL-NAME-RC, UNSEAL-NAME-OUT, UNSEAL-NAME-SHA256).
if [ -e /extra/unseal ]; then
	uns() { echo "MBVM-BEGIN-UNSEAL-$1"; echo "$2"; echo "MBVM-END-UNSEAL-$1"; }
	disk2
	in=/tmp/unseal-in
	mkdir -p $in
	tar -xf /dev/vdb -C $in 2>/tmp/tar.err
	uns TAR-RC $?
	for f in $in/*.sealed; do
		[ -f "$f" ] || continue
		n=$(basename "$f" .sealed)
		mboot unseal -i "$f" -o /tmp/unsealed-"$n" >/tmp/unseal.out 2>&1
		uns "$n-RC" $?
		uns "$n-OUT" "$(cat /tmp/unseal.out)"
		uns "$n-SHA256" "$([ -f /tmp/unsealed-"$n" ] && sha256sum /tmp/unsealed-"$n" | cut -d' ' -f1)"
	done
fi

echo "MBVM-DONE"
sync
poweroff -f
