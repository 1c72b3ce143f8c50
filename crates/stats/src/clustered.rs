//! Intervals for rates whose reviews come in clusters: the case is the unit, not the review.
//!
//! With `eval --repeat N` every case is reviewed N times, and the N reviews of one case are not
//! independent (most cases get the same verdict every time). Treating the N·k reviews as
//! independent trials would make the interval √N times too narrow. [`clustered_wilson`] is the
//! Wilson score interval at the *effective* number of independent reviews (Kish's effective
//! sample size `n_eff = N / deff`), where the design effect `deff` compares the variance of the
//! rate estimated with the case as the unit (the cluster-robust, linearised variance of a ratio
//! estimator) with the binomial variance of N independent reviews:
//!
//! ```text
//! p     = Σ sᵢ / Σ nᵢ                      (sᵢ successes of nᵢ reviews in case i, N = Σ nᵢ)
//! V_cl  = k/(k − 1) · Σ (sᵢ − p·nᵢ)² / N²   the variance with cases as the unit (k = cases
//!                                           with nᵢ > 0), with the small-sample factor k/(k − 1)
//! n_eff = p·(1 − p) / V_cl                  = N · V_binomial / V_cl, at most N (never raised
//!                                           to k: noisy repeats of few cases may be worth less)
//! when p is 0 or 1, n_eff = k; when V_cl = 0 with 0 < p < 1 (every case has the same rate),
//! n_eff = N (k ≥ 2) or 1 (k = 1).
//! interval = Wilson(p, n_eff, t)            t = the quantile of Student's t with k − 1 degrees
//!                                           of freedom at the level z gives, Φ(z) (k ≥ 2)
//! ```
//!
//! The factor k/(k − 1) and the t quantile are the usual small-sample corrections of a
//! cluster-robust variance (as in Stata's and statsmodels' cluster option): without them the
//! interval covered the truth in only 90–93 % of simulated runs of 5–10 cases.
//!
//! Why this and not a bootstrap? It is a closed formula — deterministic with no seed, and
//! checkable by hand — and it has the two limits one wants: with one review per case
//! (`nᵢ = 1`) it *is* the Wilson interval of `Σ sᵢ` out of `k`, exactly; and when every case
//! gets the same verdict on every repeat (no noise) `n_eff = k − 1` (k with the factor left
//! out), so repeating a deterministic judge never narrows the interval. A percentile cluster bootstrap would collapse to
//! a zero-width `[1, 1]` when every review is correct; Wilson never does.

use crate::{binomial::erfc, student_t_quantile, wilson};

/// The Wilson score interval for a proportion `p` observed over `n` trials, where `n` may be
/// fractional (an effective sample size). `None` when `n` is not positive and finite, `p` is
/// outside `[0, 1]` or not finite, or `z` is negative or not finite.
///
/// With integer `n` and `p = s / n` this equals [`wilson`]`(s, n, z)` up to rounding.
///
/// ```
/// use jevjudge_stats::wilson_effective;
/// let (lower, upper) = wilson_effective(0.8, 10.0, 1.96).unwrap();
/// assert!((lower - 0.490_157).abs() < 1e-6 && (upper - 0.943_319).abs() < 1e-6);
/// ```
#[must_use]
pub fn wilson_effective(p: f64, n: f64, z: f64) -> Option<(f64, f64)> {
    let valid = n.is_finite() && n > 0.0 && (0.0..=1.0).contains(&p) && z.is_finite() && z >= 0.0;
    if !valid {
        return None;
    }
    let z2 = z * z;
    if z2.is_infinite() {
        return Some((0.0, 1.0));
    }
    // The integer formula of `wilson` with hits = p·n and misses = (1 − p)·n.
    let denominator = n + z2;
    let center = (p * n + z2 / 2.0) / denominator;
    let half = z / denominator * (p * n * (1.0 - p) + z2 / 4.0).sqrt();
    let lower = (center - half).clamp(0.0, p);
    let upper = (center + half).clamp(p, 1.0);
    Some((lower, upper))
}

