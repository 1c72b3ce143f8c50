//! Precisions at a stated production base rate.
//!
//! The share of a report's cases expected to pass is whatever the labelled set happened to
//! hold (the SMS set is 50 % spam, the collection it came from 13.4 %), and a verdict's
//! precision moves with it. Given `P`, the share of cases that should pass in production, the
//! PASS and FAIL precisions are recomputed by Bayes' rule from the rates at which each class
//! gets each verdict ([`jevjudge_stats::precision_at_prevalence`]):
//!
//! ```text
//! PASS precision(P) = P·tpr / (P·tpr + (1 − P)·fpr)
//!     tpr = PASS on cases expected to pass ÷ reviews of them
//!     fpr = PASS on cases expected to fail ÷ reviews of them   (false PASS per expected FAIL)
//! FAIL precision(P) = the same with the classes swapped and 1 − P
//! ```
//!
//! With repeats the counts are scaled to the number of cases (the case is the unit). With
//! weighted cases the stated rate replaces the cases' weighted mix (it is not applied on top): `calibrate`
//! weighs each class's rates; a weighted `eval` or `compare` summary gives no precision at P.

use serde::{Deserialize, Serialize};

/// The standard-normal quantile of a two-sided 95 % interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// The cases' mix is "far" from the stated rate when their odds differ by more than this
/// factor.
const FAR_ODDS_RATIO: f64 = 2.0;

/// A summary's precisions at a stated production base rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AtPrevalence {
    /// The share of cases that should pass in production, as given.
    pub prevalence: f64,
    /// The share of these cases expected to pass (null without a review).
    pub cases_expected_pass_share: Option<f64>,
    /// The share of PASS verdicts that would be right at `prevalence`.
    pub pass_precision: Option<f64>,
    /// 95 % interval of `pass_precision` (delta method on the log-odds scale).
    pub pass_precision_ci: Option<[f64; 2]>,
    /// The share of FAIL verdicts that would be right at `prevalence`.
    pub fail_precision: Option<f64>,
    /// 95 % interval of `fail_precision`.
    pub fail_precision_ci: Option<[f64; 2]>,
    /// Set when the cases' share expected to pass is far from `prevalence`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// A production base rate outside `(0, 1)`.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("a prevalence must be strictly between 0 and 1, not {0}")]
pub struct PrevalenceError(pub f64);

impl jevjudge_wire::setting::Explain for PrevalenceError {
    /// The rate out of range, named.
    fn explain(&self, name: jevjudge_wire::setting::Namer<'_>) -> String {
        format!(
            "{}: {self}",
            name(jevjudge_wire::setting::Setting::Prevalence)
        )
    }
}

/// Checks a production base rate: strictly between 0 and 1.
pub fn check(prevalence: f64) -> Result<f64, PrevalenceError> {
    if prevalence > 0.0 && prevalence < 1.0 {
        Ok(prevalence)
    } else {
        Err(PrevalenceError(prevalence))
    }
}

/// The warning when the cases' share expected to pass (`share`) is far from `prevalence`.
pub fn far_warning(share: f64, prevalence: f64) -> Option<String> {
    let odds = |p: f64| p / (1.0 - p);
    if share <= 0.0 || share >= 1.0 {
        return Some(format!(
            "the cases hold only one class ({:.1} % expected to pass): precisions at {:.1} % cannot be estimated from them",
            share * 100.0,
            prevalence * 100.0
        ));
    }
    let ratio = odds(share) / odds(prevalence);
    (!(1.0 / FAR_ODDS_RATIO..=FAR_ODDS_RATIO).contains(&ratio)).then(|| {
        format!(
            "the cases are {:.1} % expected to pass, production {:.1} %: precisions read from the cases' own mix do not hold in production; use the precisions at {:.1} %",
            share * 100.0,
            prevalence * 100.0,
            prevalence * 100.0
        )
    })
}

