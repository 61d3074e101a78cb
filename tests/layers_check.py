#!/usr/bin/env python3
"""The layers three ways: docs/ARCHITECTURE.md's `layers` block, the build's eacgm_stage
links (CMakeLists.txt) and the includes under src/ must agree. Exits 1 naming each
difference: a link the picture does not show (or the reverse), and an include of a stage
the including file's stage does not link, directly or through another. Every file under a
stage's folder is checked, sub-folders included; governance's parts (cmake/govern.cmake:
govern/hookcore, govern/protocol, govern/hook, govern/sched) are stages of their own, and
so are the programs' entry points (src/main.cpp and the others a target builds alone)."""
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

# Targets defined outside eacgm_stage: governance's libraries and the programs. What each
# links (target_link_libraries) or sees (a layer include directory) becomes its stages.
build_text = cmake + "".join(p.read_text() for p in sorted((root / "cmake").glob("*.cmake")))
source_globs = {m.group(1): m.group(2) for m in re.finditer(
    r"file\(GLOB(?:_RECURSE)? (\w+) CONFIGURE_DEPENDS \$\{CMAKE_SOURCE_DIR\}/src/([\w/]+)/\*\.cpp\)", build_text)}
target_dir = {}   # target -> the stage its sources are: "govern/hook"
entry_files = {}  # target -> a program's own file under src/: "main.cpp"
for m in re.finditer(r"(?:add_library|add_executable|pybind11_add_module)\(([\w-]+)((?:\s+[^)\s]+)*)\)", build_text):
    target, args = m.group(1), m.group(2).split()
    for a in args:
        glob = re.fullmatch(r"\$\{(\w+)\}", a)
        if glob and glob.group(1) in source_globs:
            target_dir[target] = source_globs[glob.group(1)]
        own = re.fullmatch(r"\$\{CMAKE_SOURCE_DIR\}/src/([\w/]+\.cpp)", a)
        if own and target not in target_dir:
            entry_files.setdefault(target, []).append(own.group(1))
stage_of_target = {f"eacgm_{s}": s for s in built}
stage_of_target.update(target_dir)
target_links = {}
for m in re.finditer(r"target_(link_libraries|include_directories)\(([\w-]+)((?:\s+[^)\s]+)*)\)", build_text):
    for a in m.group(3).split():
        layer = re.fullmatch(r"\$\{CMAKE_BINARY_DIR\}/layers/(\w+)", a)
        if a in stage_of_target:
            target_links.setdefault(m.group(2), set()).add(stage_of_target[a])
        elif layer and layer.group(1) in built:
            target_links.setdefault(m.group(2), set()).add(layer.group(1))
links = dict(built)
for target, stage in target_dir.items():
    links[stage] = target_links.get(target, set()) - {stage}
if not any(s.startswith("govern/") for s in links):
    problems.append("cmake/govern.cmake: no governance library found (its file(GLOB ...) lines changed?)")


def seen(stage, links, acc=None):
    acc = set() if acc is None else acc
    for s in links.get(stage, ()):
        if s not in acc:
            acc.add(s)
            seen(s, links, acc)
    return acc


include = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/(?:([a-z_]+)/)?', re.M)


def check(path, stage, allowed):
    for top, sub in include.findall(path.read_text()):
        used = f"{top}/{sub}" if top == "govern" and sub else top
        if used not in allowed:
            problems.append(f"{path.relative_to(root)} includes {used}/, which {stage} does not link")


stage_dirs = {s: root / "src" / s for s in links}
for stage, folder in sorted(stage_dirs.items()):
    allowed = seen(stage, links) | {stage, "bpf"}
    inner = {s for s in stage_dirs if s.startswith(stage + "/")}
    for path in sorted(folder.rglob("*")):
        if path.suffix not in (".h", ".cpp"):
            continue
        owner = path.relative_to(root / "src").parent.as_posix()
        if any(owner == s or owner.startswith(s + "/") for s in inner):
            continue  # a stage of its own (govern/hook inside govern)
        check(path, stage, allowed)

for target, files in sorted(entry_files.items()):
    stages = target_links.get(target, set())
    allowed = set().union(*(seen(s, links) | {s} for s in stages)) | {"bpf"} if stages else {"bpf"}
    for f in files:
        check(root / "src" / f, target, allowed)

for p in problems:
    print("layers:", p)
if problems:
    sys.exit(1)
print(f"layers: {len(links)} stages and {len(entry_files)} programs; ARCHITECTURE.md, the build and "
      "the includes agree")
