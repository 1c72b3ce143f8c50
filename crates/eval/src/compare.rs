//! Comparing two runs case by case (the `compare` command; cli-and-formats.md §1.5).
//!
//! Rows are paired by case id. A *flip* is a pair whose verdict status changed; a
//! *regression* is a case correct in BASE and not correct in CANDIDATE (rule 53's
//! classification: incorrect, abstained or errored), a *fix* the reverse. Whether the
//! difference is more than chance is McNemar's exact test on the discordant pairs
//! ([`jevjudge_stats::mcnemar_exact`]): the pairs correct in exactly one run are the only ones
//! that carry information about which run is better.
//!
//! A *new incorrect* case is incorrect in CANDIDATE and was not in BASE (correct, abstained
//! or errored), a *new false PASS* is a false PASS in CANDIDATE that was not one in BASE: the
//! risk a candidate adds, which "correct → not correct" misses when abstentions turn into
//! wrong verdicts. The change in accuracy, coverage and decided accuracy carries a paired
//! interval ([`crate::compare_change`]).
//!
//! With repeated runs (`eval --repeat`), each of these counts only cases that Fisher's exact
//! test on the repeat counts finds changed after Holm's correction across cases, and McNemar's
//! test runs on those counts; see [`crate::compare_noise`].
//!
//! Why refuse reports of different case sets? Accuracy over different cases is not a
//! comparison; `--intersect` ([`CompareOptions::intersect`]) restricts both to the cases they
//! share, and every figure (summaries included) is then computed over the pairs only.

use std::collections::{HashMap, HashSet};

use jevjudge_judge::{BackendKind, Status};
use jevjudge_stats::mcnemar_exact;
use serde::{Deserialize, Serialize};

use crate::{Outcome, Report, Row, Summary, summarize};

/// How to pair the rows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CompareOptions {
    /// Compare the cases both reports hold instead of refusing different case sets.
    pub intersect: bool,
}

/// Which of the two reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The first (reference) report.
    Base,
    /// The second report.
    Candidate,
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Side::Base => "the base report",
            Side::Candidate => "the candidate report",
        })
    }
}

/// Two reports that cannot be compared.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CompareError {
    /// A report holds summaries but no rows (a streaming run).
    #[error(
        "{0} holds no rows (a streaming run keeps them in its rows file): compare needs the rows"
    )]
    NoRows(Side),
    /// A case id appears twice in one report.
    #[error("{side} has case `{id}` twice")]
    DuplicateId {
        /// Which report.
        side: Side,
        /// The id.
        id: String,
    },
    /// The reports hold different cases (and `intersect` is off).
    #[error(
        "the reports hold different cases: {} only in the base report{}, {} only in the candidate{}; {} both hold",
        only_in_base.len(), examples(only_in_base), only_in_candidate.len(), examples(only_in_candidate), crate::plural::count(*common, "case")
    )]
    DifferentCases {
        /// Ids only the base report holds, in its order.
        only_in_base: Vec<String>,
        /// Ids only the candidate holds, in its order.
        only_in_candidate: Vec<String>,
        /// Ids both hold.
        common: usize,
    },
    /// A case has a different `expected_pass` in the two reports.
    #[error(
        "case `{id}` has expected_pass {base} in the base report and {candidate} in the candidate: these are different cases"
    )]
    LabelChanged {
        /// The id.
        id: String,
        /// Its label in BASE.
        base: bool,
        /// Its label in CANDIDATE.
        candidate: bool,
    },
    /// No case is in both reports.
    #[error("the reports have no case in common")]
    NoCommonCases,
}

fn examples(ids: &[String]) -> String {
    if ids.is_empty() {
        return String::new();
    }
    let shown: Vec<String> = ids.iter().take(3).map(|id| format!("`{id}`")).collect();
    let more = if ids.len() > 3 { ", …" } else { "" };
    format!(" ({}{more})", shown.join(", "))
}

/// One run's figures over the paired rows.
#[derive(Debug, Clone, PartialEq)]
pub struct RunFigures {
    /// The report's definition version.
    pub definition_version: String,
    /// The report's backend.
    pub backend: BackendKind,
    /// Whether the report's run completed.
    pub complete: bool,
    /// Figures over the paired rows.
    pub summary: Summary,
    /// Figures per scenario over the paired rows, in first-seen order.
    pub scenarios: Vec<(String, Summary)>,
    /// Models that answered the paired rows, in first-seen order.
    pub models: Vec<String>,
}

