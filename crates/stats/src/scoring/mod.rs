//! Calibration metrics of yes-probabilities against yes/no labels.
//!
//! `calibrate` asks two questions of a criterion's yes-probabilities: do they *rank* cases well
//! ([`auroc`]), and do they *mean* what they say — of the cases given 0.8, are about 80 % really
//! yes? That second question is answered by a reliability table ([`reliability_equal_width`],
//! [`reliability_equal_mass`]) summarised as [`ece`] and [`mce`]; [`brier`] and [`log_loss`]
//! score both at once. The input rules every function here shares are on [`Point`].

mod intervals;
mod reliability;
#[cfg(test)]
mod tests;

pub use intervals::{
    auroc_ci, auroc_delong, bootstrap_ci, brier_ci, ece_ci, ece_expected, equal_mass_bins_used,
};
pub use reliability::{Bin, ece, mce, reliability_equal_mass, reliability_equal_width};

/// One judged case: the yes-probability the model gave and whether the condition really holds.
///
/// # Input rules
///
/// Shared by every calibration function ([`brier`], [`log_loss`], [`auroc`],
/// [`reliability_equal_width`], [`reliability_equal_mass`]):
///
/// - A [`Point`] is valid when its `p` is a number in `[0, 1]` ([`Point::is_valid`]). If any
///   point is invalid (NaN, infinite, negative or above 1) the function returns `None` rather
///   than silently dropping rows, so a count reported next to a metric is always the count it
///   was computed on. Filter with [`Point::is_valid`] first if dropping is what you want.
/// - An empty input gives `None`.
/// - Results depend only on the multiset of points, never on their order: the points are put in
///   a canonical order (by `p`, then label) before any floating-point sum, so even the last bit
///   is the same for every permutation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// The yes-probability, in `[0, 1]`.
    pub p: f64,
    /// Whether the condition really holds (the criterion's label).
    pub label: bool,
}

impl Point {
    /// A point with yes-probability `p` and label `label`.
    #[must_use]
    pub const fn new(p: f64, label: bool) -> Self {
        Self { p, label }
    }

    /// Whether `p` is a number in `[0, 1]` (so not NaN and not infinite).
    #[must_use]
    pub fn is_valid(&self) -> bool {
        (0.0..=1.0).contains(&self.p)
    }

    /// The label as a number: 1.0 for yes, 0.0 for no.
    fn outcome(&self) -> f64 {
        if self.label { 1.0 } else { 0.0 }
    }
}

/// The smallest and largest probability [`log_loss`] uses: probabilities are clamped to
/// `[LOG_LOSS_EPSILON, 1 − LOG_LOSS_EPSILON]` (the same clamp as scikit-learn's historical
/// default), so one confident mistake costs at most `−ln(1e-15) ≈ 34.54` instead of infinity.
pub const LOG_LOSS_EPSILON: f64 = 1e-15;

/// The Brier score: the mean of `(p − label)²`, in `[0, 1]`; lower is better.
///
/// Returns `None` for an empty or invalid input (see the [input rules](Point#input-rules)).
///
/// ```
/// use jevjudge_stats::{brier, Point};
/// let points = [Point::new(0.9, true), Point::new(0.2, false)];
/// // ((0.9 − 1)² + (0.2 − 0)²) / 2 = (0.01 + 0.04) / 2
/// assert!((brier(&points).unwrap() - 0.025).abs() < 1e-15);
/// ```
#[must_use]
pub fn brier(points: &[Point]) -> Option<f64> {
    let sorted = canonical(points)?;
    let sum: f64 = sorted
        .iter()
        .map(|point| (point.p - point.outcome()).powi(2))
        .sum();
    Some(sum / sorted.len() as f64)
}

