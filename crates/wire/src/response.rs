//! The 200 response body and its checks (systemone-wire.md §6–§7).

use serde_json::{Map, Value};

use crate::{Answer, Detail, Question, Questions, Usage, answer::NoulAnswer};

/// A System One response: the answering model, one answer per question id, and usage.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// The versioned model that answered (`jev-1.13.0` for `jev-latest`); `None` when missing
    /// or not a string.
    pub model: Option<String>,
    /// The answers by question id, in the order received.
    pub answers: Vec<(String, Answer)>,
    /// Token usage; `None` means unknown, never zero.
    pub usage: Option<Usage>,
    /// The `answers` object exactly as received, when the response was read from JSON; kept so
    /// that a `.jevl` record stores answers "exactly as returned, never normalised".
    pub raw_answers: Option<serde_json::Map<String, Value>>,
}

/// Why a 200 response was refused. Each kind maps to one detail code of rule 28.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AnswerError {
    /// Empty, not strict JSON, or not an object with an `answers` object.
    #[error("the response body is not a JSON object with an answers object")]
    BodyUnreadable,
    /// A question id without an answer.
    #[error("question `{id}` has no answer")]
    Missing {
        /// The question id.
        id: String,
    },
    /// An answer id that matches no question.
    #[error("answer `{id}` matches no question")]
    Extra {
        /// The answer id.
        id: String,
    },
    /// An answer whose type differs from its question's.
    #[error("answer `{id}` must have type {expected}")]
    WrongType {
        /// The question id.
        id: String,
        /// The question's type.
        expected: &'static str,
    },
    /// A probability that is null or absent.
    #[error("answer `{id}` has no probability")]
    ProbabilityMissing {
        /// The question id.
        id: String,
    },
    /// A probability that is NaN or infinite.
    #[error("answer `{id}` has a probability that is not finite")]
    ProbabilityNotFinite {
        /// The question id.
        id: String,
    },
    /// A probability outside [0, 1].
    #[error("answer `{id}` has a probability outside [0, 1]")]
    ProbabilityOutOfRange {
        /// The question id.
        id: String,
    },
    /// A choice that names an option not asked.
    #[error("answer `{id}` selected an unknown option")]
    ChoiceUnknown {
        /// The question id.
        id: String,
    },
    /// Probability or legend keys that differ from the options or levels.
    #[error("probabilities of answer `{id}` must match the question criteria")]
    ProbabilitiesKeys {
        /// The question id.
        id: String,
    },
    /// Probabilities that do not sum to 1 within 5e-5 per option.
    #[error("probabilities of answer `{id}` must sum to 1")]
    ProbabilitiesSum {
        /// The question id.
        id: String,
    },
    /// A score that is not finite or outside the rubric.
    #[error("score of answer `{id}` must be finite and within the rubric range")]
    ScoreOutOfRange {
        /// The question id.
        id: String,
    },
    /// A confidence that is not null, absent, or finite within [0, 1].
    #[error("answer `{id}` has an invalid confidence")]
    ConfidenceInvalid {
        /// The question id.
        id: String,
    },
}

impl AnswerError {
    /// The detail code of rule 28.
    pub fn detail(&self) -> Detail {
        match self {
            AnswerError::BodyUnreadable => Detail::BodyUnreadable,
            AnswerError::Missing { .. } => Detail::AnswerMissing,
            AnswerError::Extra { .. } => Detail::AnswerExtra,
            AnswerError::WrongType { .. } => Detail::AnswerWrongType,
            AnswerError::ProbabilityMissing { .. } => Detail::ProbabilityMissing,
            AnswerError::ProbabilityNotFinite { .. } => Detail::ProbabilityNotFinite,
            AnswerError::ProbabilityOutOfRange { .. } => Detail::ProbabilityOutOfRange,
            AnswerError::ChoiceUnknown { .. } => Detail::ChoiceUnknown,
            AnswerError::ProbabilitiesKeys { .. } => Detail::ProbabilitiesKeys,
            AnswerError::ProbabilitiesSum { .. } => Detail::ProbabilitiesSum,
            AnswerError::ScoreOutOfRange { .. } => Detail::ScoreOutOfRange,
            AnswerError::ConfidenceInvalid { .. } => Detail::ConfidenceInvalid,
        }
    }
}

/// The probability-sum tolerance per option (judge-contract D7).
pub const SUM_TOLERANCE_PER_OPTION: f64 = 5e-5;

