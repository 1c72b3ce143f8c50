//! [`certify`]: the least-abstaining pair of thresholds whose precisions are certified by
//! Learn then Test, with family-wise error at most δ.
//!
//! # The procedure
//!
//! The candidates are the pairs of distinct observed p′ values (FAIL threshold below PASS
//! threshold). PASS precision depends on the PASS threshold only and FAIL precision on the FAIL
//! threshold only, so the grid is tested as two fixed sequences, each at level δ/2 (Bonferroni
//! across the two):
//!
//! - PASS thresholds from the highest p′ down, each with the null "PASS precision < target"
//!   and the p-value `P(X ≥ correct)` for `X ~ Binomial(passes, target)`;
//! - FAIL thresholds from the lowest p′ up, likewise.
//!
//! Each sequence starts at the widest threshold with enough decisions that one wrong decision
//! could still be certified ([`entry_decisions`]; the rule reads counts, never labels), and stops
//! at its first p-value above δ/2. A pair is certified when both of its thresholds are; the
//! certified pair is the one that abstains least (ties: the smaller of the two p-values' maximum,
//! then the lower PASS threshold). With probability at least 1 − δ over the draw of the points,
//! every certified pair — the chosen one included — has PASS and FAIL precisions at least their
//! targets, when the points are exchangeable with the cases the thresholds will decide.
//!
//! # Weights
//!
//! With a weight per point the counts become weighted sums and each tail is taken at the Kish
//! effective sample size `n_eff = (Σw)² / Σw²` with `n_eff · (weighted precision)` successes
//! (through the incomplete beta function, so fractional counts are fine). The guarantee is then
//! approximate. Equal weights give exactly the unweighted test.
//!
//! # Repeats
//!
//! With several reviews per case (`cases` gives each point's case), the reviews of one case are
//! not independent. Each tail is then taken at the number of distinct cases behind the
//! decisions (times the Kish ratio with weights), with that many times the precision as
//! successes: exact when every case's repeats agree, conservative when they are noisy. The
//! guarantee is stated as approximate.

use super::choose::shortest_within;
use super::{Tally, Targets, Thresholds, tally};
use crate::{Point, binomial_upper_tail};

/// The pair [`certify`] picked, what it decides on the points, and the evidence.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Certificate {
    /// The pair, each written as the shortest decimal that decides every point the same way as
    /// the observed p′ it came from.
    pub thresholds: Thresholds,
    /// Their decisions on the points (unweighted counts).
    pub tally: Tally,
    /// The family-wise error bound δ.
    pub delta: f64,
    /// The p-value of "PASS precision < target" at the chosen PASS threshold.
    pub pass_p_value: f64,
    /// The p-value of "FAIL precision < target" at the chosen FAIL threshold.
    pub fail_p_value: f64,
    /// The Kish effective number of PASS decisions (their count without weights).
    pub pass_effective_n: f64,
    /// The Kish effective number of FAIL decisions.
    pub fail_effective_n: f64,
    /// Whether the weights were unequal, so the guarantee is approximate.
    pub approximate: bool,
}

/// Why [`certify`] found no pair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NoCertificate {
    /// No points.
    Empty,
    /// A point's `p` is not in `[0, 1]`, a weight is not positive and finite (or the weights do
    /// not match the points), a target is invalid, or δ is not in `(0, 1)`.
    InvalidInput,
    /// The PASS sequence certified no threshold. `smallest_p_value` is its first p-value (None
    /// when no threshold had enough PASS decisions to be tested).
    PassNotCertified {
        /// The first p-value of the PASS sequence.
        first_p_value: Option<f64>,
        /// The decisions a threshold needs before it is tested.
        entry: u64,
    },
    /// The FAIL sequence certified no threshold.
    FailNotCertified {
        /// The first p-value of the FAIL sequence.
        first_p_value: Option<f64>,
        /// The decisions a threshold needs before it is tested.
        entry: u64,
    },
    /// Thresholds are certified on each side, but never with FAIL below PASS.
    NoOrderedPair,
    /// The least-abstaining certified pair abstains more than the target allows.
    TooMuchAbstention {
        /// Its abstention rate.
        least: f64,
        /// The pair.
        thresholds: Thresholds,
    },
}