/// The effective number of independent reviews of clustered counts, and the pooled rate:
/// `(p, n_eff)` as the [module documentation](self) defines them. Each cluster is
/// `(successes, trials)`; clusters with no trials are ignored. `None` when there is no trial
/// at all or a cluster has more successes than trials.
///
/// ```
/// use jevjudge_stats::effective_trials;
/// // Three cases reviewed three times, each always getting the same verdict: n_eff = k − 1 = 2
/// // (3 cases, times (k − 1)/k).
/// let (p, n_eff) = effective_trials(&[(3, 3), (3, 3), (0, 3)]).unwrap();
/// assert!((p - 2.0 / 3.0).abs() < 1e-12 && (n_eff - 2.0).abs() < 1e-9);
/// ```
#[must_use]
pub fn effective_trials(clusters: &[(u64, u64)]) -> Option<(f64, f64)> {
    let mut successes = 0u128;
    let mut trials = 0u128;
    let mut cases = 0u64;
    let mut all_single = true;
    for &(s, n) in clusters {
        if s > n {
            return None;
        }
        if n == 0 {
            continue;
        }
        successes += u128::from(s);
        trials += u128::from(n);
        cases += 1;
        all_single &= n == 1;
    }
    if trials == 0 {
        return None;
    }
    let total = trials as f64;
    let p = successes as f64 / total;
    let k = cases as f64;
    if all_single {
        return Some((p, total));
    }
    if successes == 0 || successes == trials {
        return Some((p, k));
    }
    let spread: f64 = clusters
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|&(s, n)| {
            let residual = s as f64 - p * n as f64;
            residual * residual
        })
        .sum();
    let variance = spread / (total * total) * if cases > 1 { k / (k - 1.0) } else { 1.0 };
    let n_eff = if variance > 0.0 {
        p * (1.0 - p) / variance
    } else if cases == 1 {
        // One case shows no spread between cases: it counts once.
        1.0
    } else {
        total
    };
    Some((p, n_eff.min(total)))
}

