//! [`out_of_bag`]: how often the choice meets the targets on rows it was not fitted on.

use super::{Targets, choose, tally};
use crate::{Point, SplitMix64, resample_indices};

/// How often the threshold choice met the targets on rows it was not fitted on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OutOfBag {
    /// Bootstrap resamples drawn.
    pub resamples: u32,
    /// Resamples whose in-bag rows admitted a choice at all.
    pub fitted: u32,
    /// Resamples whose choice met the targets on the out-of-bag rows.
    pub met: u32,
}

impl OutOfBag {
    /// `met / resamples`, or `None` without resamples.
    #[must_use]
    pub fn rate(&self) -> Option<f64> {
        (self.resamples > 0).then(|| f64::from(self.met) / f64::from(self.resamples))
    }
}

/// The out-of-bag check of [`choose`]: `resamples` times, draw a bootstrap resample of the
/// points (seeded by `seed`, [`resample_indices`]), run [`choose`] on the in-bag points, and
/// score its thresholds on the out-of-bag points with [`Tally::meets_observed`](super::Tally::meets_observed) — observed
/// precisions at least the targets and abstention at most `max_abstain`. A resample whose
/// in-bag points admit no choice, or that leaves no point out of bag, counts as not met.
///
/// The same points, targets and seed always give the same result.
///
/// ```
/// use jevjudge_stats::{out_of_bag, Point, Targets};
/// let mut points = vec![Point::new(0.95, true); 40];
/// points.extend(vec![Point::new(0.05, false); 40]);
/// let targets = Targets { min_pass_precision: 0.8, min_fail_precision: 0.8, max_abstain: 0.1, z: 1.96 };
/// let check = out_of_bag(&points, &targets, 50, 7);
/// assert_eq!((check.resamples, check.met), (50, 50));
/// // A Wilson lower bound of 0.9 needs 35 correct decisions of a kind with no mistake; a
/// // resample with fewer than 35 of a class admits no choice and counts as not met.
/// let strict = Targets { min_pass_precision: 0.9, min_fail_precision: 0.9, ..targets };
/// let check = out_of_bag(&points, &strict, 50, 7);
/// assert!(check.fitted < 50 && check.met == check.fitted);
/// ```
#[must_use]
pub fn out_of_bag(points: &[Point], targets: &Targets, resamples: u32, seed: u64) -> OutOfBag {
    let mut rng = SplitMix64::new(seed);
    let mut result = OutOfBag {
        resamples,
        ..OutOfBag::default()
    };
    let mut in_bag_points = Vec::with_capacity(points.len());
    let mut out_points = Vec::new();
    for _ in 0..resamples {
        let (in_bag, out) = resample_indices(points.len(), &mut rng);
        in_bag_points.clear();
        in_bag_points.extend(in_bag.iter().map(|&index| points[index]));
        let Ok(choice) = choose(&in_bag_points, targets) else {
            continue;
        };
        result.fitted += 1;
        out_points.clear();
        out_points.extend(out.iter().map(|&index| points[index]));
        if tally(&out_points, choice.thresholds).meets_observed(targets) {
            result.met += 1;
        }
    }
    result
}
