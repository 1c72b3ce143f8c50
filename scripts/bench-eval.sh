#!/usr/bin/env bash
# Batch throughput and memory of `jevjudge eval` against `jevjudge fake-server --latency 20`
# (loopback only, bounded). Measures:
#   1. 2,000 cases at concurrency 32: wall time vs the ideal N × latency ÷ concurrency (1.25 s);
#   2. 10,000 cases at concurrency 32: peak resident memory (VmHWM) of the eval process.
# Usage: scripts/bench-eval.sh   (builds release; writes target/bench-eval/)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out="${CARGO_TARGET_DIR:-$root/target}/bench-eval"
mkdir -p "$out"
cargo build --release --quiet -p jevjudge
bin="${CARGO_TARGET_DIR:-$root/target}/release/jevjudge"

latency_ms=20
concurrency=32

make_cases() { # N FILE
    python3 - "$1" "$2" <<'PY'
import json, sys
n, path = int(sys.argv[1]), sys.argv[2]
with open(path, "w") as f:
    for i in range(n):
        f.write(json.dumps({"scenario": f"s{i % 7}", "id": f"case-{i:05d}",
            "question": f"Has my refund {i} gone through?", "supporting_context": [f"Business record {i}: no refund has been executed"],
            "answer": f"No refund yet for order {i}; I need to verify the status.", "expected_pass": i % 2 == 0}) + "\n")
PY
}

server_log="$out/fake-server.log"
"$bin" fake-server --addr 127.0.0.1:0 --latency "$latency_ms" >"$server_log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
    url=$(head -n1 "$server_log" 2>/dev/null | sed -n 's/^listening on //p')
    [[ -n "$url" ]] && break
    sleep 0.05
done
[[ -n "$url" ]] || { echo "fake-server did not start"; exit 1; }

run_eval() { # N → prints wall seconds and peak KiB
    local n=$1 cases="$out/cases-$1.jsonl"
    [[ -f "$cases" ]] || make_cases "$n" "$cases"
    TYPESAFE_API_KEY=bench-not-a-secret "$bin" eval --definition examples/refund/definition.toml \
        --cases "$cases" --concurrency "$concurrency" --budget 10s --base-url "$url" \
        --report "$out/report-$n.json" >"$out/eval-$n.txt" 2>&1 &
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
