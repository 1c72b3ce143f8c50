#!/usr/bin/env bash
# Rate-limit benchmarks against `jevjudge fake-server` on 127.0.0.1 (bounded; each
# eval run is killed after 180 s). Release build. Figures come from the JSON reports:
#   1. --latency 20 --rate-limit 200/s: 2,000 cases at --concurrency 32, adaptive vs fixed:
#      ERROR rows, 429 share of attempts, wall vs the 10 s the limit allows (2,000 ÷ 200/s);
#   2. --latency 400 --rate-limit 40/s (the published live figure, scaled): 800 cases, same;
#   3. a wrong key against --key: requests sent after the first 401, adaptive and fixed;
#   4. --max-input-tokens on the sms-spam cases: input tokens spent vs the cap.
# The fake's answers are deterministic fakes, not a model: these figures measure the client.
# Usage: scripts/bench-limits.sh [1|2|3|4 ...]   (default: all; writes target/bench-limits/;
#        JEVJUDGE_BIN=path skips the release build)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
out_dir bench-limits
if [[ -n "${JEVJUDGE_BIN:-}" ]]; then
    JEVJUDGE="$JEVJUDGE_BIN" # an already-built release binary
else
    build_jevjudge release
fi
parts=("${@:-1 2 3 4}")
parts=(${parts[*]})

start_server() { # fake-server args...: a fresh fake (the previous one stopped); sets url
    if [[ -n "${FAKE_PID:-}" ]]; then stop "$FAKE_PID"; fi
    start_fake "$out/fake-server.log" "$@"
    url=$FAKE_URL
}

summarise() { # REPORT LABEL ALLOWED_SECONDS EXIT
    python3 - "$@" <<'PY'
import json, sys
report, label, allowed, code = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
r = json.load(open(report))
o = r["overall"]
a = o.get("attempts") or {}
total = a.get("total", 0)
s429 = a.get("by_status", {}).get("429", 0)
wall = r["wall_millis"] / 1000
print(f"{label}: exit {code}; rows {o['total']}, ERROR rows {o['errors']}; attempts {total} "
      f"({a.get('retried', 0)} retries), 429s {s429} = {100 * s429 / max(total, 1):.1f} % of attempts; "
      f"wall {wall:.2f} s = {wall / allowed:.2f}× the {allowed:g} s the limit allows; "
      f"review p50 {o['p50_millis']:.0f} ms, p95 {o['p95_millis']:.0f} ms")
PY
}

eval_run() { # LABEL CASES REPORT KEY ARGS... → sets code
    local label=$1 cases=$2 report=$3 key=$4
    shift 4
    set +e
    TYPESAFE_API_KEY="$key" timeout 180 "$JEVJUDGE" eval --definition examples/refund/definition.toml \
        --cases "$cases" --base-url "$url" --overwrite --report "$report" "$@" >"$out/$label.txt" 2>&1
    code=$?
    set -e
}

rate_limited() { # LATENCY RATE N ALLOWED
    local latency=$1 rate=$2 n=$3 allowed=$4 cases="$out/cases-$3.jsonl"
    [[ -f "$cases" ]] || make_refund_cases "$n" "$cases"
    start_server --latency "$latency" --rate-limit "$rate"
    eval_run "adaptive-$latency" "$cases" "$out/adaptive-$latency.json" bench-not-a-secret --concurrency 32
    summarise "$out/adaptive-$latency.json" "latency $latency ms, limit $rate, $n cases, --concurrency 32, adaptive" "$allowed" "$code"
    start_server --latency "$latency" --rate-limit "$rate"
    eval_run "fixed-$latency" "$cases" "$out/fixed-$latency.json" bench-not-a-secret --concurrency 32 --fixed-concurrency
    summarise "$out/fixed-$latency.json" "latency $latency ms, limit $rate, $n cases, --concurrency 32, fixed (adaptation off)" "$allowed" "$code"
}

for part in "${parts[@]}"; do
    case "$part" in
    1) rate_limited 20 200/s 2000 10 ;;
    2) rate_limited 400 40/s 800 20 ;;
    3)
        cases="$out/cases-2000.jsonl"
        [[ -f "$cases" ]] || make_refund_cases 2000 "$cases"
        for mode in adaptive fixed; do
            start_server --latency 20 --key the-right-key
            extra=()
            [[ "$mode" == fixed ]] && extra=(--fixed-concurrency)
            eval_run "wrong-key-$mode" "$cases" "$out/wrong-key-$mode.json" a-wrong-key --concurrency 32 "${extra[@]}"
            python3 - "$out/wrong-key-$mode.json" "$mode" "$code" "$out/wrong-key-$mode.txt" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
a = r["overall"]["attempts"]
line = [l for l in open(sys.argv[4]) if l.startswith("jevjudge: stopped:")]
print(f"wrong key, 2000 cases, --concurrency 32, {sys.argv[2]}: exit {sys.argv[3]}; requests sent {a['total']} "
      f"(401s: {a['by_status'].get('401', 0)}): the first plus {a['total'] - 1} already in flight beside it; "
      f"rows {r['overall']['total']}, not run {2000 - r['overall']['total']}; stderr: {line[0].strip() if line else '(none)'}")
PY
        done
        ;;
    4)
        start_server
        for cap in 2000 5000 20000; do
            set +e
            TYPESAFE_API_KEY=bench-not-a-secret timeout 180 "$JEVJUDGE" eval --definition examples/sms-spam/definition.toml \
                --cases examples/sms-spam/cases.jsonl --base-url "$url" --concurrency 16 \
                --max-input-tokens "$cap" --overwrite --report "$out/cap-$cap.json" >"$out/cap-$cap.txt" 2>&1
            code=$?
            set -e
            python3 - "$out/cap-$cap.json" "$cap" "$code" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
o, cap = r["overall"], int(sys.argv[2])
stop = r.get("stopped") or {}
print(f"sms-spam cases, --max-input-tokens {cap}: exit {sys.argv[3]}; input tokens spent {o['input_tokens']} "
      f"({100 * o['input_tokens'] / cap:.1f} % of the cap) over {o['total']} rows; "
      f"stopped: {stop.get('cause', 'no')}, next review's estimate {stop.get('next_estimate', '-')}")
PY
        done
        ;;
    *) echo "unknown part $part"; exit 2 ;;
    esac
done
