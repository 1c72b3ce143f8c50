# Shared pieces of the scripts that build jevjudge and start its servers on 127.0.0.1.
#
#   cd "$(dirname "$0")/.." && . scripts/lib.sh
#
# Sourcing it installs an EXIT trap (`lib_cleanup`) that stops every process started through
# `spawn_listening` (or added to PIDS), by its id, and removes $WORK if a script made one with
# `make_work`. A script that needs more on exit defines `on_exit` (called first).

PIDS=()
WORK=""

# forget PID: takes PID out of the set the EXIT trap stops (after the script reaped it itself).
forget() {
    local kept=() pid
    for pid in "${PIDS[@]}"; do
        [[ "$pid" == "$1" ]] || kept+=("$pid")
    done
    PIDS=("${kept[@]}")
}

# stop PID [SIGNAL]: sends SIGNAL (default TERM) to a process this script started, waits at most
# 10 s for it to end (then SIGKILL), reaps it and forgets it. Always returns 0.
stop() {
    local pid=$1 signal=${2:-TERM}
    kill -"$signal" "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    forget "$pid"
}

lib_cleanup() {
    if declare -F on_exit >/dev/null; then on_exit || true; fi
    local pid
    for pid in "${PIDS[@]}"; do stop "$pid"; done
    if [[ -n "$WORK" ]]; then rm -rf "$WORK"; fi
}
trap lib_cleanup EXIT

