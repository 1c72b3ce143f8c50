#!/usr/bin/env bash
# What the decision log costs: `jevjudge serve` under the same load with no store, with SQLite
# and with PostgreSQL, on the loopback interface only.
#
#   scripts/load-store.sh
#
# Builds release binaries, starts `jevjudge fake-server --latency 20` and, through
# scripts/pg.sh --fsync, a throwaway PostgreSQL with fsync on (durable commits, as in
# production). For each store (none, sqlite:FILE, postgresql://…) it starts
# `jevjudge serve --max-concurrent 32 [--store URL]` and sends REQUESTS reviews from CALLERS
# concurrent callers with the loadgen example, then prints reviews/s, the ratio to no store
# (the target is ≥ 0.9) and the p99 latency the service adds (round trip − review time), and
# how much the store adds to it. Every 200 is checked against the store's row count.
#
# Settings (environment): REQUESTS (10000), CALLERS (64), LATENCY_MS (20), MAX_CONCURRENT (32),
# MAX_SECONDS per run (300).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
with_throwaway_pg "$0" "$@"
settings REQUESTS=10000 CALLERS=64 LATENCY_MS=20 MAX_CONCURRENT=32 MAX_SECONDS=300 RUST_LOG=warn
export RUST_LOG

echo "== building release binaries"
build_jevjudge release -p jevjudge-serve --example loadgen
LOADGEN="$TARGET_DIR/release/examples/loadgen"
make_work load-store

start_fake "$WORK/fake.out" --latency "$LATENCY_MS"
echo "fake System One at $FAKE_URL (latency ${LATENCY_MS} ms); PostgreSQL at ${JEVJUDGE_TEST_PG_URL}"

run() {
    local name=$1
    shift
    spawn_listening "$WORK/$name.out" env TYPESAFE_API_KEY=loadtest-dummy-key "$JEVJUDGE" serve \
        --definitions "$WORK/definitions" --addr 127.0.0.1:0 --base-url "$FAKE_URL" \
        --max-concurrent "$MAX_CONCURRENT" "$@"
    local url=$LISTEN_URL pid=$LISTEN_PID
    echo
    echo "== $name: $REQUESTS reviews from $CALLERS callers"
    "$LOADGEN" --url "$url" --requests "$REQUESTS" --concurrency "$CALLERS" \
        --max-seconds "$MAX_SECONDS" >"$WORK/$name.txt"
    grep '^LOADGEN_JSON ' "$WORK/$name.txt" | sed 's/^LOADGEN_JSON //' >"$WORK/$name.json"
    grep -E '^(statuses|verdicts|throughput)' "$WORK/$name.txt" || true
    stop "$pid"
}

run none
run sqlite --store "sqlite:$WORK/reviews.db"
sqlite_rows=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*) from reviews').fetchone()[0])" "$WORK/reviews.db")
run postgres --store "$JEVJUDGE_TEST_PG_URL"
pg_rows=$(psql "$JEVJUDGE_TEST_PG_URL" -tAc 'select count(*) from reviews' 2>/dev/null || echo "?")

echo
echo "-- summary (fake latency ${LATENCY_MS} ms, --max-concurrent $MAX_CONCURRENT, $CALLERS callers, $REQUESTS reviews each)"
base=$(json "$WORK/none.json" "d['throughput_ok_per_second']")
base_p99=$(json "$WORK/none.json" "d['added_without_queue_ms']['p99']")
printf '%-10s %10s %8s %16s %16s %8s %8s\n' store "reviews/s" "× none" "added p99 ms" "p99 vs none" 200s rows
for name in none sqlite postgres; do
    f="$WORK/$name.json"
    rows="-"
    [[ $name == sqlite ]] && rows=$sqlite_rows
    [[ $name == postgres ]] && rows=$pg_rows
    printf '%-10s %10.0f %8.3f %16.2f %+16.2f %8s %8s\n' "$name" \
        "$(json "$f" "d['throughput_ok_per_second']")" \
        "$(json "$f" "d['throughput_ok_per_second'] / $base")" \
        "$(json "$f" "d['added_without_queue_ms']['p99']")" \
        "$(json "$f" "d['added_without_queue_ms']['p99'] - $base_p99")" \
        "$(json "$f" "d['statuses'].get('200', 0)")" "$rows"
done
echo "(added = round trip − the review time the Result reports, queue wait excluded; rows = reviews in the store)"
