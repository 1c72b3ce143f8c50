//! Repeats (`eval --repeat N`): every case reviewed N times, to show the noise one run hides.
//!
//! A repeated run still has one [`Row`] per case. Its `verdict`, `pass` and `score` are the
//! first repeat's, and [`Row::repeats`] holds every repeat's verdict (the first included) and
//! the case's pass rate. Summaries count every review (cases × repeats) and add the
//! [`Repeated`] figures: `accuracy_by_repeat`, `flipped` (cases whose status differs between
//! repeats), `flip_rate` (flipped ÷ cases) and, per criterion, the mean over cases of the
//! standard deviation of its yes-probability across the case's repeats.
//!
//! The runner schedules the N reviews of a case as N independent evaluations under the same
//! concurrency limit, each inside [`jevjudge_judge::repeat::scope`] with its repeat index, so a
//! replay backend serves the k-th record of a request to the k-th repeat whatever order the
//! reviews finish in.

use std::collections::HashMap;

use jevjudge_judge::{Status, Verdict};
use serde::{Deserialize, Serialize};

use crate::{Outcome, Row};

/// The most repeats a run may ask for.
pub const MAX_REPEATS: usize = 10;

pub use crate::row::Repeats;

/// Makes one row of the rows of every repeat of a case, given in repeat order: the first
/// repeat's fields, plus [`Repeats`]. One row is returned unchanged.
pub fn combine(mut rows: Vec<Row>) -> Option<Row> {
    if rows.len() <= 1 {
        return rows.pop();
    }
    let verdicts: Vec<Verdict> = rows.iter().map(|row| row.verdict.clone()).collect();
    let passes = verdicts
        .iter()
        .filter(|verdict| verdict.status == Status::Pass)
        .count();
    let pass_rate = passes as f64 / verdicts.len() as f64;
    let mut first = rows.swap_remove(0);
    first.repeats = Some(Repeats {
        verdicts,
        pass_rate,
    });
    Some(first)
}

/// Collects the repeats of cases finishing in any order and hands out a case's row once all
/// its repeats are in. Memory is the rows of the cases in flight.
#[derive(Debug)]
pub(crate) struct Assembler {
    repeats: usize,
    pending: HashMap<usize, Vec<Option<Row>>>,
}

impl Assembler {
    pub(crate) fn new(repeats: usize) -> Assembler {
        Assembler {
            repeats: repeats.max(1),
            pending: HashMap::new(),
        }
    }

    /// Adds repeat `repeat` of case `index`; returns the case's row when it is complete.
    pub(crate) fn add(&mut self, index: usize, repeat: usize, row: Row) -> Option<Row> {
        if self.repeats == 1 {
            return Some(row);
        }
        let slots = self
            .pending
            .entry(index)
            .or_insert_with(|| vec![None; self.repeats]);
        if let Some(slot) = slots.get_mut(repeat) {
            *slot = Some(row);
        }
        if slots.iter().all(Option::is_some) {
            let rows = self.pending.remove(&index)?.into_iter().flatten().collect();
            return combine(rows);
        }
        None
    }
}

/// The repeat figures of a summary (flattened into a [`crate::Summary`]). For a run without
/// repeats only `repeats` (1) is written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Repeated {
    /// Reviews per case (1 without `--repeat`).
    #[serde(default = "one")]
    pub repeats: u64,
    /// Correct ÷ cases of each repeat, in repeat order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accuracy_by_repeat: Option<Vec<f64>>,
    /// Cases whose verdict status differs between repeats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flipped: Option<u64>,
    /// flipped ÷ cases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flip_rate: Option<f64>,
    /// 95 % Wilson interval of `flip_rate` (cases are independent trials).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flip_rate_ci: Option<[f64; 2]>,
    /// Per criterion, the mean over cases of the sample standard deviation of its
    /// yes-probability across the case's repeats (over the cases with at least two repeats
    /// that answered); criteria in first-seen order.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "crate::ordered_map::option"
    )]
    pub probability_sd: Option<Vec<(String, f64)>>,
}

fn one() -> u64 {
    1
}

