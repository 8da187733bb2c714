# shellcheck shell=bash
# Sourced by the tests that edit PE images byte by byte (test-hash, test-uki).
#   u32 FILE OFFSET / u16 FILE OFFSET        a little-endian field, in decimal
#   poke32 FILE OFFSET VALUE / poke16 ...     write one, in place
u32() { od -An -tu4 -j "$2" -N4 "$1" | tr -d ' '; }
u16() { od -An -tu2 -j "$2" -N2 "$1" | tr -d ' '; }
poke32() {
	printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' $(($3 & 255)) $((($3 >> 8) & 255)) \
		$((($3 >> 16) & 255)) $((($3 >> 24) & 255)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
poke16() {
	printf "$(printf '\\x%02x\\x%02x' $(($3 & 255)) $((($3 >> 8) & 255)))" |
		dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
