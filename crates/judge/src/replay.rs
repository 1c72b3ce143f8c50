//! Offline replay of recorded exchanges (`.jevl`, cli-and-formats.md §3).

use std::path::Path;

use jevjudge_wire::{
    Answer, Detail, Request, Response, Usage,
    record::{self, Record, ReplayIndex},
};
use tokio::time::Instant;

use crate::{Backend, BackendError, BackendFuture, BackendKind};

/// Answers each request from recorded exchanges, looked up by the digest of (requested model,
/// state, questions); nothing is sent anywhere. A request that is not recorded is
/// ERROR/BACKEND `not_recorded`. Reports name it `replay`, or `fixture` when the file holds
/// hand-made fixture records, or `fake` when it holds records made against jevjudge's fake
/// server (`meta.fake`).
#[derive(Debug, Clone)]
pub struct ReplayBackend {
    index: ReplayIndex,
    model: String,
}

/// A record file that could not be used for replay.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The file is unreadable or a line is malformed (the error names the file and line).
    #[error(transparent)]
    Record(#[from] record::RecordError),
    /// A recorded request cannot be digested.
    #[error("cannot index the records: {0}")]
    Index(#[from] jevjudge_wire::canonical::CanonicalError),
}

impl ReplayBackend {
    /// Replays `records` for requests to `model` (the model a live run would ask for, for
    /// example `jev-latest`).
    pub fn new(
        records: Vec<Record>,
        model: impl Into<String>,
    ) -> Result<ReplayBackend, ReplayError> {
        Ok(ReplayBackend {
            index: ReplayIndex::from_records(records)?,
            model: model.into(),
        })
    }

    /// Reads a `.jevl` file strictly (a bad line is an error naming the line; a newer format
    /// version is refused).
    pub fn open(path: &Path, model: impl Into<String>) -> Result<ReplayBackend, ReplayError> {
        ReplayBackend::new(record::read_file(path)?, model)
    }

    /// How many exchanges can be replayed.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// True when nothing can be replayed.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The recorded response for a request, if any.
    pub fn lookup(&self, request: &Request) -> Option<Response> {
        let questions = request.questions.to_json();
        let model = request.model.as_deref().unwrap_or(&self.model);
        let record = self.index.get(model, &request.state, &questions)?;
        Some(response_of(record))
    }
}

/// The response a record holds: its answering model, its answers exactly as recorded, usage.
pub fn response_of(record: &Record) -> Response {
    Response {
        model: Some(record.model.clone()),
        answers: record
            .answers
            .iter()
            .map(|(id, answer)| {
                (
                    id.clone(),
                    Answer::from_json(answer).unwrap_or(Answer::Other),
                )
            })
            .collect(),
        usage: record.usage.as_ref().and_then(Usage::from_json),
        raw_answers: Some(record.answers.clone()),
    }
}

impl Backend for ReplayBackend {
    fn answer<'a>(&'a self, request: &'a Request, _deadline: Instant) -> BackendFuture<'a> {
        let outcome = self
            .lookup(request)
            .ok_or_else(|| BackendError::new(Detail::NotRecorded));
        Box::pin(std::future::ready(outcome))
    }

    fn kind(&self) -> BackendKind {
        if self.index.any_fixture() {
            BackendKind::Fixture
        } else if self.index.any_fake() {
            BackendKind::Fake
        } else {
            BackendKind::Replay
        }
    }
}
