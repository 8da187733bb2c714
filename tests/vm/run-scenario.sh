#!/bin/bash
# Real measured-boot scenarios (see tests/vm/README.md):
#   run-scenario.sh baseline|repeat|changes|inguest|luks|uki|secureboot|kernel-update|debian [OUTDIR]
# Each scenario boots what it needs (OVMF + swtpm + GRUB + a Debian kernel under QEMU) and
# asserts on what the guest printed. Exit 0 = all assertions held; anything else fails,
# including a QEMU that cannot start (never a skip).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

scenario=${1:-}
case "$scenario" in
baseline | repeat | changes | inguest | luks | uki | secureboot | kernel-update | debian) ;;
*)
	echo "usage: $0 baseline|repeat|changes|inguest|luks|uki|secureboot|kernel-update|debian [OUTDIR]" >&2
	exit 2
	;;
esac
if [ -n "${2:-}" ]; then
	out=$2
elif [ -n "${MB_VM_OUT:-}" ]; then
	out=$MB_VM_OUT/$scenario
elif [ -n "${MB_BUILD_ROOT:-}" ]; then
	out=$MB_BUILD_ROOT/tests/vm-results/$scenario
else
	out=$(mktemp -d "/tmp/mboot-vm-$scenario.XXXXXX")
fi
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)

[ -n "${MBOOT:-}" ] && [ -x "$MBOOT" ] || vm_die "set MBOOT to the built mboot binary"
vm_need_tools
command -v tpm2_eventlog >/dev/null || vm_die "missing: tpm2_eventlog (tpm2-tools)"
command -v pesign >/dev/null || vm_die "missing: pesign"

fails=0
ok() { printf 'ok   %s\n' "$*"; }
bad() {
	printf 'FAIL %s\n' "$*"
	fails=$((fails + 1))
}
json_has_banks() { jq -e '.banks | type == "object"' "$1" >/dev/null 2>&1; }
check() { # check DESCRIPTION COMMAND...
	local what=$1
	shift
	if "$@"; then ok "$what"; else bad "$what"; fi
}

# jq helpers: event data is hex; GRUB's strings end in one NUL.
JQ_LIB='
def unhex: ascii_downcase | . as $h | [range(0; length; 2) as $i
	| ("0123456789abcdef" | index($h[$i:$i+1])) * 16 + ("0123456789abcdef" | index($h[$i+1:$i+2]))]
	| implode;
def text: .data | unhex | sub("\u0000$"; "");
def initial($i): if $i >= 17 and $i <= 22 then "f" else "0" end;
'

# check_replay NAME DIR REPLAY_JSON [LOGGED]: the replayed log equals the PCRs the guest read, for every
# bank the TPM has and every PCR the log touches. PCRs the TPM shows as extended but the log
# never touches are listed; PCR 10 (IMA) is expected there, any other is a failure. The log
# must cover PCRs 0-9 (GRUB's chain), or exactly the JSON list LOGGED when given.
check_replay() {
	local name=$1 dir=$2 replay=$3 logged=${4:-} res
	res=$(jq -n --slurpfile s "$dir/pcrs.json" --slurpfile r "$replay" "$JQ_LIB"'
		$s[0] as $tpm | $r[0].banks as $rep |
		{
			missing_banks: [$tpm | keys[] | select($rep[.] == null)],
			extra_banks: [$rep | keys[] | select($tpm[.] == null)],
			compared: [$rep | to_entries[] as $b | $b.value | keys[] | "\($b.key):\(.)"] | length,
			mismatches: [$rep | to_entries[] as $b | $b.value | to_entries[]
				| select($tpm[$b.key][.key] != .value)
				| "\($b.key) PCR \(.key): log \(.value), TPM \($tpm[$b.key][.key])"],
			unlogged: [$tpm | to_entries[] as $b | $b.value | to_entries[]
				| select(.key as $k | .value | test("^" + initial($k | tonumber) + "+$") | not)
				| select($rep[$b.key][.key] == null) | .key | tonumber] | unique,
			logged_sha256: [$rep.sha256 // {} | keys[] | tonumber] | sort
		}')
	printf '%s\n' "$res" >"$out/$name-replay-check.json"
	check "$name: every bank of the TPM ($(jq -r 'keys | join(",")' "$dir/pcrs.json")) is in the log" \
		test "$(jq '.missing_banks | length' <<<"$res")" -eq 0
	check "$name: the log has no bank the TPM lacks" test "$(jq '.extra_banks | length' <<<"$res")" -eq 0
	check "$name: replay equals the TPM for all $(jq .compared <<<"$res") (bank, PCR) pairs the log touches" \
		test "$(jq '.mismatches | length' <<<"$res")" -eq 0
	jq -r '.mismatches[]' <<<"$res"
	if [ -n "$logged" ]; then
		check "$name: the log covers exactly PCRs $logged" test "$(jq -c '.logged_sha256' <<<"$res")" = "$logged"
	else
		check "$name: the log covers PCRs 0-9 (firmware and GRUB)" \
			test "$(jq -c '[.logged_sha256[] | select(. <= 9)]' <<<"$res")" = "[0,1,2,3,4,5,6,7,8,9]"
	fi
	printf 'info %s: PCRs extended in the TPM but not in the firmware log: %s (10 = IMA boot_aggregate)\n' \
		"$name" "$(jq -c .unlogged <<<"$res")"
	check "$name: no PCR but 10 is extended outside the log" \
		test "$(jq -c '[.unlogged[] | select(. != 10)]' <<<"$res")" = "[]"
}

# check_grub_events NAME DIR: the events GRUB logged carry digests computed here from the very
# files put on the ESP (coreutils sha*sum, pesign for the Authenticode hash of GRUB itself).
check_grub_events() {
	local name=$1 dir=$2 show alg file want got kernel
	show=$dir/show.json
	kernel=$(vm_kernel)
	for alg in sha1 sha256 sha384 sha512; do
		for file in grub.cfg:/EFI/BOOT/grub.cfg vmlinuz:/vmlinuz initrd.img:/initrd.img; do
			local path=${file#*:} src=${file%%:*}
			if [ "$src" = vmlinuz ]; then src=$kernel; else src=$dir/$src; fi
			want=$("${alg}sum" "$src" | awk '{ print $1 }')
			got=$(jq -r --arg p "$path" "$JQ_LIB"'[.events[] | select(.pcr == 9 and .type == "EV_IPL")
				| select(text | endswith($p))] | map(.digests.'"$alg"') | join(",")' "$show")
			check "$name: PCR 9 $alg event for $path = ${alg}sum of the file" test "$got" = "$want"
		done
	done
	want="/vmlinuz $(cat "$dir/cmdline")"
	got=$(jq -r "$JQ_LIB"'[.events[] | select(.pcr == 8) | text | select(startswith("kernel_cmdline: "))
		| ltrimstr("kernel_cmdline: ")] | join("|")' "$show")
	check "$name: PCR 8 kernel_cmdline is '$want'" test "$got" = "$want"
	want=$(printf '%s' "$want" | sha256sum | awk '{ print $1 }')
	got=$(jq -r "$JQ_LIB"'[.events[] | select(.pcr == 8) | select(text | startswith("kernel_cmdline: "))
		| .digests.sha256] | join(",")' "$show")
	check "$name: its sha256 digest = sha256sum of the command line" test "$got" = "$want"
	# GRUB measures every command it runs; here that is exactly the lines of grub.cfg, in order.
	want=$(jq -R -s -c 'split("\n") | map(select(length > 0))' "$dir/grub.cfg")
	got=$(jq -c "$JQ_LIB"'[.events[] | select(.pcr == 8) | text | select(startswith("grub_cmd: "))
		| ltrimstr("grub_cmd: ")]' "$show")
	check "$name: PCR 8 grub_cmd events are the lines of grub.cfg" test "$got" = "$want"
	want=$(pesign -h -i "$dir/BOOTX64.EFI" | awk '{ print $2 }')
	got=$(jq -r '[.events[] | select(.pcr == 4 and .type == "EV_EFI_BOOT_SERVICES_APPLICATION")
		| .digests.sha256] | join(",")' "$show")
	check "$name: PCR 4 application event = pesign Authenticode hash of BOOTX64.EFI" test "$got" = "$want"
}

# check_policy_boots TAG WHAT PCR...: a policy generated from the log of $out/base: that boot
# verifies and meets it (exit 0); $out/cmdline (WHAT) verifies but breaks it, naming each PCR (exit 1).
check_policy_boots() {
	local tag=$1 what=$2 b rc want
	shift 2
	want=$(printf '%s\n' "$@" | jq -s -c .)
	"$MBOOT" policy generate --from-log "$out/base/log.bin" -o "$out/policy.json" ||
		bad "$tag: policy generate --from-log exited $?"
	for b in base cmdline; do
		jq '{banks: .}' "$out/$b/pcrs.json" >"$out/$b/pcrs-banks.json"
		rc=0
		"$MBOOT" verify --log "$out/$b/log.bin" --pcrs "$out/$b/pcrs-banks.json" --no-userspace-log \
			--policy "$out/policy.json" --json >"$out/$b/verify-policy.json" || rc=$?
		printf 'info %s: policy violations: %s\n' "$b" "$(jq -c '[.policy.violations[]? | {pcr, text, reason}]' "$out/$b/verify-policy.json" | cut -c1-600)"
		case $b in
		base) check "$tag policy: the base boot verifies and meets its own policy (exit 0)" \
			test "$rc:$(jq -c '[.verified, .policy.ok]' "$out/$b/verify-policy.json")" = "0:[true,true]" ;;
		cmdline) check "$tag policy: $what verifies but breaks the policy, naming PCRs $* (exit 1)" \
			test "$rc:$(jq -c --argjson want "$want" '[.log_verified, .policy.ok, ([.policy.violations[].pcr] | contains($want))]' "$out/$b/verify-policy.json")" = "1:[true,false,true]" ;;
		esac
	done
}

# pcr_extend BANK DIGEST...: a PCR of that bank extended from zero with the digests, in order
# (xxd and coreutils' sha*sum).
pcr_extend() {
	local bank=$1 pcr d len
	shift
	len=$(printf '' | "${bank}sum" | awk '{ print length($1) }')
	pcr=$(printf "%0${len}d" 0)
	for d in "$@"; do pcr=$(printf '%s%s' "$pcr" "$d" | xxd -r -p | "${bank}sum" | awk '{ print $1 }'); done
	printf '%s\n' "$pcr"
}

# check_show NAME DIR: mboot log show parses every event of the real log.
check_show() {
	local name=$1 dir=$2 n_ref n_show rc=0
	"$MBOOT" log show --json "$dir/log.bin" >"$dir/show.json" || rc=$?
	check "$name: mboot log show --json exits 0" test $rc -eq 0
	tpm2_eventlog "$dir/log.bin" >"$dir/tpm2_eventlog.yaml" 2>&1 || true
	n_ref=$(grep -c '^- EventNum:' "$dir/tpm2_eventlog.yaml" || true)
	n_show=$(jq '.events | length' "$dir/show.json")
	check "$name: mboot shows $n_show events, tpm2_eventlog counts $n_ref" test "$n_show" = "$n_ref"
	check "$name: no event is left undecoded with an error (decoded.kind raw + error)" \
		test "$(jq '[.events[] | select(.decoded.kind == "raw" and (.decoded | has("error")))] | length' "$dir/show.json")" -eq 0
	check "$name: no digest_check is 'mismatch'" \
		test "$(jq '[.events[] | select(.digest_check == "mismatch")] | length' "$dir/show.json")" -eq 0
	printf 'info %s: decoded kinds: %s\n' "$name" \
		"$(jq -c '[.events[].decoded.kind] | group_by(.) | map({(.[0]): length}) | add' "$dir/show.json")"
}

# ima_snapshot_files DIR N: what the guest printed of its IMA snapshot N (guest-init.sh
# ima_snapshot) into DIR/ima/: list-N.bin and list-N.txt (their SHA-256 checked against the
# guest's), pcr10-N.json ({bank: hex}, sysfs), pcrs-N.json (PCR-values JSON: the boot's sysfs
# PCRs with PCR 10 as it was at the snapshot), ref-N.json and ref-txt-N.json (ima-host.py: the
# lists read with hashlib), replay-N.json and verify-N.json (mboot in the guest) and their exit codes.
ima_snapshot_files() {
	local dir=$1 n=$2 i=$1/ima f want
	for f in bin txt; do
		vm_section "$dir/serial.log" "IMA$n-$f" | base64 -d >"$i/list-$n.$f" || bad "ima: list $n ($f) is not base64"
		want=$(vm_section "$dir/serial.log" "IMA$n-$f-SHA256")
		check "ima $n: the $f list arrived whole (SHA-256 $want)" \
			test "$(sha256sum <"$i/list-$n.$f" | cut -d' ' -f1)" = "$want"
	done
	vm_section "$dir/serial.log" "IMA$n-PCR10" | jq -R -n '[inputs | select(length > 0) | split(" ")]
		| map({(.[0]): (.[1] | ascii_downcase)}) | add' >"$i/pcr10-$n.json"
	jq --slurpfile p "$i/pcr10-$n.json" '{banks: (with_entries(.key as $b | .value["10"] = $p[0][$b]))}' \
		"$dir/pcrs.json" >"$i/pcrs-$n.json"
	python3 "$VM_DIR/ima-host.py" read "$i/list-$n.bin" "$dir/pcrs.json" >"$i/ref-$n.json" ||
		bad "ima $n: ima-host.py cannot read the binary list"
	python3 "$VM_DIR/ima-host.py" read "$i/list-$n.txt" >"$i/ref-txt-$n.json" ||
		bad "ima $n: ima-host.py cannot read the ASCII list"
	for f in REPLAY VERIFY; do
		vm_section "$dir/serial.log" "IMA$n-$f" >"$i/${f,,}-$n.json"
		vm_section "$dir/serial.log" "IMA$n-$f-RC" >"$i/${f,,}-$n.rc"
	done
	vm_section "$dir/serial.log" "IMA$n-ERR" | sed "/^$/d; s/^/  guest ima $n stderr: /"
}

# check_ima_snapshot DIR N: snapshot N in the guest against values from outside mboot: PCR 10
# of every bank (sysfs) is hashlib's replay of the list, the boot_aggregate is hashlib's over
# sysfs PCRs 0-9, every template hash checks, the ASCII list says what the binary one does;
# mboot ima replay (against mboot pcrs) and mboot verify --ima-log (on /dev/tpmrm0) exit 0 and
# agree with sysfs.
check_ima_snapshot() {
	local dir=$1 n=$2 i=$1/ima
	ima_snapshot_files "$dir" "$n"
	check "ima $n: mboot pcrs in the guest exited 0" test "$(vm_section "$dir/serial.log" "IMA$n-PCRS-RC")" = 0
	check "ima $n: the TPM has PCR 10 in banks $(jq -r 'keys | join(",")' "$i/pcr10-$n.json") (sysfs), each extended" \
		test "$(jq '[.[] | select(test("^0+$") | not)] | length' "$i/pcr10-$n.json")" = "$(jq '.[] ' "$dir/pcrs.json" | jq -s length)"
	# Which way the kernel extended each bank, from hashlib and sysfs alone; it must be the way
	# the kernel's config says (ima_kernel_ways).
	jq -c -S --slurpfile r "$i/ref-$n.json" 'with_entries(.key as $b | .value as $v | $r[0].pcr10[$b] as $w
		| .value = (if $v == $w.recomputed then "recomputed" elif $v == $w.padded then "padded" else "none" end))' \
		"$i/pcr10-$n.json" >"$i/ways-$n.json"
	check "ima $n: hashlib's replay of the binary list ($(jq '.entries | length' "$i/ref-$n.json") entries) is the TPM's PCR 10, every bank, as the kernel's config says ($(cat "$i/ways-$n.json"))" \
		test "$(cat "$i/ways-$n.json")" = "$ima_ways"
	check "ima $n: every template hash is SHA-1 of its fields (hashlib)" \
		test "$(jq '[.entries[] | select(.template_hash_ok | not)] | length' "$i/ref-$n.json")" = 0
	check "ima $n: the first entry is boot_aggregate = hashlib's $(jq -r .boot_aggregate "$i/ref-$n.json" | cut -c1-20)... over sysfs PCRs 0-9" \
		test "$(jq -r '.entries[0] | "\(.path) \(.digest)"' "$i/ref-$n.json")" = "boot_aggregate $(jq -r .boot_aggregate "$i/ref-$n.json")"
	check "ima $n: the ASCII list holds the binary list's entries (PCR, template hash, template, digest, path)" \
		test "$(jq -c '.entries' "$i/ref-txt-$n.json")" = "$(jq -c '.entries' "$i/ref-$n.json")"
	check "ima $n: mboot ima replay in the guest, against mboot pcrs, exited 0 (got '$(cat "$i/replay-$n.rc")')" \
		test "$(cat "$i/replay-$n.rc")" = 0
	check "ima $n: mboot's replay: PCR 10 = sysfs, matched the same way, every bank; boot_aggregate matches" \
		test "$(jq -c -S '[.banks | to_entries[] | select(.value["10"].actual != null)
			| {(.key): (.value["10"] | .[.match] // "none")}] | add' "$i/replay-$n.json" 2>/dev/null)|$(jq -c -S '[.banks | to_entries[]
			| select(.value["10"].actual != null) | {(.key): .value["10"].match}] | add' "$i/replay-$n.json" 2>/dev/null)|$(jq -r .boot_aggregate "$i/replay-$n.json" 2>/dev/null)" = \
		"$(jq -c -S . "$i/pcr10-$n.json")|$ima_ways|match"
	check "ima $n: mboot verify --ima-log on /dev/tpmrm0 in the guest exited 0, PCR 10 matched as above, boot_aggregate matches (got '$(cat "$i/verify-$n.rc")')" \
		test "$(cat "$i/verify-$n.rc"):$(jq -c '[.ima.ok, ([.ima.pcr10[] | {(.bank): .match}] | add | tojson), .ima.boot_aggregate]' "$i/verify-$n.json" 2>/dev/null)" = \
		"0:$(jq -c -n --arg w "$ima_ways" '[true, ($w | fromjson | tojson), "match"]')"
	for f in bin txt; do
		rc=0
		"$MBOOT" ima replay "$i/list-$n.$f" --pcrs "$i/pcrs-$n.json" >"$i/host-replay-$n-$f.txt" 2>&1 || rc=$?
		check "ima $n: mboot ima replay of the $f list on the host, against the snapshot's PCRs, exits 0 (got $rc)" test $rc -eq 0
	done
	check "ima $n: mboot ima show reads the entries hashlib reads (PCR, template, template hash checked, digest, path)" \
		test "$("$MBOOT" ima show "$i/list-$n.bin" --json | jq -c '[.entries[] | {pcr, template, template_hash,
			template_hash_ok: (.template_hash_check == "ok"), digest: "\(.file_digest.algorithm):\(.file_digest.digest)", path}]')" = \
		"$(jq -c .entries "$i/ref-$n.json")"
}

