//! Choosing a criterion's two thresholds from labelled data, and checking that the choice holds
//! on rows it was not fitted on.
//!
//! A criterion decides on p′ (the probability that its expectation holds): PASS when
//! `p′ ≥ pass_at_or_above`, FAIL when `p′ ≤ fail_at_or_below`, otherwise it abstains
//! (INCONCLUSIVE). Here every [`Point`]'s `p` is that p′ and its `label` says whether the
//! expectation really holds, so a PASS is right when the label is yes and a FAIL is right when
//! it is no.
//!
//! The recommendation is [`certify`]'s: Learn then Test over the whole grid, with a finite-sample
//! guarantee, and [`stability`] describes how the choice moves under resampling. [`choose`]
//! and [`out_of_bag`] are the earlier, Wilson-based search and its check, kept for comparison
//! (the coverage simulation runs both); their bound is not a guarantee for the chosen pair.
//!
//! Why Wilson lower bounds and not the observed precision? Thresholds fitted to the data they
//! are scored on flatter themselves: with 12 passes, all correct, the observed precision is 1.0,
//! but 12 cases only show a precision of at least ~0.76 at 95 % confidence. [`choose`] therefore
//! demands that the *Wilson lower bound* of each precision reaches its target, and among the
//! pairs that do, takes the one that abstains least.
//!
//! Why an out-of-bag bootstrap on top? Even the Wilson bound is computed on the rows the pair
//! was chosen on, and choosing the best of many pairs is itself optimistic. [`out_of_bag`]
//! repeats the whole choice on bootstrap resamples and scores each choice on the rows that
//! resample left out, which estimates how often the *procedure* meets the targets on cases it
//! has not seen.

use crate::{Point, wilson_lower};

mod certify;
#[cfg(test)]
mod certify_tests;
mod choose;
mod out_of_bag;
mod stability;
#[cfg(test)]
mod tests;

pub use certify::{Certificate, NoCertificate, certify, entry_decisions};
pub use choose::{Choice, NoChoice, choose};
pub use out_of_bag::{OutOfBag, out_of_bag};
pub use stability::{Stability, stability};

/// What a pair of thresholds must achieve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Targets {
    /// The least precision of PASS decisions (the expectation really holds), in `[0, 1]`.
    pub min_pass_precision: f64,
    /// The least precision of FAIL decisions (the expectation really does not hold), in
    /// `[0, 1]`.
    pub min_fail_precision: f64,
    /// The largest fraction of abstentions (INCONCLUSIVE), in `[0, 1]`.
    pub max_abstain: f64,
    /// The standard-normal quantile of the Wilson lower bounds (1.96 for 95 %).
    pub z: f64,
}

impl Targets {
    /// Whether every target is a number in `[0, 1]` and `z` is finite and not negative.
    #[must_use]
    pub fn is_valid(&self) -> bool {
        let unit = |x: f64| (0.0..=1.0).contains(&x);
        unit(self.min_pass_precision)
            && unit(self.min_fail_precision)
            && unit(self.max_abstain)
            && self.z.is_finite()
            && self.z >= 0.0
    }
}

/// A criterion's two thresholds on p′.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// p′ at or below this fails.
    pub fail_at_or_below: f64,
    /// p′ at or above this passes.
    pub pass_at_or_above: f64,
}

impl Thresholds {
    /// Thresholds with `0 ≤ fail < pass ≤ 1` (both finite), or `None`.
    ///
    /// ```
    /// use jevjudge_stats::Thresholds;
    /// assert!(Thresholds::new(0.2, 0.8).is_some());
    /// assert!(Thresholds::new(0.5, 0.5).is_none());
    /// ```
    #[must_use]
    pub fn new(fail_at_or_below: f64, pass_at_or_above: f64) -> Option<Thresholds> {
        let valid = fail_at_or_below.is_finite()
            && pass_at_or_above.is_finite()
            && 0.0 <= fail_at_or_below
            && fail_at_or_below < pass_at_or_above
            && pass_at_or_above <= 1.0;
        valid.then_some(Thresholds {
            fail_at_or_below,
            pass_at_or_above,
        })
    }

