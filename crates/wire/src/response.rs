//! The 200 response body and its checks (systemone-wire.md §6–§7).

use std::sync::Arc;

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
    pub raw_answers: Option<RawAnswers>,
}

/// The `answers` object of a response as it was received: the body it came in (or, for a
/// response read from a parsed value, that object's text), read again only when asked for.
#[derive(Clone)]
pub struct RawAnswers(Raw);

#[derive(Clone)]
enum Raw {
    /// A 200 body that was read: its answers are its (last) `answers` field.
    Body(Arc<[u8]>),
    /// The answers object's own text.
    Object(Arc<str>),
}

impl RawAnswers {
    /// The object, kept as its text.
    pub fn from_map(answers: &Map<String, Value>) -> RawAnswers {
        RawAnswers(Raw::Object(
            Value::Object(answers.clone()).to_string().into(),
        ))
    }

    /// The object, parsed (an id named twice counts by its last value, in its first place).
    pub fn to_map(&self) -> Map<String, Value> {
        // The text was read once already (as a response), so reading it again cannot fail.
        match &self.0 {
            Raw::Body(body) => {
                let mut deserializer = serde_json::Deserializer::from_slice(body);
                serde::Deserializer::deserialize_map(&mut deserializer, LastAnswers)
                    .unwrap_or_default()
            }
            Raw::Object(text) => serde_json::from_str(text).unwrap_or_default(),
        }
    }
}

/// Two are equal when they hold the same answers.
impl PartialEq for RawAnswers {
    fn eq(&self, other: &RawAnswers) -> bool {
        self.to_map() == other.to_map()
    }
}

impl std::fmt::Debug for RawAnswers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("RawAnswers").field(&self.to_map()).finish()
    }
}

/// A body's last `answers` field as an object (empty when it is not one).
struct LastAnswers;

impl<'de> serde::de::Visitor<'de> for LastAnswers {
    type Value = Map<String, Value>;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut answers = Map::new();
        while let Some(field) = map.next_key_seed(FieldName(&["answers"]))? {
            match field {
                Some(_) => {
                    answers = match map.next_value()? {
                        Value::Object(object) => object,
                        _ => Map::new(),
                    };
                }
                None => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        Ok(answers)
    }
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
        Ok(Response {
            model: parts
                .model
                .as_ref()
                .and_then(Value::as_str)
                .map(str::to_owned),
            answers: parts.answers.ok_or(AnswerError::BodyUnreadable)?,
            usage: parts.usage.flatten(),
            raw_answers: Some(RawAnswers(Raw::Body(body.into()))),
        })
    }

    /// Reads a parsed 200 body; see [`Response::from_slice`].
    pub fn from_json(value: &Value) -> Result<Response, AnswerError> {
        let map = value.as_object().ok_or(AnswerError::BodyUnreadable)?;
        let raw_answers = map
            .get("answers")
            .and_then(Value::as_object)
            .ok_or(AnswerError::BodyUnreadable)?;
        let answers = raw_answers
            .iter()
            .map(|(id, answer)| {
                (
                    id.clone(),
                    Answer::from_json(answer).unwrap_or(Answer::Other),
                )
            })
            .collect();
        Ok(Response {
            model: map.get("model").and_then(Value::as_str).map(str::to_owned),
            answers,
            usage: map.get("usage").and_then(Usage::from_json),
            raw_answers: Some(RawAnswers::from_map(raw_answers)),
        })
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
/// without building the body, its `answers` or its `usage` as [`Value`] objects. Every value is
/// still parsed whole, scalars and unknown fields as [`Value`]s (so a body is refused exactly
/// when reading it whole as a [`Value`] would fail), and a field named twice counts by its last
/// value, as in a [`Value`].
#[derive(Default)]
struct BodyParts {
    model: Option<Value>,
    /// The answers; `None` when absent or not an object.
    answers: Option<Vec<(String, Answer)>>,
    /// `None` when absent, `Some(None)` when not a usage.
    usage: Option<Option<Usage>>,
}

impl<'de> serde::Deserialize<'de> for BodyParts {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
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
                const BODY: [&str; 3] = ["model", "answers", "usage"];
                let mut parts = BodyParts::default();
                while let Some(field) = map.next_key_seed(FieldName(&BODY))? {
                    match field {
                        Some(0) => parts.model = Some(map.next_value()?),
                        Some(1) => parts.answers = map.next_value_seed(Answers)?,
                        Some(_) => {
                            let usage = map.next_value_seed(ObjectFields(&USAGE))?;
                            parts.usage = Some(usage.and_then(|[input, output]| {
                                Usage::from_counts(input.as_ref(), output.as_ref())
                            }));
                        }
                        None => {
                            map.next_value::<Value>()?;
                        }
                    }
                }
                Ok(parts)
            }
        }