impl Response {
    /// Reads a 200 body leniently: strict JSON, an object, with an `answers` object. Unknown
    /// fields are ignored, usage that is not integer counts is unknown, a missing or
    /// non-string model is unknown. Whether the answers fit the questions is
    /// [`Response::check`]'s job.
    pub fn from_slice(body: &[u8]) -> Result<Response, AnswerError> {
        let parts: BodyParts =
            serde_json::from_slice(body).map_err(|_| AnswerError::BodyUnreadable)?;
        // The parsed answers are moved into the response, not copied.
        match parts.answers {
            Some(Value::Object(raw_answers)) => Ok(Response::read(
                parts.model.as_ref(),
                raw_answers,
                parts.usage.as_ref(),
            )),
            _ => Err(AnswerError::BodyUnreadable),
        }
    }

    /// Reads a parsed 200 body; see [`Response::from_slice`].
    pub fn from_json(value: &Value) -> Result<Response, AnswerError> {
        let map = value.as_object().ok_or(AnswerError::BodyUnreadable)?;
        let raw_answers = map
            .get("answers")
            .and_then(Value::as_object)
            .ok_or(AnswerError::BodyUnreadable)?;
        Ok(Response::read(
            map.get("model"),
            raw_answers.clone(),
            map.get("usage"),
        ))
    }

    /// The response of a body whose `model`, `answers` and `usage` fields are these.
    fn read(
        model: Option<&Value>,
        raw_answers: Map<String, Value>,
        usage: Option<&Value>,
    ) -> Response {
        let answers = raw_answers
            .iter()
            .map(|(id, answer)| {
                (
                    id.clone(),
                    Answer::from_json(answer).unwrap_or(Answer::Other),
                )
            })
            .collect();
        Response {
            model: model.and_then(Value::as_str).map(str::to_owned),
            answers,
            usage: usage.and_then(Usage::from_json),
            raw_answers: Some(raw_answers),
        }
    }

    /// The answer with this id.
    pub fn answer(&self, id: &str) -> Option<&Answer> {
        self.answers
            .iter()
            .find(|(key, _)| key == id)
            .map(|(_, a)| a)
    }

    /// Runs the checks of systemone-wire.md §7 against the questions that were asked.
    pub fn check(&self, questions: &Questions) -> Result<(), AnswerError> {
        check_answers(questions, &self.answers)
    }
}

/// The checks of systemone-wire.md §7 (and judge-contract rules 14–15), in table order: every
/// question has an answer (`answer_missing`), no answer is extra (`answer_extra`), then per
/// question in order its type and values.
pub fn check_answers(
    questions: &Questions,
    answers: &[(String, Answer)],
) -> Result<(), AnswerError> {
    let find = |id: &str| answers.iter().find(|(key, _)| key == id).map(|(_, a)| a);
    for (id, _) in questions.iter() {
        if find(id).is_none() {
            return Err(AnswerError::Missing { id: id.to_owned() });
        }
    }
    for (id, _) in answers {
        if questions.get(id).is_none() {
            return Err(AnswerError::Extra { id: id.clone() });
        }
    }
    for (id, question) in questions.iter() {
        let Some(answer) = find(id) else { continue };
        check_one(id, question, answer)?;
    }
    Ok(())
}

