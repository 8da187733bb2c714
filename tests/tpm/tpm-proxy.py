#!/usr/bin/env python3
# A TPM that dies in the middle of a command, for the tpm suite. Used as tpm2-tss's
# "cmd" TCTI (raw TPM commands on stdin, responses on stdout): forwards commands to a
# swtpm's raw command socket, and on command number DIE (from 1) reads it, kills the
# swtpm (SIGKILL) and exits without answering. DIE 0: never. With a 4th argument, the
# command code of every command is appended to that file (one hex number a line).
import os, signal, socket, struct, sys

sock_path, die_at, pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
trace = open(sys.argv[4], 'a') if len(sys.argv) > 4 else None
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sock_path)
inp, out = sys.stdin.buffer, sys.stdout.buffer

def read_exact(f, n):
    buf = b''
    while len(buf) < n:
        chunk = f(n - len(buf))
        if not chunk:
            sys.exit(0)
        buf += chunk
    return buf

count = 0
while True:
    hdr = read_exact(inp.read, 10)
    size = struct.unpack('>I', hdr[2:6])[0]
    body = read_exact(inp.read, size - 10)
    count += 1
    if trace:
        trace.write('%08x\n' % struct.unpack('>I', hdr[6:10])[0])
        trace.flush()
    if count == die_at:
        os.kill(pid, signal.SIGKILL)
        sys.exit(0)
    s.sendall(hdr + body)
    rh = read_exact(s.recv, 10)
    rsize = struct.unpack('>I', rh[2:6])[0]
    out.write(rh + read_exact(s.recv, rsize - 10))
    out.flush()
