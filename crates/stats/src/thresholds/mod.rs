//! Choosing a criterion's two thresholds from labelled data, and checking that the choice holds
//! on rows it was not fitted on.
//!
//! A criterion decides on p′ (the probability that its expectation holds): PASS when
//! `p′ ≥ pass_at_or_above`, FAIL when `p′ ≤ fail_at_or_below`, otherwise it abstains
//! (INCONCLUSIVE). Here every [`Point`]'s `p` is that p′ and its `label` says whether the
//! expectation really holds, so a PASS is right when the label is yes and a FAIL is right when
//! it is no.
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

use crate::{Point, SplitMix64, resample_indices, wilson_lower};

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
fn distinct(points: &[Point]) -> Vec<(f64, u64, u64)> {
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
fn shortest_within(value: f64, low: f64, high: f64, low_open: bool, high_open: bool) -> f64 {
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
/// score its thresholds on the out-of-bag points with [`Tally::meets_observed`] — observed
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const LOOSE: Targets = Targets {
        min_pass_precision: 0.5,
        min_fail_precision: 0.5,
        max_abstain: 1.0,
        z: 1.96,
    };

    fn repeat(p: f64, label: bool, count: usize) -> Vec<Point> {
        vec![Point::new(p, label); count]
    }

    #[test]
    fn decide_matches_the_judge_boundaries() {
        let pair = Thresholds::new(0.2, 0.8).unwrap();
        assert_eq!(pair.decide(0.8), Decision::Pass);
        assert_eq!(pair.decide(0.2), Decision::Fail);
        assert_eq!(pair.decide(0.5), Decision::Abstain);
        // judge-contract rule 22: 1 − 0.7 = 0.30000000000000004 > 0.3
        let quirk = Thresholds::new(0.3, 0.8).unwrap();
        assert_eq!(quirk.decide(1.0 - 0.7), Decision::Abstain);
    }

    #[test]
    fn thresholds_new_rejects_bad_pairs() {
        for (fail, pass) in [
            (0.5, 0.5),
            (0.6, 0.4),
            (-0.1, 0.5),
            (0.2, 1.1),
            (f64::NAN, 0.5),
        ] {
            assert_eq!(Thresholds::new(fail, pass), None, "{fail} {pass}");
        }
        assert!(Thresholds::new(0.0, 1.0).is_some());
    }

    // 3 passes (2 right), 2 fails (2 right), 1 abstained, by hand.
    #[test]
    fn tally_counts_by_hand() {
        let points = [
            Point::new(0.9, true),
            Point::new(0.95, true),
            Point::new(0.8, false),
            Point::new(0.5, true),
            Point::new(0.2, false),
            Point::new(0.0, false),
            Point::new(f64::NAN, true),
        ];
        let counts = tally(&points, Thresholds::new(0.2, 0.8).unwrap());
        assert_eq!(
            counts,
            Tally {
                total: 6,
                passes: 3,
                correct_passes: 2,
                fails: 2,
                correct_fails: 2
            }
        );
        assert_eq!(counts.pass_precision(), Some(2.0 / 3.0));
        assert_eq!(counts.fail_precision(), Some(1.0));
        assert_eq!(counts.abstain_rate(), Some(1.0 / 6.0));
        // Wilson 2/3 at 1.96: center = (2 + 1.9208) / 6.8416 = 0.573082,
        // half = 1.96 / 6.8416 · √(2·1/3 + 0.9604) = 0.286482 · 1.275565 = 0.365427.
        let lower = counts.pass_lower(1.96).unwrap();
        assert!((lower - 0.207_655).abs() < 1e-5, "{lower}");
    }

    #[test]
    fn meets_observed_is_vacuous_without_decisions_of_a_kind() {
        let targets = Targets {
            min_pass_precision: 0.9,
            min_fail_precision: 0.9,
            max_abstain: 0.5,
            z: 1.96,
        };
        let only_passes = Tally {
            total: 4,
            passes: 4,
            correct_passes: 4,
            ..Tally::default()
        };
        assert!(only_passes.meets_observed(&targets));
        let all_abstain = Tally {
            total: 4,
            ..Tally::default()
        };
        assert!(!all_abstain.meets_observed(&targets));
        assert!(!Tally::default().meets_observed(&targets));
    }

    // Separable data: pass at the smallest yes value, fail at the largest no value.
    #[test]
    fn separable_points_need_no_abstention() {
        let mut points = repeat(0.7, true, 10);
        points.extend(repeat(0.9, true, 10));
        points.extend(repeat(0.3, false, 10));
        points.extend(repeat(0.1, false, 10));
        let choice = choose(&points, &LOOSE).unwrap();
        assert_eq!(choice.thresholds, Thresholds::new(0.3, 0.7).unwrap());
        assert_eq!(choice.tally.abstained(), 0);
    }

    // Hand-checked: yes at 0.9 ×20, no at 0.1 ×20, a muddle of 2 yes + 2 no at 0.5.
    // Passing at 0.5 gives 22/24 (Wilson lower 0.742) < 0.8; passing at 0.9 gives 20/20
    // (lower 20/23.8416 = 0.8389) ≥ 0.8. Symmetrically for FAIL. So 4 abstain.
    #[test]
    fn wilson_lower_bound_keeps_a_muddle_out() {
        let mut points = repeat(0.9, true, 20);
        points.extend(repeat(0.1, false, 20));
        points.extend([
            Point::new(0.5, true),
            Point::new(0.5, false),
            Point::new(0.5, true),
            Point::new(0.5, false),
        ]);
        let targets = Targets {
            min_pass_precision: 0.8,
            min_fail_precision: 0.8,
            max_abstain: 0.2,
            z: 1.96,
        };
        let choice = choose(&points, &targets).unwrap();
        assert_eq!(choice.thresholds, Thresholds::new(0.1, 0.9).unwrap());
        assert_eq!(choice.tally.abstained(), 4);
        // With z = 0 (observed precision), 22/24 = 0.917 ≥ 0.8 and passing at 0.5 is allowed;
        // FAIL then stops below 0.5, and nothing abstains.
        let observed = Targets { z: 0.0, ..targets };
        let choice = choose(&points, &observed).unwrap();
        assert_eq!(choice.thresholds, Thresholds::new(0.1, 0.5).unwrap());
        assert_eq!(choice.tally.abstained(), 0);
        // Too strict about abstention: refused, naming the least achievable.
        let strict = Targets {
            max_abstain: 0.05,
            ..targets
        };
        match choose(&points, &strict) {
            Err(NoChoice::TooMuchAbstention { least, .. }) => {
                assert!((least - 4.0 / 44.0).abs() < 1e-12);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn unreachable_precision_is_refused() {
        // 9 of 10 right at best: Wilson lower of 9/10 is 0.596 < 0.9.
        let mut points = repeat(0.9, true, 9);
        points.push(Point::new(0.9, false));
        points.extend(repeat(0.1, false, 10));
        let targets = Targets {
            min_pass_precision: 0.9,
            min_fail_precision: 0.5,
            max_abstain: 1.0,
            z: 1.96,
        };
        match choose(&points, &targets) {
            Err(NoChoice::PassPrecisionUnreachable { best_lower }) => {
                // the best PASS candidate is 0.9: 9/10
                assert!((best_lower - wilson_lower(9, 10, 1.96).unwrap()).abs() < 1e-12);
            }
            other => panic!("{other:?}"),
        }
        let flipped: Vec<Point> = points
            .iter()
            .map(|point| Point::new(1.0 - point.p, !point.label))
            .collect();
        let targets = Targets {
            min_pass_precision: 0.5,
            min_fail_precision: 0.9,
            ..targets
        };
        assert!(matches!(
            choose(&flipped, &targets),
            Err(NoChoice::FailPrecisionUnreachable { .. })
        ));
    }

    #[test]
    fn inverted_points_have_no_ordered_pair() {
        // Yes below, no above: PASS is only precise at the very bottom, FAIL only at the top.
        let mut points = repeat(0.1, true, 30);
        points.extend(repeat(0.9, false, 30));
        let targets = Targets {
            min_pass_precision: 0.5,
            min_fail_precision: 0.5,
            max_abstain: 1.0,
            z: 0.0,
        };
        // PASS at 0.1 takes everything (30/60 = 0.5 ok), FAIL at 0.9 takes everything too:
        // no FAIL threshold lies below an admissible PASS threshold except none.
        assert_eq!(choose(&points, &targets), Err(NoChoice::NoOrderedPair));
    }

    #[test]
    fn bad_input_is_refused() {
        assert_eq!(choose(&[], &LOOSE), Err(NoChoice::Empty));
        assert_eq!(
            choose(&[Point::new(1.5, true)], &LOOSE),
            Err(NoChoice::InvalidInput)
        );
        let bad = Targets {
            z: f64::NAN,
            ..LOOSE
        };
        assert_eq!(
            choose(&[Point::new(0.5, true)], &bad),
            Err(NoChoice::InvalidInput)
        );
        // One distinct value: no FAIL threshold can lie below a PASS threshold.
        assert!(choose(&repeat(0.5, true, 10), &LOOSE).is_err());
    }

    // p′ = 1 − p values carry binary noise; the written thresholds are the short decimals.
    #[test]
    fn thresholds_are_written_as_short_decimals() {
        let mut points: Vec<Point> = repeat(1.0 - 0.93, false, 15); // 0.06999999999999995
        points.extend(repeat(1.0 - 0.6, false, 3)); // 0.4
        points.extend(repeat(1.0 - 0.6, true, 3));
        points.extend(repeat(1.0 - 0.04, true, 15)); // 0.96
        let choice = choose(&points, &LOOSE).unwrap();
        let Thresholds {
            fail_at_or_below,
            pass_at_or_above,
        } = choice.thresholds;
        assert!(
            fail_at_or_below.to_string().len() <= 4 && pass_at_or_above.to_string().len() <= 4,
            "{fail_at_or_below} {pass_at_or_above}"
        );
        assert_eq!(tally(&points, choice.thresholds), choice.tally);
    }

    #[test]
    fn shortest_within_keeps_decisions() {
        // 0.9299999999999999 (= 1 − 0.07) cannot become 0.93 as a PASS threshold: 0.93 would
        // leave that point undecided (rule 22).
        let value = 1.0 - 0.07;
        let x = shortest_within(value, 0.92, value, true, false);
        assert!(x <= value && x > 0.92 && (x - value).abs() <= 1e-9);
        assert_eq!(shortest_within(0.25, 0.2, 0.3, true, false), 0.25);
        // 0.06999999999999995 as a FAIL threshold below 0.4 becomes 0.07.
        assert_eq!(
            shortest_within(1.0 - 0.93, 1.0 - 0.93, 0.4, false, true),
            0.07
        );
    }

    #[test]
    fn out_of_bag_is_deterministic_and_fails_on_noise() {
        let mut rng = SplitMix64::new(1);
        let noise: Vec<Point> = (0..200)
            .map(|_| Point::new(rng.next_f64(), rng.below(2) == 1))
            .collect();
        let targets = Targets {
            min_pass_precision: 0.9,
            min_fail_precision: 0.9,
            max_abstain: 0.3,
            z: 1.96,
        };
        let first = out_of_bag(&noise, &targets, 40, 3);
        assert_eq!(first, out_of_bag(&noise, &targets, 40, 3));
        assert_eq!(first.resamples, 40);
        assert!(first.rate().unwrap() < 0.2, "{first:?}");
        assert_eq!(out_of_bag(&noise, &targets, 0, 3).rate(), None);
    }

    fn arbitrary_points() -> impl Strategy<Value = Vec<Point>> {
        prop::collection::vec(
            (0u32..=100, any::<bool>(), any::<bool>()).prop_map(|(hundredths, label, flip)| {
                let p = f64::from(hundredths) / 100.0;
                // Half the points as an expected-false criterion computes p′ (binary noise).
                Point::new(if flip { 1.0 - p } else { p }, label)
            }),
            0..120,
        )
    }

    fn informative_points() -> impl Strategy<Value = Vec<Point>> {
        prop::collection::vec(
            (0u32..=100, 0u32..100).prop_map(|(hundredths, draw)| {
                let p = f64::from(hundredths) / 100.0;
                Point::new(p, f64::from(draw) / 100.0 < p)
            }),
            20..200,
        )
    }

    proptest! {
        #[test]
        fn chosen_thresholds_are_valid_and_meet_the_targets_they_were_fit_on(
            points in prop_oneof![arbitrary_points(), informative_points()],
            pass in 0.3f64..0.99,
            fail in 0.3f64..0.99,
            abstain in 0.0f64..1.0,
        ) {
            let targets = Targets { min_pass_precision: pass, min_fail_precision: fail, max_abstain: abstain, z: 1.96 };
            if let Ok(choice) = choose(&points, &targets) {
                let Thresholds { fail_at_or_below, pass_at_or_above } = choice.thresholds;
                prop_assert!(0.0 <= fail_at_or_below && fail_at_or_below < pass_at_or_above && pass_at_or_above <= 1.0);
                let counts = tally(&points, choice.thresholds);
                prop_assert_eq!(counts, choice.tally);
                prop_assert!(counts.pass_lower(1.96).unwrap() >= pass);
                prop_assert!(counts.fail_lower(1.96).unwrap() >= fail);
                prop_assert!(counts.abstain_rate().unwrap() <= abstain);
                prop_assert!(counts.pass_precision().unwrap() >= pass);
                prop_assert!(counts.fail_precision().unwrap() >= fail);
            }
        }

        #[test]
        fn the_choice_abstains_least_among_observed_pairs(points in informative_points()) {
            let targets = Targets { min_pass_precision: 0.7, min_fail_precision: 0.7, max_abstain: 1.0, z: 1.96 };
            if let Ok(choice) = choose(&points, &targets) {
                let values = distinct(&points);
                for (j, (fail, ..)) in values.iter().enumerate() {
                    for (pass, ..) in &values[j + 1..] {
                        let counts = tally(&points, Thresholds::new(*fail, *pass).unwrap());
                        if counts.pass_lower(1.96).is_some_and(|l| l >= 0.7)
                            && counts.fail_lower(1.96).is_some_and(|l| l >= 0.7)
                        {
                            prop_assert!(counts.abstained() >= choice.tally.abstained());
                        }
                    }
                }
            }
        }

        #[test]
        fn the_choice_does_not_depend_on_row_order(points in arbitrary_points(), seed: u64) {
            let mut shuffled = points.clone();
            let mut rng = SplitMix64::new(seed);
            for i in (1..shuffled.len()).rev() {
                shuffled.swap(i, rng.below(i as u64 + 1) as usize);
            }
            prop_assert_eq!(choose(&points, &LOOSE), choose(&shuffled, &LOOSE));
        }
    }
}
