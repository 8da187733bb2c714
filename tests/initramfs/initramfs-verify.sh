#!/bin/bash
# 'verify FILE DIR': 0 when FILE is what pack makes from DIR, 1 (naming the first entry that
# differs) when not, 2 on input errors. FILE made by GNU cpio from the same tree counts as
# outside evidence: it verifies when the rule of docs/initramfs.md was followed.
. "$(dirname "$0")/lib.sh"
EPOCH=1650000000
run() { rc=0; "$MBOOT" initramfs "$@" > "$TMP/out" 2> "$TMP/err" || rc=$?; }

make_tree "$TMP/t" fwd
for comp in none gzip zstd; do
	"$MBOOT" initramfs pack "$TMP/t" -o "$TMP/img.$comp" --compress $comp --mtime $EPOCH > /dev/null
	run verify "$TMP/img.$comp" "$TMP/t" --mtime $EPOCH
	[ $rc = 0 ] || fail "$comp: verify of a fresh pack: exit $rc $(cat "$TMP/out" "$TMP/err")"
	grep -q "identical" "$TMP/out" || fail "$comp: verify says $(cat "$TMP/out")"
done
ok "verify: fresh packs (none, gzip, zstd; compression detected) are identical"

# A GNU cpio archive of the same tree (no hard links, touched to EPOCH) verifies.
rm "$TMP/t/bin/ash" "$TMP/t/usr/sh-link"
find "$TMP/t" -exec touch -h -d @$EPOCH {} +
(cd "$TMP/t" && find . -print0 | sort -z | cpio -o -0 -H newc --reproducible -R 0:0 --quiet) > "$TMP/gnu.cpio"
run verify "$TMP/gnu.cpio" "$TMP/t" --mtime $EPOCH --json
[ $rc = 0 ] && [ "$(jq -r .result "$TMP/out")" = identical ] || fail "GNU cpio archive does not verify: $(cat "$TMP/out" "$TMP/err")"
[ "$(jq -r .digests.sha256 "$TMP/out")" = "$(sha256 "$TMP/gnu.cpio")" ] || fail "verify --json digest"
# gzip -n of the GNU archive: same entries, other deflate bytes than zlib's -> 1, says so
gzip -n < "$TMP/gnu.cpio" > "$TMP/gnu.cpio.gz"
run verify "$TMP/gnu.cpio.gz" "$TMP/t" --mtime $EPOCH
if [ $rc = 0 ]; then
	ok "gzip -n output happens to equal zlib's"
else
	[ $rc = 1 ] && grep -q "same entries, different bytes" "$TMP/out" || fail "gzip -n: exit $rc $(cat "$TMP/out" "$TMP/err")"
fi
ok "verify: GNU cpio's archive of the same tree is identical; its gzip -n form has the same entries"

"$MBOOT" initramfs pack "$TMP/t" -o "$TMP/ref" --mtime $EPOCH > /dev/null
# wrong mtime
run verify "$TMP/ref" "$TMP/t"
[ $rc = 1 ] && grep -q "at entry 0 '.': mtime $EPOCH vs 0" "$TMP/out" || fail "mtime: exit $rc $(cat "$TMP/out" "$TMP/err")"
# changed content of one file
printf 'tampered\n' > "$TMP/t/etc/passwd"
run verify "$TMP/ref" "$TMP/t" --mtime $EPOCH
[ $rc = 1 ] && grep -q "'etc/passwd': size" "$TMP/out" || fail "content: exit $rc $(cat "$TMP/out")"
printf 'content of etc/passwe\n' > "$TMP/t/etc/passwd"
run verify "$TMP/ref" "$TMP/t" --mtime $EPOCH --json
[ $rc = 1 ] && [ "$(jq -r .first_difference.name "$TMP/out")" = etc/passwd ] &&
	[ "$(jq -r .first_difference.what "$TMP/out")" = data ] || fail "data: exit $rc $(cat "$TMP/out")"
printf 'content of etc/passwd\n' > "$TMP/t/etc/passwd"
# mode
chmod 0640 "$TMP/t/etc/passwd"
run verify "$TMP/ref" "$TMP/t" --mtime $EPOCH
[ $rc = 1 ] && grep -q "'etc/passwd': mode 0100644 vs 0100640" "$TMP/out" || fail "mode: exit $rc $(cat "$TMP/out")"
chmod 0644 "$TMP/t/etc/passwd"
# extra file in DIR
: > "$TMP/t/zzz"
run verify "$TMP/ref" "$TMP/t" --mtime $EPOCH
[ $rc = 1 ] && grep -q "missing" "$TMP/out" || fail "extra file: exit $rc $(cat "$TMP/out")"
rm "$TMP/t/zzz"
run verify "$TMP/ref" "$TMP/t" --mtime $EPOCH
[ $rc = 0 ] || fail "restored tree does not verify: $(cat "$TMP/out")"
# other compression asked for
run verify "$TMP/ref" "$TMP/t" --mtime $EPOCH --compress gzip
[ $rc = 1 ] || fail "--compress gzip against a plain file: exit $rc"
ok "verify: mtime, content, mode, extra file, compression each give exit 1 and name the entry"

# input errors: 2
run verify "$TMP/ref" "$TMP/nonexistent"
[ $rc = 2 ] || fail "missing DIR: exit $rc"
run verify "$TMP/nonexistent" "$TMP/t"
[ $rc = 2 ] || fail "missing FILE: exit $rc"
run verify "$TMP/ref"
[ $rc = 2 ] && [ "$(wc -l < "$TMP/err")" = 1 ] || fail "missing DIR argument: exit $rc"
ok "verify: input and usage errors exit 2"
