#!/usr/bin/env bash
# The reviewer pages at 100,000 pending items: how long the pages take over
# real HTTP on 127.0.0.1, with the queue page (counts by version, each stopping at 10,000, +
# the oldest 50 items, rendered) the one with a target: under 200 ms. On SQLite and on
# PostgreSQL.
#   1. builds jevjudge and the store's queue_bench example in release;
#   2. for each store (a new SQLite file; a new database on a throwaway PostgreSQL 15 from
#      scripts/pg.sh --fsync): seeds it with crates/store/examples/queue_bench.rs
#      (queue-store's seeding: 20,000 reviews decided earlier, then PENDING (100000) queued
#      reviews, one in ten queued twice, a fifth of them of a second version bench-v2; it
#      claims and decides 100 and prints its own store-level numbers), starts
#      `jevjudge serve --fake` on that store with a reviewer token, and signs in with curl;
#   3. times N (200) requests of each: the queue page, the queue page of one version, a page
#      deep in the queue (cursor after half the items), claim (303), and an item page; prints
#      p50 / p99 / max in ms (nearest rank by jevjudge_stats, scripts/percentiles.py; curl's
#      time_total, connection set-up included).
# Run: scripts/bench-ui.sh [PENDING] [N]
# Settings (environment): STORES (sqlite,postgres), JEVJUDGE (a built binary; default: the
# release build of this tree, built first).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
with_throwaway_pg "$0" "$@"
pending=${1:-100000}
n=${2:-200}
settings STORES=sqlite,postgres RUST_LOG=warn
export RUST_LOG
step() { printf '==> %s\n' "$*"; }

step "cargo build --release (jevjudge and the store's queue_bench example)"
if [[ -z "${JEVJUDGE:-}" ]]; then
    build_jevjudge release
fi
# (A separate build: with --example, cargo builds only the examples of every -p it is given.)
timeout 1800 cargo build --release --quiet -p jevjudge-store --example queue_bench
build_percentiles
make_work bench-ui
token="bench-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
export JEVJUDGE_BENCH_REVIEWERS="ada:$token"

times() { # label, then curl arguments: n timed requests after 5 warm-up ones
    local label=$1
    shift
    for _ in $(seq 5); do curl -s -o /dev/null -b "$jar" "$@"; done
    for _ in $(seq "$n"); do
        curl -s -o /dev/null -b "$jar" -w '%{http_code} %{time_total}\n' "$@"
    done | python3 -c '
import sys
sys.path.insert(0, "scripts")
from percentiles import nearest_rank
codes, ms = set(), []
for line in sys.stdin:
    code, seconds = line.split()
    codes.add(code); ms.append(float(seconds) * 1000)
n, p50, p99, top = (nearest_rank(ms, 50, 99)[key] for key in ("n", "p50", "p99", "max"))
status = ",".join(sorted(codes))
print(f"{sys.argv[1]:<32} n={n} status {status}  p50 {p50:6.1f} ms  p99 {p99:6.1f} ms  max {top:6.1f} ms")
' "$label"
}

csrf() { grep -o 'name="csrf" value="[0-9a-f]*"' "$1" | head -1 | cut -d'"' -f4; }

# run_store NAME URL: seeds the store at URL, serves it and times the pages.
run_store() {
    local name=$1 store=$2
    step "$name: seeding $pending pending reviews (queue_bench)"
    "${CARGO_TARGET_DIR:-$PWD/target}/release/examples/queue_bench" "$store" "$pending" 100 20000 |
        grep -E 'seeded|p50' || { echo "bench-ui: queue_bench failed" >&2; exit 1; }
    spawn_listening "$WORK/$name.out" "$JEVJUDGE" serve --definitions examples/definitions \
        --addr 127.0.0.1:0 --fake --store "$store" --store-state \
        --queue-statuses INCONCLUSIVE,FAIL --reviewer-tokens-env JEVJUDGE_BENCH_REVIEWERS
    local serve_pid=$LISTEN_PID url=$LISTEN_URL
    jar="$WORK/$name.cookies"
    curl -sf -c "$jar" -b "$jar" "$url/ui/sign-in" -o "$WORK/sign-in.html"
    curl -sf -c "$jar" -b "$jar" -o /dev/null -X POST "$url/ui/sign-in" \
        --data-urlencode "csrf=$(csrf "$WORK/sign-in.html")" --data-urlencode "token=$token"
    curl -sf -b "$jar" "$url/ui/" -o "$WORK/queue.html"
    grep -q 'signed in as' "$WORK/queue.html" || { echo "bench-ui: sign-in failed" >&2; exit 1; }
    local form_csrf shown total middle item
    form_csrf=$(csrf "$WORK/queue.html")
    # The page's counts stop at 10,000 ("10000+"); the stats API counts exactly.
    shown=$(grep -o '<div class="figure">[0-9]*+\?</div><div class="label">pending' "$WORK/queue.html" |
        grep -o '[0-9]*+\?' | head -1)
    total=$(curl -sf -H "authorization: Bearer $token" "$url/v1/queue/stats" |
        python3 -c 'import json, sys; print(sum(json.load(sys.stdin)["pending_by_version"].values()))')
    step "$name: serving $url; $total pending (the queue page shows $shown)"
    [ "$total" -ge "$pending" ] || { echo "bench-ui: expected $pending pending" >&2; exit 1; }
    # The store cursor after the item half-way down the queue: q1.<queued_at>.<id>.
    local half="SELECT queued_at || '.' || id FROM queue_items WHERE decided_at IS NULL
        ORDER BY queued_at, id LIMIT 1 OFFSET $((total / 2))"
    if [[ $name == sqlite ]]; then
        middle=$(sqlite3 "${store#sqlite:}" "$half")
    else
        middle=$(psql "$store" -tA -c "$half")
    fi
    step "$name: timing ($n requests each; $pending pending)"
    times "GET /ui/ (queue page)" "$url/ui/"
    times "GET /ui/?version=bench-v2" "$url/ui/?version=bench-v2"
    times "GET /ui/?cursor=<middle>" "$url/ui/?cursor=q1.$middle"
    times "POST /ui/claim" -X POST --data-urlencode "csrf=$form_csrf" --data-urlencode "version=" "$url/ui/claim"
    item=$(curl -s -o /dev/null -b "$jar" -w '%{redirect_url}' -X POST --data-urlencode "csrf=$form_csrf" "$url/ui/claim")
    times "GET /ui/items/{id} (item page)" "$item"
    stop "$serve_pid"
}

each_store queue.db bench_ui
