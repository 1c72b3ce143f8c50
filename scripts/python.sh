#!/usr/bin/env bash
# The Python package (`pip install jevjudge`, crates/python + python/):
#   1. a local virtualenv .venv-python with maturin, pytest, mypy, pandas, tqdm and Ray Data
#      from PyPI (pinned; installed again only when a pin changes);
#   2. the wheel built with maturin into the shared target directory ($CARGO_TARGET_DIR, else
#      target/), in the dev profile (the release build is what `pip install .` makes), then
#      installed into the virtualenv;
#   3. pytest on python/tests: the API against the CLI's JSON and figures, errors, 8 threads
#      sharing one Judge and 1,000 concurrent review_async calls against `jevjudge fake-server`,
#      the pytest plugin on the sms-spam cases, the console script's flags and exit codes, and
#      the Ray Data example (examples/ray/) on a local Ray with two actors and two fake servers;
#   4. mypy's stubtest: the stubs (python/jevjudge/_native.pyi) against the compiled module,
#      then `mypy --strict` on the package's Python sources.
# Part of scripts/test.sh. Run: scripts/python.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '==> %s\n' "$*"; }

venv=$PWD/.venv-python
pins=(maturin==1.16.0 pytest==9.2.0 mypy==2.4.1 pandas==3.1.1 tqdm==4.70.1 "ray[data]==2.60.0")
installed=$("$venv/bin/python" -m pip freeze --disable-pip-version-check 2>/dev/null || true)
missing=0
for pin in "${pins[@]}"; do
    grep -qix "${pin/\[*\]/}" <<<"$installed" || missing=1
done
if [[ $missing == 1 ]]; then
    step "installing ${pins[*]} into .venv-python"
    timeout 120 python3 -m venv "$venv"
    timeout 600 "$venv/bin/pip" install --quiet --disable-pip-version-check "${pins[@]}"
fi

export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
wheels=$CARGO_TARGET_DIR/wheels
step "maturin build --profile dev (crates/python, abi3) into $wheels"
rm -f "$wheels"/jevjudge-*.whl
"$venv/bin/maturin" build --profile dev --out "$wheels"
wheel=$(ls "$wheels"/jevjudge-*.whl)
printf 'wheel: %s (%s bytes)\n' "$wheel" "$(stat -c %s "$wheel")"
"$venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheel"

step "pytest python/tests"
(cd python/tests && "$venv/bin/python" -m pytest -p no:cacheprovider -q "$@")

step "mypy stubtest jevjudge._native (the stubs against the compiled module)"
"$venv/bin/python" -m mypy.stubtest --ignore-disjoint-bases jevjudge._native

step "mypy --strict on python/jevjudge"
(cd python && "$venv/bin/python" -m mypy --strict --cache-dir "$CARGO_TARGET_DIR/mypy-cache" jevjudge)
