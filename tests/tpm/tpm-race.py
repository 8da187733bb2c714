#!/usr/bin/env python3
# A PCR that changes at the worst moment, for the tpm suite. Used as tpm2-tss's "cmd"
# TCTI (raw TPM commands on stdin, responses on stdout): forwards every command to a
# swtpm's raw command socket, and appends "CC RC" (hex) to TRACE for each one.
#
#   tpm-race.py SOCK TRACE [PCR DIGEST [N]]
#   tpm-race.py --no-increment SOCK
#
# With PCR and DIGEST (64 hex digits), before forwarding each of the first N (default 1)
# TPM2_Unseal commands it sends a TPM2_PCR_Extend of that PCR's sha256 bank with DIGEST
# to the same TPM, itself, and logs it as "CC RC race": between the client's
# TPM2_PolicyPCR and its TPM2_Unseal, as a concurrent measurement would.
# --no-increment asks the TPM which PCRs do not increment its pcrUpdateCounter when
# extended (TPM2_GetCapability TPM_CAP_PCR_PROPERTIES, TPM_PT_PCR_NO_INCREMENT) and
# prints their numbers, one line, space-separated.
import struct, socket, sys

TPM_ST_SESSIONS = 0x8002
TPM_CC_UNSEAL = 0x0000015E
TPM_CC_PCR_EXTEND = 0x00000182
TPM_RS_PW = 0x40000009
TPM_ALG_SHA256 = 0x000B

TPM_ST_NO_SESSIONS = 0x8001
TPM_CC_GET_CAPABILITY = 0x0000017A
TPM_CAP_PCR_PROPERTIES = 0x00000007
TPM_PT_PCR_NO_INCREMENT = 0x00000011


def no_increment(path):
    # Part 3 §30.2 TPM2_GetCapability; Part 2 §10.10.2 TPMS_CAPABILITY_DATA holding a
    # TPML_TAGGED_PCR_PROPERTY (§10.9.8) of TPMS_TAGGED_PCR_SELECT (§10.8.3):
    # tag, sizeofSelect, pcrSelect[sizeofSelect] (PCR n is bit n%8 of byte n/8).
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.connect(path)
    params = struct.pack('>III', TPM_CAP_PCR_PROPERTIES, TPM_PT_PCR_NO_INCREMENT, 1)
    c.sendall(struct.pack('>HII', TPM_ST_NO_SESSIONS, 10 + len(params), TPM_CC_GET_CAPABILITY) + params)
    r = b''
    while len(r) < 10 or len(r) < struct.unpack('>I', r[2:6])[0]:
        chunk = c.recv(4096)
        if not chunk:
            sys.exit('tpm-race.py: short response')
        r += chunk
    rc = struct.unpack('>I', r[6:10])[0]
    if rc:
        sys.exit('tpm-race.py: TPM2_GetCapability: 0x%08x' % rc)
    cap, count = struct.unpack('>II', r[11:19])
    pcrs = []
    off = 19
    for _ in range(count):
        tag, n = struct.unpack('>IB', r[off:off + 5])
        sel = r[off + 5:off + 5 + n]
        off += 5 + n
        if cap == TPM_CAP_PCR_PROPERTIES and tag == TPM_PT_PCR_NO_INCREMENT:
            pcrs += [i for i in range(8 * n) if sel[i // 8] & (1 << (i % 8))]
    print(' '.join(str(i) for i in pcrs))


if sys.argv[1] == '--no-increment':
    no_increment(sys.argv[2])
    sys.exit(0)

sock_path, trace_path = sys.argv[1], sys.argv[2]
pcr = int(sys.argv[3]) if len(sys.argv) > 3 else None
digest = bytes.fromhex(sys.argv[4]) if len(sys.argv) > 4 else b''
races = int(sys.argv[5]) if len(sys.argv) > 5 else 1
if pcr is not None and len(digest) != 32:
    sys.exit('tpm-race.py: DIGEST must be 32 bytes of hex')

s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sock_path)
inp, out = sys.stdin.buffer, sys.stdout.buffer
trace = open(trace_path, 'a')


def read_exact(f, n):
    buf = b''
    while len(buf) < n:
        chunk = f(n - len(buf))
        if not chunk:
            sys.exit(0)
        buf += chunk
    return buf


def transact(cmd):
    s.sendall(cmd)
    rh = read_exact(s.recv, 10)
    rsize = struct.unpack('>I', rh[2:6])[0]
    return rh + read_exact(s.recv, rsize - 10)


def pcr_extend_command(index, dig):
    # TPM 2.0 Part 3 §22.2 TPM2_PCR_Extend: header, pcrHandle, authorization area with
    # one TPMS_AUTH_COMMAND (Part 2 §10.13.2: the password session TPM_RS_PW, empty
    # nonce, attributes 0, empty password, as PCR 0-23 have an empty authValue), then
    # TPML_DIGEST_VALUES (count 1, TPMT_HA sha256 || digest).
    auth = struct.pack('>IHBH', TPM_RS_PW, 0, 0, 0)
    params = struct.pack('>IH', 1, TPM_ALG_SHA256) + dig
    body = struct.pack('>I', index) + struct.pack('>I', len(auth)) + auth + params
    return struct.pack('>HII', TPM_ST_SESSIONS, 10 + len(body), TPM_CC_PCR_EXTEND) + body


def log(cc, resp, note=''):
    rc = struct.unpack('>I', resp[6:10])[0]
    trace.write('%08x %08x%s\n' % (cc, rc, note))
    trace.flush()


while True:
    hdr = read_exact(inp.read, 10)
    size = struct.unpack('>I', hdr[2:6])[0]
    body = read_exact(inp.read, size - 10)
    cc = struct.unpack('>I', hdr[6:10])[0]
    if cc == TPM_CC_UNSEAL and pcr is not None and races > 0:
        races -= 1
        log(TPM_CC_PCR_EXTEND, transact(pcr_extend_command(pcr, digest)), ' race')
    resp = transact(hdr + body)
    log(cc, resp)
    out.write(resp)
    out.flush()
