#!/bin/bash
# mboot initramfs pack against the classic reproducible pipeline
#   find . | LC_ALL=C sort | cpio -o -H newc --reproducible -R 0:0 [| gzip -n | zstd -q]
# on a generated tree of 5,000 files / 100 MiB (deterministic content: half AES-CTR
# pseudo-random bytes, half compressible text; 50 directories, some symlinks and hard links).
# Prints the best of R runs (default 3) for each, the ratio (pipeline time / mboot time, > 1
# means mboot is faster), the same with the pipeline also computing the digests pack prints,
# and checks mboot's output is byte-identical across runs.
# Usage: bench/bench-initramfs.sh [BUILD_DIR]   (default: build); R=5 for more runs.
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
MBOOT=$(realpath "$B/mboot")
[ -x "$MBOOT" ] || { echo "build first: meson setup $B && ninja -C $B"; exit 2; }
for t in cpio gzip zstd openssl perl bc; do
	command -v $t > /dev/null || { echo "$t is needed"; exit 2; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export LC_ALL=C
R=${R:-3}

# The tree: file i (0..4999) in d$((i % 50)), size 1024 + (i * 7919) % 39895 bytes (mean
# about 20.5 KiB, total about 100 MiB); even files take bytes from an AES-128-CTR stream of
# zeros (fixed key), odd files from a text generator.
tree=$tmp/tree
mkdir "$tree"
openssl enc -aes-128-ctr -nosalt -K 000102030405060708090a0b0c0d0e0f -iv 00000000000000000000000000000000 \
	-in /dev/zero 2>/dev/null | head -c 64M > "$tmp/stream"
perl -e '
	my ($tree, $stream) = @ARGV;
	open(my $in, "<:raw", $stream) or die;
	my $line = 0;
	for my $i (0 .. 4999) {
		my $d = "$tree/d" . ($i % 50);
		mkdir $d unless -d $d;
		my $size = 1024 + ($i * 7919) % 39895;
		my $data = "";
		if ($i % 2 == 0) {
			read($in, $data, $size) == $size or die "stream too short";
		} else {
			while (length($data) < $size) {
				$data .= sprintf("%08d key_%d=value_%d /usr/lib/modules/%d/kernel/drivers/%d.ko\n",
					$line, $line % 97, ($line * 31) % 1013, $line % 7, $line % 541);
				$line++;
			}
			$data = substr($data, 0, $size);
		}
		open(my $out, ">:raw", sprintf("%s/f%04d", $d, $i)) or die;
		print $out $data;
		close($out);
	}
' "$tree" "$tmp/stream"
for i in $(seq 0 9); do
	ln -s ../d$i/f000$i "$tree/d$((i + 10))/link$i"
	ln "$tree/d$i/f000$i" "$tree/d$((i + 20))/hard$i"
done
rm "$tmp/stream"
files=$(find "$tree" -type f | wc -l)
bytes=$(du -sb "$tree" | cut -f1)
echo "tree: $files files, $(find "$tree" -type d | wc -l) directories, $((bytes / 1048576)) MiB"
cat "$tree"/d*/* > /dev/null # page cache warm

# best of R runs: "wall cpu" in seconds (cpu = user + system of the command and its children,
# which does not depend on how busy the other cores are)
best() {
	local i w c bw="" bc=""
	for ((i = 0; i < R; i++)); do
		/usr/bin/time -f '%e %U %S' -o "$tmp/time" bash -c "$*" > /dev/null
		read -r w u s < "$tmp/time"
		c=$(echo "$u + $s" | bc -l)
		if [ -z "$bw" ] || [ "$(echo "$w < $bw" | bc -l)" = 1 ]; then bw=$w; fi
		if [ -z "$bc" ] || [ "$(echo "$c < $bc" | bc -l)" = 1 ]; then bc=$c; fi
	done
	echo "$bw $bc"
}
pipeline() { # $1 = none|gzip|zstd, output $2
	case $1 in
	none) (cd "$tree" && find . | sort | cpio -o -H newc --reproducible -R 0:0 --quiet) > "$2" ;;
	gzip) (cd "$tree" && find . | sort | cpio -o -H newc --reproducible -R 0:0 --quiet | gzip -n) > "$2" ;;
	zstd) (cd "$tree" && find . | sort | cpio -o -H newc --reproducible -R 0:0 --quiet | zstd -q -3) > "$2" ;;
	esac
}
# Closer to pack's job: the archive and the digest a release publishes (pack prints SHA-1,
# SHA-256 and SHA-384; coreutils' SHA-1/384 are slow, so only sha256sum is added here).
pipeline_digest() {
	pipeline "$1" "$2"
	sha256sum "$2" > /dev/null
}
mboot_pack() {
	"$MBOOT" initramfs pack "$tree" -o "$tmp/mboot.$1.$(date +%s%N)" --compress "$1" --mtime 0 > /dev/null
}
export -f pipeline pipeline_digest mboot_pack
export tree tmp MBOOT
command -v /usr/bin/time > /dev/null || { echo "/usr/bin/time (package time) is needed"; exit 2; }

printf '%-5s | %7s %7s %7s | %7s %7s %7s | %6s %6s %6s %6s | %6s\n' comp "mboot" "cpio" "+sum" \
	"mboot" "cpio" "+sum" wall wall+ cpu cpu+ MiB
printf '%-5s | %23s | %23s | %27s |\n' "" "wall seconds (best)" "cpu seconds (best)" "ratio pipeline/mboot"
status=0
for c in none gzip zstd; do
	read -r wm cm <<< "$(best mboot_pack $c)"
	read -r wp cp <<< "$(best pipeline $c "$tmp/cpio.$c")"
	read -r ws cs <<< "$(best pipeline_digest $c "$tmp/cpio.$c")"
	if [ "$(sha256sum "$tmp"/mboot.$c.* | cut -d' ' -f1 | sort -u | wc -l)" != 1 ]; then
		echo "FAIL: mboot's $c output differs between runs"; status=1
	fi
	one=$(ls "$tmp"/mboot.$c.* | head -1)
	printf '%-5s | %7.3f %7.3f %7.3f | %7.3f %7.3f %7.3f | %6.2f %6.2f %6.2f %6.2f | %6.1f\n' $c \
		"$wm" "$wp" "$ws" "$cm" "$cp" "$cs" \
		"$(echo "$wp / $wm" | bc -l)" "$(echo "$ws / $wm" | bc -l)" \
		"$(echo "$cp / $cm" | bc -l)" "$(echo "$cs / $cm" | bc -l)" \
		"$(echo "$(stat -c %s "$one") / 1048576" | bc -l)"
	cmp -s "$one" "$tmp/cpio.$c" && echo "      (mboot's $c output is byte-identical to the pipeline's)"
	rm -f "$tmp"/mboot.$c.*
done
echo "ratio = pipeline / mboot (> 1: mboot faster); '+' = the pipeline followed by sha256sum of its"
echo "output (pack prints SHA-1, SHA-256 and SHA-384); best of $R runs each."
echo "mboot also fsyncs its output (atomic replace); the pipeline does not. Load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "mboot identical across runs: $([ $status = 0 ] && echo yes || echo NO)"
exit $status
