//! [`choose`]: the pair of thresholds that meets the targets and abstains least.

use super::{Tally, Targets, Thresholds, tally};
use crate::{Point, wilson_lower};

/// The thresholds [`choose`] picked and how they decide the points they were fitted on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Choice {
    /// The pair, each written as the shortest decimal that decides every point the same way
    /// as the observed p′ it came from (see [`choose`]).
    pub thresholds: Thresholds,
    /// Their decisions on the points.
    pub tally: Tally,
}

/// Why [`choose`] found no pair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NoChoice {
    /// No points.
    Empty,
    /// A point's `p` is not a number in `[0, 1]`, or a target is invalid
    /// ([`Targets::is_valid`]).
    InvalidInput,
    /// No PASS threshold reaches the PASS precision target; `best_lower` is the highest Wilson
    /// lower bound any reaches.
    PassPrecisionUnreachable {
        /// The highest Wilson lower bound of the PASS precision over every candidate.
        best_lower: f64,
    },
    /// No FAIL threshold reaches the FAIL precision target.
    FailPrecisionUnreachable {
        /// The highest Wilson lower bound of the FAIL precision over every candidate.
        best_lower: f64,
    },
    /// Thresholds reach each precision target, but never with the FAIL threshold below the
    /// PASS threshold.
    NoOrderedPair,
    /// The pairs that reach both precision targets abstain too often; `least` is the smallest
    /// abstention rate among them and `thresholds` the pair that achieves it.
    TooMuchAbstention {
        /// The smallest abstention rate of a pair meeting both precision targets.
        least: f64,
        /// That pair.
        thresholds: Thresholds,
    },
}

impl std::fmt::Display for NoChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoChoice::Empty => f.write_str("no labelled points"),
            NoChoice::InvalidInput => f.write_str("a probability or a target is not in [0, 1]"),
            NoChoice::PassPrecisionUnreachable { best_lower } => write!(
                f,
                "no PASS threshold reaches the PASS precision target (best Wilson lower bound {best_lower:.3})"
            ),
            NoChoice::FailPrecisionUnreachable { best_lower } => write!(
                f,
                "no FAIL threshold reaches the FAIL precision target (best Wilson lower bound {best_lower:.3})"
            ),
            NoChoice::NoOrderedPair => f.write_str(
                "the thresholds that reach the precision targets never leave FAIL below PASS",
            ),
            NoChoice::TooMuchAbstention { least, thresholds } => write!(
                f,
                "the least abstention meeting both precision targets is {least:.3} (fail {}, pass {}), above the target",
                thresholds.fail_at_or_below, thresholds.pass_at_or_above
            ),
        }
    }
}

/// Sorted distinct p′ values with their counts: `(value, points, labelled yes)`.
pub(super) fn distinct(points: &[Point]) -> Vec<(f64, u64, u64)> {
    let mut sorted: Vec<Point> = points
        .iter()
        .map(|point| Point::new(point.p + 0.0, point.label))
        .collect();
    sorted.sort_unstable_by(|a, b| a.p.total_cmp(&b.p));
    let mut values: Vec<(f64, u64, u64)> = Vec::new();
    for point in sorted {
        match values.last_mut() {
            Some((value, count, yes)) if *value == point.p => {
                *count += 1;
                *yes += u64::from(point.label);
            }
            _ => values.push((point.p, 1, u64::from(point.label))),
        }
    }
    values
}

