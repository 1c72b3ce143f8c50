//! What one review row holds, written and read back.

use std::{
    fmt,
    str::FromStr,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use jevjudge_wire::Usage;
use serde::Serialize;
use serde_json::{Map, Value};
use uuid::Uuid;

/// The longest caller `reference`, in characters.
pub const MAX_REFERENCE_CHARS: usize = 256;

/// The statuses a review can have, as stored and as filters accept them.
pub const STATUSES: [&str; 4] = ["PASS", "FAIL", "INCONCLUSIVE", "ERROR"];

/// A review's id: a UUIDv7, so ids sort by the time they were made (milliseconds, then a
/// per-process counter, then random bits) and replicas never collide.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ReviewId(Uuid);

impl ReviewId {
    /// A fresh id for a review received now.
    #[allow(clippy::new_without_default)]
    pub fn new() -> ReviewId {
        ReviewId(Uuid::now_v7())
    }

    /// The time embedded in the id (millisecond precision): when the review was received.
    pub fn received_at(&self) -> SystemTime {
        let (secs, nanos) = self
            .0
            .get_timestamp()
            .map(|t| t.to_unix())
            .unwrap_or((0, 0));
        UNIX_EPOCH + Duration::new(secs, nanos)
    }
}

impl fmt::Display for ReviewId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0.hyphenated(), f)
    }
}

/// A string that is not a review id (a UUIDv7 in its hyphenated form).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a review id (a UUIDv7 like 019abc12-3456-7def-8123-456789abcdef)")]
pub struct ReviewIdError;

impl FromStr for ReviewId {
    type Err = ReviewIdError;

    fn from_str(text: &str) -> Result<ReviewId, ReviewIdError> {
        if text.len() != 36 {
            return Err(ReviewIdError);
        }
        let uuid = Uuid::try_parse(text).map_err(|_| ReviewIdError)?;
        if uuid.get_version_num() != 7 {
            return Err(ReviewIdError);
        }
        Ok(ReviewId(uuid))
    }
}

impl Serialize for ReviewId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Checks a caller's `reference`: 1 to 256 characters, no control characters.
pub fn check_reference(reference: &str) -> Result<(), String> {
    if reference.is_empty() {
        return Err("`reference` must not be empty".to_owned());
    }
    if reference.chars().count() > MAX_REFERENCE_CHARS {
        return Err(format!(
            "`reference` must be at most {MAX_REFERENCE_CHARS} characters"
        ));
    }
    check_no_controls("reference", reference)
}

/// Checks a text field that reaches the store as it is (a definition version, a filter, a
/// reference): no control character (U+0000 to U+001F, U+007F to U+009F). PostgreSQL refuses
/// a NUL in text outright, so such a value must be refused as the caller's mistake before it
/// gets there, alike on both stores. The message names `field`.
pub fn check_no_controls(field: &str, text: &str) -> Result<(), String> {
    if text.chars().any(char::is_control) {
        return Err(format!("`{field}` must not contain control characters"));
    }
    Ok(())
}

/// The state text of a review, kept only when the service was asked to (`--store-state`),
/// with what a replayable `.jevl` record needs besides the definition's questions.
#[derive(Clone, PartialEq)]
pub struct KeptState {
    /// The state as the caller sent it.
    pub state: Value,
    /// The answers exactly as the backend returned them, when the exchange succeeded.
    pub answers: Option<Map<String, Value>>,
    /// The model that was asked for (an alias or a versioned id).
    pub requested_model: String,
}

impl fmt::Debug for KeptState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeptState")
            .field("state", &"<private>")
            .field("answers", &self.answers.as_ref().map(Map::len))
            .field("requested_model", &self.requested_model)
            .finish()
    }
}

/// One review to write: the verdict and where it came from. No secrets; state text only in
/// [`NewReview::kept`].
#[derive(Debug, Clone, PartialEq)]
pub struct NewReview {
    /// The id (its time is the received time).
    pub id: ReviewId,
    /// The definition's version.
    pub definition_version: String,
    /// `sha256:…` of the definition's content (questions and thresholds).
    pub definition_digest: String,
    /// `sha256:…` of the canonical JSON of the reviewed state.
    pub state_digest: String,
    /// The caller's reference (ticket or message id), if given.
    pub reference: Option<String>,
    /// `PASS`, `FAIL`, `INCONCLUSIVE` or `ERROR`.
    pub status: String,
    /// The error code (`NONE` unless ERROR).
    pub error: String,
    /// The detail code of an ERROR.
    pub detail: Option<String>,
    /// The findings object, as the Result JSON has it.
    pub findings: Value,
    /// The model that answered, when known.
    pub model: Option<String>,
    /// Token usage, when known.
    pub usage: Option<Usage>,
    /// How long the review took.
    pub elapsed: Duration,
    /// The request id (`x-request-id`).
    pub request_id: String,
    /// Where answers came from (`systemone`, `replay`, `fake`, …).
    pub backend: String,
    /// The state text, only when asked to keep it.
    pub kept: Option<KeptState>,
    /// For a shadow review: the live review it shadows (a shadow is never queued and is left
    /// out of lists and exports unless asked for).
    pub shadow_of: Option<ReviewId>,
    /// The route the live review came through (on its shadows too); `None` for a review of an
    /// exact version.
    pub route: Option<String>,
}

