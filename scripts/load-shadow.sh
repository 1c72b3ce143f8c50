#!/usr/bin/env bash
# What a shadow that sends its own requests costs the live reviews: `jevjudge serve` under the
# same load through a route without and with a shadow version asking other questions, on the
# loopback interface only.
#
#   scripts/load-shadow.sh
#
# Builds the binaries (PROFILE, default release), starts `jevjudge fake-server --latency 20`
# and, for each run, `jevjudge serve --max-concurrent 32 --store sqlite:FILE --routes FILE`
# with route `refund` live on refund-answer-v1: first without shadows, then with
# support-draft-v1 as a shadow (other questions: each shadow review is its own backend
# request, within --shadow-max-concurrent, default 8). The loadgen example sends REQUESTS
# reviews from CALLERS callers to POST /v1/reviews/refund; the script prints the live
# reviews/s and round-trip p99 of both runs, their ratio (the target is within 5 %), and the
# shadow outcomes counted in /metrics (agree, flip, error, shed) with the backend requests the
# fake served.
#
# Settings (environment): REQUESTS (5000), CALLERS (64), LATENCY_MS (20), MAX_CONCURRENT (32),
# SHADOW_MAX_CONCURRENT (default of serve), MAX_SECONDS per run (300), PROFILE (release).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
settings REQUESTS=5000 CALLERS=64 LATENCY_MS=20 MAX_CONCURRENT=32 SHADOW_MAX_CONCURRENT= \
    MAX_SECONDS=300 PROFILE=release RUST_LOG=warn
export RUST_LOG

echo "== building $PROFILE binaries"
build_jevjudge "$PROFILE" -p jevjudge-serve --example loadgen
LOADGEN="$TARGET_DIR/$PROFILE/examples/loadgen"
make_work load-shadow
cp examples/definitions/support-draft-v1.toml "$WORK/definitions/support-draft.toml"

start_fake "$WORK/fake.out" --latency "$LATENCY_MS"
echo "fake System One at $FAKE_URL (latency ${LATENCY_MS} ms)"

shadow_flag=()
[[ -n "$SHADOW_MAX_CONCURRENT" ]] && shadow_flag=(--shadow-max-concurrent "$SHADOW_MAX_CONCURRENT")

run() {
    local name=$1 shadows=$2
    printf '[[route]]\nname = "refund"\nlive = "refund-answer-v1"\nshadows = [%s]\n' "$shadows" \
        >"$WORK/$name-routes.toml"
    spawn_listening "$WORK/$name.out" env TYPESAFE_API_KEY=loadtest-dummy-key "$JEVJUDGE" serve \
        --definitions "$WORK/definitions" --addr 127.0.0.1:0 --base-url "$FAKE_URL" \
        --max-concurrent "$MAX_CONCURRENT" "${shadow_flag[@]}" \
        --store "sqlite:$WORK/$name.db" --routes "$WORK/$name-routes.toml"
    local url=$LISTEN_URL pid=$LISTEN_PID
    echo
    echo "== $name: $REQUESTS reviews from $CALLERS callers to /v1/reviews/refund"
    "$LOADGEN" --url "$url" --version refund --requests "$REQUESTS" --concurrency "$CALLERS" \
        --max-seconds "$MAX_SECONDS" >"$WORK/$name.txt"
    grep '^LOADGEN_JSON ' "$WORK/$name.txt" | sed 's/^LOADGEN_JSON //' >"$WORK/$name.json"
    grep -E '^(statuses|verdicts|throughput)' "$WORK/$name.txt" || true
    # Shadows still running end within a second or two (their budget); then count them.
    sleep 3
    curl -sf "$url/metrics" | grep '^jevjudge_shadow' >"$WORK/$name.shadow" || true
    curl -sf "$url/metrics" | grep '^jevjudge_backend_attempts_total' || true
    stop "$pid"
}

run plain ''
run shadowed '"support-draft-v1"'

echo
echo "-- summary (fake latency ${LATENCY_MS} ms, --max-concurrent $MAX_CONCURRENT, $CALLERS callers, $REQUESTS reviews each, $PROFILE build)"
base=$(json "$WORK/plain.json" "d['throughput_ok_per_second']")
base_p99=$(json "$WORK/plain.json" "d['round_trip_ms']['p99']")
printf '%-10s %10s %8s %14s %10s %8s\n' run "reviews/s" "× plain" "round-trip p99" "× plain" 200s
for name in plain shadowed; do
    f="$WORK/$name.json"
    printf '%-10s %10.0f %8.3f %14.2f %10.3f %8s\n' "$name" \
        "$(json "$f" "d['throughput_ok_per_second']")" \
        "$(json "$f" "d['throughput_ok_per_second'] / $base")" \
        "$(json "$f" "d['round_trip_ms']['p99']")" \
        "$(json "$f" "d['round_trip_ms']['p99'] / $base_p99")" \
        "$(json "$f" "d['statuses'].get('200', 0)")"
done
echo "shadow outcomes (support-draft-v1):"
sed 's/^/  /' "$WORK/shadowed.shadow"
