#!/usr/bin/env python3
"""Count lines of crates/cli/src/**/*.rs outside test code.

Excluded: files named *_test.rs, eval_cmd/tests.rs, every `#[cfg(test)]`
item that opens a `mod ... {` block (counted from the attribute to the
matching closing brace) and `#[cfg(test)] mod name;` declarations. Prints one line per file, then the total.
"""
import pathlib
import sys

root = pathlib.Path(__file__).resolve().parent.parent / "crates" / "cli" / "src"


def count(path: pathlib.Path) -> int:
    lines = path.read_text().splitlines()
    kept, i = 0, 0
    while i < len(lines):
        if lines[i].strip() == "#[cfg(test)]" and i + 1 < len(lines) and lines[i + 1].lstrip().startswith(("mod ", "pub mod ", "pub(crate) mod ")) and lines[i + 1].rstrip().endswith("{"):
            depth, j = 0, i + 1
            while j < len(lines):
                depth += lines[j].count("{") - lines[j].count("}")
                if depth <= 0:
                    break
                j += 1
            i = j + 1
            continue
        if lines[i].strip() == "#[cfg(test)]" and i + 1 < len(lines) and lines[i + 1].strip().startswith("mod ") and lines[i + 1].strip().endswith(";"):
            i += 2
            continue
        kept += 1
        i += 1
    return kept


def main() -> int:
    total = 0
    rows = []
    for path in sorted(root.rglob("*.rs")):
        rel = path.relative_to(root).as_posix()
        if rel.endswith("_test.rs") or rel == "eval_cmd/tests.rs":
            continue
        n = count(path)
        rows.append((n, rel))
        total += n
    for n, rel in sorted(rows, reverse=True):
        print(f"{n:6} {rel}")
    print(f"{total:6} total")
    return 0


if __name__ == "__main__":
    sys.exit(main())
