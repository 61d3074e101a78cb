#!/usr/bin/env python3
"""The layers three ways: docs/ARCHITECTURE.md's `layers` block, the build's eacgm_stage
links (CMakeLists.txt) and the includes under src/ must agree. Exits 1 naming each
difference: a link the picture does not show (or the reverse), and an include of a stage
the including file's stage does not link, directly or through another."""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
problems = []

doc = (root / "docs/ARCHITECTURE.md").read_text()
block = re.search(r"```layers\n(.*?)```", doc, re.S)
if not block:
    sys.exit("docs/ARCHITECTURE.md: no ```layers block")
documented = {}
for line in block.group(1).splitlines():
    stage, _, links = line.partition(":")
    documented[stage.strip()] = set(links.split())

built = {}
cmake = (root / "CMakeLists.txt").read_text()
for m in re.finditer(r"^eacgm_stage\((eacgm_\w+) (\w+)((?: [^)\n]+)?)\)", cmake, re.M):
    name, stage, rest = m.group(1), m.group(2), m.group(3)
    if name != "eacgm_" + stage:
        problems.append(f"CMakeLists.txt: stage {stage} is built as {name}")
    built[stage] = {a[len("eacgm_"):] for a in rest.split() if a.startswith("eacgm_") and not a.startswith("eacgm_bpf")}

for stage in sorted(set(documented) | set(built)):
    d, b = documented.get(stage), built.get(stage)
    if d is None:
        problems.append(f"stage {stage} is built but not in ARCHITECTURE.md's layers")
    elif b is None:
        problems.append(f"stage {stage} is in ARCHITECTURE.md's layers but not built")
    elif d != b:
        problems.append(f"stage {stage}: ARCHITECTURE.md says it links {sorted(d) or 'nothing'}, "
                        f"CMakeLists.txt {sorted(b) or 'nothing'}")


def seen(stage, links, acc=None):
    acc = set() if acc is None else acc
    for s in links.get(stage, ()):
        if s not in acc:
            acc.add(s)
            seen(s, links, acc)
    return acc


include = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/', re.M)
for stage in built:
    allowed = seen(stage, built) | {stage, "bpf"}
    for path in sorted((root / "src" / stage).glob("*")):
        if path.suffix not in (".h", ".cpp"):
            continue
        for used in include.findall(path.read_text()):
            if used not in allowed:
                problems.append(f"{path.relative_to(root)} includes {used}/, which {stage} does not link")

for p in problems:
    print("layers:", p)
if problems:
    sys.exit(1)
print(f"layers: {len(built)} stages; ARCHITECTURE.md, CMakeLists.txt and the includes agree")