impl Default for Repeated {
    fn default() -> Repeated {
        Repeated {
            repeats: 1,
            accuracy_by_repeat: None,
            flipped: None,
            flip_rate: None,
            flip_rate_ci: None,
            probability_sd: None,
        }
    }
}

/// Builds [`Repeated`] one row (case) at a time; memory is a few counters per repeat and per
/// criterion.
#[derive(Debug, Clone, Default)]
pub struct RepeatedBuilder {
    repeats: usize,
    cases: u64,
    flipped: u64,
    correct_by_repeat: Vec<u64>,
    cases_by_repeat: Vec<u64>,
    /// Per criterion: the sum of the cases' SDs in [`to_fixed`] units, and the count.
    sd: Vec<(String, u128, u64)>,
}

/// Units of 2⁻⁶⁴ for summing SDs. Rows arrive in completion order, and a floating-point sum
/// depends on its order; an integer sum does not, so the same answers give the same figure
/// to the last bit. A sample SD of values in [0, 1] is below 1, so a `u128` holds the sum of
/// 2⁶⁴ of them; 2⁻⁶⁴ is far below an f64's resolution at the SDs that matter.
const FIXED_ONE: f64 = 18_446_744_073_709_551_616.0;

fn to_fixed(value: f64) -> u128 {
    // `as` saturates: a NaN gives 0 and a value above the range its maximum (neither occurs
    // for the SD of finite values in [0, 1]).
    (value * FIXED_ONE).round() as u128
}

fn from_fixed(sum: u128) -> f64 {
    sum as f64 / FIXED_ONE
}

impl RepeatedBuilder {
    /// Counts one case.
    pub fn add(&mut self, row: &Row) {
        let verdicts = row.verdicts();
        self.cases += 1;
        self.repeats = self.repeats.max(verdicts.len());
        if self.correct_by_repeat.len() < verdicts.len() {
            self.correct_by_repeat.resize(verdicts.len(), 0);
            self.cases_by_repeat.resize(verdicts.len(), 0);
        }
        for (k, verdict) in verdicts.iter().enumerate() {
            self.cases_by_repeat[k] += 1;
            if Outcome::of(verdict.status, row.expected_pass) == Outcome::Correct {
                self.correct_by_repeat[k] += 1;
            }
        }
        if row.flipped() {
            self.flipped += 1;
        }
        if verdicts.len() < 2 {
            return;
        }
        // Criteria in the order of the first verdict that has findings.
        let Some(first) = verdicts.iter().find(|v| !v.findings.is_empty()) else {
            return;
        };
        for (criterion, _) in first.findings.iter() {
            let values: Vec<f64> = verdicts
                .iter()
                .filter_map(|v| {
                    v.findings
                        .iter()
                        .find(|(id, _)| *id == criterion)
                        .map(|(_, finding)| finding.yes_probability)
                })
                .filter(|p| p.is_finite())
                .collect();
            let Some(sd) = sample_sd(&values) else {
                continue;
            };
            let sd = to_fixed(sd);
            match self.sd.iter_mut().find(|(id, _, _)| id == criterion) {
                Some((_, sum, count)) => {
                    *sum = sum.saturating_add(sd);
                    *count += 1;
                }
                None => self.sd.push((criterion.to_owned(), sd, 1)),
            }
        }
    }

    /// The figures.
    pub fn finish(self) -> Repeated {
        if self.repeats < 2 {
            return Repeated::default();
        }
        let rate = |part: u64, whole: u64| {
            if whole == 0 {
                0.0
            } else {
                part as f64 / whole as f64
            }
        };
        Repeated {
            repeats: self.repeats as u64,
            accuracy_by_repeat: Some(
                self.correct_by_repeat
                    .iter()
                    .zip(&self.cases_by_repeat)
                    .map(|(correct, cases)| rate(*correct, *cases))
                    .collect(),
            ),
            flipped: Some(self.flipped),
            flip_rate: Some(rate(self.flipped, self.cases)),
            flip_rate_ci: jevjudge_stats::wilson(self.flipped, self.cases, crate::risk::Z95)
                .map(|(low, high)| [low, high]),
            probability_sd: Some(
                self.sd
                    .into_iter()
                    .map(|(id, sum, count)| (id, from_fixed(sum) / count as f64))
                    .collect(),
            ),
        }
    }
}

