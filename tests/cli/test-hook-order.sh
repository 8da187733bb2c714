#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The kernel hooks run after the hooks that rewrite what the next boot measures (issue 15), by
# the ordering of the tools that run them, not by ours:
# - Debian's postinst.d: run-parts (its default name check, C-locale order) over a folder
#   holding Debian's hook names and the name meson installs ours under: ours runs, and last,
#   after zz-update-grub, which rewrites grub.cfg.
# - kernel-install's plugins: ours sorts last among this machine's plugins and those systemd
#   and Fedora ship, both by sort -V (systemd 252's shell kernel-install) and by C strcmp
#   order (the later C kernel-install).
# The installed names come from `meson introspect --installed`: what a distribution gets.
set -u -o pipefail
B=${MB_BUILD_ROOT:?}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }
command -v run-parts >/dev/null || { echo "SKIP: run-parts is not installed (debianutils)"; exit 77; }

installed=$(meson introspect --installed "$B" | jq -r '.[]') || fail "meson introspect --installed"
# two postinst.d hooks: one keeps the GRUB configs that booted (first), one reseals (last)
keeper=$(grep '/kernel/postinst\.d/.*keep-booted' <<<"$installed") || fail "no kernel/postinst.d keep-booted hook installed"
postinst=$(grep '/kernel/postinst\.d/' <<<"$installed" | grep -v keep-booted) || fail "no kernel/postinst.d hook installed"
plugin=$(grep '/kernel/install\.d/' <<<"$installed") || fail "no kernel/install.d plugin installed"
[ "$(wc -l <<<"$postinst")" = 1 ] && [ "$(wc -l <<<"$plugin")" = 1 ] && [ "$(wc -l <<<"$keeper")" = 1 ] ||
	fail "more than one hook: $postinst $plugin $keeper"
keeper=${keeper##*/}
postinst=${postinst##*/}
plugin=${plugin##*/}

# Debian 12's postinst.d names (initramfs-tools, dkms, apt, unattended-upgrades, grub-pc/efi,
# systemd-boot), each executable, as the kernel's postinst runs them: run-parts DIR.
mkdir "$T/postinst.d"
for h in apt-auto-removal dkms initramfs-tools unattended-upgrades zz-systemd-boot zz-update-grub "$postinst" "$keeper"; do
	printf '#!/bin/sh\n' >"$T/postinst.d/$h"
	chmod 755 "$T/postinst.d/$h"
done
run-parts --test "$T/postinst.d" >"$T/order" 2>&1 || fail "run-parts --test: $(cat "$T/order")"
grep -qx "$T/postinst.d/$postinst" "$T/order" || fail "run-parts would not run $postinst (its name check): $(cat "$T/order")"
[ "$(tail -n 1 "$T/order")" = "$T/postinst.d/$postinst" ] ||
	fail "run-parts runs $postinst before others: $(tr '\n' ' ' <"$T/order")"
[ "$(head -n 1 "$T/order")" = "$T/postinst.d/$keeper" ] ||
	fail "run-parts runs $keeper after others (before it, update-grub may rewrite grub.cfg): $(tr '\n' ' ' <"$T/order")"
[ "$(wc -l <"$T/order")" = 8 ] || fail "run-parts would skip some hooks: $(cat "$T/order")"
ok "run-parts runs $keeper first and $postinst last, after zz-update-grub and zz-systemd-boot: $(sed 's|.*/||' "$T/order" | tr '\n' ' ')"

# kernel-install: this machine's plugins and systemd's and Fedora's names.
names=$(printf '%s\n' 00-entry-directory.install 20-grub.install 50-depmod.install 50-dracut.install \
	55-initrd.install 60-ukify.install 85-initrd.install 90-loaderentry.install 90-uki-copy.install \
	92-crashkernel.install 99-grub-mkconfig.install "$plugin")
for d in /usr/lib/kernel/install.d /etc/kernel/install.d; do
	[ -d "$d" ] && names=$(printf '%s\n%s\n' "$names" "$(find "$d" -maxdepth 1 -name '*.install' -printf '%f\n')")
done
[ "$(sort -V <<<"$names" | tail -n 1)" = "$plugin" ] || fail "sort -V puts $plugin before: $(sort -V <<<"$names" | tail -n 2)"
[ "$(LC_ALL=C sort <<<"$names" | tail -n 1)" = "$plugin" ] || fail "C order puts $plugin before: $(LC_ALL=C sort <<<"$names" | tail -n 2)"
ok "kernel-install runs $plugin last (sort -V and C order) among $(sort -u <<<"$names" | wc -l) plugins"
