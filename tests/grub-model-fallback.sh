# shellcheck shell=bash disable=SC2034 # FB_* are read by the sourcing tests
# Sourced by tests/cli/test-predict-grub-model.sh and tests/tpm/tpm-grub-fallback.sh: the PCR 8
# and PCR 9 (sha256) of the fallback after the kernel update on the real Debian GRUB 2.06 boot of
# tests/data/grub-model, built by hand from GRUB's logged strings and the new config's text,
# never by mboot's model:
#   grub_fallback_expect LOG_JSON CFG_TODAY CFG_BOTH OLDVER WORKDIR [NEWVER]
# LOG_JSON is `mboot log show --json` of log.bin (only its event data and digests are read);
# CFG_BOTH is update-grub's config with both kernels (boot-grub-both.cfg); someone picks
# "Advanced options > ... with Linux OLDVER". GRUB measures no key press, so PCR 8 is today's
# strings up to the first entry's definition, the new config's definitions (argv without quotes,
# $menuentry_id_option as --id, " {" + the block's raw lines + "}"; the rule is first checked on
# today's two definitions, which GRUB logged), the submenu's and the entry's setparams lines, then
# today's entry commands (the same kernel). PCR 9: today's events, the main config's digest the
# new config's sha256sum. Sets FB_PCR8, FB_PCR9 (hex), FB_TODAY8 and FB_ERR (empty when fine);
# with NEWVER also FB_NEXT8: the default entry of CFG_BOTH (the new kernel): the same
# definitions, then today's setparams and entry commands with OLDVER replaced by NEWVER.
grub_fallback_expect() {
	local json=$1 today_cfg=$2 both=$3 old=$4 w=$5 new=${6:-} hex b t i first='' setp='' sub_title old_title path d n
	FB_ERR=
	jq -r '.events[] | select(.pcr == 8) | .data' "$json" >"$w/fb-hex"
	while read -r hex; do
		printf '%s' "$hex" | xxd -r -p | tr -d '\0' | sed -e 's/^grub_cmd: //' -e 's/^kernel_cmdline: //' | base64 -w0
		echo
	done <"$w/fb-hex" >"$w/fb-today.b64"
	cat >"$w/defs.awk" <<'AWK'
# each menuentry/submenu definition of a grub.cfg as GRUB 2.06 measures it, base64, in file order
{ line[NR] = $0 }
END {
	for (i = 1; i <= NR; i++) {
		if (line[i] !~ /^[\t ]*(menuentry|submenu) .*\{$/) continue
		ind = line[i]; sub(/[^\t ].*$/, "", ind)
		head = line[i]; sub(/^[\t ]*/, "", head); sub(/ *\{$/, "", head)
		gsub(/\$menuentry_id_option/, "--id", head); gsub(/'/, "", head)
		s = head " {"
		for (j = i + 1; j <= NR && line[j] != ind "}"; j++) s = s "\n" line[j]
		s = s "\n" ind "}"
		cmd = "base64 -w0"; printf "%s", s | cmd; close(cmd); print ""
	}
}
AWK
	awk -f "$w/defs.awk" "$today_cfg" >"$w/defs-today.b64"
	awk -f "$w/defs.awk" "$both" >"$w/defs-both.b64"
	for n in 1 2; do
		grep -qxF "$(sed -n "${n}p" "$w/defs-today.b64")" "$w/fb-today.b64" ||
			FB_ERR="$FB_ERR definition $n built from $today_cfg is not GRUB's logged string;"
	done
	[ "$(wc -l <"$w/defs-both.b64")" = 4 ] || FB_ERR="$FB_ERR $both: not an entry and a submenu of two;"
	i=0
	while read -r b; do
		i=$((i + 1))
		t=$(printf '%s' "$b" | base64 -d)
		[ -z "$first" ] && [ "${t#menuentry }" != "$t" ] && first=$i
		[ "$t" = "setparams Debian GNU/Linux" ] && setp=$i
	done <"$w/fb-today.b64"
	[ -n "$first" ] && [ -n "$setp" ] || FB_ERR="$FB_ERR today's strings: no first definition or setparams;"
	sub_title=$(sed -n "s/^submenu '\([^']*\)'.*/\1/p" "$both")
	old_title=$(sed -n "s/^[[:blank:]]*menuentry '\([^']*$old\)'.*/\1/p" "$both")
	[ -n "$sub_title" ] && [ -n "$old_title" ] || FB_ERR="$FB_ERR no titles in $both;"
	{
		sed -n "1,$((first - 1))p" "$w/fb-today.b64"
		sed -n 1,2p "$w/defs-both.b64"
		printf '%s' "setparams $sub_title" | base64 -w0
		echo
		sed -n 3,4p "$w/defs-both.b64"
		printf '%s' "setparams $old_title" | base64 -w0
		echo
		sed -n "$((setp + 1)),\$p" "$w/fb-today.b64"
	} >"$w/fallback.b64"
	FB_PCR8=$(grub_fallback_extend "$w/fallback.b64")
	if [ -n "$new" ]; then
		{
			sed -n "1,$((first - 1))p" "$w/fb-today.b64"
			sed -n 1,2p "$w/defs-both.b64"
			sed -n "$setp,\$p" "$w/fb-today.b64" | while read -r b; do
				printf '%s' "$b" | base64 -d | sed "s/$old/$new/g" | base64 -w0
				echo
			done
		} >"$w/next-default.b64"
		FB_NEXT8=$(grub_fallback_extend "$w/next-default.b64")
	fi
	FB_TODAY8=$(grub_fallback_extend "$w/fb-today.b64")
	FB_PCR9=$(grub_pcr9 "$json" "$both")
}

# grub_pcr9 LOG_JSON CFG [KERNEL INITRD]: PCR 9 (sha256) of today's events with the main
# config's digest CFG's sha256sum and, when given, the kernel's and initrd's those files'
grub_pcr9() {
	local pcr path d
	pcr=$(printf '%064d' 0)
	while read -r path d; do
		case $path in
		*")/boot/grub/grub.cfg") d=$(sha256sum "$2" | cut -c1-64) ;;
		*/vmlinuz-*) [ -n "${3:-}" ] && d=$(sha256sum "$3" | cut -c1-64) ;;
		*/initrd.img-*) [ -n "${4:-}" ] && d=$(sha256sum "$4" | cut -c1-64) ;;
		esac
		pcr=$(printf '%s%s' "$pcr" "$d" | xxd -r -p | sha256sum | cut -c1-64)
	done < <(jq -r '.events[] | select(.pcr == 9) | "\(.decoded.path // "-") \(.digests.sha256)"' "$1")
	echo "$pcr"
}

# grub_fallback_extend STRINGS_B64: a sha256 PCR from zero over each string's sha256sum
grub_fallback_extend() {
	local pcr d b
	pcr=$(printf '%064d' 0)
	while read -r b; do
		d=$(printf '%s' "$b" | base64 -d | sha256sum | cut -c1-64)
		pcr=$(printf '%s%s' "$pcr" "$d" | xxd -r -p | sha256sum | cut -c1-64)
	done <"$1"
	echo "$pcr"
}
