#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# Python's own pretty print of the JSON on stdin (indent 2, "key": value, members in order,
# bytes that are not UTF-8 kept as they are, \u00XX in upper case as mboot and jansson write it):
# what `mboot ... --json` prints pretty must be this of what it prints --compact.
import json
import re
import sys

text = sys.stdin.buffer.read().decode("utf-8", "surrogateescape")
out = json.dumps(json.loads(text), indent=2, ensure_ascii=False) + "\n"
# an escape is a backslash after an even number of them
out = re.sub(r"(?<!\\)((?:\\\\)*)\\u00([0-9a-f]{2})", lambda m: m.group(1) + "\\u00" + m.group(2).upper(), out)
sys.stdout.buffer.write(out.encode("utf-8", "surrogateescape"))