/// The sample standard deviation (n − 1 denominator); `None` below two values.
///
/// The result does not depend on the order of `values`, to the last bit: repeats of one case
/// arrive in whatever order concurrency gives, and two runs with the same answers must print
/// the same figure.
pub fn sample_sd(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let mut values = values.to_vec();
    values.sort_by(f64::total_cmp);
    // Deviations from the first value first, so equal values give exactly 0.
    let origin = values[0];
    let n = values.len() as f64;
    let mean = values.iter().map(|v| v - origin).sum::<f64>() / n;
    let squares: f64 = values
        .iter()
        .map(|v| (v - origin - mean) * (v - origin - mean))
        .sum();
    Some((squares / (n - 1.0)).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    // statistics.stdev([0.2, 0.4, 0.9]) in Python 3 = 0.36055512754639896
    #[test]
    fn sample_sd_matches_python_statistics_stdev() {
        let sd = sample_sd(&[0.2, 0.4, 0.9]).unwrap();
        assert!((sd - 0.360_555_127_546_398_96).abs() < 1e-15, "{sd}");
        assert_eq!(sample_sd(&[0.5]), None);
        assert_eq!(sample_sd(&[0.5, 0.5]), Some(0.0));
        assert_eq!(sample_sd(&[0.97, 0.97, 0.97]), Some(0.0));
    }

    fn repeated_row(id: usize, probabilities: &[f64]) -> Row {
        use crate::test_support;
        use jevjudge_judge::{Finding, Findings, Status};
        let verdicts: Vec<Verdict> = probabilities
            .iter()
            .map(|p| {
                let findings = Findings::new(vec![(
                    "spam".to_owned(),
                    Finding {
                        status: Status::Inconclusive,
                        yes_probability: *p,
                        expected_probability: *p,
                    },
                )]);
                Verdict {
                    elapsed: std::time::Duration::from_millis(1),
                    ..test_support::verdict("v1", Status::Inconclusive, findings)
                }
            })
            .collect();
        Row {
            repeats: Some(crate::row::Repeats {
                verdicts: verdicts.clone(),
                pass_rate: 0.0,
            }),
            ..test_support::row("s", &id.to_string(), true, verdicts[0].clone())
        }
    }

    fn probability_sd(rows: &[Row]) -> u64 {
        let mut builder = RepeatedBuilder::default();
        for row in rows {
            builder.add(row);
        }
        builder.finish().probability_sd.unwrap()[0].1.to_bits()
    }

    // Seen in CI: the same answers, arriving in another order, gave ...158 against ...159.
    // Rows come in completion order and a case's repeats in arrival order; neither may move
    // the figure by a bit.
    proptest::proptest! {
        #[test]
        fn probability_sd_is_the_same_in_any_completion_order(
            cases in proptest::collection::vec(
                proptest::collection::vec(0.0f64..=1.0, 3),
                2..40,
            ),
        ) {
            let rows: Vec<Row> = cases.iter().enumerate().map(|(i, ps)| repeated_row(i, ps)).collect();
            let mut shuffled: Vec<Row> = cases
                .iter()
                .enumerate()
                .rev()
                .map(|(i, ps)| {
                    let mut ps = ps.clone();
                    ps.rotate_left(1);
                    repeated_row(i, &ps)
                })
                .collect();
            shuffled.rotate_left(cases.len() / 2);
            proptest::prop_assert_eq!(probability_sd(&rows), probability_sd(&shuffled));
        }
    }

    proptest::proptest! {
        #[test]
        fn sample_sd_is_the_same_in_any_order(
            mut values in proptest::collection::vec(0.0f64..=1.0, 2..8),
            rotate in 0usize..8,
        ) {
            let sd = sample_sd(&values).unwrap();
            let by = rotate % values.len();
            values.rotate_left(by);
            values.reverse();
            proptest::prop_assert_eq!(sample_sd(&values).unwrap().to_bits(), sd.to_bits());
        }
    }
}
