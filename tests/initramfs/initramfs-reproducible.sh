#!/bin/bash
# The same tree, made four ways (creation order, umask, mtimes, owners, disk vs tmpfs), packs
# to byte-identical archives, and the digests mboot prints are those sha*sum compute.
. "$(dirname "$0")/lib.sh"

(umask 022; make_tree "$TMP/a" fwd)
(umask 077; make_tree "$TMP/b" rev)
scramble "$TMP/b" 1234

# A tmpfs copy: mount one when we may (root), else use /dev/shm when it is tmpfs.
if mkdir "$TMP/mnt" && mount -t tmpfs -o size=64m mboot-test "$TMP/mnt" 2>/dev/null; then
	# shellcheck disable=SC2034 # unmounted by lib.sh's cleanup
	CLEANUP_MOUNTS="$TMP/mnt"
	TMPFS="$TMP/mnt"
elif [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
	TMPFS=$(mktemp -d /dev/shm/mboot-initramfs.XXXXXX)
	trap 'rm -rf "$TMPFS"; cleanup' EXIT
else
	echo "SKIP-PART: no tmpfs available (not root, no /dev/shm)"; TMPFS=""
fi
copies="a b"
if [ -n "$TMPFS" ]; then
	[ "$(stat -f -c %T "$TMPFS")" = tmpfs ] || fail "$TMPFS is not tmpfs"
	[ "$(stat -f -c %T "$TMP")" != tmpfs ] || echo "note: $TMP is tmpfs too"
	(umask 027; make_tree "$TMPFS/c" rev)
	scramble "$TMPFS/c" 42
	# d: a copy of a made by cp -a onto tmpfs, then touched again
	cp -a "$TMP/a" "$TMPFS/d"
	scramble "$TMPFS/d" 7
	ln -s "$TMPFS/c" "$TMP/c"
	ln -s "$TMPFS/d" "$TMP/d"
	copies="a b c d"
	ok "tmpfs copies at $TMPFS"
fi

for comp in none gzip zstd; do
	first=""
	for c in $copies; do
		out="$TMP/$c.$comp"
		SOURCE_DATE_EPOCH=1700000000 "$MBOOT" initramfs pack "$TMP/$c/" -o "$out" --compress "$comp" \
			> "$TMP/$c.$comp.txt"
		# The digests printed are the file's, as coreutils compute them.
		for alg in sha1 sha256 sha384; do
			want=$(${alg}sum "$out" | cut -d' ' -f1)
			got=$(awk -v a=$alg '$1 == a { print $2 }' "$TMP/$c.$comp.txt")
			[ "$got" = "$want" ] || fail "$comp/$c: mboot $alg $got, ${alg}sum $want"
		done
		if [ -z "$first" ]; then
			first=$out
		else
			cmp "$first" "$out" || fail "$comp: $c packs differently from a"
		fi
	done
	ok "$comp: copies $copies pack to identical bytes, sha256 $(sha256 "$first")"
	# --json and --policy-rule carry the same digest
	"$MBOOT" initramfs pack "$TMP/a" -o "$TMP/j.$comp" --compress "$comp" --mtime 1700000000 --json --policy-rule \
		> "$TMP/j.json"
	cmp "$first" "$TMP/j.$comp" || fail "--mtime 1700000000 differs from SOURCE_DATE_EPOCH=1700000000"
	want=$(sha256 "$first")
	[ "$(jq -r .digests.sha256 "$TMP/j.json")" = "$want" ] || fail "json digest"
	[ "$(jq -r '.policy.pcrs["9"].rules[0].digests[0].sha256' "$TMP/j.json")" = "$want" ] || fail "policy rule digest"
	[ "$(jq -r '.policy.pcrs["9"].rules[0].type' "$TMP/j.json")" = EV_IPL ] || fail "policy rule type"
	[ "$(jq -r '.policy.pcrs["9"].rules[1].type' "$TMP/j.json")" = EV_EVENT_TAG ] || fail "policy rule type"
	# The uncompressed archive's digest, as printed, is that of the decompressed file.
	case $comp in
	gzip) gzip -dc "$first" > "$TMP/dec" ;;
	zstd) zstd -qdc "$first" > "$TMP/dec" ;;
	none) cp "$first" "$TMP/dec" ;;
	esac
	[ "$(jq -r .cpio_sha256 "$TMP/j.json")" = "$(sha256 "$TMP/dec")" ] || fail "$comp: cpio_sha256"
	cmp "$TMP/dec" "$TMP/a.none" || fail "$comp: decompresses to something else than the plain archive"
