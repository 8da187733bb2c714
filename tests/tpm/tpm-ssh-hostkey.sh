#!/bin/bash
# mboot ssh-hostkey against a swtpm holding a real corpus boot: host keys made by ssh-keygen
# are sealed (clear files overwritten and gone, no key bytes in the sealed files), unsealed
# into a tmpfs byte for byte, and a real sshd (on 127.0.0.1, test config) presents exactly
# them (ssh-keyscan, ssh-keygen -lf). On another boot (init=/bin/sh on the kernel command
# line): unseal exits 1 naming PCR 8 and the event, the folder holds no key, and that sshd
# refuses to start. Tampered and malformed sealed files exit 2.
. "${MB_TPM_TESTS:-$(dirname "$0")}/swtpm-env.sh"
M=${MBOOT:?}
C=${MB_TESTDATA:?}/corpus
LOG=$C/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9

# sshd: scripts/install-deps unpacks openssh-server there (no service on this machine).
SSHD=${MB_SSHD:-}
for s in /opt/mboot-test/openssh-server/usr/sbin/sshd "$(command -v sshd)" /usr/sbin/sshd; do
	[ -z "$SSHD" ] && [ -x "$s" ] && SSHD=$s
done
[ -n "$SSHD" ] || fail "no sshd: run scripts/install-deps (it unpacks openssh-server into /opt/mboot-test)"
command -v ssh-keyscan >/dev/null || fail "no ssh-keyscan (openssh-client)"

# The clear keys go to a tmpfs of our own: a folder in /dev/shm, removed on exit.
SHM=$(mktemp -d /dev/shm/mboot-ssh-test.XXXXXX)
SSHD_PID=
cleanup() {
	[ -n "$SSHD_PID" ] && kill "$SSHD_PID" 2>/dev/null
	rm -rf "$SHM"
	swtpm_cleanup
}
trap cleanup EXIT
[ "$(stat -f -c %T "$SHM")" = tmpfs ] || fail "/dev/shm is not tmpfs here"
expect_rc() { # expect_rc WANT WHAT: checks $rc
	[ "$rc" -eq "$1" ] || fail "$2: exit $rc, expected $1: $(cat "$WORK/err" 2>/dev/null)"
}

swtpm_start
swtpm_banks "sha1 sha256"
boot() {
	swtpm_reset
	"$M" log extend --tcti "$TCTI" "$1" >"$WORK/extend" 2>&1 || fail "log extend $1: $(cat "$WORK/extend")"
}
boot "$LOG"

# 1. seal: three host keys as a Debian machine has them; copies kept only in the test's folder.
D=$WORK/etc-ssh
mkdir -p "$D" "$WORK/orig"
ssh-keygen -q -t ed25519 -N '' -C root@good -f "$D/ssh_host_ed25519_key" || fail "ssh-keygen ed25519"
ssh-keygen -q -t ecdsa -N '' -C root@good -f "$D/ssh_host_ecdsa_key" || fail "ssh-keygen ecdsa"
ssh-keygen -q -t rsa -b 3072 -N '' -C root@good -f "$D/ssh_host_rsa_key" || fail "ssh-keygen rsa"
cp "$D"/ssh_host_* "$WORK/orig/"
types="ed25519 ecdsa rsa"

"$M" ssh-hostkey seal --dir "$D" 2>"$WORK/err"; rc=$?
expect_rc 2 "seal without --pcrs"
"$M" ssh-hostkey seal --dir "$WORK/nowhere" --pcrs 7 2>"$WORK/err"; rc=$?
expect_rc 2 "seal of a missing folder"
"$M" ssh-hostkey seal --dir "$D" --pcrs 0,4,7,8,9 --log "$LOG" >"$WORK/out" 2>"$WORK/err" ||
	fail "ssh-hostkey seal: $(cat "$WORK/err")"
