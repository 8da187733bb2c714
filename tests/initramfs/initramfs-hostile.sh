#!/bin/bash
# Hostile archives for 'list' and 'verify': truncated, bad magic, huge or zero name sizes,
# huge file sizes, non-hex digits, '..' and absolute names, corrupt or truncated gzip/zstd,
# decompression bombs (zeros after the trailer, one huge zero-filled entry, a chain of tiny
# segments: built here with gzip and zstd, refused in bounded memory and time). Each must exit 2 with a message naming the byte offset, write nothing, and
# (under ASan) neither crash nor leak. The archives are built here field by field
# (buffer-format.rst): "070701", 13 x 8 hex digits, name, NUL, pad to 4, data, pad to 4.
. "$(dirname "$0")/lib.sh"

# entry NAME MODE(hex) FILESIZE [NAMESIZE] -- header and name (data is appended by the caller)
entry() {
	local name=$1 mode=$2 size=$3 ns=${4:-$(( ${#1} + 1 ))}
	printf '070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X' \
		1 $((16#$mode)) 0 0 1 0 "$size" 0 0 0 0 "$ns" 0
	printf '%s\0' "$name"
	head -c $(( (4 - (110 + ${#name} + 1) % 4) % 4 )) /dev/zero
}
trailer() { entry TRAILER!!! 0 0; }

mkdir "$TMP/empty" "$TMP/cwd"
# expect_bad FILE "message part" [offset]: list and verify exit 2 and say where.
expect_bad() {
	local f=$1 msg=$2 off=${3:-} rc
	for cmd in "list $f" "verify $f $TMP/empty"; do
		rc=0
		(cd "$TMP/cwd" && "$MBOOT" initramfs $cmd > "$TMP/out" 2> "$TMP/err") || rc=$?
		[ $rc = 2 ] || fail "$cmd: exit $rc, want 2 ($(cat "$TMP/err"))"
		grep -qF -- "$msg" "$TMP/err" || fail "$cmd: message '$(cat "$TMP/err")' lacks '$msg'"
		if [ -n "$off" ]; then
			grep -q "at byte $off " "$TMP/err" || fail "$cmd: message '$(cat "$TMP/err")' lacks 'at byte $off'"
		fi
		[ "$(wc -l < "$TMP/err")" = 1 ] || fail "$cmd: more than one line of error"
		[ -z "$(ls -A "$TMP/cwd")" ] || fail "$cmd: wrote into the working directory"
	done
	ok "$(basename "$f"): exit 2, '$(cat "$TMP/err")'"
}

# A valid reference, checked by GNU cpio, so the builder above is right.
{ entry hello 81A4 6; printf 'hello\n'; head -c 2 /dev/zero; trailer; } > "$TMP/good.cpio"
[ "$(cpio -t --quiet < "$TMP/good.cpio")" = hello ] || fail "reference archive unreadable by GNU cpio"
"$MBOOT" initramfs list "$TMP/good.cpio" > /dev/null || fail "reference archive rejected"
ok "reference archive accepted by GNU cpio and mboot"

{ printf '070707'; tail -c +7 "$TMP/good.cpio"; } > "$TMP/magic.cpio"
expect_bad "$TMP/magic.cpio" "bad magic" 0
# random bytes after a first byte that cannot start the magic (a random '0' there would move
# the refusal to byte 1: one run in 256)
{ printf 'Z'; head -c 5 /dev/urandom; printf 'X'; } > "$TMP/random-short.cpio"
expect_bad "$TMP/random-short.cpio" "" 0

size=$(stat -c %s "$TMP/good.cpio")
for cut in 3 50 109 110 115 118 121 124; do
	head -c $cut "$TMP/good.cpio" > "$TMP/cut-$cut.cpio"
	expect_bad "$TMP/cut-$cut.cpio" "truncated"
done
head -c $((size - 20)) "$TMP/good.cpio" > "$TMP/cut-trailer.cpio"
expect_bad "$TMP/cut-trailer.cpio" "truncated"
{ entry hello 81A4 6; printf 'hello\n'; head -c 2 /dev/zero; } > "$TMP/no-trailer.cpio"
expect_bad "$TMP/no-trailer.cpio" "no 'TRAILER!!!'" 124
: > "$TMP/empty.cpio"
expect_bad "$TMP/empty.cpio" "no archive" 0

{ entry hello 81A4 0 4294967295; } > "$TMP/huge-name.cpio"
expect_bad "$TMP/huge-name.cpio" "name size 4294967295 over the cap" 94
{ entry hello 81A4 0 0; } > "$TMP/zero-name.cpio"
expect_bad "$TMP/zero-name.cpio" "name size 0" 94
{ entry hello 81A4 0 5; } > "$TMP/name-no-nul.cpio"   # 5 bytes "hello", no NUL
expect_bad "$TMP/name-no-nul.cpio" "NUL-terminated" 110
{ entry hello 81A4 4294967295; trailer; } > "$TMP/huge-file.cpio"
expect_bad "$TMP/huge-file.cpio" "file size 4294967295 over the cap" 54
{ entry hello 81A4 2147483647; trailer; } > "$TMP/long-file.cpio"
expect_bad "$TMP/long-file.cpio" "truncated data of 'hello'" 116
{ entry dir 41ED 4; printf 'data'; trailer; } > "$TMP/dir-data.cpio"
expect_bad "$TMP/dir-data.cpio" "not a file but has 4 bytes" 54
{ entry link A1FF 0; trailer; } > "$TMP/empty-link.cpio"
expect_bad "$TMP/empty-link.cpio" "symlink 'link' with a target of 0 bytes" 54
{ entry weird F1A4 0; trailer; } > "$TMP/bad-type.cpio"
expect_bad "$TMP/bad-type.cpio" "unknown file type" 14
{ sed '1s/^\(.\{21\}\)./\1G/' "$TMP/good.cpio"; } > "$TMP/nonhex.cpio"
expect_bad "$TMP/nonhex.cpio" "header field mode: not a hex digit" 21
{ printf '070701 0000001'; tail -c +15 "$TMP/good.cpio"; } > "$TMP/space-hex.cpio"
expect_bad "$TMP/space-hex.cpio" "header field ino: not a hex digit" 6

for evil in ../../../tmp/evil a/../../evil .. /etc/evil; do
	{ entry "$evil" 81A4 4; printf 'evil'; trailer; } > "$TMP/evil.cpio"
	expect_bad "$TMP/evil.cpio" "$([ "${evil:0:1}" = / ] && echo absolute name || echo "'..' component")" 110
done
[ ! -e /tmp/evil ] && [ ! -e "$TMP/evil" ] || fail "something wrote 'evil'"

# Junk after the trailer that is neither NUL padding nor another archive.
{ cat "$TMP/good.cpio"; printf 'JUNK'; } > "$TMP/junk.cpio"
expect_bad "$TMP/junk.cpio" "bad magic" "$size"

# Compressed: truncated, corrupt, a bomb.
gzip -n < "$TMP/good.cpio" > "$TMP/good.gz"
head -c $(( $(stat -c %s "$TMP/good.gz") - 6 )) "$TMP/good.gz" > "$TMP/cut.gz"
expect_bad "$TMP/cut.gz" "gzip data truncated"
{ printf '\037\213\010\000\000\000\000\000\000\003'; head -c 64 /dev/zero | tr '\0' '\377'; } > "$TMP/corrupt.gz"
expect_bad "$TMP/corrupt.gz" "gzip data corrupt"
zstd -q < "$TMP/good.cpio" > "$TMP/good.zst"
head -c $(( $(stat -c %s "$TMP/good.zst") - 5 )) "$TMP/good.zst" > "$TMP/cut.zst"
expect_bad "$TMP/cut.zst" "zstd data truncated"
{ head -c 4 "$TMP/good.zst"; head -c 64 /dev/zero | tr '\0' '\377'; } > "$TMP/corrupt.zst"
expect_bad "$TMP/corrupt.zst" "zstd data corrupt"
# compressed data that is not cpio
printf 'not an archive' | gzip -n > "$TMP/notcpio.gz"
expect_bad "$TMP/notcpio.gz" "bad magic (want 070701" 0
gzip -dc "$TMP/good.gz" | cmp - "$TMP/good.cpio"
"$MBOOT" initramfs list "$TMP/good.gz" > /dev/null || fail "gzip reference rejected"
"$MBOOT" initramfs list "$TMP/good.zst" > /dev/null || fail "zstd reference rejected"

# Decompression bombs. Each must be refused (exit 2, the message) by list and by verify in
# under 64 MiB of peak RSS and a few seconds; the bombs are piped from /dev/zero through the
# real compressors, so nothing big touches the disk.
rss_max_kb=65536
# ASan reserves shadow memory and keeps freed blocks in quarantine: give it more room.
if ldd "$MBOOT" 2>/dev/null | grep -q libasan; then rss_max_kb=262144; fi
# bounded FILE "message": list and verify exit 2 with the message, within memory and time.
bounded() {
	local f=$1 msg=$2 cmd rc kb t0 ms
	for cmd in "list $f" "verify $f $TMP/empty"; do
		rc=0
		t0=$(date +%s%N)
		(cd "$TMP/cwd" && /usr/bin/time -f %M -o "$TMP/rss" "$MBOOT" initramfs $cmd > "$TMP/out" 2> "$TMP/err") || rc=$?
		ms=$(( ($(date +%s%N) - t0) / 1000000 ))
		kb=$(tail -n 1 "$TMP/rss")
		[ $rc = 2 ] || fail "$cmd: exit $rc, want 2 ($(cat "$TMP/err"))"
		grep -qF -- "$msg" "$TMP/err" || fail "$cmd: message '$(cat "$TMP/err")' lacks '$msg'"
		[ "$kb" -lt $rss_max_kb ] || fail "$cmd: peak RSS $kb KiB, over $rss_max_kb"
		[ $ms -lt 3000 ] || fail "$cmd: took $ms ms"
		ok "$(basename "$f") ($(stat -c %s "$f") bytes): $(echo "$cmd" | cut -d' ' -f1), exit 2 in $ms ms, $kb KiB: $(cat "$TMP/err")"
	done
}
command -v /usr/bin/time > /dev/null || fail "/usr/bin/time missing (the time package)"

# 1. A real archive (GNU cpio reads it, above), then 2 GiB of zeros in one zstd frame (the
# issue's 66 KB bomb) and 256 MiB in one gzip member (gzip is slow to make more). The kernel skips NULs after a trailer, but no tool pads by gigabytes:
# past 1 MiB of NULs in a row it is a bomb (docs/initramfs.md).
{ cat "$TMP/good.cpio"; head -c 2G /dev/zero; } | zstd -q > "$TMP/tail-bomb.zst"
bounded "$TMP/tail-bomb.zst" "more than 1048576 NUL bytes of padding"
{ cat "$TMP/good.cpio"; head -c 256M /dev/zero; } | gzip -1 -n > "$TMP/tail-bomb.gz"
bounded "$TMP/tail-bomb.gz" "more than 1048576 NUL bytes of padding"
# Padding up to the cap is what the kernel takes: listed, with the archive's one entry.
{ cat "$TMP/good.cpio"; head -c $(( 1048576 - size % 4 )) /dev/zero; } | zstd -q > "$TMP/padded.zst"
"$MBOOT" initramfs list "$TMP/padded.zst" --json > "$TMP/out" || fail "1 MiB of padding refused"
[ "$(jq -c '[.entries[].name, .segments[0].cpio_size]' "$TMP/out")" = "[\"hello\",$((size + 1048576 - size % 4))]" ] ||
	fail "padded archive listed as $(jq -c . "$TMP/out")"
ok "archive + 1 MiB of NULs in zstd: listed ('hello')"

# 2. One entry declaring a 3 GiB file: over the 2 GiB cap, refused from its header (so 64 MiB
# of its zeros are enough). Declaring 2 GiB - 1 (under that cap): the expansion ratio stops it.
{ entry big 81A4 $((3 << 30)); head -c 64M /dev/zero; } | zstd -q -1 > "$TMP/file-bomb.zst"
bounded "$TMP/file-bomb.zst" "file size 3221225472 over the cap of 2 GiB"
{ entry big 81A4 2147483647; head -c 2200M /dev/zero; } | zstd -q -1 > "$TMP/bomb.zst"
[ "$(stat -c %s "$TMP/bomb.zst")" -lt 1000000 ] || fail "bomb too big"
bounded "$TMP/bomb.zst" "decompressed data over 256 times its compressed size"

# 3. A chain of tiny segments: each the reference archive in its own zstd frame. 64 are
# listed (64 entries 'hello'); 8192 are refused at the 65th, before reading on.
zstd -q < "$TMP/good.cpio" > "$TMP/one.zst"
for _ in $(seq 64); do cat "$TMP/one.zst"; done > "$TMP/chain64.zst"
[ "$("$MBOOT" initramfs list "$TMP/chain64.zst" --json | jq '[.entries[] | select(.name == "hello")] | length')" = 64 ] ||
	fail "64 segments not listed"
cp "$TMP/one.zst" "$TMP/chain.zst"
for _ in $(seq 13); do cat "$TMP/chain.zst" "$TMP/chain.zst" > "$TMP/chain2.zst"; mv "$TMP/chain2.zst" "$TMP/chain.zst"; done
bounded "$TMP/chain.zst" "at byte $((64 * $(stat -c %s "$TMP/one.zst"))) (0x"
grep -qF "more than 64 concatenated archives" "$TMP/err" || fail "chain: $(cat "$TMP/err")"
[ -z "$(ls -A "$TMP/cwd")" ] || fail "something was written"
ok "nothing written by list or verify"
