#!/usr/bin/env bash
# Batch throughput, CPU and memory of `jevjudge eval` against `jevjudge fake-server` (loopback
# only, bounded), next to the physical limit: the bare client (crates/eval/examples/
# bare_client.rs, the same tokio + reqwest stack sending byte-identical requests at the same
# concurrency, nothing else). Measures:
#   1. 2,000 cases at concurrency 32 and latency L = 0, 5 and 20 ms: the bare client, eval
#      --fixed-concurrency and eval (adaptive), interleaved, ROUNDS times each; prints the median
#      wall time with its spread, jevjudge's throughput as a share of bare (bare wall ÷ jevjudge
#      wall), the CPU per review (user + sys ÷ reviews, whole process) and that CPU as a
#      multiple of the bare client's in the same round (median of the rounds' ratios);
#   2. 10,000 cases at concurrency 32 and L = 20 ms: peak resident memory (VmHWM) of eval.
# Usage: scripts/bench-eval.sh [ROUNDS]   (default 5; builds release; writes target/bench-eval/)
#        LATENCIES="0" scripts/bench-eval.sh 15   measures only the latencies listed
#        CASES_N=10000 scripts/bench-eval.sh      part 1 with another number of cases
#        BINARIES="before=PATH after=PATH" scripts/bench-eval.sh 21   builds side by side
# Wall times: eval's own (report `wall_millis`, first review to last row) and the bare client's
# (first request to last answer); both processes first read every case.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
out_dir bench-eval
build_jevjudge release -p jevjudge-eval --example bare_client
BARE="$TARGET_DIR/release/examples/bare_client"
# JEVJUDGE_BIN=PATH measures another jevjudge binary (an earlier build) against the same bare client.
JEVJUDGE=${JEVJUDGE_BIN:-$JEVJUDGE}
# BINARIES="NAME=PATH NAME=PATH" measures several builds in the same rounds, each next to the
# same bare run (for a before/after on a machine whose speed drifts); default: this one.
read -r -a builds <<<"${BINARIES:-jevjudge=$JEVJUDGE}"
rounds=${1:-5}
n=${CASES_N:-2000}
concurrency=32
export TYPESAFE_API_KEY=bench-not-a-secret
cases="$out/cases-$n.jsonl"
[[ -f "$cases" ]] || make_refund_cases "$n" "$cases"
results="$out/ratios.tsv"
: >"$results"

# timed KIND LATENCY COMMAND...: runs COMMAND under scripts/cpu-time.py, appends
# "KIND LATENCY WALL_S CPU_S" to $results (WALL_S from the run's own clock, CPU_S user +
# system to the microsecond).
timed() {
    local kind=$1 latency=$2 wall
    shift 2
    python3 scripts/cpu-time.py "$out/cpu.txt" "$@" >"$out/run.txt" 2>"$out/run.err"
    if [[ "$kind" == bare ]]; then
        wall=$(sed -n 's/.*wall \([0-9.]*\) s.*/\1/p' "$out/run.txt")
    else
        wall=$(json "$out/report.json" 'd["wall_millis"] / 1000')
    fi
    echo "$kind $latency $wall $(cat "$out/cpu.txt")" >>"$results"
}

for latency in ${LATENCIES:-0 5 20}; do
    start_fake "$out/fake-server-$latency.log" --latency "$latency"
    for _ in $(seq 1 "$rounds"); do
        timed bare "$latency" "$BARE" examples/refund/definition.toml "$cases" "$FAKE_URL" "$concurrency"
        for build in "${builds[@]}"; do
            name=${build%%=*}
            [[ ${#builds[@]} -gt 1 ]] || name=
            for mode in fixed adaptive; do
                flag=()
                [[ "$mode" == fixed ]] && flag=(--fixed-concurrency)
                timed "$mode${name:+:$name}" "$latency" "${build#*=}" eval \
                    --definition examples/refund/definition.toml --cases "$cases" \
                    --concurrency "$concurrency" --budget 10s --base-url "$FAKE_URL" \
                    "${flag[@]}" --overwrite --report "$out/report.json"
            done
        done
    done
    stop "$FAKE_PID"
done

python3 - "$results" "$n" "$rounds" <<'PY'
import statistics, sys
path, n, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
runs = {}
for line in open(path):
    kind, latency, wall, cpu = line.split()
    runs.setdefault((int(latency), kind), []).append((float(wall), float(cpu)))
print(f"{n} cases, concurrency 32, {rounds} interleaved rounds; median wall [min–max]; "
      f"throughput share of bare = bare wall ÷ wall (median of the rounds' ratios)")
for latency in sorted({l for l, _ in runs}):
    bare = runs[(latency, "bare")]
    kinds = [kind for l, kind in runs if l == latency]
    for kind in kinds:
        walls = [w for w, _ in runs[(latency, kind)]]
        cpus = [c / n * 1e6 for _, c in runs[(latency, kind)]]
        ratios = [b[0] / w for b, w in zip(bare, walls)]
        # CPU ÷ bare's CPU in the same round (paired), so a slow spell of the machine that
        # hits a whole round cancels out.
        cpu_ratios = [c / b[1] for b, (_, c) in zip(bare, runs[(latency, kind)])]
        print(f"L = {latency:>2} ms  {kind:<15} wall {statistics.median(walls):.3f} s "
              f"[{min(walls):.3f}–{max(walls):.3f}]  share of bare {statistics.median(ratios):.2f} "
              f"[{min(ratios):.2f}–{max(ratios):.2f}]  CPU/review {statistics.median(cpus):.1f} µs "
              f"[{min(cpus):.1f}–{max(cpus):.1f}]  CPU ÷ bare {statistics.median(cpu_ratios):.2f} "
              f"[{min(cpu_ratios):.2f}–{max(cpu_ratios):.2f}]")
PY

# Peak memory of a 10,000-case run at L = 20 ms.
start_fake "$out/fake-server.log" --latency 20
cases="$out/cases-10000.jsonl"
[[ -f "$cases" ]] || make_refund_cases 10000 "$cases"
/usr/bin/time -f "%M" -o "$out/time.txt" "$JEVJUDGE" eval --definition examples/refund/definition.toml \
    --cases "$cases" --concurrency "$concurrency" --budget 10s --base-url "$FAKE_URL" \
    --overwrite --report "$out/report-10000.json" >"$out/eval-10000.txt" 2>&1
echo "10000 cases, concurrency 32, latency 20 ms: run $(json "$out/report-10000.json" \
    'round(d["wall_millis"] / 1000, 3)') s; peak RSS $(awk '{printf "%.1f", $1 / 1024}' "$out/time.txt") MiB"
