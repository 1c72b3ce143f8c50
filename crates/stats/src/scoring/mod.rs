//! Calibration metrics of yes-probabilities against yes/no labels.
//!
//! `calibrate` asks two questions of a criterion's yes-probabilities: do they *rank* cases well
//! ([`auroc`]), and do they *mean* what they say — of the cases given 0.8, are about 80 % really
//! yes? That second question is answered by a reliability table ([`reliability_equal_width`],
//! [`reliability_equal_mass`]) summarised as [`ece`] and [`mce`]; [`brier`] and [`log_loss`]
//! score both at once. The input rules every function here shares are on [`Point`].

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

/// One bin of a reliability table.
///
/// Tables never contain empty bins, so `count ≥ 1` and both rates are defined.
#[derive(Debug, Clone, PartialEq)]
pub struct Bin {
    /// The bin's lower edge: the nominal edge `i / bins` for equal-width tables, the smallest
    /// probability in the bin for equal-mass tables.
    pub lower: f64,
    /// The bin's upper edge: the nominal edge `(i + 1) / bins` for equal-width tables, the
    /// largest probability in the bin for equal-mass tables.
    pub upper: f64,
    /// How many points fell in the bin.
    pub count: usize,
    /// The mean yes-probability of the bin's points.
    pub mean_probability: f64,
    /// The fraction of the bin's points whose label is yes.
    pub observed_rate: f64,
}

