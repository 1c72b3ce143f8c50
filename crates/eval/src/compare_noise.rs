//! `compare` with repeated runs: a case changed only when an exact test on its repeat counts
//! says so after correcting for the number of cases tested.
//!
//! For each paired case and each kind of event — a correct review, an incorrect review (a
//! wrong PASS or FAIL), a false PASS — the case's counts in BASE and CANDIDATE form a 2×2
//! table (`events, repeats − events` per run). Fisher's exact two-sided test gives a p-value
//! per case ([`jevjudge_stats::fisher_exact`]); Holm's step-down correction
//! ([`jevjudge_stats::holm`]) across the paired cases turns them into adjusted p-values that
//! control the family-wise error rate. A case counts when its adjusted p-value is at most
//! [`ALPHA`] (0.05) and its rate moved that way:
//!
//! ```text
//! regression      correct rate fell         fix   correct rate rose
//! new incorrect   incorrect rate rose       new false PASS   false PASS rate rose
//! ```
//!
//! So an unchanged noisy judge shows a spurious regression in at most 5 % of comparisons
//! (checked by a seeded simulation below), whatever the number of cases. The price is power:
//! with 3 repeats the smallest possible p-value is 0.1 (3/3 → 0/3), so no single case can count;
//! 5 or more repeats are needed to see a case change at all, and more with many cases. Whether
//! the regressions outnumber the fixes by more than chance is then McNemar's exact test on
//! those counts. Runs without repeats keep integer counts of cases.

use serde::{Deserialize, Serialize};

use crate::{Outcome, Row};
use jevjudge_judge::Status;

/// The family-wise error rate of the per-case tests.
pub const ALPHA: f64 = 0.05;

/// A case whose rate of an event moved beyond chance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RateChange {
    /// The case id.
    pub id: String,
    /// Its scenario (BASE's).
    pub scenario: String,
    /// Events ÷ repeats in BASE.
    pub base_rate: f64,
    /// Events ÷ repeats in CANDIDATE.
    pub candidate_rate: f64,
    /// Fisher's exact two-sided p-value of the case's repeat counts.
    pub p_value: f64,
    /// The p-value after Holm's correction across the paired cases.
    pub adjusted_p: f64,
}

/// The noise-aware comparison of repeated runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoiseRule {
    /// Repeats per case in BASE.
    pub base_repeats: u64,
    /// Repeats per case in CANDIDATE.
    pub candidate_repeats: u64,
    /// Cases whose status differs between BASE's repeats ÷ paired cases.
    pub base_flip_rate: f64,
    /// 95 % Wilson interval of `base_flip_rate` (cases are the unit).
    pub base_flip_rate_ci: Option<[f64; 2]>,
    /// The same in CANDIDATE.
    pub candidate_flip_rate: f64,
    /// 95 % Wilson interval of `candidate_flip_rate`.
    pub candidate_flip_rate_ci: Option<[f64; 2]>,
    /// The per-case test: `fisher_exact` (two-sided).
    pub test: String,
    /// The correction across cases: `holm`.
    pub correction: String,
    /// The family-wise error rate a case is counted at.
    pub alpha: f64,
    /// Cases whose correct rate fell beyond chance, in BASE row order.
    pub regressions: Vec<RateChange>,
    /// Cases whose correct rate rose beyond chance.
    pub fixes: Vec<RateChange>,
    /// Cases whose incorrect rate (wrong PASS or FAIL) rose beyond chance.
    #[serde(default)]
    pub new_incorrect: Vec<RateChange>,
    /// Cases whose false PASS rate rose beyond chance.
    #[serde(default)]
    pub new_false_pass: Vec<RateChange>,
}

/// What one review of a case is counted as.
#[derive(Debug, Clone, Copy)]
enum Event {
    Correct,
    Incorrect,
    FalsePass,
}

impl Event {
    fn of(self, status: Status, expected_pass: bool) -> bool {
        let outcome = Outcome::of(status, expected_pass);
        match self {
            Event::Correct => outcome == Outcome::Correct,
            Event::Incorrect => outcome == Outcome::Incorrect,
            Event::FalsePass => outcome == Outcome::Incorrect && status == Status::Pass,
        }
    }
}

