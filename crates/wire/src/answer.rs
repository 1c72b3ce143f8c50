//! Answers as read from a response, before and after the checks of systemone-wire.md §7.

use serde_json::Value;

/// One answer as it arrived. Fields are optional here because a response is read leniently
/// first and checked against its questions afterwards (see [`crate::check_answers`]); after a
/// successful check every field the question type needs is present and valid.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// A noul answer.
    Noul(NoulAnswer),
    /// A choice answer.
    Choice(ChoiceAnswer),
    /// A score answer.
    Score(ScoreAnswer),
    /// An answer of a type this client does not know, or with no type.
    Other,
}

/// A noul answer: the probability of yes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NoulAnswer {
    /// P(yes); `None` when null or absent. May be NaN or infinite when it comes from an
    /// injected backend; the checks refuse those.
    pub noul: Option<f64>,
}

/// A choice answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ChoiceAnswer {
    /// The most probable label.
    pub choice: Option<String>,
    /// The confidence, when reported.
    pub confidence: Option<f64>,
    /// Whether a confidence field was present but not a number (other than null).
    pub confidence_malformed: bool,
    /// Probability per label, in response order; `None` for a value that is not a number.
    pub probabilities: Option<Vec<(String, Option<f64>)>>,
}

/// A score answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoreAnswer {
    /// The expected level, Σ i·pᵢ.
    pub score: Option<f64>,
    /// The confidence, when reported.
    pub confidence: Option<f64>,
    /// Whether a confidence field was present but not a number (other than null).
    pub confidence_malformed: bool,
    /// The levels echoed under string keys "0".."n−1".
    pub legend: Option<Vec<(String, Value)>>,
    /// Probability per level key, in response order.
    pub probabilities: Option<Vec<(String, Option<f64>)>>,
}

impl Answer {
    /// Reads one answer object leniently; `None` when it is not an object.
    pub fn from_json(value: &Value) -> Option<Answer> {
        let map = value.as_object()?;
        Some(Answer::from_fields(|name| map.get(name)))
    }

    /// Reads one answer object leniently from its fields by name (`field("type")` and so on).
    pub(crate) fn from_fields<'a>(field: impl Fn(&str) -> Option<&'a Value>) -> Answer {
        match field("type").and_then(Value::as_str) {
            Some("noul") => Answer::Noul(NoulAnswer {
                noul: field("noul").and_then(Value::as_f64),
            }),
            Some("choice") => {
                let (confidence, confidence_malformed) = read_confidence(field("confidence"));
                Answer::Choice(ChoiceAnswer {
                    choice: field("choice").and_then(Value::as_str).map(str::to_owned),
                    confidence,
                    confidence_malformed,
                    probabilities: read_probabilities(field("probabilities")),
                })
            }
            Some("score") => {
                let (confidence, confidence_malformed) = read_confidence(field("confidence"));
                Answer::Score(ScoreAnswer {
                    score: field("score").and_then(Value::as_f64),
                    confidence,
                    confidence_malformed,
                    legend: field("legend").and_then(Value::as_object).map(|legend| {
                        legend
                            .iter()
                            .map(|(key, level)| (key.clone(), level.clone()))
                            .collect()
                    }),
                    probabilities: read_probabilities(field("probabilities")),
                })
            }
            _ => Answer::Other,
        }
    }

    /// The names of the fields [`Answer::from_fields`] reads.
    pub(crate) const FIELDS: [&'static str; 7] = [
        "type",
        "noul",
        "choice",
        "confidence",
        "probabilities",
        "score",
        "legend",
    ];

    /// The probability of yes of a noul answer.
    pub fn as_noul(&self) -> Option<f64> {
        match self {
            Answer::Noul(answer) => answer.noul,
            _ => None,
        }
    }

    /// The wire type name, or `None` for [`Answer::Other`].
    pub fn type_name(&self) -> Option<&'static str> {
        match self {
            Answer::Noul(_) => Some("noul"),
            Answer::Choice(_) => Some("choice"),
            Answer::Score(_) => Some("score"),
            Answer::Other => None,
        }
    }
}

/// Reads `confidence`: `(Some(x), false)` for a number, `(None, false)` for null or absent,
/// `(None, true)` for anything else.
fn read_confidence(confidence: Option<&Value>) -> (Option<f64>, bool) {
    match confidence {
        None | Some(Value::Null) => (None, false),
        Some(value) => match value.as_f64() {
            Some(number) => (Some(number), false),
            None => (None, true),
        },
    }
}

fn read_probabilities(value: Option<&Value>) -> Option<Vec<(String, Option<f64>)>> {
    Some(
        value?
            .as_object()?
            .iter()
            .map(|(key, p)| (key.clone(), p.as_f64()))
            .collect(),
    )
}