/// The two precisions at `prevalence` from the counts of one class-by-verdict table:
/// `pass_hits` of `positives` cases that should pass got PASS, `pass_false` of `negatives`
/// that should fail got PASS, and likewise for FAIL. Counts may be fractional.
pub fn precisions(
    prevalence: f64,
    positives: f64,
    negatives: f64,
    (pass_hits, pass_false): (f64, f64),
    (fail_hits, fail_false): (f64, f64),
) -> AtPrevalence {
    let pass = jevjudge_stats::precision_at_prevalence(
        prevalence, pass_hits, positives, pass_false, negatives, Z95,
    );
    let fail = jevjudge_stats::precision_at_prevalence(
        1.0 - prevalence,
        fail_hits,
        negatives,
        fail_false,
        positives,
        Z95,
    );
    let total = positives + negatives;
    let share = (total > 0.0).then(|| positives / total);
    AtPrevalence {
        prevalence,
        cases_expected_pass_share: share,
        pass_precision: pass.map(|(p, ..)| p),
        pass_precision_ci: pass.map(|(_, low, high)| [low, high]),
        fail_precision: fail.map(|(p, ..)| p),
        fail_precision_ci: fail.map(|(_, low, high)| [low, high]),
        warning: share.and_then(|share| far_warning(share, prevalence)),
    }
}

/// One criterion's PASS and FAIL precisions at `prevalence` (the share of cases in
/// production whose expectation holds — for a one-criterion definition, the share that should
/// pass), for a calibration [`jevjudge_stats::Tally`] of a threshold pair on p′: `positives`
/// of its points have the expectation holding, the rest not. This is the library side of
/// `calibrate`'s prevalence: call it with the recommended pair's tally.
pub fn tally_at_prevalence(
    prevalence: f64,
    tally: &jevjudge_stats::Tally,
    positives: u64,
) -> AtPrevalence {
    let negatives = tally.total.saturating_sub(positives);
    let f = |x: u64| x as f64;
    precisions(
        prevalence,
        f(positives),
        f(negatives),
        (
            f(tally.correct_passes),
            f(tally.passes - tally.correct_passes),
        ),
        (f(tally.correct_fails), f(tally.fails - tally.correct_fails)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_half_positive_is_far_from_a_production_rate_of_thirteen_percent() {
        assert!(far_warning(0.5, 0.134).is_some());
        assert!(far_warning(0.15, 0.134).is_none());
        assert!(far_warning(1.0, 0.134).is_some());
        assert_eq!(check(0.0), Err(PrevalenceError(0.0)));
        assert_eq!(check(0.134), Ok(0.134));
    }

    // 58 of 75 good drafts PASS and 0 of 75 bad ones; 65 of 75 bad drafts FAIL and 2 of 75
    // good ones: the fixture's `prevalence 0.134 58 75 0 75` and `prevalence 0.866 65 75 2 75`.
    #[test]
    fn precisions_at_a_prevalence_use_each_class_rate() {
        let at = precisions(0.134, 75.0, 75.0, (58.0, 0.0), (65.0, 2.0));
        assert_eq!(at.pass_precision, Some(1.0));
        assert!((at.fail_precision.unwrap() - 0.995_261_501_467_520_1).abs() < 1e-12);
        assert!((at.pass_precision_ci.unwrap()[0] - 0.530_531_073_415_123_7).abs() < 1e-12);
        assert_eq!(at.cases_expected_pass_share, Some(0.5));
        assert!(at.warning.is_some());
    }

    // The calibrate side: a pair that passes 74 points (71 with the expectation holding) and
    // fails 76 (72 without), 75 of each: PASS precision at 13.4 % is Bayes' 0.7855.
    #[test]
    fn a_calibration_tally_gives_the_same_precisions_as_a_summary() {
        let tally = jevjudge_stats::Tally {
            total: 150,
            passes: 74,
            correct_passes: 71,
            fails: 76,
            correct_fails: 72,
        };
        let at = tally_at_prevalence(0.134, &tally, 75);
        let (tpr, fpr) = (71.0 / 75.0, 3.0 / 75.0);
        let expected = 0.134 * tpr / (0.134 * tpr + 0.866 * fpr);
        assert!((at.pass_precision.unwrap() - expected).abs() < 1e-12);
        assert_eq!(at.cases_expected_pass_share, Some(0.5));
    }
}
