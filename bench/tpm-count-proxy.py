#!/usr/bin/env python3
# Counts the TPM commands of any TPM client, for the benches: listens on a unix socket that a
# client reaches as "swtpm:path=LISTEN" and relays every connection to a swtpm's raw command
# socket, appending the command code of each command to TRACE (one hex number a line) before
# sending it on. Unlike tests/tpm/tpm-proxy.py (tpm2-tss's "cmd" TCTI) it works for clients
# that only take a TCTI name and a path: systemd's tpm2-util asks a TCTI for its context size
# with no configuration, which the cmd TCTI refuses. The swtpm TCTI's control channel is
# LISTEN.ctrl: the caller links that to the swtpm's own (it carries no TPM commands).
# A connection per thread, so that a second client waits for swtpm as it would without the
# proxy. Usage: tpm-count-proxy.py LISTEN SWTPM_SOCKET TRACE
import socket, struct, sys, threading

listen_path, swtpm_path, trace_path = sys.argv[1:4]
trace = open(trace_path, 'a')
trace_lock = threading.Lock()


def read_exact(sock, n):
    buf = b''
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def read_message(sock):
    """One TPM command or response: the 10-byte header, then the rest of its size."""
    hdr = read_exact(sock, 10)
    if hdr is None:
        return None
    size = struct.unpack('>I', hdr[2:6])[0]
    if size < 10:
        return None
    body = read_exact(sock, size - 10)
    return None if body is None else hdr + body


def relay(client):
    tpm = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        tpm.connect(swtpm_path)
        while True:
            cmd = read_message(client)
            if cmd is None:
                break
            with trace_lock:
                trace.write('%08x\n' % struct.unpack('>I', cmd[6:10])[0])
                trace.flush()
            tpm.sendall(cmd)
            rsp = read_message(tpm)
            if rsp is None:
                break
            client.sendall(rsp)
    finally:
        tpm.close()
        client.close()


server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(listen_path)
server.listen(8)
while True:
    conn, _ = server.accept()
    threading.Thread(target=relay, args=(conn,), daemon=True).start()
