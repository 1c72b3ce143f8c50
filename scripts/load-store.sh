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

if [[ -z "${JEVJUDGE_TEST_PG_URL:-}" ]]; then
    exec bash scripts/pg.sh --fsync -- bash "$0" "$@"
fi

REQUESTS=${REQUESTS:-10000}
CALLERS=${CALLERS:-64}
LATENCY_MS=${LATENCY_MS:-20}
MAX_CONCURRENT=${MAX_CONCURRENT:-32}
MAX_SECONDS=${MAX_SECONDS:-300}
export RUST_LOG=${RUST_LOG:-warn}

echo "== building release binaries"
cargo build --release --quiet -p jevjudge
cargo build --release --quiet -p jevjudge-serve --example loadgen
TARGET_DIR=${CARGO_TARGET_DIR:-target}
JEVJUDGE="$TARGET_DIR/release/jevjudge"
LOADGEN="$TARGET_DIR/release/examples/loadgen"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/jevjudge-load-store.XXXXXX")
FAKE_PID=""
SERVE_PID=""
cleanup() {
    # Only the processes this script started, by their id.
    if [[ -n "$SERVE_PID" ]]; then kill -TERM "$SERVE_PID" 2>/dev/null || true; wait "$SERVE_PID" 2>/dev/null || true; fi
    if [[ -n "$FAKE_PID" ]]; then kill -TERM "$FAKE_PID" 2>/dev/null || true; wait "$FAKE_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$WORK/definitions"
cp examples/refund/definition.toml "$WORK/definitions/refund.toml"

listening_url() {
    local file=$1
    for _ in $(seq 1 400); do
        if [[ -s "$file" ]]; then
            local first
            first=$(head -n 1 "$file")
            if [[ "$first" == "listening on http://"* ]]; then
                echo "${first#listening on }"
                return 0
            fi
        fi
        sleep 0.05
    done
    echo "no 'listening on' line in $file:" >&2
    cat "${file%.out}.log" >&2 || true
    return 1
}
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, {'d': d}))" "$@"; }

"$JEVJUDGE" fake-server --addr 127.0.0.1:0 --latency "$LATENCY_MS" >"$WORK/fake.out" 2>"$WORK/fake.err" &
FAKE_PID=$!
FAKE_URL=$(listening_url "$WORK/fake.out")
echo "fake System One at $FAKE_URL (latency ${LATENCY_MS} ms); PostgreSQL at ${JEVJUDGE_TEST_PG_URL}"

run() {
    local name=$1
    shift
    TYPESAFE_API_KEY=loadtest-dummy-key "$JEVJUDGE" serve \
        --definitions "$WORK/definitions" --addr 127.0.0.1:0 --base-url "$FAKE_URL" \
        --max-concurrent "$MAX_CONCURRENT" "$@" \
        >"$WORK/$name.out" 2>"$WORK/$name.log" &
    SERVE_PID=$!
    local url
    url=$(listening_url "$WORK/$name.out")
    echo
    echo "== $name: $REQUESTS reviews from $CALLERS callers"
    "$LOADGEN" --url "$url" --requests "$REQUESTS" --concurrency "$CALLERS" \
        --max-seconds "$MAX_SECONDS" >"$WORK/$name.txt"
    grep '^LOADGEN_JSON ' "$WORK/$name.txt" | sed 's/^LOADGEN_JSON //' >"$WORK/$name.json"
    grep -E '^(statuses|verdicts|throughput)' "$WORK/$name.txt" || true
    kill -TERM "$SERVE_PID"
    wait "$SERVE_PID" || true
    SERVE_PID=""
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
