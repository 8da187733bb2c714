#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The Debian packages (debian/, scripts/build-debs): built from the tree (or taken from
# $MB_DEBS_DIR when already built), lintian finds no error, and unpacked into a throw-away root
# (dpkg-deb -x, no root needed) every file is where Debian, systemd, kernel-install,
# initramfs-tools, libcryptsetup, bash-completion and pkg-config read it, with its mode; nothing
# under usr/local; the hooks exec the mboot-reseal the package installs; the installed mboot runs
# with the installed libmboot. The folders expected come from outside mboot: systemd.pc,
# libcryptsetup's crypt_token_external_path(), dpkg-architecture, the man/*.scd sources.
set -u -o pipefail
S=${MB_SOURCE_ROOT:?}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }
skip() { echo "SKIP: $*"; exit 77; }

for tool in dpkg-deb dpkg-architecture lintian; do
	command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/install-deps)"
done
if [ -n "${MB_DEBS_DIR:-}" ]; then
	OUT=$MB_DEBS_DIR
else
	command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null ||
		skip "dpkg-buildpackage or debhelper is not installed (scripts/install-deps)"
	(cd "$S" && dpkg-checkbuilddeps) >"$T/deps.log" 2>&1 || fail "Build-Depends unmet (scripts/install-deps): $(cat "$T/deps.log")"
	# Shared with vm-debian: built once per build folder and tree.
	OUT=${MB_BUILD_ROOT:+$MB_BUILD_ROOT/tests/debs}
	OUT=${OUT:-$T/out}
	"$S/scripts/build-debs" --if-changed "$OUT" >"$T/build.log" 2>&1 || fail "scripts/build-debs: $(tail -n 30 "$T/build.log")"
fi
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
arch=$(dpkg-architecture -qDEB_HOST_ARCH)

# --- the packages, and lintian ---
declare -A deb
for p in mboot libmboot0 libmboot-dev mboot-luks mboot-verifierd; do
	f=$(ls "$OUT/${p}_"*"_$arch.deb" 2>/dev/null | sed -n 1p)
	[ -n "$f" ] || fail "no package $p in $OUT: $(ls "$OUT")"
	deb[$p]=$f
done
version=$(dpkg-deb -f "${deb[mboot]}" Version)
changes=$(ls "$OUT"/mboot_*"_$arch.changes" 2>/dev/null | sed -n 1p)
[ -n "$changes" ] || fail "no .changes in $OUT"
lintian --fail-on error "$changes" >"$T/lintian.txt" 2>&1 || fail "lintian --fail-on error failed: $(cat "$T/lintian.txt")"
grep -q '^E: ' "$T/lintian.txt" && fail "lintian errors: $(grep '^E: ' "$T/lintian.txt")"
ok "5 packages $version ($arch); lintian: no error ($(grep -c '^W: ' "$T/lintian.txt") warnings)"

# --- unpacked into a throw-away root ---
R=$T/root
for p in "${!deb[@]}"; do
	dpkg-deb -x "${deb[$p]}" "$R" || fail "dpkg-deb -x ${deb[$p]}"
	dpkg-deb -c "${deb[$p]}" >"$T/list.$p" || fail "dpkg-deb -c ${deb[$p]}"
	notroot=$(awk '$2 != "root/root"' "$T/list.$p")
	[ -z "$notroot" ] || fail "$p: files not owned by root: $notroot"
	grep -q ' \./usr/local' "$T/list.$p" && fail "$p installs under /usr/local: $(grep ' \./usr/local' "$T/list.$p")"
done
[ ! -e "$R/usr/local" ] || fail "something is under usr/local: $(find "$R/usr/local" | head)"

