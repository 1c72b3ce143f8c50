//! The Judge: one review is one request, within a budget, aggregated into a verdict.

use std::time::Duration;

use jevjudge_wire::{Detail, Request, check_answers};
use serde_json::Value;
use tokio::time::Instant;

use crate::{Backend, Criterion, Definition, ErrorCode, Finding, Findings, Status, Verdict};

/// Reviews states against definitions with one backend and one budget.
///
/// A review sends **one** request holding every criterion's noul question in definition order
/// and nothing else (rules 9–11), scores each answer against its thresholds, and aggregates:
/// any FAIL → FAIL, else any INCONCLUSIVE → INCONCLUSIVE, else PASS (rule 23). Every outcome of
/// a started review is a [`Verdict`]; failures are ERROR verdicts with a safe detail code.
#[derive(Debug, Clone)]
pub struct Judge<B> {
    backend: B,
    budget: Duration,
}

/// The budget was zero (rule 7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("budget must be positive")]
pub struct BudgetNotPositive;

impl<B: Backend> Judge<B> {
    /// A judge whose reviews each take at most `budget`, retries and waits included (D11).
    pub fn new(backend: B, budget: Duration) -> Result<Judge<B>, BudgetNotPositive> {
        if budget.is_zero() {
            return Err(BudgetNotPositive);
        }
        Ok(Judge { backend, budget })
    }

    /// The budget of each review.
    pub fn budget(&self) -> Duration {
        self.budget
    }

    /// The backend.
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// Reviews `state` against `definition`.
    ///
    /// Lazy (rule 12): nothing is sent until the future is awaited, and each await of a fresh
    /// review runs exactly one backend call sequence. Dropping the future cancels the request
    /// and any wait and yields no verdict (rule 37, D9).
    pub async fn review(&self, state: Value, definition: &Definition) -> Verdict {
        self.review_within(state, definition, self.budget).await
    }

    /// Reviews with a budget other than the judge's own (for example a caller's smaller one).
    /// A zero budget times out at once.
    pub async fn review_within(
        &self,
        state: Value,
        definition: &Definition,
        budget: Duration,
    ) -> Verdict {
        let start = Instant::now();
        let deadline = start + budget;
        let request = Request::new(state, definition.questions().clone());
        let outcome =
            tokio::time::timeout_at(deadline, self.backend.answer(&request, deadline)).await;
        let version = definition.version();
        let response = match outcome {
            Err(_elapsed) => {
                return Verdict::error(
                    version,
                    ErrorCode::Timeout,
                    Detail::BudgetElapsed,
                    start.elapsed(),
                );
            }
            Ok(Err(error)) => {
                let code = error.code();
                let (detail, model, usage) = error.into_parts();
                let mut verdict = Verdict::error(version, code, detail, start.elapsed());
                verdict.model = model;
                verdict.usage = usage;
                return verdict;
            }
            Ok(Ok(response)) => response,
        };
        if let Err(error) = check_answers(definition.questions(), &response.answers) {
            let mut verdict = Verdict::error(
                version,
                ErrorCode::InvalidResponse,
                error.detail(),
                start.elapsed(),
            );
            verdict.model = response.model;
            verdict.usage = response.usage;
            return verdict;
        }
        let findings: Vec<(String, Finding)> = definition
            .criteria()
            .iter()
            .map(|criterion| {
                // check_answers guarantees a finite noul in [0, 1] for every criterion id.
                let p = response
                    .answer(criterion.id())
                    .and_then(|answer| answer.as_noul())
                    .unwrap_or(f64::NAN);
                (criterion.id().to_owned(), score(criterion, p))
            })
            .collect();
        let status = aggregate(findings.iter().map(|(_, f)| f.status));
        Verdict {
            definition_version: version.to_owned(),
            status,
            error: ErrorCode::None,
            detail: None,
            findings: Findings::new(findings),
            model: response.model,
            usage: response.usage,
            elapsed: start.elapsed(),
        }
    }
}

/// Scores one criterion (rules 18–20): p′ = p when a yes is expected, else 1 − p (in f64);
/// PASS when p′ ≥ pass, else FAIL when p′ ≤ fail, else INCONCLUSIVE. Plain f64 comparisons,
/// no epsilon (D8).
pub fn score(criterion: &Criterion, yes_probability: f64) -> Finding {
    let expected_probability = if criterion.expected() {
        yes_probability
    } else {
        1.0 - yes_probability
    };
    let status = if expected_probability >= criterion.pass_at_or_above() {
        Status::Pass
    } else if expected_probability <= criterion.fail_at_or_below() {
        Status::Fail
    } else {
        Status::Inconclusive
    };
    Finding {
        status,
        yes_probability,
        expected_probability,
    }
}

/// Rule 23: any FAIL → FAIL; else any INCONCLUSIVE → INCONCLUSIVE; else PASS.
pub fn aggregate(statuses: impl IntoIterator<Item = Status>) -> Status {
    let mut overall = Status::Pass;
    for status in statuses {
        match status {
            Status::Fail => return Status::Fail,
            Status::Inconclusive => overall = Status::Inconclusive,
            _ => {}
        }
    }
    overall
}
