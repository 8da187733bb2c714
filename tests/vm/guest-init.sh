#!/bin/busybox sh
# shellcheck shell=dash
# /init of the test initramfs (runs in the guest, busybox only). Prints, between markers that
# the host parses (tests/vm/lib.sh vm_extract):
#   LOG          base64 of /sys/kernel/security/tpm0/binary_bios_measurements
#   LOG-SHA256   its SHA-256, so the host can prove the serial transfer was exact
#   PCRS         "<bank> <index> <hex>" for every PCR of every bank in /sys/class/tpm/tpm0
#   MBOOT-REPLAY `mboot log replay --json` of the kernel's log, when /bin/mboot is present
#   MBOOT-PCRS, MBOOT-VERIFY  `mboot pcrs --json` and `mboot verify --json` on the guest's own TPM,
#                each with its exit code (-RC) and stderr (-ERR)
#   ATTEST-*     exit codes of attest enroll / activate / quote when /extra/attest asks for them
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

if [ -x /bin/mboot ]; then
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

# The tenant's attestation (inguest scenario, tests/vm/attest-host.py on the host's side of
# ttyS1): enroll, answer the verifier's challenge, quote with its nonce; each exit code printed.
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
	if [ "$tag" = CHALLENGE ] && [ "$tag2" = NONCE ]; then
		echo "$challenge" | base64 -d >/tmp/challenge.json
		/bin/mboot attest activate --tcti $t --ak-file /tmp/ak.json -i /tmp/challenge.json \
			-o /tmp/response.json 2>>/tmp/attest.err
		say_rc ACTIVATE $?
		/bin/mboot quote --tcti $t --ak-file /tmp/ak.json --nonce "$nonce" --log "$log" \
			-o /tmp/evidence.json 2>>/tmp/attest.err
		say_rc QUOTE $?
		echo "RESPONSE $(base64 -w 0 /tmp/response.json)" >&3
		echo "EVIDENCE $(base64 -w 0 /tmp/evidence.json)" >&3
	fi
	echo "DONE" >&3
	echo "MBVM-BEGIN-ATTEST-ERR"; cat /tmp/attest.err; echo "MBVM-END-ATTEST-ERR"
fi

echo "MBVM-DONE"
sync
poweroff -f