/// The 95 %-style interval of a rate counted over clusters of reviews (cases reviewed several
/// times), with the case as the unit: [`wilson_effective`] at the [`effective_trials`], with z
/// replaced by the t quantile of k − 1 degrees of freedom (see the [module documentation](self)). With one trial per cluster it is exactly
/// [`wilson`]`(Σ s, k, z)`. `None` when there is no trial, a cluster has more successes than
/// trials, or `z` is negative or not finite.
///
/// ```
/// use jevjudge_stats::{clustered_wilson, wilson};
/// // One review per case: the plain Wilson interval.
/// assert_eq!(clustered_wilson(&[(1, 1), (1, 1), (0, 1)], 1.96), wilson(2, 3, 1.96));
/// ```
#[must_use]
pub fn clustered_wilson(clusters: &[(u64, u64)], z: f64) -> Option<(f64, f64)> {
    if clusters.iter().all(|&(s, n)| n == 1 && s <= 1) {
        let successes = clusters.iter().map(|&(s, _)| s).sum();
        return wilson(successes, clusters.len() as u64, z);
    }
    let (p, n_eff) = effective_trials(clusters)?;
    if !(z.is_finite() && z >= 0.0) {
        return None;
    }
    let cases = clusters.iter().filter(|(_, n)| *n > 0).count();
    let quantile = if cases >= 2 && z > 0.0 {
        // Φ(z) = 1 − erfc(z / √2) / 2
        let level = 1.0 - 0.5 * erfc(z / std::f64::consts::SQRT_2);
        student_t_quantile(level, (cases - 1) as f64)
    } else {
        z
    };
    wilson_effective(p, n_eff, quantile)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn close(actual: f64, expected: f64, tolerance: f64) -> bool {
        (actual - expected).abs() <= tolerance
    }

    // By hand: p = 0.8, n = 10 is wilson(8, 10): (0.490157, 0.943319) (see binomial.rs).
    #[test]
    fn effective_wilson_at_integer_n_is_wilson() {
        let (lower, upper) = wilson_effective(0.8, 10.0, 1.96).unwrap();
        let (l, u) = wilson(8, 10, 1.96).unwrap();
        assert!(close(lower, l, 1e-15) && close(upper, u, 1e-15));
    }

    #[test]
    fn effective_wilson_rejects_bad_input() {
        assert_eq!(wilson_effective(0.5, 0.0, 1.96), None);
        assert_eq!(wilson_effective(0.5, f64::NAN, 1.96), None);
        assert_eq!(wilson_effective(1.5, 3.0, 1.96), None);
        assert_eq!(wilson_effective(f64::NAN, 3.0, 1.96), None);
        assert_eq!(wilson_effective(0.5, 3.0, -1.0), None);
    }

    // The statsmodels reference values are in tests/calibrate_reference.rs; by hand:
    //   clusters = [(3,3),(3,3),(0,3),(2,3),(3,3),(1,3)], N = 18, k = 6, p = 2/3
    //   V = 6/5 · 8/324, n_eff = (2/9) / V = 7.5
    #[test]
    fn the_small_sample_factor_lowers_the_effective_n() {
        let clusters = [(3, 3), (3, 3), (0, 3), (2, 3), (3, 3), (1, 3)];
        let (p, n_eff) = effective_trials(&clusters).unwrap();
        assert!(close(p, 2.0 / 3.0, 1e-15));
        assert!(close(n_eff, 7.5, 1e-12), "{n_eff}");
    }

    // No noise: three repeats of a deterministic judge are no narrower than the cases alone.
    #[test]
    fn identical_repeats_do_not_narrow_the_interval() {
        let cases: Vec<(u64, u64)> = (0..150)
            .map(|i| if i < 123 { (3, 3) } else { (0, 3) })
            .collect();
        let (lower, upper) = clustered_wilson(&cases, 1.96).unwrap();
        let (l, u) = wilson(123, 150, 1.96).unwrap();
        assert!(lower <= l && upper >= u, "{lower} {upper} vs {l} {u}");
    }

    // Every review correct: n_eff = cases and the t(k − 1) quantile, never [1, 1].
    #[test]
    fn all_correct_keeps_a_lower_bound_below_one() {
        let (lower, upper) = clustered_wilson(&[(3, 3); 12], 1.96).unwrap();
        assert_eq!(upper, 1.0);
        let t = crate::student_t_quantile(0.975_002_104_851_780, 11.0);
        assert!(close(lower, 12.0 / (12.0 + t * t), 1e-9), "{lower}");
    }

    // Every case has the same rate (1 of 2): no between-case spread, reviews count as
    // independent, n_eff = N = 8.
    #[test]
    fn equal_rates_count_every_review() {
        let (p, n_eff) = effective_trials(&[(1, 2); 4]).unwrap();
        assert_eq!((p, n_eff), (0.5, 8.0));
    }

    #[test]
    fn single_reviews_are_plain_wilson() {
        let clusters: Vec<(u64, u64)> = (0..150).map(|i| (u64::from(i < 123), 1)).collect();
        assert_eq!(clustered_wilson(&clusters, 1.96), wilson(123, 150, 1.96));
    }

    #[test]
    fn empty_and_bad_clusters() {
        assert_eq!(clustered_wilson(&[], 1.96), None);
        assert_eq!(clustered_wilson(&[(0, 0)], 1.96), None);
        assert_eq!(clustered_wilson(&[(4, 3)], 1.96), None);
        assert_eq!(
            effective_trials(&[(0, 0), (2, 3)]).map(|(_, n)| n),
            Some(1.0)
        );
    }

    proptest! {
        #[test]
        fn clustered_interval_is_valid_and_between_the_two_extremes(
            counts in proptest::collection::vec((0u64..=5, 1u64..=5), 1..60),
        ) {
            let clusters: Vec<(u64, u64)> =
                counts.iter().map(|&(s, n)| (s.min(n), n)).collect();
            let (p, n_eff) = effective_trials(&clusters).unwrap();
            let k = clusters.len() as f64;
            let total: u64 = clusters.iter().map(|c| c.1).sum();
            prop_assert!(n_eff > 0.0 && n_eff <= total as f64 + 1e-9 && k >= 1.0);
            let (lower, upper) = clustered_wilson(&clusters, 1.96).unwrap();
            prop_assert!(0.0 <= lower && lower <= p && p <= upper && upper <= 1.0);
            // Never narrower than if every review were independent.
            let successes: u64 = clusters.iter().map(|c| c.0).sum();
            let (l, u) = wilson(successes, total, 1.96).unwrap();
            prop_assert!(upper - lower >= u - l - 1e-9);
        }
    }
}
