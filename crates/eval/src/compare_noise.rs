//! `compare` with repeated runs: a case is a regression only when its correct rate fell by
//! more than the noise the runs themselves show (issue 14 item 5).
//!
//! For each paired case, `a_b` and `a_c` are its correct rates in BASE and CANDIDATE (correct
//! reviews ÷ repeats; for a case expected to pass, its pass rate), over `m_b` and `m_c`
//! repeats. The noise of a run with `m ≥ 2` repeats is the within-case variance of a review's
//! correctness, `s² = a·(1 − a)·m / (m − 1)` per case (unbiased), and
//!
//! ```text
//! v_run  = the mean of s² over the cases of each repeated run, averaged over those runs
//! v_case = the mean of this case's own s² over the repeated runs
//! v      = max(v_run, v_case)
//! τ      = z · √(v · (1/m_b + 1/m_c))          z = 1.96
//! regression ⇔ a_b − a_c > τ   (and a_b > a_c);   fix ⇔ a_c − a_b > τ
//! ```
//!
//! `τ` is the 95 % bound of the difference two rates of this case would show by noise alone.
//! Taking the larger of the run's and the case's own variance keeps a case the runs saw flip
//! from counting as a regression when it merely flips again, while a case that never flipped
//! in either run is judged by the run-wide noise. With no noise at all (`v = 0`, every case
//! got the same verdict on every repeat) any fall counts, exactly as with single runs. Whether
//! the regressions outnumber the fixes by more than chance is then the exact sign test
//! (McNemar's exact test) on those counts. Runs without repeats keep the exact McNemar test on
//! the single verdicts.

use serde::{Deserialize, Serialize};

use crate::{Row, risk::Z95};

/// A case whose correct rate moved by more than the noise.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RateChange {
    /// The case id.
    pub id: String,
    /// Its scenario (BASE's).
    pub scenario: String,
    /// Correct reviews ÷ repeats in BASE.
    pub base_rate: f64,
    /// Correct reviews ÷ repeats in CANDIDATE.
    pub candidate_rate: f64,
    /// The noise bound τ the change exceeded.
    pub threshold: f64,
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
    /// The same in CANDIDATE.
    pub candidate_flip_rate: f64,
    /// `v_run`: the mean within-case variance of a review's correctness in the repeated runs.
    pub within_case_variance: f64,
    /// The normal quantile of the bound (1.96).
    pub z: f64,
    /// Cases whose correct rate fell by more than their bound, in BASE row order.
    pub regressions: Vec<RateChange>,
    /// Cases whose correct rate rose by more than their bound.
    pub fixes: Vec<RateChange>,
}

fn rate_and_variance(row: &Row) -> (f64, u64, Option<f64>) {
    let m = row.verdicts().len() as u64;
    let a = row.correct_reviews() as f64 / m.max(1) as f64;
    let variance = (m >= 2).then(|| a * (1.0 - a) * m as f64 / (m - 1) as f64);
    (a, m, variance)
}

fn flip_rate(rows: &[&Row]) -> f64 {
    if rows.is_empty() {
        return 0.0;
    }
    rows.iter().filter(|row| row.flipped()).count() as f64 / rows.len() as f64
}