/// The log loss (cross-entropy): the mean of `−ln q`, where `q` is the probability given to what
/// really happened (`p` for yes points, `1 − p` for no points) **clamped to
/// `[1e-15, 1 − 1e-15]`** ([`LOG_LOSS_EPSILON`]; the same as clamping `p`). So the result is
/// finite, in `[0, −ln(1e-15) ≈ 34.54]`; lower is better.
///
/// Returns `None` for an empty or invalid input (see the [input rules](Point#input-rules)).
///
/// ```
/// use jevjudge_stats::{log_loss, Point};
/// let points = [Point::new(0.9, true), Point::new(0.2, false)];
/// // (−ln 0.9 − ln 0.8) / 2
/// let expected = (-(0.9f64.ln()) - 0.8f64.ln()) / 2.0;
/// assert!((log_loss(&points).unwrap() - expected).abs() < 1e-15);
/// ```
#[must_use]
pub fn log_loss(points: &[Point]) -> Option<f64> {
    let sorted = canonical(points)?;
    let sum: f64 = sorted
        .iter()
        .map(|point| {
            // The probability given to what really happened; clamping it to
            // [ε, 1 − ε] is clamping p, but keeps the worst case exactly −ln ε for both labels
            // (1 − p is exact for p ≥ ½, where the clamp matters).
            let observed = if point.label { point.p } else { 1.0 - point.p };
            -observed
                .clamp(LOG_LOSS_EPSILON, 1.0 - LOG_LOSS_EPSILON)
                .ln()
        })
        .sum();
    Some(sum / sorted.len() as f64)
}

/// The area under the ROC curve: the probability that a random yes point gets a higher `p`
/// than a random no point, ties counting ½ (the Mann–Whitney U statistic over `n_yes · n_no`).
///
/// The pair count is exact integer arithmetic; only the final division rounds. Returns `None`
/// when either class is absent (the area is undefined) or the input is invalid (see the
/// [input rules](Point#input-rules)).
///
/// ```
/// use jevjudge_stats::{auroc, Point};
/// // yes at 0.5 and 0.7, no at 0.5 and 0.3: pairs ½ + 1 + 1 + 1 out of 4
/// let points = [
///     Point::new(0.5, true),
///     Point::new(0.7, true),
///     Point::new(0.5, false),
///     Point::new(0.3, false),
/// ];
/// assert_eq!(auroc(&points), Some(0.875));
/// ```
#[must_use]
pub fn auroc(points: &[Point]) -> Option<f64> {
    let sorted = canonical(points)?;
    let positives = sorted.iter().filter(|point| point.label).count() as u128;
    let negatives = sorted.len() as u128 - positives;
    if positives == 0 || negatives == 0 {
        return None;
    }
    // Twice U: each yes point scores 2 per no point below it and 1 per no point tied with it.
    let mut twice_u: u128 = 0;
    let mut negatives_below: u128 = 0;
    for group in tie_groups(&sorted) {
        let group_negatives = group.iter().filter(|point| !point.label).count() as u128;
        let group_positives = group.len() as u128 - group_negatives;
        twice_u += group_positives * (2 * negatives_below + group_negatives);
        negatives_below += group_negatives;
    }
    Some(twice_u as f64 / (2 * positives * negatives) as f64)
}

/// The points in canonical order (by `p`, then no before yes), or `None` when empty or invalid.
/// `-0.0` becomes `0.0`, so no table edge ever reads `-0`.
fn canonical(points: &[Point]) -> Option<Vec<Point>> {
    if points.is_empty() || !points.iter().all(Point::is_valid) {
        return None;
    }
    let mut sorted: Vec<Point> = points
        .iter()
        .map(|point| Point::new(point.p + 0.0, point.label))
        .collect();
    sorted.sort_unstable_by(|a, b| a.p.total_cmp(&b.p).then(a.label.cmp(&b.label)));
    Some(sorted)
}

/// Consecutive runs of equal `p` in sorted points (`-0.0` and `0.0` count as equal).
fn tie_groups(sorted: &[Point]) -> impl Iterator<Item = &[Point]> {
    sorted.chunk_by(|a, b| a.p == b.p)
}