/// A review read back. Holds no state text: whether it was kept is all it says.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Review {
    /// The id.
    pub review_id: ReviewId,
    /// When it was received, RFC 3339 UTC with milliseconds.
    pub received_at: String,
    /// The definition's version.
    pub definition_version: String,
    /// `sha256:…` of the definition's content.
    pub definition_digest: String,
    /// `sha256:…` of the reviewed state.
    pub state_digest: String,
    /// The caller's reference, if any.
    pub reference: Option<String>,
    /// The overall status.
    pub status: String,
    /// The error code.
    pub error: String,
    /// The detail code of an ERROR.
    pub detail: Option<String>,
    /// The findings.
    pub findings: Value,
    /// The model that answered.
    pub model: Option<String>,
    /// Token usage.
    pub usage: Option<Usage>,
    /// Elapsed milliseconds (microsecond precision).
    pub elapsed_millis: f64,
    /// The request id.
    pub request_id: String,
    /// Where answers came from.
    pub backend: String,
    /// Whether the state text is still kept.
    pub state_kept: bool,
    /// When kept state text was erased by retention, if it was.
    pub state_erased_at: Option<String>,
    /// For a shadow review: the live review it shadows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shadow_of: Option<ReviewId>,
    /// The route the (live) review came through, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub route: Option<String>,
}

/// Filters of a list; every one given must match.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Exactly this reference.
    pub reference: Option<String>,
    /// Exactly this definition version.
    pub version: Option<String>,
    /// Exactly this status (one of [`STATUSES`]).
    pub status: Option<String>,
    /// Received at or after this time.
    pub since: Option<SystemTime>,
    /// Shadow reviews too (left out unless asked for).
    pub shadow: bool,
}

/// One page of a list, newest first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Page {
    /// The reviews, newest first.
    pub reviews: Vec<Review>,
    /// Pass as `cursor` to get the next (older) page; absent on the last page.
    pub next_cursor: Option<String>,
}

/// A list cursor: opaque to callers; it is `r1.` followed by the last review id of the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor(pub(crate) ReviewId);

/// A cursor this version did not make.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`cursor` is not a cursor from a previous page's next_cursor")]
pub struct CursorError;

impl Cursor {
    /// The cursor after this review.
    pub fn after(id: ReviewId) -> Cursor {
        Cursor(id)
    }
}

impl fmt::Display for Cursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "r1.{}", self.0)
    }
}

impl FromStr for Cursor {
    type Err = CursorError;

    fn from_str(text: &str) -> Result<Cursor, CursorError> {
        let id = text.strip_prefix("r1.").ok_or(CursorError)?;
        id.parse().map(Cursor).map_err(|_| CursorError)
    }
}