fn check_one(id: &str, question: &Question, answer: &Answer) -> Result<(), AnswerError> {
    let owned = || id.to_owned();
    let wrong_type = || AnswerError::WrongType {
        id: owned(),
        expected: question.kind().as_str(),
    };
    match (question, answer) {
        (Question::Noul(_), Answer::Noul(NoulAnswer { noul })) => check_probability(id, *noul),
        (Question::Choice(choice), Answer::Choice(answer)) => {
            let is_label = |label: &str| choice.options.iter().any(|o| o.label == label);
            match &answer.choice {
                Some(selected) if is_label(selected) => {}
                _ => return Err(AnswerError::ChoiceUnknown { id: owned() }),
            }
            let probabilities = answer
                .probabilities
                .as_deref()
                .ok_or_else(|| AnswerError::ProbabilitiesKeys { id: owned() })?;
            let keys_match = probabilities.len() == choice.options.len()
                && probabilities.iter().all(|(key, _)| is_label(key));
            if !keys_match {
                return Err(AnswerError::ProbabilitiesKeys { id: owned() });
            }
            check_distribution(id, probabilities)?;
            check_confidence(id, answer.confidence, answer.confidence_malformed)
        }
        (Question::Score(score), Answer::Score(answer)) => {
            let levels = score.levels.len();
            match answer.score {
                Some(value)
                    if value.is_finite()
                        && (0.0..=levels.saturating_sub(1) as f64).contains(&value) => {}
                _ => return Err(AnswerError::ScoreOutOfRange { id: owned() }),
            }
            let legend_keys = answer.legend.as_deref().map(|legend| {
                legend
                    .iter()
                    .map(|(key, _)| key.as_str())
                    .collect::<Vec<_>>()
            });
            let probabilities = answer.probabilities.as_deref();
            let keyed_by_level = |keys: Option<Vec<&str>>| {
                keys.is_some_and(|keys| {
                    keys.len() == levels
                        && keys.iter().all(|key| {
                            key.parse::<usize>()
                                .is_ok_and(|i| i < levels && i.to_string() == *key)
                        })
                })
            };
            let probability_keys =
                probabilities.map(|ps| ps.iter().map(|(key, _)| key.as_str()).collect());
            if !keyed_by_level(legend_keys) || !keyed_by_level(probability_keys) {
                return Err(AnswerError::ProbabilitiesKeys { id: owned() });
            }
            check_distribution(id, probabilities.unwrap_or_default())?;
            check_confidence(id, answer.confidence, answer.confidence_malformed)
        }
        _ => Err(wrong_type()),
    }
}

/// Rule 14: present, finite, within [0, 1] (both ends valid).
fn check_probability(id: &str, probability: Option<f64>) -> Result<(), AnswerError> {
    match probability {
        None => Err(AnswerError::ProbabilityMissing { id: id.to_owned() }),
        Some(p) if !p.is_finite() => Err(AnswerError::ProbabilityNotFinite { id: id.to_owned() }),
        Some(p) if !(0.0..=1.0).contains(&p) => {
            Err(AnswerError::ProbabilityOutOfRange { id: id.to_owned() })
        }
        Some(_) => Ok(()),
    }
}

fn check_distribution(
    id: &str,
    probabilities: &[(String, Option<f64>)],
) -> Result<(), AnswerError> {
    let mut sum = 0.0;
    for (_, p) in probabilities {
        check_probability(id, *p)?;
        sum += p.unwrap_or(0.0);
    }
    let allowance = SUM_TOLERANCE_PER_OPTION * probabilities.len() as f64;
    if (sum - 1.0).abs() > allowance {
        return Err(AnswerError::ProbabilitiesSum { id: id.to_owned() });
    }
    Ok(())
}

fn check_confidence(id: &str, confidence: Option<f64>, malformed: bool) -> Result<(), AnswerError> {
    let valid = !malformed && confidence.is_none_or(|c| c.is_finite() && (0.0..=1.0).contains(&c));
    if valid {
        Ok(())
    } else {
        Err(AnswerError::ConfidenceInvalid { id: id.to_owned() })
    }
}

/// The fields of a 200 body that [`Response::from_slice`] reads, taken from the body's object
/// without building the object itself. Every other field is still parsed as JSON (so a body
/// is refused exactly when reading it whole as a [`Value`] would fail) and then dropped; a
/// field named twice counts by its last value, as in a [`Value`].
#[derive(Default)]
struct BodyParts {
    model: Option<Value>,
    answers: Option<Value>,
    usage: Option<Value>,
}

impl<'de> serde::Deserialize<'de> for BodyParts {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        enum Field {
            Model,
            Answers,
            Usage,
            Other,
        }

        impl<'de> serde::Deserialize<'de> for Field {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct Name;
                impl serde::de::Visitor<'_> for Name {
                    type Value = Field;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str("a field name")
                    }
                    fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<Field, E> {
                        Ok(match name {
                            "model" => Field::Model,
                            "answers" => Field::Answers,
                            "usage" => Field::Usage,
                            _ => Field::Other,
                        })
                    }
                }
                deserializer.deserialize_identifier(Name)
            }
        }

        struct Fields;
        impl<'de> serde::de::Visitor<'de> for Fields {
            type Value = BodyParts;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<BodyParts, A::Error> {
                let mut parts = BodyParts::default();
                while let Some(field) = map.next_key::<Field>()? {
                    let value = map.next_value::<Value>()?;
                    match field {
                        Field::Model => parts.model = Some(value),
                        Field::Answers => parts.answers = Some(value),
                        Field::Usage => parts.usage = Some(value),
                        Field::Other => {}
                    }
                }
                Ok(parts)
            }
        }

        deserializer.deserialize_map(Fields)
    }
}
