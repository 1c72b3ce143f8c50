#!/usr/bin/env bash
# The reviewer API at 100,000 pending items: HTTP claim and decision latency, p50 /
# p99, on SQLite and on PostgreSQL, through a release `jevjudge serve`.
#
#   bash scripts/bench-queue.sh
#
# For each store: a fresh store is seeded by the store's queue_bench example (`--seed-only`,
# the one maker of this fixture: 20,000 reviews decided earlier, then PENDING queued reviews,
# one in ten queued twice, a fifth of them of a second version bench-v2, their definitions
# kept so claims carry their questions; then ANALYZE), and `jevjudge serve --store URL
# --store-state --queue-statuses INCONCLUSIVE` (release build, `--fake` backend: no review is
# posted during the measure) starts on it. A Python client on one keep-alive connection then
# sends OPS claims (8 reviewers in turn) and OPS decisions of the claimed items, one at a time,
# and prints p50 / p99 / max in milliseconds (nearest rank by jevjudge_stats, through
# scripts/percentiles.py) measured at the client: HTTP, JSON, auth and the store together.
# Target: p99 under 20 ms on both.
#
# Settings (environment): PENDING (100000), OPS (2000), STORES (sqlite,postgres), KEEP (1 keeps
# the work directory with serve's logs), JEVJUDGE (the binary; default
# the release build of this tree, built first). PostgreSQL comes from scripts/pg.sh --fsync.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
settings PENDING=100000 OPS=2000 STORES=sqlite,postgres KEEP=0
release_on_pg bench-queue "$0" "$@"
# (A separate build: with --example, cargo builds only the examples of every -p it is given.)
timeout 1800 cargo build --release --quiet -p jevjudge-store --example queue_bench
BENCH="${CARGO_TARGET_DIR:-$PWD/target}/release/examples/queue_bench"
build_percentiles
on_exit() {
    # KEEP=1 keeps the work directory (serve's logs: RUST_LOG=info has each request's time).
    if [[ "$KEEP" == 1 ]]; then echo "work directory kept: $WORK"; WORK=""; fi
}
reviewers=""
for i in 1 2 3 4 5 6 7 8; do
    reviewers+="${reviewers:+,}bench-$i:tok-bench-$i-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')"
done
export JEVJUDGE_BENCH_REVIEWERS=$reviewers

run_store() {
    local name=$1 url=$2
    echo "== $name: $url"
    "$BENCH" --seed-only "$url" "$PENDING"
    spawn_listening "$WORK/$name.out" "$JEVJUDGE" serve --definitions "$WORK/definitions" \
        --addr 127.0.0.1:0 --fake --store "$url" --store-state --queue-statuses INCONCLUSIVE \
        --reviewer-tokens-env JEVJUDGE_BENCH_REVIEWERS --max-leases-per-reviewer "$OPS"
    local serve_pid=$LISTEN_PID serve_url=$LISTEN_URL
    python3 - "$serve_url" "$OPS" <<'PY'
import http.client, json, os, sys, time, urllib.parse
sys.path.insert(0, "scripts")
from percentiles import nearest_rank
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
    f = nearest_rank(ms, 50, 99)
    print(f"{name:9} n {f['n']:5}  p50 {f['p50']:6.2f} ms  p99 {f['p99']:6.2f} ms  max {f['max']:7.2f} ms")
    return f["p99"]

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
