//! The Judge: one review is one request, within a budget, aggregated into a verdict.

use std::{sync::Arc, time::Duration};

use jevjudge_client::limit::{Limiter, Stop, estimate_tokens};
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
    limiter: Option<Arc<Limiter>>,
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
        Ok(Judge {
            backend,
            budget,
            limiter: None,
        })
    }

    /// Admits every review through `limiter` first: the review waits for a slot,
    /// the server's `Retry-After` and the pacers, and its budget starts only then. Once the
    /// limiter has stopped (a refused key), reviews answer at once with ERROR/BACKEND and the
    /// status that stopped it, sending nothing; a stopped cap answers `backend_error`. Give the
    /// same limiter to the backend's client so it learns from every attempt.
    pub fn with_limiter(mut self, limiter: Arc<Limiter>) -> Judge<B> {
        self.limiter = Some(limiter);
        self
    }

    /// The shared limiter, when the judge has one.
    pub fn limiter(&self) -> Option<&Arc<Limiter>> {
        self.limiter.as_ref()
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
        let request = Request::new(state, definition.questions().clone());
        let _permit = match &self.limiter {
            None => None,
            Some(limiter) => {
                // Serialising the body only to count it is worth it only when a token rate
                // or an input-token cap reads the estimate.
                let estimate = if limiter.counts_tokens() {
                    request
                        .to_body(jevjudge_wire::DEFAULT_MODEL)
                        .map_or(0, |body| estimate_tokens(body.len()))
                } else {
                    0
                };
                match limiter.acquire(estimate).await {
                    Ok(permit) => Some(permit),
                    Err(stop) => {
                        let detail = match stop {
                            Stop::KeyRefused { status } => Detail::HttpStatus(status),
                            Stop::InputTokenCap { .. } => Detail::BackendError,
                        };
                        let code = ErrorCode::for_detail(detail);
                        return Verdict::error(definition.version(), code, detail, Duration::ZERO);
                    }
                }
            }
        };
        // The budget starts when the request may go out (after the limiter).
        let start = Instant::now();
        let deadline = start + budget;
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

#[cfg(test)]
mod limiter_tests {
    use std::sync::Arc;

    use jevjudge_client::{
        AttemptOutcome,
        limit::{LimitConfig, Limiter},
    };
    use jevjudge_wire::{Answer, NoulAnswer, NoulQuestion, Response};
    use serde_json::json;

    use super::*;
    use crate::backend_fn;

    fn definition() -> Definition {
        Definition::new(
            "limited-v1",
            vec![Criterion::new("ok", NoulQuestion::new("Ok?"), true, 0.2, 0.8).unwrap()],
        )
        .unwrap()
    }

    fn answer() -> Response {
        Response {
            model: Some("fixture".into()),
            answers: vec![("ok".into(), Answer::Noul(NoulAnswer { noul: Some(0.9) }))],
            usage: None,
            raw_answers: None,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_judge_with_a_limiter_starts_the_budget_after_admission() {
        let backend = backend_fn(|_request: Request| async move {
            tokio::time::sleep(Duration::from_millis(80)).await;
            Ok(answer())
        });
        let limiter = Limiter::new(LimitConfig {
            adaptive: false,
            ..LimitConfig::new(1)
        });
        let judge = Arc::new(
            Judge::new(backend, Duration::from_millis(100))
                .unwrap()
                .with_limiter(limiter),
        );
        let definition = definition();
        let start = Instant::now();
        // Three reviews, one slot: the third waits 160 ms, yet none times out.
        let (a, b, c) = tokio::join!(
            judge.review(json!({"n": 1}), &definition),
            judge.review(json!({"n": 2}), &definition),
            judge.review(json!({"n": 3}), &definition),
        );
        let verdicts = [a, b, c];
        assert_eq!(start.elapsed(), Duration::from_millis(240));
        for verdict in verdicts {
            assert_eq!(verdict.status, Status::Pass);
            assert_eq!(verdict.elapsed, Duration::from_millis(80));
        }
    }

    #[tokio::test(start_paused = true)]
    async fn after_a_refused_key_reviews_answer_the_status_without_sending() {
        let sent = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let backend = {
            let sent = sent.clone();
            backend_fn(move |_request: Request| {
                sent.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                async move { Ok(answer()) }
            })
        };
        let limiter = Limiter::new(LimitConfig::new(4));
        limiter.record_attempt(AttemptOutcome::Status(403), 1, Instant::now(), None);
        let judge = Judge::new(backend, Duration::from_secs(1))
            .unwrap()
            .with_limiter(limiter);
        let verdict = judge.review(json!({}), &definition()).await;
        assert_eq!(verdict.status, Status::Error);
        assert_eq!(verdict.error, ErrorCode::Backend);
        assert_eq!(verdict.detail, Some(Detail::HttpStatus(403)));
        assert_eq!(sent.load(std::sync::atomic::Ordering::SeqCst), 0);
    }
}
