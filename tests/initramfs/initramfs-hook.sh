#!/bin/bash
# The initramfs-tools hook and the crypttab keyscript (docs/luks.md, "Boot (Debian
# initramfs-tools)"), as `meson install` lays them out, run the way mkinitramfs runs a hook
# (DESTDIR set, hook-functions sourced: initramfs-tools' own when installed, else
# tests/hook-functions-shim.sh): the token plugin lands in libcryptsetup's plugin folder, the
# libraries mboot dlopen()s land by name, and the dynamic loader resolves every one of them and
# everything they link from DESTDIR alone (ld.so --list; a real dlopen by name under LD_DEBUG).
# The keyscript: no output when the token opens, askpass when it does not or on a retry.
set -eu -o pipefail
B=${MB_BUILD_ROOT:?}
S=${MB_SOURCE_ROOT:?}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

prefix=$(meson introspect --buildoptions "$B" | jq -r '.[] | select(.name == "prefix") | .value')
I=$T/inst
meson install -C "$B" --no-rebuild --quiet --destdir "$I" >"$T/install.log" 2>&1 ||
	fail "meson install --destdir: $(cat "$T/install.log")"
HOOK=$I$prefix/share/initramfs-tools/hooks/mboot
[ -x "$HOOK" ] || fail "the hook is not installed (executable) at $prefix/share/initramfs-tools/hooks/mboot"
[ -x "$I$prefix/lib/mboot/luks-keyscript" ] || fail "the keyscript is not installed at $prefix/lib/mboot/luks-keyscript"
[ "$(sh "$HOOK" prereqs)" = cryptroot ] || fail "prereqs: $(sh "$HOOK" prereqs)"
token_dir=$(sed -n 's/^token_dir=//p' "$HOOK")
[ -f "$I$token_dir/libcryptsetup-token-mboot.so" ] || fail "the plugin is not installed in $token_dir"
# mkinitramfs's tree is usr-merged: /lib/x becomes /usr/lib/x
usr() { case "$1" in /bin/* | /lib* | /sbin/*) echo "/usr$1" ;; *) echo "$1" ;; esac; }
libdir=$(usr "${token_dir%/*}")
LOADER=$(usr "$(ldd /bin/sh | sed -n 's/^[[:blank:]]*\(\/[^ ]*ld-linux[^ ]*\) (.*/\1/p')")

# A sanitized libmboot needs its runtime loaded first; python is not instrumented.
PRELOAD=
if [ "${MB_SANITIZE:-none}" != none ] && [ -n "${MB_CC:-}" ]; then
	# shellcheck disable=SC2086 # MB_CC is a command line
	PRELOAD=$($MB_CC -print-file-name=libasan.so)
	[ -f "$PRELOAD" ] || PRELOAD=
fi
# What libmboot needs on the way to a key, by name: jansson for the token, libcrypto, tpm2-tss.
DLOPENED=(libjansson.so.4 libcrypto.so.3 libtss2-esys.so.0 libtss2-mu.so.0 libtss2-rc.so.0 libtss2-tctildr.so.0
	libtss2-tcti-device.so.0)
functions=("$S/tests/hook-functions-shim.sh")
[ -r "${MB_HOOK_FUNCTIONS:-/usr/share/initramfs-tools/hook-functions}" ] &&
	functions+=("${MB_HOOK_FUNCTIONS:-/usr/share/initramfs-tools/hook-functions}")
# a release's signed policies, for keys sealed --authorized-by: the *.sig files go along
mkdir -p "$I/etc/mboot/signatures"
echo '{"kind": "mboot-policy-signature"}' >"$I/etc/mboot/signatures/6.1.0-27.sig"
echo notes >"$I/etc/mboot/signatures/README.txt"
for hf in "${functions[@]}"; do
	D=$T/dest.$(basename "$hf")
	mkdir -p "$D"
	env DESTDIR="$D" verbose=n MBOOT_HOOK_ROOT="$I" MBOOT_HOOK_FUNCTIONS="$hf" sh "$HOOK" >"$T/hook.out" 2>&1 ||
		fail "$hf: the hook exited $?: $(cat "$T/hook.out")"
	P=$D$(usr "$token_dir")/libcryptsetup-token-mboot.so
	[ -f "$P" ] || fail "$hf: no plugin at $(usr "$token_dir") in the initramfs: $(cd "$D" && find . -type f | head -n 30)"
	[ -x "$D$prefix/lib/mboot/luks-keyscript" ] || fail "$hf: no keyscript in the initramfs"
	cmp -s "$I/etc/mboot/signatures/6.1.0-27.sig" "$D/etc/mboot/signatures/6.1.0-27.sig" ||
		fail "$hf: the signed policies of /etc/mboot/signatures are not in the initramfs"
	[ ! -e "$D/etc/mboot/signatures/README.txt" ] || fail "$hf: a file that is no *.sig went into the initramfs"
	for so in libmboot.so.0 "${DLOPENED[@]}"; do
		[ -f "$D$libdir/$so" ] || fail "$hf: $so is not in $libdir of the initramfs"
	done
	[ -x "$D$LOADER" ] || fail "$hf: no dynamic loader ($LOADER) in the initramfs"
	# Every library the plugin and each dlopen()ed library need, resolved by the initramfs's own
	# loader from the initramfs only (the host's folders are not searched: no cache, no defaults
	# outside DESTDIR can satisfy a path that must start with $D).
	for f in "$P" "$D$libdir/libmboot.so.0"; do
		env -i "$D$LOADER" --inhibit-cache --library-path "$D$libdir" --list "$f" >"$T/list" 2>&1 ||
			fail "$hf: ld.so --list ${f#"$D"}: $(cat "$T/list")"
		grep -q 'not found' "$T/list" && fail "$hf: ${f#"$D"} has a library the initramfs lacks: $(grep 'not found' "$T/list")"
		outside=$(awk '$2 == "=>" && index($3, "/") == 1 && index($3, D) != 1 { print $1 " => " $3 }' D="$D" "$T/list")
		[ -z "$outside" ] || fail "$hf: ${f#"$D"} resolves from outside the initramfs: $outside"
	done
	for so in "${DLOPENED[@]}"; do
		env -i "$D$LOADER" --inhibit-cache --library-path "$D$libdir" --list "$D$libdir/$so" >"$T/list" 2>&1 ||
			fail "$hf: ld.so --list $so: $(cat "$T/list")"
		grep -q 'not found' "$T/list" && fail "$hf: $so needs a library the initramfs lacks: $(grep 'not found' "$T/list")"
		outside=$(awk '$2 == "=>" && index($3, "/") == 1 && index($3, D) != 1 { print $1 " => " $3 }' D="$D" "$T/list")
		[ -z "$outside" ] || fail "$hf: $so resolves from outside the initramfs: $outside"
	done
	# The way libmboot loads them: dlopen() by soname, here through python's ctypes, the search
	# path pointed into the initramfs; the loader's own trace names the file each one came from.
	if command -v python3 >/dev/null; then
		env -i LD_LIBRARY_PATH="$D$libdir" ${PRELOAD:+LD_PRELOAD="$PRELOAD"} ASAN_OPTIONS=detect_leaks=0 \
			LD_DEBUG=libs python3 -c '
import ctypes, sys
for n in sys.argv[1:]:
    ctypes.CDLL(n)' libmboot.so.0 "${DLOPENED[@]}" 2>"$T/ld-debug" || fail "$hf: dlopen from the initramfs failed: $(tail -n 5 "$T/ld-debug")"
		for so in libmboot.so.0 "${DLOPENED[@]}"; do
			grep -q "calling init: $D$libdir/$so\$" "$T/ld-debug" ||
				fail "$hf: dlopen($so) did not load the initramfs's copy: $(grep "init:.*$so" "$T/ld-debug")"
		done
	fi
	ok "hook with $(basename "$hf"): plugin in $(usr "$token_dir"), libmboot and the 7 libraries it needs (jansson, libcrypto, tpm2-tss) in $libdir by name, the keyscript, the *.sig files of /etc/mboot/signatures; ld.so resolves all of them from the initramfs alone; dlopen by name loads the initramfs's copies"
done

# Nothing to copy: a clear failure, not an initramfs that cannot unlock.
mkdir -p "$T/empty" "$T/dest.none"
rc=0
env DESTDIR="$T/dest.none" verbose=n MBOOT_HOOK_ROOT="$T/empty" MBOOT_HOOK_FUNCTIONS="$S/tests/hook-functions-shim.sh" \
	sh "$HOOK" >"$T/hook.out" 2>&1 || rc=$?
{ [ $rc -ne 0 ] && grep -q "no token plugin at" "$T/hook.out"; } || fail "hook without a plugin: exit $rc: $(cat "$T/hook.out")"
ok "hook without an installed plugin: exit $rc, says so"

# The keyscript: cryptsetup and askpass are stand-ins that record how they were called.
K=$I$prefix/lib/mboot/luks-keyscript
mkdir -p "$T/bin"
cat >"$T/bin/cryptsetup" <<'EOS'
#!/bin/sh
echo "cryptsetup $*" >>"$LOGF"
[ "$TOKEN_OPENS" = 1 ] || { echo "mboot: token 0: the disk key is not released on this boot" >&2; exit 1; }
EOS
cat >"$T/bin/askpass" <<'EOS'
#!/bin/sh
echo "askpass $*" >>"$LOGF"
printf 'typed passphrase'
EOS
chmod +x "$T/bin/cryptsetup" "$T/bin/askpass"
keyscript() { # keyscript TOKEN_OPENS TRIED: its stdout in $T/ks.out, calls in $T/ks.log
	rm -f "$T/ks.log"
	env PATH="$T/bin:$PATH" LOGF="$T/ks.log" TOKEN_OPENS="$1" CRYPTTAB_TRIED="$2" MBOOT_ASKPASS="$T/bin/askpass" \
		CRYPTTAB_SOURCE=/dev/vdb CRYPTTAB_NAME=secret CRYPTTAB_KEY=none sh "$K" none >"$T/ks.out" 2>"$T/ks.err"
}
keyscript 1 0 || fail "keyscript, token opens: exit $?"
[ ! -s "$T/ks.out" ] || fail "keyscript printed a key although the token opens: $(cat "$T/ks.out")"
[ "$(cat "$T/ks.log")" = "cryptsetup open --test-passphrase --token-only --token-type mboot -- /dev/vdb" ] ||
	fail "keyscript, token opens: calls: $(cat "$T/ks.log")"
keyscript 0 0 || fail "keyscript, token refused: exit $?"
[ "$(cat "$T/ks.out")" = "typed passphrase" ] || fail "keyscript, token refused: printed '$(cat "$T/ks.out")'"
[ "$(sed -n 2p "$T/ks.log")" = "askpass Please unlock disk secret: " ] || fail "keyscript, token refused: calls: $(cat "$T/ks.log")"
grep -q "not released on this boot" "$T/ks.err" || fail "keyscript, token refused: the plugin's explanation is not passed on: $(cat "$T/ks.err")"
keyscript 1 1 || fail "keyscript, retry: exit $?"
[ "$(cat "$T/ks.log")" = "askpass Please unlock disk secret: " ] || fail "keyscript, retry: calls: $(cat "$T/ks.log")"
ok "keyscript: the token opens -> no output, cryptsetup --token-only --test-passphrase only; refused -> the explanation, then askpass's passphrase; a retry -> askpass at once"