/// Milliseconds since the Unix epoch (0 before it, saturating far after).
pub(crate) fn unix_millis(time: SystemTime) -> i64 {
    time.duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// RFC 3339 UTC with milliseconds of Unix milliseconds.
pub(crate) fn rfc3339_millis(millis: i64) -> String {
    let time = UNIX_EPOCH + Duration::from_millis(u64::try_from(millis).unwrap_or(0));
    humantime::format_rfc3339_millis(time).to_string()
}

/// Parses an RFC 3339 time, normalised to UTC: `2026-11-30T12:00:00Z`, with a fraction
/// (`…:00.5Z`), with an offset (`2026-11-30T14:00:00+02:00`, `…-05:00`), with lower-case `t`
/// and `z`, or with a space for `T`; or a bare date (`2026-11-30`, midnight UTC).
pub fn parse_time(text: &str) -> Result<SystemTime, String> {
    let text = text.trim();
    let refused = || format!("`{text}` is not an RFC 3339 time like 2026-11-30T12:00:00Z");
    if !text.is_ascii() {
        return Err(refused());
    }
    if text.len() == 10 {
        return humantime::parse_rfc3339(&format!("{text}T00:00:00Z")).map_err(|_| refused());
    }
    let upper = text.to_ascii_uppercase();
    // `±HH:MM` at the end: the local time, then the offset taken away.
    let (local, offset_secs) = match upper.len().checked_sub(6).map(|at| upper.split_at(at)) {
        Some((local, offset))
            if offset.len() == 6
                && matches!(offset.as_bytes()[0], b'+' | b'-')
                && offset.as_bytes()[3] == b':' =>
        {
            let number = |digits: &str| {
                digits
                    .bytes()
                    .all(|b| b.is_ascii_digit())
                    .then(|| digits.parse::<u64>().ok())
                    .flatten()
            };
            let (Some(hours), Some(minutes)) = (number(&offset[1..3]), number(&offset[4..6]))
            else {
                return Err(refused());
            };
            if hours > 23 || minutes > 59 {
                return Err(refused());
            }
            let secs = i64::try_from(hours * 3600 + minutes * 60).map_err(|_| refused())?;
            let sign = if offset.starts_with('-') { -1 } else { 1 };
            (format!("{local}Z"), sign * secs)
        }
        _ => (upper.clone(), 0),
    };
    let local = humantime::parse_rfc3339_weak(&local).map_err(|_| refused())?;
    let shift = Duration::from_secs(offset_secs.unsigned_abs());
    // 14:00+02:00 is 12:00 UTC; 07:00-05:00 is 12:00 UTC.
    let utc = if offset_secs >= 0 {
        local.checked_sub(shift)
    } else {
        local.checked_add(shift)
    };
    utc.ok_or_else(refused)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn review_ids_are_time_ordered_uuid_v7() {
        let first = ReviewId::new();
        let second = ReviewId::new();
        assert!(second > first);
        assert!(
            second.to_string() > first.to_string(),
            "text order is time order"
        );
        assert_eq!(first.to_string().parse::<ReviewId>(), Ok(first));
        let age = SystemTime::now()
            .duration_since(first.received_at())
            .unwrap();
        assert!(age < Duration::from_secs(60));
        // A v4 UUID is not a review id.
        assert!(
            "8c2d4a9e-1f3b-4c5d-9e7f-0a1b2c3d4e5f"
                .parse::<ReviewId>()
                .is_err()
        );
        assert!("x".parse::<ReviewId>().is_err());
    }

    #[test]
    fn references_are_at_most_256_characters() {
        assert!(check_reference("ticket-4711").is_ok());
        assert!(check_reference(&"é".repeat(256)).is_ok());
        assert!(check_reference(&"é".repeat(257)).is_err());
        assert!(check_reference("").is_err());
        assert!(check_reference("a\nb").is_err());
    }

    #[test]
    fn control_characters_in_text_fields_are_refused_naming_the_field() {
        assert!(check_no_controls("version", "refund-answer-v1").is_ok());
        assert!(check_no_controls("version", "é✓ v2").is_ok());
        for text in [
            "a\0b",
            "\0",
            "a\tb",
            "a\nb",
            "a\rb",
            "\u{1b}[31m",
            "\u{7f}",
            "\u{85}",
        ] {
            assert_eq!(
                check_no_controls("version", text),
                Err("`version` must not contain control characters".to_owned()),
                "{text:?}"
            );
        }
        assert!(check_reference("a\0b").is_err());
    }

    #[test]
    fn cursors_round_trip_and_refuse_others() {
        let cursor = Cursor::after(ReviewId::new());
        assert_eq!(cursor.to_string().parse::<Cursor>(), Ok(cursor));
        assert!("r2.x".parse::<Cursor>().is_err());
        assert!(cursor.0.to_string().parse::<Cursor>().is_err());
    }

    #[test]
    fn times_parse_as_rfc3339_or_dates() {
        let t = parse_time("2026-11-30").unwrap();
        assert_eq!(unix_millis(t), 1_795_996_800_000);
        assert_eq!(
            rfc3339_millis(1_795_996_800_000),
            "2026-11-30T00:00:00.000Z"
        );
        assert!(parse_time("2026-11-30T01:02:03.5Z").is_ok());
        assert!(parse_time("yesterday").is_err());
    }

    #[test]
    fn defect_10_times_with_offsets_and_lower_case_letters_parse_as_utc() {
        let noon = 1_795_996_800_000 + 12 * 3_600_000;
        for text in [
            "2026-11-30T12:00:00Z",
            "2026-11-30t12:00:00z",
            "2026-11-30T14:00:00+02:00",
            "2026-11-30t14:00:00+02:00",
            "2026-11-30T07:00:00-05:00",
            "2026-11-30T12:00:00+00:00",
            "2026-11-30T12:00:00-00:00",
            "2026-11-30 12:00:00Z",
            "2026-12-01T01:30:00+13:30",
        ] {
            assert_eq!(parse_time(text).map(unix_millis), Ok(noon), "{text}");
        }
        assert_eq!(
            parse_time("2026-11-30T14:00:00.250+02:00").map(unix_millis),
            Ok(noon + 250)
        );
        for text in [
            "2026-11-30T12:00:00+24:00",
            "2026-11-30T12:00:00+02:60",
            "2026-11-30T12:00:00+0x:00",
            "2026-11-30T12:00:00+02-00",
            "2026-11-30T12:00:00é",
            "2026-13-30T12:00:00+02:00",
        ] {
            assert!(parse_time(text).is_err(), "{text}");
        }
    }
}
