#!/bin/bash
# TPM failures (exit 3 with a clear message), refusals of `log extend` (exit 1), usage
# and input errors (exit 2), --help (exit 0).
. "${MB_TPM_TESTS:-$(dirname "$0")}/swtpm-env.sh"
M=${MBOOT:?}
C=${MB_TESTDATA:?}/corpus
ARCH=$C/go-tpm-tools/arch-linux-workstation.bin
PROXY=${MB_TPM_TESTS:-$(dirname "$0")}/tpm-proxy.py

# expect_rc RC NAME -- command...: stdout+stderr in $WORK/out
expect_rc() {
	local want=$1 name=$2
	shift 3
	"$@" > "$WORK/out" 2>&1
	local rc=$?
	[ $rc -eq "$want" ] || fail "$name: exit $rc, expected $want: $(head -c 600 "$WORK/out")"
}

for verb in "pcrs" "verify" "log extend"; do
	# shellcheck disable=SC2086
	$M $verb --help > "$WORK/help" || fail "mboot $verb --help exited $?"
	grep -q "^Usage: mboot $verb" "$WORK/help" || fail "mboot $verb --help: no usage"
done
echo "ok: --help"

expect_rc 2 "unknown option" -- "$M" pcrs --bogus
[ "$(wc -l < "$WORK/out")" -eq 1 ] || fail "usage error is not one line"
expect_rc 2 "unknown bank" -- "$M" pcrs --bank md5
expect_rc 2 "bad PCR list" -- "$M" pcrs --pcr 24
expect_rc 2 "log extend without LOG" -- "$M" log extend
expect_rc 2 "verify: missing log" -- "$M" verify --log "$WORK/none" --pcrs "$C/go-tpm-tools/gdc-host.bin.pcrs.json"
grep -q "$WORK/none" "$WORK/out" || fail "missing file not named"
expect_rc 2 "verify: missing PCR file" -- "$M" verify --log "$ARCH" --pcrs "$WORK/none"
printf '{"banks": {"sha256": {"0": "00zz"}}}' > "$WORK/bad.json"
expect_rc 2 "verify: malformed PCR file" -- "$M" verify --log "$ARCH" --pcrs "$WORK/bad.json"
head -c 100 "$ARCH" > "$WORK/short.log"
expect_rc 2 "verify: truncated log" -- "$M" verify --log "$WORK/short.log" --pcrs "$C/go-tpm-tools/arch-linux-workstation.bin.pcrs.json"
grep -q "at byte" "$WORK/out" || fail "truncated log: no byte offset"
echo "ok: usage and input errors exit 2"

# No TPM there: exit 3, the TCTI named.
expect_rc 3 "no TPM" -- "$M" pcrs --tcti "swtpm:path=$SWTPM_DIR/nothing"
grep -q "no TPM answered at TCTI \"swtpm:path=$SWTPM_DIR/nothing\"" "$WORK/out" || fail "no TPM: message does not say so: $(cat "$WORK/out")"
grep -q -- "--tcti" "$WORK/out" && grep -q -- "--log LOG --pcrs FILE" "$WORK/out" || fail "no TPM: no hint how to point mboot at one"
expect_rc 3 "no TPM (verify)" -- "$M" verify --log "$ARCH" --tcti "device:$SWTPM_DIR/nothing"
echo "ok: unreachable TPM exits 3: $(head -n 1 "$WORK/out")"

# No firmware log on this machine (CI runs in a VM or container without one): verify and log
# show exit 2 and say how to read a recorded boot instead.
if [ ! -e /sys/kernel/security/tpm0/binary_bios_measurements ]; then
	for cmd in "verify" "log show"; do
		# shellcheck disable=SC2086 # two words for log show
		expect_rc 2 "$cmd with no firmware log" -- "$M" $cmd
		grep -q "hint: this machine exposes no firmware event log" "$WORK/out" && grep -q -- "--log LOG --pcrs FILE" "$WORK/out" ||
			fail "$cmd with no log: no hint: $(cat "$WORK/out")"
	done
	echo "ok: verify and log show without a firmware log: exit 2, --log and --pcrs named"
fi

# The TPM dies in the middle of a command: the 'cmd' TCTI talks to swtpm through a proxy
# that, on the Nth command, kills swtpm and leaves the command unanswered.
swtpm_start
expect_rc 3 "swtpm killed during PCR_Read" -- "$M" pcrs --tcti "cmd:python3 $PROXY $SWTPM_DIR/sock 2 $SWTPM_PID"
grep -q "lost the connection to the TPM" "$WORK/out" || fail "unclear message: $(cat "$WORK/out")"
grep -q "^sha" "$WORK/out" && fail "values printed although the read failed"
tpm2_pcrread sha256:0 >/dev/null 2>&1 && fail "swtpm still answers"
echo "ok: swtpm killed during TPM2_PCR_Read: exit 3, nothing printed: $(cat "$WORK/out")"

