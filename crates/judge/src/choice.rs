//! Which backend answers a run, and which model it asks for: the live API, recorded exchanges
//! or the in-process fake, possibly recording every exchange. [`Choice::resolve`] applies the
//! rules and refuses what cannot work (a recording that answers one request two ways, a model
//! it holds nothing for, several models and none chosen) before anything is sent.

use std::{path::PathBuf, sync::Arc};

use jevjudge_wire::{
    record::{Record, find_conflict},
    setting::{Explain, Namer, Setting},
};

use crate::{Backend, BackendKind, RecordWriter, Recording, ReplayBackend, ReplayError};

/// Where answers come from.
pub enum Source {
    /// The live API, already built for [`live_model`]'s model.
    Live(Arc<dyn Backend>),
    /// Recorded exchanges, answered offline.
    Replay(Vec<Record>),
    /// The in-process deterministic fake.
    #[cfg(feature = "fake")]
    Fake,
}

/// What the caller asked for.
pub struct Choice {
    /// Where answers come from.
    pub source: Source,
    /// The model asked for, if any [default: `jev-latest`; with a replay, the recording's
    /// model when it holds exactly one].
    pub model: Option<String>,
    /// Whether a recording may hold several different records of one request (a run that
    /// reviews each case several times serves the k-th to the k-th repeat).
    pub repeated_records: bool,
    /// Append every successful exchange to this record file (not with a replay).
    pub record: Option<PathBuf>,
}

/// The backend chosen and what outputs must say about it.
pub struct Chosen {
    /// The backend (wrapped to record when asked).
    pub backend: Arc<dyn Backend>,
    /// Where answers come from.
    pub kind: BackendKind,
    /// The record writer, when recording.
    pub recorder: Option<Arc<RecordWriter>>,
    /// The model requests ask for.
    pub model: String,
    /// With a replay: every model the recording holds.
    pub replay_models: Vec<String>,
    /// With a replay: the most records any one request has.
    pub records_per_request: Option<usize>,
}

