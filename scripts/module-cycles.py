#!/usr/bin/env python3
"""Report import cycles between the top-level modules of each crate.

For every crate under crates/ (its src/lib.rs or src/main.rs), every path that starts with
`crate::` or climbs out of a top-level module with `super::` is an edge from the top-level
module the file belongs to, to the top-level module the path names. Paths inside test code
(`#[cfg(test)]` items and files under a module's `tests` submodule) are counted too, and the
edge says so: a cycle through test code only is printed as a note and does not fail.

Usage: scripts/module-cycles.py [--graph] [--allow CRATE:MOD,MOD ...] [crate-dir ...]
Exits 1 when the shipped code has a cycle that is not allowed, 0 otherwise. `--allow` names a
known cycle by its crate and exact module set (it is then printed as known, not failed); an
allowance that matches nothing is printed as stale. Standard library only; reads each file once.
"""

import re
import sys
from pathlib import Path

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
TOKEN = re.compile(
    r"(?P<path>\b(?:crate|super|self)(?:\s*::\s*(?:" + IDENT + r"|\{))+)"
    r"|(?P<mod>\bmod\s+(?P<modname>" + IDENT + r")\s*\{)"
    r"|(?P<cfgtest>#\s*\[\s*cfg\s*\(\s*test\s*\)\s*\])"
    r"|(?P<open>\{)|(?P<close>\})"
)


def strip(src: str) -> str:
    """Blank out comments, strings and char literals, keeping braces of code only."""
    out = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif src.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if src.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif src.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
            out.append(" ")
        elif c == "r" and re.match(r'r#*"', src[i:]) and (i == 0 or not re.match(r"\w", src[i - 1])):
            m = re.match(r'r(#*)"', src[i:])
            end = src.find('"' + m.group(1), i + len(m.group(0)))
            i = n if end < 0 else end + 1 + len(m.group(1))
            out.append('""')
        elif c == '"':
            i += 1
            while i < n and src[i] != '"':
                i += 2 if src[i] == "\\" else 1
            i += 1
            out.append('""')
        elif c == "'":
            m = re.match(r"'(\\.[^']*|[^\\'])'", src[i:])
            if m:
                i += len(m.group(0))
                out.append("' '")
            else:  # a lifetime
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def group_heads(text: str, start: int) -> list[str]:
    """The first segment of every path in the `{...}` group that opens at text[start]."""
    depth, i, item, heads = 0, start, "", []
    while i < len(text):
        c = text[i]
        if c == "{":
            depth += 1
            if depth == 1:
                item = ""
                i += 1
                continue
        elif c == "}":
            depth -= 1
            if depth == 0:
                heads.append(item)
                break
        elif c == "," and depth == 1:
            heads.append(item)
            item = ""
            i += 1
            continue
        if depth == 1:
            item += c
        elif depth > 1 and not item.strip():
            pass
        i += 1
    result = []
    for h in heads:
        m = re.match(r"\s*(" + IDENT + r")", h)
        if m:
            result.append(m.group(1))
    return result


def module_files(src_dir: Path, root: Path):
    """Yield (file, top-level module, depth of the file's module below the crate root)."""
    for f in sorted(src_dir.rglob("*.rs")):
        if f == root or f.parent.name == "bin" and f.parent.parent == src_dir:
            continue
        rel = f.relative_to(src_dir).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "mod":
            parts = parts[:-1]
        if not parts:
            continue
        yield f, parts[0], parts


def reexports(root_text: str, modules: set[str]) -> dict[str, str]:
    """Names the crate root imports or re-exports (`pub use module::{A, b::C}`), mapped to
    their module: `crate::A` reaches them too."""
    names = {}
    for stmt in re.findall(r"(?:^|[;}\s])(?:pub(?:\([^)]*\))?\s+)?use\s+([^;]*);", strip(root_text)):
        stmt = re.sub(r"^\s*(?:crate|self)\s*::", "", stmt)
        m = re.match(r"\s*(" + IDENT + r")\s*::(.*)", stmt, re.S)
        if not m or m.group(1) not in modules:
            continue
        rest = re.sub(r"\b" + IDENT + r"\s+as\s+(" + IDENT + r")", r"\1", m.group(2))
        for name in re.findall(r"(" + IDENT + r")\s*(?=[,}]|$)", rest.strip()):
            names[name] = m.group(1)
    return names


