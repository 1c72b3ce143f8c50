//! `.jevl` exchange records: jevkit's record format v1 (systemone-wire.md §15,
//! cli-and-formats.md §3).
//!
//! A `.jevl` file is JSON Lines in UTF-8, one [`Record`] per line: the request exactly as sent,
//! the answers exactly as returned, and the model that answered. jevjudge writes them for
//! `--record` and reads them for `--replay`.
//!
//! # Reading is strict
//!
//! [`parse_line`] refuses a line that is not a JSON object, lacks a required field or has one
//! of the wrong type, and refuses a `v` it does not know: a `v` above [`FORMAT_VERSION`]
//! ("written by a newer version") and `v` 0. [`read_records`] stops at the first bad line and
//! names it by its 1-based number; a line that does not parse is an error, never a skip, so a
//! truncated golden set cannot pass for a good one.
//!
//! Lines holding only whitespace are skipped, as jevkit-core's reader (`jevkit_core/record.py`,
//! 0.2.0) skips them; they carry no record, and a stray trailing blank line is common in
//! hand-edited files. Line numbers still count them.
//!
//! Unknown top-level keys (and unknown keys of `request`) are kept in `extra` and written back
//! by [`Record::to_line`]. The optional fields `usage`, `label`, `tags` and `meta` read `null`
//! as absent, as jevkit does.
//!
//! # Replay never trusts the stored `id`
//!
//! jevkit's stored `id` digests the *answering* model, while its pytest plugin re-indexes by
//! `meta.requested_model`; a reader that trusts `id` alone misses every record made through an
//! alias. [`ReplayIndex`] computes both digests itself from the record's request, and never
//! falls back to the model-free digest, which would replay another model's answers.
//!
//! Errors say where and what (`records.jevl:3: missing field `ts``) and never quote the line:
//! records hold private text.
//!
//! # Example
//!
//! ```
//! use jevjudge_wire::record::{ReplayIndex, Record, parse_line};
//! use serde_json::{Map, json};
//!
//! let state = json!("The parcel arrived broken.");
//! let questions: Map<_, _> = [("ok".to_owned(), json!({"type": "noul", "instructions": "Refund?"}))]
//!     .into_iter()
//!     .collect();
//! let answers: Map<_, _> = [("ok".to_owned(), json!({"type": "noul", "noul": 0.9}))]
//!     .into_iter()
//!     .collect();
//! let record = Record::new(
//!     "jev-1-2026-09", "jev-latest", state.clone(), questions.clone(), answers, None,
//!     "2026-09-19T19:40:00Z".to_owned(),
//! )
//! .unwrap();
//! let line = record.to_line().unwrap();
//! assert_eq!(parse_line(&line).unwrap(), record);
//!
//! let index = ReplayIndex::from_records(vec![record]).unwrap();
//! let questions = serde_json::Value::Object(questions);
//! assert!(index.get("jev-latest", &state, &questions).is_some());
//! assert!(index.get("jev-1-2026-09", &state, &questions).is_some());
//! assert!(index.get("jev-preview", &state, &questions).is_none());
//! ```

use serde::ser::SerializeMap as _;
use serde_json::{Map, Value};

use crate::canonical::{self, CanonicalError};

mod error;
mod index;
mod read;
mod time;

pub use error::{RecordError, RecordErrorKind};
pub use index::{ReplayIndex, find_conflict};
pub use read::{read_file, read_file_capped, read_records, read_records_capped};
pub use time::now_rfc3339;

/// The record format version this crate reads and writes.
pub const FORMAT_VERSION: u64 = 1;

/// The top-level keys with a meaning; any other key goes to [`Record::extra`].
const RECORD_KEYS: [&str; 10] = [
    "v", "id", "ts", "model", "request", "answers", "usage", "label", "tags", "meta",
];

/// One exchange: a request as sent and the answers as returned.
///
/// Serialises to the field order jevkit writes (`v`, `id`, `ts`, `model`, `request`,
/// `answers`, then the optional fields, then `extra`); an `extra` key that names a known field
/// is not written. Deserialising runs the checks of [`parse_line`].
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(try_from = "Map<String, Value>")]
pub struct Record {
    /// Format version; [`FORMAT_VERSION`] for records made here.
    pub v: u64,
    /// `"sha256:…"` digest of (answering model, state, questions) as the writer computed it.
    /// Informational only: readers compute their own (see [`ReplayIndex`]).
    pub id: String,
    /// When the exchange happened, RFC 3339 UTC (`"2026-09-19T19:40:00Z"`).
    pub ts: String,
    /// The versioned model id that answered, not the alias that was asked for.
    pub model: String,
    /// The request exactly as sent.
    pub request: RecordRequest,
    /// The answers per question id, exactly as returned: never normalised or rounded.
    pub answers: Map<String, Value>,
    /// Token usage as returned (`{"input_tokens": n, "output_tokens": n}`), if any.
    pub usage: Option<Value>,
    /// Ground truth per question id, if labelled.
    pub label: Option<Value>,
    /// Free tags, if any.
    pub tags: Option<Vec<String>>,
    /// Free-form metadata; jevjudge reads `requested_model`, `fixture` and `fake` from it.
    pub meta: Option<Map<String, Value>>,
    /// Unknown top-level keys, kept so that they survive a rewrite.
    pub extra: Map<String, Value>,
}