/// Chooses `(fail_at_or_below, pass_at_or_above)` for points whose `p` is p′ and whose `label`
/// says whether the expectation holds.
///
/// The candidates are the distinct observed p′ values: the PASS threshold is one of them and
/// the FAIL threshold a smaller one. A pair is *admissible* when the Wilson lower bound
/// (at `targets.z`) of its PASS precision reaches `min_pass_precision` and that of its FAIL
/// precision reaches `min_fail_precision`; among admissible pairs the one that abstains least
/// wins (ties: the larger of the two smaller margins above the targets, then the lower PASS
/// threshold). If even that pair abstains more than `max_abstain`, there is no choice.
///
/// The chosen values are then written as the shortest decimal within 10⁻⁹ of the observed
/// value that decides every point the same way (so `0.06999999999999995`, a p′ of
/// `1 − 0.93`, becomes `0.07` when no point lies in between): the returned [`Tally`] is
/// exactly what the returned thresholds decide.
///
/// The search is `O(n log n)`: precision depends on one threshold only, so for each PASS
/// candidate the best FAIL candidate is the largest admissible one below it.
///
/// ```
/// use jevjudge_stats::{choose, Point, Targets};
/// // 20 clear yes at 0.9, 20 clear no at 0.1, and 4 muddled points at 0.5.
/// let mut points = vec![Point::new(0.9, true); 20];
/// points.extend(vec![Point::new(0.1, false); 20]);
/// points.extend([Point::new(0.5, true), Point::new(0.5, false), Point::new(0.5, true), Point::new(0.5, false)]);
/// let targets = Targets { min_pass_precision: 0.8, min_fail_precision: 0.8, max_abstain: 0.2, z: 1.96 };
/// let choice = choose(&points, &targets).unwrap();
/// assert_eq!((choice.thresholds.fail_at_or_below, choice.thresholds.pass_at_or_above), (0.1, 0.9));
/// assert_eq!(choice.tally.abstained(), 4);
/// ```
pub fn choose(points: &[Point], targets: &Targets) -> Result<Choice, NoChoice> {
    if !targets.is_valid() || !points.iter().all(Point::is_valid) {
        return Err(NoChoice::InvalidInput);
    }
    if points.is_empty() {
        return Err(NoChoice::Empty);
    }
    let values = distinct(points);
    let k = values.len();
    let n: u64 = values.iter().map(|(_, count, _)| count).sum();
    let z = targets.z;

    // prefix[m] = (points, yes) among values[..m]
    let mut prefix = Vec::with_capacity(k + 1);
    prefix.push((0u64, 0u64));
    for (_, count, yes) in &values {
        let (points, yeses) = prefix[prefix.len() - 1];
        prefix.push((points + count, yeses + yes));
    }
    let (all_points, all_yes) = prefix[k];
    // PASS at values[i]: the points at index ≥ i; right when yes.
    let pass_tally = |i: usize| {
        let (below, below_yes) = prefix[i];
        (all_points - below, all_yes - below_yes)
    };
    // FAIL at values[j]: the points at index ≤ j; right when no.
    let fail_tally = |j: usize| {
        let (upto, upto_yes) = prefix[j + 1];
        (upto, upto - upto_yes)
    };
    let pass_margin = |i: usize| {
        let (passes, right) = pass_tally(i);
        wilson_lower(right, passes, z).map(|lower| lower - targets.min_pass_precision)
    };
    let fail_margin = |j: usize| {
        let (fails, right) = fail_tally(j);
        wilson_lower(right, fails, z).map(|lower| lower - targets.min_fail_precision)
    };
    let pass_ok: Vec<Option<f64>> = (0..k)
        .map(|i| pass_margin(i).filter(|margin| *margin >= 0.0))
        .collect();
    let fail_ok: Vec<Option<f64>> = (0..k)
        .map(|j| fail_margin(j).filter(|margin| *margin >= 0.0))
        .collect();
    if pass_ok.iter().all(Option::is_none) {
        let best = (0..k).filter_map(pass_margin).fold(f64::MIN, f64::max);
        return Err(NoChoice::PassPrecisionUnreachable {
            best_lower: best + targets.min_pass_precision,
        });
    }
    if fail_ok.iter().all(Option::is_none) {
        let best = (0..k).filter_map(fail_margin).fold(f64::MIN, f64::max);
        return Err(NoChoice::FailPrecisionUnreachable {
            best_lower: best + targets.min_fail_precision,
        });
    }

    // best: (decided, smaller margin, i, j)
    let mut best: Option<(u64, f64, usize, usize)> = None;
    let mut largest_fail_below: Option<usize> = None;
    for i in 0..k {
        if i > 0 && fail_ok[i - 1].is_some() {
            largest_fail_below = Some(i - 1);
        }
        let (Some(pass), Some(j)) = (pass_ok[i], largest_fail_below) else {
            continue;
        };
        let fail = fail_ok[j].unwrap_or(0.0);
        let decided = pass_tally(i).0 + fail_tally(j).0;
        let margin = pass.min(fail);
        let better = match best {
            None => true,
            Some((best_decided, best_margin, _, _)) => {
                decided > best_decided || (decided == best_decided && margin > best_margin)
            }
        };
        if better {
            best = Some((decided, margin, i, j));
        }
    }
    let Some((decided, _, i, j)) = best else {
        return Err(NoChoice::NoOrderedPair);
    };

    let fail_value = values[j].0;
    let pass_value = values[i].0;
    // FAIL threshold: any x in [values[j], values[j + 1]) decides the same (j + 1 ≤ i < k).
    let fail = shortest_within(fail_value, fail_value, values[j + 1].0, false, true);
    // PASS threshold: any x in (max(values[i − 1], fail), values[i]] decides the same.
    let lower = if i > 0 {
        values[i - 1].0.max(fail)
    } else {
        fail
    };
    let pass = shortest_within(pass_value, lower, pass_value, true, false);
    let thresholds = Thresholds::new(fail, pass).unwrap_or(Thresholds {
        fail_at_or_below: fail_value,
        pass_at_or_above: pass_value,
    });
    let counts = tally(points, thresholds);
    debug_assert_eq!(counts.passes + counts.fails, decided);
    let abstain = (n - decided) as f64 / n as f64;
    if abstain > targets.max_abstain {
        return Err(NoChoice::TooMuchAbstention {
            least: abstain,
            thresholds,
        });
    }
    Ok(Choice {
        thresholds,
        tally: counts,
    })
}

/// The shortest decimal `x` within 10⁻⁹ of `value` with `low < x` (or `≤` when
/// `low_open` is false) and `x < high` (or `≤` when `high_open` is false); `value` itself when
/// none is shorter. `value` must satisfy the bounds.
pub(super) fn shortest_within(
    value: f64,
    low: f64,
    high: f64,
    low_open: bool,
    high_open: bool,
) -> f64 {
    let fits = |x: f64| {
        let above = if low_open { x > low } else { x >= low };
        let below = if high_open { x < high } else { x <= high };
        above && below && (x - value).abs() <= 1e-9 && (0.0..=1.0).contains(&x)
    };
    let at = |x: f64, digits: usize| format!("{x:.digits$}").parse::<f64>().ok();
    for digits in 0..=17usize {
        let step = 10f64.powi(-(digits as i32));
        let Some(nearest) = at(value, digits) else {
            continue;
        };
        let mut candidates = vec![nearest];
        candidates.extend(at(nearest - step, digits));
        candidates.extend(at(nearest + step, digits));
        candidates.retain(|x| fits(*x));
        candidates.sort_by(|a, b| (a - value).abs().total_cmp(&(b - value).abs()));
        if let Some(x) = candidates.first() {
            return *x + 0.0;
        }
    }
    value
}
