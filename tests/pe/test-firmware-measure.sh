#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What does UEFI firmware measure? Boot OVMF (EDK2) under QEMU with a swtpm, starting a tiny
# EFI application (tcg2-log-dump.c, built here with gnu-efi) that prints the firmware's own
# TCG event log; the EV_EFI_BOOT_SERVICES_APPLICATION event in PCR 4 is the firmware's
# Authenticode digest of that application's file. It must equal 'mboot hash --authenticode'
# in every bank:
#  1. unsigned, length not a multiple of 8: firmware does not pad (pesign -h agrees;
#     sbsign, osslsigncode and pesign -P pad), so mboot's default must be the unpadded digest;
#  2. signed, with data appended after the certificate table: firmware ignores the table's
#     offset and hashes up to file size minus the table size (shim and osslsigncode refuse).
set -eu -o pipefail

M=${MBOOT:?}
SRC=${MB_SOURCE_ROOT:?}/tests/pe
T=$(mktemp -d)
qpid="" spid=""
cleanup() {
	[ -n "$qpid" ] && kill "$qpid" 2>/dev/null
	[ -n "$spid" ] && kill "$spid" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }
CODE=/usr/share/OVMF/OVMF_CODE_4M.fd
VARS=/usr/share/OVMF/OVMF_VARS_4M.fd
for f in /usr/include/efi/efi.h /usr/lib/crt0-efi-x86_64.o "$CODE" "$VARS"; do
	[ -f "$f" ] || fail "$f missing (packages gnu-efi, ovmf)"
done

# the application (gnu-efi's documented build: -fpic ELF, its linker script, objcopy to PE32+)
gcc -c -O2 -I/usr/include/efi -I/usr/include/efi/x86_64 -fpic -ffreestanding -fno-stack-protector \
	-fno-stack-check -fshort-wchar -mno-red-zone -maccumulate-outgoing-args -DGNU_EFI_USE_MS_ABI \
	-o "$T/dump.o" "$SRC/tcg2-log-dump.c"
ld -shared -Bsymbolic -nostdlib -znocombreloc -L/usr/lib -T /usr/lib/elf_x86_64_efi.lds \
	/usr/lib/crt0-efi-x86_64.o "$T/dump.o" -o "$T/dump.so" -lefi -lgnuefi
objcopy -j .text -j .sdata -j .data -j .rodata -j .dynamic -j .dynsym -j .rel -j .rela -j '.rel.*' \
	-j '.rela.*' -j .reloc --target efi-app-x86_64 --subsystem=10 "$T/dump.so" "$T/dump.efi"

boot() { # boot EFI_APP: prints the firmware's event log to $T/fw.log
	local app=$1 d=$T/vm i
	rm -rf "$d"; mkdir -p "$d/tpm"
	mkfs.fat -C "$d/esp.img" 8192 >/dev/null
	mmd -i "$d/esp.img" ::/EFI ::/EFI/BOOT
	mcopy -i "$d/esp.img" "$app" ::/EFI/BOOT/BOOTX64.EFI
	cp "$VARS" "$d/vars.fd"
	swtpm socket --tpm2 --tpmstate dir="$d/tpm" --ctrl type=unixio,path="$d/swtpm.sock" --terminate \
		--daemon --pid file="$d/swtpm.pid"
	spid=$(cat "$d/swtpm.pid")
	qemu-system-x86_64 -machine q35 -m 256 -display none -monitor none -serial file:"$d/serial.log" \
		-drive if=pflash,format=raw,unit=0,readonly=on,file="$CODE" \
		-drive if=pflash,format=raw,unit=1,file="$d/vars.fd" \
		-drive file="$d/esp.img",format=raw,if=virtio \
		-chardev socket,id=chrtpm,path="$d/swtpm.sock" -tpmdev emulator,id=tpm0,chardev=chrtpm \
		-device tpm-tis,tpmdev=tpm0 -net none 2>"$d/qemu.err" &
	qpid=$!
	for ((i = 0; i < 300; i++)); do
		grep -aq 'MBLOG-END\|MBLOG-ERROR\|Exception' "$d/serial.log" 2>/dev/null && break
		sleep 1
	done
	kill "$qpid" 2>/dev/null || true
	wait "$qpid" 2>/dev/null || true
	qpid=
	kill "$spid" 2>/dev/null || true
	spid=
	grep -aq 'MBLOG-END' "$d/serial.log" || fail "no event log from the VM: $(tr -d '\033' <"$d/serial.log" | tail -5)"
	grep -ao 'MBLOG:[0-9a-f]*' "$d/serial.log" | cut -c7- | tr -d '\n' | xxd -r -p >"$T/fw.log"
}

