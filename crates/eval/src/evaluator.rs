//! Evaluators: turn one case's input into a response (judge-contract §9).

use std::future::Future;

use jevjudge_judge::{Backend, BackendKind, Definition, Judge, Status, Verdict};
use serde::{Deserialize, Serialize};

use crate::CaseInput;

/// What an evaluator receives: the case id and its input. Never the scenario or the labels
/// (rule 47).
#[derive(Debug, Clone, PartialEq)]
pub struct EvaluationRequest {
    /// The case id.
    pub id: String,
    /// What to review.
    pub input: CaseInput,
}

/// An evaluator's answer for one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvaluatorResponse {
    /// The request's id (the runner uses the case's id regardless, rule 49).
    pub id: String,
    /// True only for an overall PASS.
    pub pass: bool,
    /// Passed criteria ÷ all criteria; never a substitute for the verdict.
    pub score: f64,
    /// The full verdict.
    pub verdict: Verdict,
}

/// A failure of a custom evaluator; the runner turns it into a synthetic EVALUATOR row (D4).
/// Carries no text on purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the evaluator failed")]
pub struct EvaluatorFailed;

/// Evaluates one case. The runner adds no timeout: an evaluator must bound itself (rule 51);
/// [`JevEvaluator`] is bounded by its judge's budget.
pub trait Evaluator: Send + Sync {
    /// Evaluates one request. `Ok(None)` means "finished without a response".
    fn evaluate(
        &self,
        request: EvaluationRequest,
    ) -> impl Future<Output = Result<Option<EvaluatorResponse>, EvaluatorFailed>> + Send;

    /// The version of the definition it applies, for synthetic rows; `None` gives
    /// "evaluation-error".
    fn definition_version(&self) -> Option<&str> {
        None
    }

    /// Where its answers come from, for the report.
    fn backend_kind(&self) -> BackendKind {
        BackendKind::Injected
    }
}

/// The evaluator of the seeds: one review of the case's state against a definition.
#[derive(Debug, Clone)]
pub struct JevEvaluator<B> {
    judge: Judge<B>,
    definition: Definition,
}

impl<B: Backend> JevEvaluator<B> {
    /// Applies `definition` with `judge`.
    pub fn new(judge: Judge<B>, definition: Definition) -> JevEvaluator<B> {
        JevEvaluator { judge, definition }
    }

    /// The definition.
    pub fn definition(&self) -> &Definition {
        &self.definition
    }

    /// The judge.
    pub fn judge(&self) -> &Judge<B> {
        &self.judge
    }
}

impl<B: Backend> Evaluator for JevEvaluator<B> {
    async fn evaluate(
        &self,
        request: EvaluationRequest,
    ) -> Result<Option<EvaluatorResponse>, EvaluatorFailed> {
        let verdict = self
            .judge
            .review(request.input.into_state(), &self.definition)
            .await;
        Ok(Some(respond(
            request.id,
            verdict,
            self.definition.criteria().len(),
        )))
    }

    fn definition_version(&self) -> Option<&str> {
        Some(self.definition.version())
    }

    fn backend_kind(&self) -> BackendKind {
        self.judge.backend().kind()
    }
}

/// Rule 40: pass iff PASS; score = PASS findings ÷ criteria (0.0 for ERROR).
pub fn respond(id: String, verdict: Verdict, criteria: usize) -> EvaluatorResponse {
    let passed = verdict
        .findings
        .iter()
        .filter(|(_, f)| f.status == Status::Pass)
        .count();
    let score = if criteria == 0 {
        0.0
    } else {
        passed as f64 / criteria as f64
    };
    EvaluatorResponse {
        id,
        pass: verdict.status == Status::Pass,
        score,
        verdict,
    }
}
