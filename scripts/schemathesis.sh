#!/usr/bin/env bash
# Checks `jevjudge serve` against its own OpenAPI document with schemathesis (PyPI): every
# documented operation is called with generated valid and invalid requests, and every response
# (status, content type, headers, body schema) is checked against what /openapi.json promises,
# plus the generic checks (no 5xx, invalid input rejected, valid input accepted, auth enforced).
#
# Setup: `jevjudge fake-server` (hash answers; no model) as the System One backend, and
# `jevjudge serve --definitions examples/definitions` in front of it with a bearer token.
# A second run covers the review queue's routes (/v1/queue/*) on a second `serve`
# with a SQLite store keeping state and a queue (INCONCLUSIVE and FAIL, every PASS sampled)
# whose one reviewer, a lead, has the conformance token, so those routes (the leads' decisions
# included) are exercised past authentication. All listen on 127.0.0.1 only and are stopped on exit.
#
# Settings: SCHEMATHESIS_EXAMPLES (max test cases per operation and phase, default 40),
# SCHEMATHESIS_SEED (default 1, so that CI runs are reproducible).
# Outputs: target/schemathesis/{schemathesis.txt,junit.xml,serve.log,fake.log} and
# queue-{schemathesis.txt,junit.xml,events.ndjson}, serve-queue.log for the queue run (and the
# servers' stderr in *.log.err).
# Needs python3 and PyPI access the first time (schemathesis into .venv-schemathesis).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
out_dir schemathesis
venv="$PWD/.venv-schemathesis"
version=4.32.5
ensure_venv "$venv" schemathesis "$version" 900
build_jevjudge debug

start_fake "$out/fake.log"
fake_url=$FAKE_URL
# The client always wants a key; the fake (started without --key) accepts any.
export TYPESAFE_API_KEY=dummy-key-for-the-fake
export JEVJUDGE_API_CONFORMANCE_TOKENS=conformance-token
spawn_listening "$out/serve.log" "$JEVJUDGE" serve --definitions examples/definitions --addr 127.0.0.1:0 \
    --base-url "$fake_url" --auth-token-env JEVJUDGE_API_CONFORMANCE_TOKENS --max-budget 2s
serve_url=$LISTEN_URL
echo "serve at $serve_url (backend: fake-server at $fake_url)"

export JEVJUDGE_API_CONFORMANCE_REVIEWERS=conformance:conformance-token:lead
rm -f "$out/reviews.db" "$out/reviews.db-wal" "$out/reviews.db-shm"
spawn_listening "$out/serve-queue.log" "$JEVJUDGE" serve --definitions examples/definitions --addr 127.0.0.1:0 \
    --base-url "$fake_url" --auth-token-env JEVJUDGE_API_CONFORMANCE_TOKENS --max-budget 2s \
    --store "sqlite:$out/reviews.db" --store-state \
    --queue-statuses INCONCLUSIVE,FAIL --sample-pass 1 --second-review 0.5 \
    --reviewer-tokens-env JEVJUDGE_API_CONFORMANCE_REVIEWERS
queue_url=$LISTEN_URL
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
