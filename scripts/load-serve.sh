#!/usr/bin/env bash
# Load test of `jevjudge serve`, on the loopback interface only, bounded in count and time.
#
#   scripts/load-serve.sh
#
# 1. Builds release binaries (jevjudge, and the loadgen example of jevjudge-serve).
# 2. Starts `jevjudge fake-server --latency 20` (a System One fake answering after 20 ms).
# 3. Phase "bound": `jevjudge serve` in front of it (--max-concurrent 32, default queue 256),
#    20,000 reviews from 64 concurrent callers. Prints failed requests, throughput against the
#    ideal set by the backend bound (max-concurrent / latency), the service's added latency
#    (round trip minus the review time each Result reports), the added latency the service
#    measured itself (`jevjudge_review_added_seconds`: from the complete request head until the
#    response was written, less the slot wait and the review, so the load generator's own
#    scheduling on the shared cores is left out) and the serve process's peak memory.
# 4. Phase "shed": the same service with a low queue bound (--max-concurrent 4 --queue 4), five
#    rounds of 100,000 requests from 64 callers: most are refused with a fast 503 + Retry-After,
#    and resident memory stays flat from round to round.
#
# Settings (environment): REQUESTS (20000), CALLERS (64), LATENCY_MS (20), MAX_CONCURRENT (32),
# SHED_MAX_CONCURRENT (4), SHED_QUEUE (4), SHED_REQUESTS (100000), SHED_ROUNDS (5), MAX_SECONDS
# per loadgen run (300), RUST_LOG for the service (info: one log line per request, to a file),
# JEVJUDGE_BIN to measure another jevjudge binary (an earlier build) with the same load generator.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
settings REQUESTS=20000 CALLERS=64 LATENCY_MS=20 MAX_CONCURRENT=32 SHED_MAX_CONCURRENT=4 \
    SHED_QUEUE=4 SHED_REQUESTS=100000 SHED_ROUNDS=5 MAX_SECONDS=300 RUST_LOG=info
export RUST_LOG

echo "== building release binaries"
build_jevjudge release -p jevjudge-serve --example loadgen
LOADGEN="$TARGET_DIR/release/examples/loadgen"
JEVJUDGE=${JEVJUDGE_BIN:-$JEVJUDGE}
make_work load

kib() { awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; }
status_kib() { awk -v key="$2:" '$1 == key { print $2 }' "/proc/$1/status"; }

# Starts `jevjudge serve` with extra flags; sets SERVE_PID and SERVE_URL.
start_serve() {
    local name=$1
    shift
    spawn_listening "$WORK/serve-$name.out" env TYPESAFE_API_KEY=loadtest-dummy-key "$JEVJUDGE" serve \
        --definitions "$WORK/definitions" --addr 127.0.0.1:0 --base-url "$FAKE_URL" "$@"
    SERVE_PID=$LISTEN_PID
    SERVE_URL=$LISTEN_URL
}

# Stops the service with SIGTERM and reports its exit status.
stop_serve() {
    kill -TERM "$SERVE_PID"
    local code=0
    wait "$SERVE_PID" || code=$?
    forget "$SERVE_PID"
    echo "serve stopped on SIGTERM with exit status $code"
}

# Runs the load generator ($2 requests); prints its report and keeps its JSON line in
# $WORK/$1.json.
load() {
    local name=$1 requests=$2
    "$LOADGEN" --url "$SERVE_URL" --requests "$requests" --concurrency "$CALLERS" \
        --max-seconds "$MAX_SECONDS" | tee "$WORK/$name.txt"
    grep '^LOADGEN_JSON ' "$WORK/$name.txt" | sed 's/^LOADGEN_JSON //' >"$WORK/$name.json"
}

metric() { curl -s --max-time 5 "$SERVE_URL/metrics" | grep -E "$1" || true; }

# The service's own added-latency histogram: p50 and p99 (interpolated inside their bucket),
# the share at or under 1 ms and the bucket holding the largest value.
added_on_server() {
    curl -s --max-time 5 "$SERVE_URL/metrics" | python3 -c '
import re, sys
buckets = [(float(m.group(1)), int(m.group(2))) for m in
           (re.match(r"jevjudge_review_added_seconds_bucket\{le=\"([^\"]+)\"\} (\d+)", line)
            for line in sys.stdin) if m]
if not buckets:
    print("not measured (this binary has no jevjudge_review_added_seconds)")
    sys.exit()
total = buckets[-1][1]
if total == 0:
    print("no answered review")
    sys.exit()
def quantile(q):
    below, seen = 0.0, 0
    for bound, count in buckets:
        if count >= q * total:
            if bound == float("inf"):
                return "> %.0f" % (below * 1e3)
            return "%.3f" % (1e3 * (below + (bound - below) * (q * total - seen) / max(1, count - seen)))
        below, seen = bound, count
under = dict(buckets).get(0.001, 0)
top = next(bound for bound, count in buckets if count == total)
print("p50 %s  p99 %s  max <= %s ms; %.2f%% at or under 1 ms (n=%d)" % (
    quantile(0.5), quantile(0.99), "%g" % (top * 1e3), 100 * under / max(1, total), total))
'
}