def edges_of(text: str, file_parts: list[str], top: str, modules: dict[str, str]):
    """Edges (target, in_test) from one file."""
    text = strip(text)
    stack = []  # (kind, is_test) per open brace; kind "mod" for inline modules
    pending_test = False
    inline = []  # names of the inline modules we are in
    test_depth = 1 if "tests" in file_parts[1:] else 0
    found = []
    for m in TOKEN.finditer(text):
        if m.group("cfgtest"):
            pending_test = True
        elif m.group("mod"):
            stack.append(("mod", pending_test))
            inline.append(m.group("modname"))
            if pending_test:
                test_depth += 1
            pending_test = False
        elif m.group("open"):
            stack.append(("block", pending_test))
            if pending_test:
                test_depth += 1
            pending_test = False
        elif m.group("close"):
            if stack:
                kind, was_test = stack.pop()
                if kind == "mod":
                    inline.pop()
                if was_test:
                    test_depth -= 1
        elif m.group("path"):
            if m.group("path").endswith("{"):
                # `use crate::a::{b, c}`: the group's brace is closed by a `}` like any other.
                stack.append(("block", False))
            segs = [s.strip() for s in re.split(r"::", m.group("path"))]
            in_test = test_depth > 0
            # where the path starts: a list of module names from the crate root
            here = file_parts + inline
            if segs[0] == "crate":
                base, rest = [], segs[1:]
            else:
                base, rest = list(here), segs
                while rest and rest[0] in ("super", "self"):
                    if rest[0] == "super":
                        if not base:
                            break
                        base.pop()
                    rest = rest[1:]
            if base:
                continue  # stays inside a top-level module
            if not rest:
                continue
            if rest[0] == "{":
                heads = group_heads(text, m.end() - 1)
            else:
                heads = [rest[0]]
            for h in heads:
                target = modules.get(h)
                if target is not None and target != top:
                    found.append((target, in_test))
            pending_test = False
    return found


def crate_graph(crate_dir: Path):
    src = crate_dir / "src"
    root = src / "lib.rs" if (src / "lib.rs").exists() else src / "main.rs"
    if not root.exists():
        return None
    modules = set(re.findall(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(" + IDENT + r")\s*;",
                             root.read_text(), re.M))
    graph = {m: {} for m in modules}
    # a path may name a module or a name the root re-exports from one
    names = {m: m for m in modules}
    names.update(reexports(root.read_text(), modules))
    for f, top, parts in module_files(src, root):
        if top not in modules:
            continue
        for target, in_test in edges_of(f.read_text(), parts, top, names):
            prev = graph[top].get(target)
            # an edge is "test" only if every use of it is in test code
            graph[top][target] = in_test if prev is None else (prev and in_test)
    return graph


def cycles(graph):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main(argv):
    show_graph = "--graph" in argv
    allowed, dirs, args = set(), [], iter(argv)
    for a in args:
        if a == "--allow":
            crate, _, mods = next(args, "").partition(":")
            allowed.add((crate, frozenset(mods.split(","))))
        elif not a.startswith("--"):
            dirs.append(Path(a))
    used = set()
    if not dirs:
        here = Path(__file__).resolve().parent.parent / "crates"
        dirs = sorted(p for p in here.iterdir() if (p / "Cargo.toml").exists())
    found = 0
    for d in dirs:
        graph = crate_graph(d)
        if graph is None:
            continue
        if show_graph:
            for m in sorted(graph):
                if graph[m]:
                    targets = ", ".join(t + (" (test)" if graph[m][t] else "")
                                        for t in sorted(graph[m]))
                    print(f"{d.name}: {m} -> {targets}")
        # Cycles of the code that ships fail the check; those that exist only through test
        # code (a test module using a test-support module that imports it back) are noted.
        shipped = {m: {t: False for t, test in ts.items() if not test} for m, ts in graph.items()}
        for comp in cycles(shipped):
            inside = set(comp)
            edges = [f"{a} -> {b}" for a in comp for b in sorted(shipped[a]) if b in inside]
            key = (d.name, frozenset(comp))
            if key in allowed:
                used.add(key)
                print(f"{d.name}: known cycle (allowed) between {', '.join(comp)}: {'; '.join(edges)}")
                continue
            found += 1
            print(f"{d.name}: cycle between {', '.join(comp)}: {'; '.join(edges)}")
        shipped_sets = [set(c) for c in cycles(shipped)]
        for comp in cycles(graph):
            if any(set(comp) <= s for s in shipped_sets):
                continue
            inside = set(comp)
            edges = [f"{a} -> {b}" + (" (test)" if graph[a][b] else "")
                     for a in comp for b in sorted(graph[a]) if b in inside]
            print(f"{d.name}: note: cycle through test code only, between {', '.join(comp)}: "
                  f"{'; '.join(edges)}")
    for crate, mods in sorted(allowed - used, key=lambda k: (k[0], sorted(k[1]))):
        print(f"{crate}: note: stale --allow {crate}:{','.join(sorted(mods))} (no such cycle now)")
    if not found:
        print("no module cycles" + (" (but for the allowed ones)" if used else ""))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
