#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# mboot grub keep-booted (issue 15): copies of the GRUB configs that booted. A log is built
# here with no mboot code (tcg-log.py, digests from openssl) for configs written here: a
# Debian ESP stub and /boot/grub/grub.cfg on two "devices" (--map to temp folders). Checked:
# exactly the matching files are kept, under the SHA-256 of the measured path (sha256sum),
# with the index's digest sha256sum's; a file edited by one byte is refused and named; a path
# found nowhere is named; a path with "/../" whose target has the right digests is never looked
# up; a very long path writes nothing outside --dir; a copy kept earlier still serves once the
# file is rewritten; copies no config names are removed.
set -u -o pipefail
M=${MBOOT:?}
S=${MB_SOURCE_ROOT:?}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }

# ev PATH FILE: an EV_IPL event of PCR 9 for FILE measured under PATH (data: PATH and a NUL).
ev() {
	printf '9:13:%s:%s:%s' "$(openssl dgst -sha1 -r "$2" | cut -c1-40)" "$(openssl dgst -sha256 -r "$2" | cut -c1-64)" \
		"$(printf '%s\0' "$1" | od -An -v -tx1 | tr -d ' \n')"
}
# ev_nul PATH TAIL FILE: the same with data PATH, a NUL, TAIL, a NUL (a NUL inside the path).
ev_nul() {
	printf '9:13:%s:%s:%s' "$(openssl dgst -sha1 -r "$3" | cut -c1-40)" "$(openssl dgst -sha256 -r "$3" | cut -c1-64)" \
		"$(printf '%s\0%s\0' "$1" "$2" | od -An -v -tx1 | tr -d ' \n')"
}
name_of() { printf '%s' "$1" | sha256sum | cut -c1-64; }

mkdir -p "$W/esp/EFI/debian" "$W/esp/EFI/nul" "$W/root/boot/grub/x86_64-efi" "$W/outside" "$W/copies"
printf 'search.fs_uuid 1234 root hd0,gpt2\nset prefix=($root)/boot/grub\nconfigfile $prefix/grub.cfg\n' \
	>"$W/esp/EFI/debian/grub.cfg"
printf 'set default=0\nmenuentry "Debian" {\n\tlinux /boot/vmlinuz-6.1.0-27-amd64 root=/dev/sda2 ro quiet\n\tinitrd /boot/initrd.img-6.1.0-27-amd64\n}\n' \
	>"$W/root/boot/grub/grub.cfg"
printf 'normal: normal\n' >"$W/root/boot/grub/x86_64-efi/command.lst"
printf 'set timeout=1\n' >"$W/outside/grub.cfg"
cp "$W/outside/grub.cfg" "$W/esp/EFI/nul/grub.cfg"
cp "$W/root/boot/grub/grub.cfg" "$W/main.orig"
ESP='(hd0,gpt1)/EFI/debian/grub.cfg'
MAIN='(hd0,gpt2)/boot/grub/grub.cfg'
NOWHERE='(hd0,gpt2)/mboot-test-nowhere/grub.cfg'
ESCAPE='(hd0,gpt2)/../outside/grub.cfg'
LONG="(hd0,gpt2)/$(head -c 5000 /dev/zero | tr '\0' a)/grub.cfg"
python3 "$S/tests/cli/tcg-log.py" "$W/log" "$(ev "$ESP" "$W/esp/EFI/debian/grub.cfg")" \
	"$(ev '(hd0,gpt2)/boot/grub/x86_64-efi/command.lst' "$W/root/boot/grub/x86_64-efi/command.lst")" \
	"$(ev "$MAIN" "$W/root/boot/grub/grub.cfg")" "$(ev "$NOWHERE" "$W/outside/grub.cfg")" \
	"$(ev "$ESCAPE" "$W/outside/grub.cfg")" "$(ev "$LONG" "$W/outside/grub.cfg")" \
	"$(ev_nul '(hd0,gpt1)/EFI/nul/grub.cfg' tail "$W/esp/EFI/nul/grub.cfg")" || bad "tcg-log.py"