# expect PKG MODE PATH...: each path in package PKG's listing, with that mode once unpacked
expect() {
	local p=$1 mode=$2 f
	shift 2
	for f in "$@"; do
		grep -q " \.$f\( -> .*\)\?\$" "$T/list.$p" || fail "$f is not in package $p"
		[ -e "$R$f" ] || fail "$f is not in the root"
		[ "$(stat -c %a "$R$f")" = "$mode" ] || fail "$f has mode $(stat -c %a "$R$f"), want $mode"
	done
}
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null) || unitdir=""
[ -n "$unitdir" ] || unitdir=/lib/systemd/system
expect mboot 755 /usr/bin/mboot /usr/lib/mboot/mboot-reseal /etc/kernel/postinst.d/zzz-mboot-reseal \
	/etc/kernel/postinst.d/00-mboot-keep-booted \
	/usr/lib/kernel/install.d/99-zz-mboot-reseal.install
expect mboot 644 "$unitdir/mboot-verify.service" "$unitdir/mboot-attest.service" "$unitdir/mboot-attest.timer" \
	"$unitdir/mboot-ssh-hostkeys.service" "$unitdir/mboot-grub-booted.service" /usr/lib/tmpfiles.d/mboot.conf \
	/usr/share/bash-completion/completions/mboot /etc/ssh/sshd_config.d/mboot-hostkeys.conf
for scd in "$S"/man/*.1.scd; do
	page=${scd##*/}
	expect mboot 644 "/usr/share/man/man1/${page%.scd}.gz"
done
expect mboot-verifierd 755 /usr/sbin/mboot-verifierd
expect mboot-verifierd 644 "$unitdir/mboot-verifierd.service" /usr/share/man/man8/mboot-verifierd.8.gz
expect libmboot0 644 "/usr/lib/$ma/libmboot.so.$version"
expect libmboot0 777 "/usr/lib/$ma/libmboot.so.0"
expect libmboot-dev 644 /usr/include/mboot/mboot.h "/usr/lib/$ma/pkgconfig/mboot.pc"
expect libmboot-dev 777 "/usr/lib/$ma/libmboot.so"
expect mboot-luks 755 /usr/share/initramfs-tools/hooks/mboot /usr/lib/mboot/luks-keyscript
ok "paths and modes: units in $unitdir (systemd.pc), tmpfiles.d, man pages of man/*.scd, completion, headers, mboot.pc"

# The token plugin in the folder libcryptsetup reads (on Debian 12's merged /usr, /lib is /usr/lib).
cat >"$T/tokdir.c" <<'C'
#include <stdio.h>
#include <libcryptsetup.h>
int main(void) { const char *p = crypt_token_external_path(); puts(p ? p : ""); return 0; }
C
tokdir=""
read -r -a cs_flags <<<"$(pkg-config --cflags --libs libcryptsetup 2>/dev/null)"
if cc -o "$T/tokdir" "$T/tokdir.c" "${cs_flags[@]}" 2>"$T/cc.log"; then
	tokdir=$("$T/tokdir")
