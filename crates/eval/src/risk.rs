//! Risk and coverage, and an interval on every rate.
//!
//! An abstaining judge is read by two numbers accuracy hides: how often it decides
//! (**coverage** = PASS or FAIL verdicts ÷ reviews) and how often a decision is wrong
//! (**decided accuracy** = correct ÷ decided) — and which way: a **false PASS** is a case
//! expected to fail that got PASS (an unsupported draft published: the costly error), a
//! **false FAIL** a case expected to pass that got FAIL. `false_pass + false_fail = incorrect`;
//! their rates are per decided review, so `false_pass_rate + false_fail_rate =
//! 1 − decided_accuracy`.
//!
//! The per-decided rates are the most flattering base, so each kind of error also has the two
//! rates that answer a user's questions (docs/explanation/statistics.md, "Error rates and their
//! bases"):
//!
//! - **false PASS per expected FAIL** = false PASS ÷ reviews of cases expected to fail: the
//!   share of bad drafts that get published;
//! - **false PASS per PASS verdict** = false PASS ÷ PASS verdicts: the share of PASS verdicts
//!   that are wrong;
//! - **false FAIL per expected PASS** = false FAIL ÷ reviews of cases expected to pass: the
//!   share of good drafts that get blocked;
//! - **false FAIL per FAIL verdict** = false FAIL ÷ FAIL verdicts: the share of FAIL verdicts
//!   that are wrong.
//!
//! Every rate carries a 95 % interval `[low, high]`: the Wilson score interval when each case
//! was reviewed once, and with repeats [`jevjudge_stats::clustered_wilson`], which treats the
//! case, not the review, as the unit. Every error rate also carries `…_upper`, its one-sided
//! 95 % Clopper–Pearson upper bound (at the effective number of reviews with repeats): Wilson's
//! coverage dips well below 95 % for rare rates, Clopper–Pearson's never does. A rate with an
//! empty denominator is `null`, and so are its interval and bound.
//!
//! When some case weighs other than 1 (`weight`, 1/π of a sampled label), every rate is the
//! Horvitz–Thompson ratio `Σ w·part ÷ Σ w·whole`, and its interval and bound are taken at the
//! Kish effective n of the cases in the denominator ([`jevjudge_stats::weighted_ratio`]); the
//! counts stay counts of reviews (docs/explanation/statistics.md, "Weighted cases").

use jevjudge_judge::Status;
use serde::{Deserialize, Serialize};

use crate::{Outcome, Row};

pub use crate::prevalence::Z95;

