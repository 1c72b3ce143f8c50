#!/usr/bin/env bash
# Reproduces hostile-client cases against `jevjudge serve`, on the loopback interface only.
#
#   scripts/harden-serve.sh                      # the binary of this tree (debug build)
#   JEVJUDGE=/path/to/old/jevjudge scripts/harden-serve.sh   # an older build, for "before"
#
# Phase "half-open": serve runs under `ulimit -n 1024`; 1,100 connections each send half a
# request head and stay open. Then one normal request (`GET /healthz`, 5 s timeout) must still
# be answered, and SIGTERM (with those connections still open) must end the process; the time
# to exit is printed (the script gives up waiting after 40 s).
# Phase "memory": fake-server answers after BACKEND_MS (20 s); 320 callers each POST a ~1 MiB review body
# (a 1,000,000-character state string) at once, so every admission place (32 running + 256
# queued) is taken; the serve process's peak resident memory (VmHWM) is printed.
# Phase "many-values": the same with ~195 KiB bodies whose state is 99,990 zeros (a JSON tree
# of 72 bytes a value: ~7 MiB each once parsed).
#
# Settings (environment): JEVJUDGE, HALF_OPEN (1100), FD_LIMIT (1024), BIG (320), BACKEND_MS (20000).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
settings HALF_OPEN=1100 FD_LIMIT=1024 BIG=320 BACKEND_MS=20000
if [[ -z "${JEVJUDGE:-}" ]]; then
    build_jevjudge debug
fi
make_work harden

stop_fake() { stop "$FAKE_PID"; }

# Sends $BIG review bodies at once and prints the statuses: "text" is a 1,000,000-character
# state string (~1 MiB), "values" a state of 99,990 zeros (~195 KiB of text, 99,991 JSON values).
flood() {
python3 - "$SERVE_URL" "$BIG" "$1" <<'PY'
import json, socket, sys, threading
url, n, kind = sys.argv[1], int(sys.argv[2]), sys.argv[3]
host, port = url.removeprefix("http://").split(":")
if kind == "text":
    body = json.dumps({"state": {"assistant_answer": "x" * 1_000_000, "supporting_context": ["y"]}}).encode()
else:
    body = ('{"state": [' + ",".join(["0"] * 99_990) + "]}").encode()
statuses = {}
lock = threading.Lock()
def call():
    try:
        s = socket.create_connection((host, int(port)), timeout=90)
        s.settimeout(90)
        s.sendall(b"POST /v1/reviews/refund-answer-v1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
        reply = s.makefile("rb").read()  # to the end of the stream
        key = reply.split(b" ", 2)[1].decode() if reply else "closed"
    except OSError as error:
        key = type(error).__name__
    with lock:
        statuses[key] = statuses.get(key, 0) + 1
threads = [threading.Thread(target=call) for _ in range(n)]
for t in threads: t.start()
for t in threads: t.join()
print("statuses:", dict(sorted(statuses.items())))
PY
}

start_serve() {
    local name=$1
    shift
    spawn_listening "$WORK/serve-$name.out" bash -c 'ulimit -n "$0" && exec "$@"' "$FD_LIMIT" \
        env TYPESAFE_API_KEY=harden-dummy-key "$JEVJUDGE" serve \
        --definitions "$WORK/definitions" --addr 127.0.0.1:0 --base-url "$FAKE_URL" "$@"
    SERVE_PID=$LISTEN_PID
    SERVE_URL=$LISTEN_URL
}

# Sends SIGTERM and waits at most 40 s; prints the seconds it took.
term_and_time() {
    local start end
    start=$(date +%s.%N)
    kill -TERM "$SERVE_PID"
    for _ in $(seq 1 400); do
        if ! kill -0 "$SERVE_PID" 2>/dev/null; then break; fi
        sleep 0.1
    done
    end=$(date +%s.%N)
    if kill -0 "$SERVE_PID" 2>/dev/null; then
        echo "still running 40 s after SIGTERM"
        kill -KILL "$SERVE_PID"
    else
        awk -v s="$start" -v e="$end" 'BEGIN { printf "exited %.1f s after SIGTERM\n", e - s }'
    fi
    stop "$SERVE_PID" KILL
}

echo "== binary: $JEVJUDGE"
echo "== phase half-open: ulimit -n $FD_LIMIT, $HALF_OPEN half-open connections"
start_fake "$WORK/fake.out" --latency 0
start_serve halfopen
python3 - "$SERVE_URL" "$HALF_OPEN" <<'PY'
import socket, sys, time
url, n = sys.argv[1], int(sys.argv[2])
host, port = url.removeprefix("http://").split(":")
held, failed = [], 0
for _ in range(n):
    try:
        s = socket.create_connection((host, int(port)), timeout=2)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        held.append(s)
    except OSError:
        failed += 1
time.sleep(1)
print(f"opened {len(held)} half-open connections ({failed} could not connect)")
start = time.time()
try:
    c = socket.create_connection((host, int(port)), timeout=5)
    c.settimeout(5)
    c.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    reply = c.makefile("rb").read()  # to the end of the stream
    line = reply.split(b"\r\n", 1)[0].decode(errors="replace")
    print(f"normal request: {line or 'connection closed without an answer'} in {time.time() - start:.2f} s")
except OSError as error:
    print(f"normal request: FAILED after {time.time() - start:.2f} s ({error})")
closed = 0
for s in held:
    s.setblocking(False)
    try:
        if s.recv(1) == b"":
            closed += 1
    except BlockingIOError:
        pass
    except OSError:
        closed += 1
print(f"{closed} of {len(held)} half-open connections already closed by the server")
# Keep them open while the shell sends SIGTERM: hand them to a child that sleeps.
import os
if os.fork() == 0:
    time.sleep(45)
    os._exit(0)
PY
echo -n "SIGTERM with the half-open connections still open: "
term_and_time
stop_fake

echo
echo "== phase memory: $BIG concurrent ~1 MiB review bodies, backend answers after ${BACKEND_MS} ms, --budget 30s (every admission place fills before the first answer)"
start_fake "$WORK/fake.out" --latency "$BACKEND_MS"
start_serve memory --budget 30s --max-budget 30s
flood text
hwm=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$SERVE_PID/status")
awk -v k="$hwm" 'BEGIN { printf "serve peak resident memory (VmHWM): %.1f MiB\n", k / 1024 }'
term_and_time

echo
echo "== phase many-values: $BIG concurrent ~195 KiB bodies whose state is 99,990 zeros, same backend"
start_serve values --budget 30s --max-budget 30s
flood values
hwm=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$SERVE_PID/status")
awk -v k="$hwm" 'BEGIN { printf "serve peak resident memory (VmHWM): %.1f MiB\n", k / 1024 }'
term_and_time
