#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Keep README.md's code samples and their printed output equal to compiled, tested code.

Usage:  python3 tools/update_readme.py --program build/test/examples/readme/readme_samples           # rewrite
        python3 tools/update_readme.py --program build/test/examples/readme/readme_samples --check   # CTest
        cmake --build build/test --target regenerate     # builds the program, then rewrites

In README.md a marker line names the fenced block that follows it:

    <!-- readme:NAME -->          the block is the code between `// [readme:NAME]` and `// [readme:end]`
                                  in examples/readme/*.cpp (several regions with one name join with a
                                  blank line; each region loses its common indentation)
    <!-- readme-output:NAME -->   the block is what `PROGRAM NAME` prints on stdout

--check exits 1, naming the README section, when a block differs, when a marker names no region, or when
a region has no marker; without --check the blocks are rewritten in place.
"""

import argparse
import difflib
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")
SOURCES = os.path.join(ROOT, "examples", "readme", "*.cpp")
DEFAULT_PROGRAM = os.path.join(ROOT, "build", "test", "examples", "readme", "readme_samples")

REGION_BEGIN = re.compile(r"^\s*// \[readme:([A-Za-z0-9_-]+)\]\s*$")
REGION_END = re.compile(r"^\s*// \[readme:end\]\s*$")
MARKER = re.compile(r"^<!-- (readme|readme-output):([A-Za-z0-9_-]+) -->\s*$")


def fail(message):
    print(f"update_readme.py: {message}", file=sys.stderr)
    sys.exit(1)


def dedent(lines):
    indents = [len(line) - len(line.lstrip(" ")) for line in lines if line.strip()]
    cut = min(indents, default=0)
    return [line[cut:].rstrip() for line in lines]


def read_regions():
    """NAME -> (text, [source files]) from every examples/readme/*.cpp."""
    regions = {}
    for path in sorted(glob.glob(SOURCES)):
        rel = os.path.relpath(path, ROOT)
        name, body = None, []
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                line = line.rstrip("\n")
                if name is None:
                    m = REGION_BEGIN.match(line)
                    if m and m.group(1) != "end":
                        name, body, start = m.group(1), [], number
                elif REGION_END.match(line):
                    parts, files = regions.setdefault(name, ([], []))
                    parts.append("\n".join(dedent(body)).strip("\n"))
                    if rel not in files:
                        files.append(rel)
                    name = None
                elif REGION_BEGIN.match(line):
                    fail(f"{rel}:{number}: region '{name}' (line {start}) is not closed by // [readme:end]")
                else:
                    body.append(line)
        if name is not None:
            fail(f"{rel}:{start}: region '{name}' is not closed by // [readme:end]")
    return {name: ("\n\n".join(parts), files) for name, (parts, files) in regions.items()}


def program_output(program, name):
    try:
        run = subprocess.run([program, name], capture_output=True, text=True, timeout=120)
    except OSError as e:
        fail(f"cannot run {program} ({e}); build it first: cmake --build build/test --target readme_samples")
    if run.returncode != 0:
        fail(f"`{program} {name}` exited with {run.returncode}:\n{run.stderr}")
    return "\n".join(line.rstrip() for line in run.stdout.splitlines()).strip("\n")


def find_blocks(lines):
    """[(kind, name, section heading, first content line index, end fence line index)] in README order."""
    blocks, section = [], "(top)"
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            section = line.lstrip("#").strip()
        m = MARKER.match(line)
        if m:
            if i + 1 >= len(lines) or not lines[i + 1].startswith("```"):
                fail(f"README.md:{i + 1}: marker {line.strip()} must be followed directly by a ``` fenced block")
            end = i + 2
            while end < len(lines) and not lines[end].startswith("```"):
                end += 1
            if end == len(lines):
                fail(f"README.md:{i + 2}: fenced block after {line.strip()} is not closed")
            blocks.append((m.group(1), m.group(2), section, i + 2, end))
            i = end
        i += 1
    return blocks


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--program", default=DEFAULT_PROGRAM, help="the built readme_samples program")
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 when README.md differs")
    parser.add_argument("--regenerate-command", default="cmake --build build/test --target regenerate",
                        help="the command named in --check's failure message")
    args = parser.parse_args()

    regions = read_regions()
    with open(README, encoding="utf-8") as f:
        lines = f.read().split("\n")
    blocks = find_blocks(lines)

    problems, used = [], set()
    # Rewrite from the last block up, so earlier line indices stay valid.
    for kind, name, section, first, end in reversed(blocks):
        if kind == "readme":
            if name not in regions:
                fail(f"README.md section '{section}': <!-- readme:{name} --> names no // [readme:{name}] region "
                     f"in {os.path.relpath(SOURCES, ROOT)}")
            want, files = regions[name]
            origin = ", ".join(files)
            used.add(name)
        else:
            want = program_output(args.program, name)
            origin = f"the output of `readme_samples {name}`"
        have = "\n".join(lines[first:end])
        if have != want:
            diff = "\n".join(difflib.unified_diff(have.split("\n"), want.split("\n"), "README.md", origin, lineterm=""))
            problems.append(f"README.md section '{section}' (line {first + 1}, <!-- {kind}:{name} -->) differs from "
                            f"{origin}:\n{diff}")
            lines[first:end] = want.split("\n")
    unplaced = [f"region '{name}' in {', '.join(regions[name][1])} has no <!-- readme:{name} --> block in README.md"
                for name in sorted(set(regions) - used)]

    if args.check:
        if problems or unplaced:
            print("\n\n".join(problems[::-1] + unplaced), file=sys.stderr)
            fail(f"README.md is out of date; regenerate it with:\n    {args.regenerate_command}")
        print(f"update_readme.py: README.md's {len(blocks)} generated blocks match their sources")
        return
    with open(README, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    for message in unplaced:
        print(f"update_readme.py: warning: {message}; add the marker to README.md by hand", file=sys.stderr)
    print(f"update_readme.py: rewrote {len(problems)} of README.md's {len(blocks)} generated blocks")


if __name__ == "__main__":
    main()
