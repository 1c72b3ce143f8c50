//! Recorded answers served in place of hashed ones (`jevjudge fake-server --replay`).

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
        let index = Arc::new(index);
        Self::from_fn(move |model, state, questions| {
            index.get(model, state, questions).map(|record| Recorded {
                model: record.model.clone(),
                answers: record.answers.clone(),
                usage: record.usage.clone(),
            })
        })
    }

    /// Recorded answers from `.jevl` records (for example from
    /// `jevjudge_wire::record::read_file`); the last of duplicate records wins.
    pub fn from_records(records: Vec<Record>) -> Result<Self, CanonicalError> {
        ReplayIndex::from_records(records).map(Self::from_index)
    }

    /// The recorded answer for this request, if there is one.
    pub fn lookup(&self, model: &str, state: &Value, questions: &Value) -> Option<Recorded> {
        (self.lookup)(model, state, questions)
    }
}

impl fmt::Debug for Replay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Replay").finish_non_exhaustive()
    }
}