/// `(events, repeats)` of one case.
fn counts(row: &Row, event: Event) -> (u64, u64) {
    let verdicts = row.verdicts();
    let hits = verdicts
        .iter()
        .filter(|verdict| event.of(verdict.status, row.expected_pass))
        .count();
    (hits as u64, verdicts.len() as u64)
}

fn flip_rate(rows: &[&Row]) -> (f64, Option<[f64; 2]>) {
    let flipped = rows.iter().filter(|row| row.flipped()).count() as u64;
    let n = rows.len() as u64;
    let rate = if n == 0 {
        0.0
    } else {
        flipped as f64 / n as f64
    };
    let ci = jevjudge_stats::wilson(flipped, n, crate::risk::Z95).map(|(l, h)| [l, h]);
    (rate, ci)
}

/// The cases whose `event` rate moved beyond chance: `(rose, fell)`, each in BASE row order.
fn changes(base: &[&Row], candidate: &[&Row], event: Event) -> (Vec<RateChange>, Vec<RateChange>) {
    let tables: Vec<((u64, u64), (u64, u64))> = base
        .iter()
        .zip(candidate)
        .map(|(before, after)| (counts(before, event), counts(after, event)))
        .collect();
    let p_values: Vec<f64> = tables
        .iter()
        .map(|&((b, m_b), (c, m_c))| jevjudge_stats::fisher_exact(b, m_b - b, c, m_c - c))
        .collect();
    let adjusted = jevjudge_stats::holm(&p_values);
    let mut rose = Vec::new();
    let mut fell = Vec::new();
    for (i, &((b, m_b), (c, m_c))) in tables.iter().enumerate() {
        if adjusted[i] > ALPHA {
            continue;
        }
        let (base_rate, candidate_rate) = (b as f64 / m_b as f64, c as f64 / m_c as f64);
        let change = RateChange {
            id: base[i].id.clone(),
            scenario: base[i].scenario.clone(),
            base_rate,
            candidate_rate,
            p_value: p_values[i],
            adjusted_p: adjusted[i],
        };
        if candidate_rate > base_rate {
            rose.push(change);
        } else if candidate_rate < base_rate {
            fell.push(change);
        }
    }
    (rose, fell)
}

