#!/usr/bin/env bash
# Runs jevjudge's client against jevcompat's reference mock, once per fault, and checks every
# outcome against systemone-wire.md §14's table of expected client outcomes (one
# "PASS <case> → <outcome>" line each). Exits non-zero on any mismatch or panic.
#
# Needs python3 (>= 3.10) and access to PyPI the first time (to install jevcompat into
# .venv-jevcompat, the same venv scripts/jevcompat.sh uses). Extra arguments go to the
# example, e.g. `scripts/peer-mock.sh --only noul-range`.
set -euo pipefail

cd "$(dirname "$0")/.."
. scripts/lib.sh
venv="$PWD/.venv-jevcompat"

# --- jevcompat, installed once into .venv-jevcompat
ensure_venv "$venv" jevcompat 0.1.1 600

timeout 1800 cargo build --quiet -p jevjudge-client --example peer_mock
exec timeout 600 cargo run -q -p jevjudge-client --example peer_mock -- --jevcompat "$venv/bin/jevcompat" "$@"