/// A case whose verdict status changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flip {
    /// The case id.
    pub id: String,
    /// Its scenario in BASE.
    pub scenario: String,
    /// The BASE status.
    pub base: Status,
    /// The CANDIDATE status.
    pub candidate: Status,
    /// How the BASE row counts.
    pub base_outcome: Outcome,
    /// How the CANDIDATE row counts.
    pub candidate_outcome: Outcome,
}

impl Flip {
    /// `PASS->FAIL` and so on.
    pub fn transition(&self) -> String {
        transition(self.base, self.candidate)
    }

    /// Correct in BASE, not in CANDIDATE.
    pub fn is_regression(&self) -> bool {
        self.base_outcome == Outcome::Correct && self.candidate_outcome != Outcome::Correct
    }

    /// Not correct in BASE, correct in CANDIDATE.
    pub fn is_fix(&self) -> bool {
        self.base_outcome != Outcome::Correct && self.candidate_outcome == Outcome::Correct
    }
}

/// `PASS->FAIL`: the transition key of the compare document.
pub fn transition(base: Status, candidate: Status) -> String {
    format!("{base}->{candidate}")
}

/// The statuses in the order transitions are listed.
const STATUSES: [Status; 4] = [
    Status::Pass,
    Status::Fail,
    Status::Inconclusive,
    Status::Error,
];

/// Two runs compared.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// Paired cases.
    pub pairs: u64,
    /// BASE over the pairs.
    pub base: RunFigures,
    /// CANDIDATE over the pairs.
    pub candidate: RunFigures,
    /// Counts per changed status, `PASS->FAIL` …, in a fixed order (PASS, FAIL,
    /// INCONCLUSIVE, ERROR for each side), only those that occur.
    pub transitions: Vec<(String, u64)>,
    /// Every flip, in BASE row order.
    pub flips: Vec<Flip>,
    /// Cases correct in BASE only.
    pub regressions: u64,
    /// Cases correct in CANDIDATE only.
    pub fixes: u64,
    /// McNemar's exact two-sided p-value on (regressions, fixes).
    pub mcnemar_p: f64,
    /// Cases incorrect in CANDIDATE and not in BASE (correct, abstained or errored there);
    /// with repeats, cases whose incorrect rate rose beyond chance.
    pub new_incorrect: u64,
    /// Cases false PASS in CANDIDATE and not in BASE; with repeats, cases whose false PASS
    /// rate rose beyond chance.
    pub new_false_pass: u64,
    /// The ids behind `new_incorrect` and `new_false_pass` (single runs; with repeats they are
    /// in `noise`), in BASE row order.
    pub new_incorrect_ids: Vec<String>,
    /// See `new_incorrect_ids`.
    pub new_false_pass_ids: Vec<String>,
    /// The change in accuracy, coverage and decided accuracy with paired 95 % intervals.
    pub changes: crate::compare_change::Changes,
    /// With `intersect`: ids only BASE holds (left out).
    pub only_in_base: Vec<String>,
    /// With `intersect`: ids only CANDIDATE holds (left out).
    pub only_in_candidate: Vec<String>,
    /// With repeated runs: the noise-aware rule that decided `regressions`, `fixes` and
    /// `mcnemar_p` (see [`crate::compare_noise`]); `None` for single runs.
    pub noise: Option<crate::compare_noise::NoiseRule>,
}

fn index(report: &Report, side: Side) -> Result<HashMap<&str, &Row>, CompareError> {
    if report.rows.is_empty() && report.overall.total > 0 {
        return Err(CompareError::NoRows(side));
    }
    let mut by_id = HashMap::with_capacity(report.rows.len());
    for row in &report.rows {
        if by_id.insert(row.id.as_str(), row).is_some() {
            return Err(CompareError::DuplicateId {
                side,
                id: row.id.clone(),
            });
        }
    }
    Ok(by_id)
}

fn figures(report: &Report, rows: &[&Row]) -> RunFigures {
    let (summary, scenarios) = summarize(rows.iter().copied(), None);
    let mut models: Vec<String> = Vec::new();
    for row in rows {
        if let Some(model) = &row.verdict.model {
            if !models.contains(model) {
                models.push(model.clone());
            }
        }
    }
    RunFigures {
        definition_version: report.definition_version.clone(),
        backend: report.backend,
        complete: report.complete,
        summary,
        scenarios,
        models,
    }
}

