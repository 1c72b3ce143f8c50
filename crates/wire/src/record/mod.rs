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

use std::collections::HashMap;
use std::fmt;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use serde::ser::SerializeMap as _;
use serde_json::{Map, Value};

use crate::canonical::{self, CanonicalError};

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

/// Reads every record of a `.jevl` stream, in file order; see the [module docs](self).
///
/// Whitespace-only lines are skipped; any other bad line is an error carrying its 1-based line
/// number.
pub fn read_records(mut reader: impl BufRead) -> Result<Vec<Record>, RecordError> {
    let mut records = Vec::new();
    let mut buf = Vec::new();
    let mut line_no = 0;
    loop {
        buf.clear();
        line_no += 1;
        let at_line = |kind| RecordError {
            path: None,
            line: Some(line_no),
            kind,
        };
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => return Err(at_line(RecordErrorKind::Io(e))),
        }
        let line = std::str::from_utf8(&buf).map_err(|_| at_line(RecordErrorKind::NotUtf8))?;
        if line.trim().is_empty() {
            continue;
        }
        records.push(parse_line(line).map_err(at_line)?);
    }
    Ok(records)
}

/// Reads every record of the `.jevl` file at `path`; errors name the file
/// (`records.jevl:3: missing field `ts``).
pub fn read_file(path: &Path) -> Result<Vec<Record>, RecordError> {
    let file = std::fs::File::open(path).map_err(|e| RecordError {
        path: Some(path.to_owned()),
        line: None,
        kind: RecordErrorKind::Io(e),
    })?;
    read_records(std::io::BufReader::new(file)).map_err(|mut e| {
        e.path = Some(path.to_owned());
        e
    })
}

/// Reads every record of a `.jevl` stream like [`read_records`], with bounds and stricter
/// checks for replay: a line longer than `max_line_bytes` or a stream longer than
/// `max_total_bytes` is an error (memory stays within the caps, even for `/dev/zero`), and so
/// is a record whose `id` is not a `sha256:` digest or whose `ts` is not an RFC 3339 time.
pub fn read_records_capped(
    mut reader: impl BufRead,
    max_line_bytes: usize,
    max_total_bytes: u64,
) -> Result<Vec<Record>, RecordError> {
    use crate::lines::{LineRead, read_line_bounded};
    let mut records = Vec::new();
    let mut buf = Vec::new();
    let mut line_no = 0;
    let mut total: u64 = 0;
    loop {
        line_no += 1;
        let at_line = |kind| RecordError {
            path: None,
            line: Some(line_no),
            kind,
        };
        let bytes = match read_line_bounded(&mut reader, &mut buf, max_line_bytes) {
            Ok(LineRead::Eof) => break,
            Ok(LineRead::TooLong) => {
                return Err(at_line(RecordErrorKind::LineTooLong {
                    cap: max_line_bytes,
                }));
            }
            Ok(LineRead::Line { bytes, .. }) => bytes,
            Err(e) => return Err(at_line(RecordErrorKind::Io(e))),
        };
        total += bytes as u64;
        if total > max_total_bytes {
            return Err(at_line(RecordErrorKind::FileTooLarge {
                cap: max_total_bytes,
            }));
        }
        let line = std::str::from_utf8(&buf).map_err(|_| at_line(RecordErrorKind::NotUtf8))?;
        if line.trim().is_empty() {
            continue;
        }
        let record = parse_line(line).map_err(at_line)?;
        if !is_digest(&record.id) {
            return Err(at_line(RecordErrorKind::BadId));
        }
        if !is_rfc3339(&record.ts) {
            return Err(at_line(RecordErrorKind::BadTimestamp));
        }
        records.push(record);
    }
    Ok(records)
}

