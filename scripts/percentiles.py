"""Nearest-rank percentiles for the benchmark scripts' Python, computed by jevjudge_stats.

    from percentiles import nearest_rank
    figures = nearest_rank(milliseconds, 50, 99)  # {"n": …, "p50": …, "p99": …, "max": …}

Runs the stats crate's `percentiles` example (the binary named by $JEVJUDGE_PERCENTILES, which
`build_percentiles` in scripts/lib.sh builds and sets), so every script ranks exactly as
jevjudge does (rule 56: sorted[max(0, ceil(k·n/100) − 1)]).
"""
import json
import os
import subprocess


def nearest_rank(values, *ks):
    binary = os.environ.get("JEVJUDGE_PERCENTILES")
    if not binary:
        raise RuntimeError("JEVJUDGE_PERCENTILES is not set (build_percentiles in scripts/lib.sh)")
    result = subprocess.run([binary, *map(str, ks)], input="".join(f"{v!r}\n" for v in values),
                            capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        raise RuntimeError(f"{binary}: {result.stderr.strip()}")
    return json.loads(result.stdout)
