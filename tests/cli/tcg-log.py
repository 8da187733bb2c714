#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Write a TCG crypto-agile event log (TCG PC Client PFP spec, 10.2) with sha1 and sha256 banks
from events given on the command line, with no mboot code: the tests' digests come from openssl.

    tcg-log.py OUT PCR:TYPE:SHA1_HEX:SHA256_HEX:DATA_HEX ...

TYPE is a number (EV_IPL = 13). The Spec ID header (EV_NO_ACTION, a SHA-1-format record) comes
first, as firmware writes it."""
import struct
import sys

SHA1, SHA256 = 0x0004, 0x000B


def spec_id():
    body = b"Spec ID Event03\0" + struct.pack("<IBBBBI", 0, 0, 2, 2, 2, 2)
    body += struct.pack("<HH", SHA1, 20) + struct.pack("<HH", SHA256, 32) + b"\0"
    return struct.pack("<II", 0, 3) + bytes(20) + struct.pack("<I", len(body)) + body


def event(arg):
    pcr, typ, sha1, sha256, data = arg.split(":")
    d1, d256, data = bytes.fromhex(sha1), bytes.fromhex(sha256), bytes.fromhex(data)
    assert len(d1) == 20 and len(d256) == 32, arg
    rec = struct.pack("<III", int(pcr), int(typ), 2)
    rec += struct.pack("<H", SHA1) + d1 + struct.pack("<H", SHA256) + d256
    return rec + struct.pack("<I", len(data)) + data


with open(sys.argv[1], "wb") as f:
    f.write(spec_id() + b"".join(event(a) for a in sys.argv[2:]))
