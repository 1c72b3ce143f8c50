#!/usr/bin/env bash
# Batch throughput and memory of `jevjudge eval` against `jevjudge fake-server --latency 20`
# (loopback only, bounded). Measures:
#   1. 2,000 cases at concurrency 32: wall time vs the ideal N × latency ÷ concurrency (1.25 s);
#   2. 10,000 cases at concurrency 32: peak resident memory (VmHWM) of the eval process.
# Usage: scripts/bench-eval.sh   (builds release; writes target/bench-eval/)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
out_dir bench-eval
build_jevjudge release

latency_ms=20
concurrency=32

start_fake "$out/fake-server.log" --latency "$latency_ms"

run_eval() { # N → prints wall seconds and peak KiB
    local n=$1 cases="$out/cases-$1.jsonl"
    [[ -f "$cases" ]] || make_refund_cases "$n" "$cases"
    TYPESAFE_API_KEY=bench-not-a-secret "$JEVJUDGE" eval --definition examples/refund/definition.toml \
        --cases "$cases" --concurrency "$concurrency" --budget 10s --base-url "$FAKE_URL" \
        --overwrite --report "$out/report-$n.json" >"$out/eval-$n.txt" 2>&1 &
    local pid=$! peak=0 start end
    start=$(date +%s.%N)
    while kill -0 "$pid" 2>/dev/null; do
        local hwm
        hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
        [[ -n "$hwm" && "$hwm" -gt "$peak" ]] && peak=$hwm
        sleep 0.02
    done
    wait "$pid"
    end=$(date +%s.%N)
    python3 - "$n" "$start" "$end" "$peak" "$out/report-$n.json" "$latency_ms" "$concurrency" <<'PY'
import json, sys
n, start, end, peak, report, latency, conc = sys.argv[1:]
n, wall, peak_kib = int(n), float(sys.argv[3]) - float(sys.argv[2]), int(peak)
r = json.load(open(report))
o = r["overall"]
ideal = n * int(latency) / 1000 / int(conc)
run = r["wall_millis"] / 1000
print(f"{n} cases, concurrency {conc}, latency {latency} ms: run {run:.3f} s (first review to last row), "
      f"ideal {ideal:.3f} s, ratio {run/ideal:.3f}; process start to exit {wall:.3f} s; peak RSS {peak_kib/1024:.1f} MiB; "
      f"rows {o['total']}, errors {o['errors']}, review p50 {o['p50_millis']:.1f} ms, p95 {o['p95_millis']:.1f} ms")
PY
}

run_eval 2000
run_eval 10000