/// Compares CANDIDATE with BASE, pairing rows by case id.
pub fn compare(
    base: &Report,
    candidate: &Report,
    options: CompareOptions,
) -> Result<Comparison, CompareError> {
    let base_ids = index(base, Side::Base)?;
    let candidate_ids = index(candidate, Side::Candidate)?;
    // The ids of `report` that `other` lacks, in report order.
    let missing = |report: &Report, other: &HashMap<&str, &Row>| -> Vec<String> {
        report
            .rows
            .iter()
            .filter(|row| !other.contains_key(row.id.as_str()))
            .map(|row| row.id.clone())
            .collect()
    };
    let only_in_base = missing(base, &candidate_ids);
    let only_in_candidate = missing(candidate, &base_ids);
    let common = base.rows.len() - only_in_base.len();
    if (!only_in_base.is_empty() || !only_in_candidate.is_empty()) && !options.intersect {
        return Err(CompareError::DifferentCases {
            only_in_base,
            only_in_candidate,
            common,
        });
    }
    if common == 0 && !(base.rows.is_empty() && candidate.rows.is_empty()) {
        return Err(CompareError::NoCommonCases);
    }
    let mut base_rows: Vec<&Row> = Vec::with_capacity(common);
    let mut candidate_rows: Vec<&Row> = Vec::with_capacity(common);
    for row in &base.rows {
        if let Some(other) = candidate_ids.get(row.id.as_str()) {
            if row.expected_pass != other.expected_pass {
                return Err(CompareError::LabelChanged {
                    id: row.id.clone(),
                    base: row.expected_pass,
                    candidate: other.expected_pass,
                });
            }
            base_rows.push(row);
            candidate_rows.push(other);
        }
    }
    let mut flips = Vec::new();
    let mut new_incorrect_ids = Vec::new();
    let mut new_false_pass_ids = Vec::new();
    let mut regressions = 0u64;
    let mut fixes = 0u64;
    let mut counts: HashMap<(Status, Status), u64> = HashMap::new();
    for (before, after) in base_rows.iter().zip(&candidate_rows) {
        let base_outcome = Outcome::of(before.verdict.status, before.expected_pass);
        let candidate_outcome = Outcome::of(after.verdict.status, after.expected_pass);
        if base_outcome == Outcome::Correct && candidate_outcome != Outcome::Correct {
            regressions += 1;
        }
        if base_outcome != Outcome::Correct && candidate_outcome == Outcome::Correct {
            fixes += 1;
        }
        if base_outcome != Outcome::Incorrect && candidate_outcome == Outcome::Incorrect {
            new_incorrect_ids.push(before.id.clone());
        }
        let false_pass = |row: &Row| {
            row.verdict.status == Status::Pass
                && Outcome::of(row.verdict.status, row.expected_pass) == Outcome::Incorrect
        };
        if !false_pass(before) && false_pass(after) {
            new_false_pass_ids.push(before.id.clone());
        }
        if before.verdict.status != after.verdict.status {
            *counts
                .entry((before.verdict.status, after.verdict.status))
                .or_default() += 1;
            flips.push(Flip {
                id: before.id.clone(),
                scenario: before.scenario.clone(),
                base: before.verdict.status,
                candidate: after.verdict.status,
                base_outcome,
                candidate_outcome,
            });
        }
    }
    let transitions = STATUSES
        .iter()
        .flat_map(|from| STATUSES.iter().map(move |to| (*from, *to)))
        .filter_map(|key| {
            counts
                .get(&key)
                .map(|count| (transition(key.0, key.1), *count))
        })
        .collect();
    let (only_in_base, only_in_candidate) = if options.intersect {
        (only_in_base, only_in_candidate)
    } else {
        (Vec::new(), Vec::new())
    };
    // Repeated runs: a case regresses only beyond the noise the runs show.
    let noise = crate::compare_noise::noise_rule(&base_rows, &candidate_rows);
    let (mut new_incorrect, mut new_false_pass) = (
        new_incorrect_ids.len() as u64,
        new_false_pass_ids.len() as u64,
    );
    if let Some(rule) = &noise {
        regressions = rule.regressions.len() as u64;
        fixes = rule.fixes.len() as u64;
        new_incorrect = rule.new_incorrect.len() as u64;
        new_false_pass = rule.new_false_pass.len() as u64;
        new_incorrect_ids.clear();
        new_false_pass_ids.clear();
    }
    let base_figures = figures(base, &base_rows);
    let candidate_figures = figures(candidate, &candidate_rows);
    let changes = crate::compare_change::changes(
        &base_rows,
        &candidate_rows,
        &base_figures.summary,
        &candidate_figures.summary,
    );
    Ok(Comparison {
        new_incorrect,
        new_false_pass,
        new_incorrect_ids,
        new_false_pass_ids,
        changes,
        noise,
        pairs: base_rows.len() as u64,
        base: base_figures,
        candidate: candidate_figures,
        transitions,
        flips,
        regressions,
        fixes,
        mcnemar_p: mcnemar_exact(regressions, fixes),
        only_in_base,
        only_in_candidate,
    })
}

