//! [`stability`]: how stable the certified pair is under resampling — a description of the
//! data, not a guarantee (the guarantee is [`certify`]'s).

use super::{Targets, Thresholds, certify, tally};
use crate::{Point, SplitMix64, resample_indices};

/// What [`stability`] found over its bootstrap resamples.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Stability {
    /// Bootstrap resamples drawn.
    pub resamples: u32,
    /// Resamples whose distinct in-bag rows certified a pair at all.
    pub certified: u32,
    /// Resamples that certified the pair certified on all the points (the same decisions on
    /// every point).
    pub same_pair: u32,
    /// Distinct pairs (by their decisions on all the points) the resamples certified.
    pub distinct_pairs: u32,
    /// Out-of-bag PASS decisions of the resamples' pairs, pooled: `(correct, decided)`.
    pub out_of_bag_pass: (u64, u64),
    /// Out-of-bag FAIL decisions, pooled: `(correct, decided)`.
    pub out_of_bag_fail: (u64, u64),
    /// The 2.5th and 97.5th percentiles of the resamples' out-of-bag PASS precisions.
    pub pass_interval: Option<(f64, f64)>,
    /// The same for FAIL.
    pub fail_interval: Option<(f64, f64)>,
}

impl Stability {
    /// `same_pair / resamples`, or `None` without resamples.
    #[must_use]
    pub fn selection_rate(&self) -> Option<f64> {
        (self.resamples > 0).then(|| f64::from(self.same_pair) / f64::from(self.resamples))
    }

    /// The pooled out-of-bag PASS precision.
    #[must_use]
    pub fn pass_precision(&self) -> Option<f64> {
        let (right, decided) = self.out_of_bag_pass;
        (decided > 0).then(|| right as f64 / decided as f64)
    }

    /// The pooled out-of-bag FAIL precision.
    #[must_use]
    pub fn fail_precision(&self) -> Option<f64> {
        let (right, decided) = self.out_of_bag_fail;
        (decided > 0).then(|| right as f64 / decided as f64)
    }
}

/// `resamples` bootstrap resamples of `points` (seeded by `seed`): each certifies a pair
/// ([`certify`] at `delta`) on its *distinct* in-bag rows — a row drawn twice counts once — and
/// scores it on the rows it left out. With `cases` (each point's case index, for repeats) the
/// cases are resampled, each with all its reviews (a cluster bootstrap). Reports how often the resamples certified `chosen` (by its
/// decisions on all the points), how many distinct pairs they certified, and the pooled
/// out-of-bag precisions with the percentile range of the per-resample ones. The same inputs
/// always give the same result.
///
/// ```
/// use jevjudge_stats::{certify, stability, Point, Targets};
/// let mut points = vec![Point::new(0.95, true); 80];
/// points.extend(vec![Point::new(0.05, false); 80]);
/// let targets = Targets { min_pass_precision: 0.8, min_fail_precision: 0.8, max_abstain: 0.1, z: 1.96 };
/// let chosen = certify(&points, None, None, &targets, 0.05).unwrap().thresholds;
/// let figure = stability(&points, &targets, 0.05, None, 50, 7, chosen);
/// assert_eq!((figure.resamples, figure.same_pair, figure.distinct_pairs), (50, 50, 1));
/// assert_eq!(figure.pass_precision(), Some(1.0));
/// ```
#[must_use]
pub fn stability(
    points: &[Point],
    targets: &Targets,
    delta: f64,
    cases: Option<&[usize]>,
    resamples: u32,
    seed: u64,
    chosen: Thresholds,
) -> Stability {
    // The units resampled: cases (all their reviews go together), or the points.
    let unit_of: Vec<usize> = match cases {
        Some(cases) if cases.len() == points.len() => cases.to_vec(),
        _ => (0..points.len()).collect(),
    };
    let units = unit_of.iter().max().map_or(0, |last| last + 1);
    let mut rng = SplitMix64::new(seed);
    let mut result = Stability {
        resamples,
        ..Stability::default()
    };
    let whole = tally(points, chosen);
    let signature = |thresholds: Thresholds| {
        let counts = tally(points, thresholds);
        (counts.passes, counts.fails)
    };
    let chosen_signature = (whole.passes, whole.fails);
    let mut pairs: Vec<(u64, u64)> = Vec::new();
    let mut pass_rates = Vec::new();
    let mut fail_rates = Vec::new();
    let mut in_bag_points = Vec::with_capacity(points.len());
    let mut out_points = Vec::new();
    let mut in_bag_cases = Vec::with_capacity(points.len());
    let mut drawn = vec![false; units];
    for _ in 0..resamples {
        let (in_bag, _) = resample_indices(units, &mut rng);
        drawn.iter_mut().for_each(|seen| *seen = false);
        in_bag.iter().for_each(|&unit| drawn[unit] = true);
        in_bag_points.clear();
        in_bag_cases.clear();
        out_points.clear();
        for (index, &unit) in unit_of.iter().enumerate() {
            if drawn[unit] {
                in_bag_points.push(points[index]);
                in_bag_cases.push(unit);
            } else {
                out_points.push(points[index]);
            }
        }
        let Ok(certificate) = certify(
            &in_bag_points,
            None,
            cases.map(|_| in_bag_cases.as_slice()),
            targets,
            delta,
        ) else {
            continue;
        };
        result.certified += 1;
        let key = signature(certificate.thresholds);
        if key == chosen_signature {
            result.same_pair += 1;
        }
        if !pairs.contains(&key) {
            pairs.push(key);
        }
        let counts = tally(&out_points, certificate.thresholds);
        result.out_of_bag_pass.0 += counts.correct_passes;
        result.out_of_bag_pass.1 += counts.passes;
        result.out_of_bag_fail.0 += counts.correct_fails;
        result.out_of_bag_fail.1 += counts.fails;
        pass_rates.extend(counts.pass_precision());
        fail_rates.extend(counts.fail_precision());
    }
    result.distinct_pairs = pairs.len() as u32;
    result.pass_interval = percentile_range(&mut pass_rates);
    result.fail_interval = percentile_range(&mut fail_rates);
    result
}

/// The 2.5th and 97.5th percentiles by nearest rank (`⌈q·n⌉`-th smallest).
fn percentile_range(rates: &mut [f64]) -> Option<(f64, f64)> {
    if rates.is_empty() {
        return None;
    }
    rates.sort_by(f64::total_cmp);
    let n = rates.len();
    let rank = |permille: usize| (permille * n).div_ceil(1000).clamp(1, n) - 1;
    Some((rates[rank(25)], rates[rank(975)]))
}
