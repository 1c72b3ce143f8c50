#!/usr/bin/env bash
# The reviewer API at 100,000 pending items (issue 13): HTTP claim and decision latency, p50 /
# p99, on SQLite and on PostgreSQL, through a release `jevjudge serve`.
#
#   bash scripts/bench-queue.sh
#
# For each store: `jevjudge serve --store URL --store-state --queue-statuses INCONCLUSIVE`
# (release build, `--fake` backend: no review is posted during the measure) starts on a fresh
# store, which applies the migrations and keeps the definition; then PENDING reviews with one
# queue item each are seeded in one SQL statement per table (sqlite3 / psql, generated rows:
# seconds, not minutes), with the definition's digest so claims carry its questions, and
# ANALYZE runs. A Python client on one keep-alive connection then sends OPS claims (8 reviewers
# in turn) and OPS decisions of the claimed items, one at a time, and prints p50 / p99 / max in
# milliseconds (nearest rank) measured at the client: HTTP, JSON, auth and the store together.
# Target (issue 13): p99 under 20 ms on both.
#
# Settings (environment): PENDING (100000), OPS (2000), STORES (sqlite,postgres), KEEP (1 keeps
# the work directory with serve's logs), JEVJUDGE (the binary; default
# the release build of this tree, built first). PostgreSQL comes from scripts/pg.sh --fsync.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
settings PENDING=100000 OPS=2000 STORES=sqlite,postgres KEEP=0
release_on_pg bench-queue "$0" "$@"
on_exit() {
    # KEEP=1 keeps the work directory (serve's logs: RUST_LOG=info has each request's time).
    if [[ "$KEEP" == 1 ]]; then echo "work directory kept: $WORK"; WORK=""; fi
}
reviewers=""
for i in 1 2 3 4 5 6 7 8; do
    reviewers+="${reviewers:+,}bench-$i:tok-bench-$i-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')"
done
export JEVJUDGE_BENCH_REVIEWERS=$reviewers

# The seeding SQL for one database: SQL DIALECT DIGEST.
seed_sql() {
    local dialect=$1 digest=$2 series review_id item_id
    if [[ $dialect == sqlite ]]; then
        series="WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < $PENDING)"
        review_id="printf('01900000-%04x-7000-8000-%012x', n / 65536, n)"
        item_id="printf('01900001-%04x-7000-8000-%012x', n / 65536, n)"
    else
        series="WITH s(n) AS (SELECT generate_series(1, $PENDING))"
        review_id="'01900000-' || lpad(to_hex(n / 65536), 4, '0') || '-7000-8000-' || lpad(to_hex(n), 12, '0')"
        item_id="'01900001-' || lpad(to_hex(n / 65536), 4, '0') || '-7000-8000-' || lpad(to_hex(n), 12, '0')"
    fi
    cat <<SQL
BEGIN;
$series
INSERT INTO reviews (id, received_at, definition_version, definition_digest, state_digest,
    reference, status, error, detail, findings, model, input_tokens, output_tokens,
    elapsed_micros, request_id, backend, state, answers, requested_model)
SELECT $review_id, 1767225600000 + n, 'refund-answer-v1', '$digest', 'sha256:bench',
    'bench-' || n, 'INCONCLUSIVE', 'NONE', NULL,
    '{"supported":{"status":"INCONCLUSIVE","yes_probability":0.5,"expected_probability":0.5}}',
    'jev-1.13.0', 300, 20, 1000, 'bench-' || n, 'fake',
    '{"user_question":"Has my refund gone through?","supporting_context":["no refund executed"],"assistant_answer":"Draft ' || n || '"}',
    '{"supported":{"type":"noul","noul":0.5}}', 'jev-1.13.0'
FROM s;
$series
INSERT INTO queue_items (id, review_id, definition_version, reason, slot, copies, queued_at)
SELECT $item_id, $review_id, 'refund-answer-v1', 'status', 1, 1, 1767225600000 + n FROM s;
COMMIT;
ANALYZE;
SQL
}

run_store() {
    local name=$1 url=$2
    echo "== $name: $url"
    spawn_listening "$WORK/$name.out" "$JEVJUDGE" serve --definitions "$WORK/definitions" \
        --addr 127.0.0.1:0 --fake --store "$url" --store-state --queue-statuses INCONCLUSIVE \
        --reviewer-tokens-env JEVJUDGE_BENCH_REVIEWERS
    local serve_pid=$LISTEN_PID serve_url=$LISTEN_URL
    local digest started
    if [[ $name == sqlite ]]; then
        digest=$(sqlite3 "${url#sqlite:}" "SELECT digest FROM definitions WHERE version = 'refund-answer-v1'")
        started=$(date +%s.%N)
        seed_sql sqlite "$digest" | sqlite3 "${url#sqlite:}" >/dev/null
    else
        digest=$(psql "$url" -tA -c "SELECT digest FROM definitions WHERE version = 'refund-answer-v1'")
        started=$(date +%s.%N)
        seed_sql postgres "$digest" | psql -q -v ON_ERROR_STOP=1 "$url" >/dev/null
    fi
    echo "seeded $PENDING pending items in $(python3 -c "import time; print(f'{time.time() - $started:.1f}')") s"
    python3 - "$serve_url" "$OPS" <<'PY'
import http.client, json, os, sys, time, urllib.parse
url, ops = sys.argv[1], int(sys.argv[2])
tokens = [pair.split(":", 1) for pair in os.environ["JEVJUDGE_BENCH_REVIEWERS"].split(",")]
parsed = urllib.parse.urlsplit(url)
connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)

def post(path, body, token):
    start = time.perf_counter()
    connection.request("POST", path, body=json.dumps(body),
                       headers={"content-type": "application/json",
                                "authorization": "Bearer " + token})
    response = connection.getresponse()
    data = response.read()
    return (time.perf_counter() - start) * 1e3, response.status, data

def summary(name, ms):
    ms = sorted(ms)
    rank = lambda q: ms[max(0, -(-len(ms) * q // 100) - 1)]
    print(f"{name:9} n {len(ms):5}  p50 {rank(50):6.2f} ms  p99 {rank(99):6.2f} ms  max {ms[-1]:7.2f} ms")
    return rank(99)

claims, held = [], []
for i in range(ops):
    name, token = tokens[i % len(tokens)]
    ms, status, data = post("/v1/queue/claim", {}, token)
    if status != 200:
        sys.exit(f"claim {i}: {status} {data[:200]!r}")
    claims.append(ms)
    held.append((json.loads(data)["item"], token))
decisions = []
for i, (item, token) in enumerate(held):
    ms, status, data = post(f"/v1/queue/{item}/decision",
                            {"findings": {"supported": i % 3 != 0}, "note": "bench"}, token)
    if status != 200:
        sys.exit(f"decision {i}: {status} {data[:200]!r}")
    decisions.append(ms)
connection.request("GET", "/v1/queue/stats", headers={"authorization": "Bearer " + tokens[0][1]})
stats = json.loads(connection.getresponse().read())
print(f"after: pending {sum(stats['pending_by_version'].values())}, decided {stats['decided']}")
worst = max(summary("claim", claims), summary("decision", decisions))
print(f"p99 target 20 ms: {'met' if worst < 20 else 'NOT met'}")
PY
    stop "$serve_pid"
}

each_store bench.db bench_queue
