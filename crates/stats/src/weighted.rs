//! Rates of a weighted sample: each case stands for `w` cases of the population it was drawn
//! from (`w = 1/π`, π its inclusion probability). The rate is the Horvitz–Thompson (Hájek)
//! ratio `Σ w·y / Σ w`, and its interval is the Wilson interval at the Kish effective sample
//! size `n_eff = (Σw)² / Σw²` — equal to n when every weight is equal, smaller the more the
//! weights vary. The interval is approximate: it treats the sample as `n_eff` independent draws
//! from the population.

use crate::wilson_effective;

/// The Kish effective sample size `(Σw)² / Σw²` of `weights`. `None` when there are none or a
/// weight is not positive and finite.
///
/// ```
/// use jevjudge_stats::kish_effective_n;
/// assert_eq!(kish_effective_n(&[2.0, 2.0, 2.0]), Some(3.0));
/// // One case of weight 1, one of weight 3: (1 + 3)² / (1 + 9) = 1.6.
/// assert!((kish_effective_n(&[1.0, 3.0]).unwrap() - 1.6).abs() < 1e-12);
/// ```
#[must_use]
pub fn kish_effective_n(weights: &[f64]) -> Option<f64> {
    if weights.is_empty() || !weights.iter().all(|w| w.is_finite() && *w > 0.0) {
        return None;
    }
    let sum: f64 = weights.iter().sum();
    let squares: f64 = weights.iter().map(|w| w * w).sum();
    Some(sum * sum / squares)
}

/// A weighted proportion: its Horvitz–Thompson estimate, the Kish effective n behind it and the
/// Wilson interval at that n.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WeightedProportion {
    /// `Σ w·y / Σ w`.
    pub estimate: f64,
    /// `(Σw)² / Σw²` over the cases in the denominator.
    pub effective_n: f64,
    /// The Wilson interval at `effective_n`.
    pub interval: (f64, f64),
}

/// The weighted proportion of `items` (`(hit, weight)`), with the Wilson interval at the Kish
/// effective n and quantile `z`. `None` when there are no items, a weight is not positive and
/// finite, or `z` is invalid.
///
/// ```
/// use jevjudge_stats::weighted_proportion;
/// // A hit of weight 3 and a miss of weight 1: 3/4, at an effective n of 1.6.
/// let rate = weighted_proportion(&[(true, 3.0), (false, 1.0)], 1.96).unwrap();
/// assert_eq!(rate.estimate, 0.75);
/// assert!((rate.effective_n - 1.6).abs() < 1e-12);
/// ```
#[must_use]
pub fn weighted_proportion(items: &[(bool, f64)], z: f64) -> Option<WeightedProportion> {
    let weights: Vec<f64> = items.iter().map(|(_, w)| *w).collect();
    let effective_n = kish_effective_n(&weights)?;
    let total: f64 = weights.iter().sum();
    // `+ 0.0`: an empty f64 sum is −0.0.
    let hits = items
        .iter()
        .filter(|(hit, _)| *hit)
        .map(|(_, w)| w)
        .sum::<f64>()
        + 0.0;
    let estimate = (hits / total).clamp(0.0, 1.0);
    let interval = wilson_effective(estimate, effective_n, z)?;
    Some(WeightedProportion {
        estimate,
        effective_n,
        interval,
    })
}