/// Why a choice cannot work.
#[derive(Debug, thiserror::Error)]
pub enum ChoiceError {
    /// Two records answer the same request differently and repeats were not asked for.
    #[error(
        "records {} and {} answer the same request (model, state and questions) differently; \
         replay cannot tell which one to use: keep one",
        .first + 1,
        .second + 1
    )]
    Conflict {
        /// The first record's 0-based position.
        first: usize,
        /// The second record's 0-based position.
        second: usize,
    },
    /// A recorded request cannot be digested.
    #[error("cannot index the records: {0}")]
    Index(#[from] jevjudge_wire::canonical::CanonicalError),
    /// The records cannot be replayed.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// The recording holds no records.
    #[error("the recording holds no records")]
    Empty,
    /// The model asked for has no exchange in the recording.
    #[error("the recording holds no exchange for model `{asked}`; it holds {}", quoted(.held))]
    ModelNotRecorded {
        /// The model asked for.
        asked: String,
        /// The models the recording holds.
        held: Vec<String>,
    },
    /// The recording holds several models and none was asked for.
    #[error("the recording holds several models ({}); choose one", quoted(.held))]
    SeveralModels {
        /// The models the recording holds.
        held: Vec<String>,
    },
    /// The record file cannot be opened for appending.
    #[error("cannot open the record file {}: {source}", .path.display())]
    Record {
        /// The record file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// `` `a`, `b` ``: models as messages list them.
pub fn quoted(models: &[String]) -> String {
    models
        .iter()
        .map(|m| format!("`{m}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The model a live backend asks for: the one asked, else `jev-latest`.
pub fn live_model(asked: Option<&str>) -> String {
    asked.unwrap_or(jevjudge_wire::DEFAULT_MODEL).to_owned()
}

impl Choice {
    /// Builds the backend the choice names, or says why it cannot work.
    pub fn resolve(self) -> Result<Chosen, ChoiceError> {
        let mut model = live_model(self.model.as_deref());
        let mut replay_models = Vec::new();
        let mut records_per_request = None;
        let (backend, kind): (Arc<dyn Backend>, BackendKind) = match self.source {
            Source::Replay(records) => {
                if let Some((first, second)) = find_conflict(&records)? {
                    if !self.repeated_records {
                        return Err(ChoiceError::Conflict { first, second });
                    }
                }
                let replay = ReplayBackend::new(records, model.clone())?;
                if replay.is_empty() {
                    return Err(ChoiceError::Empty);
                }
                replay_models = replay.models().iter().map(|m| (*m).to_owned()).collect();
                match &self.model {
                    Some(asked) if !replay_models.contains(asked) => {
                        return Err(ChoiceError::ModelNotRecorded {
                            asked: asked.clone(),
                            held: replay_models,
                        });
                    }
                    Some(_) => {}
                    None => match replay.default_model(jevjudge_wire::DEFAULT_MODEL) {
                        Some(chosen) => model = chosen,
                        None => {
                            return Err(ChoiceError::SeveralModels {
                                held: replay_models,
                            });
                        }
                    },
                }
                let replay = replay.with_model(model.clone());
                let kind = replay.kind();
                records_per_request = Some(replay.max_records_per_request());
                (Arc::new(replay), kind)
            }
            #[cfg(feature = "fake")]
            Source::Fake => (Arc::new(crate::FakeBackend), BackendKind::Fake),
            Source::Live(backend) => (backend, BackendKind::Systemone),
        };
        let recorder = match &self.record {
            Some(path) => Some(Arc::new(RecordWriter::append(path).map_err(|source| {
                ChoiceError::Record {
                    path: path.clone(),
                    source,
                }
            })?)),
            None => None,
        };
        let backend: Arc<dyn Backend> = match &recorder {
            Some(writer) => Arc::new(Recording::new(backend, writer.clone(), model.clone())),
            None => backend,
        };
        Ok(Chosen {
            backend,
            kind,
            recorder,
            model,
            replay_models,
            records_per_request,
        })
    }
}

impl Explain for ChoiceError {
    /// The refusal with the setting that names or fixes it.
    fn explain(&self, name: Namer<'_>) -> String {
        match self {
            ChoiceError::ModelNotRecorded { asked, held } => {
                let model = name(Setting::Model);
                format!(
                    "{model} `{asked}`: {} holds no exchange for it; it holds {} (choose one of \
                     them with {model}, or leave {model} out when it holds one)",
                    name(Setting::Replay),
                    quoted(held)
                )
            }
            ChoiceError::SeveralModels { held } => format!(
                "{}: the recording holds several models ({}); choose one with {}",
                name(Setting::Replay),
                quoted(held),
                name(Setting::Model)
            ),
            ChoiceError::Record { .. } => format!("{}: {self}", name(Setting::Record)),
            _ => format!("{}: {self}", name(Setting::Replay)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(model: &str, state: &str, noul: f64) -> Record {
        jevjudge_wire::record::parse_line(&format!(
            r#"{{"v":1,"id":"sha256:{}","ts":"2026-01-01T00:00:00Z","model":"{model}","request":{{"state":"{state}","questions":{{"q":{{"type":"noul","instructions":"?"}}}}}},"answers":{{"q":{{"type":"noul","noul":{noul}}}}},"usage":null}}"#,
            "0".repeat(64)
        ))
        .unwrap()
    }

    fn replay(records: Vec<Record>, model: Option<&str>) -> Result<Chosen, ChoiceError> {
        Choice {
            source: Source::Replay(records),
            model: model.map(str::to_owned),
            repeated_records: false,
            record: None,
        }
        .resolve()
    }

    #[test]
    fn a_replay_of_one_model_asks_for_that_model() {
        let chosen = replay(vec![record("jev-1.13.0", "a", 0.9)], None).unwrap();
        assert_eq!(chosen.model, "jev-1.13.0");
        assert_eq!(chosen.replay_models, ["jev-1.13.0"]);
        assert_eq!(chosen.kind, BackendKind::Replay);
        assert_eq!(chosen.records_per_request, Some(1));
    }

    #[test]
    fn a_replay_refuses_what_it_cannot_answer() {
        let refused = replay(vec![record("jev-1", "a", 0.9)], Some("jev-2"));
        assert!(matches!(
            refused,
            Err(ChoiceError::ModelNotRecorded { ref asked, ref held }) if asked == "jev-2" && held == &["jev-1"]
        ));
        let two = vec![record("jev-1", "a", 0.9), record("jev-2", "b", 0.9)];
        let refused = replay(two, None).err().unwrap();
        assert_eq!(
            refused.to_string(),
            "the recording holds several models (`jev-1`, `jev-2`); choose one"
        );
        let conflict = vec![record("jev-1", "a", 0.9), record("jev-1", "a", 0.1)];
        assert_eq!(
            replay(conflict, None).err().unwrap().to_string(),
            "records 1 and 2 answer the same request (model, state and questions) differently; \
             replay cannot tell which one to use: keep one"
        );
        assert!(matches!(replay(Vec::new(), None), Err(ChoiceError::Empty)));
    }

    #[test]
    fn repeats_accept_several_records_of_one_request() {
        let chosen = Choice {
            source: Source::Replay(vec![record("jev-1", "a", 0.9), record("jev-1", "a", 0.1)]),
            model: None,
            repeated_records: true,
            record: None,
        }
        .resolve()
        .unwrap();
        assert_eq!(chosen.records_per_request, Some(2));
    }
}