/// Coverage, decided accuracy, false PASS / false FAIL, and the intervals of every rate
/// (flattened into a [`crate::Summary`]). Every field reads as its default when absent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Risk {
    /// 95 % interval of `accuracy` (correct ÷ reviews); null when there is no review.
    pub accuracy_ci: Option<[f64; 2]>,
    /// PASS or FAIL verdicts (correct + incorrect).
    pub decided: u64,
    /// decided ÷ reviews; null when there is no review.
    pub coverage: Option<f64>,
    /// 95 % interval of `coverage`.
    pub coverage_ci: Option<[f64; 2]>,
    /// correct ÷ decided; null when nothing was decided.
    pub decided_accuracy: Option<f64>,
    /// 95 % interval of `decided_accuracy`.
    pub decided_accuracy_ci: Option<[f64; 2]>,
    /// PASS verdicts on cases expected to fail.
    pub false_pass: u64,
    /// false_pass ÷ decided; null when nothing was decided.
    pub false_pass_rate: Option<f64>,
    /// 95 % interval of `false_pass_rate`.
    pub false_pass_rate_ci: Option<[f64; 2]>,
    /// FAIL verdicts on cases expected to pass.
    pub false_fail: u64,
    /// false_fail ÷ decided; null when nothing was decided.
    pub false_fail_rate: Option<f64>,
    /// 95 % interval of `false_fail_rate`.
    pub false_fail_rate_ci: Option<[f64; 2]>,
    /// One-sided 95 % Clopper–Pearson upper bound of `false_pass_rate`.
    pub false_pass_rate_upper: Option<f64>,
    /// One-sided 95 % Clopper–Pearson upper bound of `false_fail_rate`.
    pub false_fail_rate_upper: Option<f64>,
    /// Reviews of cases expected to fail (whatever their verdict).
    pub expected_fail_reviews: u64,
    /// The share of bad drafts that pass: false_pass ÷ expected_fail_reviews.
    pub false_pass_per_expected_fail: Option<f64>,
    /// 95 % interval of `false_pass_per_expected_fail`.
    pub false_pass_per_expected_fail_ci: Option<[f64; 2]>,
    /// One-sided 95 % Clopper–Pearson upper bound of `false_pass_per_expected_fail`.
    pub false_pass_per_expected_fail_upper: Option<f64>,
    /// PASS verdicts.
    pub pass_verdicts: u64,
    /// The share of PASS verdicts that are wrong: false_pass ÷ pass_verdicts.
    pub false_pass_per_pass_verdict: Option<f64>,
    /// 95 % interval of `false_pass_per_pass_verdict`.
    pub false_pass_per_pass_verdict_ci: Option<[f64; 2]>,
    /// One-sided 95 % Clopper–Pearson upper bound of `false_pass_per_pass_verdict`.
    pub false_pass_per_pass_verdict_upper: Option<f64>,
    /// Reviews of cases expected to pass (whatever their verdict).
    pub expected_pass_reviews: u64,
    /// The share of good drafts that fail: false_fail ÷ expected_pass_reviews.
    pub false_fail_per_expected_pass: Option<f64>,
    /// 95 % interval of `false_fail_per_expected_pass`.
    pub false_fail_per_expected_pass_ci: Option<[f64; 2]>,
    /// One-sided 95 % Clopper–Pearson upper bound of `false_fail_per_expected_pass`.
    pub false_fail_per_expected_pass_upper: Option<f64>,
    /// FAIL verdicts.
    pub fail_verdicts: u64,
    /// The share of FAIL verdicts that are wrong: false_fail ÷ fail_verdicts.
    pub false_fail_per_fail_verdict: Option<f64>,
    /// 95 % interval of `false_fail_per_fail_verdict`.
    pub false_fail_per_fail_verdict_ci: Option<[f64; 2]>,
    /// One-sided 95 % Clopper–Pearson upper bound of `false_fail_per_fail_verdict`.
    pub false_fail_per_fail_verdict_upper: Option<f64>,
    /// PASS and FAIL precisions at a stated production base rate, when one was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at_prevalence: Option<crate::prevalence::AtPrevalence>,
    /// For a definition with several criteria (overall only): each criterion's current
    /// thresholds' precisions at that base rate, from its labelled rows.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        with = "crate::ordered_map"
    )]
    pub at_prevalence_by_criterion: Vec<(String, crate::prevalence::AtPrevalence)>,
}

/// One case's counts over its reviews.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CaseTally {
    reviews: u32,
    correct: u32,
    decided: u32,
    false_pass: u32,
    false_fail: u32,
    expected_fail: u32,
    expected_pass: u32,
    pass_verdicts: u32,
    fail_verdicts: u32,
    /// The case's weight (1/π; 1 by default).
    weight: f64,
}

impl PartialEq for CaseTally {
    fn eq(&self, other: &CaseTally) -> bool {
        self.key() == other.key()
    }
}

impl Eq for CaseTally {}

impl std::hash::Hash for CaseTally {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.key().hash(state);
    }
}

impl CaseTally {
    /// Every field, the weight by its bits: tallies are equal when they count the same.
    fn key(&self) -> ([u32; 9], u64) {
        (
            [
                self.reviews,
                self.correct,
                self.decided,
                self.false_pass,
                self.false_fail,
                self.expected_fail,
                self.expected_pass,
                self.pass_verdicts,
                self.fail_verdicts,
            ],
            self.weight.to_bits(),
        )
    }
}

/// A count of a case's tally.
type Field = fn(&CaseTally) -> u32;

/// Builds [`Risk`] one row (case) at a time; memory is one byte per case while the cases'
/// tallies take at most 256 distinct values ([`crate::interned::Interned`]), as they do with
/// few repeats and equal weights.
#[derive(Debug, Clone, Default)]
pub struct RiskBuilder {
    cases: crate::interned::Interned<CaseTally>,
}