fi
[ -n "$tokdir" ] || fail "crypt_token_external_path() gave nothing: $(cat "$T/cc.log")"
case "$tokdir" in /lib/*) tokdir=/usr$tokdir ;; esac
expect mboot-luks 644 "$tokdir/libcryptsetup-token-mboot.so"
ok "cryptsetup token plugin in $tokdir (crypt_token_external_path(), /usr-merged)"

# --- the hooks run what the packages install ---
for h in /etc/kernel/postinst.d/zzz-mboot-reseal /etc/kernel/postinst.d/00-mboot-keep-booted \
	/usr/lib/kernel/install.d/99-zz-mboot-reseal.install; do
	target=$(sed -n 's/^reseal=\${MBOOT_RESEAL:-\(.*\)}$/\1/p' "$R$h")
	[ "$target" = /usr/lib/mboot/mboot-reseal ] || fail "$h runs '$target', not /usr/lib/mboot/mboot-reseal"
	# run with the reseal script swapped for a stand-in of the root: it is called with the kernel
	printf '#!/bin/sh\necho "reseal $*"\n' >"$T/reseal"
	chmod 755 "$T/reseal"
	case $h in
	*postinst.d*) out=$(MBOOT_RESEAL=$T/reseal MBOOT_BOOT_DIR=/b "$R$h" 6.9 /b/vmlinuz-6.9) ;;
	*) out=$(MBOOT_RESEAL=$T/reseal "$R$h" add 6.9 /e /b/vmlinuz-6.9 /b/initrd.img-6.9) ;;
	esac
	case $h in
	*keep-booted) want="reseal --keep-booted" ;;
	*) want="reseal /b/vmlinuz-6.9 /b/initrd.img-6.9" ;;
	esac
	[ "$out" = "$want" ] || fail "$h called: '$out'"
	# mboot removed (its conffile hook left): the kernel's installation goes on
	MBOOT_RESEAL=$T/none "$R$h" add 6.9 /e /b/vmlinuz-6.9 >/dev/null 2>&1 || fail "$h fails when mboot-reseal is gone"
done
hook=$R/usr/share/initramfs-tools/hooks/mboot
[ "$(sed -n 's/^token_dir=//p' "$hook")" = "$tokdir" ] || fail "the initramfs hook's token_dir is $(sed -n 's/^token_dir=//p' "$hook")"
[ "$(sed -n 's/^libdir=//p' "$hook")" = "/usr/lib/$ma" ] || fail "the initramfs hook's libdir is $(sed -n 's/^libdir=//p' "$hook")"
grep -q '"$root/usr/lib/mboot/luks-keyscript"' "$hook" || fail "the initramfs hook copies no /usr/lib/mboot/luks-keyscript"
env DESTDIR="$T/initrd" verbose=n MBOOT_HOOK_ROOT="$R" MBOOT_HOOK_FUNCTIONS="$S/tests/hook-functions-shim.sh" \
	sh "$hook" >"$T/hook.log" 2>&1 || fail "the initramfs hook on the root: $(cat "$T/hook.log")"
[ -f "$T/initrd$tokdir/libcryptsetup-token-mboot.so" ] && [ -x "$T/initrd/usr/lib/mboot/luks-keyscript" ] &&
	[ -f "$T/initrd/usr/lib/$ma/libmboot.so.0" ] || fail "the initramfs hook copied: $(cd "$T/initrd" && find . -type f | head -n 20)"
ok "the kernel hooks run /usr/lib/mboot/mboot-reseal (exit 0 when it is gone); the initramfs hook copies the root's plugin"

# --- units: mboot-verify.service and mboot-grub-booted.service are enabled (the kernel hook's
# prediction reads the configs it keeps), nothing is started at installation ---
dpkg-deb -e "${deb[mboot]}" "$T/ctl.mboot" && dpkg-deb -e "${deb[mboot-verifierd]}" "$T/ctl.verifierd" || fail "dpkg-deb -e"
enabled=""
for u in mboot-verify.service mboot-attest.timer mboot-ssh-hostkeys.service mboot-grub-booted.service mboot-verifierd.service; do
	for c in "$T"/ctl.*/postinst; do
		grep -q "deb-systemd-helper enable '$u'" "$c" && ! grep -q "debian-installed '$u'" "$c" && enabled="$enabled $u"
	done
done
[ "$enabled" = " mboot-verify.service mboot-grub-booted.service" ] ||
	fail "units enabled at installation:$enabled (want mboot-verify.service and mboot-grub-booted.service)"
grep -l 'deb-systemd-invoke' "$T"/ctl.*/postinst && fail "a postinst starts a unit"
ok "mboot-verify.service and mboot-grub-booted.service are enabled at installation; no unit is started"

# --- the installed mboot runs with the installed library ---
out=$(LD_LIBRARY_PATH=$R/usr/lib/$ma "$R/usr/bin/mboot" --version) || fail "installed mboot --version"
[ "$out" = "mboot $version" ] || fail "installed mboot --version printed '$out', the package is $version"
resolved=$(LD_LIBRARY_PATH=$R/usr/lib/$ma ldd "$R/usr/bin/mboot" | sed -n 's/.*libmboot\.so\.0 => \([^ ]*\).*/\1/p')
[ "$(readlink -f "$resolved")" = "$(readlink -f "$R/usr/lib/$ma/libmboot.so.0")" ] || fail "mboot resolves libmboot.so.0 to '$resolved'"
ok "the installed mboot --version: '$out', with the root's libmboot.so.0"