# ima_kernel_ways: {bank: "recomputed"|"padded"} for the kernel's TPM banks, from its config:
# Linux 5.11 on extends a bank with the template hash recomputed in the bank's algorithm when
# the kernel has that algorithm when IMA starts (built in, =y), else with the SHA-1 template hash
# zero-padded (Debian 12: SHA-384 and SHA-512 are CONFIG_CRYPTO_SHA512=m, padded).
ima_kernel_ways() {
	local kernel config b opt way res=""
	kernel=$(vm_kernel)
	config=$(dirname "$kernel")/config-${kernel##*/vmlinuz-}
	[ -f "$config" ] || vm_die "no kernel config beside $kernel"
	for b in sha1 sha256 sha384 sha512; do
		case $b in sha1) opt=SHA1 ;; sha256) opt=SHA256 ;; *) opt=SHA512 ;; esac
		way=padded
		grep -qx "CONFIG_CRYPTO_$opt=y" "$config" && way=recomputed
		res="$res,\"$b\":\"$way\""
	done
	printf '{%s}\n' "${res#,}"
}

# check_ima_inguest DIR: IMA in the inguest boot (tests/vm/README.md): the two snapshots, the
# files the guest ran found in them with the digests computed here, and the lists judged here
# by the policy generated from the first (then tampered with).
check_ima_inguest() {
	local dir=$1 i=$1/ima known unknown m rc ima_ways
	ima_ways=$(ima_kernel_ways)
	known=$(sha256sum <"$i/files/known.sh" | cut -d' ' -f1)
	unknown=$(sha256sum <"$i/files/true" | cut -d' ' -f1)
	check "ima: the FAT disk mounted in the guest, known.sh ran (exit 0)" \
		test "$(vm_section "$dir/serial.log" IMA1-MOUNT-RC):$(vm_section "$dir/serial.log" IMA1-KNOWN-RC)" = 0:0
	check "ima: the unknown binary ran (exit 0)" test "$(vm_section "$dir/serial.log" IMA2-UNKNOWN-RC)" = 0
	check_ima_snapshot "$dir" 1
	check_ima_snapshot "$dir" 2
	printf 'info ima: list 1: %s\n' "$(jq -c '[.entries[] | "\(.template) \(.path) \(.digest[0:19])"]' "$i/ref-1.json")"
	printf 'info ima: list 2 adds: %s\n' "$(jq -c '[.entries[] | "\(.template) \(.path) \(.digest[0:19])"]' "$i/ref-2.json" | sed 's/.*"known[^"]*",//')"
	check "ima: list 1 holds /mnt/ima/known.sh once, with sha256sum of the file ($known)" \
		test "$(jq -c '[.entries[] | select(.path == "/mnt/ima/known.sh") | .digest]' "$i/ref-1.json")" = "[\"sha256:$known\"]"
	check "ima: list 1 does not name /mnt/ima/unknown/true" \
		test "$(jq '[.entries[] | select(.path == "/mnt/ima/unknown/true")] | length' "$i/ref-1.json")" = 0
	check "ima: list 2 is list 1 and one entry more, /mnt/ima/unknown/true with sha256sum of the binary ($unknown)" \
		test "$(jq -c --slurpfile a "$i/ref-1.json" '[(.entries[:($a[0].entries | length)] == $a[0].entries),
			[.entries[($a[0].entries | length):][] | "\(.pcr) \(.path) \(.digest)"]]' "$i/ref-2.json")" = \
		"[true,[\"10 /mnt/ima/unknown/true sha256:$unknown\"]]"
	check "ima: the binary list 2 begins with list 1's bytes" \
		cmp -s -n "$(stat -c %s "$i/list-1.bin")" "$i/list-1.bin" "$i/list-2.bin"
	# The verifier's side, on the host: a policy from the list before the unknown binary ran.
	rc=0
	"$MBOOT" policy generate --from-ima-log "$i/list-1.bin" -o "$i/policy.json" 2>"$i/policy.err" || rc=$?
	check "ima: policy generate --from-ima-log list 1 exits 0 and allows known.sh with its sha256sum ($(head -c 200 "$i/policy.err"))" \
		test "$rc:$(jq -c '[.. | objects | to_entries[] | select(.key == "/mnt/ima/known.sh") | .value] | flatten | map(ascii_downcase | sub("^sha256:"; ""))' "$i/policy.json" 2>/dev/null)" = "0:[\"$known\"]"
	for m in 1 2; do
		rc=0
		"$MBOOT" verify --log "$dir/log.bin" --no-userspace-log --pcrs "$i/pcrs-$m.json" --policy "$i/policy.json" \
			--ima-log "$i/list-$m.bin" --json >"$i/judged-$m.json" 2>"$i/judged-$m.err" || rc=$?
		printf 'info ima: list %s judged: exit %s, violations %s\n' "$m" "$rc" "$(jq -c '.ima.violations' "$i/judged-$m.json" 2>/dev/null)"
	done
	check "ima: verify --ima-log list 1 --policy (its own) on the host: exit 0, the list meets it" \
		test "$(jq -c '[.verified, .ima.ok]' "$i/judged-1.json" 2>/dev/null)" = "[true,true]"
	check "ima: verify --ima-log list 2: exit 1, the one violation names /mnt/ima/unknown/true with its sha256sum" \
		test "$(jq -c '[.verified, .ima.ok, [.ima.violations[] | "\(.path) \(.digest)"]]' "$i/judged-2.json" 2>/dev/null)" = \
		"[false,false,[\"/mnt/ima/unknown/true sha256:$unknown\"]]"
	# A list edited to hide the binary: each refused (exit 1) against the TPM's PCR 10.
	for m in remove path digest forge; do
		python3 "$VM_DIR/ima-host.py" tamper "$i/list-2.bin" $m /mnt/ima/unknown/true /mnt/ima/known.sh \
			>"$i/tampered-$m.bin" || bad "ima: ima-host.py cannot tamper with list 2 ($m)"
		rc=0
		"$MBOOT" verify --log "$dir/log.bin" --no-userspace-log --pcrs "$i/pcrs-2.json" --policy "$i/policy.json" \
			--ima-log "$i/tampered-$m.bin" --json >"$i/tampered-$m.json" 2>"$i/tampered-$m.err" || rc=$?
		printf 'info ima: tampered (%s): exit %s: %s\n' "$m" "$rc" "$(jq -c '[.ima.pcr10, [.ima.violations[].reason]]' "$i/tampered-$m.json" 2>/dev/null)"
		case $m in
		remove | forge) check "ima: list 2 with the binary's entry $m$([ $m = forge ] && echo "d as known.sh's, its template hash recomputed") is refused: PCR 10 does not replay (exit $rc)" \
			test "$rc:$(jq -c '[.ima.ok, ([.ima.pcr10[] | select(.match != "none")] | length)]' "$i/tampered-$m.json" 2>/dev/null)" = "1:[false,0]" ;;
		*) check "ima: list 2 with the binary's $m edited to known.sh's is refused: a bad template hash (exit $rc)" \
			test "$rc:$(jq -c '[.ima.ok, ([.ima.violations[] | select(.reason | test("template hash"))] | length > 0)]' "$i/tampered-$m.json" 2>/dev/null)" = "1:[false,true]" ;;
		esac
	done
}

# check_ima_attest DIR: the IMA list in attestation evidence. The guest quoted with nonce 1
# after snapshot 1 and with nonce 2 after the unknown binary ran (snapshot 2). The verifier's
# policy: the release's artifacts (as above) and the "ima" section of list 1.
check_ima_attest() {
	local dir=$1 i=$1/ima a=$1/attest e n m rc q unknown tamper_what ima_verdict
	unknown=$(sha256sum <"$i/files/true" | cut -d' ' -f1)
	q=$(vm_section "$dir/serial.log" ATTEST-QUOTE2-RC)
	check "attest ima: the second quote, after the unknown binary ran, exited 0 (got '$q')" test "$q" = 0
	for n in 1 2; do
		e=$a/evidence.json
		[ $n = 1 ] || e=$a/evidence2.json
		python3 -c 'import base64, json, sys; sys.stdout.buffer.write(base64.b64decode(json.load(open(sys.argv[1]))["ima_log"]))' \
			"$e" >"$i/evidence-list-$n.bin" 2>/dev/null || : >"$i/evidence-list-$n.bin"
		check "attest ima: evidence $n carries IMA list $n, byte for byte (base64 decoded by Python)" \
			cmp -s "$i/evidence-list-$n.bin" "$i/list-$n.bin"
		check "attest ima: evidence $n's quoted PCR 10 is sysfs's at snapshot $n, every bank quoted" \
			test "$(jq -c -S '.pcrs.banks | with_entries(.value = .value["10"])' "$e")" = "$(jq -c -S . "$i/pcr10-$n.json")"
	done
	rc=0
	"$MBOOT" policy generate --kernel "$(vm_kernel)" --initrd "$dir/initrd.img" --grub-cfg "$dir/grub.cfg" \
		--efi "$dir/BOOTX64.EFI" --from-log "$dir/log.bin" --from-ima-log "$i/list-1.bin" -o "$a/policy-ima.json" || rc=$?
	check "attest ima: policy generate from the artifacts and --from-ima-log list 1 exits 0 (got $rc)" test $rc -eq 0
	for n in 1 2; do
		e=$a/evidence.json
		[ $n = 1 ] || e=$a/evidence2.json
		rc=0
		"$MBOOT" attest verify "$e" --machine "$a/machine.json" --nonce "$(cat "$a/nonce$([ $n = 1 ] || echo 2)")" \
			--policy "$a/policy-ima.json" --json >"$a/verify-ima-$n.json" 2>"$a/verify-ima-$n.err" || rc=$?
		printf 'info attest ima: evidence %s: exit %s, reasons %s\n' "$n" "$rc" "$(jq -c .reasons "$a/verify-ima-$n.json" 2>/dev/null)"
		echo $rc >"$a/verify-ima-$n.rc"
	done
	# the verdict's "ima": the whole list carried (start 0), judged in the SHA-256 bank, which the
	# kernel extended with recomputed template hashes (above), all entries covered by the quote
	ima_verdict='.ima | [.carried, .start, .judged, .bank, .rule, .entries, .pending, .allowed, .violations, .boot_aggregate]'
	check "attest ima: evidence 1 (known.sh ran) under the policy with list 1's ima section: trusted, 2 entries judged in sha256 (recomputed), known.sh allowed (exit $(cat "$a/verify-ima-1.rc"))" \
		test "$(cat "$a/verify-ima-1.rc"):$(jq -c "[.trusted, ($ima_verdict)]" "$a/verify-ima-1.json" 2>/dev/null)" = \
		'0:[true,[true,0,true,"sha256","recomputed",2,0,1,0,"match"]]'
	check "attest ima: evidence 2 (the unknown binary ran): untrusted, 3 entries judged, one violation: policy-violated naming /mnt/ima/unknown/true and its sha256sum (exit $(cat "$a/verify-ima-2.rc"))" \
		test "$(cat "$a/verify-ima-2.rc"):$(jq -c "[.trusted, ($ima_verdict), [.reasons[] | .name + \" \" +
			(.detail | contains(\"/mnt/ima/unknown/true\") and contains(\"$unknown\") | tostring)]]" "$a/verify-ima-2.json" 2>/dev/null)" = \
		'1:[false,[true,0,true,"sha256","recomputed",3,0,1,1,"match"],["policy-violated true"]]'
	for m in remove path digest forge; do
		case $m in
		remove) tamper_what="the binary's entry removed" ;;
		path) tamper_what="the binary's name made known.sh's" ;;
		digest) tamper_what="the binary's digest made known.sh's" ;;
		forge) tamper_what="the binary's entry made known.sh's, template hash recomputed" ;;
		esac
		python3 "$VM_DIR/ima-host.py" tamper-evidence "$a/evidence2.json" $m /mnt/ima/unknown/true /mnt/ima/known.sh \
			>"$a/evidence2-$m.json" || bad "attest ima: ima-host.py cannot tamper with evidence 2 ($m)"
		rc=0
		"$MBOOT" attest verify "$a/evidence2-$m.json" --machine "$a/machine.json" --nonce "$(cat "$a/nonce2")" \
			--policy "$a/policy-ima.json" --json >"$a/verify-ima-$m.json" 2>"$a/verify-ima-$m.err" || rc=$?
		printf 'info attest ima: evidence 2 tampered (%s): exit %s, reasons %s\n' "$m" "$rc" "$(jq -c .reasons "$a/verify-ima-$m.json" 2>/dev/null)"
		check "attest ima: evidence 2 with its IMA list tampered ($m: $tamper_what): untrusted, only log-not-verified, PCR 10 named, not judged (exit $rc)" \
			test "$rc:$(jq -c '[.trusted, ([.reasons[].name] | unique), ([.reasons[] | select(.detail | test("PCR 10"))] | length > 0), .ima.judged]' \
				"$a/verify-ima-$m.json" 2>/dev/null)" = '1:[false,["log-not-verified"],true,false]'
	done
}

