//! Recorded answers served in place of hashed ones (`jevjudge fake-server --replay`).

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

use jevjudge_wire::canonical::CanonicalError;
use jevjudge_wire::record::{Record, ReplayIndex};
use serde_json::{Map, Value};

/// A recorded exchange to answer with: the model that answered, its answers and its usage.
#[derive(Clone, Debug, PartialEq)]
pub struct Recorded {
    /// The versioned id that answered (sent back as `model`).
    pub model: String,
    /// The answers exactly as recorded.
    pub answers: Map<String, Value>,
    /// The recorded usage; when absent the fake reports its own estimate.
    pub usage: Option<Value>,
}

type Lookup = dyn Fn(&str, &Value, &Value) -> Option<Recorded> + Send + Sync;

/// Where recorded answers come from: a lookup by (requested model, state, questions).
///
/// A request found by the lookup is answered with the recorded model, answers and usage; every
/// other valid request is answered by hash. Requests are validated first either way.
#[derive(Clone)]
pub struct Replay {
    lookup: Arc<Lookup>,
}

impl Replay {
    /// A replay source from any lookup function of (requested model, state, questions).
    pub fn from_fn<F>(lookup: F) -> Self
    where
        F: Fn(&str, &Value, &Value) -> Option<Recorded> + Send + Sync + 'static,
    {
        Self {
            lookup: Arc::new(lookup),
        }
    }

    /// Recorded answers from an index of `.jevl` records: a request is found by the digest of
    /// (model asked for, state, questions), as [`ReplayIndex::get`] describes.
    pub fn from_index(index: ReplayIndex) -> Self {
        Self::from_index_arc(Arc::new(index))
    }

    /// Recorded answers from `.jevl` records (for example from
    /// `jevjudge_wire::record::read_file`); the last of duplicate records wins.
    pub fn from_records(records: Vec<Record>) -> Result<Self, CanonicalError> {
        ReplayIndex::from_records(records).map(Self::from_index)
    }

    /// Recorded answers from `.jevl` records, looked up as if every request asked for one model:
    ///
    /// - `Some(model)`: `model`, which must be a model the records hold (as the answering
    ///   `model` or as the `meta.requested_model` it was asked as), else
    ///   [`ReplayError::UnknownModel`] naming the models they hold;
    /// - `None`, when every record was answered by one model: that model, whatever model a
    ///   request names;
    /// - `None`, with several answering models: the model each request names (like
    ///   [`Replay::from_records`]).
    ///
    /// Returns the replay and the model it pins, if any.
    ///
    /// ```
    /// use jevjudge_fake::{Replay, ReplayError};
    /// use jevjudge_wire::record::Record;
    /// use serde_json::{Map, json};
    ///
    /// let mut questions = Map::new();
    /// questions.insert("q".into(), json!({"type": "noul", "instructions": "?"}));
    /// let mut answers = Map::new();
    /// answers.insert("q".into(), json!({"type": "noul", "noul": 0.9}));
    /// let record = Record::new("jev-1.13.0", "jev-latest", json!("s"), questions, answers, None,
    ///     "2026-11-30T00:00:00Z".into())?;
    ///
    /// let (_, pinned) = Replay::from_records_for_model(vec![record.clone()], None)?;
    /// assert_eq!(pinned.as_deref(), Some("jev-1.13.0"));
    /// let error = Replay::from_records_for_model(vec![record], Some("jev-9")).unwrap_err();
    /// assert!(error.to_string().contains("jev-1.13.0 (asked as jev-latest)"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_records_for_model(
        records: Vec<Record>,
        model: Option<&str>,
    ) -> Result<(Self, Option<String>), ReplayError> {
        let answering: BTreeSet<&str> = records.iter().map(|r| r.model.as_str()).collect();
        let pinned = match model {
            Some(model) => {
                let held = records
                    .iter()
                    .any(|r| r.model == model || r.requested_model() == model);
                if !held {
                    return Err(ReplayError::UnknownModel {
                        asked: model.to_owned(),
                        held: held_models(&records),
                    });
                }
                Some(model.to_owned())
            }
            None if answering.len() == 1 => answering.first().map(|m| (*m).to_owned()),
            None => None,
        };
        let index = Arc::new(ReplayIndex::from_records(records)?);
        let replay = match pinned.clone() {
            None => Self::from_index_arc(index),
            Some(model) => Self::from_fn(move |_, state, questions| {
                index.get(&model, state, questions).map(recorded)
            }),
        };
        Ok((replay, pinned))
    }

    fn from_index_arc(index: Arc<ReplayIndex>) -> Self {
        Self::from_fn(move |model, state, questions| {
            index.get(model, state, questions).map(recorded)
        })
    }

    /// The recorded answer for this request, if there is one.
    pub fn lookup(&self, model: &str, state: &Value, questions: &Value) -> Option<Recorded> {
        (self.lookup)(model, state, questions)
    }
}

/// What a record answers with.
fn recorded(record: &Record) -> Recorded {
    Recorded {
        model: record.model.clone(),
        answers: record.answers.clone(),
        usage: record.usage.clone(),
    }
}

/// Each answering model, with the other names it was asked as: `jev-1.13.0 (asked as
/// jev-latest)`, sorted.
fn held_models(records: &[Record]) -> Vec<String> {
    let mut asked: std::collections::BTreeMap<&str, BTreeSet<&str>> = Default::default();
    for record in records {
        let aliases = asked.entry(record.model.as_str()).or_default();
        if record.requested_model() != record.model {
            aliases.insert(record.requested_model());
        }
    }
    asked
        .into_iter()
        .map(|(model, aliases)| {
            if aliases.is_empty() {
                model.to_owned()
            } else {
                let aliases: Vec<&str> = aliases.into_iter().collect();
                format!("{model} (asked as {})", aliases.join(", "))
            }
        })
        .collect()
}

fn describe(held: &[String]) -> String {
    if held.is_empty() {
        "it holds no records".to_owned()
    } else {
        format!("it holds: {}", held.join("; "))
    }
}

/// A record file that cannot be replayed as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    /// A recorded request has no canonical form, so it cannot be looked up.
    #[error("cannot index the records: {0}")]
    Index(#[from] CanonicalError),
    /// The model asked for is not one the records hold.
    #[error("the recording holds no exchange of model `{asked}`; {}", describe(.held))]
    UnknownModel {
        /// The model asked for.
        asked: String,
        /// The models the records hold, each with the names it was asked as.
        held: Vec<String>,
    },
}

impl fmt::Debug for Replay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Replay").finish_non_exhaustive()
    }
}
