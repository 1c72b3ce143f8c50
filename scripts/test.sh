#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run calls exactly this):
#   1. cargo fmt --check
#   2. cargo clippy --all-targets -- -D warnings
#   3. cargo test (unit, integration, property and doc tests; the binary against real
#      HTTP servers on 127.0.0.1)
#   4. the third-party System One conformance suite jevcompat against our fake server
#   5. our client against jevcompat's reference mock with injected faults
#   6. the store suites (crate, service over HTTP, PostgreSQL stopped mid-test) against a real,
#      throwaway PostgreSQL (scripts/pg.sh); cargo test above ran them on SQLite
# Needs Rust, Python 3 and PostgreSQL's server binaries (initdb, pg_ctl); jevcompat is installed from PyPI into .venv-jevcompat.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "reference citations resolve (docs/reference/)"
python3 scripts/check-citations.py

step "cargo fmt --check"
cargo fmt --all --check

step "cargo clippy --all-targets -- -D warnings"
cargo clippy --workspace --all-targets --quiet -- -D warnings

step "cargo test"
cargo test --workspace --quiet

step "jevcompat test against jevjudge fake-server"
bash scripts/conformance.sh

step "jevjudge client against jevcompat mock faults"
bash scripts/peer-mock.sh

step "store suite against a throwaway PostgreSQL (scripts/pg.sh)"
bash scripts/pg.sh -- sh -c 'cargo test --quiet -p jevjudge-store &&
    cargo test --quiet -p jevjudge-serve --test tests store:: &&
    cargo test --quiet -p jevjudge-serve --test store_down'

step "all checks passed"