# boot NAME CMDLINE INITRD_MODE [extra files...]: one boot into $out/NAME.
boot() {
	local name=$1 cmdline=$2 mode=$3
	shift 3
	mkdir -p "$out/$name"
	vm_initramfs "$out/$name/initrd.in" "$mode" "$@"
	vm_boot "$out/$name" "$cmdline" "$out/$name/initrd.in"
	sha256sum <"$out/$name/disk.img" | awk '{ print $1 }' >"$out/$name/disk.sha256"
	# The images are rebuilt from the recorded inputs on demand; keep the folder small.
	[ "${MB_VM_KEEP:-0}" = 1 ] || rm -f "$out/$name/disk.img" "$out/$name/vars.fd" "$out/$name/initrd.in"
	"$MBOOT" log replay --json "$out/$name/log.bin" >"$out/$name/replay.json" ||
		bad "$name: mboot log replay exited $?"
}

# run_diff A B: mboot log diff --json into $out/diff-A-B.json; it must exit 1 (they differ).
run_diff() {
	local rc=0
	"$MBOOT" log diff --json "$out/$1/log.bin" "$out/$2/log.bin" >"$out/diff-$1-$2.json" || rc=$?
	check "mboot log diff $1 $2 exits 1 (the logs differ)" test $rc -eq 1
}

# diff_entries A B: the entries of that diff as "change pcr text" lines (text of b, else a).
diff_entries() {
	jq -r "$JQ_LIB"'.entries[] | "\(.change) \(.pcr) \((.b // .a) | text)"' "$out/diff-$1-$2.json" | LC_ALL=C sort
}

# check_prediction NAME FILE BOOT: every (bank, PCR) the prediction FILE gives equals the TPM's
# in boot BOOT (at least one pair).
check_prediction() {
	local res
	res=$(jq -n -c --slurpfile p "$2" --slurpfile t "$out/$3/pcrs.json" \
		'[$p[0].banks | to_entries[] as $x | $x.value | to_entries[] | {b: $x.key, p: .key, v: .value}] as $all
		| {n: ($all | length), bad: [$all[] | select($t[0][.b][.p] != .v) | "\(.b) PCR \(.p): predicted \(.v), TPM \($t[0][.b][.p])"]}')
	jq -r '.bad[]' <<<"$res"
	check "$1: all $(jq .n <<<"$res") predicted (bank, PCR) pairs equal boot $3's TPM" \
		test "$(jq '.bad | length' <<<"$res"):$(jq '.n > 0' <<<"$res")" = 0:true
}

# seal_predicted STATE PCRS SECRET DIR NAME:PREDICTION...: SECRET sealed on the host, with the swtpm
# state STATE that the next boot gets (VM_TPM_STATE), to each PREDICTION's values of PCRS
# (sha256), as DIR/NAME.sealed, for the guest to unseal (vm_initramfs mode unseal, the archive
# on VM_EXTRA_DISK).
seal_predicted() {
	local state=$1 pcrs=$2 secret=$3 dir=$4 s
	shift 4
	mkdir -p "$dir"
	for s in "$@"; do
		vm_tpm_run "$state" "$MBOOT" seal --pcrs "$pcrs" --values "${s#*:}" -i "$secret" \
			-o "$dir/${s%%:*}.sealed" --force >"$out/seal-${s%%:*}.err" 2>&1 ||
			bad "mboot seal --pcrs $pcrs --values ${s#*:} exited $?: $(cat "$out/seal-${s%%:*}.err")"
	done
}

# check_unseal NAME BOOT SECRET DECOY: boot BOOT's guest read the host's archive, unsealed
# predicted.sealed (exit 0, SECRET's SHA-256) and not decoy.sealed (exit 1, nothing released),
# the decoy sealed to the prediction for DECOY.
check_unseal() {
	local name=$1 b=$2 secret=$3 decoy=$4
	unseal_section() { vm_section "$out/$b/serial.log" "UNSEAL-$1"; }
	unseal_section predicted-OUT | sed "s/^/  $b unseal predicted: /"
	unseal_section decoy-OUT | sed "s/^/  $b unseal decoy: /"
	check "$name: the guest read the host's archive of sealed files (tar exit $(unseal_section TAR-RC))" \
		test "$(unseal_section TAR-RC)" = 0
	check "$name: mboot unseal of the secret sealed to the prediction exited 0 and gave the secret (sha256)" \
		test "$(unseal_section predicted-RC):$(unseal_section predicted-SHA256)" = "0:$(sha256sum <"$secret" | awk '{ print $1 }')"
	check "$name: the secret sealed to the prediction for $decoy did not unseal (exit 1, nothing released)" \
		test "$(unseal_section decoy-RC):$(unseal_section decoy-SHA256)" = "1:"
}

# tpm_moved A B: PCRs (sha256 bank) whose TPM values differ between two boots.
tpm_moved() {
	jq -n -c --slurpfile a "$out/$1/pcrs.json" --slurpfile b "$out/$2/pcrs.json" \
		'[$a[0].sha256 | to_entries[] | select($b[0].sha256[.key] != .value) | .key | tonumber] | sort'
}

vm_say "scenario $scenario, results in $out"
case "$scenario" in
baseline)
	boot baseline "$VM_CMDLINE_DEFAULT" plain
	check_replay baseline "$out/baseline" "$out/baseline/replay.json"
	check_show baseline "$out/baseline"
	check_grub_events baseline "$out/baseline"
	;;

repeat)
	# Both boots build every input from scratch (initramfs, GRUB image, disk) and start from
	# a fresh swtpm state and a fresh copy of the OVMF variable store.
	boot first "$VM_CMDLINE_DEFAULT" plain
	boot second "$VM_CMDLINE_DEFAULT" plain
	check "repeat: initramfs byte-identical" cmp "$out/first/initrd.img" "$out/second/initrd.img"
	check "repeat: GRUB image byte-identical" cmp "$out/first/BOOTX64.EFI" "$out/second/BOOTX64.EFI"
	check "repeat: disk image byte-identical" cmp "$out/first/disk.sha256" "$out/second/disk.sha256"
	check "repeat: event logs byte-identical ($(stat -c %s "$out/first/log.bin") bytes)" \
		cmp "$out/first/log.bin" "$out/second/log.bin"
	check "repeat: PCR values of every bank identical (including PCR 10)" \
		cmp "$out/first/pcrs.json" "$out/second/pcrs.json"
	rc=0
	"$MBOOT" log diff --json "$out/first/log.bin" "$out/second/log.bin" >"$out/diff-first-second.json" || rc=$?
	check "repeat: mboot log diff says identical and exits 0" \
		test "$rc:$(jq .identical "$out/diff-first-second.json")" = "0:true"
	check_replay first "$out/first" "$out/first/replay.json"
	;;

changes)
	boot base "$VM_CMDLINE_DEFAULT" plain
	boot cmdline "$VM_CMDLINE_DEFAULT mboot.test=changed" plain
	printf 'this file only changes the initramfs bytes\n' >"$out/changed.txt"
	boot initrd "$VM_CMDLINE_DEFAULT" plain "$out/changed.txt"
	for b in base cmdline initrd; do check_replay "$b" "$out/$b" "$out/$b/replay.json"; done

	# Command line: it lives in grub.cfg, so GRUB's file event for grub.cfg (PCR 9) changes
	# with the command it runs (PCR 8 grub_cmd) and the kernel command line (PCR 8).
	run_diff base cmdline
	got=$(diff_entries base cmdline)
	printf '%s\n' "$got" | sed 's/^/  diff: /'
	want=$(LC_ALL=C sort <<EOF
changed 8 grub_cmd: linuxefi /vmlinuz $VM_CMDLINE_DEFAULT mboot.test=changed
changed 8 kernel_cmdline: /vmlinuz $VM_CMDLINE_DEFAULT mboot.test=changed
changed 9 (hd0,gpt1)/EFI/BOOT/grub.cfg
EOF
	)
	check "cmdline: the diff names exactly grub.cfg (PCR 9), the linuxefi command and kernel_cmdline (PCR 8)" \
		test "$got" = "$want"
	check "cmdline: the changed events' old side is the old command line" \
		test "$(jq -r "$JQ_LIB"'[.entries[] | select(.pcr == 8) | .a | text] | sort | join("|")' "$out/diff-base-cmdline.json")" \
		= "grub_cmd: linuxefi /vmlinuz $VM_CMDLINE_DEFAULT|kernel_cmdline: /vmlinuz $VM_CMDLINE_DEFAULT"
	check "cmdline: pcrs_moved = [8,9]" test "$(jq -c '.pcrs_moved' "$out/diff-base-cmdline.json")" = "[8,9]"
	moved=$(tpm_moved base cmdline)
	printf 'info cmdline: PCRs that differ in the TPM (sha256): %s\n' "$moved"
	check "cmdline: the TPM moved exactly those PCRs, and PCR 10 (IMA boot_aggregate over 0-9)" \
		test "$moved" = "[8,9,10]"

	# Initrd: only the file event GRUB logs for it. Debian's linuxefi hands the initrd to the
	# kernel in boot_params, so the EFI stub's own initrd event (PCR 9 EV_EVENT_TAG, LoadFile2
	# path) does not appear; if it ever does, the exact-match below names it.
	run_diff base initrd
	got=$(diff_entries base initrd)
	printf '%s\n' "$got" | sed 's/^/  diff: /'
	check "initrd: the diff names exactly GRUB's /initrd.img file event (PCR 9)" \
		test "$got" = "changed 9 /initrd.img"
	check "initrd: the new digest = sha256sum of the new initrd" \
		test "$(jq -r '.entries[0].b.digests.sha256' "$out/diff-base-initrd.json")" \
		= "$(sha256sum <"$out/initrd/initrd.img" | awk '{ print $1 }')"
	check "initrd: pcrs_moved = [9]" test "$(jq -c '.pcrs_moved' "$out/diff-base-initrd.json")" = "[9]"
	moved=$(tpm_moved base initrd)
	printf 'info initrd: PCRs that differ in the TPM (sha256): %s\n' "$moved"
	check "initrd: the TPM moved exactly PCR 9, and PCR 10 (IMA)" test "$moved" = "[9,10]"

	# Prediction: from the base boot's log and the inputs of the next boot, mboot predict must
	# give the PCRs that boot's TPM really held (every bank, every PCR the log touches).
	rc=0
	"$MBOOT" predict --log "$out/base/log.bin" --grub-cfg "$out/cmdline/grub.cfg" \
		--cmdline "$VM_CMDLINE_DEFAULT mboot.test=changed" --json >"$out/predict-cmdline.json" || rc=$?
	check "predict cmdline: exits 0, nothing unpredictable ($(jq -c .unpredictable "$out/predict-cmdline.json"))" test $rc -eq 0
	check_replay predict-cmdline "$out/cmdline" "$out/predict-cmdline.json"
	rc=0
	"$MBOOT" predict --log "$out/base/log.bin" --initrd "$out/initrd/initrd.img" --json >"$out/predict-initrd.json" || rc=$?
	check "predict initrd: exits 0" test $rc -eq 0
	check_replay predict-initrd "$out/initrd" "$out/predict-initrd.json"

	# Policy from the release artifacts (the kernel, initrd and grub.cfg the base boot used) and
	# the base boot's log: the base boot meets it; the other two boots verify against their TPM
	# but break it, each at the event that changed.
	kernel=$(vm_kernel)
	# GRUB's EFI image given as an artifact too: PCR 4 then comes from its Authenticode digest,
	# which must be what OVMF measured.
	"$MBOOT" policy generate --kernel "$kernel" --initrd "$out/base/initrd.img" --grub-cfg "$out/base/grub.cfg" \
		--efi "$out/base/BOOTX64.EFI" --from-log "$out/base/log.bin" -o "$out/policy.json" ||
		bad "policy generate from artifacts exited $?"
	check "policy: PCR 4 is judged by rules from the EFI binary, not by the log's value" \
		jq -e '.pcrs["4"].rules | any(.type == "EV_EFI_BOOT_SERVICES_APPLICATION")' "$out/policy.json"
	for b in base cmdline initrd; do
		jq '{banks: .}' "$out/$b/pcrs.json" >"$out/$b/pcrs-banks.json"
		rc=0
		"$MBOOT" verify --log "$out/$b/log.bin" --pcrs "$out/$b/pcrs-banks.json" --no-userspace-log \
			--policy "$out/policy.json" --json >"$out/$b/verify-policy.json" || rc=$?
		printf 'info %s: policy violations: %s\n' "$b" "$(jq -c '[.policy.violations[]? | {pcr, text, reason}]' "$out/$b/verify-policy.json")"
		case $b in
		base) check "policy: the base boot verifies and meets the artifacts' policy (exit 0)" \
			test "$rc:$(jq -c '[.verified, .policy.ok]' "$out/$b/verify-policy.json")" = "0:[true,true]" ;;
		cmdline) check "policy: the changed command line verifies but breaks the policy at kernel_cmdline (exit 1)" \
			test "$rc:$(jq -c '[.log_verified, .policy.ok, ([.policy.violations[] | select(.pcr == 8 and ((.text // "") | startswith("kernel_cmdline:")))] | length > 0)]' "$out/$b/verify-policy.json")" = "1:[true,false,true]" ;;
		initrd) check "policy: the changed initrd verifies but breaks the policy in PCR 9 (exit 1)" \
			test "$rc:$(jq -c '[.log_verified, .policy.ok, ([.policy.violations[] | select(.pcr == 9)] | length > 0)]' "$out/$b/verify-policy.json")" = "1:[true,false,true]" ;;
		esac
	done
	;;

