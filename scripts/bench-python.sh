#!/usr/bin/env bash
# The Python package's overhead against the Rust binary on the same run: 2,000 cases with the
# in-process fake (`eval --fake`, no network), three times each, as
#   1. the binary:                 jevjudge eval --fake
#   2. the Python API:             python -c 'jevjudge.evaluate(..., fake=True)'
#   3. the wheel's console script: .venv-python/bin/jevjudge eval --fake
# and `import jevjudge` alone. Prints wall seconds and peak resident memory (GNU time's %M).
# Both are built in one profile: PROFILE=dev (default) or PROFILE=release (a long build).
# Usage: scripts/bench-python.sh   (builds the binary and the wheel; writes target/bench-python/)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
settings PROFILE=dev
out_dir bench-python
venv=$PWD/.venv-python
[[ -x "$venv/bin/maturin" ]] || { echo "run scripts/python.sh first (it makes .venv-python)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "needs GNU time (/usr/bin/time): apt-get install time" >&2; exit 2; }

profile=$PROFILE # build_jevjudge sets PROFILE to the target's directory name (debug)
if [[ "$profile" == release ]]; then build_jevjudge release; else build_jevjudge debug; fi
rm -f "$out"/jevjudge-*.whl
CARGO_TARGET_DIR=$TARGET_DIR "$venv/bin/maturin" build --quiet --profile "$profile" --out "$out" 2>/dev/null
"$venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps "$out"/jevjudge-*.whl
printf 'wheel (%s): %s bytes\n' "$profile" "$(stat -c %s "$out"/jevjudge-*.whl)"

cases=$out/cases-2000.jsonl
make_refund_cases 2000 "$cases"
definition=examples/refund/definition.toml

measure() { # LABEL COMMAND...: three runs, "LABEL wall S s, peak RSS K KiB" each
    local label=$1
    shift
    for _ in 1 2 3; do
        /usr/bin/time -f "$label wall %e s, peak RSS %M KiB" -o "$out/time.txt" "$@" >"$out/stdout.txt" 2>"$out/stderr.txt"
        cat "$out/time.txt"
    done
}
measure "binary        " "$JEVJUDGE" eval --definition "$definition" --cases "$cases" --fake
measure "python API    " "$venv/bin/python" -c "import sys, jevjudge
r = jevjudge.evaluate(sys.argv[1], sys.argv[2], fake=True, progress=False)
assert r.summary['overall']['total'] == 2000" "$definition" "$cases"
measure "console script" "$venv/bin/jevjudge" eval --definition "$definition" --cases "$cases" --fake
measure "import only   " "$venv/bin/python" -c "import jevjudge"
