#!/usr/bin/env bash
# What the decision log adds, measured inside the service: `jevjudge serve` under ~1,500
# reviews/s with no store, SQLite and PostgreSQL (fsync on), repeated in interleaved rounds,
# optionally for several jevjudge binaries (e.g. before and after a change).
#
#   scripts/bench-store.sh
#   BINARIES="before=/path/to/old/jevjudge after=target/release/jevjudge" ROUNDS=5 scripts/bench-store.sh
#   STORES="none postgres" scripts/bench-store.sh
#
# Builds the release binary (unless BINARIES names them) and the loadgen example, starts
# `jevjudge fake-server --latency 20` and, through scripts/pg.sh --fsync, a throwaway
# PostgreSQL with durable commits. Each round runs every binary against every store (a fresh
# SQLite file or PostgreSQL database each run): `serve --max-concurrent 32 --log-format json`
# with the request log on, REQUESTS reviews from CALLERS callers. The added latency is the
# service's own: from each 200's `request finished` log line, its handler time minus the wait
# for a backend slot (queue_millis) minus the review (elapsed_millis) — body, checks, the
# decision log's write and the response. Prints every run, then per binary and store the
# median and the spread (min–max) over the rounds of reviews/s, reviews/s ÷ no store (same
# binary, same round), added p50 and p99, and p99 minus no store's p99. Every 200 is checked
# against the store's row count. Results are kept in target/bench-store/results.jsonl.
#
# Settings (environment): ROUNDS (5), REQUESTS (10000), CALLERS (64), LATENCY_MS (20),
# MAX_CONCURRENT (32), STORES ("none sqlite postgres"), BINARIES ("" = build this tree),
# LOADGEN (built unless set), MAX_SECONDS per run (300).
# PROFILE_PG=1 profiles each PostgreSQL run's commits: the server's WAL statistics
# (pg_stat_wal with track_wal_io_timing on: WAL flushes, their mean time, commits per flush)
# and, through `perf trace`, every fdatasync/fsync the server made with its duration
# (p50/p90/p99/max).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
with_throwaway_pg "$0" "$@"
settings ROUNDS=5 REQUESTS=10000 CALLERS=64 LATENCY_MS=20 MAX_CONCURRENT=32 \
    STORES="none sqlite postgres" MAX_SECONDS=300
BINARIES=${BINARIES:-}
export RUST_LOG="warn,jevjudge_serve=info"

if [[ -z "$BINARIES" || -z "${LOADGEN:-}" ]]; then
    echo "== building release binaries"
    build_jevjudge release -p jevjudge-serve --example loadgen
    LOADGEN=${LOADGEN:-$TARGET_DIR/release/examples/loadgen}
    BINARIES=${BINARIES:-current=$JEVJUDGE}
fi
build_percentiles
make_work bench-store
out_dir bench-store
RESULTS="$out/results.jsonl"
: >"$RESULTS"
echo "PostgreSQL fsync: $(psql "$JEVJUDGE_TEST_PG_URL" -tAc 'show fsync'), synchronous_commit: $(psql "$JEVJUDGE_TEST_PG_URL" -tAc 'show synchronous_commit')"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
if [[ "${PROFILE_PG:-}" == 1 ]]; then
    command -v perf >/dev/null || { echo "PROFILE_PG=1 needs perf (apt-get install linux-perf)" >&2; exit 2; }
    psql "$JEVJUDGE_TEST_PG_URL" -qc "ALTER SYSTEM SET track_wal_io_timing = on" -c "SELECT pg_reload_conf()" >/dev/null
fi

first_binary=${BINARIES%% *}
JEVJUDGE=${first_binary#*=}
start_fake "$WORK/fake.out" --latency "$LATENCY_MS"
echo "fake System One at $FAKE_URL (latency ${LATENCY_MS} ms)"

# run ROUND NAME BINARY STORE: one serve process, one loadgen run, one line in RESULTS.
run() {
    local round=$1 name=$2 binary=$3 store=$4 store_args=() rows="null" db=""
    case "$store" in
        none) ;;
        sqlite) store_args=(--store "sqlite:$WORK/$name-$round.db") ;;
        postgres)
            db="bench_${name}_${round}"
            psql "$JEVJUDGE_TEST_PG_URL" -qc "CREATE DATABASE $db" >/dev/null
            store_args=(--store "${JEVJUDGE_TEST_PG_URL%/*}/$db")
            ;;
        *) echo "unknown store $store (none, sqlite, postgres)" >&2; exit 2 ;;
    esac
    local log="$WORK/serve-$name-$store-$round"
    spawn_listening "$log.out" env TYPESAFE_API_KEY=loadtest-dummy-key "$binary" serve \
        --definitions "$WORK/definitions" --addr 127.0.0.1:0 --base-url "$FAKE_URL" \
        --max-concurrent "$MAX_CONCURRENT" --log-format json "${store_args[@]}"
    local url=$LISTEN_URL pid=$LISTEN_PID trace_pid=""
    if [[ "$store" == postgres && "${PROFILE_PG:-}" == 1 ]]; then
        psql "$JEVJUDGE_TEST_PG_URL" -qAtc "SELECT pg_stat_reset_shared('wal')" >/dev/null
        perf trace -a -e fdatasync,fsync -o "$log.trace" &
        trace_pid=$!
        sleep 1
    fi
    "$LOADGEN" --url "$url" --requests "$REQUESTS" --concurrency "$CALLERS" \
        --max-seconds "$MAX_SECONDS" >"$log.txt"
    grep '^LOADGEN_JSON ' "$log.txt" | sed 's/^LOADGEN_JSON //' >"$log.json"
    if [[ -n "$trace_pid" ]]; then
        kill -INT "$trace_pid"
        wait "$trace_pid" || true
        python3 scripts/bench_store.py profile "$log.trace" \
            "$(psql "$JEVJUDGE_TEST_PG_URL" -qAtc "SELECT wal_sync, wal_sync_time, wal_write FROM pg_stat_wal")" \
            "$(psql "$JEVJUDGE_TEST_PG_URL" -qAtc "SELECT xact_commit FROM pg_stat_database WHERE datname = '$db'")"
    fi
    stop "$pid"
    case "$store" in
        sqlite) rows=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*) from reviews').fetchone()[0])" "$WORK/$name-$round.db")
            rm -f "$WORK/$name-$round.db"* ;;
        postgres) rows=$(psql "${JEVJUDGE_TEST_PG_URL%/*}/$db" -tAc 'select count(*) from reviews')
            psql "$JEVJUDGE_TEST_PG_URL" -qc "DROP DATABASE $db" >/dev/null ;;
    esac
    python3 scripts/bench_store.py run "$round" "$name" "$store" "$rows" "$log.json" "$log.out.err" \
        | tee -a "$RESULTS" | python3 scripts/bench_store.py line
    rm -f "$log.out.err"
}

for round in $(seq 1 "$ROUNDS"); do
    echo
    echo "== round $round of $ROUNDS (load average $(cut -d' ' -f1-3 /proc/loadavg))"
    for entry in $BINARIES; do
        for store in $STORES; do
            run "$round" "${entry%%=*}" "${entry#*=}" "$store"
        done
    done
done
echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 scripts/bench_store.py summary "$RESULTS"
