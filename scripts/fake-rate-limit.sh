#!/usr/bin/env bash
# What a client sees against `jevjudge fake-server --latency 20 --rate-limit 200/s` (loopback
# only, bounded: 10 s of load, then 2,000 cases):
#   1. a plain load, 32 workers back to back, no retries, no pacing
#      (crates/fake/examples/rate_limit_load.rs): attempts by status, 429 share, answers/s;
#   2. `jevjudge eval` at --concurrency 32 over 2,000 cases with today's client (retries with
#      backoff, no adaptation): ERROR rows and wall time (the limit allows 200/s: 10 s ideal).
# Usage: scripts/fake-rate-limit.sh   (debug build; writes target/fake-rate-limit/)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
out_dir fake-rate-limit
build_jevjudge debug -p jevjudge-fake --example rate_limit_load
load="$TARGET_DIR/debug/examples/rate_limit_load"

echo "== 1. plain load: 32 workers, 10 s, against --latency 20 --rate-limit 200/s"
start_fake "$out/server-load.log" --latency 20 --rate-limit 200/s
"$load" "$FAKE_URL" 32 10

echo "== 2. jevjudge eval, 2,000 cases, --concurrency 32, against a fresh --latency 20 --rate-limit 200/s"
start_fake "$out/server-eval.log" --latency 20 --rate-limit 200/s
cases="$out/cases-2000.jsonl"
make_refund_cases 2000 "$cases"
start=$(date +%s.%N)
set +e
TYPESAFE_API_KEY=bench-not-a-secret "$JEVJUDGE" eval --definition examples/refund/definition.toml \
    --cases "$cases" --concurrency 32 --budget 10s --base-url "$FAKE_URL" \
    --overwrite --report "$out/report-2000.json" >"$out/eval-2000.txt" 2>&1
code=$?
set -e
end=$(date +%s.%N)
python3 - "$out/report-2000.json" "$start" "$end" "$code" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
o = r["overall"]
wall = float(sys.argv[3]) - float(sys.argv[2])
by = {}
for row in r["rows"]:
    v = row["verdict"]
    if v["status"] == "ERROR":
        key = f'{v["error"]}/{v.get("detail")}'
        by[key] = by.get(key, 0) + 1
print(f"eval exit {sys.argv[4]}, backend {r['backend']}: rows {o['total']}, ERROR rows {o['errors']} {by}, "
      f"run {r['wall_millis']/1000:.2f} s (process {wall:.2f} s; the limit allows 10 s), "
      f"review p50 {o['p50_millis']:.0f} ms, p95 {o['p95_millis']:.0f} ms")
PY
