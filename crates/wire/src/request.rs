//! The request body and the checks made before sending it (systemone-wire.md §4–§5).

use std::fmt;

use serde::Serialize;
use serde_json::Value;

use crate::{Question, Questions, content::json_kind};

/// The model used when a request names none.
pub const DEFAULT_MODEL: &str = "jev-latest";
/// The fewest and most options of a choice question.
pub const CHOICE_OPTIONS: std::ops::RangeInclusive<usize> = 2..=255;
/// The fewest and most levels of a score question.
pub const SCORE_LEVELS: std::ops::RangeInclusive<usize> = 2..=10;

/// One System One request: a state and the questions about it.
///
/// `model` is optional here; the client fills in its configured model (default
/// [`DEFAULT_MODEL`]). The state is the caller's JSON, sent unchanged; its `Debug` output hides it.
#[derive(Clone, PartialEq)]
pub struct Request {
    /// The model to ask, or `None` for the client's configured model.
    pub model: Option<String>,
    /// What every question refers to: a JSON string, object or array.
    pub state: Value,
    /// The questions, in the order they are sent.
    pub questions: Questions,
}

impl fmt::Debug for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct State<'a>(&'a Value);
        impl fmt::Debug for State<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                crate::content::redacted(self.0, f)
            }
        }
        f.debug_struct("Request")
            .field("model", &self.model)
            .field("state", &State(&self.state))
            .field("questions", &self.questions)
            .finish()
    }
}

/// Why a request was not sent. Messages follow the Java client's wording.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    /// The state is `null`, a number or a boolean.
    #[error("state must be a string, an object or an array, not {found}")]
    StateNotAllowed {
        /// The JSON kind found.
        found: &'static str,
    },
    /// No questions.
    #[error("questions must not be empty")]
    QuestionsEmpty,
    /// A blank question id.
    #[error("question ids must not be blank")]
    BlankQuestionId,
    /// An empty string instruction.
    #[error("instructions of question `{id}` must not be empty")]
    EmptyInstructions {
        /// The question id.
        id: String,
    },
    /// A choice question with too few or too many options.
    #[error("criteria of choice question `{id}` must contain 2 to 255 options, not {count}")]
    ChoiceOptions {
        /// The question id.
        id: String,
        /// How many options it has.
        count: usize,
    },
    /// A choice question with a repeated label.
    #[error("choice question `{id}` repeats an option label")]
    DuplicateOption {
        /// The question id.
        id: String,
    },
    /// A score question with too few or too many levels.
    #[error("criteria of score question `{id}` must contain 2 to 10 levels, not {count}")]
    ScoreLevels {
        /// The question id.
        id: String,
        /// How many levels it has.
        count: usize,
    },
    /// A blank model name.
    #[error("model must not be blank")]
    BlankModel,
    /// A question id used twice.
    #[error("question id `{id}` is used twice")]
    DuplicateQuestionId {
        /// The question id.
        id: String,
    },
}

/// The body as it goes on the wire: `model`, `state`, `questions`, in that order.
#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    state: &'a Value,
    questions: &'a Questions,
}

impl Request {
    /// A request for the client's configured model.
    pub fn new(state: Value, questions: Questions) -> Request {
        Request {
            model: None,
            state,
            questions,
        }
    }

    /// The model that will be asked when the client's default is `default_model`.
    pub fn model_or<'a>(&'a self, default_model: &'a str) -> &'a str {
        self.model.as_deref().unwrap_or(default_model)
    }

    /// Runs the checks of systemone-wire.md §5. Nothing may be sent when this fails.
    pub fn check(&self, default_model: &str) -> Result<(), RequestError> {
        if !matches!(
            self.state,
            Value::String(_) | Value::Object(_) | Value::Array(_)
        ) {
            return Err(RequestError::StateNotAllowed {
                found: json_kind(&self.state),
            });
        }
        if self.questions.is_empty() {
            return Err(RequestError::QuestionsEmpty);
        }
        for (index, (id, question)) in self.questions.iter().enumerate() {
            if id.trim().is_empty() {
                return Err(RequestError::BlankQuestionId);
            }
            if self
                .questions
                .iter()
                .take(index)
                .any(|(seen, _)| seen == id)
            {
                return Err(RequestError::DuplicateQuestionId { id: id.to_owned() });
            }
            if question.instructions().is_empty_text() {
                return Err(RequestError::EmptyInstructions { id: id.to_owned() });
            }
            match question {
                Question::Noul(_) => {}
                Question::Choice(choice) => {
                    let count = choice.options.len();
                    if !crate::request::CHOICE_OPTIONS.contains(&count) {
                        return Err(RequestError::ChoiceOptions {
                            id: id.to_owned(),
                            count,
                        });
                    }
                    let mut labels: Vec<&str> =
                        choice.options.iter().map(|o| o.label.as_str()).collect();
                    labels.sort_unstable();
                    if labels.windows(2).any(|pair| pair[0] == pair[1]) {
                        return Err(RequestError::DuplicateOption { id: id.to_owned() });
                    }
                }
                Question::Score(score) => {
                    let count = score.levels.len();
                    if !SCORE_LEVELS.contains(&count) {
                        return Err(RequestError::ScoreLevels {
                            id: id.to_owned(),
                            count,
                        });
                    }
                }
            }
        }
        if self.model_or(default_model).trim().is_empty() {
            return Err(RequestError::BlankModel);
        }
        Ok(())
    }

    /// Checks the request and writes the JSON body: exactly `model`, `state` and `questions`,
    /// questions and options in order.
    pub fn to_body(&self, default_model: &str) -> Result<Vec<u8>, RequestError> {
        // Serialising a `Value` and our own types into memory cannot fail: keys are strings
        // and serde_json numbers are always finite.
        Ok(serde_json::to_vec(&self.body(default_model)?).unwrap_or_default())
    }