for t in $types; do
	k=ssh_host_${t}_key
	[ -e "$D/$k" ] && fail "the clear key $k is still there"
	cmp -s "$D/$k.pub" "$WORK/orig/$k.pub" || fail "$k.pub was not kept as it was"
	[ "$(stat -c %a "$D/$k.mboot")" = 600 ] || fail "$k.mboot mode $(stat -c %a "$D/$k.mboot")"
	jq -e '.kind == "mboot-envelope" and .version == 1 and .cipher == "aes-256-gcm" and .sealed.kind == "mboot-sealed"' \
		"$D/$k.mboot" >/dev/null || fail "$k.mboot: $(head -c 300 "$D/$k.mboot")"
	[ "$(jq -r .label "$D/$k.mboot")" = "$(cat "$WORK/orig/$k.pub")" ] || fail "$k.mboot's label is not the .pub line"
	[ "$(jq -r '.sealed.pcrs.selection | join(",")' "$D/$k.mboot")" = 0,4,7,8,9 ] || fail "$k.mboot: PCR selection"
	# No line of the key file's base64 is in the sealed file but its label (the private key
	# file holds the public key too, which may encode to the same text as the .pub line).
	jq 'del(.label)' "$D/$k.mboot" >"$WORK/nolabel"
	while read -r line; do
		if grep -qF -- "${line:0:24}" "$WORK/nolabel"; then fail "$k.mboot holds a line of the clear key: ${line:0:24}"; fi
	done < <(grep -v -- '-----' "$WORK/orig/$k")
	grep -q "^$D/$k -> $D/$k.mboot" "$WORK/out" || fail "seal did not report $k: $(cat "$WORK/out")"
done
echo "ok: seal: 3 keys sealed (0600, label = .pub), clear keys gone, .pub kept, no key bytes in the sealed files"

"$M" ssh-hostkey seal --dir "$D" --pcrs 7 2>"$WORK/err"; rc=$?
expect_rc 2 "seal with no clear key left"
grep -q "nothing to seal" "$WORK/err" || fail "no 'nothing to seal': $(cat "$WORK/err")"
cp "$WORK/orig/ssh_host_ed25519_key" "$D/"
"$M" ssh-hostkey seal --dir "$D" --pcrs 7 2>"$WORK/err"; rc=$?
expect_rc 2 "seal over an existing sealed file"
cmp -s "$D/ssh_host_ed25519_key" "$WORK/orig/ssh_host_ed25519_key" || fail "a refused seal touched the clear key"
rm "$D/ssh_host_ed25519_key"
echo "ok: seal refuses (exit 2): no --pcrs, a missing folder, nothing to seal, an existing sealed file"

# Sealed to values of another boot (--values): written, but not unsealable here, so the
# clear key is kept and seal exits 1.
mkdir "$WORK/other"
ssh-keygen -q -t ed25519 -N '' -f "$WORK/other/ssh_host_ed25519_key" || fail "ssh-keygen"
"$M" pcrs --json >"$WORK/now.json" || fail "mboot pcrs --json"
jq '.banks.sha256["7"] = "'"$(printf '%064x' 7)"'"' "$WORK/now.json" >"$WORK/next.json"
"$M" ssh-hostkey seal --dir "$WORK/other" --pcrs 0,7 --values "$WORK/next.json" >/dev/null 2>"$WORK/err"; rc=$?
expect_rc 1 "seal to another boot's values"
[ -s "$WORK/other/ssh_host_ed25519_key" ] || fail "the clear key was removed though it did not unseal"
[ -s "$WORK/other/ssh_host_ed25519_key.mboot" ] || fail "no sealed file for the other boot"
grep -q "so the clear key is kept" "$WORK/err" || fail "no word on the kept key: $(cat "$WORK/err")"
echo "ok: seal to another boot's --values: sealed file written, clear key kept, exit 1"

