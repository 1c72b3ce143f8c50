#!/usr/bin/env python3
"""Every citation of the project's reference resolves to an anchor in docs/reference/.

Finds, in the repository's source, scripts and docs, the citations "rule N" / "rules N, M–K",
"§N" / "§N.M" / "§3a" (of the document named earlier on the same line, else of any of the three),
"§13 item N", "F1".."F6" and "D1".."D12", and checks that each has an `<a id="…">` anchor in
docs/reference/{judge-contract,systemone-wire,cli-and-formats}.md.

Also checks that every file path the README and the pages under docs/ mention exists: relative
markdown link targets, and paths under the repository's top-level folders (`scripts/…`,
`crates/…`, `docs/…`, `examples/…`, `deploy/…`, `fuzz/…`, `.ci/…`) wherever they appear, with
`{a,b}` alternatives expanded and `*` matched as a glob. Paths holding a placeholder in capitals
(`fuzz/corpus/TARGET/`) or `…` are not files and are skipped; `target/` is build output.

Exit 1 listing every citation that does not resolve and every path that does not exist.
Usage: scripts/check-citations.py [ROOT]
"""
import glob
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
ref = os.path.join(root, "docs", "reference")
docs = ["judge-contract", "systemone-wire", "cli-and-formats"]
anchors = {}
for d in docs:
    with open(os.path.join(ref, d + ".md"), encoding="utf-8") as f:
        anchors[d] = set(re.findall(r'<a id="([^"]+)"></a>', f.read()))

SKIP_DIRS = {".git", "target", "node_modules", "corpus", "artifacts"}
EXTS = (".rs", ".md", ".sh", ".py", ".toml", ".html", ".yml", ".yaml")
NUM = r"(\d+)"
token = re.compile(
    r"(?P<doc>judge-contract|systemone-wire|cli-and-formats)"
    r"|§\s?(?P<sec>\d+[a-z]?(?:\.\d+)?)(?:\s+items?\s+(?P<item>\d+))?"
    r"|\brules?\s+(?P<rules>\d+(?:\s*(?:,|–|-|and|to)\s*\d+)*)"
    r"|\b(?P<fd>[FD])(?P<fdn>\d{1,2})\b"
)

problems = []
count = 0


def has(doc, anchor):
    return anchor in anchors[doc]


for dirpath, dirnames, filenames in os.walk(root):
    dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not d.startswith(".venv")]
    rel_dir = os.path.relpath(dirpath, root)
    if rel_dir.startswith(os.path.join("docs", "reference")):
        continue
    for name in filenames:
        if not name.endswith(EXTS):
            continue
        path = os.path.join(dirpath, name)
        rel = os.path.relpath(path, root)
        if rel == os.path.join("scripts", "check-citations.py"):
            continue
        try:
            text = open(path, encoding="utf-8").read()
        except (UnicodeDecodeError, OSError):
            continue
        for lineno, line in enumerate(text.splitlines(), 1):
            doc = None
            for m in token.finditer(line):
                where = f"{rel}:{lineno}: {m.group(0)!r}"
                if m.group("doc"):
                    doc = m.group("doc")
                    continue
                if m.group("sec"):
                    sec = m.group("sec").replace(".", "-")
                    anchor = "s" + sec
                    if m.group("item"):
                        anchor += "-" + m.group("item")
                    ok = has(doc, anchor) if doc else any(has(d, anchor) for d in docs)
                    count += 1
                    if not ok:
                        problems.append(f"{where}: no anchor #{anchor} in {doc or 'any document'}")
                elif m.group("rules"):
                    if doc not in (None, "judge-contract"):
                        continue  # e.g. "joining rules 2–4" of systemone-wire §1
                    parts = re.split(r"\s*(,|–|-|and|to)\s*", m.group("rules"))
                    nums = [int(p) for p in parts[::2]]
                    seps = parts[1::2]
                    expanded = [nums[0]]
                    for sep, n in zip(seps, nums[1:]):
                        if sep in ("–", "-", "to") and n >= expanded[-1]:
                            expanded.extend(range(expanded[-1] + 1, n + 1))
                        else:
                            expanded.append(n)
                    for n in expanded:
                        count += 1
                        if not has("judge-contract", f"rule-{n}"):
                            problems.append(f"{where}: no judge-contract rule {n}")
                elif m.group("fd"):
                    letter, n = m.group("fd"), int(m.group("fdn"))
                    count += 1
                    if not has("judge-contract", f"{letter.lower()}{n}"):
                        problems.append(f"{where}: no judge-contract {letter}{n}")

TOP = r"(?:scripts|crates|docs|examples|deploy|fuzz|\.ci)"
path_token = re.compile(r"(?<![\w./~$-])(" + TOP + r"/[\w.{},*@+-]*(?:/[\w.{},*@+-]*)*)")
link = re.compile(r"\]\(([^)\s]+)\)")
placeholder = re.compile(r"(?:^|/)[A-Z][A-Z0-9_]*(?:/|$|\.)|…")
path_problems = []
path_count = 0


def expand(token):
    m = re.search(r"\{([^{}]*)\}", token)
    if not m:
        return [token]
    out = []
    for alt in m.group(1).split(","):
        out.extend(expand(token[: m.start()] + alt + token[m.end() :]))
    return out


def exists(rel):
    rel = rel.rstrip("/")
    full = os.path.join(root, rel)
    if "*" in rel:
        return bool(glob.glob(full))
    return os.path.exists(full)


def check_path(rel, where):
    global path_count
    path_count += 1
    if not exists(rel):
        path_problems.append(f"{where}: no such file or directory: {rel}")


md_files = [os.path.join(root, "README.md")]
for dirpath, _, filenames in os.walk(os.path.join(root, "docs")):
    md_files += [os.path.join(dirpath, n) for n in filenames if n.endswith(".md")]
for path in sorted(md_files):
    rel_file = os.path.relpath(path, root)
    base = os.path.dirname(rel_file)
    for lineno, line in enumerate(open(path, encoding="utf-8").read().splitlines(), 1):
        for m in link.finditer(line):
            target = m.group(1).split("#", 1)[0]
            if not target or re.match(r"[a-z]+:", target):
                continue
            check_path(os.path.normpath(os.path.join(base, target)), f"{rel_file}:{lineno}")
        for m in path_token.finditer(line):
            token = m.group(1).rstrip(".,:;")
            if placeholder.search(token):
                continue
            for rel in expand(token):
                check_path(rel, f"{rel_file}:{lineno}")

if problems or path_problems:
    if problems:
        print(f"{len(problems)} citation(s) without an anchor in docs/reference/:")
        for p in problems:
            print("  " + p)
    if path_problems:
        print(f"{len(path_problems)} path(s) in the README or docs/ that do not exist:")
        for p in path_problems:
            print("  " + p)
    print(f"checked: {count} citations, {path_count} paths")
    sys.exit(1)
print(f"citations: {count} checked, all resolve to docs/reference/")
print(f"paths: {path_count} checked in README.md and docs/, all exist")
