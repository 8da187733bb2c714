#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# 'mboot hash': Authenticode digests of real EFI binaries against pesign (sha1, sha256,
# padded), osslsigncode and sbverify, computed now; plain digests against sha*sum;
# signed, doubly signed, trailing-data and data-after-certificate images; hostile images.
# More images via MB_TEST_EFI="FILE ..."; the Debian kernel comes from the real-boot suite's cache.
set -eu -o pipefail

M=${MBOOT:?}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

# mboot's Authenticode digests of all the images come from two runs (below: one plain, one
# --pad) into DIG; sha answers from there, and runs mboot for a file or bank not in it.
declare -A DIG=()
sha() { # sha ALG FILE [--pad]: mboot's Authenticode digest
	local k="$1 ${3:-} $2"
	if [ -n "${DIG[$k]:-}" ]; then
		echo "${DIG[$k]}"
	else
		"$M" hash --authenticode --alg "$1" --json ${3:-} "$2" | jq -r ".files[0].digests.$1"
	fi
}
pesign_hash() { # pesign_hash FILE [pesign args...]
	local f=$1; shift
	pesign -h -i "$f" "$@" | awk '/^hash:/ { print $2 }'
}
# shellcheck source=tests/cli/pe-bytes.sh
. "$(dirname "$0")/pe-bytes.sh"
size_of() { stat -c %s "$1"; }
embedded_digest() { # the digest inside a signed image's first signature (SpcIndirectDataContent)
	sbattach --detach "$T/sig.p7" "$1" >/dev/null 2>&1 || return 0
	openssl asn1parse -inform DER -in "$T/sig.p7" 2>/dev/null |
		awk '/:1.3.6.1.4.1.311.2.1.4/ { f = 1 } f && !done && /prim: OCTET STRING/ { sub(/.*:/, ""); print tolower($0); done = 1 }'
	rm -f "$T/sig.p7"
}
# Header offsets of a PE image (PE Format: e_lfanew at 0x3c, COFF header, optional header).
pe_off() { u32 "$1" 60; }
opt_off() { echo $(($(pe_off "$1") + 24)); }
secdir_off() { # the Certificate Table directory entry
	local o; o=$(opt_off "$1")
	if [ "$(u16 "$1" "$o")" = 267 ]; then echo $((o + 96 + 32)); else echo $((o + 112 + 32)); fi
}

