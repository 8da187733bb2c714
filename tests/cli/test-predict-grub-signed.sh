#!/bin/bash
# predict on Debian's Secure Boot chain (shim + the signed GRUB, tests/data/grub-signed, a real
# boot: PROVENANCE there). That GRUB runs its built-in config `normal (memdisk)/grub.cfg` and the
# memdisk's grub.cfg before the ESP's (PCR 8: four strings, the memdisk config in no PCR 9 event).
# - A grub.cfg whose linux line has one more word, today's config kept, --grub-image the GRUB
#   that booted (Debian's grub-efi-amd64-signed, kept xz-compressed there, its sha256 checked):
#   PCR 8 predicted, equal to the sha256 extend python3 does here of the strings
#   GRUB measures (the memdisk config's four, then each command of the config and the kernel
#   command line), first checked against today's PCR 8 as the TPM read it (pcrs.json).
# - Without --grub-image: unpredictable, the reason names --grub-image (exit 1); with --efi IMG=IMG
#   instead (its OLD is the GRUB the model starts as): PCR 8 predicted as with --grub-image.
# - $cmdpath: a new config whose command uses it (`set mboot_dir=$cmdpath`): PCR 8 predicted,
#   the sha256 extend python3 does here with $cmdpath as GRUB sets it: the config's device and the
#   folder of the file named by the device path of the PCR 4 application whose sha256 is the
#   image's Authenticode digest (pesign -h), read from tpm2_eventlog's output (here shim loaded
#   \EFI\BOOT\grubx64.efi: (hd0,gpt1)/EFI/BOOT, not the prefix's /EFI/debian). The same log with
#   that device path's file-path node made another media node (python3 rewrites its subtype; PCR 4
#   does not digest the event data): $cmdpath unknown, PCR 8 unpredictable, the reason names it.
# - Another GRUB image (grub-mkimage's, with Debian's prefix and built-in config): refused,
#   exit 2, the reason says it is not the GRUB that booted; as the NEW of --efi IMG=OTHER (a GRUB
#   update to an image without the memdisk): PCRs 8 and 9 unpredictable, named, PCR 4 changed.
set -u
M=${MBOOT:?}
D=${MB_TESTDATA:?}/grub-signed
CFG='(hd0,gpt1)/EFI/debian/grub.cfg'
VER=$(sed 's/^grub-efi-amd64-signed_//' "$D/grub-package")
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
IMG=$W/grubx64.efi.signed
xz -dc "$D/grubx64.efi.signed.xz" >"$IMG" || { echo "FAIL: xz -d $D/grubx64.efi.signed.xz"; exit 1; }
[ "$(sha256sum <"$IMG" | cut -c1-64)" = 78313ff24688c8b2e1d4f4e1eff13236b2bd29b0f76ba749fd7fff4d305a1d94 ] ||
	{ echo "FAIL: $D/grubx64.efi.signed.xz is not grub-efi-amd64-signed $VER's image (PROVENANCE)"; exit 1; }
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }

# PCR 8 (sha256) as GRUB extends it: sha256 of each string without a NUL, from zero
cat >"$W/pcr8.py" <<'PY'
import hashlib, sys
pre = '(hd0,gpt1)/EFI/debian'
s = ['[ -z %s -o ! -e %s ]' % (pre, pre), '[ -e %s/x86_64-efi/grub.cfg ]' % pre, '[ -e %s/grub.cfg ]' % pre,
     'source %s/grub.cfg' % pre]
for line in open(sys.argv[1]):
    line = line.strip()
    if len(sys.argv) > 2:
        line = line.replace('$cmdpath', sys.argv[2])  # GRUB measures the expanded command
    if not line:
        continue
    s.append(line)
    if line.split()[0] in ('linux', 'linuxefi'):
        s.append(line.split(None, 1)[1])  # kernel_cmdline: the path and the arguments
v = bytes(32)
for t in s:
    v = hashlib.sha256(v + hashlib.sha256(t.encode()).digest()).digest()
