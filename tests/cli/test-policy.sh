#!/bin/bash
# `mboot policy` as a user runs it: generate from real logs, lint, hostile files (exit 2 with
# the line and field), and generated values equal to the real TPM's (from the corpus, via jq).
set -u
: "${MBOOT:?}" "${MB_TESTDATA:?}" "${MB_SOURCE_ROOT:?}"
C=$MB_TESTDATA/corpus
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }

"$MBOOT" policy --help | grep -q "Usage: mboot policy" && ok "policy --help" || bad "policy --help"
"$MBOOT" policy generate --help | grep -q "from-log" && ok "generate --help" || bad "generate --help"
# Both forms of generate (from a log, from release artifacts) in the overview: every option of
# generate's usage lines appears in `policy --help` too.
missing=$(for o in $("$MBOOT" policy generate --help | sed -n '/^ *\(Usage: \)\{0,1\}mboot policy generate\|^  *\[/p' |
	grep -oE -- '--[a-z-]+' | sort -u); do "$MBOOT" policy --help | grep -q -e "$o\b" || echo "$o"; done)
[ -z "$missing" ] && ok "policy --help shows both forms of generate" || bad "policy --help lacks: $missing"
"$MBOOT" policy generate >/dev/null 2>&1; [ $? = 2 ] && ok "generate without a log: exit 2" || bad "generate without --from-log"
"$MBOOT" policy lint "$MB_SOURCE_ROOT/docs/policy-example.json" >/dev/null && ok "the documented example loads" || bad "example"

