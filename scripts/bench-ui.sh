#!/usr/bin/env bash
# The reviewer pages at 100,000 pending items (issue 13 "Show"): how long the pages take over
# real HTTP on 127.0.0.1, with the queue page (stats by version + the oldest 50 items,
# rendered) the one with a target: under 200 ms.
#   1. builds jevjudge and the store's queue_bench example in release;
#   2. seeds a new SQLite store with crates/store/examples/queue_bench.rs (queue-store's
#      seeding: 20,000 reviews decided earlier, then PENDING (100000) queued reviews, one in
#      ten queued twice, a fifth of them of a second version bench-v2; it claims and decides
#      100 and prints its own store-level numbers), starts `jevjudge serve --fake` on that
#      store with a reviewer token, and signs in with curl;
#   3. times N (200) requests of each: the queue page, the queue page of one version, a page
#      deep in the queue (cursor after half the items), claim (303), and an item page; prints
#      p50 / p99 / max in ms (nearest rank; curl's time_total, connection set-up included).
# Run: scripts/bench-ui.sh [PENDING] [N]   (JEVJUDGE=path uses that binary instead of building)
set -euo pipefail
cd "$(dirname "$0")/.."
pending=${1:-100000}
n=${2:-200}
step() { printf '==> %s\n' "$*"; }

jevjudge=${JEVJUDGE:-target/release/jevjudge}
if [ -z "${JEVJUDGE:-}" ]; then
  step "cargo build --release --bin jevjudge"
  cargo build --release --quiet --bin jevjudge
fi
step "cargo build --release -p jevjudge-store --example queue_bench"
cargo build --release --quiet -p jevjudge-store --example queue_bench

work=$(mktemp -d)
serve_pid=""
cleanup() {
  # Only the process this script started, by its id.
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

step "seeding $pending pending reviews (queue_bench)"
target/release/examples/queue_bench "sqlite:$work/queue.db" "$pending" 100 20000 \
  | grep -E 'seeded|p50' || { echo "bench-ui: queue_bench failed" >&2; exit 1; }

token="bench-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
export JEVJUDGE_BENCH_REVIEWERS="ada:$token"
RUST_LOG=${RUST_LOG:-warn} "$jevjudge" serve --definitions examples/definitions \
  --addr 127.0.0.1:0 --fake --store "sqlite:$work/queue.db" --store-state \
  --queue-statuses INCONCLUSIVE,FAIL --reviewer-tokens-env JEVJUDGE_BENCH_REVIEWERS \
  >"$work/serve.out" 2>"$work/serve.err" &
serve_pid=$!
for _ in $(seq 200); do
  grep -q 'listening on' "$work/serve.out" 2>/dev/null && break
  sleep 0.1
done
url=$(grep -o 'http://[0-9.:]*' "$work/serve.out" | head -1)
[ -n "$url" ] || { cat "$work/serve.err" >&2; exit 1; }

jar="$work/cookies"
csrf() { grep -o 'name="csrf" value="[0-9a-f]*"' "$1" | head -1 | cut -d'"' -f4; }
curl -sf -c "$jar" -b "$jar" "$url/ui/sign-in" -o "$work/sign-in.html"
curl -sf -c "$jar" -b "$jar" -o /dev/null -X POST "$url/ui/sign-in" \
  --data-urlencode "csrf=$(csrf "$work/sign-in.html")" --data-urlencode "token=$token"
curl -sf -b "$jar" "$url/ui/" -o "$work/queue.html"
grep -q 'signed in as' "$work/queue.html" || { echo "bench-ui: sign-in failed" >&2; exit 1; }
form_csrf=$(csrf "$work/queue.html")
total=$(grep -o '<div class="figure">[0-9]*</div><div class="label">pending' "$work/queue.html" \
  | grep -o '[0-9]*' | head -1)
step "serving $url; the queue page says $total pending"
[ "$total" -ge "$pending" ] || { echo "bench-ui: expected $pending pending" >&2; exit 1; }
middle=$(python3 -c '
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
row = db.execute("SELECT queued_at, id FROM queue_items WHERE decided_at IS NULL "
                 "ORDER BY queued_at, id LIMIT 1 OFFSET ?", (int(sys.argv[2]) // 2,)).fetchone()
print(f"{row[0]}.{row[1]}")  # the store cursor after this item: q1.<queued_at>.<id>
' "$work/queue.db" "$total")

times() { # label, then curl arguments: n timed requests after 5 warm-up ones
  local label=$1; shift
  for _ in $(seq 5); do curl -s -o /dev/null -b "$jar" "$@"; done
  for _ in $(seq "$n"); do
    curl -s -o /dev/null -b "$jar" -w '%{http_code} %{time_total}\n' "$@"
  done | python3 -c '
import math, sys
codes, ms = set(), []
for line in sys.stdin:
    code, seconds = line.split()
    codes.add(code); ms.append(float(seconds) * 1000)
ms.sort()
rank = lambda p: ms[max(0, math.ceil(p * len(ms)) - 1)]
status = ",".join(sorted(codes))
print(f"{sys.argv[1]:<32} n={len(ms)} status {status}  p50 {rank(.5):6.1f} ms  p99 {rank(.99):6.1f} ms  max {ms[-1]:6.1f} ms")
' "$label"
}

step "timing ($n requests each; $pending pending)"
times "GET /ui/ (queue page)" "$url/ui/"
times "GET /ui/?version=bench-v2" "$url/ui/?version=bench-v2"
times "GET /ui/?cursor=<middle>" "$url/ui/?cursor=q1.$middle"
times "POST /ui/claim" -X POST --data-urlencode "csrf=$form_csrf" --data-urlencode "version=" "$url/ui/claim"
item=$(curl -s -o /dev/null -b "$jar" -w '%{redirect_url}' -X POST --data-urlencode "csrf=$form_csrf" "$url/ui/claim")
times "GET /ui/items/{id} (item page)" "$item"