/// The `request` of a [`Record`]: `state` and `questions` exactly as sent.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(try_from = "Map<String, Value>")]
pub struct RecordRequest {
    /// The state the questions were asked about.
    pub state: Value,
    /// The questions per question id, in the order they were sent.
    pub questions: Map<String, Value>,
    /// Unknown keys of `request`, kept so that they survive a rewrite.
    pub extra: Map<String, Value>,
}

impl Record {
    /// Builds the record of one successful exchange.
    ///
    /// `id` is the digest of (`answering_model`, state, questions), and `meta.requested_model`
    /// is `requested_model` (the alias or id that was asked for). `ts` is RFC 3339 UTC, for
    /// example from [`now_rfc3339`].
    pub fn new(
        answering_model: &str,
        requested_model: &str,
        state: Value,
        questions: Map<String, Value>,
        answers: Map<String, Value>,
        usage: Option<Value>,
        ts: String,
    ) -> Result<Record, CanonicalError> {
        let id = canonical::request_digest_bytes(Some(answering_model), &state, &questions)
            .map(|bytes| canonical::hex_digest(&bytes))?;
        let mut meta = Map::new();
        meta.insert(
            "requested_model".to_owned(),
            Value::String(requested_model.to_owned()),
        );
        Ok(Record {
            v: FORMAT_VERSION,
            id,
            ts,
            model: answering_model.to_owned(),
            request: RecordRequest {
                state,
                questions,
                extra: Map::new(),
            },
            answers,
            usage,
            label: None,
            tags: None,
            meta: Some(meta),
            extra: Map::new(),
        })
    }

    /// The model that was asked for: `meta.requested_model` when it is a string, else
    /// [`model`](Record::model).
    pub fn requested_model(&self) -> &str {
        match self.meta.as_ref().and_then(|m| m.get("requested_model")) {
            Some(Value::String(requested)) => requested,
            _ => &self.model,
        }
    }

    /// Whether this is a hand-made fixture (`meta.fixture` is `true`), whose outputs say
    /// `fixture` rather than `replay`.
    pub fn is_fixture(&self) -> bool {
        matches!(
            self.meta.as_ref().and_then(|m| m.get("fixture")),
            Some(Value::Bool(true))
        )
    }

    /// Whether this exchange was answered by jevjudge's fake server (`meta.fake` is `true`), so
    /// that its replay says `fake`, never the model it names.
    pub fn is_fake(&self) -> bool {
        matches!(
            self.meta.as_ref().and_then(|m| m.get("fake")),
            Some(Value::Bool(true))
        )
    }

    /// Marks this record as answered by jevjudge's fake server (`meta.fake = true`).
    pub fn mark_fake(&mut self) {
        self.meta
            .get_or_insert_with(Map::new)
            .insert("fake".to_owned(), Value::Bool(true));
    }

    /// The record as one compact JSON object followed by `"\n"`, ready to append to a `.jevl`
    /// file.
    ///
    /// Numbers are written so that they read back as the same value (an integer stays an
    /// integer, a float keeps its exact value). Refuses a record whose `v` this crate would
    /// refuse to read.
    pub fn to_line(&self) -> Result<String, RecordErrorKind> {
        check_version(self.v)?;
        let mut line = serde_json::to_string(self).map_err(|_| RecordErrorKind::Unwritable)?;
        line.push('\n');
        Ok(line)
    }
}

impl serde::Serialize for Record {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("v", &self.v)?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("ts", &self.ts)?;
        map.serialize_entry("model", &self.model)?;
        map.serialize_entry("request", &self.request)?;
        map.serialize_entry("answers", &self.answers)?;
        if let Some(usage) = &self.usage {
            map.serialize_entry("usage", usage)?;
        }
        if let Some(label) = &self.label {
            map.serialize_entry("label", label)?;
        }
        if let Some(tags) = &self.tags {
            map.serialize_entry("tags", tags)?;
        }
        if let Some(meta) = &self.meta {
            map.serialize_entry("meta", meta)?;
        }
        for (key, value) in &self.extra {
            if !RECORD_KEYS.contains(&key.as_str()) {
                map.serialize_entry(key, value)?;
            }
        }
        map.end()
    }
}

impl serde::Serialize for RecordRequest {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("state", &self.state)?;
        map.serialize_entry("questions", &self.questions)?;
        for (key, value) in &self.extra {
            if key != "state" && key != "questions" {
                map.serialize_entry(key, value)?;
            }
        }
        map.end()
    }
}