/// The noise rule for paired rows (same length, same cases in the same order); `None` when
/// neither run has repeats.
pub fn noise_rule(base: &[&Row], candidate: &[&Row]) -> Option<NoiseRule> {
    let repeats = |rows: &[&Row]| rows.iter().map(|r| r.verdicts().len()).max().unwrap_or(1);
    let (base_repeats, candidate_repeats) = (repeats(base), repeats(candidate));
    if base_repeats < 2 && candidate_repeats < 2 {
        return None;
    }
    let (fixes, regressions) = changes(base, candidate, Event::Correct);
    let (new_incorrect, _) = changes(base, candidate, Event::Incorrect);
    let (new_false_pass, _) = changes(base, candidate, Event::FalsePass);
    let (base_flip_rate, base_flip_rate_ci) = flip_rate(base);
    let (candidate_flip_rate, candidate_flip_rate_ci) = flip_rate(candidate);
    Some(NoiseRule {
        base_repeats: base_repeats as u64,
        candidate_repeats: candidate_repeats as u64,
        base_flip_rate,
        base_flip_rate_ci,
        candidate_flip_rate,
        candidate_flip_rate_ci,
        test: "fisher_exact".to_owned(),
        correction: "holm".to_owned(),
        alpha: ALPHA,
        regressions,
        fixes,
        new_incorrect,
        new_false_pass,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        Report,
        compare::{CompareOptions, compare},
        repeats::combine,
        test_support,
    };
    use jevjudge_judge::{BackendKind, Findings, Status};

    /// A case expected to pass, with these statuses over its repeats.
    fn case(id: &str, statuses: &[Status]) -> Row {
        let rows = statuses
            .iter()
            .map(|&status| {
                let verdict = test_support::verdict("v", status, Findings::default());
                test_support::row("s", id, true, verdict)
            })
            .collect();
        combine(rows).unwrap()
    }

    fn report(rows: Vec<Row>) -> Report {
        Report {
            backend: BackendKind::Injected,
            ..test_support::report("v", rows)
        }
    }

    use Status::{Fail as F, Inconclusive as I, Pass as P};

    // Ten steady cases, plus: `steady` falls 6/6 → 0/6, `noisy` 4/6 → 2/6, `wobble` 6/6 →
    // 4/6, `fixed` rises 0/6 → 6/6. scipy: fisher_exact([[6, 0], [0, 6]]) = 0.0021645021645,
    // [[4, 2], [2, 4]] = 0.5671, [[6, 0], [4, 2]] = 0.4545; statsmodels multipletests(…,
    // "holm") over the 14 cases: 0.0303 for `steady` and `fixed`, 1 for the others.
    #[test]
    fn repeated_runs_count_only_changes_an_exact_test_finds_after_holm() {
        let six = |status: Status| [status; 6];
        let mix = |passes: usize| -> [Status; 6] {
            std::array::from_fn(|i| if i < passes { P } else { F })
        };
        let run = |outcomes: [[Status; 6]; 4]| -> Vec<Row> {
            let mut rows: Vec<Row> = (0..10).map(|i| case(&format!("ok{i}"), &six(P))).collect();
            let named = ["steady", "noisy", "wobble", "fixed"]
                .into_iter()
                .zip(outcomes);
            rows.extend(named.map(|(id, outcome)| case(id, &outcome)));
            rows
        };
        let base = run([six(P), mix(4), six(P), six(F)]);
        let candidate = run([six(F), mix(2), mix(4), six(P)]);
        let comparison =
            compare(&report(base), &report(candidate), CompareOptions::default()).unwrap();
        let noise = comparison.noise.as_ref().unwrap();
        let ids = |list: &[RateChange]| list.iter().map(|c| c.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&noise.regressions), ["steady"]);
        assert_eq!(ids(&noise.fixes), ["fixed"]);
        assert!((noise.regressions[0].p_value - 0.002_164_502_164_502_164_5).abs() < 1e-12);
        assert!(
            (noise.regressions[0].adjusted_p - 14.0 * 0.002_164_502_164_502_164_5).abs() < 1e-12
        );
        // Every case here is expected to pass: the incorrect reviews are the FAILs.
        assert_eq!(ids(&noise.new_incorrect), ["steady"]);
        assert!(noise.new_false_pass.is_empty());
        assert_eq!((comparison.regressions, comparison.fixes), (1, 1));
        assert_eq!(comparison.mcnemar_p, 1.0);
        assert!((noise.base_flip_rate - 1.0 / 14.0).abs() < 1e-12);
        assert!((noise.candidate_flip_rate - 2.0 / 14.0).abs() < 1e-12);
        let document = serde_json::to_value(comparison.to_document()).unwrap();
        assert_eq!(document["noise"]["regressions"][0]["id"], "steady");
        assert_eq!(document["noise"]["test"], "fisher_exact");
        assert_eq!(document["regressions"], 1);
    }

    // With three repeats no single case can reach p ≤ 0.05 (3/3 → 0/3 gives 0.1): an honest
    // exact test says three repeats cannot tell one case's change from noise.
    #[test]
    fn three_repeats_cannot_show_a_single_case_changed() {
        let base = vec![case("a", &[P, P, P]), case("b", &[P, P, P])];
        let candidate = vec![case("a", &[F, F, F]), case("b", &[P, P, P])];
        let comparison =
            compare(&report(base), &report(candidate), CompareOptions::default()).unwrap();
        let noise = comparison.noise.unwrap();
        assert!(noise.regressions.is_empty());
        assert_eq!(comparison.regressions, 0);
    }

    // The guarantee is not bought by never counting: with 10 repeats, 5 of 150 cases that go
    // from always right to always wrong are each found after Holm (p = 2/C(20, 10) ≈ 1.1e-5,
    // × 150 ≈ 0.0016), while 145 steady cases are not.
    #[test]
    fn ten_repeats_find_cases_that_broke_among_a_hundred_and_fifty() {
        let run = |broken: bool| -> Vec<Row> {
            (0..150)
                .map(|i| {
                    let status = if broken && i < 5 { F } else { P };
                    case(&format!("c{i}"), &[status; 10])
                })
                .collect()
        };
        let comparison = compare(
            &report(run(false)),
            &report(run(true)),
            CompareOptions::default(),
        )
        .unwrap();
        assert_eq!(comparison.regressions, 5);
        assert_eq!(comparison.new_incorrect, 5);
        let noise = comparison.noise.unwrap();
        assert!(noise.regressions.iter().all(|c| c.adjusted_p < 0.002));
    }

    // Single runs keep the exact McNemar on single verdicts: no noise rule.
    #[test]
    fn single_runs_have_no_noise_rule() {
        let comparison = compare(
            &report(vec![case("a", &[P])]),
            &report(vec![case("a", &[F])]),
            CompareOptions::default(),
        )
        .unwrap();
        assert!(comparison.noise.is_none());
        assert_eq!(comparison.regressions, 1);
    }

    /// One simulated case of an unchanged noisy judge: `expected_pass`, and the chances of a
    /// correct verdict and of an abstention (the rest is a wrong verdict).
    fn simulated_case(
        id: &str,
        expected_pass: bool,
        correct: f64,
        abstain: f64,
        repeats: usize,
        rng: &mut jevjudge_stats::SplitMix64,
    ) -> Row {
        let (right, wrong) = if expected_pass { (P, F) } else { (F, P) };
        let rows = (0..repeats)
            .map(|_| {
                let draw = rng.next_f64();
                let status = if draw < correct {
                    right
                } else if draw < correct + abstain {
                    I
                } else {
                    wrong
                };
                let verdict = test_support::verdict("v", status, Findings::default());
                test_support::row("s", id, expected_pass, verdict)
            })
            .collect();
        combine(rows).unwrap()
    }

    // An unchanged noisy judge (150 cases, 5 repeats; 60 % of cases steady, the rest correct
    // 80 %, 50 % or 30 % of the time, abstaining or wrong otherwise) compared with itself 400
    // times: each gate — regressions, new incorrect, new false PASS — raises a false alarm in at
    // most 5 % of the comparisons, and so does any of them.
    #[test]
    fn an_unchanged_noisy_judge_with_repeats_raises_a_false_alarm_at_most_five_percent_of_the_time()
    {
        let mut rng = jevjudge_stats::SplitMix64::new(2024);
        let kinds = [(1.0, 0.0), (0.8, 0.1), (0.5, 0.25), (0.3, 0.3)];
        let simulations = 400;
        let mut alarms = [0u32; 4];
        for _ in 0..simulations {
            let cases: Vec<(bool, (f64, f64))> = (0..150)
                .map(|_| {
                    let kind = match rng.next_f64() {
                        x if x < 0.6 => kinds[0],
                        x if x < 0.75 => kinds[1],
                        x if x < 0.9 => kinds[2],
                        _ => kinds[3],
                    };
                    (rng.next_f64() < 0.5, kind)
                })
                .collect();
            let mut run = || -> Vec<Row> {
                cases
                    .iter()
                    .enumerate()
                    .map(|(i, &(expected, (correct, abstain)))| {
                        simulated_case(&format!("c{i}"), expected, correct, abstain, 5, &mut rng)
                    })
                    .collect()
            };
            let (base, candidate) = (run(), run());
            let base: Vec<&Row> = base.iter().collect();
            let candidate: Vec<&Row> = candidate.iter().collect();
            let rule = noise_rule(&base, &candidate).unwrap();
            let flags = [
                !rule.regressions.is_empty(),
                !rule.new_incorrect.is_empty(),
                !rule.new_false_pass.is_empty(),
            ];
            for (alarm, flag) in alarms.iter_mut().zip(flags) {
                *alarm += u32::from(flag);
            }
            alarms[3] += u32::from(flags.iter().any(|f| *f));
        }
        let rates = alarms.map(|a| f64::from(a) / f64::from(simulations));
        eprintln!(
            "false-alarm rates over {simulations} comparisons: regressions {}, new incorrect {}, new false PASS {}, any {}",
            rates[0], rates[1], rates[2], rates[3]
        );
        assert!(rates.iter().all(|rate| *rate <= 0.05), "{rates:?}");
    }
}
