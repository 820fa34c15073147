#!/usr/bin/env python3
"""The include graph of src/ against the layer table in docs/ARCHITECTURE.md.

The table (the fenced block under "## Layers") names each folder of src/ and the layers its files
may include. A file may include its own layer, the layers its row names and the public header
hfx/hfx.h. Within a layer, one subfolder (a backend such as fmt/onnx) may not include another
(fmt/openvino): siblings share code only through files of the layer itself. tools/ may include
only hfx/hfx.h and its own headers. Any other edge, and any folder of src/ the table does not
name, is a failure listed with file and line. Exit 0 when the graph matches, 1 otherwise.
"""
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_table(doc: Path) -> dict[str, set[str]]:
    text = doc.read_text()
    section = text.split("\n## Layers", 1)
    if len(section) < 2:
        sys.exit(f"{doc}: no '## Layers' section")
    block = re.search(r"```\n(.*?)```", section[1], re.S)
    if not block:
        sys.exit(f"{doc}: the '## Layers' section has no fenced table")
    table = {}
    for line in block.group(1).splitlines():
        m = re.match(r"^(\w+)\s+may include:\s*(.*)$", line.strip())
        if m:
            deps = {d.strip() for d in m.group(2).split(",") if d.strip() and d.strip() != "nothing"}
            table[m.group(1)] = deps
    if not table:
        sys.exit(f"{doc}: the layer table lists no layer ('<layer>  may include: a, b')")
    return table


def includes(path: Path):
    for no, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        m = INCLUDE.match(line)
        if m:
            yield no, m.group(1)


def check(repo: Path) -> list[str]:
    table = layer_table(repo / "docs" / "ARCHITECTURE.md")
    problems = []
    src = repo / "src"
    for folder in sorted(p.name for p in src.iterdir() if p.is_dir()):
        if folder not in table:
            problems.append(f"src/{folder}/: not in the layer table of docs/ARCHITECTURE.md")
    for name, deps in table.items():
        for d in deps - set(table):
            problems.append(f"docs/ARCHITECTURE.md: layer '{name}' may include '{d}', which is no layer")
    files = sorted(p for p in src.rglob("*") if p.suffix in (".c", ".h", ".def"))
    for f in files:
        rel = f.relative_to(src).parts
        layer, sub = rel[0], (rel[1] if len(rel) > 2 else None)
        for no, inc in includes(f):
            parts = inc.split("/")
            where = f"src/{'/'.join(rel)}:{no}: #include \"{inc}\""
            if inc == "hfx/hfx.h" or len(parts) == 1:
                continue
            target = parts[0]
            if target == layer:
                if sub and len(parts) > 2 and parts[1] != sub:
                    problems.append(f"{where}: {layer}/{sub} reaches into its sibling {layer}/{parts[1]}")
                continue
            if target not in table.get(layer, set()):
                allowed = ", ".join(sorted(table.get(layer, set()))) or "nothing"
                problems.append(f"{where}: layer '{layer}' may not include '{target}' (it may include: {allowed})")
    for f in sorted((repo / "tools").glob("*.[ch]")):
        for no, inc in includes(f):
            if inc != "hfx/hfx.h" and "/" in inc:
                problems.append(f"tools/{f.name}:{no}: #include \"{inc}\": tools use only the public header hfx/hfx.h")
    return problems


def main() -> int:
    problems = check(Path(sys.argv[1]) if len(sys.argv) > 1 else REPO)
    for p in problems:
        print(p)
    print(f"layers: {'ok' if not problems else f'{len(problems)} back edge(s) or unknown layer(s)'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