/// A weighted ratio over cases that each contribute `successes` of `trials` (several with
/// repeats) at a `weight`: the estimate `Σ w·s / Σ w·n`, the case as the unit of the effective
/// n, `(Σ w·n)² / Σ (w·n)²` (Kish's, with each case weighing `w·n`; with one trial per case it
/// is [`kish_effective_n`] of the weights), and the Wilson interval at that n. `None` without a
/// case with trials, or with a weight or count that is not finite and non-negative.
///
/// ```
/// use jevjudge_stats::weighted_ratio;
/// // Two cases of one review each: correct at weight 3, wrong at weight 1.
/// let rate = weighted_ratio(&[(1.0, 1.0, 3.0), (0.0, 1.0, 1.0)], 1.96).unwrap();
/// assert_eq!(rate.estimate, 0.75);
/// ```
#[must_use]
pub fn weighted_ratio(cases: &[(f64, f64, f64)], z: f64) -> Option<WeightedProportion> {
    let valid = cases.iter().all(|&(s, n, w)| {
        s.is_finite() && n.is_finite() && w.is_finite() && s >= 0.0 && s <= n && w > 0.0
    });
    let masses: Vec<f64> = cases
        .iter()
        .filter(|(_, n, _)| *n > 0.0)
        .map(|&(_, n, w)| w * n)
        .collect();
    if !valid || masses.is_empty() {
        return None;
    }
    let effective_n = kish_effective_n(&masses)?;
    let total: f64 = masses.iter().sum();
    let hits = cases.iter().map(|&(s, _, w)| w * s).sum::<f64>() + 0.0;
    let estimate = (hits / total).clamp(0.0, 1.0);
    let interval = wilson_effective(estimate, effective_n, z)?;
    Some(WeightedProportion {
        estimate,
        effective_n,
        interval,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wilson;

    #[test]
    fn equal_weights_give_the_unweighted_wilson_interval() {
        let items: Vec<(bool, f64)> = (0..10).map(|i| (i < 8, 2.5)).collect();
        let rate = weighted_proportion(&items, 1.96).unwrap();
        let (lower, upper) = wilson(8, 10, 1.96).unwrap();
        assert!((rate.estimate - 0.8).abs() < 1e-12);
        assert!((rate.effective_n - 10.0).abs() < 1e-9);
        assert!((rate.interval.0 - lower).abs() < 1e-9 && (rate.interval.1 - upper).abs() < 1e-9);
    }

    #[test]
    fn integer_weights_give_the_estimate_of_the_expanded_sample() {
        // Weight 3 on a hit equals the hit written three times.
        let weighted =
            weighted_proportion(&[(true, 3.0), (false, 1.0), (true, 1.0)], 1.96).unwrap();
        assert!((weighted.estimate - 0.8).abs() < 1e-12);
        // But the effective n is (5)² / 11, not 5: the copies are not independent draws.
        assert!((weighted.effective_n - 25.0 / 11.0).abs() < 1e-12);
    }

    #[test]
    fn invalid_weights_give_none() {
        assert_eq!(kish_effective_n(&[]), None);
        assert_eq!(kish_effective_n(&[1.0, 0.0]), None);
        assert_eq!(kish_effective_n(&[1.0, f64::NAN]), None);
        assert_eq!(weighted_proportion(&[], 1.96), None);
    }
}

#[cfg(test)]
mod reference_tests {
    use super::*;

    /// statsmodels' weighted mean, Kish n and Wilson interval at that n
    /// (`scripts/reference/weighted.py`).
    #[test]
    fn weighted_proportions_match_statsmodels() {
        let fixture = include_str!("../tests/data/weighted.txt");
        let mut checked = 0;
        for line in fixture.lines() {
            let fields: Vec<&str> = line.split(' ').collect();
            assert_eq!(fields[0], "weighted", "{line}");
            let items: Vec<(bool, f64)> = fields[1]
                .split(',')
                .map(|item| {
                    let (hit, w) = item.split_once(':').unwrap();
                    (hit == "1", w.parse().unwrap())
                })
                .collect();
            let expected: Vec<f64> = fields[2..].iter().map(|x| x.parse().unwrap()).collect();
            // statsmodels' Wilson uses z = norm.ppf(0.975).
            let rate = weighted_proportion(&items, 1.959_963_984_540_054).unwrap();
            let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
            assert!(close(rate.estimate, expected[0]), "{line}: {rate:?}");
            assert!(close(rate.effective_n, expected[1]), "{line}: {rate:?}");
            assert!(close(rate.interval.0, expected[2]), "{line}: {rate:?}");
            assert!(close(rate.interval.1, expected[3]), "{line}: {rate:?}");
            let weights: Vec<f64> = items.iter().map(|(_, w)| *w).collect();
            let cases: Vec<(f64, f64, f64)> = items
                .iter()
                .map(|&(hit, w)| (f64::from(u8::from(hit)), 1.0, w))
                .collect();
            let ratio = weighted_ratio(&cases, 1.959_963_984_540_054).unwrap();
            assert!(close(ratio.estimate, expected[0]) && close(ratio.effective_n, expected[1]));
            assert!(close(kish_effective_n(&weights).unwrap(), expected[1]));
            checked += 1;
        }
        assert_eq!(checked, 6);
    }
}
