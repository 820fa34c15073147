#!/usr/bin/env python3
"""The shape of src/, as docs/ARCHITECTURE.md's style rules state it.

  * no function in src/ longer than 120 lines, none in src/arch/ longer than 80 (a function is
    counted from its opening line to its closing brace at column 0);
  * no descriptor struct in src/arch/ (a typedef'd struct whose name ends in `_desc`) with more
    than 40 fields or more than 12 booleans: a descriptor holds data, and a model's difference
    is a value of a shared field, not a flag of its own;
  * nothing in src/ recovers state from a name: no strncmp or sscanf against a cache-name
    literal ("cache.", "past_key_values", "present").

Exit 0 when the tree fits, 1 with each offence listed as file:line otherwise.
"""
import re
import sys
from pathlib import Path

REPO = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else Path(__file__).resolve().parents[2]
MAX_LINES = {"arch": 80}
MAX_LINES_DEFAULT = 120
MAX_FIELDS, MAX_BOOLS = 40, 12
FUNC_START = re.compile(r"^(?!static\s+const\b)(?:static\s+|inline\s+)*[A-Za-z_][\w\s\*]*?\b(\w+)\s*\([^;]*$")
NAME_PARSE = re.compile(r'\b(strncmp|sscanf)\s*\([^;]*"(cache\.|past_key_values|present)')


def functions(text: str):
    """(name, first line, line count) of each function defined at file scope."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = FUNC_START.match(lines[i])
        if m and not lines[i].startswith((" ", "\t", "#", "/", "*", "}")):
            j = i
            while j < len(lines) and "{" not in lines[j] and ";" not in lines[j]:
                j += 1
            if j < len(lines) and "{" in lines[j] and not lines[j].rstrip().endswith("};"):
                if lines[j].rstrip().endswith("}") and lines[j].count("{") == lines[j].count("}"):
                    i = j + 1
                    continue
                k = j + 1
                while k < len(lines) and not lines[k].startswith("}"):
                    k += 1
                yield m.group(1), i + 1, k - i + 1
                i = k + 1
                continue
        i += 1


def descriptor_fields(text: str):
    """(name, first line, fields, booleans) of each `typedef struct ..._desc {...} ..._desc;`."""
    for m in re.finditer(r"typedef struct (\w+_desc) \{(.*?)\n\} \1;", text, re.S):
        body = re.sub(r"/\*.*?\*/", "", m.group(2), flags=re.S)
        fields = bools = 0
        for decl in body.split(";"):
            decl = decl.strip()
            if not decl:
                continue
            names = [n for n in decl.split(",")]
            fields += len(names)
            if re.match(r"^bool\b", decl):
                bools += len(names)
        yield m.group(1), text[: m.start()].count("\n") + 1, fields, bools


def check(repo: Path) -> list[str]:
    problems = []
    for f in sorted((repo / "src").rglob("*.[ch]")):
        rel = f.relative_to(repo)
        layer = rel.parts[1]
        text = f.read_text(errors="replace")
        limit = MAX_LINES.get(layer, MAX_LINES_DEFAULT)
        if f.suffix == ".c":
            for name, line, n in functions(text):
                if n > limit:
                    problems.append(f"{rel}:{line}: {name} is {n} lines (at most {limit} in src/{layer}/)")
        if layer == "arch":
            for name, line, n, b in descriptor_fields(text):
                if n > MAX_FIELDS or b > MAX_BOOLS:
                    problems.append(f"{rel}:{line}: {name} has {n} fields, {b} booleans "
                                    f"(at most {MAX_FIELDS} and {MAX_BOOLS})")
        for no, l in enumerate(text.splitlines(), 1):
            if NAME_PARSE.search(l):
                problems.append(f"{rel}:{no}: state recovered from a name ({l.strip()[:60]})")
    return problems


def main() -> int:
    problems = check(REPO)
    for p in problems:
        print(p)
    print("shape: ok" if not problems else f"shape: {len(problems)} offence(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