check() { # check LABEL EFI_APP [mboot hash options]
	local label=$1 app=$2 ev; shift 2
	boot "$app"
	ev=$("$M" log show --json --pcr 4 "$T/fw.log" |
		jq -c '[.events[] | select(.type == "EV_EFI_BOOT_SERVICES_APPLICATION")] | last | .digests')
	[ -n "$ev" ] && [ "$ev" != null ] || fail "$label: no EV_EFI_BOOT_SERVICES_APPLICATION in PCR 4"
	for alg in sha1 sha256 sha384 sha512; do
		want=$(jq -r ".$alg" <<<"$ev")
		got=$("$M" hash --authenticode --alg "$alg" --json "$@" "$app" | jq -r ".files[0].digests.$alg")
		[ "$got" = "$want" ] || fail "$label: $alg firmware $want, mboot $got"
	done
	echo "  firmware sha256 $(jq -r .sha256 <<<"$ev") = mboot"
}

# 1. unsigned, not 8-aligned
cp "$T/dump.efi" "$T/odd.efi"
[ $(($(stat -c %s "$T/odd.efi") % 8)) != 0 ] || printf 'xyz' >>"$T/odd.efi"
check "unsigned, length % 8 = $(($(stat -c %s "$T/odd.efi") % 8))" "$T/odd.efi"
padded=$("$M" hash --authenticode --pad --alg sha256 --json "$T/odd.efi" | jq -r '.files[0].digests.sha256')
[ "$("$M" hash --authenticode --alg sha256 --json "$T/odd.efi" | jq -r '.files[0].digests.sha256')" = \
  "$(pesign -h -i "$T/odd.efi" | awk '{print $2}')" ] || fail "pesign -h differs"
[ "$padded" = "$(pesign -h -P -i "$T/odd.efi" | awk '{print $2}')" ] || fail "pesign -h -P differs"
[ "$padded" != "$("$M" hash --authenticode --alg sha256 --json "$T/odd.efi" | jq -r '.files[0].digests.sha256')" ] ||
	fail "padding made no difference"
ok "OVMF measured the unpadded digest of an unsigned image of odd length (= mboot default = pesign -h; != --pad = pesign -P)"

# 2. signed, data after the certificate table
openssl req -new -x509 -newkey rsa:2048 -nodes -keyout "$T/k.pem" -out "$T/c.pem" -days 1 \
	-subj /CN=mboot-test 2>/dev/null
sbsign --key "$T/k.pem" --cert "$T/c.pem" --output "$T/signed.efi" "$T/dump.efi" 2>/dev/null
head -c 40 /dev/urandom >>"$T/signed.efi"
"$M" hash --authenticode --info --json "$T/signed.efi" | jq -e '.files[0].pe.cert_table_at_end == false' >/dev/null ||
	fail "expected a certificate table not at the end"
check "signed, 40 bytes after the certificate table" "$T/signed.efi"
[ "$("$M" hash --authenticode --alg sha256 --json "$T/signed.efi" | jq -r '.files[0].digests.sha256')" = \
  "$(pesign -h -i "$T/signed.efi" | awk '{print $2}')" ] || fail "pesign -h differs"
ok "OVMF measured a signed image with data after its certificate table as mboot and pesign -h do"