impl RiskBuilder {
    /// Counts every review of one case.
    pub fn add(&mut self, row: &Row) {
        let mut tally = CaseTally {
            weight: row.weight,
            ..CaseTally::default()
        };
        for verdict in row.verdicts() {
            tally.reviews += 1;
            if row.expected_pass {
                tally.expected_pass += 1;
            } else {
                tally.expected_fail += 1;
            }
            match verdict.status {
                Status::Pass => tally.pass_verdicts += 1,
                Status::Fail => tally.fail_verdicts += 1,
                _ => {}
            }
            match Outcome::of(verdict.status, row.expected_pass) {
                Outcome::Correct => {
                    tally.correct += 1;
                    tally.decided += 1;
                }
                Outcome::Incorrect => {
                    tally.decided += 1;
                    if verdict.status == Status::Pass {
                        tally.false_pass += 1;
                    } else {
                        tally.false_fail += 1;
                    }
                }
                Outcome::Abstained | Outcome::Error => {}
            }
        }
        self.cases.push(tally);
    }

    /// Whether some case weighs other than 1: then every rate is weighted.
    pub fn is_weighted(&self) -> bool {
        self.cases.distinct().any(|c| c.weight != 1.0)
    }

    /// With weights: the weighted accuracy (Σw·correct ÷ Σw·reviews) and the Kish effective n
    /// of the cases, `(Σw)² / Σw²`. `None` when every weight is 1 or there is no review.
    pub fn weighting(&self) -> Option<(f64, f64)> {
        if !self.is_weighted() {
            return None;
        }
        let weights: Vec<f64> = self.cases.iter().map(|c| c.weight).collect();
        let effective_n = jevjudge_stats::kish_effective_n(&weights)?;
        let reviews: f64 = self
            .cases
            .iter()
            .map(|c| c.weight * f64::from(c.reviews))
            .sum();
        let correct: f64 = self
            .cases
            .iter()
            .map(|c| c.weight * f64::from(c.correct))
            .sum();
        (reviews > 0.0).then(|| (correct / reviews, effective_n))
    }

    /// The figures.
    pub fn finish(self) -> Risk {
        if self.is_weighted() {
            return self.finish_weighted();
        }
        let sum = |field: fn(&CaseTally) -> u32| -> u64 {
            self.cases.iter().map(|c| u64::from(field(c))).sum()
        };
        let reviews = sum(|c| c.reviews);
        let correct = sum(|c| c.correct);
        let decided = sum(|c| c.decided);
        let false_pass = sum(|c| c.false_pass);
        let false_fail = sum(|c| c.false_fail);
        let interval = |successes: fn(&CaseTally) -> u32, trials: fn(&CaseTally) -> u32| {
            if let Some((s, n)) = self.single_trials(successes, trials) {
                // What clustered_wilson computes for one trial per case, without the clusters.
                return jevjudge_stats::wilson(s, n, Z95).map(|(low, high)| [low, high]);
            }
            let clusters = self.clusters(successes, trials);
            jevjudge_stats::clustered_wilson(&clusters, Z95).map(|(low, high)| [low, high])
        };
        let rate = |part: u64, whole: u64| (whole > 0).then(|| part as f64 / whole as f64);
        let upper = |successes: fn(&CaseTally) -> u32, trials: fn(&CaseTally) -> u32| {
            if let Some((s, n)) = self.single_trials(successes, trials) {
                // What clopper_pearson_upper_clustered computes for one trial per case.
                return jevjudge_stats::clopper_pearson_upper(s as f64, n as f64, 0.05);
            }
            clopper_pearson_upper_clustered(&self.clusters(successes, trials))
        };
        let expected_fail_reviews = sum(|c| c.expected_fail);
        let expected_pass_reviews = sum(|c| c.expected_pass);
        let pass_verdicts = sum(|c| c.pass_verdicts);
        let fail_verdicts = sum(|c| c.fail_verdicts);
        Risk {
            accuracy_ci: interval(|c| c.correct, |c| c.reviews),
            decided,
            coverage: rate(decided, reviews),
            coverage_ci: interval(|c| c.decided, |c| c.reviews),
            decided_accuracy: rate(correct, decided),
            decided_accuracy_ci: interval(|c| c.correct, |c| c.decided),
            false_pass,
            false_pass_rate: rate(false_pass, decided),
            false_pass_rate_ci: interval(|c| c.false_pass, |c| c.decided),
            false_fail,
            false_fail_rate: rate(false_fail, decided),
            false_fail_rate_ci: interval(|c| c.false_fail, |c| c.decided),
            false_pass_rate_upper: upper(|c| c.false_pass, |c| c.decided),
            false_fail_rate_upper: upper(|c| c.false_fail, |c| c.decided),
            expected_fail_reviews,
            false_pass_per_expected_fail: rate(false_pass, expected_fail_reviews),
            false_pass_per_expected_fail_ci: interval(|c| c.false_pass, |c| c.expected_fail),
            false_pass_per_expected_fail_upper: upper(|c| c.false_pass, |c| c.expected_fail),
            pass_verdicts,
            false_pass_per_pass_verdict: rate(false_pass, pass_verdicts),
            false_pass_per_pass_verdict_ci: interval(|c| c.false_pass, |c| c.pass_verdicts),
            false_pass_per_pass_verdict_upper: upper(|c| c.false_pass, |c| c.pass_verdicts),
            expected_pass_reviews,
            false_fail_per_expected_pass: rate(false_fail, expected_pass_reviews),
            false_fail_per_expected_pass_ci: interval(|c| c.false_fail, |c| c.expected_pass),
            false_fail_per_expected_pass_upper: upper(|c| c.false_fail, |c| c.expected_pass),
            fail_verdicts,
            false_fail_per_fail_verdict: rate(false_fail, fail_verdicts),
            false_fail_per_fail_verdict_ci: interval(|c| c.false_fail, |c| c.fail_verdicts),
            false_fail_per_fail_verdict_upper: upper(|c| c.false_fail, |c| c.fail_verdicts),
            at_prevalence: None,
            at_prevalence_by_criterion: Vec::new(),
        }
    }
}

