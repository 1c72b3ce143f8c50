#!/usr/bin/env bash
# Coverage-guided fuzzing of jevjudge's parsers on the STABLE toolchain (no nightly, no
# cargo-fuzz): libFuzzer from the libfuzzer-sys crate, our code instrumented with LLVM's
# SanitizerCoverage through stable `-C passes=sancov-module` flags (what `cargo fuzz
# --sanitizer none` passes). Targets are in fuzz/fuzz_targets/, seeds in fuzz/corpus/TARGET/.
#
#   scripts/fuzz.sh                    # every target for FUZZ_SECONDS (default 20) each
#   scripts/fuzz.sh definition jevl    # only these targets
#   FUZZ_SECONDS=600 scripts/fuzz.sh response
#
# New interesting inputs go to target/fuzz/corpus/TARGET (the committed seeds stay as they are);
# a crash is saved as fuzz/artifacts/TARGET/crash-… and the script exits 1 naming it. Replay one
# input (runs the target once on it and shows the panic) with:
#   scripts/fuzz.sh --replay TARGET FILE
# Prints one line per target: executions, execs/s, coverage and corpus size.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

seconds=${FUZZ_SECONDS:-20}
all=(definition cases jevl request_body response)
replay=""
if [[ "${1:-}" == "--replay" ]]; then
    [[ $# -eq 3 ]] || { echo "usage: scripts/fuzz.sh --replay TARGET FILE" >&2; exit 2; }
    replay=$3
    set -- "$2"
fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")

host=$(rustc -vV | sed -n 's/^host: //p')
export RUSTFLAGS="--cfg fuzzing -Cpasses=sancov-module \
 -Cllvm-args=-sanitizer-coverage-level=4 -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
 -Cllvm-args=-sanitizer-coverage-pc-table -Cllvm-args=-sanitizer-coverage-trace-compares \
 -Cdebug-assertions -Coverflow-checks"
# --target keeps the instrumentation off build scripts and proc macros (they cannot link it).
# Not --locked: fuzz/Cargo.lock pins what it holds, and cargo adds what a workspace crate has
# newly come to depend on (the lock is separate from the root one).
(cd fuzz && cargo build --quiet --release --target "$host" --bins)
bin="$root/fuzz/target/$host/release"
if [[ -n "$replay" ]]; then
    exec "$bin/${targets[0]}" "$replay"
fi

status=0
for t in "${targets[@]}"; do
    work="$root/target/fuzz/corpus/$t"
    artifacts="$root/fuzz/artifacts/$t"
    log="$root/target/fuzz/$t.log"
    mkdir -p "$work" "$artifacts"
    if "$bin/$t" "$work" "fuzz/corpus/$t" -max_total_time="$seconds" -max_len=65536 \
        -rss_limit_mb=1024 -timeout=10 -artifact_prefix="$artifacts/" -print_final_stats=1 \
        >"$log" 2>&1; then
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
        rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
        cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
        corpus=$(find "$work" -type f | wc -l)
        printf 'fuzz %-13s %9s runs in %ss (%s/s), %s, corpus %s (+%s seeds)\n' \
            "$t" "$runs" "$seconds" "$rate" "$cov" "$corpus" "$(find "fuzz/corpus/$t" -type f | wc -l)"
    else
        status=1
        echo "fuzz $t: FAILED — see $log"
        grep -E 'panicked|ERROR|SUMMARY|Test unit written' "$log" | head -8 || true
    fi
done
exit $status