# The log is what GRUB writes, as mboot reads it: the paths and openssl's digests.
grep -qF "file $MAIN" <<<"$("$M" log show --pcr 9 "$W/log")" || bad "log show does not show $MAIN"

keep() { "$M" grub keep-booted --log "$W/log" --dir "$W/copies" --map "(hd0,gpt1)=$W/esp" --map "(hd0,gpt2)=$W/root" "$@"; }
keep >"$W/out" 2>"$W/err"
rc=$?
esp_name=$(name_of "$ESP")
main_name=$(name_of "$MAIN")
listed=$(cd "$W/copies" && find . -mindepth 1 -printf '%f\n' | sort | tr '\n' ' ')
want=$(printf '%s\n' "$esp_name" "$main_name" index.json | sort | tr '\n' ' ')
if [ $rc = 1 ] && [ "$listed" = "$want" ] && cmp -s "$W/copies/$esp_name" "$W/esp/EFI/debian/grub.cfg" &&
	cmp -s "$W/copies/$main_name" "$W/main.orig"; then
	ok "the two matching configs kept as sha256(path) (sha256sum), nothing else in --dir; exit 1 (some not kept)"
else
	bad "keep-booted: rc $rc, --dir holds '$listed', want '$want'; $(cat "$W/err")"
fi
[ "$(stat -c %a "$W/copies/$main_name" "$W/copies/$esp_name" "$W/copies/index.json" | sort -u)" = 644 ] &&
	ok "copies and index mode 0644" || bad "modes: $(stat -c '%a %n' "$W/copies"/*)"
index_want=$(jq -cn --arg e "$ESP" --arg ef "$esp_name" --arg es "$(sha256sum <"$W/esp/EFI/debian/grub.cfg" | cut -c1-64)" \
	--arg m "$MAIN" --arg mf "$main_name" --arg ms "$(sha256sum <"$W/main.orig" | cut -c1-64)" \
	'{configs: [{path: $e, file: $ef, sha256: $es}, {path: $m, file: $mf, sha256: $ms}]}')
[ "$(jq -c . "$W/copies/index.json")" = "$index_want" ] && ok "index.json: paths, names and sha256sum's digests" ||
	bad "index.json: $(jq -c . "$W/copies/index.json"), want $index_want"
grep -qxF "kept $MAIN: $W/root/boot/grub/grub.cfg -> $W/copies/$main_name" "$W/out" || bad "stdout: $(cat "$W/out")"
grep -qxF "mboot: NOT kept $NOWHERE: no such file here (give --map (DEVICE)=DIR)" "$W/err" &&
	ok "a path found nowhere is named" || bad "nowhere not named: $(cat "$W/err")"
grep -qF "mboot: NOT kept $ESCAPE: not a (DEVICE)/PATH without '..'" "$W/err" &&
	ok "a path with /../ is not looked up, though its target has the measured digests" || bad "escape: $(cat "$W/err")"
grep -qF "mboot: NOT kept (hd0,gpt2)/aaaa" "$W/err" && grep -qF "...(5020 bytes): no such file here" "$W/err" &&
	ok "a 5020-byte path: not found, named (cut), nothing written outside --dir" || bad "long path: $(cat "$W/err")"
