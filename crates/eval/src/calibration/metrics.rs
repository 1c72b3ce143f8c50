//! The calibration metrics of one criterion: p against whether the condition holds.

use jevjudge_stats::{
    Bin, Point, auroc, auroc_ci, bootstrap_ci, brier, brier_ci, ece, ece_ci, ece_expected,
    log_loss, mce, reliability_equal_mass, reliability_equal_width,
};

/// Bootstrap resamples of the Brier and ECE intervals (and of AUROC's with repeats).
pub const INTERVAL_RESAMPLES: u32 = 1000;
/// The standard-normal quantile of DeLong's AUROC interval (95 %).
const Z95: f64 = 1.959_963_984_540_054;
use serde::{Deserialize, Serialize};

/// The calibration metrics of one criterion (p against whether the condition holds).
///
/// The same type is the metrics part of the `calibrate --json` document
/// ([`CriterionDocument`](super::CriterionDocument) flattens it): its JSON fields are the
/// document's, in the document's order, with the equal-width table written as
/// [`ReliabilityBin`](super::ReliabilityBin) rows and the equal-mass table left out (the
/// document does not carry it, so a parsed document has it empty).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CriterionMetrics {
    /// Labelled points.
    pub n: u64,
    /// Points where the condition holds.
    pub positives: u64,
    /// Brier score; `None` without points.
    pub brier: Option<f64>,
    /// Its 95 % percentile bootstrap interval (cases resampled with all their reviews).
    pub brier_ci: Option<[f64; 2]>,
    /// Log loss (probabilities clamped to [1e-15, 1 − 1e-15]); `None` without points.
    pub log_loss: Option<f64>,
    /// AUROC; `None` unless both classes occur.
    pub auroc: Option<f64>,
    /// Its 95 % interval: DeLong's, or with repeats a cluster bootstrap by case.
    pub auroc_ci: Option<[f64; 2]>,
    /// ECE over the equal-width bins.
    pub ece_equal_width: Option<f64>,
    /// Its 95 % percentile bootstrap interval.
    pub ece_ci: Option<[f64; 2]>,
    /// The equal-width ECE a perfectly calibrated model would show on average at these p
    /// values (labels drawn as Bernoulli(p)).
    pub ece_expected: Option<f64>,
    /// ECE over the equal-mass bins.
    pub ece_equal_mass: Option<f64>,
    /// The equal-mass bins actually used (ties are never split, so it may be fewer than asked).
    pub ece_equal_mass_bins: u64,
    /// MCE over the equal-width bins.
    pub mce: Option<f64>,
    /// The equal-width reliability table (empty bins left out).
    #[serde(with = "super::document::reliability_rows")]
    pub reliability: Vec<Bin>,
    /// The equal-mass reliability table (not in the document).
    #[serde(skip)]
    pub reliability_equal_mass: Vec<Bin>,
}

/// The former name of [`CriterionMetrics`], kept so that callers written before the split
/// (the HTML page) still build; it read like `jevjudge_serve::Metrics`, the service's counters.
pub type Metrics = CriterionMetrics;

/// The metrics of points (p, condition holds) with `bins` bins per table. `cases` gives each
/// point's case (repeats share one): the bootstrap intervals (seeded by `seed`,
/// [`INTERVAL_RESAMPLES`] resamples) then resample cases with all their reviews, and AUROC's
/// interval is bootstrapped too instead of DeLong's, which assumes independent points.
pub fn metrics(points: &[Point], cases: &[usize], bins: usize, seed: u64) -> CriterionMetrics {
    let width = reliability_equal_width(points, bins).unwrap_or_default();
    let mass = reliability_equal_mass(points, bins).unwrap_or_default();
    let pair = |interval: Option<(f64, f64)>| interval.map(|(low, high)| [low, high]);
    let cases = (cases.len() == points.len()).then_some(cases);
    let repeated = cases.is_some_and(|cases| cases.windows(2).any(|w| w[0] == w[1]));
    let auroc_interval = if repeated {
        bootstrap_ci(points, cases, INTERVAL_RESAMPLES, seed, auroc)
    } else {
        auroc_ci(points, Z95)
    };
    CriterionMetrics {
        n: points.len() as u64,
        positives: points.iter().filter(|point| point.label).count() as u64,
        brier: brier(points),
        brier_ci: pair(brier_ci(points, cases, INTERVAL_RESAMPLES, seed)),
        log_loss: log_loss(points),
        auroc: auroc(points),
        auroc_ci: pair(auroc_interval),
        ece_equal_width: ece(&width),
        ece_ci: pair(ece_ci(points, bins, cases, INTERVAL_RESAMPLES, seed)),
        ece_expected: ece_expected(points, bins),
        ece_equal_mass: ece(&mass),
        ece_equal_mass_bins: mass.len() as u64,
        mce: mce(&width),
        reliability: width,
        reliability_equal_mass: mass,
    }
}
