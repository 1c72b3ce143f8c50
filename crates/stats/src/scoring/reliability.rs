//! Reliability tables (equal-width and equal-mass bins) and their summaries, [`ece`] and
//! [`mce`].

use super::{Point, canonical};

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
