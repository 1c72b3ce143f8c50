#!/usr/bin/env bash
# Runs the third-party conformance suite jevcompat 0.1.1 against `jevjudge fake-server`, once
# without a key and once with one (systemone-wire.md §13 item 9 and §14).
#
# Passes when both runs exit 0 (conformant: every applicable MUST holds) and the only failed
# SHOULD, if any, is errors.validation-shape: the live API (and so the fake) answers 400, not
# 422, to an unknown question type and to too many options or levels.
#
# Outputs: target/conformance/{no-key,key}.{json,md,txt} and the servers' logs.
# Needs python3 (>= 3.10) and access to PyPI the first time (to install jevcompat).
set -euo pipefail

cd "$(dirname "$0")/.."
root=$(pwd)
venv="$root/.venv-jevcompat"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
out="$target_dir/conformance"
bin="$target_dir/debug/jevjudge"
key_env=JEVJUDGE_CONFORMANCE_KEY
allowed_should="errors.validation-shape"

mkdir -p "$out"

# --- jevcompat, installed once into .venv-jevcompat
if [[ "$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("jevcompat"))' 2>/dev/null || true)" != "0.1.1" ]]; then
    echo "installing jevcompat 0.1.1 into $venv"
    timeout 120 python3 -m venv "$venv"
    timeout 600 "$venv/bin/pip" install --quiet --disable-pip-version-check jevcompat==0.1.1
fi

# --- the binary
timeout 1800 cargo build --quiet -p jevjudge

# --- servers, always stopped on exit
pids=()
cleanup() {
    for pid in "${pids[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${pids[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
}
trap cleanup EXIT

# start_server NAME [ARGS...]: starts the fake, sets $url from its first stdout line.
start_server() {
    local name=$1
    shift
    local log="$out/server-$name.log"
    "$bin" fake-server --addr 127.0.0.1:0 "$@" >"$log" 2>&1 &
    pids+=($!)
    url=""
    for _ in $(seq 1 300); do
        url=$(sed -n '1s/^listening on \(http:\/\/[^ ]*\)$/\1/p' "$log" 2>/dev/null || true)
        [[ -n "$url" ]] && return 0
        if ! kill -0 "${pids[-1]}" 2>/dev/null; then
            echo "error: fake-server ($name) exited early:" >&2
            cat "$log" >&2
            return 1
        fi
        sleep 0.1
    done
    echo "error: fake-server ($name) printed no address within 30 s" >&2
    return 1
}

# run_suite NAME [JEVCOMPAT ARGS...]: runs jevcompat against $url; sets $status.
run_suite() {
    local name=$1
    shift
    status=0
    timeout 900 "$venv/bin/jevcompat" test "$url" --json "$out/$name.json" --markdown "$out/$name.md" "$@" \
        >"$out/$name.txt" 2>"$out/$name.stderr" || status=$?
}

# summary NAME: the "MUST x/y, SHOULD x/y" line and the failed SHOULDs.
summary() {
    local name=$1
    local counts
    counts=$(grep -o 'MUST [0-9]*/[0-9]*, SHOULD [0-9]*/[0-9]*' "$out/$name.txt" | tail -n 1 || true)
    echo "$name: ${counts:-no summary} (jevcompat exit $status)"
}

# failed_should NAME: ids of failed SHOULD requirements, one per line.
failed_should() {
    "$venv/bin/python" - "$out/$1.json" <<'EOF'
import json, sys
report = json.load(open(sys.argv[1], encoding="utf-8"))
for r in report["results"]:
    if r["level"] == "SHOULD" and r["status"] == "fail":
        print(r["id"])
EOF
}

verdict=0
check_run() {
    local name=$1
    summary "$name"
    if [[ $status -ne 0 ]]; then
        echo "  FAIL: jevcompat exited $status; see $out/$name.txt" >&2
        verdict=1
    fi
    local missed
    missed=$(failed_should "$name" 2>/dev/null || echo "unreadable-report")
    for id in $missed; do
        if [[ "$id" == "$allowed_should" ]]; then
            echo "  missed SHOULD $id (expected: the live API answers 400 there)"
        else
            echo "  FAIL: missed SHOULD $id; see $out/$name.txt" >&2
            verdict=1
        fi
    done
}

start_server no-key
run_suite no-key
check_run no-key

key="jevcompat-conformance-key"
start_server key --key "$key"
export "$key_env=$key" # --key-env keeps the key out of jevcompat's command line
run_suite key --key-env "$key_env"
check_run key

if [[ $verdict -eq 0 ]]; then
    echo "conformance: PASS"
else
    echo "conformance: FAIL" >&2
fi
exit $verdict
