#!/usr/bin/env bash
# Two replicas of `jevjudge serve` on one PostgreSQL, one killed with SIGKILL mid-run: every
# review answered 200 must be in the store exactly once.
#
#   scripts/replicas.sh
#
# Starts (through scripts/pg.sh --fsync) a throwaway PostgreSQL, `jevjudge fake-server
# --latency 20`, and two `jevjudge serve --store postgresql://…` replicas. A round-robin client
# (Python threads, CALLERS at once, no retries) sends REVIEWS reviews, each with its own
# `reference`; when half are sent, replica A is killed with `kill -9`. Then it checks, in the
# database: each 200 answer's review_id is there exactly once, each answered reference has
# exactly one row, and counts the rows written for requests whose answer never arrived (the
# replica died between its commit and its response). Exit 0 only when nothing answered 200 is
# missing or doubled.
#
# Settings (environment): REVIEWS (10000), CALLERS (32), LATENCY_MS (20), JEVJUDGE (the binary;
# default: the release build of this tree, built first).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
settings REVIEWS=10000 CALLERS=32 LATENCY_MS=20
release_on_pg replicas "$0" "$@"

start_fake "$WORK/fake.out" --latency "$LATENCY_MS"
urls=()
replica_pids=()
for name in a b; do
    spawn_listening "$WORK/$name.out" env TYPESAFE_API_KEY=replica-dummy-key "$JEVJUDGE" serve \
        --definitions "$WORK/definitions" --addr 127.0.0.1:0 --base-url "$FAKE_URL" \
        --store "$JEVJUDGE_TEST_PG_URL"
    replica_pids+=("$LISTEN_PID")
    urls+=("$LISTEN_URL")
done
echo "fake at $FAKE_URL (latency ${LATENCY_MS} ms); replicas ${urls[0]} (pid ${replica_pids[0]}), ${urls[1]} (pid ${replica_pids[1]})"
for url in "${urls[@]}"; do
    curl -sf "$url/readyz" >/dev/null || { echo "replica $url is not ready" >&2; exit 1; }
done

python3 - "$WORK/answers.json" "$REVIEWS" "$CALLERS" "${replica_pids[0]}" "${urls[@]}" <<'PY'
import json, os, signal, sys, threading, time, urllib.request, urllib.error
from concurrent.futures import ThreadPoolExecutor

out, total, callers, victim, urls = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:]
state = json.load(open("examples/refund/state.json"))
lock = threading.Lock()
sent = 0
killed_at = None
answers = {}  # reference -> (status, review_id or None)

def one(i):
    global sent, killed_at
    with lock:
        sent += 1
        if killed_at is None and sent > total // 2:
            os.kill(victim, signal.SIGKILL)
            killed_at = sent
    reference = f"replica-run-{i}"
    body = json.dumps({"state": state, "reference": reference}).encode()
    request = urllib.request.Request(urls[i % len(urls)] + "/v1/reviews/refund-answer-v1", data=body,
                                     headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            answers[reference] = (response.status, json.load(response).get("review_id"))
    except urllib.error.HTTPError as error:
        answers[reference] = (error.code, None)
    except Exception as error:
        answers[reference] = ("no answer", None)

started = time.monotonic()
with ThreadPoolExecutor(callers) as pool:
    list(pool.map(one, range(total)))
wall = time.monotonic() - started
json.dump({"answers": answers, "killed_at": killed_at, "wall": wall}, open(out, "w"))
PY

psql "$JEVJUDGE_TEST_PG_URL" -tA -F ' ' -c "select reference, id from reviews" >"$WORK/rows.txt"
python3 - "$WORK/answers.json" "$WORK/rows.txt" <<'PY'
import collections, json, sys
run = json.load(open(sys.argv[1]))
answers = run["answers"]
rows = [line.split() for line in open(sys.argv[2]) if line.strip()]
by_reference = collections.Counter(reference for reference, _ in rows)
by_id = collections.Counter(review_id for _, review_id in rows)
ok = {ref: rid for ref, (status, rid) in answers.items() if status == 200}
statuses = collections.Counter(str(status) for status, _ in answers.values())
missing = [ref for ref, rid in ok.items() if by_id.get(rid) != 1 or by_reference.get(ref) != 1]
unanswered_rows = sum(n for ref, n in by_reference.items() if ref not in ok)
print(f"sent {len(answers)} reviews in {run['wall']:.1f} s; replica A killed with SIGKILL after {run['killed_at']} were sent")
print("answers: " + ", ".join(f"{s}: {n}" for s, n in sorted(statuses.items())))
print(f"rows in the store: {len(rows)}")
print(f"answered 200: {len(ok)}; each in the store exactly once by review_id and by reference: {len(ok) - len(missing)}; missing or doubled: {len(missing)}")
print(f"rows written for requests whose answer never arrived: {unanswered_rows}")
sys.exit(1 if missing else 0)
PY
