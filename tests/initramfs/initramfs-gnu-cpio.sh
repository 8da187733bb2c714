#!/bin/bash
# mboot against GNU cpio. For a tree without hard links, the rule of docs/initramfs.md is
#   touch DIR and every entry to EPOCH; cd DIR; find . -print0 | LC_ALL=C sort -z |
#   cpio -o -0 -H newc --reproducible -R 0:0
# (the pipeline of the issue, with -0 for names holding newlines)
# and must give the same bytes as 'mboot initramfs pack --mtime EPOCH'. With hard links GNU
# cpio emits a file's earlier names next to its last one, out of sorted order: then the
# entries (names, inode numbers, modes, link counts) must still agree.
. "$(dirname "$0")/lib.sh"
EPOCH=1600000000

gnu_pack() {
	(cd "$1" && find . -print0 | sort -z | cpio -o -0 -H newc --reproducible -R 0:0 --quiet)
}

make_tree "$TMP/t" rev
rm "$TMP/t/bin/ash" "$TMP/t/usr/sh-link"
find "$TMP/t" -exec touch -h -d @$EPOCH {} +
gnu_pack "$TMP/t" > "$TMP/gnu.cpio"
"$MBOOT" initramfs pack "$TMP/t" -o "$TMP/mboot.cpio" --mtime $EPOCH > /dev/null
cmp "$TMP/gnu.cpio" "$TMP/mboot.cpio" || fail "not byte-identical to GNU cpio for a tree without hard links"
n=$(cpio -t --quiet < "$TMP/gnu.cpio" | wc -l)
ok "byte-identical to GNU cpio --reproducible ($n lines of cpio -t, sha256 $(sha256 "$TMP/gnu.cpio"))"

# GNU cpio keeps each file's own mtime: without the touch the archives differ only there.
make_tree "$TMP/u" fwd
rm "$TMP/u/bin/ash" "$TMP/u/usr/sh-link"
gnu_pack "$TMP/u" > "$TMP/gnu-u.cpio"
"$MBOOT" initramfs pack "$TMP/u" -o "$TMP/mboot-u.cpio" --mtime $EPOCH > /dev/null
! cmp -s "$TMP/gnu-u.cpio" "$TMP/mboot-u.cpio" || fail "GNU cpio was expected to keep file mtimes"
"$MBOOT" initramfs list "$TMP/gnu-u.cpio" --json | jq -c '.entries[] | del(.mtime, .offset)' > "$TMP/g.j"
"$MBOOT" initramfs list "$TMP/mboot-u.cpio" --json | jq -c '.entries[] | del(.mtime, .offset)' > "$TMP/m.j"
diff "$TMP/g.j" "$TMP/m.j" || fail "entries differ in more than mtime"
ok "without the touch, only the mtimes differ"

# With hard links (bin/sh, bin/ash, usr/sh-link are one file).
make_tree "$TMP/h" fwd
find "$TMP/h" -exec touch -h -d @$EPOCH {} +
gnu_pack "$TMP/h" > "$TMP/gnu-h.cpio"
"$MBOOT" initramfs pack "$TMP/h" -o "$TMP/mboot-h.cpio" --mtime $EPOCH > /dev/null
cmp -s "$TMP/gnu-h.cpio" "$TMP/mboot-h.cpio" && fail "hard links: byte-identical (docs say they are not: update them)"
cpio -t --quiet < "$TMP/gnu-h.cpio" | sort > "$TMP/gnu-h.t"
cpio -t --quiet < "$TMP/mboot-h.cpio" | sort > "$TMP/mboot-h.t"
diff "$TMP/gnu-h.t" "$TMP/mboot-h.t" || fail "hard links: cpio -t lists differ"
# Same header fields per name; only where the data sits (size) and the order differ.
"$MBOOT" initramfs list "$TMP/gnu-h.cpio" --json | jq -c '.entries[] | del(.offset, .size, .sha256)' | sort > "$TMP/g.j"
"$MBOOT" initramfs list "$TMP/mboot-h.cpio" --json | jq -c '.entries[] | del(.offset, .size, .sha256)' | sort > "$TMP/m.j"
diff "$TMP/g.j" "$TMP/m.j" || fail "hard links: header fields differ"
# and GNU cpio puts the data on the last name it writes, mboot on the last in sorted order
[ "$(cpio -tv --quiet < "$TMP/mboot-h.cpio" | awk '$NF ~ /^(bin\/ash|bin\/sh|usr\/sh-link)$/ { printf "%s ", $5 }')" = "0 0 18 " ] ||
	fail "hard links: data is not on the last name (usr/sh-link)"
ok "hard links: same entries and inode numbers as GNU cpio, data on the last name, order differs"

# DIR's own mode is the "." entry's (GNU cpio stores it the same way); pack warns when the
# unpacked root would not be readable by everyone.
chmod 0700 "$TMP/t"
touch -d @$EPOCH "$TMP/t"
gnu_pack "$TMP/t" > "$TMP/gnu-700.cpio"
"$MBOOT" initramfs pack "$TMP/t" -o "$TMP/mboot-700.cpio" --mtime $EPOCH > /dev/null 2> "$TMP/err"
cmp "$TMP/gnu-700.cpio" "$TMP/mboot-700.cpio" || fail "DIR mode 0700: not byte-identical"
grep -q "warning: .* has mode 0700" "$TMP/err" || fail "no warning for a 0700 DIR"
[ "$(cpio -tv --quiet < "$TMP/mboot-700.cpio" | head -1 | cut -c1-10)" = drwx------ ] || fail "'.' entry mode"
ok "DIR itself is the first entry '.', with its mode; 0700 is warned about"
