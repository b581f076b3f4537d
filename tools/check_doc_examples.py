#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""CTest docs.examples: every code block a document says is a test case's is that test case's code.

A block introduced by a line ending in `` `tests/PATH.cpp`'s "NAME" test case: `` (the sentence may start on the
line before) must be a ```cpp block each of whose lines, #include lines aside, appears in that test case's body
with whitespace collapsed (comment alignment may differ). Exits 1 naming each document line that does not.

Usage:  python3 tools/check_doc_examples.py DOC.md [DOC.md ...]
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INTRO = re.compile(r"`(tests/[^`]+\.cpp)`'s \"([^\"]+)\" test case:\s*$")


def squash(line):
    return " ".join(line.split())


def case_body(path, name):
    text = open(os.path.join(ROOT, path), encoding="utf-8").read()
    start = text.find('TEST_CASE("' + name + '")')
    if start < 0:
        start = text.find(name + '")')  # a prefixed name: TEST_CASE("npz: docs/install.md example")
        start = text.rfind("TEST_CASE(", 0, start) if start >= 0 else -1
    if start < 0:
        return None
    end = text.find("\nTEST_CASE(", start + 1)
    return text[start:end if end >= 0 else len(text)]


def main(docs):
    errors, blocks = [], 0
    for doc in docs:
        lines = open(doc, encoding="utf-8").read().split("\n")
        for i, line in enumerate(lines):
            m = INTRO.search(line)
            if not m:
                continue
            path, name = m.groups()
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            if j >= len(lines) or lines[j].strip() != "```cpp":
                errors.append(f"{doc}:{i + 1}: no ```cpp block after the test case it names")
                continue
            body = case_body(path, name)
            if body is None:
                errors.append(f'{doc}:{i + 1}: {path} has no test case "{name}"')
                continue
            squashed = {squash(l) for l in body.split("\n")}
            blocks += 1
            j += 1
            while j < len(lines) and lines[j].strip() != "```":
                code = lines[j]
                if code.strip() and not code.startswith("#include") and squash(code) not in squashed:
                    errors.append(f'{doc}:{j + 1}: not in {path}\'s "{name}": {code.strip()}')
                j += 1
    for e in errors:
        print("check_doc_examples:", e, file=sys.stderr)
    if not errors:
        print(f"check_doc_examples: {blocks} blocks match their test cases")
    if blocks == 0 and not errors:
        print("check_doc_examples: no block names a test case", file=sys.stderr)
        return 1
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
