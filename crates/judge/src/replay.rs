//! Offline replay of recorded exchanges (`.jevl`, cli-and-formats.md §3).

use std::{collections::HashMap, path::Path};

use jevjudge_wire::{
    Answer, Detail, Request, Response, Usage, canonical,
    record::{self, Record, ReplayIndex},
};
use tokio::time::Instant;

use crate::{Backend, BackendError, BackendFuture, BackendKind};

/// Answers each request from recorded exchanges, looked up by the digest of (requested model,
/// state, questions); nothing is sent anywhere. A request that is not recorded is
/// ERROR/BACKEND `not_recorded`. Reports name it `replay`, or `fixture` when the file holds
/// hand-made fixture records, or `fake` when it holds records made against jevjudge's fake
/// server (`meta.fake`).
///
/// **Repeats.** A file may hold several records of one request (a recording of repeated
/// runs). Inside a review run as repeat `k` (0-based, see [`crate::repeat`]) the request gets
/// the `k`-th of its records in file order, cycling (`k mod m`) when it has fewer records `m`
/// than repeats; the index comes from the runner, not from arrival order, so the same repeat
/// gets the same record under any concurrency. Outside a repeat scope the lookup is
/// [`ReplayIndex`]'s (one record per request).
#[derive(Clone)]
pub struct ReplayBackend {
    index: ReplayIndex,
    model: String,
    /// Requests with more than one record: their responses in file order, by request digest
    /// (under the answering model and under the requested one, as the index keys them).
    series: HashMap<String, Vec<Response>>,
}

impl std::fmt::Debug for ReplayBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplayBackend")
            .field("index", &self.index)
            .field("model", &self.model)
            .field("repeated_requests", &self.series.len())
            .finish()
    }
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
        let series = repeated_series(&records)?;
        Ok(ReplayBackend {
            index: ReplayIndex::from_records(records)?,
            model: model.into(),
            series,
        })
    }

    /// Reads a `.jevl` file strictly (a bad line is an error naming the line; a newer format
    /// version is refused).
    pub fn open(path: &Path, model: impl Into<String>) -> Result<ReplayBackend, ReplayError> {
        ReplayBackend::new(record::read_file(path)?, model)
    }

    /// The same records, replayed for requests to `model`.
    pub fn with_model(mut self, model: impl Into<String>) -> ReplayBackend {
        self.model = model.into();
        self
    }

    /// The model requests are looked up under when they name none.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Every model name the records can be replayed for (asked-for aliases and answering
    /// ids), in first-seen order.
    pub fn models(&self) -> Vec<&str> {
        self.index.models()
    }

    /// The model a replay should ask for when the user named none: the recording's model when
    /// it holds exactly one answering model (the alias it was asked for, when that too is
    /// unique), else `fallback` when the file holds it, else `None` (the caller must ask for
    /// `--model`).
    pub fn default_model(&self, fallback: &str) -> Option<String> {
        let answering = self.index.answering_models();
        if let [only] = answering.as_slice() {
            let requested = self.index.requested_models();
            return Some(match requested.as_slice() {
                [alias] => (*alias).to_owned(),
                _ => (*only).to_owned(),
            });
        }
        self.index
            .models()
            .contains(&fallback)
            .then(|| fallback.to_owned())
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

    /// The recorded response for repeat `repeat` (0-based) of a request: its
    /// `repeat mod m`-th record in file order when the file holds `m ≥ 2` records of it, else
    /// [`lookup`](Self::lookup).
    pub fn lookup_repeat(&self, request: &Request, repeat: u32) -> Option<Response> {
        let questions = request.questions.to_json();
        let model = request.model.as_deref().unwrap_or(&self.model);
        let key = canonical::request_digest(Some(model), &request.state, &questions).ok();
        match key.and_then(|key| self.series.get(&key)) {
            Some(responses) if !responses.is_empty() => {
                let k = repeat as usize % responses.len();
                responses.get(k).cloned()
            }
            _ => self.lookup(request),
        }
    }

    /// The most *distinct* recorded responses any one request has (1 when no request has two
    /// different records, 0 when empty): with `eval --repeat N` above this number, repeats
    /// replay answers already served, so the flip rate measures the recording, not the model.
    pub fn max_records_per_request(&self) -> usize {
        self.series
            .values()
            .map(|responses| {
                let mut distinct: Vec<&Response> = Vec::new();
                for response in responses {
                    if !distinct.contains(&response) {
                        distinct.push(response);
                    }
                }
                distinct.len()
            })
            .max()
            .unwrap_or(usize::from(!self.index.is_empty()))
    }
}

/// The responses of every request recorded more than once, in file order, keyed like the
/// index: by the digest under the answering model and under the requested model.
fn repeated_series(records: &[Record]) -> Result<HashMap<String, Vec<Response>>, ReplayError> {
    let mut by_key: HashMap<String, Vec<usize>> = HashMap::with_capacity(records.len());
    for (i, record) in records.iter().enumerate() {
        let questions = serde_json::Value::Object(record.request.questions.clone());
        let state = &record.request.state;
        let answered = canonical::request_digest(Some(&record.model), state, &questions)?;
        let requested = record.requested_model();
        if requested != record.model {
            let asked = canonical::request_digest(Some(requested), state, &questions)?;
            by_key.entry(asked).or_default().push(i);
        }
        by_key.entry(answered).or_default().push(i);
    }
    Ok(by_key
        .into_iter()
        .filter(|(_, indexes)| indexes.len() > 1)
        .map(|(key, indexes)| {
            let responses = indexes.iter().map(|&i| response_of(&records[i])).collect();
            (key, responses)
        })
        .collect())
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
        raw_answers: Some(jevjudge_wire::RawAnswers::from_map(&record.answers)),
    }
}

impl Backend for ReplayBackend {
    fn answer<'a>(&'a self, request: &'a Request, _deadline: Instant) -> BackendFuture<'a> {
        let found = match crate::repeat::current() {
            Some(repeat) => self.lookup_repeat(request, repeat),
            None => self.lookup(request),
        };
        let outcome = found.ok_or_else(|| BackendError::new(Detail::NotRecorded));
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
