//! One case's row, as reports show it ([`Row`]), with its repeats ([`Repeats`]) and how it
//! counts ([`Outcome`], rule 53): the type the runner produces and every summary, risk and
//! repeat figure reads.

use jevjudge_judge::{Status, Verdict};
use serde::{Deserialize, Serialize};

/// One case's outcome, as reports show it: labels, pass, score and the verdict. No text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The case's scenario.
    pub scenario: String,
    /// The case's id (never the response's, rule 49).
    pub id: String,
    /// The case's label.
    pub expected_pass: bool,
    /// True only for an overall PASS.
    pub pass: bool,
    /// Passed criteria ÷ all criteria.
    pub score: f64,
    /// The verdict.
    pub verdict: Verdict,
    /// Per-criterion labels, when the case had them (for calibration).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "crate::ordered_map::option"
    )]
    pub expected_findings: Option<Vec<(String, bool)>>,
    /// With `--repeat N` (N ≥ 2): every repeat's verdict and the case's pass rate; `pass`,
    /// `score` and `verdict` are then the first repeat's (see [`crate::repeats`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<Repeats>,
    /// The case's weight (the cases file's `weight`, default 1): how many cases of the
    /// traffic it stands for. Written only when it is not 1.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub weight: f64,
}

fn one() -> f64 {
    1.0
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_one(weight: &f64) -> bool {
    *weight == 1.0
}

/// How a row counts (rule 53).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// PASS/FAIL agreeing with the label.
    Correct,
    /// PASS/FAIL disagreeing with the label.
    Incorrect,
    /// INCONCLUSIVE.
    Abstained,
    /// ERROR.
    Error,
}

impl Outcome {
    /// Classifies by the verdict status, not by `pass` (rule 53).
    pub fn of(status: Status, expected_pass: bool) -> Outcome {
        match status {
            Status::Error => Outcome::Error,
            Status::Inconclusive => Outcome::Abstained,
            status => {
                if (status == Status::Pass) == expected_pass {
                    Outcome::Correct
                } else {
                    Outcome::Incorrect
                }
            }
        }
    }
}

/// Every repeat of one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Repeats {
    /// Every repeat's verdict, in repeat order; the first is also the row's `verdict`.
    pub verdicts: Vec<Verdict>,
    /// PASS verdicts ÷ repeats.
    pub pass_rate: f64,
}

impl Row {
    /// Every review of this case: the repeats' verdicts, or the one verdict.
    pub fn verdicts(&self) -> &[Verdict] {
        match &self.repeats {
            Some(repeats) if !repeats.verdicts.is_empty() => &repeats.verdicts,
            _ => std::slice::from_ref(&self.verdict),
        }
    }

    /// Whether the verdict status differs between repeats.
    pub fn flipped(&self) -> bool {
        let verdicts = self.verdicts();
        verdicts
            .iter()
            .any(|verdict| verdict.status != verdicts[0].status)
    }

    /// Correct reviews of this case (rule 53's classification, per review).
    pub fn correct_reviews(&self) -> u64 {
        self.verdicts()
            .iter()
            .filter(|verdict| Outcome::of(verdict.status, self.expected_pass) == Outcome::Correct)
            .count() as u64
    }
}

impl Row {
    /// How the case counts where a case is one item (a JUnit test): its verdict's outcome,
    /// or with repeats the worst over its repeats — incorrect, else error, else abstained,
    /// else correct.
    pub fn case_outcome(&self) -> Outcome {
        let outcomes: Vec<Outcome> = self
            .verdicts()
            .iter()
            .map(|verdict| Outcome::of(verdict.status, self.expected_pass))
            .collect();
        [Outcome::Incorrect, Outcome::Error, Outcome::Abstained]
            .into_iter()
            .find(|worst| outcomes.contains(worst))
            .unwrap_or(Outcome::Correct)
    }

    /// The first verdict whose outcome is [`Row::case_outcome`] (the row's verdict without
    /// repeats).
    pub fn case_verdict(&self) -> &Verdict {
        let outcome = self.case_outcome();
        self.verdicts()
            .iter()
            .find(|verdict| Outcome::of(verdict.status, self.expected_pass) == outcome)
            .unwrap_or(&self.verdict)
    }

    /// `FAIL`, or with repeats `PASS, FAIL, PASS (pass rate 0.6667)`.
    pub fn statuses_text(&self) -> String {
        match &self.repeats {
            Some(repeats) if repeats.verdicts.len() > 1 => {
                let statuses: Vec<String> = repeats
                    .verdicts
                    .iter()
                    .map(|verdict| verdict.status.to_string())
                    .collect();
                format!(
                    "{} (pass rate {:.4})",
                    statuses.join(", "),
                    repeats.pass_rate
                )
            }
            _ => self.verdict.status.to_string(),
        }
    }
}