inguest)
	# The tenant's flow rides on this boot: the guest enrolls its TPM (EK certificates from a
	# private CA), answers the host's challenge and quotes with the host's nonce, over a second
	# serial line to tests/vm/attest-host.py; the host then judges the evidence.
	d=$out/inguest
	mkdir -p "$d/attest"
	vm_ek_ca "$d/attest/ekca"
	echo "attest" >"$d/attest/flag" && mv "$d/attest/flag" "$d/attest/attest"
	export VM_EK_CA=$d/attest/ekca VM_ATTEST_SOCK=$d/attest/serial.sock
	python3 "$VM_DIR/attest-host.py" "$VM_ATTEST_SOCK" "$d/attest" "$MBOOT" "$VM_EK_CA/ca-certs" &
	attest_host=$!
	# IMA on (the tcb policy; Debian's kernel has CONFIG_IMA, template ima-sig, SHA-256 file
	# digests), and a FAT disk whose known.sh and unknown/true the guest runs (vm_ima_disk).
	cmdline="$VM_CMDLINE_DEFAULT ima_policy=tcb"
	mkdir -p "$d/ima"
	vm_ima_disk "$d/ima/disk.img" "$d/ima/files"
	export VM_EXTRA_DISK=$d/ima/disk.img
	boot inguest "$cmdline" with-mboot,ima "$d/attest/attest"
	unset VM_EK_CA VM_ATTEST_SOCK VM_EXTRA_DISK
	rc=0
	wait "$attest_host" || rc=$?
	sed 's/^/  attest host: /' "$d/attest/attest-host.log"
	vm_section "$d/serial.log" ATTEST-ERR | sed 's/^/  guest attest stderr: /'
	[ -f "$d/guest-replay.json" ] || vm_die "the guest printed no mboot output"
	check "inguest: mboot log replay in the guest exited 0 (got $(cat "$d/guest-replay.rc"))" \
		test "$(cat "$d/guest-replay.rc")" = 0
	vm_section "$d/serial.log" MBOOT-REPLAY-ERR | sed 's/^/  guest stderr: /'
	check "inguest: the guest's output is JSON with banks" json_has_banks "$d/guest-replay.json"
	check_replay inguest "$d" "$d/guest-replay.json"
	check "inguest: the guest's replay equals the host's replay of the same log" \
		test "$(jq -c -S .banks "$d/guest-replay.json")" = "$(jq -c -S .banks "$d/replay.json")"
	# mboot pcrs and mboot verify against the real kernel's TPM device, in the guest. Their exit
	# codes are what the guest saved right after each command; a missing section reads as "".
	vm_section "$d/serial.log" MBOOT-PCRS >"$d/guest-pcrs.json"
	vm_section "$d/serial.log" MBOOT-PCRS-RC >"$d/guest-pcrs.rc"
	vm_section "$d/serial.log" MBOOT-VERIFY >"$d/guest-verify.json"
	vm_section "$d/serial.log" MBOOT-VERIFY-RC >"$d/guest-verify.rc"
	vm_section "$d/serial.log" MBOOT-PCRS-ERR | sed 's/^/  guest pcrs stderr: /'
	vm_section "$d/serial.log" MBOOT-VERIFY-ERR | sed 's/^/  guest verify stderr: /'
	check "inguest: mboot pcrs on /dev/tpmrm0 exited 0 (got '$(cat "$d/guest-pcrs.rc")')" \
		test "$(cat "$d/guest-pcrs.rc")" = 0
	check "inguest: mboot pcrs in the guest equals the kernel's sysfs PCRs, every bank and PCR" \
		test "$(jq -c -S .banks "$d/guest-pcrs.json" 2>/dev/null)" = "$(jq -c -S . "$d/pcrs.json")"
	check "inguest: mboot verify in the guest exited 0: the guest verified its own boot (got '$(cat "$d/guest-verify.rc")')" \
		test "$(cat "$d/guest-verify.rc")" = 0
	check "inguest: the guest's verify says verified: true" \
		test "$(jq .verified "$d/guest-verify.json" 2>/dev/null)" = true
	check "inguest: the guest's verify names PCRs 0-9 verified in all 4 banks" \
		test "$(jq '[.pcrs[] | select(.verdict == "verified" and .pcr <= 9)] | length' "$d/guest-verify.json" 2>/dev/null)" = 40

	a=$d/attest
	check "attest: the host's side saw the whole conversation (exit $rc)" test $rc -eq 0
	for step in ENROLL ACTIVATE QUOTE; do
		got=$(vm_section "$d/serial.log" "ATTEST-$step-RC")
		check "attest: $step in the guest, on /dev/tpmrm0, exited 0 (got '$got')" test "$got" = 0
	done
	check "attest: the challenge accepted the guest's EK certificate chain and AK (exit $(cat "$a/challenge.rc" 2>/dev/null))" \
		test "$(cat "$a/challenge.rc" 2>/dev/null)" = 0
	rc=0
	"$MBOOT" attest challenge --state "$a/state.json" -i "$a/response.json" -o "$a/machine.json" 2>"$a/check.err" || rc=$?
	check "attest: the guest's activation proves its AK is in the TPM of that EK (exit $rc: $(head -c 300 "$a/check.err"))" test $rc -eq 0
	# The policy of the release: the artifacts this boot was made of, firmware PCRs from its log.
	"$MBOOT" policy generate --kernel "$(vm_kernel)" --initrd "$d/initrd.img" --grub-cfg "$d/grub.cfg" \
		--efi "$d/BOOTX64.EFI" --from-log "$d/log.bin" -o "$a/policy.json" ||
		bad "attest: policy generate from the artifacts exited $?"
	nonce=$(cat "$a/nonce")
	rc=0
	"$MBOOT" attest verify "$a/evidence.json" --machine "$a/machine.json" --nonce "$nonce" \
		--policy "$a/policy.json" --json >"$a/verify.json" 2>"$a/verify.err" || rc=$?
	check "attest: the host trusts the guest's quote, logs and policy (exit $rc: $(jq -c '.reasons' "$a/verify.json" 2>/dev/null) $(head -c 300 "$a/verify.err"))" \
		test "$rc:$(jq -c .trusted "$a/verify.json" 2>/dev/null)" = "0:true"
	# PCR 10 as at the first IMA snapshot: known.sh ran after the guest printed its PCRs
	check "attest: the evidence's quoted sha256 PCRs are the kernel's sysfs PCRs (PCR 10 at IMA snapshot 1)" \
		test "$(jq -c -S '.pcrs.banks.sha256' "$a/evidence.json")" = \
		"$(jq -c -S --arg p "$(vm_section "$d/serial.log" IMA1-PCR10 | awk '$1 == "sha256" { print tolower($2) }')" '.sha256 | .["10"] = $p' "$d/pcrs.json")"
	rc=0
	"$MBOOT" attest verify "$a/evidence.json" --machine "$a/machine.json" --nonce "$(printf '%s' "$nonce" | tr 0-9a-f 1-9a-f0)" \
		--json >"$a/verify-nonce.json" 2>/dev/null || rc=$?
	check "attest: the same evidence under another nonce is refused: nonce-mismatch (exit $rc)" \
		test "$rc:$(jq -c '[.reasons[].name] | index("nonce-mismatch") != null' "$a/verify-nonce.json" 2>/dev/null)" = "1:true"
	# A release whose command line differs from the one this machine booted: the verifier's
	# policy refuses the boot, naming GRUB's kernel_cmdline event in PCR 8.
	vm_grub_cfg "$a/grub-other.cfg" "$cmdline mboot.release=other"
	"$MBOOT" policy generate --kernel "$(vm_kernel)" --initrd "$d/initrd.img" --grub-cfg "$a/grub-other.cfg" \
		--efi "$d/BOOTX64.EFI" --from-log "$d/log.bin" -o "$a/policy-other.json" ||
		bad "attest: policy generate (other command line) exited $?"
	rc=0
	"$MBOOT" attest verify "$a/evidence.json" --machine "$a/machine.json" --nonce "$nonce" \
		--policy "$a/policy-other.json" --json >"$a/verify-other.json" 2>/dev/null || rc=$?
	printf 'info attest: other command line: %s\n' "$(jq -c '.reasons' "$a/verify-other.json" 2>/dev/null)"
	check "attest: a boot whose command line is not the release's is refused at GRUB's kernel_cmdline event (exit $rc)" \
		test "$rc:$(jq -c '([.reasons[].name] | index("policy-violated") != null) and
			([.. | strings | select(startswith("kernel_cmdline: /vmlinuz"))] | length > 0)' "$a/verify-other.json" 2>/dev/null)" = "1:true"
	check_ima_inguest "$d"
	check_ima_attest "$d"
	;;
luks)
	# A LUKS2 volume on a second virtio disk, made here (no root, no dm-crypt needed to format an
	# image file), and one TPM state kept across both boots. First boot (good): the guest enrolls
	# an mboot token sealed to its PCRs 0,4,7,8,9 and unlocks the disk as Debian's cryptroot does
	# with mboot's keyscript (tests/vm/guest-init.sh); second boot, the command line changed: the
	# token is refused, PCR 8 named, and only then is a passphrase asked for.
	for t in cryptsetup objcopy; do command -v $t >/dev/null || vm_die "missing: $t"; done
	printf 'mboot vm luks passphrase' >"$out/luks-passphrase"
	printf 'enroll once, then unlock\n' >"$out/luks"
	img=$out/luks.img
	truncate -s 32M "$img"
	cryptsetup luksFormat -q --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 \
		--key-file "$out/luks-passphrase" "$img" || vm_die "cryptsetup luksFormat $img failed"
	offset=$(cryptsetup luksDump "$img" | awk '/^Data segments:/ { on = 1 } on && $1 == "offset:" && !done { print $2; done = 1 }')
	export VM_TPM_STATE=$out/tpm-state VM_EXTRA_DISK=$img
	boot good "$VM_CMDLINE_DEFAULT" luks "$out/luks" "$out/luks-passphrase"
	boot bad "$VM_CMDLINE_DEFAULT mboot.test=changed" luks "$out/luks" "$out/luks-passphrase"
	unset VM_TPM_STATE VM_EXTRA_DISK
	check "luks: both boots ran the same initramfs (byte-identical)" cmp "$out/good/initrd.img" "$out/bad/initrd.img"
	for b in good bad; do
		printf '  %s console: %s\n' "$b" "$(vm_section "$out/$b/serial.log" LUKS-UNLOCK | tr '\n' '|')"
		grep '^MBVM-INSMOD-FAILED' "$out/$b/serial.log" || true
	done

	# Good boot: enrolled, unlocked by the token with no passphrase asked, the data read back.
	g=$out/good/serial.log
	check "luks good: mboot luks enroll in the guest exited 0 ($(vm_section "$g" LUKS-ENROLL | tr '\n' ' '))" \
		test "$(vm_section "$g" LUKS-ENROLL-RC)" = 0
	check "luks good: keyscript | cryptsetup --key-file=- open exited 0" test "$(vm_section "$g" LUKS-UNLOCK-RC)" = 0
	check "luks good: no passphrase was asked for (askpass not run)" test "$(grep -c '^MBVM-ASKPASS' "$g")" = 0
	want=$(for i in $(seq 0 127); do printf 'mboot-luks-test line %03d ......\n' "$i"; done | sha256sum | awk '{ print $1 }')
	want="$(($(stat -c %s "$img") - offset)) $want"
	check "luks good: /dev/mapper/mbootvm is the data segment's size (image - offset $offset) and reads back the block written ($want)" \
		test "$(vm_section "$g" LUKS-DATA)" = "$want"
	cryptsetup token export --token-id 0 "$img" >"$out/token.json" 2>/dev/null || bad "luks: no token 0 in the image"
	check "luks: the token the guest enrolled is bound to keyslot 1 and sealed to PCRs 0,4,7,8,9 of the good boot's TPM" \
		test "$(jq -c '[.type, .keyslots, .mboot.sealed.pcrs.selection]' "$out/token.json" 2>/dev/null):$(jq -c --slurpfile p "$out/good/pcrs.json" \
			'[.mboot.sealed.pcrs.values | to_entries[] | .value == $p[0].sha256[.key]] | all' "$out/token.json" 2>/dev/null)" \
		= '["mboot",["1"],[0,4,7,8,9]]:true'

	# Bad boot: refused, the reason on the console before the prompt, nothing unlocked.
	b=$out/bad/serial.log
	good8=$(jq -r '.sha256["8"]' "$out/good/pcrs.json")
	bad8=$(jq -r '.sha256["8"]' "$out/bad/pcrs.json")
	check "luks bad: the command line moved PCR 8 (TPM: $good8 -> $bad8)" test "$good8" != "$bad8"
	check "luks bad: no new token was enrolled" test -z "$(vm_section "$b" LUKS-ENROLL-RC)"
	check "luks bad: keyscript | cryptsetup open failed (exit $(vm_section "$b" LUKS-UNLOCK-RC))" \
		test "$(vm_section "$b" LUKS-UNLOCK-RC)" -ne 0
	check "luks bad: nothing was unlocked (no data read)" test -z "$(vm_section "$b" LUKS-DATA)"
	check "luks bad: the console says the token's key is not released on this boot" \
		grep -q "^mboot: token 0: the disk key is not released on this boot" "$b"
	line8=$(grep -n -m 1 "^PCR 8 (sha256) differs: sealed to $good8, now $bad8\$" "$b" | cut -d: -f1)
	check "luks bad: the console names PCR 8 with the good boot's value and this boot's (the TPM's, from sysfs)" test -n "$line8"
	check "luks bad: PCRs 0, 4, 7 (unchanged) are not named" test "$(grep -cE '^PCR (0|4|7) \(sha256\) differs' "$b")" = 0
	# the event too: this boot's kernel_cmdline event, by the number tpm2_eventlog gives it
	# (awk reads to the end: an early exit would SIGPIPE tpm2_eventlog, and pipefail end the test)
	evnum=$(tpm2_eventlog "$out/bad/log.bin" 2>/dev/null | awk '/^- EventNum:/ { n = $3 } /"kernel_cmdline: / && !done { print n; done = 1 }')
	check "luks bad: the console names the changed event, #${evnum:-?} kernel_cmdline as tpm2_eventlog numbers it" \
		grep -qF "→ #${evnum:-none} EV_IPL: kernel_cmdline: " "$b"
	ask=$(grep -n -m 1 '^MBVM-ASKPASS Please unlock disk mbootvm: $' "$b" | cut -d: -f1)
	check "luks bad: then the passphrase is asked for, after the explanation (console lines ${line8:-?} < ${ask:-?})" \
		test -n "$ask" -a -n "$line8" -a "${ask:-0}" -gt "${line8:-0}"
	;;
