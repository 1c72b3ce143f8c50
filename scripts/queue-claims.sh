#!/usr/bin/env bash
# Concurrent claims on two replicas sharing one PostgreSQL: no item is ever handed
# out twice.
#
#   bash scripts/queue-claims.sh
#
# Starts (through scripts/pg.sh) a throwaway PostgreSQL, `jevjudge fake-server`, and two
# `jevjudge serve --store postgresql://… --store-state` replicas queueing every review
# (`--queue-statuses INCONCLUSIVE,FAIL --sample-pass 1`) for 8 reviewers. ITEMS reviews are
# posted (alternating replicas), so ITEMS items are pending. Then CLAIMS claims are sent at
# once (CALLERS threads), spread over the 8 reviewers and both replicas. Checks:
#   - from the responses: every 200 names a distinct item, 200s + 204s = CLAIMS, and
#     200s = min(CLAIMS, ITEMS);
#   - from the store: each claimed item has exactly one claimer, the one its 200 named.
# Exit 0 only when no item was handed out twice.
#
# Settings (environment): ITEMS (800), CLAIMS (1000), CALLERS (100), JEVJUDGE (a built binary;
# default: the release build of this tree, built first).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
settings ITEMS=800 CLAIMS=1000 CALLERS=100
release_on_pg queue-claims "$0" "$@"
build_percentiles

reviewers=""
for i in 1 2 3 4 5 6 7 8; do
    reviewers+="${reviewers:+,}reviewer-$i:tok-claims-$i-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')"
done
export JEVJUDGE_CLAIMS_REVIEWERS=$reviewers

start_fake "$WORK/fake.out"
"$JEVJUDGE" store migrate --store "$JEVJUDGE_TEST_PG_URL" >/dev/null
urls=()
for name in a b; do
    spawn_listening "$WORK/$name.out" env TYPESAFE_API_KEY=claims-dummy-key "$JEVJUDGE" serve \
        --definitions "$WORK/definitions" --addr 127.0.0.1:0 --base-url "$FAKE_URL" \
        --store "$JEVJUDGE_TEST_PG_URL" --store-state --queue-statuses INCONCLUSIVE,FAIL \
        --sample-pass 1 --reviewer-tokens-env JEVJUDGE_CLAIMS_REVIEWERS \
        --max-leases-per-reviewer "$CLAIMS"
    urls+=("$LISTEN_URL")
done
echo "fake at $FAKE_URL; replicas ${urls[0]}, ${urls[1]} on one PostgreSQL"

python3 - "$WORK/claims.json" "$ITEMS" "$CLAIMS" "$CALLERS" "${urls[@]}" <<'PY'
import collections, json, os, sys, threading, time
from concurrent.futures import ThreadPoolExecutor
sys.path.insert(0, "scripts")
from http_json import call
from percentiles import nearest_rank

out, items, claims, callers, urls = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:]
tokens = [pair.split(":", 1) for pair in os.environ["JEVJUDGE_CLAIMS_REVIEWERS"].split(",")]
state = json.load(open("examples/refund/state.json"))

def post(i):
    status, verdict = call(urls[i % 2], "POST", "/v1/reviews/refund-answer-v1",
                           {"state": state, "reference": f"claims-{i}"}, timeout=60)
    return status, verdict.get("status") if status == 200 and verdict else None

with ThreadPoolExecutor(16) as pool:
    posted = list(pool.map(post, range(items)))
bad = [p for p in posted if p[0] != 200 or p[1] == "ERROR"]
if bad:
    sys.exit(f"{len(bad)} reviews were not answered with a verdict: {bad[:3]}")
print(f"queued: {items} reviews posted over both replicas, each queued "
      f"({dict(collections.Counter(s for _, s in posted))})")

barrier = threading.Barrier(callers)
def claim(i):
    name, token = tokens[i % len(tokens)]
    url = urls[(i // len(tokens)) % 2]
    if i < callers:
        barrier.wait()
    started = time.monotonic()
    status, item = call(url, "POST", "/v1/queue/claim", {}, token, timeout=60)
    return {"reviewer": name, "replica": url, "status": status,
            "item": item["item"] if status == 200 and item else None,
            "ms": (time.monotonic() - started) * 1e3}

started = time.monotonic()
with ThreadPoolExecutor(callers) as pool:
    results = list(pool.map(claim, range(claims)))
wall = time.monotonic() - started
json.dump(results, open(out, "w"))
statuses = collections.Counter(r["status"] for r in results)
handed = [r["item"] for r in results if r["status"] == 200]
twice = [item for item, n in collections.Counter(handed).items() if n > 1]
latency = nearest_rank([r["ms"] for r in results], 50, 99)
print(f"claims: {claims} from {len(tokens)} reviewers over {len(urls)} replicas, {callers} at once, "
      f"in {wall:.2f} s; answers: " + ", ".join(f"{s}: {n}" for s, n in sorted(statuses.items())))
print(f"claim latency p50 {latency['p50']:.1f} ms, p99 {latency['p99']:.1f} ms")
print(f"items handed out: {len(handed)}, distinct: {len(set(handed))}, handed out twice (responses): {len(twice)}")
ok = (not twice and statuses[200] == min(claims, items)
      and statuses[200] + statuses[204] == claims)
sys.exit(0 if ok else 1)
PY

psql "$JEVJUDGE_TEST_PG_URL" -tA -F ' ' -c "select id, claimed_by from queue_items where claimed_by is not null" >"$WORK/claimed.txt"
python3 - "$WORK/claims.json" "$WORK/claimed.txt" <<'PY'
import collections, json, sys
results = json.load(open(sys.argv[1]))
rows = [line.split() for line in open(sys.argv[2]) if line.strip()]
by_item = dict(rows)
handed = {r["item"]: r["reviewer"] for r in results if r["status"] == 200}
wrong = [item for item, reviewer in handed.items() if by_item.get(item) != reviewer]
extra = [item for item in by_item if item not in handed]
print(f"store: {len(rows)} items claimed; matching their one 200's reviewer: {len(handed) - len(wrong)}; "
      f"claimed in the store but never answered: {len(extra)}")
sys.exit(1 if wrong or extra or len(rows) != len(handed) else 0)
PY
echo "no item was handed out twice"
