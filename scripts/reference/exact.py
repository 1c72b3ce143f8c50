#!/usr/bin/env python3
"""Reference values for crates/stats/src/exact.rs, computed with scipy and statsmodels.

Writes crates/stats/tests/data/exact.txt: one value a line, `kind arguments… value`.
Run from the repository root:  .venv/bin/python scripts/reference/exact.py
(pip install scipy statsmodels into .venv first).
"""
import math
import os

from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

lines = []

# One-sided Clopper–Pearson upper bound at 1 - alpha: beta.ppf(1 - alpha, x + 1, n - x).
for x, n in [(0, 75), (0, 125), (0, 58), (2, 75), (2, 67), (1, 60), (3, 150), (2, 12), (7, 40), (0.5, 9.3), (12.4, 80.2)]:
    for alpha in [0.05, 0.025]:
        upper = 1.0 if x >= n else stats.beta.ppf(1 - alpha, x + 1, n - x)
        lines.append(f"cp_upper {x} {n} {alpha} {float(upper)!r}")
# Two-sided Clopper–Pearson (statsmodels 'beta').
for x, n in [(0, 10), (3, 10), (10, 10), (45, 150), (149, 150)]:
    low, high = proportion_confint(x, n, alpha=0.05, method="beta")
    lines.append(f"cp_two_sided {x} {n} 0.05 {low!r} {high!r}")

# Fisher's exact two-sided test.
for table in [(3, 0, 0, 3), (5, 0, 0, 5), (4, 1, 1, 4), (2, 3, 5, 0), (10, 0, 6, 4), (3, 2, 1, 4), (0, 5, 0, 5)]:
    a, b, c, d = table
    p = stats.fisher_exact([[a, b], [c, d]], alternative="two-sided").pvalue
    lines.append(f"fisher {a} {b} {c} {d} {float(p)!r}")

# Holm and Benjamini–Hochberg adjusted p-values.
ps = [0.01, 0.04, 0.03, 0.2, 0.0005, 0.5, 0.04]
holm = multipletests(ps, method="holm")[1]
bh = multipletests(ps, method="fdr_bh")[1]
lines.append("holm " + " ".join(repr(p) for p in ps) + " | " + " ".join(repr(float(p)) for p in holm))
lines.append("bh " + " ".join(repr(p) for p in ps) + " | " + " ".join(repr(float(p)) for p in bh))


# Newcombe's hybrid score interval for a paired difference (Newcombe 1998, method 10), from
# statsmodels' Wilson intervals: difference = p2 - p1.
def newcombe(a, b, c, d, alpha=0.05):
    n = a + b + c + d
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = proportion_confint(a + b, n, alpha=alpha, method="wilson")
    l2, u2 = proportion_confint(a + c, n, alpha=alpha, method="wilson")
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    if margins == 0:
        phi = 0.0
    else:
        cross = a * d - b * c
        if cross > 0:
            cross = max(cross - n / 2, 0)
        phi = cross / math.sqrt(margins)
    diff = p2 - p1
    delta = math.sqrt(max((p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2, 0))
    eps = math.sqrt(max((u2 - p2) ** 2 - 2 * phi * (u2 - p2) * (p1 - l1) + (p1 - l1) ** 2, 0))
    return diff, max(diff - delta, -1), min(diff + eps, 1)


for table in [(140, 3, 2, 5), (120, 10, 2, 18), (12, 9, 2, 4), (0, 0, 0, 5), (150, 0, 0, 0), (40, 0, 6, 4)]:
    diff, low, high = newcombe(*table)
    lines.append("newcombe " + " ".join(map(str, table)) + f" {diff!r} {low!r} {high!r}")

# Precision at a stated prevalence: Bayes' rule, and the delta method on the log-odds scale
# (Var ln p = 1/x - 1/n, a zero count taken as 0.5), z from scipy.
def at_prevalence(prev, x, n, fx, no):
    z = stats.norm.ppf(0.975)
    tpr, fpr = x / n, fx / no
    precision = prev * tpr / (prev * tpr + (1 - prev) * fpr)
    x1, x2 = (x or 0.5), (fx or 0.5)
    center = math.log(prev / (1 - prev)) + math.log(x1 / n) - math.log(x2 / no)
    half = z * math.sqrt(max(1 / x1 - 1 / n, 0) + max(1 / x2 - 1 / no, 0))
    expit = lambda t: 1 / (1 + math.exp(-t))
    return precision, min(expit(center - half), precision), max(expit(center + half), precision)


for args in [(0.134, 58, 75, 0, 75), (0.866, 65, 75, 2, 75), (0.134, 70, 75, 5, 75), (0.5, 40, 50, 10, 60), (0.2, 3, 10, 1, 12)]:
    precision, low, high = at_prevalence(*args)
    lines.append("prevalence " + " ".join(map(str, args)) + f" {precision!r} {low!r} {high!r}")

# Scott's pi of two exchangeable raters = Fleiss' kappa with two ratings per item (statsmodels).
from statsmodels.stats.inter_rater import fleiss_kappa

for a, b, c, d in [(20, 5, 10, 15), (45, 15, 25, 15), (30, 2, 1, 7), (6, 8, 10, 12)]:
    items = [[2, 0]] * a + [[1, 1]] * (b + c) + [[0, 2]] * d
    lines.append(f"scott {a} {b} {c} {d} {float(fleiss_kappa(items, method='fleiss'))!r}")

# The normal quantile the intervals use.
lines.append(f"z95 {float(stats.norm.ppf(0.975))!r}")

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
out = os.path.join(root, "crates", "stats", "tests", "data", "exact.txt")
with open(out, "w") as f:
    f.write("# scripts/reference/exact.py (scipy, statsmodels): kind arguments… value\n")
    f.write("\n".join(lines) + "\n")
print(f"wrote {len(lines)} values to {out}")