# build_jevjudge release|debug [cargo build args...]: builds the jevjudge binary (and anything
# else named in the args, e.g. `-p jevjudge-serve --example loadgen`); sets TARGET_DIR, PROFILE
# and JEVJUDGE (the binary's path).
build_jevjudge() {
    PROFILE=$1
    shift
    local flag=()
    [[ "$PROFILE" == release ]] && flag=(--release)
    # The binary on its own: a `cargo build` given `--example` builds only the examples.
    timeout 1800 cargo build "${flag[@]}" --quiet -p jevjudge --bin jevjudge
    if [[ $# -gt 0 ]]; then timeout 1800 cargo build "${flag[@]}" --quiet "$@"; fi
    TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
    JEVJUDGE="$TARGET_DIR/$PROFILE/jevjudge"
}

# make_work NAME: a fresh temporary directory in WORK (removed on exit) holding
# definitions/refund.toml, the example definition the load scripts serve.
make_work() {
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/jevjudge-$1.XXXXXX")
    mkdir -p "$WORK/definitions"
    cp examples/refund/definition.toml "$WORK/definitions/refund.toml"
}

# spawn_listening OUT COMMAND...: starts COMMAND in the background (stdout to OUT, stderr to
# OUT.err), adds it to PIDS and waits at most 30 s for `listening on http://…` as the first line
# of OUT. Sets LISTEN_PID and LISTEN_URL; on failure (the process ended, or no such line in
# time) prints why with the process's stderr and returns 1.
spawn_listening() {
    local out=$1
    shift
    # Emptied before the background start, so the loop below never reads a previous run's
    # address.
    : >"$out"
    "$@" >"$out" 2>"$out.err" &
    LISTEN_PID=$!
    PIDS+=("$LISTEN_PID")
    LISTEN_URL=""
    local first
    for _ in $(seq 1 600); do
        if [[ -s "$out" ]]; then
            first=$(head -n 1 "$out")
            if [[ "$first" == "listening on http://"* ]]; then
                LISTEN_URL=${first#listening on }
                return 0
            fi
        fi
        if ! kill -0 "$LISTEN_PID" 2>/dev/null; then
            echo "error: $1 exited before printing its address; stderr:" >&2
            cat "$out.err" >&2 || true
            return 1
        fi
        sleep 0.05
    done
    echo "error: no 'listening on' line in $out within 30 s; stderr:" >&2
    cat "$out.err" >&2 || true
    return 1
}

# start_fake OUT [FAKE-SERVER ARGS...]: `$JEVJUDGE fake-server --addr 127.0.0.1:0 ARGS` through
# spawn_listening; sets FAKE_PID and FAKE_URL.
start_fake() {
    local out=$1
    shift
    spawn_listening "$out" "$JEVJUDGE" fake-server --addr 127.0.0.1:0 "$@"
    FAKE_PID=$LISTEN_PID
    FAKE_URL=$LISTEN_URL
}

# make_refund_cases N FILE: writes N synthetic refund cases (JSON lines) for the eval benchmarks.
make_refund_cases() {
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

# json FILE EXPR: prints the Python expression EXPR evaluated with `d` bound to FILE's JSON.
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, {'d': d}))" "$@"; }

# ensure_venv DIR PACKAGE VERSION SECONDS: installs PACKAGE==VERSION into the virtualenv DIR
# unless it is there already (pip may take SECONDS).
ensure_venv() {
    local dir=$1 package=$2 version=$3 seconds=$4
    if [[ "$("$dir/bin/python" -c "import importlib.metadata as m; print(m.version('$package'))" 2>/dev/null || true)" != "$version" ]]; then
        echo "installing $package $version into $dir"
        timeout 120 python3 -m venv "$dir"
        timeout "$seconds" "$dir/bin/pip" install --quiet --disable-pip-version-check "$package==$version"
    fi
}

# settings NAME=DEFAULT...: each NAME keeps its value from the environment, else gets DEFAULT.
settings() {
    local pair name
    for pair in "$@"; do
        name=${pair%%=*}
        if [[ -z "${!name:-}" ]]; then printf -v "$name" '%s' "${pair#*=}"; fi
    done
}

# out_dir NAME: sets out to the target directory's NAME/ (made if missing), for outputs kept
# after the run.
out_dir() {
    out="${CARGO_TARGET_DIR:-$PWD/target}/$1"
    mkdir -p "$out"
}

# with_throwaway_pg SCRIPT ARGS...: unless JEVJUDGE_TEST_PG_URL is set, runs SCRIPT again under
# scripts/pg.sh --fsync (a throwaway PostgreSQL with durable commits) and does not return.
with_throwaway_pg() {
    if [[ -z "${JEVJUDGE_TEST_PG_URL:-}" ]]; then
        exec bash scripts/pg.sh --fsync -- bash "$@"
    fi
}

# release_on_pg NAME SCRIPT ARGS...: the opening steps of a script that runs the release binary
# against PostgreSQL: with_throwaway_pg SCRIPT ARGS, RUST_LOG exported (default warn), the
# release binary built unless JEVJUDGE names one already, then make_work NAME.
release_on_pg() {
    local name=$1
    shift
    with_throwaway_pg "$@"
    settings RUST_LOG=warn
    export RUST_LOG
    if [[ -z "${JEVJUDGE:-}" ]]; then
        echo "== building the release binary"
        build_jevjudge release
    fi
    make_work "$name"
}

# each_store SQLITE_FILE PG_DATABASE: calls the script's `run_store NAME URL` for each store
# named in STORES (comma-separated): sqlite on the file SQLITE_FILE in WORK, postgres on a new
# database PG_DATABASE beside JEVJUDGE_TEST_PG_URL's.
each_store() {
    if [[ ",$STORES," == *,sqlite,* ]]; then
        run_store sqlite "sqlite:$WORK/$1"
    fi
    if [[ ",$STORES," == *,postgres,* ]]; then
        psql "$JEVJUDGE_TEST_PG_URL" -q -c "CREATE DATABASE $2" >/dev/null
        run_store postgres "${JEVJUDGE_TEST_PG_URL%/*}/$2"
    fi
}

# ensure_chromium [driver]: finds Chromium (`chromium` or `chromium-browser` on PATH, else
# /usr/bin/chromium) and, given `driver`, chromedriver; installs what is missing with apt-get
# (Debian's `chromium`, `chromium-driver`; as root, or through sudo). Exports CHROMIUM (the
# browser's path) and, given `driver`, CHROMEDRIVER. The one place the scripts install a browser.
ensure_chromium() {
    local packages=() sudo="" candidate
    CHROMIUM=""
    for candidate in chromium chromium-browser /usr/bin/chromium; do
        if command -v "$candidate" >/dev/null 2>&1; then CHROMIUM=$(command -v "$candidate"); break; fi
    done
    [[ -n "$CHROMIUM" ]] || packages+=(chromium)
    if [[ "${1:-}" == driver ]] && ! command -v chromedriver >/dev/null 2>&1; then
        packages+=(chromium-driver)
    fi
    if [[ ${#packages[@]} -gt 0 ]]; then
        echo "installing Debian's ${packages[*]} (apt-get)"
        [[ "$(id -u)" -eq 0 ]] || sudo=sudo
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${packages[@]}" >/dev/null
        [[ -n "$CHROMIUM" ]] || CHROMIUM=/usr/bin/chromium
    fi
    export CHROMIUM
    if [[ "${1:-}" == driver ]]; then
        CHROMEDRIVER=$(command -v chromedriver)
        export CHROMEDRIVER
    fi
}

# ensure_promtool: finds promtool on PATH; installs Debian's `prometheus` package (which ships
# it) with apt-get when it is missing (as root, or through sudo). Exports PROMTOOL. A failed
# install fails the calling script, loudly, with or without CI. The one place the scripts
# install Prometheus.
ensure_promtool() {
    local sudo=""
    if ! command -v promtool >/dev/null 2>&1; then
        echo "installing Debian's prometheus for promtool (apt-get)"
        [[ "$(id -u)" -eq 0 ]] || sudo=sudo
        if ! { $sudo apt-get update -qq &&
            DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq prometheus >/dev/null; }; then
            echo "error: promtool is missing and Debian's prometheus could not be installed" \
                "(apt-get install prometheus, as root)${CI:+ [CI]}" >&2
            return 1
        fi
    fi
    PROMTOOL=$(command -v promtool)
    export PROMTOOL
}

# build_percentiles: builds the stats crate's `percentiles` example (nearest-rank percentiles of
# numbers on stdin, by jevjudge_stats) and exports JEVJUDGE_PERCENTILES, its path, for
# scripts/percentiles.py.
build_percentiles() {
    timeout 600 cargo build --quiet -p jevjudge-stats --example percentiles
    JEVJUDGE_PERCENTILES="${CARGO_TARGET_DIR:-$PWD/target}/debug/examples/percentiles"
    export JEVJUDGE_PERCENTILES
}