    /// The decision for one p′, exactly as the Judge scores (plain f64 comparisons, each
    /// boundary on its own side).
    #[must_use]
    pub fn decide(&self, expected_probability: f64) -> Decision {
        if expected_probability >= self.pass_at_or_above {
            Decision::Pass
        } else if expected_probability <= self.fail_at_or_below {
            Decision::Fail
        } else {
            Decision::Abstain
        }
    }
}

/// What a pair of thresholds decides for one p′.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Decision {
    /// `p′ ≥ pass_at_or_above`.
    Pass,
    /// `p′ ≤ fail_at_or_below`.
    Fail,
    /// In between: INCONCLUSIVE.
    Abstain,
}

/// How a pair of thresholds decides a set of points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tally {
    /// Points decided (or not).
    pub total: u64,
    /// PASS decisions.
    pub passes: u64,
    /// PASS decisions whose label is yes (the expectation holds).
    pub correct_passes: u64,
    /// FAIL decisions.
    pub fails: u64,
    /// FAIL decisions whose label is no.
    pub correct_fails: u64,
}

impl Tally {
    /// Points neither passed nor failed.
    #[must_use]
    pub fn abstained(&self) -> u64 {
        self.total
            .saturating_sub(self.passes)
            .saturating_sub(self.fails)
    }

    /// `correct_passes / passes`, or `None` without PASS decisions.
    #[must_use]
    pub fn pass_precision(&self) -> Option<f64> {
        ratio(self.correct_passes, self.passes)
    }

    /// `correct_fails / fails`, or `None` without FAIL decisions.
    #[must_use]
    pub fn fail_precision(&self) -> Option<f64> {
        ratio(self.correct_fails, self.fails)
    }

    /// `abstained / total`, or `None` without points.
    #[must_use]
    pub fn abstain_rate(&self) -> Option<f64> {
        ratio(self.abstained(), self.total)
    }

    /// The Wilson lower bound of the PASS precision, or `None` without PASS decisions.
    #[must_use]
    pub fn pass_lower(&self, z: f64) -> Option<f64> {
        wilson_lower(self.correct_passes, self.passes, z)
    }

    /// The Wilson lower bound of the FAIL precision, or `None` without FAIL decisions.
    #[must_use]
    pub fn fail_lower(&self, z: f64) -> Option<f64> {
        wilson_lower(self.correct_fails, self.fails, z)
    }

    /// Whether the *observed* figures meet the targets: each precision at least its target
    /// (vacuously true without decisions of that kind: none of them is wrong) and the
    /// abstention rate at most `max_abstain`. False without points.
    #[must_use]
    pub fn meets_observed(&self, targets: &Targets) -> bool {
        self.pass_precision()
            .is_none_or(|precision| precision >= targets.min_pass_precision)
            && self
                .fail_precision()
                .is_none_or(|precision| precision >= targets.min_fail_precision)
            && self
                .abstain_rate()
                .is_some_and(|rate| rate <= targets.max_abstain)
    }
}

fn ratio(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// How `thresholds` decide `points` (each `p` a p′, each `label` whether the expectation holds).
/// Points whose `p` is not a number in `[0, 1]` are left out of every count.
///
/// ```
/// use jevjudge_stats::{tally, Point, Thresholds};
/// let points = [Point::new(0.9, true), Point::new(0.85, false), Point::new(0.5, true),
///               Point::new(0.1, false)];
/// let counts = tally(&points, Thresholds::new(0.2, 0.8).unwrap());
/// assert_eq!((counts.passes, counts.correct_passes, counts.fails, counts.abstained()), (2, 1, 1, 1));
/// ```
#[must_use]
pub fn tally(points: &[Point], thresholds: Thresholds) -> Tally {
    let mut counts = Tally::default();
    for point in points.iter().filter(|point| point.is_valid()) {
        counts.total += 1;
        match thresholds.decide(point.p) {
            Decision::Pass => {
                counts.passes += 1;
                counts.correct_passes += u64::from(point.label);
            }
            Decision::Fail => {
                counts.fails += 1;
                counts.correct_fails += u64::from(!point.label);
            }
            Decision::Abstain => {}
        }
    }
    counts
}