done
"$MBOOT" initramfs pack "$TMP/a" -o "$TMP/p.img" --policy-rule > "$TMP/p.json"
[ "$(jq -r '.pcrs["9"].rules[0].digests[0].description' "$TMP/p.json")" = "initrd p.img" ] || fail "policy description"
[ "$(jq -r '.pcrs["9"].rules[0].digests[0].sha256' "$TMP/p.json")" = "$(sha256 "$TMP/p.img")" ] || fail "policy digest"
"$MBOOT" policy lint "$TMP/p.json" > /dev/null || fail "the printed policy does not load"
ok "policy rule: a policy that loads, PCR 9 EV_IPL and EV_EVENT_TAG with the file's digests"

# End to end: the boot of a real log (GRUB measures its initrd into PCR 9) with this initrd
# instead, as predict computes it; a policy made from the log, its initrd rule replaced by the
# printed rules, accepts that boot; without them it refuses it, at the initrd's event.
LOG=${MB_TESTDATA:?}/corpus/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9
# installed under the name GRUB loads today (another name moves PCR 8: test-predict-honest)
mkdir -p "$TMP/boot"
cp "$TMP/p.img" "$TMP/boot/initrd.img-5.7.0-rc2+"
"$MBOOT" predict --log "$LOG" --initrd "$TMP/boot/initrd.img-5.7.0-rc2+" --json --write-log "$TMP/next.bin" > "$TMP/next.json" ||
	fail "predict with the new initrd"
"$MBOOT" policy generate --from-log "$LOG" --pcrs 9 -o "$TMP/base.json" || fail "policy generate"
jq 'del(.pcrs["9"].rules[] | select(.digests[0].description | test("initrd")))' "$TMP/base.json" > "$TMP/without.json"
jq --slurpfile r "$TMP/p.json" '.pcrs["9"].rules += $r[0].pcrs["9"].rules' "$TMP/without.json" > "$TMP/with.json"
"$MBOOT" verify --log "$TMP/next.bin" --pcrs "$TMP/next.json" --no-userspace-log --policy "$TMP/with.json" \
	--json > "$TMP/v.json" || fail "the boot with the packed initrd does not meet the policy: $(jq -c .policy "$TMP/v.json")"
jq -e '.policy.ok and .policy.pcrs["9"] == "ok"' "$TMP/v.json" > /dev/null || fail "policy verdict $(jq -c .policy "$TMP/v.json")"
"$MBOOT" verify --log "$TMP/next.bin" --pcrs "$TMP/next.json" --no-userspace-log --policy "$TMP/without.json" \
	--json > "$TMP/v.json" && fail "without the printed rules the boot meets the policy"
jq -e --arg d "$(sha256 "$TMP/p.img")" '[.policy.violations[] | select(.pcr == 9 and .digest == $d)] | length == 1' \
	"$TMP/v.json" > /dev/null || fail "no violation at the initrd's event: $(jq -c .policy.violations "$TMP/v.json")"
ok "policy rule: its rules in a policy accept a boot of this initrd (mboot verify --policy), none refuses it"

# Another mtime gives another archive; the mtime is in every entry (GNU cpio -tv reads it).
"$MBOOT" initramfs pack "$TMP/a" -o "$TMP/m0" > /dev/null
"$MBOOT" initramfs pack "$TMP/a" -o "$TMP/m1" --mtime 86400 > /dev/null
! cmp -s "$TMP/m0" "$TMP/m1" || fail "--mtime ignored"
cpio -tv --quiet < "$TMP/m1" | grep -q 'Jan  2  1970 bin/sh$' || fail "GNU cpio does not read mtime 86400"
n=$("$MBOOT" initramfs list "$TMP/m0" --json | jq '.entries | length')
[ "$(cpio -tv --quiet < "$TMP/m0" | grep -c ' Jan  1  1970 ')" = "$n" ] || fail "default mtime is not 0"
ok "mtime from --mtime, SOURCE_DATE_EPOCH, else 0"

# Gzip header: no name (FLG 0), MTIME 0, XFL 0 (level 6), OS 3 -- RFC 1952 2.3.1, read by od.
hdr=$(od -An -tx1 -N10 "$TMP/a.gzip" | tr -d ' \n')
[ "$hdr" = 1f8b0800000000000003 ] || fail "gzip header $hdr"
gzip -lv "$TMP/a.gzip" > /dev/null || fail "gzip -l"
# zstd frame: checksum and content size (zstd -lv reads them)
zstd -lv "$TMP/a.zstd" 2>&1 | grep -q 'Check: XXH64' || fail "zstd frame has no checksum"
zstd -lv "$TMP/a.zstd" 2>&1 | grep -q "Decompressed Size:.*($(stat -c %s "$TMP/a.none") B)" || fail "zstd frame has no content size"
ok "gzip header and zstd frame parameters as documented"