impl std::fmt::Display for NoCertificate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let first = |p: &Option<f64>, entry: &u64| match p {
            Some(p) => format!("the widest testable threshold has p-value {p:.3}"),
            None => format!("no threshold makes the {entry} decisions a test needs"),
        };
        match self {
            NoCertificate::Empty => f.write_str("no labelled points"),
            NoCertificate::InvalidInput => {
                f.write_str("a probability, a weight, a target or delta is out of range")
            }
            NoCertificate::PassNotCertified {
                first_p_value,
                entry,
            } => write!(
                f,
                "no PASS threshold is certified ({})",
                first(first_p_value, entry)
            ),
            NoCertificate::FailNotCertified {
                first_p_value,
                entry,
            } => write!(
                f,
                "no FAIL threshold is certified ({})",
                first(first_p_value, entry)
            ),
            NoCertificate::NoOrderedPair => {
                f.write_str("the certified thresholds never leave FAIL below PASS")
            }
            NoCertificate::TooMuchAbstention { least, thresholds } => write!(
                f,
                "the least abstention of a certified pair is {least:.3} (fail {}, pass {}), above the target",
                thresholds.fail_at_or_below, thresholds.pass_at_or_above
            ),
        }
    }
}

/// The fewest (effective) decisions at which one wrong decision can still be certified at
/// `level` against `target`: the least n with `P(X ≥ n − 1) ≤ level`, `X ~ Binomial(n,
/// target)`. 1 for a target of 0; `u64::MAX` when no n up to 10⁶ does (a target of 1).
///
/// ```
/// use jevjudge_stats::entry_decisions;
/// // 0.9⁵⁴ + 54·0.1·0.9⁵³ ≤ 0.025 < 0.9⁵³ + 53·0.1·0.9⁵²
/// assert_eq!(entry_decisions(0.9, 0.025), 54);
/// ```
#[must_use]
pub fn entry_decisions(target: f64, level: f64) -> u64 {
    if target <= 0.0 {
        return 1;
    }
    if target >= 1.0 {
        return u64::MAX;
    }
    (2..=1_000_000u64)
        .find(|&n| binomial_upper_tail((n - 1) as f64, n as f64, target) <= level)
        .unwrap_or(u64::MAX)
}

/// One distinct p′ value: count, yes labels, and the weight sums Σw, Σw², Σw·yes.
#[derive(Debug, Clone)]
struct Value {
    p: f64,
    count: u64,
    yes: u64,
    w: f64,
    w2: f64,
    w_yes: f64,
    /// The points at this value.
    members: Vec<usize>,
}

/// Weighted counts of a side (the decisions of one threshold).
#[derive(Debug, Clone, Copy, Default)]
struct Side {
    count: u64,
    right: u64,
    w: f64,
    w2: f64,
    w_right: f64,
    /// Distinct cases behind the decisions (with `cases`), else 0.
    cases: u64,
}

impl Side {
    fn add(&mut self, value: &Value, right_is_yes: bool) {
        self.count += value.count;
        self.w += value.w;
        self.w2 += value.w2;
        if right_is_yes {
            self.right += value.yes;
            self.w_right += value.w_yes;
        } else {
            self.right += value.count - value.yes;
            self.w_right += value.w - value.w_yes;
        }
    }

    fn effective_n(&self) -> f64 {
        if self.w2 <= 0.0 {
            return 0.0;
        }
        let kish = self.w * self.w / self.w2;
        if self.cases > 0 {
            kish * self.cases as f64 / self.count as f64
        } else {
            kish
        }
    }

    fn p_value(&self, target: f64) -> f64 {
        if target <= 0.0 {
            return 0.0;
        }
        let n = self.effective_n();
        let successes = (n * self.w_right / self.w).min(n);
        binomial_upper_tail(successes, n, target)
    }
}

/// One fixed sequence: the candidates in test order with their counts; returns the p-values of
/// the tested candidates (in order) and how many of them were certified.
fn sequence(sides: &[Side], target: f64, level: f64, entry: u64) -> (Vec<(usize, f64)>, usize) {
    let mut tested = Vec::new();
    let mut certified = 0;
    for (position, side) in sides.iter().enumerate() {
        if tested.is_empty() && side.effective_n() + 1e-9 < entry as f64 {
            continue;
        }
        let p = side.p_value(target);
        tested.push((position, p));
        if p <= level {
            certified += 1;
        } else {
            break;
        }
    }
    (tested, certified)
}

