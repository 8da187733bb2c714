#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The inguest scenario's IMA lists read with hashlib from the kernel's rules
(security/integrity/ima), independently of mboot: the outside values tests/vm/run-scenario.sh
holds mboot's and the TPM's against.

    ima-host.py read LIST [PCRS_JSON]
        JSON: {"entries": [{"pcr", "template", "template_hash", "template_hash_ok", "digest"
        ("algo:hex"), "path"}], "pcr10": {BANK: {"recomputed": hex, "padded": hex}}} for sha1,
        sha256, sha384, sha512: each bank's template hash recomputed over the fields (Linux 5.11
        on, a bank whose hash the kernel has when IMA starts) or the SHA-1 one zero-padded (a
        bank whose hash is a module not loaded then), and with PCRS_JSON
        ({"sha256": {"0": hex, ...}, ...}, the guest's sysfs PCRs) "boot_aggregate": the digest
        over PCRs 0-9 of the bank of the first entry's algorithm. LIST is binary
        (binary_runtime_measurements: SHA-1 template hashes) or ASCII.
    ima-host.py tamper LIST MODE PATH [OTHER_PATH] > OUT
        the binary LIST with the entry of PATH changed: remove (dropped), path (its name made
        OTHER_PATH, template hash kept), digest (its file digest made OTHER_PATH's, template
        hash kept), forge (name and digest made OTHER_PATH's and the template hash recomputed:
        every entry checks, only PCR 10 can tell).
    ima-host.py tamper-evidence EVIDENCE MODE PATH [OTHER_PATH] > OUT
        the same on the base64 "ima_log" of an attestation evidence JSON.
"""
import base64
import hashlib
import json
import struct
import sys

BANKS = ("sha1", "sha256", "sha384", "sha512")


def parse_binary(data):
    """[(pcr, template_hash, template_name, [fields])], SHA-1 template hashes."""
    out, pos = [], 0
    while pos < len(data):
        pcr, = struct.unpack_from("<I", data, pos)
        th = data[pos + 4:pos + 24]
        nl, = struct.unpack_from("<I", data, pos + 24)
        name = data[pos + 28:pos + 28 + nl].decode()
        pos += 28 + nl
        if name == "ima":
            raise SystemExit("legacy ima template: not expected from this kernel")
        ln, = struct.unpack_from("<I", data, pos)
        td = data[pos + 4:pos + 4 + ln]
        pos += 4 + ln
        fields, p = [], 0
        while p < len(td):
            fl, = struct.unpack_from("<I", td, p)
            fields.append(td[p + 4:p + 4 + fl])
            p += 4 + fl
        out.append((pcr, th, name, fields))
    return out


def parse_ascii(text):
    out = []
    for line in text.splitlines():
        if not line:
            continue
        toks = line.split(" ")
        pcr, th, name = int(toks[0]), bytes.fromhex(toks[1]), toks[2]
        algo, hexd = toks[3].split(":", 1)
        tail = {"ima-ng": 0, "ima-sig": 1, "ima-buf": 1}[name]
        fields = [algo.encode() + b":\0" + bytes.fromhex(hexd),
                  " ".join(toks[4:len(toks) - tail]).encode() + b"\0"]
        fields += [bytes.fromhex(t) for t in toks[len(toks) - tail:]]
        out.append((pcr, th, name, fields))
    return out


def read_list(path):
    data = open(path, "rb").read()
    return parse_ascii(data.decode()) if data[:1].isdigit() else parse_binary(data)


def thash(alg, fields):
    h = hashlib.new(alg)
    for f in fields:
        h.update(struct.pack("<I", len(f)) + f)
    return h.digest()


def digest_field(f):
    algo, _, d = f.partition(b":\0")
    return algo.decode() + ":" + d.hex()


def write_binary(entries):
    out = b""
    for pcr, th, name, fields in entries:
        td = b"".join(struct.pack("<I", len(f)) + f for f in fields)
        out += struct.pack("<I", pcr) + th + struct.pack("<I", len(name)) + name.encode()
        out += struct.pack("<I", len(td)) + td
    return out


def cmd_read(args):
    entries = read_list(args[0])
    doc = {"entries": [], "pcr10": {}}
    pcr = {b: b"\0" * hashlib.new(b).digest_size for b in BANKS}
    pad = dict(pcr)
    for n, th, name, fields in entries:
        ok = thash("sha1", fields) == th
        doc["entries"].append({"pcr": n, "template": name, "template_hash": th.hex(),
                               "template_hash_ok": ok, "digest": digest_field(fields[0]),
                               "path": fields[1].rstrip(b"\0").decode()})
        if n == 10:
            for b in BANKS:
                size = hashlib.new(b).digest_size
                pcr[b] = hashlib.new(b, pcr[b] + thash(b, fields)).digest()
                pad[b] = hashlib.new(b, pad[b] + (th + b"\0" * size)[:size]).digest()
    doc["pcr10"] = {b: {"recomputed": pcr[b].hex(), "padded": pad[b].hex()} for b in BANKS}
    if len(args) > 1:
        vals = json.load(open(args[1]))
        alg = doc["entries"][0]["digest"].split(":")[0]
        h = hashlib.new(alg)
        for i in range(10):
            h.update(bytes.fromhex(vals[alg][str(i)]))
        doc["boot_aggregate"] = alg + ":" + h.hexdigest()
    json.dump(doc, sys.stdout, indent=1)
    print()


def tamper(data, mode, path, other=None):
    entries = parse_binary(data)
    by_path = {f[1].rstrip(b"\0").decode(): (i, f) for i, (_, _, _, f) in enumerate(entries)}
    i, fields = by_path[path]
    pcr, th, name, _ = entries[i]
    fields = list(fields)
    if mode == "remove":
        del entries[i]
        return write_binary(entries)
    o = by_path[other][1]
    if mode in ("path", "forge"):
        fields[1] = o[1]
    if mode in ("digest", "forge"):
        fields[0] = o[0]
    if mode == "forge":
        th = thash("sha1", fields)
    entries[i] = (pcr, th, name, fields)
    return write_binary(entries)


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "read":
        cmd_read(args)
    elif cmd == "tamper":
        sys.stdout.buffer.write(tamper(open(args[0], "rb").read(), *args[1:]))
    elif cmd == "tamper-evidence":
        ev = json.load(open(args[0]))
        ev["ima_log"] = base64.b64encode(tamper(base64.b64decode(ev["ima_log"]), *args[1:])).decode()
        json.dump(ev, sys.stdout, indent=1)
        print()
    else:
        raise SystemExit("usage: ima-host.py read|tamper|tamper-evidence ...")


main()
