#!/usr/bin/env bash
# The reviewer pages at 100,000 pending items (issue 13 "Show"): how long `GET /ui/` (the queue
# page: stats by version + the first 50 items, rendered) takes, over real HTTP on 127.0.0.1.
#   1. builds jevjudge and the store's seeding bench in release;
#   2. seeds a new SQLite store with PENDING (100000) queued reviews through
#      crates/store/examples/queue_bench.rs (one in ten queued twice, a fifth of them of a second
#      version; it claims and decides 100 of them and prints its own store-level numbers);
#   3. starts `jevjudge serve --fake` on that store with a reviewer token, signs in with curl;
#   4. times N (200) requests of each: the queue page, the queue page of one version, a page
#      deep in the queue (cursor after half the items), and claim + item page; prints p50 / p99 /
#      max in ms (nearest rank; curl's time_total, so connection set-up included).
# Target: the queue page under 200 ms. Run: scripts/bench-ui.sh [PENDING] [N]
set -euo pipefail
cd "$(dirname "$0")/.."
pending=${1:-100000}
n=${2:-200}
step() { printf '==> %s\n' "$*"; }

step "cargo build --release (jevjudge, queue_bench)"
cargo build --release --quiet --bin jevjudge
cargo build --release --quiet -p jevjudge-store --example queue_bench

work=$(mktemp -d)
serve_pid=""
cleanup() {
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

step "seeding $pending pending reviews (queue_bench)"
target/release/examples/queue_bench "sqlite:$work/queue.db" "$pending" 100 | grep -v '^ ' | grep -iv explain || true

token="bench-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
export JEVJUDGE_BENCH_REVIEWERS="ada:$token"
target/release/jevjudge serve --definitions examples/definitions --addr 127.0.0.1:0 --fake \
  --store "sqlite:$work/queue.db" --store-state --queue-statuses INCONCLUSIVE,FAIL \
  --reviewer-tokens-env JEVJUDGE_BENCH_REVIEWERS --log-format json \
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
total=$(grep -o '<div class="figure">[0-9]*</div><div class="label">pending' "$work/queue.html" | grep -o '[0-9]*' | head -1)
step "serving $url; the queue page says $total pending"

middle=$(python3 - "$work/queue.db" "$total" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
row = db.execute("SELECT id FROM queue_items WHERE decided_at IS NULL ORDER BY id LIMIT 1 OFFSET ?",
                 (int(sys.argv[2]) // 2,)).fetchone()
print(row[0])
PY
)

times() { # label, then the curl arguments; prints p50 / p99 / max of n requests
  local label=$1; shift
  for _ in $(seq 5); do curl -s -o /dev/null -b "$jar" "$@"; done
  for _ in $(seq "$n"); do
    curl -s -o /dev/null -b "$jar" -w '%{http_code} %{time_total}\n' "$@"
  done | python3 -c '
import math, sys
label = sys.argv[1]
codes, ms = set(), []
for line in sys.stdin:
    code, seconds = line.split()
    codes.add(code); ms.append(float(seconds) * 1000)
ms.sort()
rank = lambda p: ms[max(0, math.ceil(p * len(ms)) - 1)]
print(f"{label:<34} n={len(ms)} status {sorted(codes)} p50 {rank(.5):6.1f} ms  p99 {rank(.99):6.1f} ms  max {ms[-1]:6.1f} ms")
' "$label"
}

step "timing ($n requests each)"
times "GET /ui/ (queue page)" "$url/ui/"
times "GET /ui/?version=bench-v2" "$url/ui/?version=bench-v2"
times "GET /ui/?cursor=<middle>" "$url/ui/?cursor=q1.$middle"
times "POST /ui/claim (303)" -X POST --data-urlencode "csrf=$form_csrf" --data-urlencode "version=" "$url/ui/claim"
item=$(curl -s -o /dev/null -b "$jar" -w '%{redirect_url}' -X POST --data-urlencode "csrf=$form_csrf" "$url/ui/claim")
times "GET /ui/items/{id} (item page)" "$item"
