//! What reviews a run's cases: the chosen backend behind its limiter, and the runner and
//! evaluator that use them.

use std::{sync::Arc, time::Duration};

use jevjudge_client::limit::Limiter;
use jevjudge_judge::{Backend, BackendKind, BudgetNotPositive, Definition, Judge, choice::Chosen};

use crate::{JevEvaluator, Report, Runner, session::Outcome};

/// The backend of a run with its limiter, and the runner and evaluator that use them.
pub struct Reviewer {
    /// The run's limiter (concurrency, rates, spending caps).
    pub limiter: Arc<Limiter>,
    /// The backend and what is known of it.
    pub chosen: Chosen,
    /// The runner, limited by [`Reviewer::limiter`].
    pub runner: Runner,
    /// The evaluator reviewing each case with the definition.
    pub evaluator: JevEvaluator<Arc<dyn Backend>>,
}

impl Reviewer {
    /// Puts `runner` behind `limiter` (estimating each request's input tokens for the
    /// definition and model) and builds the evaluator; each review takes at most `budget`.
    pub fn new(
        runner: Runner,
        limiter: Arc<Limiter>,
        chosen: Chosen,
        definition: &Definition,
        budget: Duration,
    ) -> Result<Reviewer, BudgetNotPositive> {
        let runner = runner.limiter(
            limiter.clone(),
            crate::input_token_estimate(definition, &chosen.model),
        );
        let judge = Judge::new(chosen.backend.clone(), budget)?;
        Ok(Reviewer {
            limiter,
            chosen,
            runner,
            evaluator: JevEvaluator::new(judge, definition.clone()),
        })
    }

    /// With a replay holding fewer different answers per request than `repeat`: how many it
    /// holds at most (repeats then serve answers already served, cycling).
    pub fn cycling_repeats(&self, repeat: usize) -> Option<usize> {
        self.chosen
            .records_per_request
            .filter(|&records| repeat > 1 && records < repeat)
    }

    /// The kind the backend says answered: the chosen one, except that a server marking its
    /// answers as jevjudge's fake makes them fake.
    pub fn answered(&self) -> BackendKind {
        self.evaluator.judge().backend().kind()
    }

    /// The report of a finished session: the backend that answered and, live, the attempts.
    pub fn report(&self, outcome: Outcome, definition: &Definition) -> Report {
        let mut report = outcome.into_report(definition.version(), self.answered());
        if self.chosen.kind == BackendKind::Systemone {
            report.overall.attempts = Some(self.limiter.snapshot().attempts);
        }
        report
    }
}
