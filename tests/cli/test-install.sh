#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What `meson install` gives a distribution: the mboot binary linked to the libmboot.so
# installed beside it, the library, the public headers and mboot.pc; a program built with
# `pkg-config --cflags --libs mboot` against that tree links and calls mb_version().
# The version expected is meson's (meson introspect), not one the project prints.
set -eu -o pipefail

B=${MB_BUILD_ROOT:?}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

version=$(meson introspect --projectinfo "$B" | jq -r .version)
case "$version" in "" | null) fail "no project version from meson introspect" ;; esac
prefix=$(meson introspect --buildoptions "$B" | jq -r '.[] | select(.name == "prefix") | .value')
libdir=$(meson introspect --buildoptions "$B" | jq -r '.[] | select(.name == "libdir") | .value')
case "$libdir" in /*) ;; *) libdir=$prefix/$libdir ;; esac

D=$T/dest
meson install -C "$B" --no-rebuild --quiet --destdir "$D" >"$T/install.log" 2>&1 ||
	fail "meson install --destdir: $(cat "$T/install.log")"

for f in "$prefix/bin/mboot" "$libdir/libmboot.so.$version" "$libdir/libmboot.so.0" "$libdir/libmboot.so" \
	"$libdir/pkgconfig/mboot.pc" "$prefix/include/mboot/mboot.h" "$prefix/include/mboot/version.h"; do
	[ -e "$D$f" ] || fail "not installed: $f"
done
ok "installed: bin/mboot, libmboot.so.$version (+ .so.0, .so), include/mboot/*.h, mboot.pc"

# The binary needs the shared library (not a static copy of it) and runs with the installed one.
grep -q 'NEEDED.*\[libmboot\.so\.0\]' <<<"$(readelf -d "$D$prefix/bin/mboot")" ||
	fail "installed mboot does not link libmboot.so.0: $(readelf -d "$D$prefix/bin/mboot" | grep NEEDED)"
out=$(LD_LIBRARY_PATH=$D$libdir "$D$prefix/bin/mboot" --version)
[ "$out" = "mboot $version" ] || fail "installed mboot --version printed '$out', meson says $version"
resolved=$(LD_LIBRARY_PATH=$D$libdir ldd "$D$prefix/bin/mboot" | sed -n 's/.*libmboot\.so\.0 => \([^ ]*\).*/\1/p')
[ "$(readlink -f "$resolved")" = "$(readlink -f "$D$libdir/libmboot.so.0")" ] ||
	fail "installed mboot resolves libmboot.so.0 to '$resolved'"
ok "installed mboot links libmboot.so.0 and prints 'mboot $version'"

# The .pc from the destdir: sysroot prefixes its paths with the destdir, as for a cross build.
export PKG_CONFIG_PATH=$D$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$D
[ "$(pkg-config --modversion mboot)" = "$version" ] || fail "mboot.pc version $(pkg-config --modversion mboot)"
read -r -a flags <<<"$(pkg-config --cflags --libs mboot)"
cat >"$T/hello.c" <<'C'
#include <errno.h>
#include <stdio.h>
#include <mboot/mboot.h>

int main(void)
{
	printf("%s %s\n", mb_version(), mb_strerror(-EBADMSG));
	return 0;
}
C
read -r -a cc <<<"${MB_CC:-cc}"
san=()
[ "${MB_SANITIZE:-none}" = none ] || san=("-fsanitize=$MB_SANITIZE")
"${cc[@]}" "${san[@]}" -std=c11 -Wall -Werror -o "$T/hello" "$T/hello.c" "${flags[@]}" 2>"$T/cc.log" ||
	fail "compiling with pkg-config --cflags --libs mboot (${flags[*]}): $(cat "$T/cc.log")"
out=$(LD_LIBRARY_PATH=$D$libdir "$T/hello")
[ "$out" = "$version malformed input" ] || fail "the program printed '$out', want '$version malformed input'"
ok "a C program built with pkg-config (${flags[*]}) calls mb_version() = $version"

