#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# The expected texts of tests/unit/test-initramfs-json.c: the same archive built here from
# buffer-format.rst, its document written by json.dumps, digests by hashlib. Prints C.
import hashlib, json
ents = [  # name bytes, mode, ino, uid, gid, nlink, mtime, rdevmaj, rdevmin, data
 (b".", 0o040755, 0, 0, 0, 2, 1650000000, 0, 0, b""),
 (b"bin/sh", 0o100755, 1, 0, 0, 1, 1650000000, 0, 0, b"hello\n"),
 (b"caf\xe9", 0o100644, 2, 0, 0, 1, 1650000000, 0, 0, b""),
 (b"dev/null", 0o020666, 3, 0, 0, 1, 1650000000, 1, 3, b""),
 (b"lnk", 0o120777, 4, 0, 0, 1, 1650000000, 0, 0, b"bin/sh"),
 (b"a\\b", 0o100600, 5, 1000, 100, 1, 7, 0, 0, b"x"),
 (b"TRAILER!!!", 0, 0, 0, 0, 1, 0, 0, 0, b""),
]
out = bytearray(); offs = []
def pad(): 
    while len(out) % 4: out.append(0)
for (n, mode, ino, uid, gid, nl, mt, ma, mi, d) in ents:
    offs.append(len(out))
    out += b"070701" + ("%08X"*13 % (ino, mode, uid, gid, nl, mt, len(d), 0, 0, ma, mi, len(n)+1, 0)).encode()
    out += n + b"\0"; pad(); out += d; pad()
def esc(b): return "".join(chr(c) if 0x20 <= c < 0x7f and c != 0x5c else "\\x%02x" % c for c in b)
types = {0o040000:"dir",0o100000:"file",0o120000:"symlink",0o020000:"char"}
entries = []
for i,(n, mode, ino, uid, gid, nl, mt, ma, mi, d) in enumerate(ents[:-1]):
    e = {"name": esc(n)}
    if esc(n) != n.decode('latin1'): e["name_hex"] = n.hex()
    e.update(type=types[mode & 0o170000], mode="%04o" % (mode & 0o7777), uid=uid, gid=gid, nlink=nl, mtime=mt, ino=ino, size=len(d), segment=0, offset=offs[i])
    if mode & 0o170000 == 0o120000: e["target"] = esc(d)
    if mode & 0o170000 == 0o020000: e["rdev"] = "%d:%d" % (ma, mi)
    if mode & 0o170000 == 0o100000 and d: e["sha256"] = hashlib.sha256(d).hexdigest()
    entries.append(e)
doc = {"file": "in\"it.img", "size": len(out), "digests": {"sha1": hashlib.sha1(out).hexdigest(), "sha256": hashlib.sha256(out).hexdigest()},
       "segments": [{"compress": "none", "offset": 0, "size": len(out), "cpio_size": len(out)}], "entries": entries}
c = json.dumps(doc, separators=(",", ":")) + "\n"
p = json.dumps(doc, indent=2) + "\n"
def lit(s): return "\n".join('\t"' + l.replace('\\','\\\\').replace('"','\\"') + '\\n"' for l in s.rstrip("\n").split("\n"))
print("/* python3: the same bytes' digests and json.dumps(separators=(\",\", \":\")), json.dumps(indent=2) */")
print("static const char list_compact[] =\n" + lit(c) + ";")
print("static const char list_pretty[] =\n" + lit(p) + ";")
print("/* sha1 %s */" % hashlib.sha1(out).hexdigest())
print("/* sha256 %s */" % hashlib.sha256(out).hexdigest())
print("/* len %d */" % len(out))
