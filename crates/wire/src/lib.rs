//! System One wire types for jevjudge: what goes to TypeSafe's System One API (model family
//! "Jev") and what comes back, checked both ways.
//!
//! # Brief overview
//!
//! - [`Request`] holds a JSON `state` and ordered [`Questions`] ([`NoulQuestion`],
//!   [`ChoiceQuestion`], [`ScoreQuestion`]); [`Request::to_body`] runs the pre-send checks of
//!   `systemone-wire.md` §5 and writes the exact body.
//! - [`Response::from_slice`] reads a 200 body leniently (unknown fields ignored, usage that is
//!   not integer counts is *unknown*), and [`Response::check`] runs the answer checks of §7, each
//!   failure a distinct [`AnswerError`] with its [`Detail`] code.
//! - [`Detail`] is the fixed vocabulary of safe failure codes; no raw text ever goes in one.
//! - [`canonical`] writes jevkit's canonical JSON and request digests; [`record`] reads and
//!   writes `.jevl` exchange records.
//!
//! Private text stays private: the `Debug` output of [`Content`] and [`Request`] shows the
//! kind and size of text, never the text, and a [`Secret`] (an API key) shows `<redacted>`.
//!
//! # Example
//!
//! ```
//! use jevjudge_wire::{NoulQuestion, Questions, Request, Response, DEFAULT_MODEL};
//! use serde_json::json;
//!
//! let questions: Questions =
//!     [("supported", NoulQuestion::new("Is `assistant_answer` supported?"))].into_iter().collect();
//! let request = Request::new(json!({"assistant_answer": "The refund is complete."}), questions);
//! let body = request.to_body(DEFAULT_MODEL).unwrap();
//! assert!(body.starts_with(br#"{"model":"jev-latest","state":"#));
//!
//! let response = Response::from_slice(
//!     br#"{"model":"jev-1.13.0","answers":{"supported":{"type":"noul","noul":0.05}}}"#,
//! ).unwrap();
//! response.check(&request.questions).unwrap();
//! assert_eq!(response.answer("supported").and_then(|a| a.as_noul()), Some(0.05));
//! assert_eq!(response.usage, None); // unknown, not zero
//! ```

mod answer;
pub mod canonical;
mod content;
mod detail;
pub mod lines;
mod models;
pub mod ordered_map;
pub mod plural;
mod question;
pub mod record;
mod request;
mod response;
mod secret;
pub mod setting;
pub mod strict_json;
mod usage;

pub use answer::{Answer, ChoiceAnswer, NoulAnswer, ScoreAnswer};
pub use content::{Content, NotContent, json_kind};
pub use detail::{Detail, UnknownDetail};
pub use models::{ModelInfo, ModelList};
pub use question::{
    ChoiceOption, ChoiceQuestion, NoulCriteria, NoulQuestion, Question, QuestionType, Questions,
    ScoreQuestion,
};
pub use request::{CHOICE_OPTIONS, DEFAULT_MODEL, Request, RequestError, SCORE_LEVELS};
pub use response::{AnswerError, RawAnswers, Response, SUM_TOLERANCE_PER_OPTION, check_answers};
pub use secret::Secret;
pub use usage::Usage;

/// The response header with which jevjudge's fake System One server marks every answer
/// (value `1`), so that answers, reports and records made against it say `fake` and never
/// pass for a model's.
pub const FAKE_MARK_HEADER: &str = "x-jevjudge-fake";