swtpm_start
swtpm_banks "sha1 sha256"
# Commands: GetCapability (TPM_RC_INITIALIZE), Startup, GetCapability, GetCapability +
# 6 PCR_Read (reset-state check of 2 banks x 24 PCRs), then one PCR_Extend per event:
# the 13th command is the 3rd extend.
expect_rc 3 "swtpm killed during log extend" -- "$M" log extend "$ARCH" --tcti "cmd:python3 $PROXY $SWTPM_DIR/sock 13 $SWTPM_PID"
grep -q "TPM2_PCR_Extend of PCR .* failed: lost the connection to the TPM" "$WORK/out" || fail "unclear message: $(cat "$WORK/out")"
grep -q "stopped after 2 events" "$WORK/out" || fail "does not say how far it got: $(cat "$WORK/out")"
grep -q "^extended" "$WORK/out" && fail "log extend claimed success"
echo "ok: swtpm killed during log extend: exit 3: $(tail -n 1 "$WORK/out")"

swtpm_start
tpm2_pcrextend "16:sha256=$(printf '%064x' 1)" >/dev/null
kill -STOP "$SWTPM_PID"
( sleep 1; kill -9 "$SWTPM_PID"; kill -CONT "$SWTPM_PID" ) 2>/dev/null &
expect_rc 3 "swtpm killed while mboot waits" -- "$M" verify --log "$ARCH"
wait
echo "ok: swtpm killed while verify waits for it: exit 3: $(cat "$WORK/out")"

# log extend refusals (exit 1, nothing extended).
swtpm_start   # all four banks, started at locality 0
expect_rc 1 "TPM banks the log lacks" -- "$M" log extend "$ARCH"
grep -q "sha384 bank" "$WORK/out" || fail "the missing bank is not named: $(cat "$WORK/out")"
[ "$(tpm2_pcrread sha256:0 | awk '/0 :/ { print $3 }')" = "0x$(printf '%064d' 0)" ] || fail "PCR 0 changed by a refused extend"
"$M" log extend --bank sha1 --bank sha256 "$ARCH" > "$WORK/out" || fail "log extend --bank exited $?"
"$M" verify --log "$ARCH" > "$WORK/out" && fail "verify accepted a TPM whose sha384/sha512 banks the log lacks"
grep -q "PCR  0 sha384  bank-not-in-log" "$WORK/out" || fail "sha384 not reported: $(cat "$WORK/out")"
"$M" verify --log "$ARCH" --bank sha1 --bank sha256 > "$WORK/out" || fail "verify --bank sha1 --bank sha256 exited $?"
grep -q "bank sha384 UNVERIFIED" "$WORK/out" || fail "sha384 not reported unverified"
echo "ok: TPM banks the log lacks: extend refuses, --bank limits, verify fails closed / reports unverified"

expect_rc 1 "PCRs not in reset state" -- "$M" log extend --bank sha1 --bank sha256 "$ARCH"
grep -q "not in reset state" "$WORK/out" || fail "no reset-state explanation: $(cat "$WORK/out")"
"$M" log extend --force --bank sha1 --bank sha256 "$ARCH" > "$WORK/out" 2>&1 || fail "--force exited $?"
echo "ok: a TPM that already measured a boot is refused unless --force"

swtpm_start
swtpm_banks "sha256"
tpm2_startup -c || fail "tpm2_startup"   # started at locality 0, not the log's 3
expect_rc 1 "locality" -- "$M" log extend "$C/go-tpm-tools/gdc-host.bin"
grep -q "locality 3" "$WORK/out" || fail "no locality explanation: $(cat "$WORK/out")"
swtpm_reset
"$M" log extend "$C/go-tpm-tools/gdc-host.bin" > "$WORK/out" 2>&1 || fail "log extend after reset: $(cat "$WORK/out")"
grep -q "at locality 3" "$WORK/out" || fail "TPM not started at locality 3"
want="0x$(printf '%062d' 0)03"
[ "$(tpm2_pcrread sha256:0 | awk '/0 :/ { print $3 }')" != "$want" ] || fail "PCR 0 still at its start value"
"$M" verify --log "$C/go-tpm-tools/gdc-host.bin" > "$WORK/out" || fail "gdc-host does not verify: $(cat "$WORK/out")"
echo "ok: a StartupLocality 3 log needs a TPM started at locality 3: refused, then done after a reset"