    /// Checks the request and returns the body [`Request::to_body`] writes, as a JSON value
    /// (for in-process answerers: no bytes written and read back). Parsing `to_body`'s bytes
    /// gives the same value: keys keep their order and floats round-trip exactly.
    pub fn to_value(&self, default_model: &str) -> Result<Value, RequestError> {
        // As in `to_body`: cannot fail.
        Ok(serde_json::to_value(self.body(default_model)?).unwrap_or_default())
    }

    /// The checked body.
    fn body<'a>(&'a self, default_model: &'a str) -> Result<Body<'a>, RequestError> {
        self.check(default_model)?;
        Ok(Body {
            model: self.model_or(default_model),
            state: &self.state,
            questions: &self.questions,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ChoiceOption, ChoiceQuestion, Content, NoulQuestion, ScoreQuestion};
    use serde_json::json;

    fn noul(text: &str) -> Question {
        NoulQuestion::new(text).into()
    }

    #[test]
    fn refund_review_body_is_byte_exact() {
        // systemone-wire.md §4: what a review sends for refund-answer-v1.
        let request = Request::new(
            json!({"user_question": "Has my refund gone through?",
                   "supporting_context": ["Business record: no refund has been executed"],
                   "assistant_answer": "The refund is complete."}),
            [(
                "supported",
                noul("Is assistant_answer supported by supporting_context without inventing completed refunds?"),
            )]
            .into_iter()
            .collect(),
        );
        let body = String::from_utf8(request.to_body(DEFAULT_MODEL).unwrap()).unwrap();
        assert_eq!(
            body,
            concat!(
                r#"{"model":"jev-latest","state":{"user_question":"Has my refund gone through?","#,
                r#""supporting_context":["Business record: no refund has been executed"],"#,
                r#""assistant_answer":"The refund is complete."},"questions":{"supported":"#,
                r#"{"type":"noul","instructions":"Is assistant_answer supported by supporting_context without inventing completed refunds?"}}}"#
            )
        );
    }

    #[test]
    fn the_value_is_the_body_read_back() {
        let request = Request::new(
            json!({"z": 0.1, "a": [1e-7, 3.0000000000000004, -0.0, 18446744073709551615u64],
                   "m": {"\u{8}": "\u{e9}\n", "b": null}}),
            [("second", noul("Is it?")), ("first", noul("Is it not?"))]
                .into_iter()
                .collect(),
        );
        let body = request.to_body(DEFAULT_MODEL).unwrap();
        let read_back: Value = serde_json::from_slice(&body).unwrap();
        let value = request.to_value(DEFAULT_MODEL).unwrap();
        assert_eq!(value, read_back);
        // Same order too (a `Value` map keeps insertion order here).
        assert_eq!(value.to_string().into_bytes(), body);
        let empty = Request::new(json!({}), Questions::default());
        assert_eq!(
            empty.to_value(DEFAULT_MODEL).unwrap_err(),
            empty.to_body(DEFAULT_MODEL).unwrap_err()
        );
    }

    #[test]
    fn every_request_check_has_its_own_error() {
        let ok: Questions = [("a", noul("x"))].into_iter().collect();
        let check = |state: Value, questions: Questions, model: Option<&str>| {
            Request {
                model: model.map(str::to_owned),
                state,
                questions,
            }
            .check(DEFAULT_MODEL)
        };
        assert_eq!(check(json!("s"), ok.clone(), None), Ok(()));
        assert_eq!(check(json!([1]), ok.clone(), None), Ok(()));
        assert_eq!(
            check(json!(null), ok.clone(), None),
            Err(RequestError::StateNotAllowed { found: "null" })
        );
        assert_eq!(
            check(json!(42), ok.clone(), None),
            Err(RequestError::StateNotAllowed { found: "number" })
        );
        assert_eq!(
            check(json!("s"), Questions::default(), None),
            Err(RequestError::QuestionsEmpty)
        );
        assert_eq!(
            check(json!("s"), [(" ", noul("x"))].into_iter().collect(), None),
            Err(RequestError::BlankQuestionId)
        );
        assert_eq!(
            check(json!("s"), [("a", noul(""))].into_iter().collect(), None),
            Err(RequestError::EmptyInstructions { id: "a".into() })
        );
        assert_eq!(
            check(json!("s"), ok.clone(), Some("  ")),
            Err(RequestError::BlankModel)
        );
        let options = |n: usize| {
            Question::Choice(ChoiceQuestion {
                instructions: Content::text("Which?"),
                options: (0..n)
                    .map(|i| ChoiceOption {
                        label: format!("o{i}"),
                        description: None,
                    })
                    .collect(),
            })
        };
        for (n, fine) in [(1, false), (2, true), (255, true), (256, false)] {
            let result = check(json!("s"), [("c", options(n))].into_iter().collect(), None);
            assert_eq!(result.is_ok(), fine, "{n} options");
        }
        let levels = |n: usize| {
            Question::Score(ScoreQuestion {
                instructions: Content::text("How?"),
                levels: (0..n).map(|i| Content::text(format!("l{i}"))).collect(),
            })
        };
        for (n, fine) in [(1, false), (2, true), (10, true), (11, false)] {
            let result = check(json!("s"), [("s", levels(n))].into_iter().collect(), None);
            assert_eq!(result.is_ok(), fine, "{n} levels");
        }
    }

    #[test]
    fn debug_hides_the_state() {
        let request = Request::new(
            json!({"secret": "RAW-EVIDENCE-91c2"}),
            [("a", noul("x"))].into_iter().collect(),
        );
        let shown = format!("{request:?}");
        assert!(!shown.contains("RAW-EVIDENCE-91c2"), "{shown}");
    }
}
