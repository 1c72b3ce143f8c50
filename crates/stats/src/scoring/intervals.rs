//! Intervals for the calibration metrics: AUROC by DeLong's method, Brier and ECE by a
//! (cluster) percentile bootstrap, and the ECE a perfectly calibrated model would show.

use super::{Point, brier, ece, reliability_equal_width};
use crate::{SplitMix64, resample_indices};

/// AUROC with DeLong's variance (DeLong, DeLong and Clarke-Pearson, 1988): the structural
/// components `V10ᵢ` (each yes point's share of no points below it, ties ½) and `V01ⱼ` give
/// `Var = S10/m + S01/n` with sample variances over the m yes and n no points. Returns
/// `(auroc, variance)`; `None` unless both classes occur (at least two points of each for a
/// variance) and every p is in `[0, 1]`.
///
/// ```
/// use jevjudge_stats::{auroc_delong, Point};
/// let points = [Point::new(0.9, true), Point::new(0.8, true), Point::new(0.3, true),
///               Point::new(0.7, false), Point::new(0.2, false), Point::new(0.1, false)];
/// let (auc, variance) = auroc_delong(&points).unwrap();
/// assert!((auc - 8.0 / 9.0).abs() < 1e-12 && variance > 0.0);
/// ```
#[must_use]
pub fn auroc_delong(points: &[Point]) -> Option<(f64, f64)> {
    if !points.iter().all(Point::is_valid) {
        return None;
    }
    let mut yes: Vec<f64> = points.iter().filter(|p| p.label).map(|p| p.p).collect();
    let mut no: Vec<f64> = points.iter().filter(|p| !p.label).map(|p| p.p).collect();
    if yes.len() < 2 || no.len() < 2 {
        return None;
    }
    yes.sort_by(f64::total_cmp);
    no.sort_by(f64::total_cmp);
    // Share of `others` strictly below x, plus half of those equal.
    let share = |x: f64, others: &[f64]| {
        let below = others.partition_point(|&o| o < x);
        let at_or_below = others.partition_point(|&o| o <= x);
        (below as f64 + 0.5 * (at_or_below - below) as f64) / others.len() as f64
    };
    let v10: Vec<f64> = yes.iter().map(|&x| share(x, &no)).collect();
    // For a no point: the share of yes points above it, ties ½.
    let v01: Vec<f64> = no.iter().map(|&y| 1.0 - share(y, &yes)).collect();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let auc = mean(&v10);
    let sample_variance = |v: &[f64]| {
        let m = mean(v);
        v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (v.len() - 1) as f64
    };
    let variance =
        sample_variance(&v10) / yes.len() as f64 + sample_variance(&v01) / no.len() as f64;
    Some((auc, variance))
}

/// The DeLong interval `auroc ± z·√Var`, clipped to `[0, 1]` (see [`auroc_delong`]).
#[must_use]
pub fn auroc_ci(points: &[Point], z: f64) -> Option<(f64, f64)> {
    let (auc, variance) = auroc_delong(points)?;
    let half = z * variance.max(0.0).sqrt();
    Some(((auc - half).max(0.0), (auc + half).min(1.0)))
}

/// A percentile bootstrap interval of `statistic` over `points`: `resamples` resamples (seeded
/// by `seed`) of the units — the cases when `cases` gives each point's case (a cluster
/// bootstrap: a case's points go together), else the points — and the 2.5th and 97.5th
/// percentiles (nearest rank) of the statistic over the resamples where it is defined. `None`
/// when it is defined on no resample.
pub fn bootstrap_ci(
    points: &[Point],
    cases: Option<&[usize]>,
    resamples: u32,
    seed: u64,
    statistic: impl Fn(&[Point]) -> Option<f64>,
) -> Option<(f64, f64)> {
    let unit_of: Vec<usize> = match cases {
        Some(cases) if cases.len() == points.len() => cases.to_vec(),
        _ => (0..points.len()).collect(),
    };
    let units = unit_of.iter().max().map_or(0, |last| last + 1);
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); units];
    for (index, &unit) in unit_of.iter().enumerate() {
        members[unit].push(index);
    }
    let mut rng = SplitMix64::new(seed);
    let mut values = Vec::with_capacity(resamples as usize);
    let mut sample = Vec::with_capacity(points.len());
    for _ in 0..resamples {
        let (drawn, _) = resample_indices(units, &mut rng);
        sample.clear();
        for unit in drawn {
            sample.extend(members[unit].iter().map(|&index| points[index]));
        }
        values.extend(statistic(&sample));
    }
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    let rank = |permille: usize| (permille * n).div_ceil(1000).clamp(1, n) - 1;
    Some((values[rank(25)], values[rank(975)]))
}

/// The Brier score's bootstrap interval ([`bootstrap_ci`]).
pub fn brier_ci(
    points: &[Point],
    cases: Option<&[usize]>,
    resamples: u32,
    seed: u64,
) -> Option<(f64, f64)> {
    bootstrap_ci(points, cases, resamples, seed, brier)
}

