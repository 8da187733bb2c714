# shellcheck shell=bash
# Shared by the initramfs shell tests: sourced, not run.
set -eu
: "${MBOOT:?MBOOT must name the mboot binary}"
export LC_ALL=C
TMP=$(mktemp -d /tmp/mboot-initramfs.XXXXXX)
CLEANUP_MOUNTS=""
cleanup() {
	for m in $CLEANUP_MOUNTS; do umount "$m" 2>/dev/null || true; done
	rm -rf "$TMP"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

# The reference tree, created in a chosen order with explicit modes, so that copies differ in
# everything mboot must ignore (creation order, umask, mtimes, owners, file system) and agree
# in everything it keeps. $1 = directory (created), $2 = fwd|rev.
make_tree() {
	local d=$1 order=$2 dirs files f
	dirs="bin etc etc/sub etc/sub/deep usr usr/lib usr/lib/x empty-dir tmp run dev a"
	files="bin/sh bin/su etc/passwd etc/shadow etc/sub/deep/file usr/lib/x/libfoo.so empty-file a-b a/b big"
	if [ "$order" = rev ]; then
		dirs=$(printf '%s\n' $dirs | tac | tr '\n' ' ')
		files=$(printf '%s\n' $files | tac | tr '\n' ' ')
	fi
	mkdir -p "$d"
	for f in $dirs; do mkdir -p "$d/$f"; done
	for f in $files; do
		case $f in
		big) seq 1 300000 > "$d/$f" ;;              # 2 MB, deterministic
		empty-file) : > "$d/$f" ;;
		*) printf 'content of %s\n' "$f" > "$d/$f" ;;
		esac
	done
	printf 'space\n' > "$d/with space"
	printf 'latin1\n' > "$d/caf"$'\xe9'
	printf 'newline\n' > "$d/new"$'\n'"line"
	ln "$d/bin/sh" "$d/bin/ash"
	ln "$d/bin/sh" "$d/usr/sh-link"
	ln -s sh "$d/bin/busybox"
	ln -s usr/lib "$d/lib"
	ln -s loop "$d/etc/loop"
	ln -s ../../../../etc/passwd "$d/etc/outside"
	mkfifo "$d/run/initctl"
	mknod "$d/dev/console" c 5 1
	mknod "$d/dev/null" c 1 3
	mknod "$d/dev/sda" b 8 0
	# Explicit modes for everything (umask must not matter).
	find "$d" -mindepth 1 ! -type l -exec chmod 0644 {} +
	find "$d" -mindepth 1 -type d -exec chmod 0755 {} +
	chmod 0755 "$d/bin/sh" "$d/usr/lib/x/libfoo.so"
	chmod 4755 "$d/bin/su"
	chmod 0600 "$d/etc/shadow" "$d/run/initctl" "$d/dev/console"
	chmod 0666 "$d/dev/null"
	chmod 0660 "$d/dev/sda"
	chmod 1777 "$d/tmp"
	chmod 0700 "$d/etc/sub"
	chmod 0755 "$d"   # DIR itself is the archive's "." entry
}

# Vary what must not matter: another owner, random mtimes and atimes. (chown clears the
# set-user-ID bit, so it is set again: the mode is part of the tree, the owner is not.)
scramble() {
	local d=$1 seed=$2 i=0
	chown -R -h "$seed:$((seed + 1))" "$d"
	chmod 4755 "$d/bin/su"
	find "$d" -mindepth 1 -print0 | while IFS= read -r -d '' f; do
		i=$((i + 1))
		touch -h -d "@$(( (seed * 7919 + i * 104729) % 2000000000 ))" "$f"
	done
}

# sha256 of a file as coreutils computes it.
sha256() { sha256sum "$1" | cut -d' ' -f1; }
