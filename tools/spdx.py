#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Keep an SPDX licence line at the top of every source file, and the licence notice in the single header.

Usage:  python3 tools/spdx.py            # add the line where it is missing
        python3 tools/spdx.py --check    # CTest licence.spdx: exit 1 naming each file without it

A source file is C++/CUDA (.hpp .h .cuh .cpp .cu), Python, shell, CMake (.cmake, .cmake.in, CMakeLists.txt)
or a file under .ci/. The line is the first line, or the second after a `#!` line. Data (fixtures, corpora,
texts), Markdown and JSON (no comment syntax) are not source files. The walk reads the directories a
release ships, so a checkout without git (a tarball, a vendored copy) is checked the same way.
"""

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LICENSE_ID = "Apache-2.0 WITH LLVM-exception"
TAG = "SPDX-License-Identifier: " + LICENSE_ID
DIRS = ["include", "tests", "examples", "bench", "tools", "cmake", ".ci", "single_include"]
TOP_FILES = ["CMakeLists.txt"]
SKIP_DIRS = {"build", "__pycache__", "corpus", ".git"}
C_LIKE = (".hpp", ".h", ".cuh", ".cpp", ".cu")
HASH_LIKE = (".py", ".sh", ".cmake", ".cmake.in")


def comment_for(path):
    """The comment leader for a source file, or None when the file is not source."""
    name = os.path.basename(path)
    if name.endswith(C_LIKE):
        return "//"
    if name.endswith(HASH_LIKE) or name == "CMakeLists.txt":
        return "#"
    rel = os.path.relpath(path, ROOT)
    if rel.startswith(".ci" + os.sep) and "." not in name:
        return "#"
    return None


def sources():
    for top in TOP_FILES:
        yield os.path.join(ROOT, top)
    for d in DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, d)):
            dirnames[:] = sorted(n for n in dirnames if n not in SKIP_DIRS and not n.startswith("build"))
            for f in sorted(filenames):
                path = os.path.join(dirpath, f)
                if comment_for(path):
                    yield path


def has_tag(lines):
    head = lines[:2] if lines and lines[0].startswith("#!") else lines[:1]
    return any(TAG in line for line in head)


def add_tag(path, lines):
    line = f"{comment_for(path)} {TAG}\n"
    at = 1 if lines and lines[0].startswith("#!") else 0
    lines.insert(at, line)
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.writelines(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="report files without the line; change nothing")
    args = parser.parse_args()

    missing = []
    for path in sources():
        with open(path, encoding="utf-8", newline="") as f:
            lines = f.readlines()
        if has_tag(lines):
            continue
        if args.check or path.startswith(os.path.join(ROOT, "single_include")):
            missing.append(os.path.relpath(path, ROOT))
        else:
            add_tag(path, lines)
            print(f"spdx.py: added the line to {os.path.relpath(path, ROOT)}")

    if not os.path.isfile(os.path.join(ROOT, "LICENSE")):
        missing.append("LICENSE (the file itself is missing)")
    if missing:
        for m in missing:
            print(f"spdx.py: no '{TAG}' line at the top of {m}", file=sys.stderr)
        if any(m.startswith("single_include") for m in missing):
            print("spdx.py: the single header is generated: run python3 tools/amalgamate.py", file=sys.stderr)
        elif args.check:
            print("spdx.py: run python3 tools/spdx.py to add it", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