/// The bootstrap interval ([`bootstrap_ci`]) of the ECE over `bins` equal-width bins.
pub fn ece_ci(
    points: &[Point],
    bins: usize,
    cases: Option<&[usize]>,
    resamples: u32,
    seed: u64,
) -> Option<(f64, f64)> {
    bootstrap_ci(points, cases, resamples, seed, |sample| {
        ece(&reliability_equal_width(sample, bins)?)
    })
}

/// The expected ECE over `bins` equal-width bins if the model were perfectly calibrated: each
/// label drawn as Bernoulli(p) for the same p values. The ECE is `Σ_b |Σ_{i∈b} (yᵢ − pᵢ)| / n`,
/// so its expectation is exact from each bin's Poisson-binomial distribution (a bin of more
/// than 4,000 points uses the normal value `σ·√(2/π)`). An observed ECE near this value is
/// what chance alone gives at this n. `None` without points or with a p outside `[0, 1]`.
///
/// ```
/// use jevjudge_stats::{ece_expected, Point};
/// // One point at p = 0.5: |y − 0.5| = 0.5 whatever y is.
/// assert!((ece_expected(&[Point::new(0.5, true)], 10).unwrap() - 0.5).abs() < 1e-15);
/// ```
#[must_use]
pub fn ece_expected(points: &[Point], bins: usize) -> Option<f64> {
    if points.is_empty() || bins == 0 || !points.iter().all(Point::is_valid) {
        return None;
    }
    let mut groups: Vec<Vec<f64>> = vec![Vec::new(); bins];
    for point in points {
        let index = ((point.p * bins as f64).floor() as usize).min(bins - 1);
        groups[index].push(point.p);
    }
    let total: f64 = groups
        .iter()
        .map(|group| expected_abs_deviation(group))
        .sum();
    Some(total / points.len() as f64)
}

/// `E|S − Σp|` for `S` the sum of independent Bernoulli(pᵢ).
fn expected_abs_deviation(ps: &[f64]) -> f64 {
    if ps.is_empty() {
        return 0.0;
    }
    let mean: f64 = ps.iter().sum();
    if ps.len() > 4_000 {
        let variance: f64 = ps.iter().map(|p| p * (1.0 - p)).sum();
        return (variance * 2.0 / std::f64::consts::PI).sqrt();
    }
    // Poisson-binomial pmf by dynamic programming.
    let mut pmf = vec![0.0f64; ps.len() + 1];
    pmf[0] = 1.0;
    for (count, &p) in ps.iter().enumerate() {
        for k in (1..=count + 1).rev() {
            pmf[k] = pmf[k] * (1.0 - p) + pmf[k - 1] * p;
        }
        pmf[0] *= 1.0 - p;
    }
    pmf.iter()
        .enumerate()
        .map(|(k, probability)| probability * (k as f64 - mean).abs())
        .sum()
}

/// The bins the equal-mass table actually has for `bins` asked: ties are never split, so there
/// may be fewer.
#[must_use]
pub fn equal_mass_bins_used(points: &[Point], bins: usize) -> usize {
    super::reliability_equal_mass(points, bins).map_or(0, |table| table.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` seeded points: p uniform on a 0.01 grid, label drawn as Bernoulli(p).
    fn drawn(n: usize, seed: u64) -> Vec<Point> {
        let mut rng = SplitMix64::new(seed);
        (0..n)
            .map(|_| {
                let p = (rng.next_f64() * 100.0).floor() / 100.0;
                Point::new(p, rng.next_f64() < p)
            })
            .collect()
    }

    #[test]
    fn delong_point_estimate_is_the_auroc() {
        let points = drawn(200, 3);
        let (auc, _) = auroc_delong(&points).unwrap();
        assert!((auc - crate::auroc(&points).unwrap()).abs() < 1e-12);
    }

    #[test]
    fn bootstrap_interval_is_seeded_and_contains_the_estimate() {
        let points = drawn(150, 5);
        let first = brier_ci(&points, None, 300, 1).unwrap();
        assert_eq!(Some(first), brier_ci(&points, None, 300, 1));
        let estimate = brier(&points).unwrap();
        assert!(first.0 <= estimate && estimate <= first.1);
    }

    #[test]
    fn expected_ece_of_one_bin_matches_a_brute_force_sum() {
        // Three points in one bin: sum over the 8 label combinations.
        let ps = [0.91, 0.95, 0.99];
        let mut brute = 0.0;
        for mask in 0..8u32 {
            let mut probability = 1.0;
            let mut deviation = 0.0;
            for (bit, p) in ps.iter().enumerate() {
                let y = f64::from((mask >> bit) & 1);
                probability *= if y == 1.0 { *p } else { 1.0 - p };
                deviation += y - p;
            }
            brute += probability * deviation.abs();
        }
        let points: Vec<Point> = ps.iter().map(|&p| Point::new(p, true)).collect();
        assert!((ece_expected(&points, 10).unwrap() - brute / 3.0).abs() < 1e-15);
    }
}