/// One side of the compare document: the summary's fields, then `models`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SideDocument {
    /// Figures over the paired rows.
    #[serde(flatten)]
    pub summary: Summary,
    /// Models that answered, in first-seen order.
    pub models: Vec<String>,
}

/// The `compare --json` document (cli-and-formats.md §1.5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareDocument {
    /// Paired cases.
    pub pairs: u64,
    /// BASE.
    pub base: SideDocument,
    /// CANDIDATE.
    pub candidate: SideDocument,
    /// Counts of changed statuses.
    #[serde(with = "crate::ordered_map")]
    pub transitions: Vec<(String, u64)>,
    /// Correct in BASE, not in CANDIDATE.
    pub regressions: u64,
    /// Correct in CANDIDATE, not in BASE.
    pub fixes: u64,
    /// McNemar's exact two-sided p-value.
    pub mcnemar_p: f64,
    /// Cases incorrect in CANDIDATE and not in BASE (with repeats: beyond chance).
    #[serde(default)]
    pub new_incorrect: u64,
    /// Cases false PASS in CANDIDATE and not in BASE (with repeats: beyond chance).
    #[serde(default)]
    pub new_false_pass: u64,
    /// The change in accuracy, coverage and decided accuracy, each with its paired interval.
    #[serde(default)]
    pub changes: crate::compare_change::Changes,
    /// With repeated runs: each run's flip rate, the noise and the cases beyond it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<crate::compare_noise::NoiseRule>,
}

impl Comparison {
    /// The `--json` document.
    pub fn to_document(&self) -> CompareDocument {
        let side = |figures: &RunFigures| SideDocument {
            summary: figures.summary.clone(),
            models: figures.models.clone(),
        };
        CompareDocument {
            pairs: self.pairs,
            base: side(&self.base),
            candidate: side(&self.candidate),
            transitions: self.transitions.clone(),
            regressions: self.regressions,
            fixes: self.fixes,
            mcnemar_p: self.mcnemar_p,
            new_incorrect: self.new_incorrect,
            new_false_pass: self.new_false_pass,
            changes: self.changes.clone(),
            noise: self.noise.clone(),
        }
    }

    /// The scenarios of either run in first-seen order (BASE's first), each with its BASE and
    /// CANDIDATE figures when that run has rows of it.
    pub fn scenarios(&self) -> Vec<(String, Option<&Summary>, Option<&Summary>)> {
        let mut names: Vec<&str> = Vec::new();
        let mut seen: HashSet<&str> = HashSet::new();
        for (name, _) in self.base.scenarios.iter().chain(&self.candidate.scenarios) {
            if seen.insert(name) {
                names.push(name);
            }
        }
        let find = |list: &'_ [(String, Summary)], name: &str| -> Option<usize> {
            list.iter().position(|(n, _)| n == name)
        };
        names
            .into_iter()
            .map(|name| {
                (
                    name.to_owned(),
                    find(&self.base.scenarios, name).map(|i| &self.base.scenarios[i].1),
                    find(&self.candidate.scenarios, name).map(|i| &self.candidate.scenarios[i].1),
                )
            })
            .collect()
    }
}

