#!/usr/bin/env bash
# A streaming `jevjudge eval` (`--max-cases N`) of N generated cases against
# `jevjudge fake-server --latency 0` (loopback only) at concurrency 32: peak resident memory
# (`/usr/bin/time`'s maximum RSS), the run's wall time and reviews per second.
# With RESUME=1 the rows file is then cut to its first half and the run resumed (`--resume`):
# the resumed run's peak RSS, wall time and reviews per second too.
# Usage: [CASES=FILE] [RESUME=1] scripts/bench-eval-stream.sh [N]   (default 1000000; builds release;
# writes target/bench-eval-stream/). The cases are FILE (N of make_refund_cases' cases), or
# generated and removed at the end, as the rows file is: 1,000,000 cases take about 270 MB.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
out_dir bench-eval-stream
build_jevjudge release
# JEVJUDGE_BIN=PATH measures another jevjudge binary (an earlier build).
JEVJUDGE=${JEVJUDGE_BIN:-$JEVJUDGE}
n=${1:-1000000}
cases=${CASES:-}
if [[ -z "$cases" ]]; then
    cases="$out/cases-$n.jsonl"
    on_exit() { rm -f "$cases" "$out/report-$n.rows.jsonl"; }
    make_refund_cases "$n" "$cases"
else
    on_exit() { rm -f "$out/report-$n.rows.jsonl"; }
fi
start_fake "$out/fake-server.log" --latency 0

# measured NAME FLAG: one streaming eval of the cases (FLAG --overwrite or --resume) under
# /usr/bin/time, then its line: peak RSS, process and run time, reviews/s, the report's figures.
measured() {
    local name=$1 flag=$2
    TYPESAFE_API_KEY=bench-not-a-secret /usr/bin/time -f "%M %e %U %S" -o "$out/time-$name.txt" \
        "$JEVJUDGE" eval --definition examples/refund/definition.toml --cases "$cases" \
        --max-cases "$n" --concurrency 32 --budget 10s --base-url "$FAKE_URL" "$flag" \
        --report "$out/report-$n.json" >"$out/eval-$name.txt" 2>&1
    python3 - "$n" "$name" "$out/time-$name.txt" "$out/report-$n.json" <<'PY'
import json, sys
n, name = int(sys.argv[1]), sys.argv[2]
peak_kib, elapsed, user, system = open(sys.argv[3]).read().split()
r = json.load(open(sys.argv[4]))
o = r["overall"]
what = (f"resumed with {n - n // 2} of {n} cases left" if name == "resume"
        else f"{n} streamed cases, concurrency 32, latency 0")
# A resumed run's wall time is its own; its rows include the earlier half.
rate = "" if name == "resume" else f"{o['total'] / (r['wall_millis'] / 1000):,.0f} reviews/s; "
print(f"{what}: peak RSS {int(peak_kib) / 1024:.1f} MiB; "
      f"process {float(elapsed):.1f} s (user {float(user):.1f} s, sys {float(system):.1f} s); "
      f"run {r['wall_millis'] / 1000:.1f} s, {rate}rows {o['total']}, errors {o['errors']}, "
      f"p50 {o['p50_millis']} ms, p95 {o['p95_millis']} ms")
PY
}

measured "$n" --overwrite
if [[ "${RESUME:-}" == 1 ]]; then
    rows="$out/report-$n.rows.jsonl"
    head -n $((n / 2 + 1)) "$rows" >"$rows.half"
    mv "$rows.half" "$rows"
    measured resume --resume
fi