/// Certifies `(fail_at_or_below, pass_at_or_above)` for points whose `p` is p′ and whose
/// `label` says whether the expectation holds, by Learn then Test at family-wise error `delta`
/// (the [module documentation](self) states the procedure). `weights`, when given, holds one
/// positive weight per point; `cases`, when given, each point's case (an index), for repeats. `targets.z` is not used. The abstention target is checked on the
/// points (it is observed, not guaranteed).
///
/// ```
/// use jevjudge_stats::{certify, Point, Targets};
/// let mut points = vec![Point::new(0.9, true); 60];
/// points.extend(vec![Point::new(0.1, false); 60]);
/// points.extend([Point::new(0.5, true), Point::new(0.5, false)]);
/// let targets = Targets { min_pass_precision: 0.8, min_fail_precision: 0.8, max_abstain: 0.2, z: 1.96 };
/// let certificate = certify(&points, None, None, &targets, 0.05).unwrap();
/// // PASS at 0.5 (61 of 62 right) and FAIL at 0.1 are certified: nothing abstains.
/// assert_eq!((certificate.thresholds.fail_at_or_below, certificate.thresholds.pass_at_or_above), (0.1, 0.5));
/// assert_eq!(certificate.tally.abstained(), 0);
/// assert!(certificate.pass_p_value <= 0.025 && certificate.fail_p_value <= 0.025);
/// ```
pub fn certify(
    points: &[Point],
    weights: Option<&[f64]>,
    cases: Option<&[usize]>,
    targets: &Targets,
    delta: f64,
) -> Result<Certificate, NoCertificate> {
    let weights_ok = weights.is_none_or(|weights| {
        weights.len() == points.len() && weights.iter().all(|w| w.is_finite() && *w > 0.0)
    });
    let cases_ok = cases.is_none_or(|cases| cases.len() == points.len());
    if !cases_ok
        || !targets.is_valid()
        || !points.iter().all(Point::is_valid)
        || !weights_ok
        || delta.is_nan()
        || delta <= 0.0
        || delta >= 1.0
    {
        return Err(NoCertificate::InvalidInput);
    }
    if points.is_empty() {
        return Err(NoCertificate::Empty);
    }
    let weight = |index: usize| weights.map_or(1.0, |weights| weights[index]);
    let case_count = cases.map_or(0, |cases| cases.iter().max().map_or(0, |last| last + 1));
    let repeated = cases.is_some_and(|cases| {
        let mut seen = vec![false; case_count];
        cases
            .iter()
            .any(|&case| std::mem::replace(&mut seen[case], true))
    });
    let approximate =
        repeated || weights.is_some_and(|weights| weights.iter().any(|w| *w != weights[0]));
    // Distinct cases are only tracked when some case has several points.
    let cases = cases.filter(|_| repeated);

    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by(|&a, &b| points[a].p.total_cmp(&points[b].p));
    let mut values: Vec<Value> = Vec::new();
    for index in order {
        let point = points[index];
        let p = point.p + 0.0;
        let w = weight(index);
        let yes = u64::from(point.label);
        match values.last_mut() {
            Some(value) if value.p == p => {
                value.count += 1;
                value.yes += yes;
                value.w += w;
                value.w2 += w * w;
                value.w_yes += w * yes as f64;
                value.members.push(index);
            }
            _ => values.push(Value {
                p,
                count: 1,
                yes,
                w,
                w2: w * w,
                w_yes: w * yes as f64,
                members: vec![index],
            }),
        }
    }
    let k = values.len();
    let level = delta / 2.0;

    // pass_sides[m]: PASS at values[k − 1 − m] (test order: highest first).
    let mut pass_sides = Vec::with_capacity(k);
    let mut side = Side::default();
    let mut seen = vec![false; case_count];
    for value in values.iter().rev() {
        side.add(value, true);
        side.cases += new_cases(value, cases, &mut seen);
        pass_sides.push(side);
    }
    // fail_sides[m]: FAIL at values[m] (test order: lowest first).
    let mut fail_sides = Vec::with_capacity(k);
    let mut side = Side::default();
    let mut seen = vec![false; case_count];
    for value in &values {
        side.add(value, false);
        side.cases += new_cases(value, cases, &mut seen);
        fail_sides.push(side);
    }
    let pass_entry = entry_decisions(targets.min_pass_precision, level);
    let fail_entry = entry_decisions(targets.min_fail_precision, level);
    let (pass_tested, pass_certified) =
        sequence(&pass_sides, targets.min_pass_precision, level, pass_entry);
    let (fail_tested, fail_certified) =
        sequence(&fail_sides, targets.min_fail_precision, level, fail_entry);
    if pass_certified == 0 {
        return Err(NoCertificate::PassNotCertified {
            first_p_value: pass_tested.first().map(|(_, p)| *p),
            entry: pass_entry,
        });
    }
    if fail_certified == 0 {
        return Err(NoCertificate::FailNotCertified {
            first_p_value: fail_tested.first().map(|(_, p)| *p),
            entry: fail_entry,
        });
    }
    // Certified PASS indices into `values`, with their p-values; likewise FAIL.
    let pass_ok: Vec<(usize, f64)> = pass_tested[..pass_certified]
        .iter()
        .map(|&(m, p)| (k - 1 - m, p))
        .collect();
    let fail_ok: Vec<(usize, f64)> = fail_tested[..fail_certified].to_vec();
    let fail_low = fail_ok[0].0;
    let fail_high = fail_ok[fail_ok.len() - 1].0;

    // best: (decided, larger p-value, i, j)
    let mut best: Option<(u64, f64, usize, usize)> = None;
    for &(i, pass_p) in pass_ok.iter().rev() {
        if i == 0 || i - 1 < fail_low {
            continue;
        }
        let j = fail_high.min(i - 1);
        let fail_p = fail_ok[j - fail_low].1;
        let decided = pass_sides[k - 1 - i].count + fail_sides[j].count;
        let worst = pass_p.max(fail_p);
        let better = match best {
            None => true,
            Some((best_decided, best_worst, _, _)) => {
                decided > best_decided || (decided == best_decided && worst < best_worst)
            }
        };
        if better {
            best = Some((decided, worst, i, j));
        }
    }
    let Some((decided, _, i, j)) = best else {
        return Err(NoCertificate::NoOrderedPair);
    };
    let thresholds = written_pair(&values, i, j);
    let counts = tally(points, thresholds);
    debug_assert_eq!(counts.passes + counts.fails, decided);
    let pass_side = pass_sides[k - 1 - i];
    let fail_side = fail_sides[j];
    let n = points.len() as f64;
    let abstain = (n - decided as f64) / n;
    if abstain > targets.max_abstain {
        return Err(NoCertificate::TooMuchAbstention {
            least: abstain,
            thresholds,
        });
    }
    Ok(Certificate {
        thresholds,
        tally: counts,
        delta,
        pass_p_value: pass_side.p_value(targets.min_pass_precision),
        fail_p_value: fail_side.p_value(targets.min_fail_precision),
        pass_effective_n: pass_side.effective_n(),
        fail_effective_n: fail_side.effective_n(),
        approximate,
    })
}

/// The cases of `value`'s points not seen before (0 without `cases`).
fn new_cases(value: &Value, cases: Option<&[usize]>, seen: &mut [bool]) -> u64 {
    let Some(cases) = cases else {
        return 0;
    };
    value
        .members
        .iter()
        .filter(|&&index| !std::mem::replace(&mut seen[cases[index]], true))
        .count() as u64
}

/// The pair FAIL at `values[j]`, PASS at `values[i]` (`j < i`), each as its shortest decimal.
fn written_pair(values: &[Value], i: usize, j: usize) -> Thresholds {
    let fail_value = values[j].p;
    let pass_value = values[i].p;
    let fail = shortest_within(fail_value, fail_value, values[j + 1].p, false, true);
    let lower = values[i - 1].p.max(fail);
    let pass = shortest_within(pass_value, lower, pass_value, true, false);
    Thresholds::new(fail, pass).unwrap_or(Thresholds {
        fail_at_or_below: fail_value,
        pass_at_or_above: pass_value,
    })
}