impl Comparison {
    /// Adds the precisions at `prevalence` to both sides' summaries.
    pub fn set_prevalence(&mut self, prevalence: f64) {
        for figures in [&mut self.base, &mut self.candidate] {
            figures.summary.risk.at_prevalence = Some(figures.summary.at_prevalence(prevalence));
            for (_, summary) in &mut figures.scenarios {
                summary.risk.at_prevalence = Some(summary.at_prevalence(prevalence));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support;
    use jevjudge_judge::{ErrorCode, Findings, Verdict};
    use std::time::Duration;

    fn row(id: &str, expected_pass: bool, status: Status) -> Row {
        let verdict = Verdict {
            error: if status == Status::Error {
                ErrorCode::Backend
            } else {
                ErrorCode::None
            },
            model: Some("m".into()),
            elapsed: Duration::from_millis(2),
            ..test_support::verdict("v", status, Findings::default())
        };
        let scenario = if id.starts_with('a') { "alpha" } else { "beta" };
        test_support::row(scenario, id, expected_pass, verdict)
    }

    fn report(rows: Vec<Row>) -> Report {
        test_support::report("v", rows)
    }

    use Status::{Error as E, Fail as F, Inconclusive as I, Pass as P};

    #[test]
    fn transitions_regressions_fixes_and_mcnemar() {
        let base = report(vec![
            row("a1", true, P),  // correct → FAIL: regression
            row("a2", true, P),  // correct → INCONCLUSIVE: regression
            row("a3", false, F), // correct → ERROR: regression
            row("b1", true, F),  // incorrect → PASS: fix
            row("b2", true, P),  // unchanged
            row("b3", false, I), // abstained → FAIL: fix
        ]);
        let candidate = report(vec![
            row("b3", false, F),
            row("a1", true, F),
            row("a2", true, I),
            row("a3", false, E),
            row("b1", true, P),
            row("b2", true, P),
        ]);
        let comparison = compare(&base, &candidate, CompareOptions::default()).unwrap();
        assert_eq!(comparison.pairs, 6);
        assert_eq!(comparison.regressions, 3);
        assert_eq!(comparison.fixes, 2);
        // 2 · (C(5,0) + C(5,1) + C(5,2)) / 32 = 2 · 16 / 32 = 1
        assert_eq!(comparison.mcnemar_p, 1.0);
        let keys: Vec<(&str, u64)> = comparison
            .transitions
            .iter()
            .map(|(k, v)| (k.as_str(), *v))
            .collect();
        assert_eq!(
            keys,
            [
                ("PASS->FAIL", 1),
                ("PASS->INCONCLUSIVE", 1),
                ("FAIL->PASS", 1),
                ("FAIL->ERROR", 1),
                ("INCONCLUSIVE->FAIL", 1),
            ]
        );
        assert_eq!(comparison.flips.len(), 5);
        assert_eq!(comparison.flips[0].id, "a1");
        assert!(comparison.flips[0].is_regression());
        assert_eq!(comparison.base.summary.correct, 4);
        assert_eq!(comparison.candidate.summary.correct, 3);
        let document = serde_json::to_value(comparison.to_document()).unwrap();
        assert_eq!(
            crate::test_support::keys(&document).join(" "),
            "pairs base candidate transitions regressions fixes mcnemar_p new_incorrect new_false_pass changes"
        );
        // a1 went correct → FAIL: the one newly incorrect case; no new false PASS.
        assert_eq!(comparison.new_incorrect_ids, ["a1"]);
        assert_eq!(
            (comparison.new_incorrect, comparison.new_false_pass),
            (1, 0)
        );
        assert_eq!(document["base"]["models"], serde_json::json!(["m"]));
        assert_eq!(document["base"]["total"], 6);
    }

    #[test]
    fn different_case_sets_are_refused_unless_intersecting() {
        let base = report(vec![row("a1", true, P), row("a2", true, P)]);
        let candidate = report(vec![row("a1", true, F), row("b9", true, P)]);
        let error = compare(&base, &candidate, CompareOptions::default()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the reports hold different cases: 1 only in the base report (`a2`), 1 only in the candidate (`b9`); 1 case both hold"
        );
        let comparison = compare(&base, &candidate, CompareOptions { intersect: true }).unwrap();
        assert_eq!(comparison.pairs, 1);
        assert_eq!(comparison.regressions, 1);
        assert_eq!(comparison.only_in_base, ["a2"]);
        assert_eq!(comparison.base.summary.total, 1);
        let disjoint = report(vec![row("z", true, P)]);
        assert_eq!(
            compare(&base, &disjoint, CompareOptions { intersect: true }),
            Err(CompareError::NoCommonCases)
        );
    }

    #[test]
    fn changed_labels_and_duplicates_are_refused() {
        let base = report(vec![row("a1", true, P)]);
        let candidate = report(vec![row("a1", false, P)]);
        assert!(matches!(
            compare(&base, &candidate, CompareOptions::default()),
            Err(CompareError::LabelChanged { .. })
        ));
        let twice = report(vec![row("a1", true, P), row("a1", true, P)]);
        assert_eq!(
            compare(&twice, &base, CompareOptions::default())
                .unwrap_err()
                .to_string(),
            "the base report has case `a1` twice"
        );
        let mut streamed = report(vec![row("a1", true, P)]);
        streamed.rows.clear();
        assert_eq!(
            compare(&base, &streamed, CompareOptions::default()),
            Err(CompareError::NoRows(Side::Candidate))
        );
    }

    #[test]
    fn identical_runs_have_no_flips_and_p_one() {
        let base = report(vec![row("a1", true, P), row("b1", false, I)]);
        let comparison = compare(&base, &base, CompareOptions::default()).unwrap();
        assert!(comparison.transitions.is_empty() && comparison.flips.is_empty());
        assert_eq!((comparison.regressions, comparison.fixes), (0, 0));
        assert_eq!(comparison.mcnemar_p, 1.0);
        assert_eq!(comparison.scenarios().len(), 2);
    }
}