/// The noise rule for paired rows (same length, same cases in the same order); `None` when
/// neither run has repeats.
pub fn noise_rule(base: &[&Row], candidate: &[&Row]) -> Option<NoiseRule> {
    let repeats = |rows: &[&Row]| rows.iter().map(|r| r.verdicts().len()).max().unwrap_or(1);
    let (base_repeats, candidate_repeats) = (repeats(base), repeats(candidate));
    if base_repeats < 2 && candidate_repeats < 2 {
        return None;
    }
    let mean_variance = |rows: &[&Row]| -> Option<f64> {
        let variances: Vec<f64> = rows.iter().filter_map(|r| rate_and_variance(r).2).collect();
        (!variances.is_empty()).then(|| variances.iter().sum::<f64>() / variances.len() as f64)
    };
    let runs: Vec<f64> = [mean_variance(base), mean_variance(candidate)]
        .into_iter()
        .flatten()
        .collect();
    let within = if runs.is_empty() {
        0.0
    } else {
        runs.iter().sum::<f64>() / runs.len() as f64
    };
    let mut regressions = Vec::new();
    let mut fixes = Vec::new();
    for (before, after) in base.iter().zip(candidate) {
        let (a_b, m_b, s_b) = rate_and_variance(before);
        let (a_c, m_c, s_c) = rate_and_variance(after);
        let own: Vec<f64> = [s_b, s_c].into_iter().flatten().collect();
        let own = if own.is_empty() {
            0.0
        } else {
            own.iter().sum::<f64>() / own.len() as f64
        };
        let v = within.max(own);
        let threshold = Z95 * (v * (1.0 / m_b as f64 + 1.0 / m_c as f64)).sqrt();
        let change = |base_rate, candidate_rate| RateChange {
            id: before.id.clone(),
            scenario: before.scenario.clone(),
            base_rate,
            candidate_rate,
            threshold,
        };
        if a_b - a_c > threshold && a_b > a_c {
            regressions.push(change(a_b, a_c));
        } else if a_c - a_b > threshold && a_c > a_b {
            fixes.push(change(a_b, a_c));
        }
    }
    Some(NoiseRule {
        base_repeats: base_repeats as u64,
        candidate_repeats: candidate_repeats as u64,
        base_flip_rate: flip_rate(base),
        candidate_flip_rate: flip_rate(candidate),
        within_case_variance: within,
        z: Z95,
        regressions,
        fixes,
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

    use Status::{Fail as F, Pass as P};

    // Twenty steady cases, plus: `steady` falls 3/3 → 0/3 (no noise in either run: a
    // regression), `noisy` flips in both runs and falls 2/3 → 1/3 (within its own noise: not a
    // regression), `wobble` falls 3/3 → 2/3 (its candidate noise covers it), `fixed` rises
    // 0/3 → 3/3.
    //
    // By hand: per-case s² = a(1−a)·3/2: 0 for 3/3 and 0/3, 1/3 for 2/3 and 1/3.
    // base: noisy 1/3 → mean over 24 cases = (1/3)/24; candidate: noisy and wobble 1/3 each →
    // (2/3)/24; v_run = (1/72 + 1/36)/2 = 1/48.
    // steady: v = max(1/48, 0) → τ = 1.96·√(1/48 · 2/3) = 0.2310 < 1 → regression (Python:
    // 1.9599639845400536 * sqrt(1/48 * 2/3) = 0.23098397072494625).
    // noisy:  v = max(1/48, 1/3) → τ = 1.96·√(1/3 · 2/3) = 0.9240 > 1/3 → not.
    // wobble: v = max(1/48, (0 + 1/3)/2) → τ = 1.96·√(1/6 · 2/3) = 0.6533 > 1/3 → not.
    // fixed:  τ = 0.2310 < 1 → fix.
    #[test]
    fn repeated_runs_count_only_changes_beyond_the_noise() {
        let steady_rows = |n: usize| -> Vec<Row> {
            (0..n)
                .map(|i| case(&format!("ok{i}"), &[P, P, P]))
                .collect()
        };
        // The steady rows, then steady, noisy, wobble and fixed with these outcomes.
        let run = |outcomes: [[Status; 3]; 4]| -> Vec<Row> {
            let mut rows = steady_rows(20);
            let named = ["steady", "noisy", "wobble", "fixed"]
                .into_iter()
                .zip(outcomes);
            rows.extend(named.map(|(id, outcome)| case(id, &outcome)));
            rows
        };
        let base = run([[P, P, P], [P, F, P], [P, P, P], [F, F, F]]);
        let candidate = run([[F, F, F], [F, P, F], [P, F, P], [P, P, P]]);
        let comparison =
            compare(&report(base), &report(candidate), CompareOptions::default()).unwrap();
        let noise = comparison.noise.as_ref().unwrap();
        assert!((noise.within_case_variance - 1.0 / 48.0).abs() < 1e-12);
        let ids = |list: &[RateChange]| list.iter().map(|c| c.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&noise.regressions), ["steady"]);
        assert_eq!(ids(&noise.fixes), ["fixed"]);
        assert!((noise.regressions[0].threshold - 0.230_983_970_724_946).abs() < 1e-9);
        assert_eq!((comparison.regressions, comparison.fixes), (1, 1));
        assert_eq!(comparison.mcnemar_p, 1.0);
        assert!((noise.base_flip_rate - 1.0 / 24.0).abs() < 1e-12);
        assert!((noise.candidate_flip_rate - 2.0 / 24.0).abs() < 1e-12);
        let document = serde_json::to_value(comparison.to_document()).unwrap();
        assert_eq!(document["noise"]["regressions"][0]["id"], "steady");
        assert_eq!(document["regressions"], 1);
    }

    // Without noise in either run every fall counts, as with single runs.
    #[test]
    fn noiseless_repeats_count_every_fall() {
        let base = vec![case("a", &[P, P]), case("b", &[P, P])];
        let candidate = vec![case("a", &[F, F]), case("b", &[P, P])];
        let comparison =
            compare(&report(base), &report(candidate), CompareOptions::default()).unwrap();
        let noise = comparison.noise.unwrap();
        assert_eq!(noise.within_case_variance, 0.0);
        assert_eq!(noise.regressions.len(), 1);
        assert_eq!(noise.regressions[0].threshold, 0.0);
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
}
