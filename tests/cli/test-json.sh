#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# One JSON style for every --json (docs/json.md): each command that runs without a TPM is run
# with --json and with --compact; both must parse (Python's json module) to the same document,
# --json pretty-printed (several lines, two spaces a level, '/' not escaped), --compact on one
# line. Then the shared names: expected/actual per PCR (never "now"), closest_rules a list of
# strings, and every --help that offers --json offers --compact. (unseal, pcrs, measure and
# attest verify need a TPM: tests/tpm/tpm-seal.sh, tpm-attest-verify.sh.)
set -u
: "${MBOOT:?}" "${MB_TESTDATA:?}"
M=$MBOOT
LOG=$MB_TESTDATA/corpus/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }

# run NAME RC ARGS...: mboot ARGS --json and ARGS --compact, both exiting RC, into W/NAME.{pretty,compact}.
run() {
	local name=$1 want=$2 rc
	shift 2
	"$M" "$@" --json >"$W/$name.pretty" 2>"$W/$name.err"; rc=$?
	[ $rc = "$want" ] || { bad "$name --json: exit $rc, expected $want: $(head -c 300 "$W/$name.err")"; return; }
	"$M" "$@" --compact >"$W/$name.compact" 2>"$W/$name.err"; rc=$?
	[ $rc = "$want" ] || { bad "$name --compact: exit $rc, expected $want: $(head -c 300 "$W/$name.err")"; return; }
	echo "$name" >>"$W/names"
}

mkdir -p "$W/tree/bin"
echo '#!/bin/sh' >"$W/tree/bin/sh"
chmod 755 "$W/tree" "$W/tree/bin/sh"
printf 'kernel /a/b\n' >"$W/kernel"

run hash 0 hash "$LOG"
run log-show 0 log show "$LOG" --pcr 8,9
run log-replay 0 log replay "$LOG"
"$M" log replay "$LOG" --json >"$W/pcrs.json" || bad "log replay"
# (exit 1: this boot measured its kernel into PCR 4 too, which --kernel cannot predict)
"$M" predict --log "$LOG" --kernel "$W/kernel" --write-log "$W/next.bin" >/dev/null 2>&1; [ $? = 1 ] || bad "predict --write-log"
"$M" log replay "$W/next.bin" --json >"$W/next.pcrs.json" || bad "log replay of the predicted log"
run log-diff 1 log diff "$LOG" "$W/next.bin"
run predict 1 predict --log "$LOG" --kernel "$W/kernel"
run verify 0 verify --log "$LOG" --pcrs "$W/pcrs.json" --no-userspace-log
# A policy from today's log judges the next boot's new kernel: a violation with closest_rules.
"$M" policy generate --from-log "$LOG" --pcrs 8,9 -o "$W/policy.json" || bad "policy generate"
run verify-policy 1 verify --log "$W/next.bin" --pcrs "$W/next.pcrs.json" --no-userspace-log --policy "$W/policy.json"
run verify-mismatch 1 verify --log "$LOG" --pcrs "$W/next.pcrs.json" --no-userspace-log
run initramfs-pack 0 initramfs pack "$W/tree" -o "$W/initrd.img" --force --policy-rule
run initramfs-list 0 initramfs list "$W/initrd.img"
run initramfs-verify 0 initramfs verify "$W/initrd.img" "$W/tree"

python3 - "$W" <<'PY' || fails=$((fails + 1))
import json, sys

w = sys.argv[1]
failed = False

def bad(msg):
    global failed
    failed = True
    print("FAIL " + msg)

def keys(doc, path="$"):
    """Every (path, key, value) of every object in doc."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield path, k, v
            yield from keys(v, path + "." + k)
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from keys(v, "%s[%d]" % (path, i))

docs = {}
for name in open(w + "/names").read().split():
    pretty = open("%s/%s.pretty" % (w, name), encoding="utf-8").read()
    compact = open("%s/%s.compact" % (w, name), encoding="utf-8").read()
    try:
        p, c = json.loads(pretty), json.loads(compact)
    except ValueError as e:
        bad("%s: does not parse: %s" % (name, e))
        continue
    lines = pretty.split("\n")
    if p != c:
        bad("%s: --json and --compact are different documents" % name)
    if not compact.endswith("\n") or compact.count("\n") != 1:
        bad("%s: --compact is %d lines" % (name, compact.count("\n")))
    if len(lines) < 3 or lines[-1] != "" or not lines[1].startswith('  "'):
        bad("%s: --json is not pretty-printed: %r" % (name, pretty[:80]))
    elif any((len(l) - len(l.lstrip(" "))) % 2 for l in lines):
        bad("%s: --json is not indented by two spaces a level" % name)
    if "\\/" in pretty or "\\/" in compact:
        bad("%s: '/' escaped" % name)
    docs[name] = p
    print("ok   %s: --json pretty (%d lines), --compact one line, the same document" % (name, len(lines) - 1))

for name, doc in docs.items():
    for path, k, v in keys(doc):
        if k == "now":
            bad("%s: %s.now: the value a PCR holds is 'actual' (docs/json.md)" % (name, path))
        if k == "closest_rules" and not (isinstance(v, list) and v and all(isinstance(r, str) for r in v)):
            bad("%s: %s.closest_rules is not a list of strings: %r" % (name, path, v))

for name in ("verify", "verify-mismatch"):
    for e in docs.get(name, {}).get("pcrs", []):
        if e["verdict"] in ("verified", "mismatch") and not ("expected" in e and "actual" in e):
            bad("%s: PCR %s has no expected/actual: %r" % (name, e["pcr"], e))
mism = [e for e in docs.get("verify-mismatch", {}).get("pcrs", []) if e["verdict"] == "mismatch"]
if not mism or any(e["expected"] == e["actual"] for e in mism):
    bad("verify-mismatch: no mismatch with expected != actual")
else:
    print("ok   verify: every verified or mismatched PCR has expected and actual")
viol = docs.get("verify-policy", {}).get("policy", {}).get("violations", [])
rules = [r for v in viol for r in v.get("closest_rules", [])]
if not rules or any("; " in r for r in rules):
    bad("verify --policy: closest_rules %r" % [v.get("closest_rules") for v in viol])
else:
    print("ok   verify --policy: closest_rules are lists of rule names (%d in all)" % len(rules))
sys.exit(1 if failed else 0)
PY

# The pretty log show is the golden compact one, re-indented: the same document as jq reads it.
"$M" log show "$LOG" --json | jq -c . >"$W/a"
"$M" log show "$LOG" --compact | jq -c . >"$W/b"
if [ -s "$W/a" ] && cmp -s "$W/a" "$W/b"; then
	ok "log show: jq reads --json and --compact as one document"
else
	bad "log show: jq reads two documents"
fi

# Every command and sub-command whose --help offers --json offers --compact.
for c in log/show log/replay log/diff pcrs measure verify predict initramfs/pack initramfs/list initramfs/verify \
	unseal hash attest/verify attest/push fleet/list; do
	# shellcheck disable=SC2046 # the words of c are the command
	h=$("$M" $(echo "$c" | tr / ' ') --help 2>&1)
	if grep -q -- '--json' <<<"$h" && ! grep -q -- '--compact' <<<"$h"; then
		bad "mboot ${c/\// } --help: --json without --compact"
	fi
done
ok "every --help that offers --json offers --compact"

echo "json cli: $fails failed"
[ "$fails" = 0 ]