impl Bin {
    /// The calibration gap `|mean_probability − observed_rate|`.
    #[must_use]
    pub fn gap(&self) -> f64 {
        (self.mean_probability - self.observed_rate).abs()
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

/// A reliability table with `bins` equal-width bins over `[0, 1]`.
///
/// Bin `i` covers `[i / bins, (i + 1) / bins)`, the last one closed at 1; a point goes to bin
/// `min(⌊p · bins⌋, bins − 1)` computed in f64. Empty bins are left out of the table, so it may
/// have fewer than `bins` rows; rows are in increasing order of `p`.
///
/// Returns `None` when `bins` is 0 or the input is empty or invalid (see the
/// [input rules](Point#input-rules)).
///
/// ```
/// use jevjudge_stats::{reliability_equal_width, Point};
/// let points = [Point::new(0.1, false), Point::new(0.3, true), Point::new(0.9, true)];
/// let table = reliability_equal_width(&points, 2).unwrap();
/// assert_eq!(table.len(), 2);
/// assert_eq!((table[0].lower, table[0].upper, table[0].count), (0.0, 0.5, 2));
/// assert_eq!(table[0].observed_rate, 0.5);
/// ```
#[must_use]
pub fn reliability_equal_width(points: &[Point], bins: usize) -> Option<Vec<Bin>> {
    if bins == 0 {
        return None;
    }
    let sorted = canonical(points)?;
    let index = |p: f64| ((p * bins as f64).floor() as usize).min(bins - 1);
    // The points are sorted by p and the bin index never decreases with p, so each bin is one
    // contiguous run: no allocation proportional to `bins`.
    let mut table = Vec::new();
    let mut start = 0;
    while start < sorted.len() {
        let bin = index(sorted[start].p);
        let length = sorted[start..]
            .iter()
            .take_while(|point| index(point.p) == bin)
            .count();
        let members = &sorted[start..start + length];
        table.push(summarise(
            members,
            bin as f64 / bins as f64,
            (bin + 1) as f64 / bins as f64,
        ));
        start += length;
    }
    Some(table)
}

/// A reliability table with up to `bins` equal-mass (quantile) bins.
///
/// The points are sorted by `p` and cut into `bins` consecutive groups: the `j`-th cut falls
/// after `⌊j · n / bins⌋` points, so groups differ in size by at most one. **Ties are never
/// split**: a cut that would separate points with the same `p` moves forward to the end of
/// their run. Splitting ties would make the table depend on the row order of tied points with
/// different labels; keeping them together keeps every metric a function of the points alone,
/// at the price of unequal (or fewer) bins when many points share a probability — all points
/// equal give one bin. With fewer points than `bins`, each distinct `p` gets its own bin. Each
/// bin's `lower` and `upper` are the smallest and largest `p` in it.
///
/// Returns `None` when `bins` is 0 or the input is empty or invalid (see the
/// [input rules](Point#input-rules)).
///
/// ```
/// use jevjudge_stats::{reliability_equal_mass, Point};
/// let points = [
///     Point::new(0.2, false),
///     Point::new(0.2, true),
///     Point::new(0.2, false),
///     Point::new(0.8, true),
/// ];
/// // The cut after 2 points would split the three 0.2s, so it moves after them.
/// let table = reliability_equal_mass(&points, 2).unwrap();
/// assert_eq!(table.iter().map(|bin| bin.count).collect::<Vec<_>>(), [3, 1]);
/// ```
#[must_use]
pub fn reliability_equal_mass(points: &[Point], bins: usize) -> Option<Vec<Bin>> {
    if bins == 0 {
        return None;
    }
    let sorted = canonical(points)?;
    let n = sorted.len();
    let groups = bins.min(n);
    let mut table = Vec::new();
    let mut start = 0;
    for j in 1..=groups {
        // ⌊j·n / groups⌋ in u128, so the product cannot overflow; it is at most n.
        let nominal = (j as u128 * n as u128 / groups as u128) as usize;
        let mut cut = nominal.max(start);
        while cut > 0 && cut < n && sorted[cut].p == sorted[cut - 1].p {
            cut += 1;
        }
        if cut > start {
            let members = &sorted[start..cut];
            table.push(summarise(
                members,
                members[0].p,
                members[members.len() - 1].p,
            ));
            start = cut;
        }
    }
    Some(table)
}

/// The expected calibration error: the count-weighted mean of the bins' gaps
/// `|mean_probability − observed_rate|`, in `[0, 1]`.
///
/// Bins with `count` 0 are ignored. Returns `None` when no bin has points or a gap is not a
/// number. The result is capped at [`mce`] of the same bins, which it can only exceed by
/// floating-point rounding.
///
/// ```
/// use jevjudge_stats::{ece, mce, reliability_equal_width, Point};
/// let points = [
///     Point::new(0.1, false),
///     Point::new(0.2, true),
///     Point::new(0.3, false),
///     Point::new(0.6, true),
///     Point::new(0.9, true),
/// ];
/// let table = reliability_equal_width(&points, 2).unwrap();
/// // gaps |0.2 − 1/3| over 3 points and |0.75 − 1| over 2: (0.4 + 0.5) / 5
/// assert!((ece(&table).unwrap() - 0.18).abs() < 1e-12);
/// assert!((mce(&table).unwrap() - 0.25).abs() < 1e-12);
/// ```
#[must_use]
pub fn ece(bins: &[Bin]) -> Option<f64> {
    let worst = mce(bins)?;
    let mut weighted = 0.0;
    let mut total = 0.0;
    for bin in bins.iter().filter(|bin| bin.count > 0) {
        weighted += bin.count as f64 * bin.gap();
        total += bin.count as f64;
    }
    Some((weighted / total).min(worst))
}

/// The maximum calibration error: the largest gap `|mean_probability − observed_rate|` over the
/// bins with points, in `[0, 1]`.
///
/// Returns `None` when no bin has points or a gap is not a number.
///
/// ```
/// use jevjudge_stats::{mce, Bin};
/// let bin = Bin { lower: 0.8, upper: 0.9, count: 10, mean_probability: 0.85, observed_rate: 0.6 };
/// assert!((mce(&[bin]).unwrap() - 0.25).abs() < 1e-12);
/// ```
#[must_use]
pub fn mce(bins: &[Bin]) -> Option<f64> {
    let mut worst: Option<f64> = None;
    for bin in bins.iter().filter(|bin| bin.count > 0) {
        let gap = bin.gap();
        if gap.is_nan() {
            return None;
        }
        worst = Some(worst.map_or(gap, |worst| worst.max(gap)));
    }
    worst
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

/// One table row for a non-empty run of sorted points.
fn summarise(members: &[Point], lower: f64, upper: f64) -> Bin {
    let count = members.len();
    let sum: f64 = members.iter().map(|point| point.p).sum();
    let positives = members.iter().filter(|point| point.label).count();
    let smallest = members[0].p;
    let largest = members[count - 1].p;
    Bin {
        lower,
        upper,
        count,
        // A mean can only leave [smallest, largest] by rounding.
        mean_probability: (sum / count as f64).clamp(smallest, largest),
        observed_rate: positives as f64 / count as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn close(actual: f64, expected: f64) -> bool {
        (actual - expected).abs() < 1e-12
    }

    fn sample() -> Vec<Point> {
        vec![
            Point::new(0.1, false),
            Point::new(0.2, true),
            Point::new(0.3, false),
            Point::new(0.6, true),
            Point::new(0.9, true),
        ]
    }

    // (0.01 + 0.04) / 2 = 0.025
    #[test]
    fn brier_two_points() {
        let points = [Point::new(0.9, true), Point::new(0.2, false)];
        assert!(close(brier(&points).unwrap(), 0.025));
    }

    // (0.01 + 0.64 + 0.09 + 0.16 + 0.01) / 5 = 0.91 / 5 = 0.182
    #[test]
    fn brier_sample() {
        assert!(close(brier(&sample()).unwrap(), 0.182));
    }

    #[test]
    fn brier_extremes() {
        assert_eq!(
            brier(&[Point::new(1.0, true), Point::new(0.0, false)]),
            Some(0.0)
        );
        assert_eq!(
            brier(&[Point::new(0.0, true), Point::new(1.0, false)]),
            Some(1.0)
        );
    }

    // (−ln 0.9 − ln 0.8) / 2 = (0.105360516 + 0.223143551) / 2 = 0.164252033
    #[test]
    fn log_loss_two_points() {
        let points = [Point::new(0.9, true), Point::new(0.2, false)];
        assert!((log_loss(&points).unwrap() - 0.164_252_033).abs() < 1e-9);
    }

    // A certain mistake costs −ln(1e-15) = 15 · ln 10 = 34.538776394910684, not infinity.
    #[test]
    fn log_loss_clamps_certain_mistakes() {
        let worst = 15.0 * std::f64::consts::LN_10;
        assert!((log_loss(&[Point::new(0.0, true)]).unwrap() - worst).abs() < 1e-12);
        assert!((log_loss(&[Point::new(1.0, false)]).unwrap() - worst).abs() < 1e-12);
        // A certain success costs −ln(1 − 1e-15) ≈ 1e-15.
        assert!(log_loss(&[Point::new(1.0, true)]).unwrap() < 2e-15);
        assert!(log_loss(&[Point::new(0.0, false)]).unwrap() < 2e-15);
    }

    #[test]
    fn auroc_perfect_and_inverted() {
        assert_eq!(
            auroc(&[Point::new(0.9, true), Point::new(0.2, false)]),
            Some(1.0)
        );
        assert_eq!(
            auroc(&[Point::new(0.1, true), Point::new(0.2, false)]),
            Some(0.0)
        );
    }

    // All tied: every pair counts ½.
    #[test]
    fn auroc_all_ties_is_one_half() {
        let points = [
            Point::new(0.5, true),
            Point::new(0.5, false),
            Point::new(0.5, false),
        ];
        assert_eq!(auroc(&points), Some(0.5));
    }

    // Sample: yes at 0.2, 0.6, 0.9; no at 0.1, 0.3. Pairs won: 0.2 beats 0.1 (1); 0.6 and 0.9
    // beat both (4): 5 of 6.
    #[test]
    fn auroc_sample() {
        assert!(close(auroc(&sample()).unwrap(), 5.0 / 6.0));
    }

    #[test]
    fn auroc_needs_both_classes() {
        assert_eq!(auroc(&[Point::new(0.3, true), Point::new(0.9, true)]), None);
        assert_eq!(auroc(&[Point::new(0.3, false)]), None);
    }

    // Negative zero ties with zero.
    #[test]
    fn auroc_negative_zero_ties_with_zero() {
        assert_eq!(
            auroc(&[Point::new(-0.0, true), Point::new(0.0, false)]),
            Some(0.5)
        );
        assert_eq!(
            auroc(&[Point::new(0.0, true), Point::new(-0.0, false)]),
            Some(0.5)
        );
    }

    #[test]
    fn invalid_or_empty_input_gives_none() {
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.1, 1.1] {
            let points = [Point::new(0.5, true), Point::new(bad, false)];
            assert!(!points[1].is_valid());
            assert_eq!(brier(&points), None);
            assert_eq!(log_loss(&points), None);
            assert_eq!(auroc(&points), None);
            assert_eq!(reliability_equal_width(&points, 10), None);
            assert_eq!(reliability_equal_mass(&points, 10), None);
        }
        assert_eq!(brier(&[]), None);
        assert_eq!(log_loss(&[]), None);
        assert_eq!(auroc(&[]), None);
        assert_eq!(reliability_equal_width(&[], 10), None);
        assert_eq!(reliability_equal_mass(&[], 10), None);
        assert_eq!(reliability_equal_width(&sample(), 0), None);
        assert_eq!(reliability_equal_mass(&sample(), 0), None);
        assert_eq!(ece(&[]), None);
        assert_eq!(mce(&[]), None);
    }

    // Bin [0, 0.5): 0.1, 0.2, 0.3 → mean 0.2, observed 1/3.
    // Bin [0.5, 1]: 0.6, 0.9 → mean 0.75, observed 1.
    // ECE = (3 · 2/15 + 2 · 0.25) / 5 = (0.4 + 0.5) / 5 = 0.18; MCE = 0.25.
    #[test]
    fn equal_width_sample() {
        let table = reliability_equal_width(&sample(), 2).unwrap();
        assert_eq!(table.len(), 2);
        assert_eq!(
            (table[0].lower, table[0].upper, table[0].count),
            (0.0, 0.5, 3)
        );
        assert!(close(table[0].mean_probability, 0.2));
        assert!(close(table[0].observed_rate, 1.0 / 3.0));
        assert_eq!(
            (table[1].lower, table[1].upper, table[1].count),
            (0.5, 1.0, 2)
        );
        assert!(close(table[1].mean_probability, 0.75));
        assert_eq!(table[1].observed_rate, 1.0);
        assert!(close(ece(&table).unwrap(), 0.18));
        assert!(close(mce(&table).unwrap(), 0.25));
    }

    // Ten bins: 0.1 → bin 1, 0.2 → 2, 0.3 → 3 (0.3 · 10 = 3 exactly), 0.6 → 6, 0.9 → 9, and
    // p = 1 joins the last bin.
    #[test]
    fn equal_width_leaves_out_empty_bins_and_closes_the_last() {
        let mut points = sample();
        points.push(Point::new(1.0, true));
        let table = reliability_equal_width(&points, 10).unwrap();
        let lowers: Vec<f64> = table.iter().map(|bin| bin.lower).collect();
        assert_eq!(lowers, [0.1, 0.2, 0.3, 0.6, 0.9]);
        assert_eq!(table[4].count, 2);
        assert_eq!(table[4].upper, 1.0);
        // One point per bin elsewhere: each gap is |p − label|.
        assert!(close(table[0].mean_probability, 0.1));
        assert_eq!(table[0].observed_rate, 0.0);
    }

    #[test]
    fn equal_width_with_huge_bin_count_does_not_allocate_per_bin() {
        let table = reliability_equal_width(&sample(), usize::MAX).unwrap();
        assert_eq!(table.len(), 5);
        assert_eq!(table.iter().map(|bin| bin.count).sum::<usize>(), 5);
    }

    // n = 5, 2 bins: first cut after ⌊5/2⌋ = 2 points.
    // [0.1, 0.2]: mean 0.15, observed 0.5, gap 0.35; [0.3, 0.6, 0.9]: mean 0.6, observed 2/3.
    // ECE = (2 · 0.35 + 3 · 1/15) / 5 = (0.7 + 0.2) / 5 = 0.18; MCE = 0.35.
    #[test]
    fn equal_mass_sample() {
        let table = reliability_equal_mass(&sample(), 2).unwrap();
        assert_eq!(table.len(), 2);
        assert_eq!(
            (table[0].lower, table[0].upper, table[0].count),
            (0.1, 0.2, 2)
        );
        assert!(close(table[0].mean_probability, 0.15));
        assert_eq!(table[0].observed_rate, 0.5);
        assert_eq!(
            (table[1].lower, table[1].upper, table[1].count),
            (0.3, 0.9, 3)
        );
        assert!(close(table[1].mean_probability, 0.6));
        assert!(close(table[1].observed_rate, 2.0 / 3.0));
        assert!(close(ece(&table).unwrap(), 0.18));
        assert!(close(mce(&table).unwrap(), 0.35));
    }

    #[test]
    fn equal_mass_sizes_differ_by_at_most_one() {
        let points: Vec<Point> = (0..10)
            .map(|i| Point::new(f64::from(i) / 10.0, i % 2 == 0))
            .collect();
        let sizes: Vec<usize> = reliability_equal_mass(&points, 3)
            .unwrap()
            .iter()
            .map(|bin| bin.count)
            .collect();
        // cuts after ⌊10/3⌋ = 3 and ⌊20/3⌋ = 6
        assert_eq!(sizes, [3, 3, 4]);
    }

    #[test]
    fn equal_mass_never_splits_ties() {
        let points = [
            Point::new(0.2, true),
            Point::new(0.2, false),
            Point::new(0.2, true),
            Point::new(0.8, false),
        ];
        let table = reliability_equal_mass(&points, 2).unwrap();
        assert_eq!(table.len(), 2);
        assert_eq!(
            (table[0].lower, table[0].upper, table[0].count),
            (0.2, 0.2, 3)
        );
        assert!(close(table[0].observed_rate, 2.0 / 3.0));
        assert_eq!(table[1].count, 1);

        let all_tied = [Point::new(0.4, true), Point::new(0.4, false)];
        let table = reliability_equal_mass(&all_tied, 10).unwrap();
        assert_eq!(table.len(), 1);
        assert_eq!(table[0].count, 2);
        assert_eq!(table[0].observed_rate, 0.5);
    }

    #[test]
    fn equal_mass_with_more_bins_than_points() {
        let table = reliability_equal_mass(&sample(), usize::MAX).unwrap();
        assert_eq!(table.len(), 5);
        assert!(
            table
                .iter()
                .all(|bin| bin.count == 1 && bin.lower == bin.upper)
        );
    }

    #[test]
    fn ece_and_mce_ignore_empty_bins_and_reject_nan() {
        let empty = Bin {
            lower: 0.0,
            upper: 0.1,
            count: 0,
            mean_probability: f64::NAN,
            observed_rate: f64::NAN,
        };
        let full = Bin {
            lower: 0.1,
            upper: 0.2,
            count: 4,
            mean_probability: 0.15,
            observed_rate: 0.25,
        };
        assert!(close(ece(&[empty.clone(), full.clone()]).unwrap(), 0.1));
        assert!(close(mce(&[empty.clone(), full.clone()]).unwrap(), 0.1));
        assert_eq!(ece(std::slice::from_ref(&empty)), None);
        let broken = Bin { count: 1, ..empty };
        assert_eq!(ece(&[broken.clone(), full.clone()]), None);
        assert_eq!(mce(&[broken, full]), None);
    }

    /// Probabilities on a grid (many ties, exact 0 and 1) or anywhere in [0, 1].
    fn probability() -> impl Strategy<Value = f64> {
        prop_oneof![(0u32..=20).prop_map(|i| f64::from(i) / 20.0), 0.0f64..=1.0,]
    }

    fn points(max: usize) -> impl Strategy<Value = Vec<Point>> {
        prop::collection::vec(
            (probability(), any::<bool>()).prop_map(|(p, label)| Point::new(p, label)),
            1..max,
        )
    }

    /// Every metric, for comparing two inputs bit for bit.
    fn all_metrics(points: &[Point], bins: usize) -> impl PartialEq + std::fmt::Debug {
        let width = reliability_equal_width(points, bins);
        let mass = reliability_equal_mass(points, bins);
        (
            brier(points).map(f64::to_bits),
            log_loss(points).map(f64::to_bits),
            auroc(points).map(f64::to_bits),
            width.as_deref().and_then(ece).map(f64::to_bits),
            mass.as_deref().and_then(ece).map(f64::to_bits),
            width,
            mass,
        )
    }

    proptest! {
        #[test]
        fn metrics_are_invariant_to_row_order(
            (original, shuffled) in points(60).prop_flat_map(|points| {
                (Just(points.clone()), Just(points).prop_shuffle())
            }),
            bins in 1usize..15,
        ) {
            prop_assert_eq!(all_metrics(&original, bins), all_metrics(&shuffled, bins));
        }

        #[test]
        fn brier_and_log_loss_are_bounded(points in points(60)) {
            let score = brier(&points).unwrap();
            prop_assert!((0.0..=1.0).contains(&score));
            let loss = log_loss(&points).unwrap();
            prop_assert!((0.0..=15.0 * std::f64::consts::LN_10 + 1e-9).contains(&loss));
        }

        #[test]
        fn ece_and_mce_are_bounded_and_ordered(points in points(80), bins in 1usize..25) {
            for table in [
                reliability_equal_width(&points, bins).unwrap(),
                reliability_equal_mass(&points, bins).unwrap(),
            ] {
                prop_assert!(!table.is_empty() && table.len() <= bins);
                prop_assert_eq!(table.iter().map(|bin| bin.count).sum::<usize>(), points.len());
                let expected = ece(&table).unwrap();
                let maximum = mce(&table).unwrap();
                prop_assert!((0.0..=1.0).contains(&expected));
                prop_assert!((0.0..=1.0).contains(&maximum));
                prop_assert!(expected <= maximum);
                for bin in &table {
                    prop_assert!(bin.count > 0);
                    prop_assert!((0.0..=1.0).contains(&bin.mean_probability));
                    prop_assert!((0.0..=1.0).contains(&bin.observed_rate));
                }
                // Bins are ordered and do not overlap.
                for pair in table.windows(2) {
                    prop_assert!(pair[0].upper <= pair[1].lower);
                }
            }
        }

        #[test]
        fn equal_mass_bins_have_disjoint_probabilities(points in points(80), bins in 1usize..25) {
            let table = reliability_equal_mass(&points, bins).unwrap();
            for pair in table.windows(2) {
                prop_assert!(pair[0].upper < pair[1].lower, "a tie was split: {:?}", pair);
            }
        }

        #[test]
        fn auroc_is_bounded_and_flips_with_the_probabilities(points in points(60)) {
            // For arbitrary floats 1 − p can merge distinct probabilities into a tie (1 − 1e-17
            // = 1 − 0), which changes the area; on a grid of twentieths it cannot.
            let grid: Vec<Point> = points
                .iter()
                .map(|point| Point::new((point.p * 20.0).round() / 20.0, point.label))
                .collect();
            let flipped: Vec<Point> = grid
                .iter()
                .map(|point| Point::new(1.0 - point.p, point.label))
                .collect();
            match (auroc(&grid), auroc(&flipped)) {
                (Some(area), Some(flipped_area)) => {
                    prop_assert!((0.0..=1.0).contains(&area));
                    prop_assert!((area - (1.0 - flipped_area)).abs() < 1e-12);
                }
                (None, None) => {
                    prop_assert!(grid.iter().all(|point| point.label == grid[0].label));
                }
                other => prop_assert!(false, "one side undefined: {:?}", other),
            }
        }

        #[test]
        fn auroc_matches_the_pairwise_definition(points in points(40)) {
            let mut wins = 0.0;
            let mut pairs = 0.0;
            for yes in points.iter().filter(|point| point.label) {
                for no in points.iter().filter(|point| !point.label) {
                    pairs += 1.0;
                    wins += if yes.p > no.p { 1.0 } else if yes.p == no.p { 0.5 } else { 0.0 };
                }
            }
            match auroc(&points) {
                Some(area) => prop_assert!((area - wins / pairs).abs() < 1e-12),
                None => prop_assert_eq!(pairs, 0.0),
            }
        }

        #[test]
        fn ece_is_the_weighted_mean_of_gaps(points in points(60), bins in 1usize..12) {
            let table = reliability_equal_width(&points, bins).unwrap();
            let n = points.len() as f64;
            let direct: f64 = table.iter().map(|bin| bin.count as f64 / n * bin.gap()).sum();
            prop_assert!((ece(&table).unwrap() - direct).abs() < 1e-12);
        }
    }
}
