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
#   7. `jevjudge serve` against its own /openapi.json with schemathesis (scripts/api-conformance.sh)
#   8. a short coverage-guided fuzzing run of every parser (scripts/fuzz.sh, FUZZ_SECONDS=20 each)
#   9. the HTML report in headless Chromium at 1280 and 800 px (scripts/html-check.sh); Debian's
#      chromium is installed with apt-get when /usr/bin/chromium is missing (CI runs as root)
#  10. the reviewer pages (/ui/) in Chromium driven over WebDriver (scripts/ui-check.sh; installs
#      Debian's chromium-driver with apt-get when chromedriver is missing)
#  11. the review loop of issue 13 end to end, offline (scripts/review-loop.sh: the sms-spam
#      recording replayed, reviews queued, a scripted reviewer, export, eval, calibrate, the
#      new definition reloaded on SIGHUP); fails when a step's figures are wrong
# Needs Rust (stable), Python 3 and PostgreSQL 15's server binaries (initdb, pg_ctl); jevcompat and schemathesis are installed from PyPI into
# .venv-jevcompat and .venv-schemathesis. See docs/testing.md.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "reference citations resolve (docs/reference/)"
python3 scripts/check-citations.py

step "no import cycles between the modules of a crate (scripts/module-cycles.py)"
python3 scripts/module-cycles.py

step "cargo fmt --check"
cargo fmt --all --check
rustfmt --edition 2024 --check fuzz/fuzz_targets/*.rs

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
    cargo test --quiet -p jevjudge-serve --test tests -- store:: queue:: &&
    cargo test --quiet -p jevjudge-serve --test store_down &&
    cargo test --quiet -p jevjudge-serve --test store_down_queue'

step "serve against its OpenAPI document (schemathesis)"
bash scripts/api-conformance.sh

step "fuzzing: ${FUZZ_SECONDS:-20} s per target"
bash scripts/fuzz.sh

step "HTML report in headless Chromium (1280 and 800 px)"
if [ ! -x /usr/bin/chromium ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium
fi
bash scripts/html-check.sh

step "reviewer pages in Chromium over WebDriver (scripts/ui-check.sh)"
bash scripts/ui-check.sh

step "the review loop end to end (scripts/review-loop.sh: replay, queue, reviewer, export, eval, calibrate, SIGHUP)"
bash scripts/review-loop.sh

step "all checks passed"
