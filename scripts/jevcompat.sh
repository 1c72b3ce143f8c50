#!/usr/bin/env bash
# Runs the third-party conformance suite jevcompat 0.1.1 against `jevjudge fake-server`, once
# without a key and once with one (systemone-wire.md §13 item 9 and §14).
#
# Passes when both runs exit 0 (conformant: every applicable MUST holds) and the only failed
# SHOULD, if any, is errors.validation-shape: the live API (and so the fake) answers 400, not
# 422, to an unknown question type and to too many options or levels.
#
# Outputs: target/jevcompat/{no-key,key}.{json,md,txt} and the servers' logs.
# Needs python3 (>= 3.10) and access to PyPI the first time (to install jevcompat).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
out_dir jevcompat
venv="$PWD/.venv-jevcompat"
key_env=JEVJUDGE_CONFORMANCE_KEY
allowed_should="errors.validation-shape"

# --- jevcompat, installed once into .venv-jevcompat
ensure_venv "$venv" jevcompat 0.1.1 600

# --- the binary
build_jevjudge debug

# start_server NAME [ARGS...]: starts a fake (stopped on exit), sets $url.
start_server() {
    local name=$1
    shift
    start_fake "$out/server-$name.log" "$@"
    url=$FAKE_URL
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