/// [`read_records_capped`] on the file at `path`; errors name the file and the line.
pub fn read_file_capped(
    path: &Path,
    max_line_bytes: usize,
    max_total_bytes: u64,
) -> Result<Vec<Record>, RecordError> {
    let file = std::fs::File::open(path).map_err(|e| RecordError {
        path: Some(path.to_owned()),
        line: None,
        kind: RecordErrorKind::Io(e),
    })?;
    read_records_capped(
        std::io::BufReader::new(file),
        max_line_bytes,
        max_total_bytes,
    )
    .map_err(|mut e| {
        e.path = Some(path.to_owned());
        e
    })
}

/// `sha256:` followed by 64 lowercase hex digits.
fn is_digest(id: &str) -> bool {
    id.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` with fields in range.
fn is_rfc3339(ts: &str) -> bool {
    let b = ts.as_bytes();
    let digits = |range: std::ops::Range<usize>| -> Option<u32> {
        let part = b.get(range)?;
        if !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(part).ok()?.parse().ok()
    };
    let fields = (|| {
        let (month, day) = (digits(5..7)?, digits(8..10)?);
        let (hour, minute, second) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
        digits(0..4)?;
        let separators = b.get(4) == Some(&b'-')
            && b.get(7) == Some(&b'-')
            && matches!(b.get(10), Some(b'T' | b't'))
            && b.get(13) == Some(&b':')
            && b.get(16) == Some(&b':');
        Some(
            separators
                && (1..=12).contains(&month)
                && (1..=31).contains(&day)
                && hour < 24
                && minute < 60
                && second <= 60,
        )
    })();
    if fields != Some(true) {
        return false;
    }
    let mut rest = &ts[19..];
    if let Some(fraction) = rest.strip_prefix('.') {
        let n = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return false;
        }
        rest = &fraction[n..];
    }
    match rest.as_bytes() {
        [b'Z' | b'z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => {
            [h1, h2, m1, m2].iter().all(|c| c.is_ascii_digit())
                && (h1 - b'0') * 10 + (h2 - b'0') < 24
                && (m1 - b'0') * 10 + (m2 - b'0') < 60
        }
        _ => false,
    }
}

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

/// What is wrong with a record line. The text never includes the line's content.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecordErrorKind {
    /// The line is not JSON.
    #[error("not valid JSON (column {column})")]
    NotJson {
        /// 1-based column where parsing failed.
        column: usize,
    },
    /// The line is not UTF-8.
    #[error("not valid UTF-8")]
    NotUtf8,
    /// The line is JSON but not an object.
    #[error("not a JSON object")]
    NotAnObject,
    /// A required field is absent.
    #[error("missing field `{0}`")]
    MissingField(&'static str),
    /// A field has the wrong JSON type.
    #[error("field `{field}` must be {expected}")]
    WrongType {
        /// The field, `request.questions` for a nested one.
        field: &'static str,
        /// What it must be, for example `"a string"`.
        expected: &'static str,
    },
    /// `v` is above [`FORMAT_VERSION`]: refused rather than guessed at.
    #[error(
        "record format v{found} was written by a newer version (this reader knows v{FORMAT_VERSION})"
    )]
    NewerVersion {
        /// The `v` found.
        found: u64,
    },
    /// `v` is not a version that ever existed (0).
    #[error("record format v{found} is not a known version")]
    UnknownVersion {
        /// The `v` found.
        found: u64,
    },
    /// The record could not be serialised.
    #[error("record cannot be written as JSON")]
    Unwritable,
    /// A line is longer than the reader's cap.
    #[error("a line is longer than the cap of {cap} bytes")]
    LineTooLong {
        /// The cap, in bytes.
        cap: usize,
    },
    /// The file is larger than the reader's cap.
    #[error("the file is larger than the cap of {cap} bytes")]
    FileTooLarge {
        /// The cap, in bytes.
        cap: u64,
    },
    /// `id` is not a `sha256:` digest of 64 lowercase hex digits.
    #[error("field `id` must be a `sha256:` digest of 64 lowercase hex digits")]
    BadId,
    /// `ts` is not an RFC 3339 time.
    #[error("field `ts` must be an RFC 3339 time like 2026-09-19T19:40:00Z")]
    BadTimestamp,
    /// Reading failed.
    #[error("cannot read: {0}")]
    Io(std::io::Error),
}

/// A bad `.jevl` line or file: where (file, 1-based line) and what ([`RecordErrorKind`]).
///
/// Displays as `records.jevl:3: missing field `ts``, or `line 3: …` when read from a stream.
#[derive(Debug)]
pub struct RecordError {
    path: Option<PathBuf>,
    line: Option<usize>,
    kind: RecordErrorKind,
}

impl RecordError {
    /// What is wrong.
    pub fn kind(&self) -> &RecordErrorKind {
        &self.kind
    }

    /// The 1-based line number, or `None` when the file could not be opened.
    pub fn line(&self) -> Option<usize> {
        self.line
    }

    /// The file, when read through [`read_file`].
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.path, self.line) {
            (Some(path), Some(line)) => write!(f, "{}:{line}: {}", path.display(), self.kind),
            (Some(path), None) => write!(f, "{}: {}", path.display(), self.kind),
            (None, Some(line)) => write!(f, "line {line}: {}", self.kind),
            (None, None) => write!(f, "{}", self.kind),
        }
    }
}

impl std::error::Error for RecordError {}

/// The current time as RFC 3339 UTC with whole seconds (`"2026-09-19T19:40:00Z"`), the form
/// of a record's `ts`. A clock before 1970 reads as `1970-01-01T00:00:00Z`.
pub fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    rfc3339_from_unix(secs)
}

/// Formats seconds since the Unix epoch as RFC 3339 UTC.
fn rfc3339_from_unix(secs: u64) -> String {
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's
/// `civil_from_days`, for non-negative counts).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468; // days since 0000-03-01
    let era = z / 146_097;
    let doe = z % 146_097; // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11], March first
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
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
        let mut seen = std::collections::HashSet::new();
        self.records
            .iter()
            .map(|r| r.model.as_str())
            .filter(|m| seen.insert(*m))
            .collect()
    }

    /// The distinct models that were asked for (`meta.requested_model`, else the answering
    /// model), in first-seen order.
    pub fn requested_models(&self) -> Vec<&str> {
        let mut seen = std::collections::HashSet::new();
        self.records
            .iter()
            .map(Record::requested_model)
            .filter(|m| seen.insert(*m))
            .collect()
    }

    /// Every model name a lookup can match (requested and answering), in first-seen order.
    pub fn models(&self) -> Vec<&str> {
        let mut seen = std::collections::HashSet::new();
        self.records
            .iter()
            .flat_map(|r| [r.requested_model(), r.model.as_str()])
            .filter(|m| seen.insert(*m))
            .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates_match_known_days() {
        assert_eq!(rfc3339_from_unix(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_from_unix(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339_from_unix(951_868_799), "2000-02-29T23:59:59Z");
        assert_eq!(rfc3339_from_unix(951_868_800), "2000-03-01T00:00:00Z");
        assert_eq!(rfc3339_from_unix(4_107_542_400), "2100-03-01T00:00:00Z");
        assert_eq!(rfc3339_from_unix(1_790_797_200), "2026-09-30T19:40:00Z");
        assert_eq!(rfc3339_from_unix(1_703_980_800), "2023-12-31T00:00:00Z");
        assert_eq!(rfc3339_from_unix(253_402_300_799), "9999-12-31T23:59:59Z");
        // No overflow or panic at the far end.
        let far = rfc3339_from_unix(u64::MAX);
        assert!(far.ends_with('Z'));
    }

    #[test]
    fn now_has_the_record_ts_shape() {
        let now = now_rfc3339();
        assert_eq!(now.len(), 20, "{now}");
        assert_eq!(&now[4..5], "-");
        assert_eq!(&now[10..11], "T");
        assert!(now.ends_with('Z'));
    }

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