uki)
	# OVMF -> systemd-boot (removable-media path) -> a UKI in /EFI/Linux/ (Type #2 entry, found by
	# systemd-boot itself) whose systemd-stub measures the UKI's sections into PCR 11 and hands
	# the kernel its .cmdline and .initrd. Two boots: base, and a UKI with another .cmdline
	# whose PCRs are predicted before it boots.
	measure=${MB_SYSTEMD_MEASURE:-/usr/lib/systemd/systemd-measure}
	for t in objcopy objdump iconv xxd "$measure"; do command -v "$t" >/dev/null || vm_die "missing: $t"; done
	[ -r "$VM_SDBOOT_EFI" ] && [ -r "$VM_SDSTUB_EFI" ] || vm_die "missing: systemd-boot-efi ($VM_SDBOOT_EFI, $VM_SDSTUB_EFI)"
	uki_banks="sha1 sha256 sha384 sha512"

	# uki_pcr11 DIR BANK: PCR 11 as systemd-stub leaves it, computed by systemd-measure from the
	# section files of DIR. --phase= (one empty phase): the value before any systemd-pcrphase
	# string; without it systemd-measure prints the enter-initrd... values, which only a systemd
	# initrd reaches (our busybox initramfs extends nothing).
	uki_pcr11() {
		"$measure" calculate --linux="$(vm_kernel)" --osrel="$1/osrel" --cmdline="$1/cmdline.sect" \
			--initrd="$1/initrd.img" --bank="$2" --phase= 2>/dev/null | sed -n "s/^11:$2=//p"
	}
	# uki_cmdline_digest BANK TEXT: digest of TEXT as UTF-16LE with its NUL, the form in which
	# systemd measures a command line into PCR 12.
	uki_cmdline_digest() {
		{ printf '%s' "$2" | iconv -f UTF-8 -t UTF-16LE; printf '\0\0'; } | "${1}sum" | awk '{ print $1 }'
	}
	# uki_predict_with_mboot OUT NEXT_DIR: mboot's own prediction of the next boot (predict
	# --uki NEW --efi TODAY=NEW), written to OUT ({"banks": ...}); the caller compares it with the
	# same TPM values as the systemd-measure + pesign prediction. Today's UKI (the --efi OLD,
	# checked against the base log's PCR 4) explains the base boot's PCR 12 events and the
	# kernel's LoadOptions tag (its .cmdline, no edit at the menu), so PCRs 9 and 12 come from
	# the new UKI's .cmdline; without today's UKI they are unpredictable (exit 1, no value).
	uki_predict_with_mboot() {
		local pred=$1 next=$2 rc=0
		"$MBOOT" predict --log "$out/base/log.bin" --uki "$next/uki.efi" --efi "$out/base/uki.efi=$next/uki.efi" \
			--json >"$pred" 2>"$pred.err" || rc=$?
		check "uki predict --uki --efi TODAY=NEW: exit 0, nothing unpredictable or unmatched, PCRs 4, 9, 11, 12 changed" \
			test "$rc:$(jq -c '[.unpredictable, .changed, (.unmatched | length)]' "$pred")" = '0:[{},[4,9,11,12],0]'
		check "uki predict --uki --efi TODAY=NEW: PCRs 4, 9, 11, 12 have a value in all four banks" \
			test "$(jq -c '[.banks[] | has("4") and has("9") and has("11") and has("12")] | [length, unique]' "$pred")" = '[4,[true]]'
		rc=0
		"$MBOOT" predict --log "$out/base/log.bin" --uki "$next/uki.efi" --json >"$pred.nt" 2>/dev/null || rc=$?
		check "uki predict --uki without today's UKI: exit 1, PCRs 9 and 12 unpredictable, the reason names it" \
			test "$rc:$(jq -c '[(.unpredictable | keys), (.unpredictable["12"] | test("today.s UKI is not given"))]' "$pred.nt")" \
			= '1:[["12","9"],true]'
	}

	# check_uki_boot NAME: what one boot of the chain must show, digests computed here from the
	# files put on the ESP and into the UKI.
	check_uki_boot() {
		local name=$1 d=$out/$1 show want got alg cmdline kernel
		show=$d/show.json
		cmdline=$(cat "$d/cmdline.sect")
		kernel=$(vm_kernel)
		check_show "$name" "$d"
		check_replay "$name" "$d" "$d/replay.json" '[0,1,2,3,4,5,6,7,9,11,12]'
		check "$name: the kernel ran with the UKI's .cmdline ('$cmdline')" \
			test "$(vm_section "$d/serial.log" INFO | sed -n 2p)" = "$cmdline"
		# PCR 4: the firmware measures systemd-boot (boot option), the UKI (systemd-boot's
		# LoadImage) and the kernel (the stub's LoadImage of its .linux section from memory),
		# each as its PE/COFF Authenticode digest. pesign knows sha1 and sha256 only.
		for alg in sha1 sha256; do
			want=$(for f in "$d/BOOTX64.EFI" "$d/uki.efi" "$kernel"; do pesign -h -d "$alg" -i "$f" | awk '{ print $2 }'; done | paste -sd,)
			got=$(jq -r '[.events[] | select(.pcr == 4 and .type == "EV_EFI_BOOT_SERVICES_APPLICATION")
				| .digests.'"$alg"'] | join(",")' "$show")
			check "$name: PCR 4 applications = pesign -d $alg of systemd-boot, the UKI, the kernel" test "$got" = "$want"
		done
		# PCR 11: the TPM's value in every bank = systemd-measure on the section files.
		for alg in $uki_banks; do
			want=$(uki_pcr11 "$d" "$alg")
			got=$(jq -r --arg b "$alg" '.[$b]["11"] // ""' "$d/pcrs.json")
			check "$name: TPM PCR 11 ($alg) = systemd-measure calculate --phase= (${want:0:16}...)" test -n "$want" -a "$got" = "$want"
		done
		check "$name: PCR 11 events name the sections in systemd's order, twice each (name, contents)" \
			test "$(jq -c '[.events[] | select(.pcr == 11) | .decoded.text]' "$show")" \
			= '[".linux",".linux",".osrel",".osrel",".cmdline",".cmdline",".initrd",".initrd"]'
		# PCR 12: the command line twice, UTF-16LE with its NUL: systemd-boot passes a Type #2
		# entry's .cmdline as the UKI's load options and measures them; without Secure Boot the
		# stub takes passed options over its own section and measures them again.
		check "$name: PCR 12 has two events, before and after the stub's PCR 11 events" \
			test "$(jq -c '[.events[] | select(.pcr == 11 or .pcr == 12) | .pcr] | [.[0], .[-1], length]' "$show")" = '[12,12,10]'
		# PCR 9: the kernel's EFI stub tags the load options and the initrd (LoadFile2).
		for alg in $uki_banks; do
			want=$(uki_cmdline_digest "$alg" "$cmdline")
			got=$(jq -r '[.events[] | select(.pcr == 12) | .digests.'"$alg"'] | join(",")' "$show")
			check "$name: PCR 12 ($alg) events = the .cmdline as UTF-16LE + NUL" test "$got" = "$want,$want"
			want="$want,$("${alg}sum" "$d/initrd.img" | awk '{ print $1 }')"
			got=$(jq -r '[.events[] | select(.pcr == 9) | .digests.'"$alg"'] | join(",")' "$show")
			check "$name: PCR 9 ($alg) = the kernel stub's LoadOptions tag (the same string) and initrd tag (${alg}sum)" \
				test "$got" = "$want"
		done
	}
	# uki_boot NAME: boot the prepared $out/NAME, then what `boot` does after a boot.
	uki_boot() {
		local d=$out/$1
		vm_boot_dir "$d"
		vm_extract "$d"
		vm_say "boot $1: $VM_ACCEL_USED, $(cat "$d/seconds") s, log $(stat -c %s "$d/log.bin") bytes, banks $(jq -r 'keys | join(",")' "$d/pcrs.json")"
		sha256sum <"$d/disk.img" | awk '{ print $1 }' >"$d/disk.sha256"
		[ "${MB_VM_KEEP:-0}" = 1 ] || rm -f "$d/disk.img" "$d/vars.fd"
		"$MBOOT" log replay --json "$d/log.bin" >"$d/replay.json" || bad "$1: mboot log replay exited $?"
	}

	# mboot and the second disk's modules in the initramfs: the second boot unseals what the host
	# sealed to its prediction (the base boot gets an empty archive)
	vm_initramfs "$out/initrd.in" unseal
	vm_prepare_uki "$out/base" "$VM_CMDLINE_DEFAULT" "$out/initrd.in"
	mkdir -p "$out/sealed-in"
	tar -cf "$out/unseal-none.tar" -C "$out/sealed-in" .
	VM_EXTRA_DISK=$out/unseal-none.tar uki_boot base
	check_uki_boot base
	# The images are reproducible: built again from the same inputs, byte for byte (no boot).
	vm_prepare_uki "$out/rebuild" "$VM_CMDLINE_DEFAULT" "$out/initrd.in"
	check "uki: the UKI built again is byte-identical" cmp "$out/base/uki.efi" "$out/rebuild/uki.efi"
	check "uki: the disk image built again is byte-identical" \
		test "$(sha256sum <"$out/rebuild/disk.img" | awk '{ print $1 }')" = "$(cat "$out/base/disk.sha256")"
	rm -rf "$out/rebuild"

	# Another command line, in a second UKI (same path, same kernel and initrd). Its PCRs are
	# predicted before it boots, from the base boot and the new UKI's files alone:
	#   PCR 4 (sha1, sha256): the base log's PCR 4 events, the UKI's digest replaced by pesign's;
	#   PCR 9: the kernel stub's LoadOptions tag (new string) and initrd tag (same initrd);
	#   PCR 11: systemd-measure; PCR 12: the new string, twice; every other PCR as in the base
	#   boot, except PCR 10 (IMA's boot_aggregate over PCRs 0-9 moves with them; not predicted)
	#   and PCR 4 in sha384/sha512 (no Authenticode digest of those from pesign).
	next=$out/cmdline
	vm_prepare_uki "$next" "$VM_CMDLINE_DEFAULT mboot.test=changed" "$out/initrd.in"
	check "uki: both UKIs carry the same initramfs" cmp "$out/base/initrd.img" "$next/initrd.img"
	pred_args=()
	for alg in $uki_banks; do
		cmd_digest=$(uki_cmdline_digest "$alg" "$(cat "$next/cmdline.sect")")
		pred_args+=(--arg "$alg:9" "$(pcr_extend "$alg" "$cmd_digest" "$("${alg}sum" "$next/initrd.img" | awk '{ print $1 }')")")
		p11=$(uki_pcr11 "$next" "$alg") && [ -n "$p11" ] || vm_die "systemd-measure gave no PCR 11 ($alg) for $next"
		pred_args+=(--arg "$alg:11" "$p11")
		pred_args+=(--arg "$alg:12" "$(pcr_extend "$alg" "$cmd_digest" "$cmd_digest")")
		case $alg in
		sha1 | sha256)
			old=$(pesign -h -d "$alg" -i "$out/base/uki.efi" | awk '{ print $2 }')
			new=$(pesign -h -d "$alg" -i "$next/uki.efi" | awk '{ print $2 }')
			# shellcheck disable=SC2046 # digests are hex words
			pred_args+=(--arg "$alg:4" "$(pcr_extend "$alg" $(jq -r --arg b "$alg" '.events[] | select(.pcr == 4) | .digests[$b]' "$out/base/show.json" | sed "s/^$old\$/$new/"))")
			;;
		esac
	done
	jq -n --slurpfile base "$out/base/pcrs.json" "${pred_args[@]}" '{banks: ($base[0] | with_entries(.key as $b | .value |= (
			with_entries(select(.key != "10" and (.key != "4" or $b == "sha1" or $b == "sha256")))
			| with_entries(.key as $p | .value = ($ARGS.named["\($b):\($p)"] // .value)))))}' >"$out/predict-cmdline.json"
	check "uki predict: PCR 4 (sha1, sha256), 9, 11, 12 predicted differ from the base boot's" \
		test "$(jq -n -c --slurpfile p "$out/predict-cmdline.json" --slurpfile b "$out/base/pcrs.json" \
			'[$p[0].banks | to_entries[] as $x | $x.value | to_entries[] | select($b[0][$x.key][.key] != .value) | "\($x.key):\(.key)"] | sort')" \
		= '["sha1:11","sha1:12","sha1:4","sha1:9","sha256:11","sha256:12","sha256:4","sha256:9","sha384:11","sha384:12","sha384:9","sha512:11","sha512:12","sha512:9"]'
	# mboot's own prediction, before the boot too
	uki_predict_with_mboot "$out/predict-mboot.json" "$next"
	mboot_pred=$out/predict-mboot.json

	# A secret sealed before the boot, with the TPM the second boot gets (VM_TPM_STATE), to mboot's
	# prediction of PCRs 4, 9, 11, 12 (sha256); and again to the prediction for a UKI with yet
	# another .cmdline (never booted), which must not unseal. The sealed files reach the guest on
	# the second disk (as in the kernel-update scenario), outside the UKI, whose bytes they would
	# otherwise change.
	od -A n -N 32 -t x1 /dev/urandom | tr -d ' \n' >"$out/secret"
	decoy=$out/decoy
	mkdir -p "$decoy"
	printf '%s' "$VM_CMDLINE_DEFAULT mboot.test=decoy" >"$decoy/cmdline.sect"
	vm_uki "$decoy/uki.efi" "$(vm_kernel)" "$next/initrd.img" "$next/osrel" "$decoy/cmdline.sect"
	rc=0
	"$MBOOT" predict --log "$out/base/log.bin" --uki "$decoy/uki.efi" --uki-today "$out/base/uki.efi" --json \
		>"$decoy/predict.json" 2>"$decoy/predict.err" || rc=$?
	check "uki decoy: mboot predicts PCRs 4, 9, 11, 12 for a UKI with another .cmdline (exit $rc)" \
		test "$rc:$(jq -c .changed "$decoy/predict.json")" = "0:[4,9,11,12]"
	check "uki decoy: its PCR 12 (sha256) is not the one predicted for the second UKI" \
		test "$(jq -r '.banks.sha256["12"]' "$decoy/predict.json")" != "$(jq -r '.banks.sha256["12"]' "$mboot_pred")"
	seal_predicted "$out/tpm-state" 4,9,11,12 "$out/secret" "$out/sealed-in" \
		predicted:"$mboot_pred" decoy:"$decoy/predict.json"
	tar -cf "$out/unseal.tar" -C "$out/sealed-in" predicted.sealed decoy.sealed
	VM_TPM_STATE=$out/tpm-state VM_EXTRA_DISK=$out/unseal.tar uki_boot cmdline
	check_uki_boot cmdline
	check_unseal "uki cmdline" cmdline "$out/secret" "another .cmdline"
	moved=$(tpm_moved base cmdline)
	printf 'info cmdline: PCRs that differ in the TPM (sha256): %s\n' "$moved"
	check "uki cmdline: the TPM moved exactly PCRs 4, 9, 11, 12 and 10 (IMA)" test "$moved" = "[4,9,10,11,12]"
	check_prediction "uki predict (systemd-measure + pesign + base boot)" "$out/predict-cmdline.json" cmdline
	check "uki predict: the prediction covers PCRs 4 (sha1, sha256), 9, 11, 12 in all four banks" \
		test "$(jq -c '[.banks[] | keys | length]' "$out/predict-cmdline.json")" = '[23,23,22,22]'
	check_prediction "uki predict --uki (mboot)" "$mboot_pred" cmdline
	# mboot hash --uki on the booted UKI = the TPM's PCR 11 in every bank
	"$MBOOT" hash --uki "$out/cmdline/uki.efi" --bank sha1 --bank sha256 --bank sha384 --bank sha512 --json \
		>"$out/cmdline/hash-uki.json" || bad "mboot hash --uki exited $?"
	check "uki: mboot hash --uki of the second UKI = the TPM's PCR 11 in all four banks" \
		test "$(jq -n -c --slurpfile h "$out/cmdline/hash-uki.json" --slurpfile t "$out/cmdline/pcrs.json" \
			'[$h[0].banks | to_entries[] | select(.value["11"] == $t[0][.key]["11"])] | length')" = 4

	# A policy from the base boot's log: the base boot meets it, the other UKI breaks it in
	# PCR 4 (firmware PCRs are exact values) and PCR 11 (the .cmdline section's digest).
	check_policy_boots uki "the other UKI" 4 11

	# Boot 3, an update: a UKI whose initramfs changed, and a system extension dropped in beside
	# it (<UKI>.extra.d/*.raw), predicted by mboot before it boots from the new UKI and the
	# folder alone: PCR 4 (the UKI, the kernel in it), 11, 13 (systemd-stub's archive of the
	# system extensions), 12 (today's .cmdline again, explained by the base UKI) and every other
	# PCR but 9 (the kernel tags .initrd with the archive appended).
	printf 'this file only changes the initramfs bytes\n' >"$out/changed.txt"
	vm_initramfs "$out/initrd-update.in" plain "$out/changed.txt"
	printf 'a system extension image: systemd-stub packs it, the kernel unpacks it, nobody mounts it\n' \
		>"$out/mboot-test.raw"
	VM_UKI_EXTRA="$out/mboot-test.raw" vm_prepare_uki "$out/update" "$VM_CMDLINE_DEFAULT" "$out/initrd-update.in"
	rc=0
	"$MBOOT" predict --log "$out/base/log.bin" --uki "$out/update/uki.efi" --uki-extra "$out/update/extra.d" \
		--uki-today "$out/base/uki.efi" --json >"$out/predict-update.json" 2>"$out/predict-update.err" || rc=$?
	# PCR 12: today's .cmdline again; PCR 9: the kernel tags .initrd with the stub's archive of
	# the system extension appended, which mboot does not compute
	check "uki predict --uki --uki-extra --uki-today: exit 1, PCR 9 unpredictable (the archive appended), PCRs 4, 11 and 13 changed ($(jq -c '{changed, unmatched}' "$out/predict-update.json"))" \
		test "$rc:$(jq -c '[(.unpredictable | keys | sort), .changed, (.unmatched | length)]' "$out/predict-update.json")" \
		= '1:[["9"],[4,11,13],0]'
	uki_boot update
	d=$out/update
	check_show update "$d"
	check_replay update "$d" "$d/replay.json" '[0,1,2,3,4,5,6,7,9,11,12,13]'
	check "update: the new initramfs is in the UKI" cmp "$d/initrd.img" "$out/initrd-update.in"
	for alg in $uki_banks; do
		want=$(uki_pcr11 "$d" "$alg")
		check "update: TPM PCR 11 ($alg) = systemd-measure calculate --phase= on the new sections" \
			test -n "$want" -a "$(jq -r --arg b "$alg" '.[$b]["11"] // ""' "$d/pcrs.json")" = "$want"
	done
	for alg in sha1 sha256; do
		want=$(for f in "$d/BOOTX64.EFI" "$d/uki.efi" "$(vm_kernel)"; do pesign -h -d "$alg" -i "$f" | awk '{ print $2 }'; done | paste -sd,)
		check "update: PCR 4 applications ($alg) = pesign of systemd-boot, the new UKI, the kernel" \
			test "$(jq -r '[.events[] | select(.pcr == 4 and .type == "EV_EFI_BOOT_SERVICES_APPLICATION") | .digests.'"$alg"'] | join(",")' "$d/show.json")" = "$want"
	done
	check "update: PCR 13 has one event, systemd-stub's 'System extension initrd'" \
		test "$(jq -c '[.events[] | select(.pcr == 13) | .decoded.text // .decoded.description]' "$d/show.json")" = '["System extension initrd"]'
	moved=$(tpm_moved base update)
	check "update: the TPM moved exactly PCRs 4, 9, 10 (IMA), 11 and 13 ($moved)" test "$moved" = "[4,9,10,11,13]"
	check_prediction "uki predict --uki --uki-extra (mboot)" "$out/predict-update.json" update
	check "uki predict --uki --uki-extra: PCRs 4, 11, 12 and 13 predicted in all four banks" \
		test "$(jq -c '[.banks[] | has("4") and has("11") and has("12") and has("13")] | unique' "$out/predict-update.json")" = '[true]'
	;;
secureboot)
	# OVMF with Secure Boot on and Microsoft's keys -> Debian's shim -> Debian's signed GRUB ->
	# Debian's signed kernel (tests/vm/lib.sh vm_prepare_secureboot). Three boots: the baseline,
	# the command line and initramfs changed, and a GRUB update, each change predicted from the
	# baseline's log before it boots.
	for t in objcopy openssl xxd; do command -v $t >/dev/null || vm_die "missing: $t"; done
	[ -r "$VM_SB_SHIM" ] || vm_die "missing: $VM_SB_SHIM (shim-signed)"
	[ -r "$VM_SB_OVMF_CODE" ] && [ -r "$VM_SB_OVMF_VARS" ] || vm_die "missing: $VM_SB_OVMF_CODE or $VM_SB_OVMF_VARS (ovmf)"
	vm_secureboot_firmware
	sb_cmdline="$VM_CMDLINE_DEFAULT mboot.test=changed"
	printf 'this file only changes the initramfs bytes\n' >"$out/changed.txt"
	printf 'SbatPolicy-605dab50-e046-4300-abb6-3dd810dd8b23 07000000 01\n' >"$out/efivars"
	# Boot 2's initramfs (built here first; reproducible) carries mboot, ~45 MiB in an ASan
	# build: every boot's ESP is sized for it, since the disk's size is in the GPT that PCR 5
	# measures, and the seal to boot 2's PCRs 0-9 predicts PCR 5 from the baseline's.
	vm_initramfs "$out/predict-initrd.img" efivars,unseal "$out/changed.txt" "$out/efivars"
	# shellcheck disable=SC2034 # read by lib.sh's vm_disk_esp
	VM_ESP_MIB=$((($(stat -c %s "$out/predict-initrd.img") >> 20) + 48))
	[ "$VM_ESP_MIB" -ge 64 ] || VM_ESP_MIB=64
	boot base "$VM_CMDLINE_DEFAULT" plain
	# The images are reproducible: the disk built again from the same inputs, byte for byte (no boot).
	vm_initramfs "$out/rebuild.initrd" plain
	vm_prepare_secureboot "$out/rebuild" "$VM_CMDLINE_DEFAULT" "$out/rebuild.initrd"
	check "secureboot: the initramfs and the disk image built again are byte-identical" \
		test "$(sha256sum <"$out/rebuild/disk.img" | awk '{ print $1 }'):$(sha256sum <"$out/rebuild/initrd.img" | awk '{ print $1 }')" \
		= "$(cat "$out/base/disk.sha256"):$(sha256sum <"$out/base/initrd.img" | awk '{ print $1 }')"
	rm -rf "$out/rebuild" "$out/rebuild.initrd"
	# Boot 2 changes the command line and the initramfs; the prediction is made before that
	# boot exists, from its inputs only (the initramfs is reproducible: built here first). Its
	# guest also asks shim for the latest SBAT revocations at the next boot: the SbatPolicy
	# variable (shim's GUID, NV+BS+RT, 1 = latest), written through efivarfs.
	# The initramfs carries mboot too (mode unseal): a secret sealed on the host to the
	# prediction, with the swtpm state boot 2 then gets (VM_TPM_STATE), must unseal in its guest;
	# the same secret sealed to the prediction for another command line (never booted) must
	# not. The sealed files come in on a second virtio disk (a tar archive, as in uki).
	vm_grub_cfg "$out/predict-grub.cfg" "$sb_cmdline"
	rc=0
	"$MBOOT" predict --log "$out/base/log.bin" --grub-cfg "$out/predict-grub.cfg" --cmdline "$sb_cmdline" \
		--initrd "$out/predict-initrd.img" --json >"$out/predict-cmdline.json" || rc=$?
	sb_decoy_cmdline="$VM_CMDLINE_DEFAULT mboot.test=decoy"
	vm_grub_cfg "$out/decoy-grub.cfg" "$sb_decoy_cmdline"
	rc_decoy=0
	"$MBOOT" predict --log "$out/base/log.bin" --grub-cfg "$out/decoy-grub.cfg" --cmdline "$sb_decoy_cmdline" \
		--initrd "$out/predict-initrd.img" --json >"$out/predict-decoy.json" 2>"$out/predict-decoy.err" || rc_decoy=$?
	check "secureboot decoy: mboot predicts PCRs 8 and 9 changed for another command line (exit $rc_decoy)" \
		test "$rc_decoy:$(jq -c .changed "$out/predict-decoy.json")" = "0:[8,9]"
	check "secureboot decoy: its PCRs 0-9 and 14 (sha256) differ from boot 2's prediction in exactly 8 and 9" \
		test "$(jq -n -c --slurpfile p "$out/predict-cmdline.json" --slurpfile d "$out/predict-decoy.json" \
			'[$p[0].banks.sha256 | to_entries[] | select(.key | IN("0","1","2","3","4","5","6","7","8","9","14"))
			| select($d[0].banks.sha256[.key] != .value) | .key | tonumber] | sort')" = '[8,9]'
	od -A n -N 32 -t x1 /dev/urandom | tr -d ' \n' >"$out/secret"
	seal_predicted "$out/tpm-state" 0,1,2,3,4,5,6,7,8,9,14 "$out/secret" "$out/sealed-in" \
		predicted:"$out/predict-cmdline.json" decoy:"$out/predict-decoy.json"
	tar -cf "$out/unseal.tar" -C "$out/sealed-in" predicted.sealed decoy.sealed
	MB_VM_KEEP=1 VM_TPM_STATE=$out/tpm-state VM_EXTRA_DISK=$out/unseal.tar \
		boot cmdline "$sb_cmdline" efivars,unseal "$out/changed.txt" "$out/efivars"
	check_unseal "cmdline" cmdline "$out/secret" "another command line (mboot.test=decoy; PCRs 0-9 and 14)"
	check "cmdline: the decoy's refusal names PCRs 8 and 9 (sha256) as differing, none of 0-7 and 14" \
		test "$(vm_section "$out/cmdline/serial.log" UNSEAL-decoy-OUT | sed -n 's/^PCR \([0-9]*\) (sha256) differs:.*/\1/p' | paste -sd,)" = 8,9
	mv "$out/cmdline/vars.fd" "$out/vars-after-cmdline.fd"
	[ "${MB_VM_KEEP:-0}" = 1 ] || rm -f "$out/cmdline/disk.img" "$out/cmdline/initrd.in"
	check "cmdline: the initramfs that booted is the one predicted from" cmp "$out/predict-initrd.img" "$out/cmdline/initrd.img"
	check "cmdline: the guest wrote SbatPolicy = latest ($(vm_section "$out/cmdline/serial.log" EFIVARS | tr '\n' ' '))" \
		grep -qx 'wrote SbatPolicy-605dab50-e046-4300-abb6-3dd810dd8b23: 0700000001' < <(vm_section "$out/cmdline/serial.log" EFIVARS)
	# shim's latest SBAT level: the second text of its .sbatlevel section (u32 version, u32
	# offsets of previous and latest counted from byte 4, NUL-terminated texts).
	objcopy -O binary --only-section=.sbatlevel "$VM_SB_SHIM" "$out/sbatlevel.bin"
	loff=$(od -A n -t u4 -j 8 -N 4 "$out/sbatlevel.bin" 2>/dev/null | tr -d ' ') || loff=
	tail -c +$((${loff:-0} + 5)) "$out/sbatlevel.bin" >"$out/sbatlevel-latest.bin"
	head -z -n 1 "$out/sbatlevel-latest.bin" | tr -d '\0' >"$out/sbat-latest.txt"
	# Boot 3 updates GRUB: shim loads another of Debian's signed images (the CD build, whose
	# prefix is /boot/grub), and shim applies the latest SBAT level boot 2 asked for (boot 3
	# starts from boot 2's variable store). Predicted before it boots from the old and new
	# images and shim's latest level alone.
	new_grub=$(vm_signed_grub gcdx64.efi.signed)
	rc_update=0
	"$MBOOT" predict --log "$out/base/log.bin" --efi "$out/base/grubx64.efi=$new_grub" \
		--sbat-level "$out/sbat-latest.txt" --json >"$out/predict-update.json" 2>"$out/predict-update.err" || rc_update=$?
	OVMF_VARS=$out/vars-after-cmdline.fd VM_SB_GRUB=gcdx64.efi.signed VM_SB_GRUB_CFG=/boot/grub/grub.cfg \
		boot update "$VM_CMDLINE_DEFAULT" plain
	kernel=$(vm_kernel)
	printf 'info secureboot: shim %s, GRUB %s, kernel %s\n' "$(dpkg-query -W -f '${Version}' shim-signed 2>/dev/null)" \
		"$(cat "$out/base/grub-package")" "$(cat "$out/base/kernel-package")"

	# UEFI_VARIABLE_DATA (hex): GUID, u64 name length (UTF-16 units), u64 data length, name, data.
	JQ_SB="$JQ_LIB"'
	def hexbyte: . as $x | ("0123456789abcdef" | index($x[0:1])) * 16 + ("0123456789abcdef" | index($x[1:2]));
	def le64: [range(0; 16; 2) as $i | .[$i:$i+2] | hexbyte] | reverse | reduce .[] as $b (0; . * 256 + $b);
	def vardata: (.data | ascii_downcase) as $h | ($h[32:48] | le64) as $n | ($h[48:64] | le64) as $d
		| $h[64 + $n * 4 : 64 + $n * 4 + $d * 2];
	'
	for b in base cmdline update; do
		d=$out/$b
		sb=$(vm_section "$d/serial.log" SECUREBOOT)
		printf '%s\n' "$sb" | sed "s/^/  $b guest: /"
		check "$b: the kernel says 'secureboot: Secure boot enabled' and locked itself down (integrity)" \
			test "$(grep -cx -e 'secureboot: Secure boot enabled' -e 'lockdown: none \[integrity\] confidentiality' <<<"$sb")" = 2
		check_replay "$b" "$d" "$d/replay.json"
		check_show "$b" "$d"
		check "$b: PCR 14 (shim's MOK variables) is in the log and replays" \
			test "$(jq -r '.banks.sha256["14"] // "none"' "$d/replay.json")" = "$(jq -r '.sha256["14"]' "$d/pcrs.json")"
	done

	d=$out/base
	show=$d/show.json
	check "base: PCR 7 SecureBoot variable event says enabled (data byte 01)" \
		test "$(jq -r "$JQ_SB"'[.events[] | select(.pcr == 7 and .type == "EV_EFI_VARIABLE_DRIVER_CONFIG" and .decoded.name == "SecureBoot") | vardata] | join(",")' "$show")" = 01
	# PCR 4: the firmware measured shim, shim measured GRUB (its loader) and the kernel (its
	# Verify, which Debian's GRUB calls twice: its shim_lock verifier on opening the file, and
	# linuxefi before the hand-over), each by its Authenticode digest.
	want="$(pesign -h -i "$d/shimx64.efi" | awk '{ print $2 }'),$(pesign -h -i "$d/grubx64.efi" | awk '{ print $2 }')"
	k=$(pesign -h -i "$kernel" | awk '{ print $2 }')
	want="$want,$k,$k"
	got=$(jq -r '[.events[] | select(.pcr == 4 and .type == "EV_EFI_BOOT_SERVICES_APPLICATION") | .digests.sha256] | join(",")' "$show")
	check "base: PCR 4 applications = pesign -h of shim, GRUB, the kernel (twice), in that order" test "$got" = "$want"
	check "base: PCR 4's shim and GRUB events name \\EFI\\BOOT\\BOOTX64.EFI and \\EFI\\BOOT\\grubx64.efi" \
		test "$(jq -r '[.events[] | select(.pcr == 4 and .type == "EV_EFI_BOOT_SERVICES_APPLICATION") | .decoded.description // ""
			| capture("(?<p>\\\\EFI\\\\BOOT\\\\[A-Za-z0-9]+\\.(EFI|efi))$").p] | join(",")' "$show")" = '\EFI\BOOT\BOOTX64.EFI,\EFI\BOOT\grubx64.efi'

	# PCR 7: the Secure Boot policy (SecureBoot, PK, KEK, db, dbx), the separator, then one
	# authority per certificate that verified something: db's Microsoft UEFI CA (shim), shim's
	# SbatLevel, shim's vendor certificate (GRUB and the kernel: measured once).
	check "base: PCR 7 configuration events are SecureBoot, PK, KEK, db, dbx" \
		test "$(jq -r '[.events[] | select(.pcr == 7 and .type == "EV_EFI_VARIABLE_DRIVER_CONFIG") | .decoded.name] | join(",")' "$show")" = SecureBoot,PK,KEK,db,dbx
	check "base: PCR 7 has 3 authority events: db, SbatLevel, MokListRT (shim's vendor certificate)" \
		test "$(jq -r '[.events[] | select(.pcr == 7 and .type == "EV_EFI_VARIABLE_AUTHORITY") | .decoded.name] | join(",")' "$show")" = db,SbatLevel,MokListRT
	check "base: PCR 7 has 9 events, the authorities after the separator" \
		test "$(jq -r '[.events[] | select(.pcr == 7) | .type | sub("EV_EFI_VARIABLE_"; "")] | join(",")' "$show")" \
		= DRIVER_CONFIG,DRIVER_CONFIG,DRIVER_CONFIG,DRIVER_CONFIG,DRIVER_CONFIG,EV_SEPARATOR,AUTHORITY,AUTHORITY,AUTHORITY
	check "base: mboot log show says every PCR 7 digest matches its event data" \
		test "$(jq '[.events[] | select(.pcr == 7) | .digest_check] | unique' -c "$show")" = '["match"]'
	# the same from outside: each bank's digest is sha*sum of the event data
	n=0 bad_digests=0
	while read -r alg dig hex; do
		n=$((n + 1))
		[ "$(printf '%s' "$hex" | xxd -r -p | "${alg}sum" | awk '{ print $1 }')" = "$dig" ] || bad_digests=$((bad_digests + 1))
	done < <(jq -r '.events[] | select(.pcr == 7) | .data as $h | .digests | to_entries[] | "\(.key) \(.value) \($h)"' "$show")
	check "base: all $n PCR 7 digests (every bank) = sha*sum of the event data" test "$n:$bad_digests" = 36:0
	authority() { jq -r --arg n "$1" "$JQ_SB"'[.events[] | select(.pcr == 7 and .type == "EV_EFI_VARIABLE_AUTHORITY" and .decoded.name == $n) | vardata] | join(",")' "$show"; }
	# db's entry: EFI_SIGNATURE_DATA, owner GUID then the certificate, one of db's own.
	auth=$(authority db)
	cert=${auth:32}
	printf '%s' "$cert" | xxd -r -p >"$d/db-authority.der"
	check "base: the db authority is Microsoft's UEFI CA 2011 (openssl: $(openssl x509 -inform der -noout -subject -in "$d/db-authority.der" 2>&1 | cut -c1-120))" \
		grep -q 'CN *= *Microsoft Corporation UEFI CA 2011' < <(openssl x509 -inform der -noout -subject -in "$d/db-authority.der" 2>&1)
	check "base: that certificate is in db as the log's db event carries it" \
		test "$(jq -r --arg c "$cert" "$JQ_SB"'[.events[] | select(.pcr == 7 and .type == "EV_EFI_VARIABLE_DRIVER_CONFIG" and .decoded.name == "db") | vardata | contains($c)] | join(",")' "$show")" = true
	# shim's vendor certificate: the first (authorized) part of shim's .vendor_cert section
	# (u32 authorized size, u32 deauthorized size, u32 offsets of each).
	objcopy -O binary --only-section=.vendor_cert "$d/shimx64.efi" "$d/vendor_cert.bin"
	vsize=$(od -A n -t u4 -N 4 "$d/vendor_cert.bin" 2>/dev/null | tr -d ' ') || vsize=
	voff=$(od -A n -t u4 -j 8 -N 4 "$d/vendor_cert.bin" 2>/dev/null | tr -d ' ') || voff=
	# xxd reads the range itself: no early-exiting reader in a pipe (the section is 9.6 KiB, more
	# than tail writes at once, and head -c's exit killed tail with SIGPIPE under pipefail).
	want=$(xxd -p -s "${voff:-0}" -l "${vsize:-0}" "$d/vendor_cert.bin" | tr -d '\n') || want=
	auth=$(authority MokListRT)
	check "base: the MokListRT authority is shim's owner GUID + the certificate in shim's .vendor_cert ($vsize bytes)" \
		test "${auth:0:32}:${auth:32}" = "50ab5d6046e00043abb63dd810dd8b23:$want"
	# SbatLevel: the 'previous' revocation level shim carries in .sbatlevel (u32 version, u32
	# offsets of previous and latest counted from byte 4, NUL-terminated texts).
	objcopy -O binary --only-section=.sbatlevel "$d/shimx64.efi" "$d/sbatlevel.bin"
	poff=$(od -A n -t u4 -j 4 -N 4 "$d/sbatlevel.bin" 2>/dev/null | tr -d ' ') || poff=
	tail -c +$((${poff:-0} + 5)) "$d/sbatlevel.bin" >"$d/sbatlevel-previous.bin"
	want=$(head -z -n 1 "$d/sbatlevel-previous.bin" | tr -d '\0' | xxd -p | tr -d '\n') || want=
	check "base: the SbatLevel authority is shim's built-in previous level ($(printf '%s' "$want" | xxd -r -p | tr '\n' ' '))" \
		test "$(authority SbatLevel)" = "$want"
	# PCR 14: shim's MOK lists, each event's data its name and a NUL.
	check "base: PCR 14 events are shim's MokList, MokListX, MokListTrusted (EV_IPL, data = name + NUL)" \
		test "$(jq -r "$JQ_SB"'[.events[] | select(.pcr == 14) | "\(.type):\(.data | unhex)"] | join(",")' "$show" | tr '\0' '#')" \
		= 'EV_IPL:MokList#,EV_IPL:MokListX#,EV_IPL:MokListTrusted#'

	# GRUB: Debian's image runs its built-in config first (4 commands: test the prefix, source
	# /EFI/debian/grub.cfg), then the lines of our grub.cfg; PCR 9: the config, kernel, initrd.
	got=$(jq -c "$JQ_LIB"'[.events[] | select(.pcr == 8) | text | select(startswith("grub_cmd: ")) | ltrimstr("grub_cmd: ")]' "$show")
	printf 'info base: GRUB commands: %s\n' "$got"
	check "base: PCR 8 grub_cmd events end with 'source (hd0,gpt1)/EFI/debian/grub.cfg' then the lines of grub.cfg" \
		test "$(jq -c '.[-6:]' <<<"$got")" = "$(jq -R -s -c '["source (hd0,gpt1)/EFI/debian/grub.cfg"] + (split("\n") | map(select(length > 0)))' "$d/grub.cfg")"
	check "base: PCR 8 kernel_cmdline is '/vmlinuz $VM_CMDLINE_DEFAULT'" \
		test "$(jq -r "$JQ_LIB"'[.events[] | select(.pcr == 8) | text | select(startswith("kernel_cmdline: "))] | join("|")' "$show")" \
		= "kernel_cmdline: /vmlinuz $VM_CMDLINE_DEFAULT"
	for alg in sha1 sha256 sha384 sha512; do
		want="(hd0,gpt1)/EFI/debian/grub.cfg=$("${alg}sum" <"$d/grub.cfg" | awk '{ print $1 }'),/vmlinuz=$("${alg}sum" <"$kernel" | awk '{ print $1 }'),/initrd.img=$("${alg}sum" <"$d/initrd.img" | awk '{ print $1 }')"
		check "base: PCR 9 $alg: grub.cfg, /vmlinuz, /initrd.img = ${alg}sum of the files" \
			test "$(jq -r "$JQ_LIB"'[.events[] | select(.pcr == 9) | "\(text)=\(.digests.'"$alg"')"] | join(",")' "$show")" = "$want"
	done

	# The changed command line and initramfs move only what GRUB measures; the Secure Boot chain
	# is the same.
	moved=$(tpm_moved base cmdline)
	check "cmdline: the TPM moved exactly PCRs 8, 9 and 10 (IMA): 0-7 and 14 identical ($moved)" test "$moved" = "[8,9,10]"
	for alg in sha1 sha256 sha384 sha512; do
		check "cmdline: PCR 9 $alg: the initrd event = ${alg}sum of the changed initramfs" \
			test "$(jq -r "$JQ_LIB"'[.events[] | select(.pcr == 9 and text == "/initrd.img") | .digests.'"$alg"'] | join(",")' "$out/cmdline/show.json")" \
			= "$("${alg}sum" <"$out/cmdline/initrd.img" | awk '{ print $1 }')"
	done

	# The GRUB update: PCR 4 has the new image's Authenticode digest where the old one's was;
	# PCR 8 has the new image's own commands (its prefix), PCR 9 the config it read from there.
	d=$out/update
	want="$(pesign -h -i "$d/shimx64.efi" | awk '{ print $2 }'),$(pesign -h -i "$new_grub" | awk '{ print $2 }'),$k,$k"
	got=$(jq -r '[.events[] | select(.pcr == 4 and .type == "EV_EFI_BOOT_SERVICES_APPLICATION") | .digests.sha256] | join(",")' "$d/show.json")
	check "update: PCR 4 applications = pesign -h of shim, the new GRUB (gcdx64.efi), the kernel (twice)" test "$got" = "$want"
	check "update: GRUB read its config from its own prefix: 'source (hd0,gpt1)/boot/grub/grub.cfg' in PCR 8" \
		grep -qx 'source (hd0,gpt1)/boot/grub/grub.cfg' < <(jq -r "$JQ_LIB"'.events[] | select(.pcr == 8) | text | ltrimstr("grub_cmd: ")' "$d/show.json")
	d=$out/update
	check "update: PCR 7's SbatLevel authority is shim's latest level now ($(tr '\n' ' ' <"$out/sbat-latest.txt"))" \
		test "$(jq -r "$JQ_SB"'[.events[] | select(.pcr == 7 and .type == "EV_EFI_VARIABLE_AUTHORITY" and .decoded.name == "SbatLevel") | vardata] | join(",")' "$d/show.json")" \
		= "$(xxd -p <"$out/sbat-latest.txt" | tr -d '\n')"
	moved=$(tpm_moved base update)
	check "update: the TPM moved exactly PCRs 4, 7 (SbatLevel), 8 and 10 (IMA): 14 identical, 9 too (the same files, read from another folder) ($moved)" \
		test "$moved" = "[4,7,8,10]"
	# mboot's prediction: PCRs 4 and 7 computed, 8 and 9 named unpredictable (the new image's
	# prefix differs, so it runs other commands and reads another config), every other PCR carried.
	check "predict --efi OLD_GRUB=NEW_GRUB --sbat-level: exit 1, PCRs 8 and 9 unpredictable for the prefix, PCRs 4 and 7 changed ($(jq -c .unpredictable "$out/predict-update.json"))" \
		test "$rc_update:$(jq -c '[(.unpredictable | keys), (.unpredictable["8"] | test("prefix")), .changed]' "$out/predict-update.json")" \
		= '1:[["8","9"],true,[4,7]]'
	check_prediction "predict GRUB and SBAT update" "$out/predict-update.json" update
	check "predict GRUB and SBAT update: PCRs 0-7 and 14 predicted in all four banks, no value for 8 and 9" \
		test "$(jq -c '[.banks[] | [keys[] | tonumber] | map(select(. <= 9 or . == 14)) | sort] | unique' "$out/predict-update.json")" \
		= '[[0,1,2,3,4,5,6,7,14]]'
	d=$out/base
	check "predict cmdline (made before that boot): exits 0, nothing unpredictable ($(jq -c '{unpredictable, unmatched}' "$out/predict-cmdline.json"))" \
		test "$rc:$(jq -c '.changed' "$out/predict-cmdline.json")" = "0:[8,9]"
	check_replay predict-cmdline "$out/cmdline" "$out/predict-cmdline.json"
	# The same boot predicted by running the configs (the GRUB model, no --cmdline): the signed
	# GRUB that booted (--grub-image) runs its built-in config and its memdisk's grub.cfg first;
	# the model reproduces today's PCR 8 and runs the new config. No boot of its own: PCR 8
	# predicted equals the cmdline boot's TPM in every bank.
	# (--initrd under the name the entry loads it by: the model checks the file is that one)
	mkdir -p "$out/model-initrd"
	cp "$out/predict-initrd.img" "$out/model-initrd/initrd.img"
	rc=0
	"$MBOOT" predict --log "$d/log.bin" --grub-booted-dir '' --grub-image "$d/grubx64.efi" \
		--grub-cfg-booted "(hd0,gpt1)/EFI/debian/grub.cfg=$d/grub.cfg" \
		--grub-cfg "(hd0,gpt1)/EFI/debian/grub.cfg=$out/predict-grub.cfg" \
		--initrd "$out/model-initrd/initrd.img" --json >"$out/predict-model.json" || rc=$?
	check "predict by the GRUB model (--grub-image): exits 0, PCR 8 predicted ($(jq -c '{unpredictable, unmatched}' "$out/predict-model.json"))" \
		test "$rc:$(jq -c '[.changed, ([.banks[] | has("8")] | unique)]' "$out/predict-model.json")" = '0:[[8,9],[true]]'
	check "predict by the GRUB model: PCR 8 equals the cmdline boot's TPM in every bank" \
		test "$(jq -n -c --slurpfile p "$out/predict-model.json" --slurpfile t "$out/cmdline/pcrs.json" \
			'[$t[0] | keys[] as $b | ($p[0].banks[$b]["8"] // "" | ascii_downcase) == ($t[0][$b]["8"] | ascii_downcase)] | unique')" = '[true]'
	# The kernel is measured in PCR 4 by shim too: --kernel alone leaves PCR 4 unpredictable;
	# naming it with --efi (here the same kernel) predicts it. The kernel is given under the name
	# GRUB loads it by (/vmlinuz on the ESP): updated in place, so PCR 8 keeps today's strings.
	mkdir -p "$out/esp-kernel"
	cp "$kernel" "$out/esp-kernel/vmlinuz"
	kernel=$out/esp-kernel/vmlinuz
	rc=0
	"$MBOOT" predict --log "$d/log.bin" --kernel "$kernel" --json >"$out/predict-kernel.json" 2>/dev/null || rc=$?
	check "predict --kernel without --efi: exit 1, PCR 4 unpredictable ($(jq -c .unpredictable "$out/predict-kernel.json"))" \
		test "$rc:$(jq -c '.unpredictable | keys' "$out/predict-kernel.json")" = '1:["4"]'
	rc=0
	"$MBOOT" predict --log "$d/log.bin" --kernel "$kernel" --efi "$kernel=$kernel" --json >"$out/predict-kernel-efi.json" || rc=$?
	check "predict --kernel --efi OLD=NEW: exit 0" test $rc -eq 0
	check_replay predict-kernel-efi "$d" "$out/predict-kernel-efi.json"

	# A policy from this boot's artifacts (shim, GRUB, the kernel, initrd, grub.cfg) and its log:
	# the boot meets it. --kernel gives the kernel's PCR 4 rule, pesign's digest, as often as the
	# log's chain measured it after GRUB's linux command (twice); shim and GRUB once each. An
	# --efi naming the kernel too is the same one rule.
	jq '{banks: .}' "$d/pcrs.json" >"$d/pcrs-banks.json"
	for e in "" "--efi $kernel"; do
		tag="policy generate --kernel --efi SHIM --efi GRUB${e:+ --efi KERNEL}"
		pol=$out/policy-artifacts${e:+-efi}.json
		rm -f "$pol"
		rc=0
		# shellcheck disable=SC2086 # $e: no option, or --efi and the kernel's path (no spaces)
		"$MBOOT" policy generate --from-log "$d/log.bin" --kernel "$kernel" --initrd "$d/initrd.img" \
			--grub-cfg "(hd0,gpt1)/EFI/debian/grub.cfg=$d/grub.cfg" --efi "$d/shimx64.efi" --efi "$d/grubx64.efi" $e \
			-o "$pol" 2>"$out/policy-artifacts.err" || rc=$?
		check "$tag: exit 0 ($(head -c 300 "$out/policy-artifacts.err"))" test $rc -eq 0
		check "$tag: PCR 4 applications = pesign -h of shim (max 1), GRUB (max 1), the kernel (max 2), all required" \
			test "$(jq -r '[.pcrs["4"].rules[] | select(.type == "EV_EFI_BOOT_SERVICES_APPLICATION") | "\(.digests[0].sha256):\(.max):\(.required)"] | join(",")' "$pol")" \
			= "$(pesign -h -i "$d/shimx64.efi" | awk '{ print $2 }'):1:true,$(pesign -h -i "$d/grubx64.efi" | awk '{ print $2 }'):1:true,$k:2:true"
		rc=0
		"$MBOOT" verify --log "$d/log.bin" --pcrs "$d/pcrs-banks.json" --no-userspace-log --policy "$pol" --json \
			>"$out/policy-artifacts-verify.json" || rc=$?
		check "$tag: the boot it was made from verifies and meets it (exit $rc: $(jq -c '[.policy.violations[]? | {pcr, event, reason}]' "$out/policy-artifacts-verify.json" | cut -c1-400))" \
			test "$rc:$(jq -c '[.verified, .policy.ok]' "$out/policy-artifacts-verify.json")" = "0:[true,true]"
	done

	# A policy from the baseline's log: the baseline meets it, the changed boot breaks it in PCR 8.
	check_policy_boots secureboot "the changed boot" 8
	;;