echo "== starting the fake System One server (latency ${LATENCY_MS} ms)"
start_fake "$WORK/fake.out" --latency "$LATENCY_MS"
echo "fake at $FAKE_URL"

echo
echo "== phase bound: --max-concurrent $MAX_CONCURRENT, queue 256; $REQUESTS reviews from $CALLERS callers"
start_serve bound --max-concurrent "$MAX_CONCURRENT"
echo "serve at $SERVE_URL (pid $SERVE_PID), RSS at start $(kib "$(status_kib "$SERVE_PID" VmRSS)")"
load bound "$REQUESTS"
ideal=$(awk -v c="$MAX_CONCURRENT" -v l="$LATENCY_MS" 'BEGIN { printf "%.0f", c * 1000 / l }')
echo
echo "-- phase bound summary"
echo "failed requests:        $(json "$WORK/bound.json" "d['failed']") (ERROR verdicts: $(json "$WORK/bound.json" "d['error_verdicts']"))"
echo "throughput:             $(json "$WORK/bound.json" "'%.0f' % d['throughput_ok_per_second']") reviews/s; ideal $ideal/s (max-concurrent $MAX_CONCURRENT / ${LATENCY_MS} ms) = $(json "$WORK/bound.json" "'%.1f' % (100 * d['throughput_ok_per_second'] / $ideal)")% of ideal"
echo "review time ms:         p50 $(json "$WORK/bound.json" "'%.2f' % d['review_ms']['p50']")  p99 $(json "$WORK/bound.json" "'%.2f' % d['review_ms']['p99']")"
echo "added latency ms:       p50 $(json "$WORK/bound.json" "'%.2f' % d['added_ms']['p50']")  p99 $(json "$WORK/bound.json" "'%.2f' % d['added_ms']['p99']")  (round trip - review, queue wait included)"
echo "added, no queue wait:   p50 $(json "$WORK/bound.json" "'%.2f' % d['added_without_queue_ms']['p50']")  p99 $(json "$WORK/bound.json" "'%.2f' % d['added_without_queue_ms']['p99']")"
echo "added, server-side ms:  $(added_on_server)"
echo "serve peak memory:      VmHWM $(kib "$(status_kib "$SERVE_PID" VmHWM)"), RSS now $(kib "$(status_kib "$SERVE_PID" VmRSS)")"
metric '^jevjudge_(backend_attempts_total|backend_retries_total|backend_responses_total|queue_rejections_total)'
stop_serve

echo
echo "== phase shed: --max-concurrent $SHED_MAX_CONCURRENT --queue $SHED_QUEUE; $SHED_ROUNDS rounds of $SHED_REQUESTS requests from $CALLERS callers"
start_serve shed --max-concurrent "$SHED_MAX_CONCURRENT" --queue "$SHED_QUEUE"
echo "serve at $SERVE_URL (pid $SERVE_PID), RSS at start $(kib "$(status_kib "$SERVE_PID" VmRSS)")"
rss=()
hwm=()
for round in $(seq 1 "$SHED_ROUNDS"); do
    load "shed$round" "$SHED_REQUESTS"
    rss+=("$(status_kib "$SERVE_PID" VmRSS)")
    hwm+=("$(status_kib "$SERVE_PID" VmHWM)")
done
shed_ideal=$(awk -v c="$SHED_MAX_CONCURRENT" -v l="$LATENCY_MS" 'BEGIN { printf "%.0f", c * 1000 / l }')
echo
echo "-- phase shed summary"
for round in $(seq 1 "$SHED_ROUNDS"); do
    f="$WORK/shed$round.json"
    echo "round $round: $(json "$f" "d['sent']") requests in $(json "$f" "'%.2f' % d['wall_seconds']") s; 200s $(json "$f" "d['statuses'].get('200', 0)"), 503s $(json "$f" "d['statuses'].get('503', 0)"), other $(json "$f" "sum(n for s, n in d['statuses'].items() if s not in ('200', '503'))"); 503 round trip ms p50 $(json "$f" "'%.3f' % d['refused_503_ms']['p50']") p99 $(json "$f" "'%.3f' % d['refused_503_ms']['p99']"); 200s at $(json "$f" "'%.0f' % d['throughput_ok_per_second']")/s (ideal ${shed_ideal}/s); RSS after $(kib "${rss[$((round - 1))]}"), VmHWM $(kib "${hwm[$((round - 1))]}")"
done
echo "memory: RSS growth from round 1 to round $SHED_ROUNDS: $(kib $((rss[SHED_ROUNDS - 1] - rss[0])))"
metric '^jevjudge_(queue_rejections_total|reviews_in_flight|reviews_waiting)'
stop_serve