# Sealed to signed policies: seal needs a signature for this boot (its round trip); unseal
# needs one whose values the PCRs hold.
A=$WORK/auth
mkdir -p "$A/keys"
openssl genrsa -out "$A/rsa.pem" 2048 2>/dev/null || fail "openssl genrsa"
openssl rsa -in "$A/rsa.pem" -pubout -out "$A/rsa.pub" 2>/dev/null || fail "openssl rsa -pubout"
ssh-keygen -q -t ed25519 -N '' -f "$A/keys/ssh_host_ed25519_key" || fail "ssh-keygen"
cp "$A/keys/ssh_host_ed25519_key" "$A/orig"
"$M" pcrs --json >"$A/now.json" || fail "mboot pcrs --json"
"$M" policy sign --key "$A/rsa.pem" --pcrs 0,4,7,8,9 --values "$A/now.json" -o "$A/now.sig" >/dev/null || fail "policy sign"
"$M" ssh-hostkey seal --dir "$A/keys" --authorized-by "$A/rsa.pub" 2>"$WORK/err"; rc=$?
expect_rc 2 "seal --authorized-by without --signature"
[ -e "$A/keys/ssh_host_ed25519_key.mboot" ] && fail "a sealed file was written without a signature"
"$M" ssh-hostkey seal --dir "$A/keys" --authorized-by "$A/rsa.pub" --signature "$A/now.sig" >/dev/null 2>"$WORK/err" ||
	fail "seal --authorized-by: $(cat "$WORK/err")"
[ -e "$A/keys/ssh_host_ed25519_key" ] && fail "--authorized-by: the clear key is still there"
[ "$(jq -r .sealed.policy.kind "$A/keys/ssh_host_ed25519_key.mboot")" = authorize ] || fail "--authorized-by: policy kind"
"$M" ssh-hostkey unseal --dir "$A/keys" --to "$SHM/auth" 2>"$WORK/err"; rc=$?
expect_rc 2 "unseal of a signed-policy key without --signature"
"$M" ssh-hostkey unseal --dir "$A/keys" --to "$SHM/auth" --signature "$A/now.sig" >/dev/null 2>"$WORK/err" ||
	fail "unseal --signature: $(cat "$WORK/err")"
cmp "$SHM/auth/ssh_host_ed25519_key" "$A/orig" || fail "--authorized-by: unsealed key differs"
echo "ok: --authorized-by: seal needs and checks a signature; unseal with it gives the key back, without it exit 2"

# 2. unseal into the tmpfs: byte for byte, folder 0700, files 0600.
K=$SHM/keys
"$M" ssh-hostkey unseal --dir "$D" --to "$K" --log "$LOG" >"$WORK/out" 2>"$WORK/err" ||
	fail "ssh-hostkey unseal: $(cat "$WORK/err")"
[ "$(stat -c %a "$K")" = 700 ] || fail "key folder mode $(stat -c %a "$K")"
for t in $types; do
	k=ssh_host_${t}_key
	cmp "$K/$k" "$WORK/orig/$k" || fail "unsealed $k differs from the original"
	[ "$(stat -c %a "$K/$k")" = 600 ] || fail "unsealed $k mode $(stat -c %a "$K/$k")"
done
[ "$(find "$K" -type f | wc -l)" = 3 ] || fail "the key folder holds other files: $(ls -a "$K")"
echo "ok: unseal: the 3 keys back byte for byte in a tmpfs folder (0700, files 0600)"

# Not on tmpfs: refused, nothing written.
if [ "$(stat -f -c %T "$WORK")" != tmpfs ]; then
	"$M" ssh-hostkey unseal --dir "$D" --to "$WORK/disk" 2>"$WORK/err"; rc=$?
	expect_rc 2 "unseal onto a disk folder"
	grep -q "not on tmpfs or ramfs" "$WORK/err" || fail "no tmpfs message: $(cat "$WORK/err")"
	[ -z "$(ls -A "$WORK/disk" 2>/dev/null)" ] || fail "keys were written to a disk folder"
	echo "ok: unseal onto a disk folder is refused (exit 2), nothing written"
fi
mkdir -m 755 "$SHM/open"
"$M" ssh-hostkey unseal --dir "$D" --to "$SHM/open" 2>"$WORK/err"; rc=$?
expect_rc 2 "unseal into a folder open to others"
ln -s "$K" "$SHM/link"
"$M" ssh-hostkey unseal --dir "$D" --to "$SHM/link" 2>"$WORK/err"; rc=$?
expect_rc 2 "unseal into a symbolic link"
echo "ok: unseal refuses a folder open to others and a symbolic link (exit 2)"