impl TryFrom<Map<String, Value>> for Record {
    type Error = RecordErrorKind;

    fn try_from(object: Map<String, Value>) -> Result<Self, Self::Error> {
        let mut fields: [Option<Value>; RECORD_KEYS.len()] = Default::default();
        let mut extra = Map::new();
        for (key, value) in object {
            match RECORD_KEYS.iter().position(|k| *k == key) {
                Some(i) => fields[i] = Some(value),
                None => {
                    extra.insert(key, value);
                }
            }
        }
        let [v, id, ts, model, request, answers, usage, label, tags, meta] = fields;

        // The version first: a newer record may not have this version's fields.
        let v = match v {
            None => return Err(RecordErrorKind::MissingField("v")),
            Some(Value::Number(n)) => n.as_u64().ok_or(RecordErrorKind::WrongType {
                field: "v",
                expected: "a non-negative integer",
            })?,
            Some(_) => {
                return Err(RecordErrorKind::WrongType {
                    field: "v",
                    expected: "a non-negative integer",
                });
            }
        };
        check_version(v)?;

        let id = required_string("id", id)?;
        let ts = required_string("ts", ts)?;
        let model = required_string("model", model)?;
        let request = match request {
            None => return Err(RecordErrorKind::MissingField("request")),
            Some(Value::Object(request)) => RecordRequest::try_from(request)?,
            Some(_) => return Err(wrong_type("request", "an object")),
        };
        let answers = match answers {
            None => return Err(RecordErrorKind::MissingField("answers")),
            Some(Value::Object(answers)) => answers,
            Some(_) => return Err(wrong_type("answers", "an object")),
        };
        let usage = usage.filter(|u| !u.is_null());
        let label = label.filter(|l| !l.is_null());
        let tags = match tags {
            None | Some(Value::Null) => None,
            Some(Value::Array(items)) => Some(
                items
                    .into_iter()
                    .map(|item| match item {
                        Value::String(tag) => Ok(tag),
                        _ => Err(wrong_type("tags", "a list of strings")),
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            Some(_) => return Err(wrong_type("tags", "a list of strings")),
        };
        let meta = match meta {
            None | Some(Value::Null) => None,
            Some(Value::Object(meta)) => Some(meta),
            Some(_) => return Err(wrong_type("meta", "an object")),
        };
        Ok(Record {
            v,
            id,
            ts,
            model,
            request,
            answers,
            usage,
            label,
            tags,
            meta,
            extra,
        })
    }
}

impl TryFrom<Map<String, Value>> for RecordRequest {
    type Error = RecordErrorKind;

    fn try_from(object: Map<String, Value>) -> Result<Self, Self::Error> {
        let mut state = None;
        let mut questions = None;
        let mut extra = Map::new();
        for (key, value) in object {
            match key.as_str() {
                "state" => state = Some(value),
                "questions" => questions = Some(value),
                _ => {
                    extra.insert(key, value);
                }
            }
        }
        let state = state.ok_or(RecordErrorKind::MissingField("request.state"))?;
        let questions = match questions {
            None => return Err(RecordErrorKind::MissingField("request.questions")),
            Some(Value::Object(questions)) => questions,
            Some(_) => return Err(wrong_type("request.questions", "an object")),
        };
        Ok(RecordRequest {
            state,
            questions,
            extra,
        })
    }
}

fn required_string(field: &'static str, value: Option<Value>) -> Result<String, RecordErrorKind> {
    match value {
        None => Err(RecordErrorKind::MissingField(field)),
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(wrong_type(field, "a string")),
    }
}

fn wrong_type(field: &'static str, expected: &'static str) -> RecordErrorKind {
    RecordErrorKind::WrongType { field, expected }
}

fn check_version(v: u64) -> Result<(), RecordErrorKind> {
    if v > FORMAT_VERSION {
        Err(RecordErrorKind::NewerVersion { found: v })
    } else if v == 0 {
        Err(RecordErrorKind::UnknownVersion { found: v })
    } else {
        Ok(())
    }
}

/// Reads one `.jevl` line (a trailing newline is allowed) strictly; see the [module
/// docs](self).
pub fn parse_line(line: &str) -> Result<Record, RecordErrorKind> {
    let value: Value =
        serde_json::from_str(line).map_err(|e| RecordErrorKind::NotJson { column: e.column() })?;
    match value {
        Value::Object(object) => Record::try_from(object),
        _ => Err(RecordErrorKind::NotAnObject),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_checked() {
        assert!(check_version(FORMAT_VERSION).is_ok());
        assert!(matches!(
            check_version(2),
            Err(RecordErrorKind::NewerVersion { found: 2 })
        ));
        assert!(matches!(
            check_version(0),
            Err(RecordErrorKind::UnknownVersion { found: 0 })
        ));
    }
}