        deserializer.deserialize_map(Fields)
    }
}

/// The fields of a `usage` object that [`Usage::from_counts`] reads.
const USAGE: [&str; 2] = ["input_tokens", "output_tokens"];

/// Implements the visits of every value but an object (and an array, left to each visitor) as
/// "not the object asked for": `Ok(None)`.
macro_rules! not_an_object {
    () => {
        fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Self::Value, A::Error> {
            while seq.next_element::<Value>()?.is_some() {}
            Ok(None)
        }
    };
}

/// An `answers` value: its answers in order (an id named twice keeps its first place and its
/// last answer, as in a [`Value`] object), or `None` when it is not an object.
struct Answers;

impl<'de> serde::de::DeserializeSeed<'de> for Answers {
    type Value = Option<Vec<(String, Answer)>>;
    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Answers {
    type Value = Option<Vec<(String, Answer)>>;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    not_an_object!();
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        /// Past this many answers, a repeated id is looked up in an index, not by a scan.
        const SCAN: usize = 16;
        let mut answers: Vec<(String, Answer)> = Vec::new();
        let mut index: Option<std::collections::HashMap<String, usize>> = None;
        while let Some(id) = map.next_key::<String>()? {
            let answer = map.next_value_seed(ObjectFields(&Answer::FIELDS))?.map_or(
                Answer::Other,
                |fields| {
                    Answer::from_fields(|name| {
                        let at = Answer::FIELDS.iter().position(|known| *known == name)?;
                        fields[at].as_ref()
                    })
                },
            );
            let seen = match &index {
                Some(index) => index.get(&id).copied(),
                None => answers.iter().position(|(known, _)| *known == id),
            };
            match seen {
                Some(at) => answers[at].1 = answer,
                None => {
                    if let Some(index) = &mut index {
                        index.insert(id.clone(), answers.len());
                    }
                    answers.push((id, answer));
                    if index.is_none() && answers.len() > SCAN {
                        index = Some(
                            answers
                                .iter()
                                .enumerate()
                                .map(|(at, (id, _))| (id.clone(), at))
                                .collect(),
                        );
                    }
                }
            }
        }
        Ok(Some(answers))
    }
}

/// One value read as the object fields named: `Some(values)`, in the order of the names, for
/// an object (other fields parsed and dropped; a field named twice counts by its last value),
/// `None` for any other value (parsed whole all the same).
struct ObjectFields<const N: usize>(&'static [&'static str; N]);

impl<'de, const N: usize> serde::de::DeserializeSeed<'de> for ObjectFields<N> {
    type Value = Option<[Option<Value>; N]>;
    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, const N: usize> serde::de::Visitor<'de> for ObjectFields<N> {
    type Value = Option<[Option<Value>; N]>;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    not_an_object!();
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut values: [Option<Value>; N] = std::array::from_fn(|_| None);
        while let Some(field) = map.next_key_seed(FieldName(self.0))? {
            let value = map.next_value::<Value>()?;
            if let Some(at) = field {
                values[at] = Some(value);
            }
        }
        Ok(Some(values))
    }
}

/// An object key: its place among the names, or `None` for another name.
struct FieldName<const N: usize>(&'static [&'static str; N]);

impl<'de, const N: usize> serde::de::DeserializeSeed<'de> for FieldName<N> {
    type Value = Option<usize>;
    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_identifier(self)
    }
}

impl<'de, const N: usize> serde::de::Visitor<'de> for FieldName<N> {
    type Value = Option<usize>;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a field name")
    }
    fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<Option<usize>, E> {
        Ok(self.0.iter().position(|known| *known == name))
    }
}
