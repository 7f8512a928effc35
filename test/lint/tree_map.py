"""test/lint/tree_map.py — CONTRIBUTING.md's map of the tree against the tree.

The map is the first fenced block of CONTRIBUTING.md's "## Source tree"
section. A line at the left margin names a folder (ending in /) or files at
the top of the tree; an indented line names files of the folder above it,
relative to it. Names are separated by one space; two spaces or more begin
the description, which must not be empty. A name may hold * (any characters
but /) or ** (any characters): a folder's files placed a kind at a time.

Fails (one line per problem, saying what to write where) when
  - a file under src/ (but src/sql/released/), test/, bench/ or lib/, tracked
    or new (git ls-files -co --exclude-standard), is placed by no name;
  - a name places no file, or a folder line names no folder;
  - a line has no description.

    python3 test/lint/tree_map.py [CONTRIBUTING.md]
"""
import os
import re
import subprocess
import sys

CHECKED = ("src/", "test/", "bench/", "lib/")
ASIDE = ("src/sql/released/",)


def pattern(name):
    """A map name as a regular expression over paths."""
    out = []
    for part in re.split(r"(\*\*|\*)", name):
        out.append({"**": ".*", "*": "[^/]*"}.get(part, re.escape(part)))
    return re.compile("".join(out) + r"\Z")


def read_map(path):
    """[(line number, folder, name, description)] from the map's block."""
    lines = open(path, encoding="utf-8").read().split("\n")
    try:
        start = lines.index("## Source tree")
    except ValueError:
        sys.exit(f"{path}: no '## Source tree' section")
    i = start + 1
    while i < len(lines) and not lines[i].startswith("```"):
        if lines[i].startswith("## "):
            sys.exit(f"{path}: the '## Source tree' section has no ``` block")
        i += 1
    entries, folder = [], ""
    for n in range(i + 1, len(lines)):
        line = lines[n]
        if line.startswith("```"):
            return entries
        if not line.strip():
            continue
        indented = line[0] == " "
        names, _, description = line.strip().partition("  ")
        for name in names.split(" "):
            if not indented and name.endswith("/"):
                folder = name
                entries.append((n + 1, None, name, description.strip()))
            else:
                if not indented:
                    folder = ""
                entries.append((n + 1, folder, name, description.strip()))
    sys.exit(f"{path}: the map's ``` block never ends")


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "CONTRIBUTING.md"
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], check=True,
                           capture_output=True, text=True).stdout.split("\n")
    files = sorted(f for f in files if f and os.path.exists(f))
    entries = read_map(path)
    problems = []
    placed = set()
    folders = []
    for n, folder, name, description in entries:
        if not description:
            problems.append(f"{path}:{n}: {name} has no description: two spaces, then one line on what it is")
        if folder is None:
            if not os.path.isdir(name):
                problems.append(f"{path}:{n}: the map names the folder {name}, which is not in the tree: "
                                "remove or rename its line")
            folders.append(name)
            continue
        rx = pattern(folder + name)
        hits = [f for f in files if rx.match(f)]
        if not hits:
            problems.append(f"{path}:{n}: the map names {folder}{name}, which places no file: "
                            "remove its line, or rename it with the file")
        placed.update(hits)
    for f in files:
        if not f.startswith(CHECKED) or f.startswith(ASIDE) or f in placed:
            continue
        under = max((d for d in folders if f.startswith(d)), key=len, default=None)
        if under is None:
            under = f.split("/")[0] + "/"
            problems.append(f"{f} is not on {path}'s map (## Source tree): add a line '{under}  what the "
                            f"folder holds' at the left margin, and under it '  {f[len(under):]}  "
                            "one line on what it is'")
        else:
            rel = f[len(under):]
            folder = f" (or '  {rel.split('/')[0]}/**  what the folder holds', for a folder of one kind)" \
                if "/" in rel else ""
            problems.append(f"{f} is not on {path}'s map (## Source tree): add the line "
                            f"'  {rel}  one line on what it is' under '{under}'{folder}")
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"{path}: the map places {len([f for f in files if f.startswith(CHECKED) and not f.startswith(ASIDE)])} "
          f"files of {', '.join(CHECKED)} with {len(entries)} names")
    return 0


if __name__ == "__main__":
    sys.exit(main())
