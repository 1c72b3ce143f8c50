#!/usr/bin/env bash
# The reviewer pages at 100,000 pending items (issue 13 "Show"): how long the pages take over
# real HTTP on 127.0.0.1, with the queue page (stats by version + the oldest 50 items,
# rendered) the one with a target: under 200 ms.
#   1. builds jevjudge in release;
#   2. starts `jevjudge serve --fake` on a new SQLite store with a reviewer token (the store is
#      migrated and the definitions kept), then seeds PENDING (100000) queued INCONCLUSIVE
#      reviews into it with one generated-rows SQL statement per table (the seeding of
#      scripts/bench-queue.sh, here four in five of refund-answer-v1 and one in five of
#      support-draft-v1, one queue item each, then ANALYZE), and signs in with curl;
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

work=$(mktemp -d)
serve_pid=""
cleanup() {
  # Only the process this script started, by its id.
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

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

step "seeding $pending pending reviews"
python3 - "$work/queue.db" "$pending" <<'PY'
import sqlite3, sys, time
db, pending = sqlite3.connect(sys.argv[1], isolation_level=None), int(sys.argv[2])
digest = dict(db.execute("SELECT version, digest FROM definitions").fetchall())
started = time.time()
series = f"WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < {pending})"
version = "CASE WHEN n % 5 = 0 THEN 'support-draft-v1' ELSE 'refund-answer-v1' END"
digests = (f"CASE WHEN n % 5 = 0 THEN '{digest['support-draft-v1']}' "
           f"ELSE '{digest['refund-answer-v1']}' END")
review_id = "printf('01900000-%04x-7000-8000-%012x', n / 65536, n)"
item_id = "printf('01900001-%04x-7000-8000-%012x', n / 65536, n)"
db.executescript(f"""
BEGIN;
{series}
INSERT INTO reviews (id, received_at, definition_version, definition_digest, state_digest,
    reference, status, error, detail, findings, model, input_tokens, output_tokens,
    elapsed_micros, request_id, backend, state, answers, requested_model)
SELECT {review_id}, 1767225600000 + n, {version}, {digests}, 'sha256:bench',
    'bench-' || n, 'INCONCLUSIVE', 'NONE', NULL,
    '{{"supported":{{"status":"INCONCLUSIVE","yes_probability":0.5,"expected_probability":0.5}}}}',
    'jev-1.13.0', 300, 20, 1000, 'bench-' || n, 'fake',
    '{{"user_question":"Has my refund gone through?","supporting_context":["no refund executed"],"assistant_answer":"Draft ' || n || '"}}',
    NULL, 'jev-1.13.0'
FROM s;
{series}
INSERT INTO queue_items (id, review_id, definition_version, reason, slot, queued_at)
SELECT {item_id}, {review_id}, {version}, 'status', 1, 1767225600000 + n FROM s;
COMMIT;
ANALYZE;
""")
print(f"seeded {pending} pending items in {time.time() - started:.1f} s")
PY

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
print(db.execute("SELECT id FROM queue_items ORDER BY id LIMIT 1 OFFSET ?", (int(sys.argv[2]) // 2,)).fetchone()[0])
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
times "GET /ui/?version=support-draft-v1" "$url/ui/?version=support-draft-v1"
times "GET /ui/?cursor=<middle>" "$url/ui/?cursor=q1.$middle"
times "POST /ui/claim" -X POST --data-urlencode "csrf=$form_csrf" --data-urlencode "version=" "$url/ui/claim"
item=$(curl -s -o /dev/null -b "$jar" -w '%{redirect_url}' -X POST --data-urlencode "csrf=$form_csrf" "$url/ui/claim")
times "GET /ui/items/{id} (item page)" "$item"