impl RiskBuilder {
    /// The cases with trials as `(successes, trials)` clusters, in the order they came.
    fn clusters(&self, successes: Field, trials: Field) -> Vec<(u64, u64)> {
        self.cases
            .iter()
            .map(|c| (u64::from(successes(c)), u64::from(trials(c))))
            .filter(|(_, n)| *n > 0)
            .collect()
    }

    /// When every case with trials has one trial and at most one success: the successes and
    /// the number of such cases (the clusters are then plain Bernoulli trials).
    fn single_trials(&self, successes: Field, trials: Field) -> Option<(u64, u64)> {
        let single = self
            .cases
            .distinct()
            .filter(|c| trials(c) > 0)
            .all(|c| trials(c) == 1 && successes(c) <= 1);
        single.then(|| {
            self.cases
                .iter()
                .filter(|c| trials(c) > 0)
                .fold((0, 0), |(s, n), c| (s + u64::from(successes(c)), n + 1))
        })
    }

    /// The figures of weighted cases: each rate is the Horvitz–Thompson ratio
    /// `Σ w·part ÷ Σ w·whole`, its interval the Wilson interval and its bound the
    /// Clopper–Pearson bound at the Kish effective n of the cases in the denominator (see
    /// [`jevjudge_stats::weighted_ratio`]). Counts stay counts of reviews.
    fn finish_weighted(self) -> Risk {
        let sum = |field: Field| -> u64 { self.cases.iter().map(|c| u64::from(field(c))).sum() };
        let ratio = |part: Field, whole: Field| {
            let clusters: Vec<(f64, f64, f64)> = self
                .cases
                .iter()
                .map(|c| (f64::from(part(c)), f64::from(whole(c)), c.weight))
                .filter(|(_, n, _)| *n > 0.0)
                .collect();
            jevjudge_stats::weighted_ratio(&clusters, Z95)
        };
        let rate = |part: Field, whole: Field| ratio(part, whole).map(|r| r.estimate);
        let interval =
            |part: Field, whole: Field| ratio(part, whole).map(|r| [r.interval.0, r.interval.1]);
        let upper = |part: Field, whole: Field| {
            ratio(part, whole).and_then(|r| {
                jevjudge_stats::clopper_pearson_upper(
                    r.estimate * r.effective_n,
                    r.effective_n,
                    0.05,
                )
            })
        };
        Risk {
            accuracy_ci: interval(|c| c.correct, |c| c.reviews),
            decided: sum(|c| c.decided),
            coverage: rate(|c| c.decided, |c| c.reviews),
            coverage_ci: interval(|c| c.decided, |c| c.reviews),
            decided_accuracy: rate(|c| c.correct, |c| c.decided),
            decided_accuracy_ci: interval(|c| c.correct, |c| c.decided),
            false_pass: sum(|c| c.false_pass),
            false_pass_rate: rate(|c| c.false_pass, |c| c.decided),
            false_pass_rate_ci: interval(|c| c.false_pass, |c| c.decided),
            false_fail: sum(|c| c.false_fail),
            false_fail_rate: rate(|c| c.false_fail, |c| c.decided),
            false_fail_rate_ci: interval(|c| c.false_fail, |c| c.decided),
            false_pass_rate_upper: upper(|c| c.false_pass, |c| c.decided),
            false_fail_rate_upper: upper(|c| c.false_fail, |c| c.decided),
            expected_fail_reviews: sum(|c| c.expected_fail),
            false_pass_per_expected_fail: rate(|c| c.false_pass, |c| c.expected_fail),
            false_pass_per_expected_fail_ci: interval(|c| c.false_pass, |c| c.expected_fail),
            false_pass_per_expected_fail_upper: upper(|c| c.false_pass, |c| c.expected_fail),
            pass_verdicts: sum(|c| c.pass_verdicts),
            false_pass_per_pass_verdict: rate(|c| c.false_pass, |c| c.pass_verdicts),
            false_pass_per_pass_verdict_ci: interval(|c| c.false_pass, |c| c.pass_verdicts),
            false_pass_per_pass_verdict_upper: upper(|c| c.false_pass, |c| c.pass_verdicts),
            expected_pass_reviews: sum(|c| c.expected_pass),
            false_fail_per_expected_pass: rate(|c| c.false_fail, |c| c.expected_pass),
            false_fail_per_expected_pass_ci: interval(|c| c.false_fail, |c| c.expected_pass),
            false_fail_per_expected_pass_upper: upper(|c| c.false_fail, |c| c.expected_pass),
            fail_verdicts: sum(|c| c.fail_verdicts),
            false_fail_per_fail_verdict: rate(|c| c.false_fail, |c| c.fail_verdicts),
            false_fail_per_fail_verdict_ci: interval(|c| c.false_fail, |c| c.fail_verdicts),
            false_fail_per_fail_verdict_upper: upper(|c| c.false_fail, |c| c.fail_verdicts),
            at_prevalence: None,
            at_prevalence_by_criterion: Vec::new(),
        }
    }
}

