//! The faults a test can script (systemone-wire.md §13 item 7).

use std::time::{Duration, SystemTime};

use serde_json::Value;

/// What the fake does to one `POST /v1/systemone` instead of (or on top of) answering normally.
///
/// Status faults (429, 529, 5xx, [`Fault::Json`], [`Fault::Raw`], [`Fault::Body`]) and
/// connection faults replace the response whatever the request was, before auth and validation. Body faults (truncated,
/// invalid, XSSI, `NaN`, …) and answer faults (missing answer, broken sum, …) change a 200
/// answer; a request that would be rejected is still rejected. [`Fault::Delay`] waits, then
/// answers normally.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Fault {
    /// Answer normally (a placeholder in a sequence).
    Pass,

    /// 429 `rate_limit_error` with no wait hint.
    RateLimited,
    /// 429 with `Retry-After: <seconds>`.
    RetryAfterSeconds(u64),
    /// 429 with `Retry-After: <HTTP date>` (IMF-fixdate, whole seconds).
    RetryAfterDate(SystemTime),
    /// 429 with `retry-after-ms: <milliseconds>`.
    RetryAfterMs(u64),
    /// 529 `overloaded_error`.
    Overloaded,
    /// This status (500, 502, 503, 504, …) with a non-JSON HTML body, as gateways send.
    Html(u16),
    /// Any status with this JSON body, for example 401 `{"message": "invalid key"}`.
    Json {
        /// The HTTP status.
        status: u16,
        /// The JSON body.
        body: Value,
    },
    /// Any status, extra headers and raw body bytes (headers may override `Content-Type`).
    Raw {
        /// The HTTP status.
        status: u16,
        /// Extra response headers as (name, value).
        headers: Vec<(String, String)>,
        /// The body bytes, sent as they are.
        body: Vec<u8>,
    },

    /// Close the connection (FIN) before sending any response (over a real socket).
    Close,
    /// Reset the connection (TCP RST) before sending any response (over a real socket; on
    /// non-Unix systems this is a plain close).
    Reset,
    /// Send the 200 headers with the full `Content-Length`, half the body, then close.
    CloseMidBody,
    /// Wait this long, then answer normally.
    Delay(Duration),
    /// Never answer (until the client gives up or the server shuts down).
    Stall,

    /// A complete 200 whose JSON body is cut in half (`Content-Length` matches the cut).
    TruncatedBody,
    /// A 200 whose body is not JSON.
    InvalidJson,
    /// A 200 whose JSON body is prefixed with `)]}'` and a newline.
    XssiPrefix,
    /// A 200 with a bare `NaN` token in an extra field (`"x_debug": NaN`).
    NanToken,

    /// Drop the answer of the first question.
    MissingAnswer,
    /// Add an answer for an id nobody asked about.
    ExtraAnswer,
    /// Every answer's `type` becomes `"boolean"`.
    UnknownAnswerType,
    /// Every noul answer becomes 1.5.
    NoulOutOfRange,
    /// Every noul answer becomes a bare `NaN` token.
    NoulNan,
    /// Every noul answer becomes `null`.
    NoulNull,
    /// Every choice's probabilities are scaled by 0.8 (each stays in [0, 1], Σ = 0.8).
    BrokenChoiceSum,
    /// Every score's probabilities are scaled by 0.8.
    BrokenScoreSum,
    /// Every choice's last probability key gets a suffix, so keys no longer match the labels
    /// (`choice` still names a real label).
    BrokenChoiceKeys,
    /// Every score's probability keys run "1".."n" instead of "0".."n−1".
    BrokenScoreKeys,
    /// Every choice and score answer has `"confidence": null`.
    NullConfidence,
    /// No `usage` field.
    MissingUsage,
    /// `usage` counts as floats (`12.0`).
    FloatUsage,
    /// No `model` field.
    MissingModel,

    /// A valid answer whose noul probability for each listed question id is the given value
    /// (ids that are not noul questions in the request are ignored; a non-finite value is
    /// written as a bare `NaN` token).
    NoulValues(Vec<(String, f64)>),
    /// A valid answer with the listed question ids' answers replaced (or added) as given.
    Answers(Vec<(String, Value)>),
    /// This exact 200 body, whatever the request.
    Body(Value),
}

impl Fault {
    /// Whether this fault is a complete response sent before the request is read.
    pub(crate) fn is_canned(&self) -> bool {
        matches!(
            self,
            Fault::RateLimited
                | Fault::RetryAfterSeconds(_)
                | Fault::RetryAfterDate(_)
                | Fault::RetryAfterMs(_)
                | Fault::Overloaded
                | Fault::Html(_)
                | Fault::Json { .. }
                | Fault::Raw { .. }
                | Fault::Body(_)
        )
    }
}
