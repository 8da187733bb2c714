#!/bin/bash
# 'pack' refuses what cannot be reproduced (sockets, files changing while read, over-long
# paths), never follows symlinks out of DIR, and rejects bad options with one line and exit 2.
. "$(dirname "$0")/lib.sh"
run() { rc=0; "$MBOOT" initramfs "$@" > "$TMP/out" 2> "$TMP/err" || rc=$?; }
usage_err() { run "$@"; [ $rc = 2 ] && [ "$(wc -l < "$TMP/err")" = 1 ] || fail "$*: exit $rc, $(cat "$TMP/err")"; }

mkdir -p "$TMP/t/sub"
printf 'x\n' > "$TMP/t/sub/f"
usage_err pack "$TMP/t"
usage_err pack "$TMP/t" -o
usage_err pack -o "$TMP/o"
usage_err pack "$TMP/t" -o "$TMP/o" --compress xz
usage_err pack "$TMP/t" -o "$TMP/o" --mtime -1
usage_err pack "$TMP/t" -o "$TMP/o" --mtime 4294967296
usage_err pack "$TMP/t" -o "$TMP/o" --mtime 12abc
SOURCE_DATE_EPOCH=yesterday usage_err pack "$TMP/t" -o "$TMP/o"
usage_err pack "$TMP/t" -o "$TMP/o" --bogus
usage_err list
usage_err frobnicate
for c in "" pack list verify; do
	run $c --help
	[ $rc = 0 ] && grep -q '^Usage: mboot initramfs' "$TMP/out" || fail "$c --help"
done
"$MBOOT" --help | grep -q '^  initramfs' || fail "initramfs missing from mboot --help"
run pack "$TMP/t" -o "$TMP/o" --force --mtime 4294967295
[ $rc = 0 ] || fail "--mtime 4294967295 refused"
ok "usage errors: one line, exit 2; --help on stdout, exit 0"

run pack "$TMP/nonexistent" -o "$TMP/o" --force
[ $rc = 2 ] && grep -q "nonexistent: cannot open directory" "$TMP/err" || fail "missing DIR: $rc $(cat "$TMP/err")"
[ "$(grep -o "$TMP/nonexistent" "$TMP/err" | wc -l)" = 1 ] || fail "missing DIR not named once: $(cat "$TMP/err")"
run verify "$TMP/o" "$TMP/nonexistent"
[ $rc = 2 ] && [ "$(grep -o "$TMP/nonexistent" "$TMP/err" | wc -l)" = 1 ] || fail "verify, missing DIR: $rc $(cat "$TMP/err")"
run pack "$TMP/t/sub/f" -o "$TMP/o" --force
[ $rc = 2 ] || fail "DIR is a file: exit $rc"
run pack "$TMP/t" -o "$TMP/nonexistent/o"
[ $rc = 2 ] || fail "unwritable output: exit $rc"
ok "missing or wrong DIR, unwritable FILE: exit 2"

# A socket is refused, by name.
perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Type => SOCK_STREAM(), Local => $ARGV[0], Listen => 1) or die' "$TMP/t/sub/sock"
run pack "$TMP/t" -o "$TMP/o" --force
[ $rc = 2 ] && grep -q "sub/sock: a socket cannot be stored" "$TMP/err" || fail "socket: exit $rc $(cat "$TMP/err")"
rm "$TMP/t/sub/sock"
ok "socket refused: $(cat "$TMP/err")"

# Symlinks are stored as links and never followed: loops, links out of DIR, links to dirs.
ln -s loop "$TMP/t/loop"
ln -s /etc "$TMP/t/etc-link"
ln -s /etc/passwd "$TMP/t/passwd-link"
ln -s "$TMP/t" "$TMP/t/self"
run pack "$TMP/t" -o "$TMP/o.cpio"
[ $rc = 0 ] || fail "symlinks: exit $rc $(cat "$TMP/err")"
cpio -tv --quiet < "$TMP/o.cpio" > "$TMP/tv"
grep -q ' etc-link -> /etc$' "$TMP/tv" && grep -q ' loop -> loop$' "$TMP/tv" &&
	grep -q ' passwd-link -> /etc/passwd$' "$TMP/tv" || fail "symlinks not stored as links: $(cat "$TMP/tv")"
[ "$(wc -l < "$TMP/tv")" = 7 ] || fail "symlinks were followed: $(cat "$TMP/tv")"
! grep -q "^root:" "$TMP/o.cpio" || fail "/etc/passwd content in the archive"
# DIR itself may be a symlink (the user named it)
ln -s "$TMP/t" "$TMP/t-link"
run pack "$TMP/t-link" -o "$TMP/o2.cpio"
cmp "$TMP/o.cpio" "$TMP/o2.cpio" || fail "DIR through a symlink packs differently"
ok "symlinks stored as links (GNU cpio -tv shows their targets), never followed"

# An existing FILE is kept byte for byte (exit 2) unless --force, which replaces it with
# what a fresh pack writes; a failed pack leaves no temp file beside FILE.
printf 'an initramfs someone boots\n' > "$TMP/kept"
cp "$TMP/kept" "$TMP/kept.orig"
run pack "$TMP/t" -o "$TMP/kept"
[ $rc = 2 ] && grep -q "kept already exists; not replaced (give --force" "$TMP/err" || fail "existing -o: exit $rc $(cat "$TMP/err")"
cmp -s "$TMP/kept" "$TMP/kept.orig" || fail "a refused pack changed FILE"
run pack "$TMP/t" -o "$TMP/fresh"
run pack "$TMP/t" -o "$TMP/kept" --force
[ $rc = 0 ] && cmp -s "$TMP/kept" "$TMP/fresh" || fail "--force: exit $rc, or FILE is not what a fresh pack writes"
run pack "$TMP/nonexistent" -o "$TMP/kept" --force
[ $rc = 2 ] && cmp -s "$TMP/kept" "$TMP/fresh" || fail "a failed pack --force: exit $rc, or FILE changed"
[ -z "$(find "$TMP" -maxdepth 1 -name '*.tmp*')" ] || fail "temp files left: $(find "$TMP" -maxdepth 1 -name '*.tmp*')"
ok "existing FILE: exit 2, unchanged; --force replaces it; a failed pack leaves no temp file"

# Paths longer than the 4095 bytes a newc name may hold (with its NUL, 4096) are refused.
n=$(printf 'n%.0s' $(seq 1 200))
(cd "$TMP/t" && for _ in $(seq 1 21); do mkdir "$n" && cd "$n"; done && : > file)
run pack "$TMP/t" -o "$TMP/o" --force
[ $rc = 2 ] && grep -q "path longer than 4095 bytes" "$TMP/err" || fail "long path: exit $rc $(head -c 300 "$TMP/err")"
rm -rf "$TMP/t/$n"
ok "paths over 4095 bytes refused"

# A file that changes while it is read is an error, not a silently different archive.
head -c 64M /dev/zero > "$TMP/t/sub/growing"
( while :; do printf x >> "$TMP/t/sub/growing"; done ) &
writer=$!
caught=0
for _ in 1 2 3 4 5 6 7 8 9 10; do
	run pack "$TMP/t" -o "$TMP/o" --force
	if [ $rc = 2 ] && grep -q "growing: changed while packing" "$TMP/err"; then caught=1; break; fi
	[ $rc = 0 ] || fail "changing file: exit $rc $(cat "$TMP/err")"
done
kill $writer; wait $writer 2>/dev/null || true
[ $caught = 1 ] || fail "a file growing during pack was not detected in 10 tries"
ok "file changing while packed: $(cat "$TMP/err")"