# A man page for mboot and for each command `mboot --help` lists (and attest's quote), built
# by scdoc: installed under share/man/man1, troff that man(1) renders with the page's name.
mandir=$(meson introspect --buildoptions "$B" | jq -r '.[] | select(.name == "mandir") | .value')
case "$mandir" in /*) ;; *) mandir=$prefix/$mandir ;; esac
commands=$(LD_LIBRARY_PATH=$D$libdir "$D$prefix/bin/mboot" --help 2>/dev/null | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p' |
	grep -vx -e help -e version) || true
[ -n "$commands" ] || fail "no commands in the installed mboot --help"
pages=mboot
for c in $commands quote; do pages="$pages mboot-$c"; done
for page in $pages; do
	f=$D$mandir/man1/$page.1
	[ -s "$f" ] || [ -s "$f.gz" ] || fail "no man page $mandir/man1/$page.1"
	[ -s "$f" ] || f=$f.gz
	grep -q '^\.TH' <<<"$(zcat -f "$f")" || fail "$page.1 is not troff (no .TH)"
	if command -v man >/dev/null; then
		# The page is deterministic; man(1) once failed here in CI under heavy load with
		# nothing to show for it: its stderr is kept, and one retry tells such a failure
		# from a page that never renders.
		for try in 1 2; do
			out=$(MANWIDTH=80 man -l "$f" 2>"$T/man.err" | col -b)
			if printf '%s\n' "$out" | grep -q "^NAME" && printf '%s\n' "$out" | grep -q "^ *$page - "; then
				break
			fi
			echo "man -l $page.1, try $try: $(head -c 300 "$T/man.err") / $(printf '%s' "$out" | head -c 200)" >&2
			[ "$try" = 2 ] && fail "man -l $page.1 does not render a NAME section naming $page"
		done
	fi
done
ok "man pages: mboot(1) and $(echo "$commands" | wc -w) commands + quote, rendered by man -l"

# Bash completion: installed where bash-completion looks (its completionsdir, else
# share/bash-completion/completions), it completes the commands, the sub-commands and options.
bcdir=$(env -u PKG_CONFIG_SYSROOT_DIR pkg-config --define-variable=prefix="$prefix" --variable=completionsdir bash-completion 2>/dev/null) || bcdir=""
[ -n "$bcdir" ] || bcdir=$prefix/share/bash-completion/completions
[ -s "$D$bcdir/mboot" ] || fail "no bash completion at $bcdir/mboot"
complete_words() { # complete_words WORD...: what the completion offers for the last word
	# the first word is the installed binary, which the completion asks for commands and options
	LD_LIBRARY_PATH=$D$libdir bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; _mboot; printf "%s\n" "${COMPREPLY[@]}"' _ "$D$bcdir/mboot" \
		"$D$prefix/bin/mboot" "$@"
}
offered=$(complete_words "")
for c in $commands help version; do
	grep -qx "$c" <<<"$offered" || fail "completion of 'mboot ' lacks $c: $offered"
done
grep -qx replay <<<"$(complete_words log "")" || fail "completion of 'mboot log ' lacks replay"
grep -qx -- --policy <<<"$(complete_words verify --p)" || fail "completion of 'mboot verify --p' lacks --policy"
ok "bash completion in $bcdir: commands, 'log' sub-commands, verify's options"

# The boot-time verification unit, installed with the hooks: oneshot, after the TPM device,
# `mboot verify` whose failure never fails the boot; systemd-analyze verify accepts it.
# (for a prefix of /usr, the folder systemd.pc names as it stands: Debian 12's /lib/systemd/system)
if [ "$prefix" = /usr ]; then
	unitdir=$(env -u PKG_CONFIG_SYSROOT_DIR pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null) || unitdir=""
else
	unitdir=$(env -u PKG_CONFIG_SYSROOT_DIR pkg-config --define-variable=root_prefix="$prefix" --variable=systemdsystemunitdir systemd 2>/dev/null) || unitdir=""
fi
[ -n "$unitdir" ] || unitdir=$prefix/lib/systemd/system
u=$D$unitdir/mboot-verify.service
[ -s "$u" ] || fail "not installed: $unitdir/mboot-verify.service"
grep -qx 'Type=oneshot' "$u" || fail "mboot-verify.service is not Type=oneshot"
# no "-": a boot that fails verification is a failed unit
grep -qx "ExecStart=$prefix/bin/mboot verify" "$u" || fail "mboot-verify.service: ExecStart is not $prefix/bin/mboot verify"
grep -q '^After=.*dev-tpmrm0\.device' "$u" || fail "mboot-verify.service is not ordered after the TPM device"
if command -v systemd-analyze >/dev/null; then
	# a copy that runs the binary of the destdir (verify checks that ExecStart is executable);
	# its man page is checked above. Any word from it (an unknown key too) is a failure.
	sed "s|=$prefix/bin/mboot|=$D$prefix/bin/mboot|" "$u" >"$T/mboot-verify.service"
	if ! systemd-analyze verify --man=no "$T/mboot-verify.service" >"$T/analyze.log" 2>&1 || [ -s "$T/analyze.log" ]; then
		fail "systemd-analyze verify mboot-verify.service: $(cat "$T/analyze.log")"
	fi
	ok "mboot-verify.service installed in $unitdir; systemd-analyze verify accepts it"
else
	ok "mboot-verify.service installed in $unitdir (systemd-analyze not installed: not analysed)"
fi

# SSH host keys sealed to a good boot: the unit that unseals them before sshd (into
# /run/mboot/ssh, 0700) and the sshd_config drop-in naming them; systemd-analyze verify
# accepts the unit, and `sshd -t` (when there is one) the drop-in.
u=$D$unitdir/mboot-ssh-hostkeys.service
[ -s "$u" ] || fail "not installed: $unitdir/mboot-ssh-hostkeys.service"
grep -qx "ExecStart=$prefix/bin/mboot ssh-hostkey unseal --dir /etc/ssh --to /run/mboot/ssh" "$u" ||
	fail "mboot-ssh-hostkeys.service: ExecStart: $(grep ExecStart "$u")"
grep -qx 'Before=ssh.service sshd.service' "$u" || fail "mboot-ssh-hostkeys.service is not ordered before sshd"
grep -qx 'RuntimeDirectory=mboot/ssh' "$u" && grep -qx 'RuntimeDirectoryMode=0700' "$u" ||
	fail "mboot-ssh-hostkeys.service does not make /run/mboot/ssh 0700"
if command -v systemd-analyze >/dev/null; then
	sed "s|=$prefix/bin/mboot|=$D$prefix/bin/mboot|" "$u" >"$T/mboot-ssh-hostkeys.service"
	if ! systemd-analyze verify --man=no "$T/mboot-ssh-hostkeys.service" >"$T/analyze.log" 2>&1 || [ -s "$T/analyze.log" ]; then
		fail "systemd-analyze verify mboot-ssh-hostkeys.service: $(cat "$T/analyze.log")"
	fi
fi
sysconfdir=$(meson introspect --buildoptions "$B" | jq -r '.[] | select(.name == "sysconfdir") | .value')
case "$sysconfdir" in /*) ;; *) sysconfdir=$prefix/$sysconfdir ;; esac
c=$D$sysconfdir/ssh/sshd_config.d/mboot-hostkeys.conf
[ -s "$c" ] || fail "not installed: $sysconfdir/ssh/sshd_config.d/mboot-hostkeys.conf"
[ "$(grep -c '^HostKey /run/mboot/ssh/ssh_host_[a-z0-9]*_key$' "$c")" = 3 ] ||
	fail "mboot-hostkeys.conf does not name the 3 keys in /run/mboot/ssh: $(cat "$c")"
sshd=$(command -v sshd || echo /opt/mboot-test/openssh-server/usr/sbin/sshd)
if [ -x "$sshd" ]; then
	# sshd -t reads the drop-in as sshd_config; a key it names that is missing is only a warning
	mkdir -p "$T/ssh"
	ssh-keygen -q -t ed25519 -N '' -f "$T/ssh/key"
	{ echo "HostKey $T/ssh/key"; cat "$c"; echo "PidFile $T/ssh/pid"; echo "UsePAM no"; } >"$T/ssh/sshd_config"
	unshare -U "$sshd" -t -f "$T/ssh/sshd_config" >"$T/sshd.log" 2>&1 || fail "sshd -t with mboot-hostkeys.conf: $(cat "$T/sshd.log")"
fi
ok "mboot-ssh-hostkeys.service (systemd-analyze verify) and sshd_config.d/mboot-hostkeys.conf (sshd -t) installed"

# Copies of the GRUB configs that booted (docs/predict.md): once a boot after the local file
# systems, only with a firmware log; systemd-analyze verify accepts the unit.
u=$D$unitdir/mboot-grub-booted.service
[ -s "$u" ] || fail "not installed: $unitdir/mboot-grub-booted.service"
grep -qx "ExecStart=$prefix/bin/mboot grub keep-booted" "$u" && grep -qx 'Type=oneshot' "$u" &&
	grep -qx 'After=local-fs.target' "$u" &&
	grep -qx 'ConditionPathExists=/sys/kernel/security/tpm0/binary_bios_measurements' "$u" ||
	fail "mboot-grub-booted.service: $(grep -E '^(ExecStart|Type|After|Condition)' "$u")"
if command -v systemd-analyze >/dev/null; then
	sed "s|=$prefix/bin/mboot|=$D$prefix/bin/mboot|" "$u" >"$T/mboot-grub-booted.service"
	if ! systemd-analyze verify --man=no "$T/mboot-grub-booted.service" >"$T/analyze.log" 2>&1 || [ -s "$T/analyze.log" ]; then
		fail "systemd-analyze verify mboot-grub-booted.service: $(cat "$T/analyze.log")"
	fi
fi
ok "mboot-grub-booted.service installed: oneshot after local-fs, mboot grub keep-booted (systemd-analyze verify)"

# The userspace log's folder, made at boot by the tmpfiles.d entry installed with the units:
# systemd-tmpfiles itself reads it (no warning) and makes /run/log/mboot, root's, 0755.
tmpfilesdir=$(env -u PKG_CONFIG_SYSROOT_DIR pkg-config --define-variable=prefix="$prefix" --variable=tmpfilesdir systemd 2>/dev/null) || tmpfilesdir=""
[ -n "$tmpfilesdir" ] || tmpfilesdir=$prefix/lib/tmpfiles.d
t=$D$tmpfilesdir/mboot.conf
[ -s "$t" ] || fail "not installed: $tmpfilesdir/mboot.conf"
if command -v systemd-tmpfiles >/dev/null && [ "$(id -u)" = 0 ]; then
	mkdir "$T/root"
	systemd-tmpfiles --create --root="$T/root" "$t" >"$T/tmpfiles.log" 2>&1 && [ ! -s "$T/tmpfiles.log" ] ||
		fail "systemd-tmpfiles --create $tmpfilesdir/mboot.conf: $(cat "$T/tmpfiles.log")"
	[ -d "$T/root/run/log/mboot" ] || fail "systemd-tmpfiles made no /run/log/mboot from mboot.conf"
	m=$(stat -c '%a %U %G' "$T/root/run/log/mboot")
	[ "$m" = "755 root root" ] || fail "/run/log/mboot made by systemd-tmpfiles is '$m', not '755 root root'"
	ok "tmpfiles.d/mboot.conf installed in $tmpfilesdir; systemd-tmpfiles makes /run/log/mboot 0755 root"
else
	ok "tmpfiles.d/mboot.conf installed in $tmpfilesdir (not root, or no systemd-tmpfiles: not run)"
fi