# Generated from real machines: the firmware PCR values are the ones their TPMs held.
for t in "$C"/go-tpm-tools/*.pcrs.json; do
	log=${t%.pcrs.json}
	"$MBOOT" policy generate --from-log "$log" -o "$tmp/p.json" --force || { bad "generate $log"; continue; }
	"$MBOOT" policy lint "$tmp/p.json" >/dev/null || { bad "lint of generated $(basename "$log")"; continue; }
	diff=$(jq -n --slurpfile p "$tmp/p.json" --slurpfile t "$t" '
		[$p[0].pcrs | to_entries[] | select(.value.values) | .key as $k | .value.values | to_entries[]
		 | select(($t[0].banks[.key] // {})[$k] != null) | select($t[0].banks[.key][$k] != .value) | "\(.key)/\($k)"]')
	n=$(jq -n --slurpfile p "$tmp/p.json" --slurpfile t "$t" '
		[$p[0].pcrs | to_entries[] | select(.value.values) | .key as $k | .value.values | to_entries[]
		 | select(($t[0].banks[.key] // {})[$k] != null)] | length')
	[ "$diff" = "[]" ] && [ "$n" -gt 0 ] && ok "generate $(basename "$log"): $n firmware values equal the real TPM" ||
		bad "generate $(basename "$log"): $diff"
done

# GRUB's text events become exact, anchored text rules.
"$MBOOT" policy generate --from-log "$C/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9" -o "$tmp/g.json"
jq -e '.pcrs["8"].rules | any(.text | startswith("kernel_cmdline: /boot/vmlinuz-5\\.7\\.0-rc2\\+\\.signed root=UUID="))' "$tmp/g.json" >/dev/null &&
	ok "kernel_cmdline becomes a literal text rule" || bad "kernel_cmdline rule"
jq -e '.pcrs["9"].rules | all(has("digests"))' "$tmp/g.json" >/dev/null && ok "PCR 9 files become digest rules" || bad "PCR 9 rules"

# From release artifacts with a known-good GRUB log: the new kernel and initrd as sha256sum
# digests them; the log's old kernel and initrd (the files its linux/initrd commands loaded)
# and grub.cfg are replaced, GRUB's other files are carried over.
log=$C/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9
cp /usr/lib/shim/mmx64.efi.signed "$tmp/vmlinuz-new" # a PE: shim measures the kernel into PCR 4
head -c 3000 /dev/urandom >"$tmp/initrd-new"
if "$MBOOT" policy generate --kernel "$tmp/vmlinuz-new" --initrd "$tmp/initrd-new" --cmdline 'root=/dev/sda1 ro' \
	--from-log "$log" -o "$tmp/a.json"; then
	k=$(sha256sum "$tmp/vmlinuz-new" | cut -d' ' -f1)
	i=$(sha256sum "$tmp/initrd-new" | cut -d' ' -f1)
	jq -e --arg k "$k" --arg i "$i" '.pcrs["9"].rules | (map(select(.type == "EV_IPL") | .digests[0].sha256) | index($k) != null and index($i) != null)
		and (map(select(.type == "EV_EVENT_TAG") | .digests[0].sha256) == [$i])' "$tmp/a.json" >/dev/null &&
		ok "artifacts: PCR 9 holds the new kernel and initrd digests (sha256sum)" || bad "artifacts: new kernel/initrd digests"
	old=$(jq -r '[.pcrs["9"].rules[].digests[0].description | select(test("vmlinuz-5|initrd.img-5|grub.cfg"))] | join(", ")' "$tmp/a.json")
	carried=$(jq '[.pcrs["9"].rules[].digests[0].description | select(test("/boot/grub/.*\\.lst$"))] | length' "$tmp/a.json")
	[ -z "$old" ] && [ "$carried" -ge 4 ] && ok "artifacts: the log's old kernel, initrd and grub.cfg replaced, $carried GRUB .lst files carried" ||
		bad "artifacts: carried over '$old', $carried .lst files"
	jq -e '.pcrs["8"].rules | any(.text == "kernel_cmdline: [^ ]+ root=/dev/sda1 ro")' "$tmp/a.json" >/dev/null &&
		ok "artifacts: the kernel_cmdline rule" || bad "artifacts: kernel_cmdline rule"
else
	bad "policy generate --kernel --initrd --cmdline --from-log"
fi

# Hostile policies: exit 2, and the message says where.
hostile_file() { # hostile_file NAME REGEX FILE
	"$MBOOT" policy lint "$3" >/dev/null 2>"$tmp/err"
	local rc=$?
	if [ $rc = 2 ] && grep -qE "$2" "$tmp/err"; then ok "hostile $1"; else bad "hostile $1: exit $rc: $(cat "$tmp/err")"; fi
}
hostile() { # hostile NAME REGEX CONTENT
	printf '%s' "$3" >"$tmp/h.json"
	hostile_file "$1" "$2" "$tmp/h.json"
}
hostile "bad json" "line 3, column 10: unexpected token near '}'" $'{\n"version": 1,\n"pcrs": [}'
hostile "bad regex" "line 4: pcrs.8.rules\[0\]: regular expression does not compile" $'{"version": 1, "pcrs": {"8": {"rules": [\n{"type": "EV_IPL",\n"required": true,\n"text": "grub_cmd: (linux"}]}}}'
hostile "catastrophic regex" "catastrophically" '{"version": 1, "pcrs": {"8": {"rules": [{"type": "EV_IPL", "text": "(a*)*b"}]}}}'
hostile "unknown key" "unknown key \"requierd\"" '{"version": 1, "pcrs": {"8": {"rules": [{"type": "EV_IPL", "text": "a", "requierd": true}]}}}'
hostile "empty" "line 1, column 1: unexpected token near end of file" ''
hostile "binary" "line 1, column 1: invalid token near 'x'" "$(printf 'x\001\002')"
# Strict JSON. A trailing comma is seen at the brace after it.
hostile "trailing comma" "line 3, column 1: string or '}' expected near '}'" $'{"version": 1,\n "pcrs": {},\n}'
hostile "text after the policy" "line 2, column 3: end of file expected near 'xyz'" $'{"version": 1, "pcrs": {}}\nxyz'
hostile "single quotes" "line 1, column 16: string or '}' expected near '''" "{\"version\": 1, 'pcrs': {}}"
for cut in 100 333 600 $(($(wc -c <"$MB_SOURCE_ROOT/docs/policy-example.json") - 2)); do
	head -c $cut "$MB_SOURCE_ROOT/docs/policy-example.json" >"$tmp/cut.json"
	line=$(($(wc -l <"$tmp/cut.json") + 1)) # the end of the cut text is on this line
	hostile_file "cut at byte $cut" "line $line, column [0-9]+: (premature end of input|.* near end of file)" "$tmp/cut.json"
done
# A key twice: a lax reader keeps the last one, so a lax rule would hide behind the strict one.
strict='{"type": "EV_IPL", "text": "grub_cmd: linux /vmlinuz ro"}'
hostile "duplicate PCR" 'line 3, column 3: duplicate object key near ."8".' \
	$'{"version": 1, "pcrs": {\n  "8": {"rules": ['"$strict"$']},\n  "8": {"rules": [{"type": "EV_IPL", "text": ".*"}]}}}'
hostile "duplicate PCR, escaped" 'line 3, column 3: duplicate object key near ."\\u0038".' \
	$'{"version": 1, "pcrs": {\n  "8": {"rules": ['"$strict"$']},\n  "\\u0038": {"rules": [{"type": "EV_IPL", "text": ".*"}]}}}'
hostile "duplicate rule field" 'line 2, column 59: duplicate object key near ."text".' \
	$'{"version": 1, "pcrs": {"8": {"rules": [\n{"type": "EV_IPL", "text": "grub_cmd: linux /vmlinuz ro", "text": ".*"}]}}}'
head -c 70000000 /dev/zero | tr '\0' ' ' >"$tmp/huge.json"
"$MBOOT" policy lint "$tmp/huge.json" >/dev/null 2>"$tmp/err"; [ $? = 2 ] && grep -q "larger than" "$tmp/err" && ok "hostile 70 MB (over 64 MiB)" || bad "hostile 70 MB (over 64 MiB): $(cat "$tmp/err")"
python3 -c 'import json; print(json.dumps({"version": 1, "pcrs": {"4": {"rules": [{"type": "EV_IPL", "digests": [{"sha256": "00"*32}]*70000}]}}}))' >"$tmp/many.json"
"$MBOOT" policy lint "$tmp/many.json" >/dev/null 2>"$tmp/err"; [ $? = 2 ] && grep -q "1 to 65536" "$tmp/err" && ok "hostile 70,000 digests" || bad "hostile many digests: $(cat "$tmp/err")"
# The load budget (docs/policy.md, "Limits"): 150 patterns that each pass the backtracking probe
# but spend most of its match limit (28 s to load before the budget) are refused in a fraction
# of a second, the rule named; a real machine's generated policy with 3,000 patterns as a person
# writes them added still loads.
python3 -c 'import json; print(json.dumps({"version": 1, "pcrs": {"8": {"rules": [{"type": "EV_IPL",
	"description": "hostile rule %d" % i,
	"text": "[^!]{0,300}[^!]{0,300}(?:=|abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-/.,:%d)" % i}
	for i in range(150)]}}}))' >"$tmp/costly.json"
start=$(date +%s%N)
timeout 60 "$MBOOT" policy lint "$tmp/costly.json" >/dev/null 2>"$tmp/err"; rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
[ $rc = 2 ] && grep -q 'pcrs.8.rules\[1\]: rule "hostile rule 1": regular expression cannot be judged within the load budget' "$tmp/err" &&
	[ $ms -lt 5000 ] && ok "hostile 150 costly patterns: exit 2 in $ms ms, the rule named" ||
	bad "hostile costly patterns: exit $rc in $ms ms: $(cat "$tmp/err")"
"$MBOOT" policy generate --from-log "$C/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9" -o "$tmp/gen.json" --force &&
jq '.pcrs["8"].rules += [range(3000) | {type: "EV_IPL", text: "grub_cmd: linux /boot/vmlinuz-[0-9.]+-rc\(.)[0-9]+\\+(\\.signed)? root=UUID=[0-9a-f-]{36} ro quiet splash( vt\\.handoff=[0-9]+)?"}]' \
	"$tmp/gen.json" >"$tmp/large.json" && n=$(jq '[.pcrs[].rules // [] | .[] | select(.text)] | length' "$tmp/large.json") &&
	"$MBOOT" policy lint "$tmp/large.json" >/dev/null 2>"$tmp/err" && ok "a generated policy with $n text rules loads" ||
	bad "large realistic policy: $(cat "$tmp/err")"

# Outputs a user keeps: an existing -o is kept byte for byte (exit 2) unless --force, which
# replaces it; a failed run leaves no temp file beside it.
log=$C/go-tpm-tools/$(basename "$(ls "$C"/go-tpm-tools/*.pcrs.json | head -n 1)" .pcrs.json)
printf '{"hand": "edited"}\n' > "$tmp/mine.json"
cp "$tmp/mine.json" "$tmp/mine.orig"
"$MBOOT" policy generate --from-log "$log" -o "$tmp/mine.json" 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "already exists; not replaced (give --force" "$tmp/err" && cmp -s "$tmp/mine.json" "$tmp/mine.orig" &&
	ok "generate -o an existing file: exit 2, unchanged" || bad "generate -o existing: exit $rc, $(cat "$tmp/err")"
"$MBOOT" policy generate --from-log "$log" -o "$tmp/mine.json" --force && "$MBOOT" policy generate --from-log "$log" |
	cmp -s - "$tmp/mine.json" && ok "generate --force replaces it with what stdout gets" || bad "generate --force"
openssl ecparam -name prime256v1 -genkey -noout -out "$tmp/k.pem" 2>/dev/null
printf '{"banks": {"sha256": {"7": "%064x"}}}\n' 7 > "$tmp/v.json"
cp "$tmp/mine.orig" "$tmp/sig"
"$MBOOT" policy sign --key "$tmp/k.pem" --pcrs 7 --values "$tmp/v.json" -o "$tmp/sig" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "already exists; not replaced (give --force" "$tmp/err" && cmp -s "$tmp/sig" "$tmp/mine.orig" &&
	ok "sign -o an existing file: exit 2, unchanged" || bad "sign -o existing: exit $rc, $(cat "$tmp/err")"
"$MBOOT" policy sign --key "$tmp/k.pem" --pcrs 7 --values "$tmp/v.json" -o "$tmp/sig" --force >/dev/null &&
	grep -q "$(printf '%064x' 7)" "$tmp/sig" && ok "sign --force replaces it (the signed value is in it)" || bad "sign --force"
"$MBOOT" policy sign --key "$tmp/none.pem" --pcrs 7 --values "$tmp/v.json" -o "$tmp/sig2" >/dev/null 2>&1
[ $? = 2 ] && [ -z "$(find "$tmp" -name '*.tmp*')" ] && [ ! -e "$tmp/sig2" ] && ok "a failed sign leaves no file" || bad "failed sign left files"

# systemd-boot's command line (PCR 12, UTF-16 + NUL, hashed as logged): generate writes a text
# rule with the text iconv reads from the data, and verify (PCRs replayed by tpm2_eventlog)
# judges it; another command line breaks the rule; an edited text is not judged as proven.
L=$C/tpm2-tools/event-sd-boot-fedora37.bin
tpm2_eventlog "$L" 2>/dev/null | sed -n '/^pcrs:/,$p' | sed 1d >"$tmp/sd-pcrs.txt"
"$MBOOT" log show --json "$L" >"$tmp/sd.json"
want=$(jq -r '.events[23].data' "$tmp/sd.json" | xxd -r -p | iconv -f UTF-16LE -t UTF-8 | tr -d '\0')
"$MBOOT" policy generate --from-log "$L" -o "$tmp/sd-pol.json" --force
if [ "$(jq -r '.pcrs["12"].rules | map(.text) | join("|")' "$tmp/sd-pol.json")" = "$want" ] &&
	"$MBOOT" verify --log "$L" --no-userspace-log --pcrs "$tmp/sd-pcrs.txt" --policy "$tmp/sd-pol.json" >/dev/null; then
	ok "systemd-boot command line: a text rule ('$want'), and the boot meets it"
else
	bad "systemd-boot command line rule: $(jq -c '.pcrs["12"]' "$tmp/sd-pol.json")"
fi
jq --arg t "${want/efi=debug/init=\/bin\/sh}" '.pcrs["12"].rules[0].text = $t' "$tmp/sd-pol.json" >"$tmp/sd-other.json"
"$MBOOT" verify --log "$L" --no-userspace-log --pcrs "$tmp/sd-pcrs.txt" --policy "$tmp/sd-other.json" --json >"$tmp/v.json"
rc=$?
[ $rc = 1 ] && jq -e '[.policy.violations[] | select(.event)] | length == 2 and all(.pcr == 12 and .reason == "no rule of the policy allows it")' "$tmp/v.json" >/dev/null &&
	ok "another command line: both PCR 12 events violate, 'no rule allows it'" || bad "other command line: rc $rc $(jq -c .policy "$tmp/v.json")"
python3 - "$L" "$tmp/sd-edited.bin" <<'PY'
import sys
b = open(sys.argv[1], 'rb').read()
old = 'console=ttyS0 console=tty0'.encode('utf-16-le')
open(sys.argv[2], 'wb').write(b.replace(old, 'consolE=ttyS0 console=tty0'.encode('utf-16-le')))
PY
"$MBOOT" verify --log "$tmp/sd-edited.bin" --no-userspace-log --pcrs "$tmp/sd-pcrs.txt" --policy "$tmp/sd-pol.json" --json >"$tmp/v.json"
rc=$?
[ $rc = 1 ] && jq -e '[.policy.violations[] | select(.event)] | length == 2 and all(.reason | startswith("its digest covers something not in the log, so its text proves nothing; "))' "$tmp/v.json" >/dev/null &&
	ok "an edited command line: its text proves nothing, violations say so" || bad "edited command line: rc $rc $(jq -c .policy "$tmp/v.json")"

echo "policy cli: $fails failed"
[ "$fails" = 0 ]
