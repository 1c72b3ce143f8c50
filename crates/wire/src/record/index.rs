//! Finding a record by its request: the replay index, and conflicting records.

use std::{collections::HashMap, fmt};

use serde_json::Value;

use super::Record;
use crate::canonical::{self, CanonicalError};

/// Two records that answer the same request differently: replay could not tell which one a
/// run meant. Returns the 0-based positions of the first such pair.
pub fn find_conflict(records: &[Record]) -> Result<Option<(usize, usize)>, CanonicalError> {
    let mut by_digest: HashMap<[u8; 32], usize> = HashMap::with_capacity(records.len() * 2);
    for (i, record) in records.iter().enumerate() {
        let state = &record.request.state;
        let questions = &record.request.questions;
        let mut keys = vec![canonical::request_digest_bytes(
            Some(&record.model),
            state,
            questions,
        )?];
        let requested = record.requested_model();
        if requested != record.model {
            keys.push(canonical::request_digest_bytes(
                Some(requested),
                state,
                questions,
            )?);
        }
        for key in keys {
            if let Some(&first) = by_digest.get(&key) {
                let other = &records[first];
                if other.model != record.model || other.answers != record.answers {
                    return Ok(Some((first, i)));
                }
            } else {
                by_digest.insert(key, i);
            }
        }
    }
    Ok(None)
}

/// Recorded exchanges by request digest, for `--replay`.
///
/// Each record is indexed under the digest of (`meta.requested_model` or else `model`, state,
/// questions) and under the digest of (`model`, state, questions), both computed here; the
/// stored `id` is never read. A lookup digests (model asked for, state, questions), and when
/// several records match, the last one in the input wins. Records that no lookup can reach
/// (every key taken by a later record) are dropped.
#[derive(Clone, Default)]
pub struct ReplayIndex {
    records: Vec<Record>,
    by_digest: HashMap<[u8; 32], usize>,
}

impl ReplayIndex {
    /// Indexes `records` (in file order; the last of duplicates wins).
    pub fn from_records(records: Vec<Record>) -> Result<ReplayIndex, CanonicalError> {
        let mut by_digest = HashMap::with_capacity(records.len() * 2);
        for (i, record) in records.iter().enumerate() {
            let state = &record.request.state;
            let questions = &record.request.questions;
            let answered = canonical::request_digest_bytes(Some(&record.model), state, questions)?;
            by_digest.insert(answered, i);
            let requested = record.requested_model();
            if requested != record.model {
                let asked = canonical::request_digest_bytes(Some(requested), state, questions)?;
                by_digest.insert(asked, i);
            }
        }

        // Keep only reachable records, renumbered in input order.
        let mut new_index = vec![None; records.len()];
        for &i in by_digest.values() {
            new_index[i] = Some(0);
        }
        let mut kept = Vec::with_capacity(by_digest.len().min(records.len()));
        for (slot, record) in new_index.iter_mut().zip(records) {
            if slot.is_some() {
                *slot = Some(kept.len());
                kept.push(record);
            }
        }
        for i in by_digest.values_mut() {
            // Every value was marked reachable above.
            *i = new_index[*i].unwrap_or(*i);
        }
        Ok(ReplayIndex {
            records: kept,
            by_digest,
        })
    }

    /// The recorded exchange for this request to `model` (the model asked for, alias or
    /// versioned id), if any.
    pub fn get(&self, model: &str, state: &Value, questions: &Value) -> Option<&Record> {
        let key = canonical::request_digest_bytes(Some(model), state, questions).ok()?;
        self.by_digest.get(&key).and_then(|&i| self.records.get(i))
    }

    /// How many records lookups can return.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether no record can be returned.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Whether every record is a fixture (see [`Record::is_fixture`]), so outputs say
    /// `fixture`; `false` for an empty index.
    pub fn all_fixture(&self) -> bool {
        !self.records.is_empty() && self.records.iter().all(Record::is_fixture)
    }

    /// The distinct models that answered, in first-seen order.
    pub fn answering_models(&self) -> Vec<&str> {
        first_seen(self.records.iter().map(|r| r.model.as_str()))
    }

    /// The distinct models that were asked for (`meta.requested_model`, else the answering
    /// model), in first-seen order.
    pub fn requested_models(&self) -> Vec<&str> {
        first_seen(self.records.iter().map(Record::requested_model))
    }

    /// Every model name a lookup can match (requested and answering), in first-seen order.
    pub fn models(&self) -> Vec<&str> {
        first_seen(
            self.records
                .iter()
                .flat_map(|r| [r.requested_model(), r.model.as_str()]),
        )
    }

    /// Whether any record is a fixture.
    pub fn any_fixture(&self) -> bool {
        self.records.iter().any(Record::is_fixture)
    }

    /// Whether any record was answered by jevjudge's fake server (see [`Record::is_fake`]).
    pub fn any_fake(&self) -> bool {
        self.records.iter().any(Record::is_fake)
    }
}

impl fmt::Debug for ReplayIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Records hold private text: show only the counts.
        f.debug_struct("ReplayIndex")
            .field("records", &self.records.len())
            .field("digests", &self.by_digest.len())
            .finish_non_exhaustive()
    }
}

/// The distinct names of `names`, in first-seen order.
fn first_seen<'a>(names: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut seen = std::collections::HashSet::new();
    names.filter(|name| seen.insert(*name)).collect()
}