print(v.hex())
PY
today=$(python3 "$W/pcr8.py" "$D/grub.cfg")
tpm=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sha256"]["8"])' "$D/pcrs.json")
[ "$today" = "$tpm" ] && ok "the hand-built strings give today's PCR 8 ($tpm)" ||
	bad "the hand-built strings give $today, the TPM read $tpm"
sed 's|rdinit=/init|rdinit=/init mboot.extra=1|' "$D/grub.cfg" >"$W/new.cfg"
grep -q 'mboot.extra=1' "$W/new.cfg" || bad "no linux line changed"
want=$(python3 "$W/pcr8.py" "$W/new.cfg")
args=(predict --log "$D/log.bin" --grub-booted-dir '' --grub-cfg-booted "$CFG=$D/grub.cfg" --grub-cfg "$CFG=$W/new.cfg")

"$M" "${args[@]}" >"$W/out" 2>"$W/err"
rc=$?
[ $rc = 1 ] && grep -q 'PCR 8 cannot be predicted.*--grub-image' "$W/err" && ! grep -q '^ *8 *:' "$W/out" &&
	ok "without the image: PCR 8 unpredictable, --grub-image named" || { bad "without the image: exit $rc"; cat "$W/err"; }

{
	"$M" "${args[@]}" --grub-image "$IMG" --json >"$W/out.json" 2>"$W/err"
	rc=$?
	got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["banks"]["sha256"]["8"])' "$W/out.json" 2>/dev/null)
	[ $rc = 0 ] && [ "${got,,}" = "$want" ] && ok "with --grub-image: PCR 8 predicted, $want" ||
		{ bad "with --grub-image: exit $rc, PCR 8 '$got', want $want"; cat "$W/err"; }
}

# the same image through --efi OLD=NEW (GRUB not updated): OLD is the GRUB the model starts as
{
	"$M" "${args[@]}" --efi "$IMG=$IMG" --json >"$W/out.json" 2>"$W/err"
	rc=$?
	got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["banks"]["sha256"]["8"])' "$W/out.json" 2>/dev/null)
	[ $rc = 0 ] && [ "${got,,}" = "$want" ] && ok "with --efi IMG=IMG in place of --grub-image: PCR 8 predicted, $want" ||
		{ bad "with --efi IMG=IMG: exit $rc, PCR 8 '$got', want $want"; cat "$W/err"; }
}

# $cmdpath, as GRUB sets it from the device path the firmware measured with the image
cat >"$W/cmdpath.py" <<'PY'
import re, sys, yaml
log, digest, device = yaml.safe_load(open(sys.argv[1])), sys.argv[2].lower(), sys.argv[3]
ev = [e for e in log['events'] if e.get('EventType') == 'EV_EFI_BOOT_SERVICES_APPLICATION' and
      any(d['AlgorithmId'] == 'sha256' and d['Digest'].lower() == digest for d in e['Digests'])][0]
dp, parts = str(ev['Event']['DevicePath']), []
if re.fullmatch('([0-9a-fA-F]{2})*', dp):  # tpm2_eventlog 5.4: the bytes; walk the nodes
    b = bytes.fromhex(dp)
    while len(b) >= 4 and b[0] != 0x7f:
        n = int.from_bytes(b[2:4], 'little')
        if (b[0], b[1]) == (4, 4):  # media, file path: UTF-16LE, NUL-terminated
            parts.append(b[4:n].decode('utf-16-le').split('\0')[0])
        b = b[n:]
else:  # a tpm2_eventlog built with efivar: the text, file-path nodes have no "(...)"
    parts = [p for p in dp.split('/') if '(' not in p]
