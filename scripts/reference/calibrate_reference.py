"""Reference values for the calibrate statistics, computed with scipy and statsmodels.

Run with a Python that has numpy, scipy and statsmodels:
    python3 scripts/reference/calibrate_reference.py > crates/stats/tests/fixtures/calibrate_reference.json
`crates/stats/tests/calibrate_reference.rs` reads the output.
"""
import json
import math

import numpy as np
import statsmodels.api as sm
from scipy import special, stats

out = {}

# One-sided binomial tails P(X >= x), X ~ Binomial(n, p); fractional x, n through betainc.
tails = []
for x, n, p in [(70, 71, 0.9), (74, 79, 0.85), (60, 61, 0.9), (27, 28, 0.85), (12, 12, 0.8),
                (0, 10, 0.5), (3, 10, 0.5), (950, 1000, 0.94), (45.5, 47.25, 0.8)]:
    if float(x).is_integer() and float(n).is_integer():
        value = stats.binom.sf(int(x) - 1, int(n), p)
    else:
        value = special.betainc(x, n - x + 1, p)
    tails.append({"successes": x, "n": n, "p": p, "tail": float(value)})
out["binomial_upper_tail"] = tails

# Student t quantiles.
out["student_t_quantile"] = [
    {"probability": q, "df": df, "t": float(stats.t.ppf(q, df))}
    for q, df in [(0.975, 1), (0.975, 4), (0.975, 5), (0.975, 11), (0.975, 149), (0.9, 2.5), (0.025, 7)]
]


# Clustered intervals: statsmodels' cluster-robust variance of the mean (intercept-only OLS,
# whose correction G/(G-1)·(N-1)/(N-K) is G/(G-1) with K = 1), then Wilson at
# n_eff = p(1-p)/V with the t(G-1) quantile.
def clustered(clusters, z=1.96):
    y, groups = [], []
    for g, (s, n) in enumerate(clusters):
        y += [1.0] * s + [0.0] * (n - s)
        groups += [g] * n
    y = np.array(y)
    p = y.mean()
    fit = sm.OLS(y, np.ones_like(y)).fit(cov_type="cluster", cov_kwds={"groups": np.array(groups)})
    variance = float(fit.bse[0] ** 2)
    k = len(clusters)
    n_eff = p * (1 - p) / variance
    n_eff = min(n_eff, len(y))
    t = stats.t.ppf(stats.norm.cdf(z), k - 1)
    t2 = t * t
    center = (p * n_eff + t2 / 2) / (n_eff + t2)
    half = t / (n_eff + t2) * math.sqrt(p * n_eff * (1 - p) + t2 / 4)
    return {"clusters": clusters, "n_eff": n_eff, "lower": center - half, "upper": center + half}


out["clustered_wilson"] = [
    clustered([(3, 3), (3, 3), (0, 3), (2, 3), (3, 3), (1, 3)]),
    clustered([(2, 2), (1, 2), (2, 2), (0, 2), (2, 2)]),
    clustered([(s, 2) for s in [2] * 120 + [1] * 20 + [0] * 10]),
]


# A fixed point set (p on a 0.01 grid, labels drawn once with a seeded numpy generator) for
# AUROC with DeLong's interval and the ECE expected under perfect calibration.
rng = np.random.default_rng(24)
ps = np.round(np.concatenate([rng.beta(0.6, 3.0, 90), rng.beta(3.0, 0.6, 70)]), 2)
ys = (rng.random(len(ps)) < ps).astype(int)
out["points"] = [[float(p), int(y)] for p, y in zip(ps, ys)]

# DeLong by its definition: the full pairwise kernel matrix.
pos, neg = ps[ys == 1], ps[ys == 0]
kernel = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
auc = kernel.mean()
v10, v01 = kernel.mean(axis=1), kernel.mean(axis=0)
variance = v10.var(ddof=1) / len(pos) + v01.var(ddof=1) / len(neg)
z = stats.norm.ppf(0.975)
out["delong"] = {"auroc": float(auc), "variance": float(variance), "z": float(z),
                 "lower": float(max(0.0, auc - z * math.sqrt(variance))),
                 "upper": float(min(1.0, auc + z * math.sqrt(variance)))}

# Expected ECE (10 equal-width bins) under perfect calibration: per bin, the Poisson-binomial
# pmf by repeated convolution, then E|S - sum p|.
expected = 0.0
bins = np.minimum(np.floor(ps * 10).astype(int), 9)
for b in range(10):
    members = ps[bins == b]
    pmf = np.array([1.0])
    for p in members:
        pmf = np.convolve(pmf, [1 - p, p])
    expected += float(np.sum(pmf * np.abs(np.arange(len(pmf)) - members.sum())))
out["ece_expected"] = {"bins": 10, "value": expected / len(ps)}


# Percentile bootstrap intervals of Brier and ECE (10 equal-width bins) with scipy's
# bootstrap: another generator, so the Rust test compares within Monte Carlo error.
def brier(p, y):
    return float(np.mean((p - y) ** 2))


def ece(p, y):
    bins = np.minimum(np.floor(p * 10).astype(int), 9)
    total = 0.0
    for b in range(10):
        mask = bins == b
        if mask.any():
            total += abs(float(np.sum(y[mask]) - np.sum(p[mask])))
    return total / len(p)


for name, statistic in [("brier", brier), ("ece", ece)]:
    result = stats.bootstrap((ps, ys), statistic, paired=True, vectorized=False,
                             n_resamples=20000, method="percentile", confidence_level=0.95,
                             random_state=np.random.default_rng(7))
    out[f"{name}_bootstrap"] = {"resamples": 20000,
                                "lower": float(result.confidence_interval.low),
                                "upper": float(result.confidence_interval.high)}

print(json.dumps(out, indent=1))