# 3. A real sshd presents exactly these keys. Started in a user namespace (unshare -U): it
#    runs as an unmapped user there, so it needs neither the sshd user nor /run/sshd of an
#    installed server, and still reads the 0600 keys, whose owner it is outside.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# The HostKey lines are those of the drop-in meson installs (hooks/mboot-hostkeys.conf), with
# this test's folders for /run/mboot/ssh and /etc/ssh.
DROPIN=${MB_SOURCE_ROOT:?}/hooks/mboot-hostkeys.conf
{
	echo "ListenAddress 127.0.0.1:$port"
	sed -n "s|^HostKey /run/mboot/ssh/|HostKey $K/|p; s|^HostKey /etc/ssh/|HostKey $D/|p" "$DROPIN"
	echo "PidFile $WORK/sshd.pid"
	echo "UsePAM no"
	echo "AuthorizedKeysFile none"
} >"$WORK/sshd_config"
[ "$(grep -c "^HostKey $K/" "$WORK/sshd_config")" = 3 ] || fail "the drop-in does not name 3 keys in /run/mboot/ssh"
start_sshd() {
	unshare -U "$SSHD" -D -e -f "$WORK/sshd_config" 2>"$WORK/sshd.log" &
	SSHD_PID=$!
}
start_sshd
for _ in $(seq 50); do
	grep -q "Server listening" "$WORK/sshd.log" && break
	kill -0 "$SSHD_PID" 2>/dev/null || break
	sleep 0.1
done
grep -q "Server listening on 127.0.0.1 port $port" "$WORK/sshd.log" || fail "sshd did not start: $(cat "$WORK/sshd.log")"
ssh-keyscan -p "$port" -t ed25519,ecdsa,rsa 127.0.0.1 >"$WORK/scan" 2>/dev/null
for t in $types; do
	k=ssh_host_${t}_key
	want=$(cut -d' ' -f1,2 "$WORK/orig/$k.pub")
	got=$(grep -v '^#' "$WORK/scan" | cut -d' ' -f2,3 | grep -F "${want%% *} ")
	[ "$got" = "$want" ] || fail "sshd presents '$got' for $t, want the .pub's '$want'"
	fp_want=$(ssh-keygen -lf "$WORK/orig/$k.pub" | cut -d' ' -f2)
	fp_got=$(grep -F "${want%% *} " "$WORK/scan" | ssh-keygen -lf - | cut -d' ' -f2)
	[ "$fp_got" = "$fp_want" ] || fail "$t fingerprint: sshd $fp_got, .pub $fp_want"
done
[ "$(grep -vc '^#' "$WORK/scan")" = 3 ] || fail "ssh-keyscan saw other keys: $(cat "$WORK/scan")"
kill "$SSHD_PID"; wait "$SSHD_PID" 2>/dev/null; SSHD_PID=
echo "ok: sshd on 127.0.0.1:$port presents exactly the 3 original host keys (ssh-keyscan, ssh-keygen -lf)"

