#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The verifier's end of the inguest boot's attestation (tests/vm/README.md).

    attest-host.py SOCKET WORKDIR MBOOT EK_CA_DIR

Connects to the guest's second serial line (a Unix socket QEMU serves) and answers, line by line:
    guest: REQUEST <base64 of the enrollment request>
    host:  CHALLENGE <base64>   (mboot attest challenge, checking the EK certificate chain)
           NONCE <hex>          (fresh, for the quote)
           NONCE2 <hex>         (fresh, for the second quote, after the unknown binary ran)
    guest: RESPONSE <base64>, EVIDENCE <base64>, [EVIDENCE2 <base64>], DONE
Everything lands in WORKDIR (request.json, challenge.json, state.json, nonce, nonce2,
response.json, evidence.json, evidence2.json, attest-host.log); the scenario checks it after the boot. Exits 0 after DONE,
1 on a timeout or a closed line.
"""
import base64
import os
import socket
import subprocess
import sys
import time


def main():
    sock_path, work, mboot, ca = sys.argv[1:5]
    deadline = time.time() + float(os.environ.get("MB_VM_TIMEOUT", "300"))
    log = open(os.path.join(work, "attest-host.log"), "w", buffering=1)
    s = None
    while s is None:
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(sock_path)
        except OSError:
            s = None
            if time.time() > deadline:
                log.write("no connection to %s\n" % sock_path)
                return 1
            time.sleep(0.2)
    s.settimeout(max(1.0, deadline - time.time()))
    buf = b""

    def readline():
        nonlocal buf
        while b"\n" not in buf:
            chunk = s.recv(65536)
            if not chunk:
                raise EOFError("the guest closed the line")
            buf += chunk
        line, buf = buf.split(b"\n", 1)
        return line.strip(b"\r").decode("ascii", "replace")

    def save(name, b64):
        with open(os.path.join(work, name), "wb") as f:
            f.write(base64.b64decode(b64))

    try:
        while True:
            line = readline()
            tag, _, payload = line.partition(" ")
            log.write("guest: %s (%d bytes)\n" % (tag, len(payload)))
            if tag == "REQUEST":
                save("request.json", payload)
                p = subprocess.run([mboot, "attest", "challenge", "-i", os.path.join(work, "request.json"),
                                    "--ek-ca", ca, "-o", os.path.join(work, "challenge.json"),
                                    "--state", os.path.join(work, "state.json"), "--force"],
                                   capture_output=True, text=True)
                log.write("attest challenge: exit %d %s\n" % (p.returncode, p.stderr.strip()))
                with open(os.path.join(work, "challenge.rc"), "w") as f:
                    f.write("%d\n" % p.returncode)
                if p.returncode != 0:
                    s.sendall(b"ERROR\n")
                    continue
                nonce, nonce2 = os.urandom(16).hex(), os.urandom(16).hex()
                for name, value in (("nonce", nonce), ("nonce2", nonce2)):
                    with open(os.path.join(work, name), "w") as f:
                        f.write(value + "\n")
                with open(os.path.join(work, "challenge.json"), "rb") as f:
                    s.sendall(b"CHALLENGE " + base64.b64encode(f.read()) + b"\n")
                s.sendall(b"NONCE " + nonce.encode() + b"\n")
                s.sendall(b"NONCE2 " + nonce2.encode() + b"\n")
            elif tag == "RESPONSE":
                save("response.json", payload)
            elif tag == "EVIDENCE":
                save("evidence.json", payload)
            elif tag == "EVIDENCE2":
                save("evidence2.json", payload)
            elif tag == "DONE":
                return 0
    except (EOFError, OSError, ValueError) as e:
        log.write("stopped: %s\n" % e)
        return 1


if __name__ == "__main__":
    sys.exit(main())