[ -z "$(find "$W" -newer "$W/log" -type f ! -path "$W/copies/*" ! -name out ! -name err)" ] ||
	bad "files written outside --dir: $(find "$W" -newer "$W/log" -type f ! -path "$W/copies/*")"

# --json: the same verdicts.
keep --json >"$W/out.json" 2>/dev/null
jq -e --arg m "$MAIN" --arg mf "$main_name" '[.configs[] | .status] == ["kept", "kept", "missing", "unsafe", "missing", "unsafe"] and
	(.configs[1] | .path == $m and .copy == $mf)' "$W/out.json" >/dev/null && ok "--json: kept, kept, missing, unsafe, missing, unsafe (a NUL inside the path, though its file matches)" ||
	bad "--json: $(jq -c '[.configs[] | .status]' "$W/out.json")"

# update-grub rewrites grub.cfg (one byte here): a fresh --dir refuses it; the copy kept earlier serves.
sed -i 's/quiet/quieT/' "$W/root/boot/grub/grub.cfg"
mkdir "$W/fresh"
"$M" grub keep-booted --log "$W/log" --dir "$W/fresh" --map "(hd0,gpt1)=$W/esp" --map "(hd0,gpt2)=$W/root" >/dev/null 2>"$W/err"
if [ ! -e "$W/fresh/$main_name" ] && grep -qF "mboot: NOT kept $MAIN: $W/root/boot/grub/grub.cfg has other digests than event 3" "$W/err" &&
	[ "$(jq -r '.configs | map(.path) | join(",")' "$W/fresh/index.json")" = "$ESP" ]; then
	ok "a config edited by one byte is refused, named, and not in the index"
else
	bad "edited config: $(cat "$W/err"); $(cat "$W/fresh/index.json")"
fi
printf 'stale\n' >"$W/copies/$(name_of '(hd0,gpt9)/old/grub.cfg')"
printf 'mine\n' >"$W/copies/notes.txt"
keep >"$W/out" 2>"$W/err"
if cmp -s "$W/copies/$main_name" "$W/main.orig" && grep -qxF "kept $MAIN: $W/copies/$main_name -> $W/copies/$main_name" "$W/out" &&
	[ ! -e "$W/copies/$(name_of '(hd0,gpt9)/old/grub.cfg')" ] && [ -e "$W/copies/notes.txt" ]; then
	ok "after the rewrite, the copy kept earlier still serves; a stale copy is removed, other files kept"
else
	bad "rewrite with a copy: $(cat "$W/out" "$W/err"); $(ls "$W/copies")"
fi

# No GRUB config in the log (a systemd-boot machine): exit 0, an empty index.
"$M" grub keep-booted --log "${MB_TESTDATA:?}/corpus/tpm2-tools/event-sd-boot-fedora37.bin" --dir "$W/sd" 2>"$W/err" &&
	[ "$(jq -c . "$W/sd/index.json")" = '{"configs":[]}' ] && ok "no config measured: exit 0, empty index" ||
	bad "systemd-boot log: $(cat "$W/err")"
"$M" grub keep-booted --map 'hd0=/x' --log "$W/log" --dir "$W/x" 2>/dev/null
[ $? = 2 ] && ok "--map without (DEVICE): exit 2" || bad "--map hd0=/x accepted"

# The kernel hook (mboot-reseal) keeps the copies first, only when there are none: by then the
# configs may be rewritten (here, not at the default places at all), which it says, and goes on.
hook() { MBOOT=$M MBOOT_LOG=$W/log MBOOT_SEALED_DIR=$W/no-sealed MBOOT_LUKS_DEVICES='' MBOOT_GRUB_BOOTED_DIR=$W/hook-copies \
	"$S/hooks/mboot-reseal" "$W/vmlinuz" 2>"$W/hook.err"; }
mkdir "$W/hook-copies"
if hook && [ -s "$W/hook-copies/index.json" ] && grep -qF "mboot: NOT kept $NOWHERE" "$W/hook.err" &&
	grep -q "^mboot-reseal: some GRUB configs that booted were not kept (exit 1)" "$W/hook.err"; then
	ok "kernel hook with no copies: keep-booted runs first (index.json written), what is not kept is said, exit 0"
else
	bad "hook without copies: rc $?, $(cat "$W/hook.err")"
fi
cp "$W/copies/index.json" "$W/hook-copies/index.json"
if hook && ! grep -q "NOT kept" "$W/hook.err" && cmp -s "$W/copies/index.json" "$W/hook-copies/index.json"; then
	ok "kernel hook with copies: keep-booted does not run (the copies of this boot stay)"
else
	bad "hook with copies: $(cat "$W/hook.err")"
fi

[ $fails = 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "test-grub-keep-booted: all passed"
