#!/bin/bash
# The fleet in process (test-fleet.c) against a real machine: a manufactured swtpm (EK
# certificates from swtpm_localca) holding a real GRUB boot (ima-evm-utils' sample), the
# policy generated from that boot, and the same boot with init=/bin/sh added to the kernel's
# command line (what the C test extends into PCR 8 for the untrusted case).
. "${MB_TPM_TESTS:?}/swtpm-env.sh"
M=${MBOOT:?}
F=${MB_FORGE:?}
T=${MB_TEST_FLEET:?}
C=${MB_TESTDATA:?}/corpus
LOG=$C/ima-evm-utils/sample-binary_bios_measurements-pcrs-8-9
KERNEL=/boot/vmlinuz-5.7.0-rc2+.signed
ARGS="root=UUID=119f1a79-c391-4e37-905d-3a503284cadb ro quiet splash ima-policy=tcb"
cd "$WORK" || exit 1

swtpm_start_ek_cert sha1,sha256
swtpm_banks "sha1 sha256" # reset: the boot below starts the TPM at its own locality
"$M" log extend --tcti "$TCTI" "$LOG" >extend.out 2>&1 || fail "log extend: $(cat extend.out)"
mkdir -p ca && cp "$SWTPM_EK_CA" "$SWTPM_EK_ISSUER" ca/
"$M" policy generate --from-log "$LOG" -o policy.json || fail "policy generate"
"$F" "$LOG" evil.bin append 8 grub_cmd "linux $KERNEL $ARGS init=/bin/sh" || fail "mb-forge"

MB_FLEET_TCTI=$TCTI MB_FLEET_EK_CA=$WORK/ca MB_FLEET_LOG=$LOG MB_FLEET_EVIL_LOG=$WORK/evil.bin \
	MB_FLEET_POLICY=$WORK/policy.json MB_FLEET_DIR=$WORK "$T"