path = re.sub('/+', '/', '/' + '/'.join(parts).replace('\\', '/'))
print(device + path.rsplit('/', 1)[0])
PY
{
	cmdpath=$(python3 "$W/cmdpath.py" <(tpm2_eventlog "$D/log.bin") "$(pesign -h -i "$IMG" | awk '/^hash:/ { print $2 }')" \
		"${CFG%%)*})")
	[ "$cmdpath" = '(hd0,gpt1)/EFI/BOOT' ] || bad "\$cmdpath from tpm2_eventlog: '$cmdpath'"
	awk '/^ *linux/ { print "set mboot_dir=$cmdpath" } { print }' "$D/grub.cfg" >"$W/cmdpath.cfg"
	grep -q 'mboot_dir' "$W/cmdpath.cfg" || bad "no set line added"
	want_cp=$(python3 "$W/pcr8.py" "$W/cmdpath.cfg" "$cmdpath")
	"$M" predict --log "$D/log.bin" --grub-booted-dir '' --grub-cfg-booted "$CFG=$D/grub.cfg" \
		--grub-cfg "$CFG=$W/cmdpath.cfg" --grub-image "$IMG" --json >"$W/out.json" 2>"$W/err"
	rc=$?
	got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["banks"]["sha256"]["8"])' "$W/out.json" 2>/dev/null)
	[ $rc = 0 ] && [ "${got,,}" = "$want_cp" ] && ok "a command using \$cmdpath ($cmdpath): PCR 8 predicted, $want_cp" ||
		{ bad "a command using \$cmdpath: exit $rc, PCR 8 '$got', want $want_cp"; cat "$W/err"; }
	python3 - "$D/log.bin" "$W/nofile.bin" <<'PY'
import sys
b = open(sys.argv[1], 'rb').read()
node = bytes.fromhex('04043000') + '\\EFI\\BOOT\\grubx64.efi\0'.encode('utf-16-le')
assert b.count(node) == 1
open(sys.argv[2], 'wb').write(b.replace(node, bytes.fromhex('0405') + node[2:]))
PY
	"$M" predict --log "$W/nofile.bin" --grub-booted-dir '' --grub-cfg-booted "$CFG=$D/grub.cfg" \
		--grub-cfg "$CFG=$W/cmdpath.cfg" --grub-image "$IMG" --json >"$W/out.json" 2>"$W/err"
	rc=$?
	res=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); u=j["unpredictable"]
print(sorted(u), "8" in j["banks"]["sha256"], "$cmdpath" in u.get("8", ""))' "$W/out.json" 2>/dev/null)
	[ $rc = 1 ] && [ "$res" = "['8'] False True" ] &&
		ok "no file-path node in the image's event: \$cmdpath unknown, PCR 8 unpredictable, named" ||
		{ bad "no file-path node: exit $rc, $res"; cat "$W/err"; }
}

# another GRUB image: Debian's prefix and built-in config, but not what booted
if command -v grub-mkimage >/dev/null && [ -d /usr/lib/grub/x86_64-efi ]; then
	printf 'normal (memdisk)/grub.cfg\n' >"$W/embedded.cfg"
	grub-mkimage -O x86_64-efi -o "$W/other.efi" -p /EFI/debian -c "$W/embedded.cfg" normal tpm ||
		bad "grub-mkimage"
	"$M" "${args[@]}" --grub-image "$W/other.efi" >"$W/out" 2>"$W/err"
	rc=$?
	[ $rc = 2 ] && grep -q 'not the GRUB that booted' "$W/err" && [ ! -s "$W/out" ] &&
		ok "another GRUB image: refused (exit 2)" || { bad "another GRUB image: exit $rc"; cat "$W/err"; }
	# a GRUB update to it (--efi TODAY=OTHER): it has no memdisk, so it runs other commands
	# before the ESP's config: PCRs 8 and 9 unpredictable, named; PCR 4 changed
	"$M" "${args[@]}" --efi "$IMG=$W/other.efi" --json >"$W/out.json" 2>"$W/err"
	rc=$?
	res=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); u=j["unpredictable"]
print(sorted(u), j["changed"], "8" in j["banks"]["sha256"], all("another memdisk" in u[k] for k in u))' "$W/out.json" 2>/dev/null)
	[ $rc = 1 ] && [ "$res" = "['8', '9'] [4] False True" ] &&
		ok "--efi TODAY=another GRUB image: PCRs 8 and 9 unpredictable (another memdisk), PCR 4 changed" ||
		{ bad "--efi TODAY=another GRUB image: exit $rc, $res"; cat "$W/err"; }
else
	bad "missing: grub-mkimage (grub-efi-amd64-bin)"
fi
exit $((fails > 0))
