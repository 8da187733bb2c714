#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Evidence and machine records (docs/attest.md) assembled from tpm2-tools output, and forged.

  assemble --attest MSG --sig SIG --values PCRS --selection sha1:all+sha256:0,1 --ak-pub PUB
           [--eventlog LOG] [--userspace LOG] -o OUT
        MSG, SIG: tpm2_quote -m / -s (TSS format); PCRS: tpm2_quote -o PCRS -F values (the digests
        concatenated in selection order); PUB: TPM2B_PUBLIC (tpm2_createak -u PUB -f tss).
  machine --ak-pub PUB --ak-name NAME -o OUT       NAME: tpm2_createak -n (binary Name)
  set-pcr EV BANK PCR HEX | drop-pcr EV BANK PCR | drop-bank EV BANK
  attest-set EV FIELD HEX     replace magic|type|extra in TPMS_ATTEST (the signature stays)
  attest-file EV OUT          TPMS_ATTEST bytes as a file (to sign them another way)
  set-quote EV ATTEST SIG     replace the quote's bytes with these files
  truncate-sig EV N           drop the signature's last N bytes
  sig-rsa EV                  an RSASSA-SHA256 signature of TPMS_ATTEST by a fresh RSA key
  set-field EV KEY FILE|null  replace a base64 field (eventlog, userspace_log, ak_public) by a file
EV is edited in place. Writes nothing but the files named.
"""
import base64
import json
import struct
import sys

SIZES = {"sha1": 20, "sha256": 32, "sha384": 48, "sha512": 64}


def b64(data):
    return base64.b64encode(data).decode()


def load(path):
    with open(path) as f:
        return json.load(f)


def save(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")


def read(path):
    with open(path, "rb") as f:
        return f.read()


def parse_selection(text):
    """sha1:all+sha256:0,1,2 as tpm2-tools spells it -> [(bank, [pcrs])]."""
    out = []
    for part in text.split("+"):
        bank, pcrs = part.split(":")
        if pcrs == "all":
            out.append((bank, list(range(24))))
        else:
            sel = set()
            for item in pcrs.split(","):
                if "-" in item:
                    a, b = item.split("-")
                    sel.update(range(int(a), int(b) + 1))
                else:
                    sel.add(int(item))
            out.append((bank, sorted(sel)))
    return out


def opts(argv):
    res, i = {}, 0
    while i < len(argv):
        res[argv[i].lstrip("-")] = argv[i + 1]
        i += 2
    return res


def assemble(argv):
    o = opts(argv)
    values = read(o["values"])
    banks, at = {}, 0
    for bank, pcrs in parse_selection(o["selection"]):
        size = SIZES[bank]
        banks[bank] = {}
        for p in pcrs:
            banks[bank][str(p)] = values[at:at + size].hex()
            at += size
    if at != len(values):
        sys.exit("values: %d bytes, the selection takes %d" % (len(values), at))
    ev = {"version": 1, "kind": "mboot-evidence",
          "quote": {"attest": b64(read(o["attest"])), "signature": b64(read(o["sig"]))},
          "pcrs": {"banks": banks}, "ak_public": b64(read(o["ak-pub"])),
          "eventlog": b64(read(o["eventlog"])) if "eventlog" in o else None,
          "userspace_log": b64(read(o["userspace"])) if "userspace" in o else None,
          "created": "2026-01-01T00:00:00Z"}
    save(o["o"], ev)


def machine(argv):
    o = opts(argv)
    save(o["o"], {"version": 1, "kind": "mboot-machine", "ak_public": b64(read(o["ak-pub"])),
                  "ak_name": read(o["ak-name"]).hex(), "ek_public": b64(read(o["ak-pub"])),
                  "ek_certificate_sha256": None, "enrolled": "2026-01-01T00:00:00Z"})


def attest_set(ev, field, value):
    att = bytearray(base64.b64decode(ev["quote"]["attest"]))
    value = bytes.fromhex(value)
    if field == "magic":
        att[0:4] = value
    elif field == "type":
        att[4:6] = value
    elif field == "extra":
        (n,) = struct.unpack(">H", att[6:8])
        at = 8 + n
        (m,) = struct.unpack(">H", att[at:at + 2])
        att[at:at + 2 + m] = struct.pack(">H", len(value)) + value
    else:
        sys.exit("field: magic, type or extra")
    ev["quote"]["attest"] = b64(bytes(att))


def sig_rsa(ev):
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding, rsa
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    sig = key.sign(base64.b64decode(ev["quote"]["attest"]), padding.PKCS1v15(), hashes.SHA256())
    # TPMT_SIGNATURE: RSASSA, SHA-256, TPM2B_PUBLIC_KEY_RSA
    ev["quote"]["signature"] = b64(struct.pack(">HHH", 0x0014, 0x000B, len(sig)) + sig)


def main():
    cmd, argv = sys.argv[1], sys.argv[2:]
    if cmd == "assemble":
        return assemble(argv)
    if cmd == "machine":
        return machine(argv)
    ev = load(argv[0])
    if cmd == "set-pcr":
        ev["pcrs"]["banks"].setdefault(argv[1], {})[argv[2]] = argv[3]
    elif cmd == "drop-pcr":
        del ev["pcrs"]["banks"][argv[1]][argv[2]]
    elif cmd == "drop-bank":
        del ev["pcrs"]["banks"][argv[1]]
    elif cmd == "attest-set":
        attest_set(ev, argv[1], argv[2])
    elif cmd == "attest-file":
        with open(argv[1], "wb") as f:
            f.write(base64.b64decode(ev["quote"]["attest"]))
        return
    elif cmd == "set-quote":
        ev["quote"] = {"attest": b64(read(argv[1])), "signature": b64(read(argv[2]))}
    elif cmd == "truncate-sig":
        ev["quote"]["signature"] = b64(base64.b64decode(ev["quote"]["signature"])[:-int(argv[1])])
    elif cmd == "sig-rsa":
        sig_rsa(ev)
    elif cmd == "set-field":
        ev[argv[1]] = None if argv[2] == "null" else b64(read(argv[2]))
    else:
        sys.exit("unknown command " + cmd)
    save(argv[0], ev)


if __name__ == "__main__":
    main()
