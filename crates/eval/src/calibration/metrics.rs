//! The calibration metrics of one criterion: p against whether the condition holds.

use jevjudge_stats::{
    Bin, Point, auroc, brier, ece, log_loss, mce, reliability_equal_mass, reliability_equal_width,
};
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
    /// Log loss (probabilities clamped to [1e-15, 1 − 1e-15]); `None` without points.
    pub log_loss: Option<f64>,
    /// AUROC; `None` unless both classes occur.
    pub auroc: Option<f64>,
    /// ECE over the equal-width bins.
    pub ece_equal_width: Option<f64>,
    /// ECE over the equal-mass bins.
    pub ece_equal_mass: Option<f64>,
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

/// The metrics of points (p, condition holds) with `bins` bins per table.
pub fn metrics(points: &[Point], bins: usize) -> CriterionMetrics {
    let width = reliability_equal_width(points, bins).unwrap_or_default();
    let mass = reliability_equal_mass(points, bins).unwrap_or_default();
    CriterionMetrics {
        n: points.len() as u64,
        positives: points.iter().filter(|point| point.label).count() as u64,
        brier: brier(points),
        log_loss: log_loss(points),
        auroc: auroc(points),
        ece_equal_width: ece(&width),
        ece_equal_mass: ece(&mass),
        mce: mce(&width),
        reliability: width,
        reliability_equal_mass: mass,
    }
}
