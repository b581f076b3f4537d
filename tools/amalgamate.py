#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Generate single_include/texpr/texpr.hpp from include/texpr/texpr.hpp.

Usage:  python3 tools/amalgamate.py            # regenerate in place
        python3 tools/amalgamate.py --check    # exit 1 if the committed copy is stale

Every `#include "texpr/..."` (or `<texpr/...>`) is replaced by that header's text, once, in the order
the preprocessor would first open it (headers use `#pragma once`, so a depth-first walk reproduces
the real include order, cycles included). System includes stay where they are.

Includes under a preprocessor conditional (e.g. the umbrella's `#if defined(__CUDACC__)` block that
pulls in the CUDA backend) are inlined inside that conditional. The set of enclosing conditions (by
their text) is tracked: a header already inlined under a subset of the current conditions is in
effect and skipped; one first met under a condition and later met outside it is inlined again. Every
inlined header is wrapped in its own `TEXPR_SI_<name>` guard macro, so whichever copy the
preprocessor reaches first wins, as `#pragma once` would. (Two conditionals with the same text are
assumed to agree, i.e. nothing in between redefines the macros they test.)
"""

import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLUDE_DIR = os.path.join(ROOT, "include")
UMBRELLA = "texpr/texpr.hpp"
OUTPUT = os.path.join(ROOT, "single_include", "texpr", "texpr.hpp")

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
PRAGMA_ONCE_RE = re.compile(r"^\s*#\s*pragma\s+once\b")
DIRECTIVE_RE = re.compile(r"^\s*#\s*(\w+)")


class Amalgamator:
    def __init__(self, include_dir):
        self.include_dir = include_dir
        self.out = []
        self.stack = []      # open conditionals: [condition texts of the #if/#elif chain so far, branch number]
        self.seen = {}       # texpr header or system include -> list of contexts it was emitted in
        self.reached = set()

    def context(self):
        return frozenset((tuple(chain), b) for chain, b in self.stack)

    def already(self, key):
        """True if key was emitted under conditions that all hold here too (so it is in effect here)."""
        ctx = self.context()
        for c in self.seen.get(key, []):
            if c <= ctx:
                return True
        self.seen.setdefault(key, []).append(ctx)
        return False

    def resolve(self, name, quote, current_dir):
        """Path of a texpr header named by an include, or None for anything else (system headers)."""
        candidates = []
        if quote == '"':
            candidates.append(os.path.join(current_dir, name))
        candidates.append(os.path.join(self.include_dir, name))
        for c in candidates:
            c = os.path.normpath(c)
            if os.path.isfile(c) and c.startswith(os.path.join(self.include_dir, "texpr") + os.sep):
                return c
        if name.startswith("texpr/"):
            # Kept verbatim, so the single header fails exactly where the umbrella would.
            print(f"amalgamate.py: warning: {name} does not exist; its #include is kept as is", file=sys.stderr)
        return None

    def inline(self, path):
        rel = os.path.relpath(path, self.include_dir).replace(os.sep, "/")
        self.reached.add(rel)
        guard = "TEXPR_SI_" + re.sub(r"[^A-Za-z0-9]", "_", rel).upper()
        self.out.append(f"// ---- begin {rel} ----\n")
        self.out.append(f"#ifndef {guard}\n#define {guard}\n")
        depth = len(self.stack)
        with open(path, encoding="utf-8") as f:
            lines = f.readlines()
        in_block_comment = False
        continued = False
        for i, line in enumerate(lines):
            if not line.endswith("\n"):
                line += "\n"
            is_directive = not in_block_comment and not continued and line.lstrip().startswith("#")
            continued = line.rstrip("\n").endswith("\\")
            in_block_comment = self.block_comment_state(line, in_block_comment)
            if not is_directive:
                self.out.append(line)
                continue
            if PRAGMA_ONCE_RE.match(line):
                continue
            m = INCLUDE_RE.match(line)
            if m:
                quote, name = m.group(1), m.group(2).strip()
                target = self.resolve(name, quote, os.path.dirname(path))
                if target is None:
                    if not self.already("<" + name + ">"):
                        self.out.append(line)
                elif not self.already(target):
                    self.inline(target)
                continue
            d = DIRECTIVE_RE.match(line).group(1)
            full = line
            j = i
            while full.rstrip("\n").endswith("\\") and j + 1 < len(lines):  # a condition continued with '\'
                j += 1
                full = full.rstrip("\n")[:-1] + " " + lines[j]
            if d in ("if", "ifdef", "ifndef"):
                self.stack.append([[condition_text(full)], 0])
            elif d in ("elif", "else", "elifdef", "elifndef"):
                if len(self.stack) <= depth:
                    sys.exit(f"amalgamate.py: unbalanced #{d} in {rel}")
                if d != "else":
                    self.stack[-1][0].append(condition_text(full))
                self.stack[-1][1] += 1
            elif d == "endif":
                if len(self.stack) <= depth:
                    sys.exit(f"amalgamate.py: unbalanced #endif in {rel}")
                self.stack.pop()
            self.out.append(line)
        if len(self.stack) != depth:
            sys.exit(f"amalgamate.py: unterminated conditional in {rel}")
        if self.out and not self.out[-1].endswith("\n"):
            self.out.append("\n")
        self.out.append(f"#endif // {guard}\n")
        self.out.append(f"// ---- end {rel} ----\n")

    @staticmethod
    def block_comment_state(line, inside):
        """Whether a /* */ comment is still open after this line (string literals are ignored: good
        enough for texpr's headers, which never put comment markers in strings at line starts)."""
        i = 0
        while i < len(line):
            if inside:
                j = line.find("*/", i)
                if j < 0:
                    return True
                inside, i = False, j + 2
            else:
                j = line.find("/*", i)
                k = line.find("//", i)
                if j < 0 or (0 <= k < j):
                    return False
                inside, i = True, j + 2
        return inside


def condition_text(line):
    """A conditional directive without comments or spacing, e.g. '#ifdefined(__CUDACC__)'."""
    line = re.sub(r"/\*.*?\*/|//.*", "", line)
    return re.sub(r"\s+", "", line)


def version(include_dir):
    parts = {}
    with open(os.path.join(include_dir, "texpr", "core", "config.hpp"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"#define TEXPR_VERSION_(MAJOR|MINOR|PATCH) (\d+)", line)
            if m:
                parts[m.group(1)] = m.group(2)
    return "{MAJOR}.{MINOR}.{PATCH}".format(**parts)


def licence_notice():
    """LICENSE as a comment: a copy of the single header alone carries the licence it is under."""
    with open(os.path.join(ROOT, "LICENSE"), encoding="utf-8") as f:
        text = f.read()
    return "".join(("// " + line).rstrip() + "\n" for line in text.splitlines()) + "\n"


def generate(include_dir):
    a = Amalgamator(include_dir)
    umbrella = os.path.join(include_dir, UMBRELLA)
    a.seen[os.path.normpath(umbrella)] = [frozenset()]
    a.inline(umbrella)
    body = "".join(a.out)
    body = re.sub(r"^// SPDX-License-Identifier: .*\n", "", body, flags=re.M)
    body = re.sub(r"\n{3,}", "\n\n", body)
    head = (
        "// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception\n"
        f"// texpr {version(include_dir)} single-header edition: every header under include/texpr/ that\n"
        "// texpr/texpr.hpp reaches, inlined once. GENERATED by tools/amalgamate.py; do not edit. Change\n"
        "// include/ and run `python3 tools/amalgamate.py`.\n"
        "//\n"
        + licence_notice()
        + "#pragma once\n"
        "#define TEXPR_SINGLE_HEADER 1\n\n"
    )
    all_headers = set()
    for dirpath, _, files in os.walk(os.path.join(include_dir, "texpr")):
        for fn in files:
            if fn.endswith((".hpp", ".cuh", ".h")):
                all_headers.add(os.path.relpath(os.path.join(dirpath, fn), include_dir).replace(os.sep, "/"))
    return head + body, sorted(all_headers - a.reached)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="fail if the output file is out of date; write nothing")
    p.add_argument("--output", default=OUTPUT, help="where to write (default: single_include/texpr/texpr.hpp)")
    args = p.parse_args()

    text, unreached = generate(INCLUDE_DIR)
    for h in unreached:
        print(f"amalgamate.py: note: {h} is not reached from {UMBRELLA}; not inlined", file=sys.stderr)
    if args.check:
        try:
            with open(args.output, encoding="utf-8") as f:
                current = f.read()
        except FileNotFoundError:
            current = None
        if current != text:
            print(f"amalgamate.py: {os.path.relpath(args.output, ROOT)} is stale; run python3 tools/amalgamate.py",
                  file=sys.stderr)
            return 1
        return 0
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    with open(args.output, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    print(f"amalgamate.py: wrote {os.path.relpath(args.output, ROOT)} ({len(text) // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
