//! What is wrong with a record line, and where.

use super::FORMAT_VERSION;
use crate::lines::{InputError, LineFault};

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

/// What a fault of the line reader means for a `.jevl` stream.
impl From<LineFault> for RecordErrorKind {
    fn from(fault: LineFault) -> RecordErrorKind {
        match fault {
            LineFault::Io(e) => RecordErrorKind::Io(e),
            LineFault::TooLong { cap } => RecordErrorKind::LineTooLong { cap },
            LineFault::TooLarge { cap } => RecordErrorKind::FileTooLarge { cap },
            LineFault::NotUtf8 => RecordErrorKind::NotUtf8,
        }
    }
}

/// A bad `.jevl` line or file: where (file, 1-based line) and what ([`RecordErrorKind`]).
///
/// Displays as `records.jevl:3: missing field `ts``, or `line 3: …` when read from a stream.
pub type RecordError = InputError<RecordErrorKind>;
