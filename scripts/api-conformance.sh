#!/usr/bin/env bash
# Checks `jevjudge serve` against its own OpenAPI document with schemathesis (PyPI): every
# documented operation is called with generated valid and invalid requests, and every response
# (status, content type, headers, body schema) is checked against what /openapi.json promises,
# plus the generic checks (no 5xx, invalid input rejected, valid input accepted, auth enforced).
#
# Setup: `jevjudge fake-server` (hash answers; no model) as the System One backend, and
# `jevjudge serve --definitions examples/definitions` in front of it with a bearer token.
# A second run covers the review queue's routes (/v1/queue/*, issue 13) on a second `serve`
# with a SQLite store keeping state and a queue (INCONCLUSIVE and FAIL, every PASS sampled)
# whose one reviewer has the conformance token, so those routes are exercised past
# authentication. All listen on 127.0.0.1 only and are stopped on exit.
#
# Settings: SCHEMATHESIS_EXAMPLES (max test cases per operation and phase, default 40),
# SCHEMATHESIS_SEED (default 1, so that CI runs are reproducible).
# Outputs: target/api-conformance/{schemathesis.txt,junit.xml,serve.log,fake.log} and
# queue-{schemathesis.txt,junit.xml,events.ndjson}, serve-queue.log for the queue run.
# Needs python3 and PyPI access the first time (schemathesis into .venv-schemathesis).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
venv="$root/.venv-schemathesis"
version=4.32.5
target_dir="${CARGO_TARGET_DIR:-$root/target}"
out="$target_dir/api-conformance"
bin="$target_dir/debug/jevjudge"
mkdir -p "$out"

if [[ "$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("schemathesis"))' 2>/dev/null || true)" != "$version" ]]; then
    echo "installing schemathesis $version into $venv"
    timeout 120 python3 -m venv "$venv"
    timeout 900 "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$version"
fi

timeout 1800 cargo build --quiet -p jevjudge

pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

# start NAME ARGS...: runs the binary, sets $url from its first stdout line.
start() {
    local name=$1
    shift
    local log="$out/$name.log"
    # Emptied here, before the background start: the loop below must never read a previous
    # run's address.
    : >"$log"
    "$@" >"$log" 2>&1 &
    pids+=($!)
    url=""
    for _ in $(seq 1 300); do
        # Log lines on standard error may come first (the store and queue announce themselves).
        url=$(sed -n 's/^listening on \(http:\/\/[^ ]*\)$/\1/p' "$log" 2>/dev/null | head -n 1 || true)
        [[ -n "$url" ]] && return 0
        if ! kill -0 "${pids[-1]}" 2>/dev/null; then
            echo "error: $name exited early:" >&2
            cat "$log" >&2
            return 1
        fi
        sleep 0.1
    done
    echo "error: $name did not print its address" >&2
    return 1
}

start fake "$bin" fake-server --addr 127.0.0.1:0
fake_url=$url
# The client always wants a key; the fake (started without --key) accepts any.
export TYPESAFE_API_KEY=dummy-key-for-the-fake
export JEVJUDGE_API_CONFORMANCE_TOKENS=conformance-token
start serve "$bin" serve --definitions examples/definitions --addr 127.0.0.1:0 \
    --base-url "$fake_url" --auth-token-env JEVJUDGE_API_CONFORMANCE_TOKENS --max-budget 2s
serve_url=$url
echo "serve at $serve_url (backend: fake-server at $fake_url)"
export JEVJUDGE_API_CONFORMANCE_REVIEWERS=conformance:conformance-token
rm -f "$out/reviews.db" "$out/reviews.db-wal" "$out/reviews.db-shm"
start serve-queue "$bin" serve --definitions examples/definitions --addr 127.0.0.1:0 \
    --base-url "$fake_url" --auth-token-env JEVJUDGE_API_CONFORMANCE_TOKENS --max-budget 2s \
    --store "sqlite:$out/reviews.db" --store-state \
    --queue-statuses INCONCLUSIVE,FAIL --sample-pass 1 --second-review 0.5 \
    --reviewer-tokens-env JEVJUDGE_API_CONFORMANCE_REVIEWERS
queue_url=$url
# Items to claim and decide: reviews of the queue's service, each queued.
for i in $(seq 1 40); do
    curl -sf -H "Authorization: Bearer $JEVJUDGE_API_CONFORMANCE_TOKENS" \
        -H 'content-type: application/json' \
        -d "{\"state\": {\"user_question\": \"q$i\", \"supporting_context\": [\"c\"], \"assistant_answer\": \"a$i\"}}" \
        "$queue_url/v1/reviews/refund-answer-v1" >/dev/null
done
echo "serve with a review queue at $queue_url (40 reviews queued)"

# conformance PREFIX URL [schemathesis options]: one schemathesis run and its summary.
conformance() {
local prefix=$1 url=$2
shift 2
set +e
# From $out, so that schemathesis's own cache directory lands there, not in the worktree.
cd "$out" || return 1
timeout 900 "$venv/bin/schemathesis" run "$url/openapi.json" \
    --checks all \
    --header "Authorization: Bearer $JEVJUDGE_API_CONFORMANCE_TOKENS" \
    --max-examples "${SCHEMATHESIS_EXAMPLES:-40}" \
    --seed "${SCHEMATHESIS_SEED:-1}" \
    --generation-database none \
    --workers 2 \
    --request-timeout 10 \
    --no-color \
    --report junit,ndjson --report-junit-path "$out/${prefix}junit.xml" --report-ndjson-path "$out/${prefix}events.ndjson" "$@" \
    >"$out/${prefix}schemathesis.txt" 2>&1
status=$?
set -e
# The summary: operations, test cases, and each check's passed/total.
sed -n '/^API Operations:/,$p' "$out/${prefix}schemathesis.txt" | grep -v '^$' | head -40 || true
# Checks run, from the NDJSON events: name, passed / run.
python3 - "$out/${prefix}events.ndjson" <<'PY' || true
import collections, json, sys
runs, passed = collections.Counter(), collections.Counter()
for line in open(sys.argv[1], encoding="utf-8"):
    event = json.loads(line)
    (kind, body), = event.items()
    if kind != "ScenarioFinished":
        continue
    for checks in ((body.get("recorder") or {}).get("checks") or {}).values():
        for check in checks:
            runs[check["name"]] += 1
            passed[check["name"]] += check.get("status") == "success"
print(f"checks: {sum(passed.values())} of {sum(runs.values())} passed ({len(runs)} kinds)")
for name in sorted(runs):
    print(f"  {name:30} {passed[name]}/{runs[name]}")
PY
if [[ $status -ne 0 ]]; then
    echo "schemathesis failed (exit $status); full output: $out/${prefix}schemathesis.txt" >&2
    sed -n '/FAILURES/,/SUMMARY/p' "$out/${prefix}schemathesis.txt" | head -80 >&2
    return 1
fi
}

failed=0
echo "== all operations, $serve_url"
conformance "" "$serve_url" || failed=1
echo "== the review queue's operations, $queue_url"
# positive_data_acceptance is left out of this run: whether a decision is valid depends on the
# claimed item's definition (its findings must answer exactly its criteria, else 422
# invalid_decision), which no static schema can say.
conformance queue- "$queue_url" --include-path-regex '^/v1/queue' \
    --exclude-checks positive_data_acceptance || failed=1
exit $failed