/// The one-sided 95 % Clopper–Pearson upper bound of a rate counted over clusters of reviews:
/// with one review per case the exact bound of `Σ s` out of `k`; with repeats the bound at the
/// effective number of independent reviews ([`jevjudge_stats::effective_trials`]), so the case
/// stays the unit. `None` without a trial.
pub fn clopper_pearson_upper_clustered(clusters: &[(u64, u64)]) -> Option<f64> {
    if clusters.iter().all(|&(s, n)| n == 1 && s <= 1) {
        let successes: u64 = clusters.iter().map(|&(s, _)| s).sum();
        return jevjudge_stats::clopper_pearson_upper(
            successes as f64,
            clusters.len() as f64,
            0.05,
        );
    }
    let (p, n_eff) = jevjudge_stats::effective_trials(clusters)?;
    jevjudge_stats::clopper_pearson_upper(p * n_eff, n_eff, 0.05)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{report, row, verdict};
    use jevjudge_judge::Findings;

    /// The one-sided 95 % Clopper–Pearson upper bound of `x` out of `n`, as scipy computed it
    /// (`scripts/reference/exact.py`).
    fn scipy_upper(x: u64, n: u64) -> f64 {
        let key = format!("cp_upper {x} {n} 0.05 ");
        let line = include_str!("../../stats/tests/data/exact.txt")
            .lines()
            .find(|line| line.starts_with(&key))
            .unwrap_or_else(|| panic!("the fixture has {key}"));
        line[key.len()..].parse().unwrap()
    }

    // The shipped SMS replay's counts: 75 cases expected to fail (65 FAIL, 10 INCONCLUSIVE),
    // 75 expected to pass (58 PASS, 2 FAIL, 15 INCONCLUSIVE).
    #[test]
    fn each_error_rate_is_divided_by_its_own_base_with_a_clopper_pearson_upper_bound() {
        let mut rows = Vec::new();
        let mut add = |n: usize, expected_pass: bool, status: Status| {
            for _ in 0..n {
                let id = format!("c{}", rows.len());
                let verdict = verdict("v", status, Findings::default());
                rows.push(row("s", &id, expected_pass, verdict));
            }
        };
        add(65, false, Status::Fail);
        add(10, false, Status::Inconclusive);
        add(58, true, Status::Pass);
        add(2, true, Status::Fail);
        add(15, true, Status::Inconclusive);
        let risk = report("v", rows).overall.risk;
        assert_eq!((risk.expected_fail_reviews, risk.pass_verdicts), (75, 58));
        assert_eq!((risk.expected_pass_reviews, risk.fail_verdicts), (75, 67));
        // The per-decided rates keep their meaning.
        assert_eq!(
            (risk.decided, risk.false_pass, risk.false_fail),
            (125, 0, 2)
        );
        assert_eq!(risk.false_fail_rate, Some(2.0 / 125.0));
        assert_eq!(risk.false_pass_per_expected_fail, Some(0.0));
        assert_eq!(risk.false_pass_per_pass_verdict, Some(0.0));
        assert_eq!(risk.false_fail_per_expected_pass, Some(2.0 / 75.0));
        assert_eq!(risk.false_fail_per_fail_verdict, Some(2.0 / 67.0));
        let close = |a: Option<f64>, b: f64| (a.unwrap() - b).abs() < 1e-12;
        assert!(close(risk.false_pass_rate_upper, scipy_upper(0, 125)));
        assert!(close(
            risk.false_pass_per_expected_fail_upper,
            scipy_upper(0, 75)
        ));
        assert!(close(
            risk.false_pass_per_pass_verdict_upper,
            scipy_upper(0, 58)
        ));
        assert!(close(
            risk.false_fail_per_expected_pass_upper,
            scipy_upper(2, 75)
        ));
        assert!(close(
            risk.false_fail_per_fail_verdict_upper,
            scipy_upper(2, 67)
        ));
        // Wilson's two-sided interval is kept beside it: 0/75 → [0, 0.0487].
        let [low, high] = risk.false_pass_per_expected_fail_ci.unwrap();
        assert!(low == 0.0 && (high - 0.0487).abs() < 1e-4);
    }

    // A report written by an older jevjudge has none of these fields; each reads as its default,
    // and those present keep their values.
    #[test]
    fn absent_risk_fields_read_as_their_defaults() {
        assert_eq!(serde_json::from_str::<Risk>("{}").unwrap(), Risk::default());
        let partial: Risk =
            serde_json::from_str(r#"{"false_pass": 3, "coverage": 0.5, "coverage_ci": null}"#)
                .unwrap();
        let expected = Risk {
            false_pass: 3,
            coverage: Some(0.5),
            ..Risk::default()
        };
        assert_eq!(partial, expected);
        // Flattened into a summary: a summary without them reads too.
        let mut summary =
            serde_json::to_value(crate::test_support::report("v1", Vec::new()).overall).unwrap();
        let object = summary.as_object_mut().unwrap();
        for key in serde_json::to_value(Risk::default())
            .unwrap()
            .as_object()
            .unwrap()
            .keys()
        {
            assert!(object.remove(key).is_some(), "{key} is flattened");
        }
        let read: crate::Summary = serde_json::from_value(summary).unwrap();
        assert_eq!(read.risk, Risk::default());
    }
}

#[cfg(test)]
mod weighted_tests {
    use crate::test_support::{report, row, verdict};
    use jevjudge_judge::{Findings, Status};

    /// Cases of two scenarios, every outcome, each with an integer weight.
    fn weighted_rows() -> Vec<(crate::Row, u32)> {
        let plan = [
            ("a", true, Status::Pass, 1),
            ("a", true, Status::Fail, 3),
            ("a", true, Status::Inconclusive, 2),
            ("a", false, Status::Fail, 1),
            ("a", false, Status::Pass, 4),
            ("b", false, Status::Fail, 2),
            ("b", true, Status::Pass, 3),
            ("b", false, Status::Inconclusive, 1),
            ("b", true, Status::Pass, 1),
        ];
        plan.iter()
            .enumerate()
            .map(|(i, &(scenario, expected_pass, status, weight))| {
                let mut case = row(
                    scenario,
                    &format!("c{i}"),
                    expected_pass,
                    verdict("v", status, Findings::default()),
                );
                case.weight = f64::from(weight);
                (case, weight)
            })
            .collect()
    }

    /// Every rate of a summary that weights change.
    fn rates(s: &crate::Summary) -> Vec<Option<f64>> {
        let r = &s.risk;
        vec![
            Some(s.accuracy),
            r.coverage,
            r.decided_accuracy,
            r.false_pass_rate,
            r.false_fail_rate,
            r.false_pass_per_expected_fail,
            r.false_pass_per_pass_verdict,
            r.false_fail_per_expected_pass,
            r.false_fail_per_fail_verdict,
        ]
    }

    #[test]
    fn a_weighted_summary_has_the_point_estimates_of_the_cases_repeated_weight_times() {
        let rows = weighted_rows();
        let weighted = report("v", rows.iter().map(|(r, _)| r.clone()).collect());
        let expanded: Vec<crate::Row> = rows
            .iter()
            .flat_map(|(r, w)| {
                (0..*w).map(move |copy| {
                    let mut one = r.clone();
                    one.id = format!("{}-{copy}", r.id);
                    one.weight = 1.0;
                    one
                })
            })
            .collect();
        let expanded = report("v", expanded);
        let summaries = std::iter::once((&weighted.overall, &expanded.overall)).chain(
            weighted
                .scenarios
                .iter()
                .zip(&expanded.scenarios)
                .map(|((_, w), (_, e))| (w, e)),
        );
        for (w, e) in summaries {
            for (a, b) in rates(w).into_iter().zip(rates(e)) {
                let (a, b) = (a.unwrap(), b.unwrap());
                assert!((a - b).abs() < 1e-12, "{a} vs {b}");
            }
            // Counts stay counts of cases; the expanded report is not weighted.
            assert_eq!(w.weighted, Some(true));
            assert_eq!(e.weighted, None);
            assert_eq!(e.effective_n, None);
        }
        assert_eq!(weighted.overall.total, 9);
        assert_eq!(weighted.overall.risk.false_pass, 1);
        // (Σw)² / Σw² = 18² / 46.
        let effective_n = weighted.overall.effective_n.unwrap();
        assert!((effective_n - 324.0 / 46.0).abs() < 1e-12);
        // The interval is taken at the effective n, so it is wider than the expanded one's.
        let [low, high] = weighted.overall.risk.coverage_ci.unwrap();
        let [expanded_low, expanded_high] = expanded.overall.risk.coverage_ci.unwrap();
        assert!(high - low > expanded_high - expanded_low);
    }

    #[test]
    fn terminal_markdown_and_html_say_weighted_with_the_effective_n() {
        let weighted = report("v", weighted_rows().into_iter().map(|(r, _)| r).collect());
        let line = "weighted (effective n 7.0): accuracy, coverage and every rate";
        let terminal = crate::terminal::risk_table(&weighted, 8);
        let text = crate::terminal::summary(&weighted, &[], None, None);
        let markdown = crate::markdown::to_markdown(&weighted, &[]);
        let html = crate::html::to_html(&weighted, &crate::html::HtmlOptions::default());
        for (what, out) in [
            ("terminal", &text),
            ("markdown", &markdown),
            ("html", &html),
        ] {
            assert!(out.contains(line), "{what}: {out}");
        }
        assert!(!terminal.contains("weighted"));
    }

    #[test]
    fn unit_weights_leave_the_summary_unweighted() {
        let rows: Vec<crate::Row> = weighted_rows()
            .into_iter()
            .map(|(mut r, _)| {
                r.weight = 1.0;
                r
            })
            .collect();
        let summary = report("v", rows).overall;
        assert_eq!((summary.weighted, summary.effective_n), (None, None));
        let json = serde_json::to_string(&summary).unwrap();
        assert!(
            !json.contains("weighted") && !json.contains("effective_n"),
            "{json}"
        );
    }
}