# --- images -------------------------------------------------------------------------
# Tiny PE32 and PE32+ EFI applications linked here (binutils), a GRUB image made with
# grub-mkimage, and every EFI binary the installed Debian packages ship.
printf '.text\n.globl _start\n_start: ret\n.data\n.long 1,2,3\n' >"$T/t.s"
as --32 -o "$T/t32.o" "$T/t.s" && ld -m i386pe --subsystem 10 -e _start -o "$T/tiny32.efi" "$T/t32.o"
as --64 -o "$T/t64.o" "$T/t.s" && ld -m i386pep --subsystem 10 -e _start -o "$T/tiny64.efi" "$T/t64.o"
grub-mkimage -O x86_64-efi -p /EFI/debian -o "$T/grub-mkimage.efi" normal
images=("$T/tiny32.efi" "$T/tiny64.efi" "$T/grub-mkimage.efi")
for f in /usr/lib/grub/x86_64-efi/monolithic/*.efi /usr/lib/grub/i386-efi/monolithic/*.efi \
	/usr/lib/shim/*.efi /usr/lib/shim/*.efi.signed /usr/lib/systemd/boot/efi/*.efi \
	/usr/lib/systemd/boot/efi/*.efi.stub /boot/vmlinuz-* ${MB_TEST_EFI:-}; do
	[ -f "$f" ] && [ "$(head -c 2 "$f")" = MZ ] && images+=("$f")
done
# Debian's signed kernel (an EFI-stub PE with a real Authenticode signature), from the real-boot
# suite's cache: apt-get download, the package registry only.
kernel=$( (. "${MB_SOURCE_ROOT:?}/tests/vm/lib.sh" && vm_kernel) ) || { echo "FAIL: no Debian kernel could be had"; exit 1; }
images+=("$kernel")

# A unified kernel image made the way ukify/objcopy make one, from systemd's EFI stub.
stub=/usr/lib/systemd/boot/efi/linuxx64.efi.stub
if [ -f "$stub" ]; then
	echo "root=/dev/vda1 quiet" >"$T/cmdline"
	objcopy --add-section .osrel=/etc/os-release --change-section-vma .osrel=0x30000 \
		--add-section .cmdline="$T/cmdline" --change-section-vma .cmdline=0x40000 \
		--add-section .linux="$T/tiny64.efi" --change-section-vma .linux=0x2000000 \
		--add-section .initrd="$T/cmdline" --change-section-vma .initrd=0x3000000 "$stub" "$T/uki.efi"
	"$M" hash --authenticode --info --json "$T/uki.efi" |
		jq -e '.files[0].pe | .uki and .sbat and ([.sections[].name] | index(".initrd") != null)' >/dev/null ||
		fail "UKI not recognised"
	"$M" hash --authenticode --info --json "$stub" | jq -e '.files[0].pe.uki == false' >/dev/null ||
		fail "the bare stub is not a UKI"
	images+=("$T/uki.efi")
	ok "UKI built from systemd's stub recognised (.linux, .sbat, .osrel, .cmdline, .initrd)"
fi

# A throwaway signing key; signed images are made here so that a signed image is
# always tested, with or without a signed package installed.
openssl req -new -x509 -newkey rsa:2048 -nodes -keyout "$T/k.pem" -out "$T/c.pem" -days 1 \
	-subj /CN=mboot-test 2>/dev/null
sbsign --key "$T/k.pem" --cert "$T/c.pem" --output "$T/grub-signed.efi" "$T/grub-mkimage.efi" 2>/dev/null
sbsign --key "$T/k.pem" --cert "$T/c.pem" --output "$T/grub-signed2.efi" "$T/grub-signed.efi" 2>/dev/null
[ "$(sbverify --list "$T/grub-signed2.efi" | grep -c '^signature')" = 2 ] || fail "sbsign did not sign twice"
cp "$T/grub-signed.efi" "$T/after-cert.efi"
head -c 24 /dev/urandom >>"$T/after-cert.efi"        # data after the certificate table
cp "$T/tiny64.efi" "$T/trailing.efi"
head -c 1001 /dev/urandom >>"$T/trailing.efi"        # trailing data, no certificate, odd length
images+=("$T/grub-signed.efi" "$T/grub-signed2.efi" "$T/after-cert.efi" "$T/trailing.efi")

# --- Authenticode against pesign, osslsigncode ----------------------------------------
# One mboot run for every image (four banks, --info), one for the padded sha256: each file is
# reported on its own, so each must be there, with its digests.
declare -A FMT=() SIGNED=() ATEND=()
"$M" hash --authenticode --info --json "${images[@]}" >"$T/all.json" || fail "hash of the images: exit $?"
"$M" hash --authenticode --pad --alg sha256 --json "${images[@]}" >"$T/pad.json" || fail "hash --pad: exit $?"
while IFS=$'\t' read -r p d1 d256 d384 d512 fmt signed atend; do
	DIG["sha1  $p"]=$d1 DIG["sha256  $p"]=$d256 DIG["sha384  $p"]=$d384 DIG["sha512  $p"]=$d512
	FMT[$p]=$fmt SIGNED[$p]=$signed ATEND[$p]=$atend
done < <(jq -r '.files[] | [.path, .digests.sha1, .digests.sha256, .digests.sha384, .digests.sha512,
	.pe.format, .pe.signed, (.pe.cert_table_at_end // false)] | @tsv' "$T/all.json")
while IFS=$'\t' read -r p d256; do
	DIG["sha256 --pad $p"]=$d256
done < <(jq -r '.files[] | [.path, .digests.sha256] | @tsv' "$T/pad.json")
n=0 n32=0 n64=0 nsigned=0 nossl=0 nemb=0
for f in "${images[@]}"; do
	[ -n "${FMT[$f]:-}" ] && [ -n "${DIG["sha256 --pad $f"]:-}" ] || fail "$f: not in mboot's output"
	want=$(pesign_hash "$f")
	got=$(sha sha256 "$f")
	[ -n "$want" ] && [ "$got" = "$want" ] || fail "$f: sha256 mboot $got, pesign -h $want"
	want=$(pesign_hash "$f" -d sha1)
	got=$(sha sha1 "$f")
	[ "$got" = "$want" ] || fail "$f: sha1 mboot $got, pesign -h -d sha1 $want"
	want=$(pesign_hash "$f" -P)
	got=$(sha sha256 "$f" --pad)
	[ "$got" = "$want" ] || fail "$f: padded sha256 mboot $got, pesign -h -P $want"
	case ${FMT[$f]} in
	PE32) n32=$((n32 + 1)) ;;
	PE32+) n64=$((n64 + 1)) ;;
	esac
	if [ "${SIGNED[$f]}" = true ]; then
		nsigned=$((nsigned + 1))
		# the digest the signer put in the signature (Debian's kernel signer, Microsoft's for
		# shim, sbsign here), for the algorithm the signature uses
		emb=$(embedded_digest "$f")
		case ${#emb} in
		40) ealg=sha1 ;; 64) ealg=sha256 ;; 96) ealg=sha384 ;; 128) ealg=sha512 ;; *) ealg= ;;
		esac
		if [ -n "$ealg" ] && [ "${ATEND[$f]}" = true ]; then
			[ "$(sha "$ealg" "$f")" = "$emb" ] || fail "$f: digest in the signature $emb"
			nemb=$((nemb + 1))
		fi
		# osslsigncode recomputes the digest with the signature's algorithm (it refuses
		# images with data after the certificate table, as shim does).
		if command -v osslsigncode >/dev/null && [ "${ATEND[$f]}" = true ]; then
			out=$(osslsigncode verify -in "$f" 2>&1 || true)
			calc=$(awk -F: '/^Calculated message digest/ { gsub(/ /, "", $2); print tolower($2) }' <<<"$out" | head -1)
			alg=$(awk -F: '/^Message digest algorithm  /{ gsub(/ /, "", $2); print tolower($2) }' <<<"$out" | head -1)
			# (it cannot read a table of several WIN_CERTIFICATE entries, as shim-signed's)
			if [ -n "$calc" ]; then
				[ "$(sha "$alg" "$f")" = "$calc" ] || fail "$f: osslsigncode calculated $alg $calc"
				nossl=$((nossl + 1))
			fi
		fi
	fi
	n=$((n + 1))
	echo "  $(sha sha256 "$f")  $f"
done
[ "$n32" -ge 1 ] && [ "$n64" -ge 3 ] && [ "$nsigned" -ge 3 ] || fail "too few images: PE32 $n32 PE32+ $n64 signed $nsigned"
ok "$n images ($n32 PE32, $n64 PE32+, $nsigned signed): sha256, sha1 and padded sha256 equal pesign's"
[ "$nemb" -ge 2 ] || fail "only $nemb signatures carried a digest we could read"
ok "$nemb signed images: digest equals the one inside their signature"
command -v osslsigncode >/dev/null && { [ "$nossl" -ge 1 ] || fail "osslsigncode checked only $nossl images"; }
ok "$nossl signed images: digest equals osslsigncode's calculated digest"

# Signing: the digest a signer embeds is the padded digest of the unsigned image; the
# signed image's (unpadded) digest equals it, and sbverify accepts the signature.
unsigned=$(sha sha256 "$T/grub-mkimage.efi" --pad)
[ "$(sha sha256 "$T/grub-signed.efi")" = "$unsigned" ] || fail "signed digest differs from the padded unsigned one"
[ "$(sha sha256 "$T/grub-signed2.efi")" = "$unsigned" ] || fail "second signature changed the digest"
sbverify --cert "$T/c.pem" "$T/grub-signed2.efi" >/dev/null 2>&1 || fail "sbverify rejects the signed image"
if [ -f /usr/lib/shim/shimx64.efi ] && [ -f /usr/lib/shim/shimx64.efi.signed ]; then
	# Debian's unsigned shim is not 8-aligned; Microsoft signed the padded image
	[ "$(sha sha256 /usr/lib/shim/shimx64.efi --pad)" = "$(sha sha256 /usr/lib/shim/shimx64.efi.signed)" ] &&
		[ "$(sha sha256 /usr/lib/shim/shimx64.efi)" != "$(sha sha256 /usr/lib/shim/shimx64.efi.signed)" ] ||
		fail "shimx64.efi --pad differs from shimx64.efi.signed"
fi
ok "signed and doubly signed images hash as the padded unsigned image; sbverify agrees"

# A gap between sections (pesign refuses such an image): firmware (EDK2) hashes each
# section, then the extra data from SUM_OF_BYTES_HASHED; sbsign embeds that digest and
# sbverify accepts it. (osslsigncode hashes the file contiguously instead and calls the
# signature a mismatch: see docs/pe.md.)
g=$T/gap.efi
cp "$T/tiny64.efi" "$g"
gsec=$(($(opt_off "$g") + $(u16 "$g" $(($(pe_off "$g") + 20)))))
poke32 "$g" $((gsec + 16)) $(($(u32 "$g" $((gsec + 16))) / 2))
sbsign --key "$T/k.pem" --cert "$T/c.pem" --output "$T/gap-s.efi" "$g" 2>/dev/null
sbverify --cert "$T/c.pem" "$T/gap-s.efi" >/dev/null 2>&1 || fail "gap: sbverify rejects"
emb=$(embedded_digest "$T/gap-s.efi")
[ -n "$emb" ] && [ "$(sha sha256 "$g" --pad)" = "$emb" ] && [ "$(sha sha256 "$T/gap-s.efi")" = "$emb" ] ||
	fail "gap: sbsign embedded $emb"
"$M" hash --authenticode --info --json "$g" | jq -e '.files[0].pe.extra_data_size > 0' >/dev/null || fail "gap: extra"
ok "image with a gap between sections: digest equals the one sbsign embeds; sbverify agrees"

# sha384 and sha512 against osslsigncode: sign with those digests and let it recompute.
if command -v osslsigncode >/dev/null; then
	for alg in sha384 sha512 sha1; do
		osslsigncode sign -h "$alg" -certs "$T/c.pem" -key "$T/k.pem" -in "$T/tiny64.efi" \
			-out "$T/o-$alg.efi" >/dev/null 2>&1
		out=$(osslsigncode verify -in "$T/o-$alg.efi" 2>&1 || true)
		calc=$(awk -F: '/^Calculated message digest/ { gsub(/ /, "", $2); print tolower($2) }' <<<"$out" | head -1)
		[ -n "$calc" ] && [ "$(sha "$alg" "$T/o-$alg.efi")" = "$calc" ] || fail "$alg: osslsigncode $calc"
		[ "$(sha "$alg" "$T/tiny64.efi" --pad)" = "$calc" ] || fail "$alg: padded unsigned differs"
	done
	ok "sha1, sha384, sha512 equal osslsigncode's calculated digests"
else
	echo "note: osslsigncode not installed; sha384/sha512 checked only by the unit test"
fi

# --- plain digests --------------------------------------------------------------------
for f in "$T/grub-mkimage.efi" "$T/trailing.efi" /etc/os-release; do
	for alg in sha1 sha256 sha384 sha512; do
		want=$(${alg}sum "$f" | cut -d' ' -f1)
		got=$("$M" hash --alg "$alg" --json "$f" | jq -r ".files[0].digests.$alg")
		[ "$got" = "$want" ] || fail "$f: plain $alg $got, ${alg}sum $want"
	done
done
head -c 3000000 /dev/urandom >"$T/big"
[ "$("$M" hash --alg sha256 --json - <"$T/big" | jq -r '.files[0].digests.sha256')" = \
  "$(sha256sum <"$T/big" | cut -d' ' -f1)" ] || fail "stdin digest"
j=$("$M" hash --json "$T/big" "$T/tiny64.efi")
[ "$(jq -r '.files | length' <<<"$j")" = 2 ] && [ "$(jq -r '.files[1].authenticode' <<<"$j")" = false ] &&
	[ "$(jq -r '.files[1].digests | keys | join(",")' <<<"$j")" = sha1,sha256,sha384,sha512 ] || fail "json shape: $j"
ok "plain digests equal sha1sum/sha256sum/sha384sum/sha512sum, stdin too; JSON has every bank"

# A file of several read chunks, as a file and through a pipe (size unknown, read in pieces):
# every way, the reference tools' digests.
head -c 5000000 /dev/urandom >"$T/bulk"
for alg in sha1 sha256 sha384 sha512; do
	want=$(${alg}sum "$T/bulk" | cut -d' ' -f1)
	got=$("$M" hash --alg "$alg" --json "$T/bulk" | jq -r ".files[0].digests.$alg")
	[ "$got" = "$want" ] || fail "5 MB file: $alg $got, ${alg}sum $want"
	got=$("$M" hash --alg "$alg" --json - <"$T/bulk" | jq -r ".files[0].digests.$alg")
	[ "$got" = "$want" ] || fail "5 MB on stdin: $alg $got, ${alg}sum $want"
done
ok "a 5 MB file, as a file and on stdin, equals sha*sum in 4 banks"

# --- usage ----------------------------------------------------------------------------
grep -q authenticode <<<"$("$M" hash --help)" || fail "--help"
set +e
"$M" hash >/dev/null 2>&1; [ $? = 2 ] || fail "no file: not exit 2"
"$M" hash --alg md5 /etc/os-release >/dev/null 2>&1; [ $? = 2 ] || fail "bad alg: not exit 2"
"$M" hash /nonexistent >/dev/null 2>&1; [ $? = 2 ] || fail "missing file: not exit 2"
set -e

# --- hostile images -------------------------------------------------------------------
expect_bad() { # expect_bad NAME FILE: exit 2 with a byte offset, no crash
	local rc=0 err
	err=$("$M" hash --authenticode "$2" 2>&1 >/dev/null) || rc=$?
	[ "$rc" = 2 ] || fail "$1: exit $rc (want 2): $err"
	grep -q "at byte" <<<"$err" || fail "$1: no byte offset in: $err"
	echo "  $1: $err"
}
base="$T/tiny64.efi"
pe=$(pe_off "$base") opt=$(opt_off "$base") sd=$(secdir_off "$base")
sec=$((opt + $(u16 "$base" $((pe + 20)))))
cp "$base" "$T/h"; printf 'XY' | dd of="$T/h" conv=notrunc status=none; expect_bad "bad MZ" "$T/h"
cp "$base" "$T/h"; poke32 "$T/h" "$pe" 0x00004551; expect_bad "bad PE signature" "$T/h"
cp "$base" "$T/h"; poke32 "$T/h" 60 0x7ffffff0; expect_bad "e_lfanew past the end" "$T/h"
cp "$base" "$T/h"; poke16 "$T/h" $((pe + 6)) 0xffff; expect_bad "NumberOfSections 0xFFFF" "$T/h"
cp "$base" "$T/h"; poke16 "$T/h" "$opt" 0x30b; expect_bad "optional header magic" "$T/h"
cp "$base" "$T/h"; poke16 "$T/h" $((pe + 20)) 0xfff0; expect_bad "SizeOfOptionalHeader huge" "$T/h"
cp "$base" "$T/h"; poke32 "$T/h" $((opt + 108)) 0x20000000; expect_bad "NumberOfRvaAndSizes huge" "$T/h"
cp "$base" "$T/h"; poke32 "$T/h" $((opt + 60)) 0xfffffff0; expect_bad "SizeOfHeaders past the end" "$T/h"
cp "$base" "$T/h"; poke32 "$T/h" $((opt + 60)) 64; expect_bad "SizeOfHeaders before the section table" "$T/h"
cp "$base" "$T/h"; poke32 "$T/h" $((sec + 20)) 0xfffff000; poke32 "$T/h" $((sec + 16)) 0x2000
expect_bad "PointerToRawData+SizeOfRawData overflows 32 bits" "$T/h"
cp "$base" "$T/h"; poke32 "$T/h" $((sec + 16)) 0x7fffffff; expect_bad "SizeOfRawData past the end" "$T/h"
s=$(size_of "$base")
cp "$base" "$T/h"; poke32 "$T/h" "$sd" $((s - 8)); poke32 "$T/h" $((sd + 4)) 0x100
expect_bad "certificate table past the end" "$T/h"
cp "$base" "$T/h"; poke32 "$T/h" "$sd" 0xfffffff0; poke32 "$T/h" $((sd + 4)) 0x20
expect_bad "certificate table offset+size overflows 32 bits" "$T/h"
cp "$base" "$T/h"; poke32 "$T/h" "$sd" 0; poke32 "$T/h" $((sd + 4)) $((s - 64))
expect_bad "certificate table larger than the data after the sections" "$T/h"
: >"$T/h"; expect_bad "empty file" "$T/h"
truncate -s 600M "$T/huge"   # sparse: refused from its size, before it is read
rc=0; err=$("$M" hash --authenticode "$T/huge" 2>&1 >/dev/null) || rc=$?
[ "$rc" = 2 ] && grep -q "limit" <<<"$err" || fail "600 MiB image: exit $rc: $err"
echo "  600 MiB image: $err"
rm -f "$T/huge"
ok "hostile headers: exit 2 with the byte offset"

# Truncated at many lengths: never a crash; a refused prefix says why and where; a prefix that
# cuts the headers (SizeOfHeaders) or a section's raw data is always refused. The prefixes go to
# mboot in batches (about 64 MiB of files a run, not a run each: in the ASan build every run pays
# its start-up): it hashes every FILE and reports each on its own, the hashed ones in the JSON on
# stdout, each refused one as "mboot: FILE: at byte N ..." on stderr, exit 2 if any was. A run
# ending otherwise (a crash, a sanitizer's report, a leak) is run again file by file to name the
# length.
trunc_check() { # trunc_check HDRS FILE...: one mboot run over the prefixes FILE (named by length)
	# (and $rawend, where the image's last section's raw data ends)
	local hdrs=$1 rc=0 f len line p nref=0
	local -A hashed=() refused=()
	shift
	"$M" hash --authenticode --alg sha256 --json "$@" >"$T/trunc.out" 2>"$T/trunc.err" || rc=$?
	if [ "$rc" != 0 ] && [ "$rc" != 2 ]; then
		for f in "$@"; do
			rc=0; "$M" hash --authenticode --alg sha256 "$f" >/dev/null 2>&1 || rc=$?
			[ "$rc" = 0 ] || [ "$rc" = 2 ] || fail "truncated at ${f##*/}: exit $rc"
		done
		fail "truncated at ${1##*/} ... ${f##*/}: exit $rc together, 0 or 2 each"
	fi
	while read -r p; do hashed[$p]=1; done < <(jq -r '.files[].path' "$T/trunc.out")
	while IFS= read -r line; do
		p=${line#mboot: } p=${p%%: at byte *}
		[ "$p" != "$line" ] && [ -e "$p" ] || fail "truncated: a refusal without FILE: at byte: $line"
		refused[$p]=1
	done <"$T/trunc.err"
	for f in "$@"; do
		len=${f##*/}
		if [ -n "${refused[$f]:-}" ]; then
			nref=$((nref + 1))
			[ -z "${hashed[$f]:-}" ] || fail "truncated at $len: both hashed and refused"
		else
			[ -n "${hashed[$f]:-}" ] || fail "truncated at $len: neither hashed nor refused"
			[ "$len" -ge "$hdrs" ] || fail "truncated at $len (< SizeOfHeaders $hdrs): hashed"
			[ "$len" -ge "$rawend" ] || fail "truncated at $len (a section's raw data ends at $rawend): hashed"
		fi
	done
	[ "$rc" = $((nref > 0 ? 2 : 0)) ] || fail "truncated: exit $rc with $nref of $# refused"
	ntrunc=$((ntrunc + $#)) nrefused=$((nrefused + nref))
}
trunc_batch() { # trunc_batch IMAGE HDRS LEN...: write the prefixes (one process), check them
	local img=$1 hdrs=$2 len files=()
	shift 2
	python3 -c 'import sys
data = open(sys.argv[1], "rb").read()
for n in sys.argv[3:]:
    with open(sys.argv[2] + "/" + n, "wb") as f:
        f.write(data[:int(n)])' "$img" "$T/trunc" "$@"
	for len in "$@"; do files+=("$T/trunc/$len"); done
	trunc_check "$hdrs" "${files[@]}"
	rm -f "${files[@]}"
}
ntrunc=0 nrefused=0
mkdir "$T/trunc"
for img in "$T/tiny32.efi" "$T/grub-signed.efi"; do
	hdrs=$(u32 "$img" $(($(opt_off "$img") + 60)))
	s=$(size_of "$img")
	# the end of the sections' raw data, from the section table (PointerToRawData + SizeOfRawData)
	sec=$(($(opt_off "$img") + $(u16 "$img" $(($(pe_off "$img") + 20)))))
	rawend=0
	for ((i = 0; i < $(u16 "$img" $(($(pe_off "$img") + 6))); i++)); do
		e=$(($(u32 "$img" $((sec + 40 * i + 20))) + $(u32 "$img" $((sec + 40 * i + 16)))))
		[ "$e" -le "$rawend" ] || rawend=$e
	done
	[ "$rawend" -gt "$hdrs" ] || fail "$img: no section data after the headers"
	lens=() bytes=0
	for ((len = 0; len < s; len += (len < 1200 ? 5 : 997))); do
		lens+=("$len") bytes=$((bytes + len))
		if [ "$bytes" -ge $((64 << 20)) ]; then
			trunc_batch "$img" "$hdrs" "${lens[@]}"; lens=() bytes=0
		fi
	done
	[ ${#lens[@]} = 0 ] || trunc_batch "$img" "$hdrs" "${lens[@]}"
done
ok "$ntrunc truncated images ($nrefused refused): each hashed or refused with the byte offset, never a crash; refused inside the headers and the sections"
