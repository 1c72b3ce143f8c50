#!/usr/bin/env python3
"""Reference values for crates/stats/src/weighted.rs, computed with numpy and statsmodels.

Writes crates/stats/tests/data/weighted.txt, one case a line:
`weighted <hits weights, as 1:w or 0:w separated by commas> <estimate> <effective_n> <low> <high>`.
The estimate is statsmodels' weighted mean (DescrStatsW), the effective n Kish's (Σw)²/Σw², the
interval statsmodels' Wilson interval at that (fractional) n with estimate·n successes.
Run from the repository root:  .venv/bin/python scripts/reference/weighted.py
(pip install scipy statsmodels into .venv first).
"""
import os

import numpy as np
from statsmodels.stats.proportion import proportion_confint
from statsmodels.stats.weightstats import DescrStatsW

CASES = [
    [(1, 1.0), (0, 3.0)],
    [(1, 3.0), (0, 1.0), (1, 1.0)],
    [(1, 2.5)] * 8 + [(0, 2.5)] * 2,
    [(1, 1.0)] * 17 + [(1, 10.0 / 3.0)] * 16 + [(0, 10.0 / 3.0)] * 1 + [(0, 1.0)] * 3,
    [(1, 1.0)] * 60 + [(0, 4.0)] * 3 + [(1, 0.25)] * 5,
    [(0, 1.0)] * 4 + [(0, 7.0)],
]

lines = []
for items in CASES:
    hits = np.array([h for h, _ in items], dtype=float)
    weights = np.array([w for _, w in items], dtype=float)
    estimate = DescrStatsW(hits, weights=weights).mean
    n_eff = weights.sum() ** 2 / (weights**2).sum()
    low, high = proportion_confint(estimate * n_eff, n_eff, alpha=0.05, method="wilson")
    spec = ",".join(f"{int(h)}:{w!r}" for h, w in items)
    lines.append(f"weighted {spec} {float(estimate)!r} {float(n_eff)!r} {float(low)!r} {float(high)!r}")

out = os.path.join("crates", "stats", "tests", "data", "weighted.txt")
with open(out, "w", encoding="utf-8") as f:
    f.write("\n".join(lines) + "\n")
print(f"wrote {len(lines)} lines to {out}")
