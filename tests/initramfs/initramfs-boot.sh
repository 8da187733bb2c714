#!/bin/bash
# The Linux kernel unpacks mboot's archives (none, gzip, zstd): boot a kernel under QEMU (TCG)
# with an mboot-packed busybox initramfs whose /init reports, from inside the booted system,
# what the kernel made of the archive: file contents (sha256sum), modes, hard links, device
# numbers, a symlink, the root directory's mode. The host compares with the source tree.
# The kernel: $MB_TEST_KERNEL, else the Debian kernel the real-boot suite downloads into its
# cache (tests/vm/lib.sh: apt-get download, the package registry only). Never skipped: a
# missing kernel, QEMU or busybox is a failure.
. "$(dirname "$0")/lib.sh"

kernel=${MB_TEST_KERNEL:-}
if [ -z "$kernel" ]; then
	kernel=$( (. "${MB_SOURCE_ROOT:?}/tests/vm/lib.sh" && vm_kernel) ) || { echo "FAIL: no kernel could be had"; exit 1; }
fi
[ -n "$kernel" ] && [ -r "$kernel" ] || { echo "FAIL: no kernel (set MB_TEST_KERNEL)"; exit 1; }
command -v qemu-system-x86_64 > /dev/null || { echo "FAIL: no qemu-system-x86_64"; exit 1; }
[ -x /bin/busybox ] || { echo "FAIL: no /bin/busybox (busybox-static)"; exit 1; }

r="$TMP/root"
mkdir -p "$r/bin" "$r/dev" "$r/proc" "$r/etc/deep/er"
cp /bin/busybox "$r/bin/busybox"
ln -s busybox "$r/bin/sh"
ln "$r/bin/busybox" "$r/bin/bb-hardlink"
seq 1 50000 > "$r/etc/deep/er/data"
chmod 0640 "$r/etc/deep/er/data"
chmod 4750 "$r/bin/bb-hardlink"   # one inode: both names get 4750
mknod -m 600 "$r/dev/console" c 5 1
mknod -m 666 "$r/dev/null" c 1 3
mkfifo -m 620 "$r/etc/fifo"
cat > "$r/init" <<'INIT'
#!/bin/sh
/bin/busybox mount -t proc proc /proc
b=/bin/busybox
echo "R sum $($b sha256sum /etc/deep/er/data | $b cut -d' ' -f1)"
# / gets the kernel's own entries (its link count is not the archive's): mode and owner only
echo "R stat $($b stat -c '%n %f - %u %g %t:%T' /)"
for f in /bin/busybox /bin/bb-hardlink /etc/deep/er/data /etc/fifo /dev/console /dev/null /init; do
	echo "R stat $($b stat -c '%n %f %h %u %g %t:%T' $f)"
done
echo "R ino $($b stat -c %i /bin/busybox) $($b stat -c %i /bin/bb-hardlink)"
echo "R link $($b readlink /bin/sh)"
echo "R done"
$b poweroff -f
INIT
chmod 0755 "$r/init" "$r"
touch -d @1700000000 "$r" # mtime is not checked; the archive says 1700000000 anyway

# What the host says, in the guest's words (stat -c '%n %f %h %u %g %t:%T'; root and uid 0).
{
	echo "R sum $(sha256sum "$r/etc/deep/er/data" | cut -d' ' -f1)"
	echo "R stat / $(stat -c '%f - 0 0 %t:%T' "$r")"
	for f in /bin/busybox /bin/bb-hardlink /etc/deep/er/data /etc/fifo /dev/console /dev/null /init; do
		echo "R stat $f $(stat -c '%f %h 0 0 %t:%T' "$r$f")"
	done
} > "$TMP/want"

for comp in none gzip zstd; do
	"$MBOOT" initramfs pack "$r" -o "$TMP/initrd.$comp" --compress $comp --mtime 1700000000 > /dev/null
	rm -f "$TMP/serial"
	timeout 300 qemu-system-x86_64 -machine q35 -accel tcg -m 512 -smp 1 -kernel "$kernel" \
		-initrd "$TMP/initrd.$comp" -append "console=ttyS0 rdinit=/init panic=-1 quiet" \
		-nographic -no-reboot -nic none -monitor none -display none -serial file:"$TMP/serial" \
		> /dev/null 2>&1 || true
	tr -d '\r' < "$TMP/serial" | grep -a -o 'R .*' > "$TMP/got" || true
	grep -q '^R done$' "$TMP/got" || fail "$comp: the guest did not finish: $(tail -c 2000 "$TMP/serial")"
	diff <(grep -E '^R (sum|stat)' "$TMP/got") "$TMP/want" || fail "$comp: the kernel unpacked something else"
	read -r _ _ i1 i2 < <(grep '^R ino' "$TMP/got")
	[ "$i1" = "$i2" ] || fail "$comp: hard link not restored by the kernel ($i1 vs $i2)"
	grep -q '^R link busybox$' "$TMP/got" || fail "$comp: symlink"
	ok "$comp: $(basename "$kernel") unpacks the archive as the tree was ($(grep -c '^R stat' "$TMP/got") entries checked)"
done