# 4. Tampered sealed files: exit 2 before or at the unseal, and never a key in the folder.
cp "$D/ssh_host_ed25519_key.mboot" "$WORK/good.mboot"
tampered() { # tampered WHAT JQ-FILTER | - : unseal of a changed ed25519 sealed file exits 2
	local what=$1
	rm -rf "$SHM/t"
	mkdir -p "$WORK/t"
	cp "$D"/ssh_host_ed25519_key.pub "$WORK/t/"
	if [ "$2" = - ]; then cat >"$WORK/t/ssh_host_ed25519_key.mboot"
	else jq "$2" "$WORK/good.mboot" >"$WORK/t/ssh_host_ed25519_key.mboot"; fi
	"$M" ssh-hostkey unseal --dir "$WORK/t" --to "$SHM/t" >/dev/null 2>"$WORK/err"; rc=$?
	expect_rc 2 "$what"
	[ -z "$(ls -A "$SHM/t" 2>/dev/null)" ] || fail "$what: a key was written"
	grep -q "$3" "$WORK/err" || fail "$what: message: $(cat "$WORK/err")"
}
flip() { # the hex or base64 text $1 with its first character changed (to another of its alphabet)
	case ${1:0:1} in 0) echo "1${1:1}" ;; *) echo "0${1:1}" ;; esac
}
tag=$(jq -r .tag "$WORK/good.mboot")
ct=$(jq -r .ciphertext "$WORK/good.mboot")
nonce=$(jq -r .nonce "$WORK/good.mboot")
tampered "another tag" ".tag = \"$(flip "$tag" | tr A a)\"" "does not open"
tampered "another ciphertext" ".ciphertext = \"$(flip "$ct")\"" "does not open"
tampered "another nonce" ".nonce = \"$(flip "$nonce" | tr A a)\"" "does not open"
tampered "another label" '.label = "ssh-ed25519 AAAA forged"' "does not open"
tampered "a truncated file" - "premature end of input\|near end of file" < <(head -c 700 "$WORK/good.mboot")
tampered "a short tag" '.tag = "00"' 'field "tag"'
tampered "no sealed object" 'del(.sealed)' 'field "sealed"'
tampered "a broken sealed object" '.sealed.policy.digest = "00"' 'in "sealed"'
tampered "version 2" '.version = 2' 'field "version"'
truncate -s 80M "$WORK/big"
tampered "an 80 MiB file" - "larger than" < "$WORK/big"
rm -f "$WORK/big"
echo "ok: tampered tag, ciphertext, nonce, label (does not open); truncated, short tag, missing or broken sealed object, version, oversized: exit 2, no key written"

# 5. Another boot (init=/bin/sh on the kernel command line): exit 1 naming PCR 8 and the
#    event; the folder ends with none of the keys (those of the good boot are removed too).
"$M" predict --log "$LOG" --cmdline "root=UUID=119f1a79-c391-4e37-905d-3a503284cadb ro quiet splash ima-policy=tcb init=/bin/sh" \
	--write-log "$WORK/evil.bin" >/dev/null || fail "predict for the other boot"
boot "$WORK/evil.bin"
"$M" ssh-hostkey unseal --dir "$D" --to "$K" --log "$WORK/evil.bin" >"$WORK/out" 2>"$WORK/err"; rc=$?
expect_rc 1 "unseal on the init=/bin/sh boot"
grep -q "^PCR 8 (sha256) differs" "$WORK/err" || fail "PCR 8 not named: $(cat "$WORK/err")"
grep -q "^PCR 8: changed: #[0-9]* EV_IPL: kernel_cmdline: .*init=/bin/sh$" "$WORK/err" ||
	fail "the kernel_cmdline event is not named: $(cat "$WORK/err")"
grep -q "this boot is not the one it is sealed to" "$WORK/err" || fail "no verdict line: $(cat "$WORK/err")"
[ -z "$(ls -A "$K")" ] || fail "the key folder still holds keys on a bad boot: $(ls -A "$K")"
echo "ok: bad boot: unseal exits 1 naming PCR 8 and the kernel_cmdline change; the folder holds no key"

start_sshd
for _ in $(seq 50); do kill -0 "$SSHD_PID" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$SSHD_PID" 2>/dev/null; then fail "sshd runs without host keys: $(cat "$WORK/sshd.log")"; fi
wait "$SSHD_PID"; rc=$?; SSHD_PID=
[ "$rc" -ne 0 ] || fail "sshd exited 0 without host keys"
grep -q "no hostkeys available" "$WORK/sshd.log" || fail "sshd did not say it has no host keys: $(cat "$WORK/sshd.log")"
ssh-keyscan -p "$port" 127.0.0.1 >"$WORK/scan" 2>/dev/null
[ -s "$WORK/scan" ] && fail "something presents host keys on port $port: $(cat "$WORK/scan")"
echo "ok: bad boot: sshd with the same config refuses to start (no hostkeys available); ssh-keyscan gets no key"

# 6. Back on the sealed boot, the keys come back.
boot "$LOG"
"$M" ssh-hostkey unseal --dir "$D" --to "$K" >/dev/null 2>"$WORK/err" || fail "unseal back on the good boot: $(cat "$WORK/err")"
for t in $types; do cmp -s "$K/ssh_host_${t}_key" "$WORK/orig/ssh_host_${t}_key" || fail "$t after the good boot"; done
echo "ok: back on the sealed boot, the keys unseal again"
