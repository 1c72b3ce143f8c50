"""The figures of scripts/bench-store.sh: one run's line from the service's request log and the
load generator's summary, and the summary over interleaved rounds.

    python3 scripts/bench_store.py run ROUND NAME STORE ROWS LOADGEN.json SERVE.err  # one JSON line
    python3 scripts/bench_store.py line < that line                               # readable
    python3 scripts/bench_store.py summary results.jsonl                          # medians, spread
    python3 scripts/bench_store.py profile TRACE "SYNCS|SYNC_MS|WRITES" COMMITS   # PROFILE_PG=1

The added latency is the service's own, read from its `request finished` log lines
(`--log-format json`): handler time (`millis`) minus the wait for a backend slot
(`queue_millis`) minus the review (`elapsed_millis`), for each 200 of `POST /v1/reviews/…`.
"""
import json
import statistics
import sys
from collections import defaultdict

from percentiles import nearest_rank


def added_millis(log_path):
    added = []
    with open(log_path, encoding="utf-8") as log:
        for text in log:
            if not text.startswith("{"):
                continue
            line = json.loads(text)
            fields = line.get("fields", {})
            if fields.get("message") != "request finished" or fields.get("status") != 200:
                continue
            span = line.get("span", {})
            if not span.get("route", "").startswith("/v1/reviews") or "elapsed_millis" not in span:
                continue
            added.append(float(fields["millis"]) - float(span.get("queue_millis", 0.0))
                         - float(span["elapsed_millis"]))
    return added


def run(round_, name, store, rows, loadgen_path, log_path):
    with open(loadgen_path, encoding="utf-8") as f:
        loadgen = json.load(f)
    added = added_millis(log_path)
    figures = nearest_rank(added, 50, 99) if added else {"n": 0, "p50": None, "p99": None, "max": None}
    ok = loadgen["statuses"].get("200", 0)
    print(json.dumps({
        "round": int(round_), "binary": name, "store": store,
        "reviews_per_second": loadgen["throughput_ok_per_second"], "ok": ok,
        "failed": loadgen["failed"], "rows": None if rows == "null" else int(rows),
        "added_ms": figures, "client_added_p99_ms": loadgen["added_without_queue_ms"]["p99"],
    }))


def line():
    r = json.loads(sys.stdin.read())
    rows = "" if r["rows"] is None else f", rows {r['rows']}{'' if r['rows'] == r['ok'] else ' (≠ 200s!)'}"
    a = r["added_ms"]
    print(f"{r['binary']:>8} {r['store']:<9} {r['reviews_per_second']:7.0f} reviews/s, 200s {r['ok']}"
          f"{rows}; added (server) p50 {a['p50']:.3f} p99 {a['p99']:.3f} max {a['max']:.3f} ms"
          f"; client-side added p99 {r['client_added_p99_ms']:.2f} ms")


def spread(values, digits):
    values = sorted(values)
    return f"{statistics.median(values):.{digits}f} ({values[0]:.{digits}f}–{values[-1]:.{digits}f})"


def summary(path):
    runs = [json.loads(text) for text in open(path, encoding="utf-8") if text.strip()]
    none = {(r["binary"], r["round"]): r for r in runs if r["store"] == "none"}
    groups = defaultdict(list)
    for r in runs:
        groups[(r["binary"], r["store"])].append(r)
    print("-- median (min–max) over rounds; added = the service's own time outside the backend, ms")
    print(f"{'binary':>8} {'store':<9} {'runs':>4} {'reviews/s':>20} {'÷ no store':>22} "
          f"{'added p50':>22} {'added p99':>22} {'p99 − no store':>24} rows=200s")
    for (binary, store), rs in sorted(groups.items()):
        ratios = [r["reviews_per_second"] / none[(binary, r["round"])]["reviews_per_second"]
                  for r in rs if (binary, r["round"]) in none]
        extra = [r["added_ms"]["p99"] - none[(binary, r["round"])]["added_ms"]["p99"]
                 for r in rs if (binary, r["round"]) in none]
        rows_ok = all(r["rows"] is None or r["rows"] == r["ok"] for r in rs)
        print(f"{binary:>8} {store:<9} {len(rs):>4} {spread([r['reviews_per_second'] for r in rs], 0):>20} "
              f"{spread(ratios, 3) if ratios else '-':>22} {spread([r['added_ms']['p50'] for r in rs], 3):>22} "
              f"{spread([r['added_ms']['p99'] for r in rs], 2):>22} {spread(extra, 2) if extra else '-':>24} "
              f"{'yes' if rows_ok else 'NO'}")


def profile(trace_path, wal, commits):
    """One PostgreSQL run's commits: the server's WAL flushes (pg_stat_wal) against the
    database's commits, and the durations of the server's fdatasync/fsync calls (perf trace)."""
    syncs, sync_ms, writes = wal.split("|")
    syncs, sync_ms, writes, commits = int(syncs), float(sync_ms), int(writes), int(commits or 0)
    durations = []
    with open(trace_path) as trace:
        for text in trace:
            # "   0.000 ( 1.569 ms): postgres/8645 fdatasync(fd: 3)   = 0"
            if "postgres/" not in text or "ms):" not in text:
                continue
            durations.append(float(text.split("(", 1)[1].split("ms)", 1)[0]))
    print(f"  profile: {commits} commits, {syncs} WAL flushes ({writes} writes): "
          f"{commits / syncs if syncs else 0:.1f} commits a flush; "
          f"mean WAL flush {sync_ms / syncs if syncs else 0:.2f} ms (pg_stat_wal)")
    if durations:
        f = nearest_rank(durations, 50, 90, 99)
        print(f"  profile: {f['n']} fdatasync/fsync by the server: p50 {f['p50']:.2f} ms, "
              f"p90 {f['p90']:.2f} ms, p99 {f['p99']:.2f} ms, max {f['max']:.2f} ms (perf trace)")


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "run" and len(sys.argv) == 8:
        run(*sys.argv[2:])
    elif command == "line":
        line()
    elif command == "summary" and len(sys.argv) == 3:
        summary(sys.argv[2])
    elif command == "profile" and len(sys.argv) == 5:
        profile(*sys.argv[2:])
    else:
        sys.exit(__doc__)
