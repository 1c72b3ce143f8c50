#!/usr/bin/env bash
# The review queue's store at 100,000 pending items, on SQLite and on PostgreSQL: claim and
# decision latency p50/p99 (target p99 < 20 ms), the first queue page and the stats, and the
# plans of the hot statements (indexes, no full table scan).
#
#   scripts/bench-queue-store.sh
#
# Builds the queue_bench example (release), runs it on a new SQLite file, then on a throwaway
# PostgreSQL 15 started by scripts/pg.sh --fsync (durable commits, as in production).
# Settings (environment): PENDING (100000), OPS (2000).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
with_throwaway_pg "$0" "$@"
settings PENDING=100000 OPS=2000

echo "== building the queue_bench example (release)"
timeout 1800 cargo build --release --quiet -p jevjudge-store --example queue_bench
BENCH="${CARGO_TARGET_DIR:-target}/release/examples/queue_bench"
make_work bench-queue-store

echo "== SQLite ($PENDING pending, $OPS claims and decisions)"
"$BENCH" "sqlite:$WORK/queue.db" "$PENDING" "$OPS"

echo "== PostgreSQL ($PENDING pending, $OPS claims and decisions)"
"$BENCH" "$JEVJUDGE_TEST_PG_URL" "$PENDING" "$OPS"