kernel-update)
	# A Debian kernel update, end to end (issue 15). The Debian-shaped boot (lib.sh
	# vm_prepare_debian): GRUB reads the ESP's stub config, which configfiles /boot/grub/grub.cfg,
	# written by the real update-grub for kernel A. One TPM state serves both boots.
	# Boot 1 (kernel A), in the guest: seal a secret to PCRs 0-9, keep the configs that booted
	# (mboot grub keep-booted), install kernel B (the same kernel and initrd under the next
	# version name) and update-grub's config for B and A, run Debian's postinst.d hook, which
	# reseals under boot 1's live PCRs. Between the boots the host writes what the package and
	# update-grub wrote into the ESP. Boot 2 (kernel B, GRUB's default entry): the resealed
	# secret unseals, and the TPM holds what boot 1 predicted, in every bank. Boot 3 (the same
	# disk and TPM, no config edit): a person picks kernel A from GRUB's menu, "Advanced options
	# for Debian GNU/Linux" > "Debian GNU/Linux, with Linux A", typed on QEMU's keyboard (VM_KEYS);
	# the secret unseals, and the TPM holds the fallback boot 1 predicted (the hook's third state).
	# GRUB_TIMEOUT is 10 for all boots (Debian's default is 5; 10 leaves boot 3's key presses
	# room on a loaded host), so the menu shows with a countdown; boots 1 and 2 let it run out.
	# The files come in on a second virtio disk (a tar archive); what comes out goes over the
	# serial console.
	for t in xxd tar python3; do command -v $t >/dev/null || vm_die "missing: $t"; done
	# shellcheck disable=SC2034 # read by lib.sh's vm_grub_mkconfig
	VM_GRUB_TIMEOUT=10
	kernel=$(vm_kernel)
	kver_a=$(basename "$kernel" | sed 's/^vmlinuz-//')
	kver_b=$(vm_kver_next "$kver_a")
	b1=$out/boot1 b2=$out/boot2 b3=$out/boot3
	vm_initramfs "$out/initrd.in" kupdate
	# The ESP holds kernels A and B and their initrds (the ASan build's initramfs is ~45 MiB, over
	# the default 64 MiB ESP twice over): sized from them, with room for GRUB and the configs.
	# shellcheck disable=SC2034 # read by lib.sh's vm_disk_esp
	VM_ESP_MIB=$((((($(stat -c %s "$kernel") + $(stat -c %s "$out/initrd.in")) * 2) >> 20) + 32))
	[ "$VM_ESP_MIB" -ge 64 ] || VM_ESP_MIB=64
	vm_prepare_debian "$b1" "$out/initrd.in" "$kver_a"
	# update-grub once B is installed beside A: 10_linux puts the newest first, the default entry
	vm_grub_mkconfig "$out/grub-next.cfg" "$kver_b" "$kver_a"
	# /etc/default/mboot as a Debian user sets it: the measured path of /boot/grub/grub.cfg
	printf '%s\n' "MBOOT_RESEAL_STRICT=1" "MBOOT_PREDICT_ARGS='--grub-cfg" \
		"(hd0,gpt1)/boot/grub/grub.cfg=/boot/grub/grub.cfg'" >"$out/default-mboot"
	od -A n -N 32 -t x1 /dev/urandom | tr -d ' \n' >"$out/secret"
	u=$out/in1/update
	mkdir -p "$u" "$out/in2"
	cp "$b1/esp-grub.cfg" "$b1/boot-grub.cfg" "$out/default-mboot" "$out/secret" "$u/"
	cp "$kernel" "$u/vmlinuz"
	cp "$b1/initrd.img" "$u/initrd.img"
	cp "$out/grub-next.cfg" "$u/grub.cfg"
	printf '%s\n' "$kver_b" >"$u/kver"
	tar -cf "$out/data1.tar" -C "$out/in1" update
	# boot 2's disk: boot 1's (QEMU ran it as a snapshot, so it is as it was) with /boot updated
	mkdir -p "$b2"
	cp "$b1/disk.img" "$b2/disk.img"
	vm_esp_put "$b2/disk.img" "$kernel=/boot/vmlinuz-$kver_b" "$b1/initrd.img=/boot/initrd.img-$kver_b" \
		"$out/grub-next.cfg=/boot/grub/grub.cfg"

	export VM_TPM_STATE=$out/tpm-state VM_EXTRA_DISK=$out/data1.tar
	vm_boot_dir "$b1"
	vm_extract "$b1"
	vm_say "boot 1: $VM_ACCEL_USED, $(cat "$b1/seconds") s"
	kup() { vm_section "$b1/serial.log" "KUP-$1"; }
	kup_show() { kup "$1" | sed "s/^/  boot1 $1: /"; }
	for s in SEAL-OUT KEEP-ERR HOOK-ERR PREDICT-ERR; do kup_show "$s"; done
	check "boot 1: the guest read the host's archive (tar exit $(kup TAR-RC))" test "$(kup TAR-RC)" = 0
	check "boot 1: mboot seal --pcrs 0-9 on /dev/tpmrm0 exited 0" test "$(kup SEAL-RC)" = 0
	kup KEEP >"$b1/keep.json"
	check "boot 1: mboot grub keep-booted exited 0 and kept both configs GRUB measured ($(jq -c '[.configs[] | {path, status}]' "$b1/keep.json" 2>/dev/null))" \
		test "$(kup KEEP-RC):$(jq -c '[.configs[] | "\(.path)=\(.status)"]' "$b1/keep.json" 2>/dev/null)" \
		= '0:["(hd0,gpt1)/EFI/BOOT/grub.cfg=kept","(hd0,gpt1)/boot/grub/grub.cfg=kept"]'
	check "boot 1: the postinst.d hook (zzz-mboot-reseal, MBOOT_RESEAL_STRICT=1) exited 0" test "$(kup HOOK-RC)" = 0
	check "boot 1: the hook says the secret was resealed to this boot, the next one and the fallback to kernel A from the GRUB menu" \
		grep -q -x -F "mboot-reseal: /etc/mboot/sealed.d/disk.sealed: resealed to this boot, the next one and a fallback to /boot/vmlinuz-$kver_a from the GRUB menu" <<<"$(kup HOOK-ERR)"
	kup PREDICT >"$out/predict.json"
	check "boot 1: mboot predict with the hook's arguments exited 0, PCRs 8 and 9 changed ($(jq -c '{changed, unpredictable, unmatched}' "$out/predict.json" 2>/dev/null))" \
		test "$(kup PREDICT-RC):$(jq -c .changed "$out/predict.json" 2>/dev/null)" = "0:[8,9]"
	kup PREDICT-FALLBACK >"$out/predict-fallback.json"
	kup_show PREDICT-FALLBACK-ERR
	check "boot 1: mboot predict --grub-entry-kernel /boot/vmlinuz-$kver_a with the hook's arguments exited 0, PCRs 8 and 9 changed ($(jq -c '{changed, unpredictable, unmatched}' "$out/predict-fallback.json" 2>/dev/null))" \
		test "$(kup PREDICT-FALLBACK-RC):$(jq -c .changed "$out/predict-fallback.json" 2>/dev/null)" = "0:[8,9]"
	kup SEALED-BEFORE | base64 -d >"$out/sealed-before.json" || bad "boot 1: the sealed file is not base64"
	kup SEALED | base64 -d >"$out/disk.sealed" || bad "boot 1: the resealed file is not base64"
	check "boot 1: the resealed file is a PolicyOR of 3 branches: today, the next default, the fallback (was $(jq -r .policy.kind "$out/sealed-before.json" 2>/dev/null))" \
		test "$(jq -r '"\(.policy.kind) \(.policy.branches | length)"' "$out/disk.sealed" 2>/dev/null)" = "or 3"

	cp "$out/disk.sealed" "$out/in2/disk.sealed"
	tar -cf "$out/data2.tar" -C "$out/in2" disk.sealed
	export VM_EXTRA_DISK=$out/data2.tar
	vm_boot_dir "$b2"
	vm_extract "$b2"
	vm_say "boot 2: $VM_ACCEL_USED, $(cat "$b2/seconds") s"
	# Boot 3: boot 2's disk (unchanged: a snapshot), TPM and archive; at GRUB's menu, once its
	# countdown runs: down to "Advanced options ...", enter; once the submenu lists kernel A
	# (second, below B): down, enter.
	mkdir -p "$b3"
	cp --sparse=always "$b2/disk.img" "$b3/disk.img"
	# shellcheck disable=SC2034 # read by lib.sh's vm_qemu
	VM_KEYS=("The highlighted entry will be executed automatically in" "down ret"
		"Debian GNU/Linux, with Linux $kver_a" "down ret")
	vm_boot_dir "$b3"
	# shellcheck disable=SC2034 # the next boots type nothing
	VM_KEYS=()
	vm_extract "$b3"
	unset VM_TPM_STATE VM_EXTRA_DISK
	vm_say "boot 3: $VM_ACCEL_USED, $(cat "$b3/seconds") s; keys: $(tr '\n' ' ' <"$b3/keys.log")"
	for b in boot1 boot2 boot3; do
		"$MBOOT" log replay --json "$out/$b/log.bin" >"$out/$b/replay.json" || bad "$b: mboot log replay exited $?"
		check_replay "$b" "$out/$b" "$out/$b/replay.json"
	done
	check_show boot2 "$out/boot2"
	# tpm2_eventlog's own replay of boot 2's log ("pcrs:" at its end) = the TPM's PCRs 0-9
	awk '/^pcrs:/ { on = 1; next } on && /^  [a-z0-9]+:$/ { b = $1; sub(/:$/, "", b); next }
		on && /^    [0-9]+ +: 0x/ { print b, $1, substr($3, 3) }' "$b2/tpm2_eventlog.yaml" |
		jq -R -n '[inputs | split(" ")] | reduce .[] as $p ({}; .[$p[0]][$p[1]] = ($p[2] | ascii_downcase))' >"$b2/tpm2-replay.json"
	check "boot 2: tpm2_eventlog's replay of the log = the TPM, PCRs 0-9 in every bank" \
		test "$(jq -c -S '[.[] | with_entries(select((.key | tonumber) <= 9))]' "$b2/tpm2-replay.json")" \
		= "$(jq -c -S '[.[] | with_entries(select((.key | tonumber) <= 9))]' "$b2/pcrs.json")"
	check "boot 2: the kernel ran from /boot/vmlinuz-$kver_b (GRUB's default entry of the new config)" \
		grep -q "^BOOT_IMAGE=/boot/vmlinuz-$kver_b " <<<"$(vm_section "$b2/serial.log" INFO)"
	moved=$(tpm_moved boot1 boot2)
	check "the update moved PCRs 8 and 9 in the TPM (and 10, IMA), nothing else: $moved" test "$moved" = "[8,9,10]"

	# The prediction boot 1 made equals boot 2's TPM, every PCR it predicts, every bank.
	check_replay prediction-for-boot2 "$b2" "$out/predict.json"
	check "boot 1's prediction covers PCRs 0-9 in all four banks (40 values)" \
		test "$(jq '[.banks[] | keys[] | select(tonumber <= 9)] | length' "$out/predict.json")" = 40
	# PCR 9 from outside: boot 2's config and file events extended from sha*sum of the files put
	# on the ESP, in the order the log has them; the prediction and the TPM must both be that.
	for alg in sha1 sha256 sha384 sha512; do
		digests=()
		while read -r path; do
			case $path in
			"(hd0,gpt1)/EFI/BOOT/grub.cfg") f=$b1/esp-grub.cfg ;;
			"(hd0,gpt1)/boot/grub/grub.cfg") f=$out/grub-next.cfg ;;
			"/boot/vmlinuz-$kver_b") f=$kernel ;;
			"/boot/initrd.img-$kver_b") f=$b1/initrd.img ;;
			*) f=/dev/null; bad "boot 2: PCR 9 event of an unexpected file: $path" ;;
			esac
			digests+=("$("${alg}sum" <"$f" | awk '{ print $1 }')")
		done < <(jq -r "$JQ_LIB"'.events[] | select(.pcr == 9) | text' "$b2/show.json")
		want=$(pcr_extend "$alg" "${digests[@]}")
		check "PCR 9 ($alg) = the ${#digests[@]} files' ${alg}sum extended: boot 2's TPM and boot 1's prediction" \
			test "$(jq -r --arg b "$alg" '.[$b]["9"]' "$b2/pcrs.json"):$(jq -r --arg b "$alg" '.banks[$b]["9"]' "$out/predict.json")" = "$want:$want"
	done
	# PCR 8 from outside: the kernel command line boot 2 measured is the new config's default
	# entry's linux line, and its sha256 digest is sha256sum of that string.
	want=$(sed -n 's/^[[:blank:]]*linuxefi\t\(.*[^ ]\) *$/\1/p' "$out/grub-next.cfg" | sed -n 1p)
	check "boot 2: PCR 8 kernel_cmdline is the new default entry's '$want'" \
		test "$(jq -r "$JQ_LIB"'[.events[] | select(.pcr == 8) | text | select(startswith("kernel_cmdline: ")) | ltrimstr("kernel_cmdline: ")] | join("|")' "$b2/show.json")" = "$want"
	check "boot 2: its sha256 digest = sha256sum of that string" \
		test "$(jq -r "$JQ_LIB"'[.events[] | select(.pcr == 8) | select(text | startswith("kernel_cmdline: ")) | .digests.sha256] | join(",")' "$b2/show.json")" \
		= "$(printf '%s' "$want" | sha256sum | awk '{ print $1 }')"

	# The secret, resealed in boot 1, unseals in boot 2.
	vm_section "$b2/serial.log" KUP-UNSEAL-OUT | sed 's/^/  boot2 unseal: /'
	check "boot 2: mboot unseal of the resealed file exited 0" test "$(vm_section "$b2/serial.log" KUP-UNSEAL-RC)" = 0
	check "boot 2: what it unsealed is the secret (sha256)" \
		test "$(vm_section "$b2/serial.log" KUP-UNSEAL-SHA256)" = "$(sha256sum <"$out/secret" | awk '{ print $1 }')"

	# Boot 3, the fallback picked from the menu: kernel A ran, from the entry under Advanced options,
	# and the TPM holds what boot 1 predicted for it, a PCR 8 neither boot 1's nor boot 2's.
	check_show boot3 "$out/boot3"
	check "boot 3: the kernel ran from /boot/vmlinuz-$kver_a (picked from GRUB's menu)" \
		grep -q "^BOOT_IMAGE=/boot/vmlinuz-$kver_a " <<<"$(vm_section "$b3/serial.log" INFO)"
	want=$(sed -n 's/^[[:blank:]]*linuxefi\t\(.*[^ ]\) *$/\1/p' "$out/grub-next.cfg" | grep -F "/boot/vmlinuz-$kver_a ")
	check "boot 3: PCR 8 kernel_cmdline is the new config's kernel-$kver_a entry '$want'" \
		test "$(jq -r "$JQ_LIB"'[.events[] | select(.pcr == 8) | text | select(startswith("kernel_cmdline: ")) | ltrimstr("kernel_cmdline: ")] | join("|")' "$b3/show.json")" = "$want"
	check "boot 3: its sha256 digest = sha256sum of that string" \
		test "$(jq -r "$JQ_LIB"'[.events[] | select(.pcr == 8) | select(text | startswith("kernel_cmdline: ")) | .digests.sha256] | join(",")' "$b3/show.json")" \
		= "$(printf '%s' "$want" | sha256sum | awk '{ print $1 }')"
	check_replay prediction-fallback-for-boot3 "$b3" "$out/predict-fallback.json"
	check "boot 1's fallback prediction covers PCRs 0-9 in all four banks (40 values)" \
		test "$(jq '[.banks[] | keys[] | select(tonumber <= 9)] | length' "$out/predict-fallback.json")" = 40
	for b in boot1 boot2; do
		check "boot 3's PCR 8 differs from $b's in every bank" \
			test "$(jq -n -c --slurpfile a "$b3/pcrs.json" --slurpfile b "$out/$b/pcrs.json" \
				'[$a[0] | to_entries[] | select(.value["8"] != $b[0][.key]["8"])] | length')" = 4
	done
	vm_section "$b3/serial.log" KUP-UNSEAL-OUT | sed 's/^/  boot3 unseal: /'
	check "boot 3: mboot unseal of the resealed file exited 0" test "$(vm_section "$b3/serial.log" KUP-UNSEAL-RC)" = 0
	check "boot 3: what it unsealed is the secret (sha256)" \
		test "$(vm_section "$b3/serial.log" KUP-UNSEAL-SHA256)" = "$(sha256sum <"$out/secret" | awk '{ print $1 }')"

	# The hook's old behaviour (it ran before update-grub, predicting with today's config): the
	# same kernel and initrd but no --grub-cfg. Its PCR 8 is not boot 2's, in any bank.
	rc=0
	"$MBOOT" predict --log "$b1/log.bin" --kernel "$kernel" --initrd "$b1/initrd.img" --json \
		>"$out/predict-old.json" 2>"$out/predict-old.err" || rc=$?
	check "a reseal with today's config (no --grub-cfg) predicts a PCR 8 boot 2 did not have, in every bank (exit $rc)" \
		test "$(jq -n -c --slurpfile p "$out/predict-old.json" --slurpfile t "$b2/pcrs.json" \
			'[$t[0] | to_entries[] | select(.value["8"] != $p[0].banks[.key]["8"])] | length')" = 4
	# The disks and the kernel's copies are rebuilt from the recorded inputs on demand.
	[ "${MB_VM_KEEP:-0}" = 1 ] || rm -rf "$b1/disk.img" "$b2/disk.img" "$b3/disk.img" "$b1/vars.fd" \
		"$b2/vars.fd" "$b3/vars.fd" \
		"$out/initrd.in" "$out/in1" "$out/data1.tar"
	;;
debian)
	# A real Debian 12 system (mmdebstrap) with mboot from its packages: tests/vm/debian.sh.
	# shellcheck source=debian.sh
	. "$(dirname "$0")/debian.sh"
	vm_debian_scenario
	;;
esac

if [ $fails -ne 0 ]; then
	printf 'vm %s: %d check(s) failed; results in %s\n' "$scenario" "$fails" "$out"
	exit 1
fi
printf 'vm %s: all checks passed (%s, results in %s)\n' "$scenario" "$VM_ACCEL_USED" "$out"
