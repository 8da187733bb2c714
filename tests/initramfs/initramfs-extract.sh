#!/bin/bash
# mboot's archives unpack with GNU cpio and with bsdtar (libarchive), after decompression by
# gzip and zstd, to the tree they were made from: contents (diff -r), types, modes, link
# counts, hard links, symlink targets, device numbers (stat); owner 0 and the chosen mtime.
. "$(dirname "$0")/lib.sh"
EPOCH=1700000000

make_tree "$TMP/src" fwd
scramble "$TMP/src" 4321   # owner 4321: the archive must say 0

# What stat says about a tree, without owners and times: name, raw mode, links, rdev, target.
describe() {
	(cd "$1" && find . -mindepth 1 -print0 | sort -z | xargs -0 stat -c '%n|%f|%h|%t:%T|%N')
}
describe "$TMP/src" > "$TMP/want"
[ "$(grep -c . "$TMP/want")" -ge 30 ] || fail "reference tree too small"

for comp in none gzip zstd; do
	"$MBOOT" initramfs pack "$TMP/src" -o "$TMP/img.$comp" --compress "$comp" --mtime $EPOCH > /dev/null
	case $comp in
	none) cat "$TMP/img.$comp" > "$TMP/plain" ;;
	gzip) gzip -dc "$TMP/img.$comp" > "$TMP/plain" ;;
	zstd) zstd -qdc "$TMP/img.$comp" > "$TMP/plain" ;;
	esac
	for tool in cpio bsdtar; do
		x="$TMP/x-$comp-$tool"
		mkdir -m 0700 "$x"
		case $tool in
		cpio) (cd "$x" && cpio -idm --no-absolute-filenames --quiet < "$TMP/plain") ;;
		bsdtar) bsdtar -xpf "$TMP/plain" -C "$x" ;;
		esac
		diff -r --no-dereference -x initctl -x console -x null -x sda "$TMP/src" "$x" || fail "$comp/$tool: contents differ"
		describe "$x" > "$TMP/got"
		diff "$TMP/want" "$TMP/got" || fail "$comp/$tool: types, modes, links or targets differ"
		# DIR's own mode came through the "." entry (bsdtar applies it to the target directory;
		# GNU cpio leaves an existing "." alone, the kernel applies it: see docs)
		if [ $tool = bsdtar ]; then
			[ "$(stat -c %a "$x")" = 755 ] || fail "$comp/$tool: root mode $(stat -c %a "$x"), want 755"
		fi
		# hard links: one inode for the three names
		[ "$(stat -c %i "$x/bin/sh" "$x/bin/ash" "$x/usr/sh-link" | sort -u | wc -l)" = 1 ] ||
			fail "$comp/$tool: hard links not restored"
		[ "$(stat -c %h "$x/bin/sh")" = 3 ] || fail "$comp/$tool: link count"
		# owner 0:0 everywhere
		[ -z "$(find "$x" -mindepth 1 \( ! -uid 0 -o ! -gid 0 \) -print -quit)" ] ||
			fail "$comp/$tool: an entry is not owned by 0:0"
		# The archive's mtime, as the extractor restores it: GNU cpio -m sets it on files
		# (its directories get "now" once files are created in them), bsdtar on directories too.
		sel="-type f"
		[ $tool = bsdtar ] && sel="( -type f -o -type d )"
		[ -z "$(find "$x" -mindepth 1 $sel ! -newermt @$((EPOCH - 1)) -print -quit)" ] &&
		[ -z "$(find "$x" -mindepth 1 $sel -newermt @$EPOCH -print -quit)" ] ||
			fail "$comp/$tool: mtime is not $EPOCH: $(find "$x" -mindepth 1 $sel -printf '%p %T@\n' | head -3)"
		ok "$comp: $tool extracts the same tree ($(grep -c . "$TMP/got") entries)"
	done
done

# The names as GNU cpio lists them (cpio -t) are mboot's (list --json), in the same order.
cpio -t --quiet < "$TMP/img.none" > "$TMP/cpio-t"
"$MBOOT" initramfs list "$TMP/img.none" --json | jq -r '.entries[].name' > "$TMP/mboot-t"
# mboot escapes bytes outside printable ASCII; cpio prints them raw: compare the escaped form.
sed -e 's/\\/\\x5c/g' "$TMP/cpio-t" | perl -pe 's/([^\x20-\x7e\n])/sprintf("\\x%02x", ord($1))/ge' \
	> "$TMP/cpio-t-esc"
# the name with a newline spans two lines in cpio -t: join it back
grep -v '^line$' "$TMP/cpio-t-esc" | sed 's/^new$/new\\x0aline/' > "$TMP/cpio-t-joined"
diff "$TMP/cpio-t-joined" "$TMP/mboot-t" || fail "cpio -t and mboot list disagree"
ok "cpio -t lists the entries mboot lists, in order"
