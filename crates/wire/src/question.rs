//! Questions: noul (yes/no), choice (one of a set) and score (an ordered rubric).

use std::{fmt, sync::Arc};

use serde::{Deserialize, Deserializer, Serialize, Serializer, ser::SerializeMap};
use serde_json::Value;

use crate::Content;

/// What a yes and a no mean for a noul question (its optional `criteria`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoulCriteria {
    /// The description of a yes (`"true"` on the wire).
    #[serde(rename = "true", default, skip_serializing_if = "Option::is_none")]
    pub when_true: Option<Content>,
    /// The description of a no (`"false"` on the wire).
    #[serde(rename = "false", default, skip_serializing_if = "Option::is_none")]
    pub when_false: Option<Content>,
}

impl NoulCriteria {
    /// True when neither side is described; such criteria are omitted on the wire.
    pub fn is_empty(&self) -> bool {
        self.when_true.is_none() && self.when_false.is_none()
    }
}

/// A yes/no question; the answer is the probability of yes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoulQuestion {
    /// The question itself.
    pub instructions: Content,
    /// Optional descriptions of a yes and a no; omitted on the wire when absent or empty.
    #[serde(default, skip_serializing_if = "noul_criteria_absent")]
    pub criteria: Option<NoulCriteria>,
}

fn noul_criteria_absent(criteria: &Option<NoulCriteria>) -> bool {
    criteria.as_ref().is_none_or(NoulCriteria::is_empty)
}

impl NoulQuestion {
    /// A noul question without descriptions.
    pub fn new(instructions: impl Into<Content>) -> NoulQuestion {
        NoulQuestion {
            instructions: instructions.into(),
            criteria: None,
        }
    }

    /// Adds what a yes and a no mean.
    pub fn with_criteria(
        mut self,
        when_true: impl Into<Content>,
        when_false: impl Into<Content>,
    ) -> NoulQuestion {
        self.criteria = Some(NoulCriteria {
            when_true: Some(when_true.into()),
            when_false: Some(when_false.into()),
        });
        self
    }
}

/// One option of a choice question: a label and an optional description.
#[derive(Debug, Clone, PartialEq)]
pub struct ChoiceOption {
    /// The label, an opaque string that must round-trip byte for byte.
    pub label: String,
    /// What the option means; `None` (JSON `null`) reads the option by its label alone.
    pub description: Option<Content>,
}

impl ChoiceOption {
    /// An option read by its label alone.
    pub fn new(label: impl Into<String>) -> ChoiceOption {
        ChoiceOption {
            label: label.into(),
            description: None,
        }
    }

    /// Adds what the option means.
    pub fn described(mut self, description: impl Into<Content>) -> ChoiceOption {
        self.description = Some(description.into());
        self
    }
}

/// A question whose answer is one option of a set (2 to 255 options, in order).
#[derive(Debug, Clone, PartialEq)]
pub struct ChoiceQuestion {
    /// The question itself.
    pub instructions: Content,
    /// The options, in the order they are sent.
    pub options: Vec<ChoiceOption>,
}

/// A question answered on an ordered rubric of 2 to 10 levels, numbered 0, 1, … by position.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoreQuestion {
    /// The question itself.
    pub instructions: Content,
    /// The levels, lowest first.
    pub levels: Vec<Content>,
}

impl ScoreQuestion {
    /// A score question on `levels`, lowest first.
    pub fn new<L: Into<Content>>(
        instructions: impl Into<Content>,
        levels: impl IntoIterator<Item = L>,
    ) -> ScoreQuestion {
        ScoreQuestion {
            instructions: instructions.into(),
            levels: levels.into_iter().map(Into::into).collect(),
        }
    }
}

/// A typed System One question.
#[derive(Debug, Clone, PartialEq)]
pub enum Question {
    /// Yes or no.
    Noul(NoulQuestion),
    /// One option of a set.
    Choice(ChoiceQuestion),
    /// A level of an ordered rubric.
    Score(ScoreQuestion),
}

/// The three answer types, as their wire names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QuestionType {
    /// `noul`
    Noul,
    /// `choice`
    Choice,
    /// `score`
    Score,
}

impl QuestionType {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            QuestionType::Noul => "noul",
            QuestionType::Choice => "choice",
            QuestionType::Score => "score",
        }
    }
}

impl fmt::Display for QuestionType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Question {
    /// The question's type.
    pub fn kind(&self) -> QuestionType {
        match self {
            Question::Noul(_) => QuestionType::Noul,
            Question::Choice(_) => QuestionType::Choice,
            Question::Score(_) => QuestionType::Score,
        }
    }

    /// The instructions.
    pub fn instructions(&self) -> &Content {
        match self {
            Question::Noul(q) => &q.instructions,
            Question::Choice(q) => &q.instructions,
            Question::Score(q) => &q.instructions,
        }
    }
}

impl From<NoulQuestion> for Question {
    fn from(question: NoulQuestion) -> Question {
        Question::Noul(question)
    }
}

impl From<ChoiceQuestion> for Question {
    fn from(question: ChoiceQuestion) -> Question {
        Question::Choice(question)
    }
}

impl From<ScoreQuestion> for Question {
    fn from(question: ScoreQuestion) -> Question {
        Question::Score(question)
    }
}

struct ChoiceCriteria<'a>(&'a [ChoiceOption]);

impl Serialize for ChoiceCriteria<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(
            self.0
                .iter()
                .map(|option| (&option.label, &option.description)),
        )
    }
}

impl Serialize for Question {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Question::Noul(q) => {
                let with_criteria = !noul_criteria_absent(&q.criteria);
                let mut map = serializer.serialize_map(Some(2 + usize::from(with_criteria)))?;
                map.serialize_entry("type", "noul")?;
                map.serialize_entry("instructions", &q.instructions)?;
                if with_criteria {
                    map.serialize_entry("criteria", &q.criteria)?;
                }
                map.end()
            }
            Question::Choice(q) => {
                let mut map = serializer.serialize_map(Some(3))?;
                map.serialize_entry("type", "choice")?;
                map.serialize_entry("instructions", &q.instructions)?;
                map.serialize_entry("criteria", &ChoiceCriteria(&q.options))?;
                map.end()
            }
            Question::Score(q) => {
                let mut map = serializer.serialize_map(Some(3))?;
                map.serialize_entry("type", "score")?;
                map.serialize_entry("instructions", &q.instructions)?;
                map.serialize_entry("criteria", &q.levels)?;
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Question {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Question, D::Error> {
        use serde::de::Error;
        let value = Value::deserialize(deserializer)?;
        let Value::Object(mut map) = value else {
            return Err(D::Error::custom("a question must be an object"));
        };
        let kind = map
            .remove("type")
            .ok_or_else(|| D::Error::missing_field("type"))?;
        let instructions: Content = serde_json::from_value(
            map.remove("instructions")
                .ok_or_else(|| D::Error::missing_field("instructions"))?,
        )
        .map_err(|e| D::Error::custom(format_args!("instructions: {e}")))?;
        let criteria = map.remove("criteria");
        if let Some(key) = map.keys().next() {
            return Err(D::Error::unknown_field(
                key,
                &["type", "instructions", "criteria"],
            ));
        }
        match kind.as_str() {
            Some("noul") => {
                let criteria = match criteria {
                    None | Some(Value::Null) => None,
                    Some(value) => Some(
                        serde_json::from_value(value)
                            .map_err(|e| D::Error::custom(format_args!("criteria: {e}")))?,
                    ),
                };
                Ok(Question::Noul(NoulQuestion {
                    instructions,
                    criteria,
                }))
            }
            Some("choice") => {
                let Some(Value::Object(options)) = criteria else {
                    return Err(D::Error::custom(
                        "choice criteria must be an object of label to description",
                    ));
                };
                let options = options
                    .into_iter()
                    .map(|(label, description)| {
                        let description = match description {
                            Value::Null => None,
                            other => Some(criterion(other, format_args!("criteria.{label}"))?),
                        };
                        Ok(ChoiceOption { label, description })
                    })
                    .collect::<Result<Vec<_>, D::Error>>()?;
                Ok(Question::Choice(ChoiceQuestion {
                    instructions,
                    options,
                }))
            }
            Some("score") => {
                let Some(Value::Array(levels)) = criteria else {
                    return Err(D::Error::custom(
                        "score criteria must be an array of levels",
                    ));
                };
                let levels = levels
                    .into_iter()
                    .enumerate()
                    .map(|(i, level)| criterion(level, format_args!("criteria[{i}]")))
                    .collect::<Result<Vec<_>, D::Error>>()?;
                Ok(Question::Score(ScoreQuestion {
                    instructions,
                    levels,
                }))
            }
            _ => Err(D::Error::custom(
                "question type must be \"noul\", \"choice\" or \"score\"",
            )),
        }
    }
}

/// A choice option's description or a score level as [`Content`]; an error names it by `at`.
fn criterion<E: serde::de::Error>(value: Value, at: fmt::Arguments<'_>) -> Result<Content, E> {
    Content::new(value).map_err(|e| E::custom(format_args!("{at}: {e}")))
}

/// The questions of one request, keyed by caller-chosen id, in the order they are sent (D1).
///
/// Cheap to clone (the entries are shared) and immutable once built, so a definition can hand
/// the same questions to every review without copying them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Questions {
    entries: Arc<[(String, Question)]>,
}

impl Questions {
    /// Builds the questions from `(id, question)` pairs, keeping their order.
    pub fn new(entries: impl IntoIterator<Item = (String, Question)>) -> Questions {
        Questions {
            entries: entries.into_iter().collect(),
        }
    }

    /// The number of questions.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when there are no questions.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The questions in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &Question)> {
        self.entries.iter().map(|(id, q)| (id.as_str(), q))
    }

    /// The question with this id (first match).
    pub fn get(&self, id: &str) -> Option<&Question> {
        self.entries
            .iter()
            .find(|(key, _)| key == id)
            .map(|(_, q)| q)
    }

    /// The JSON object sent on the wire, in order.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl<S: Into<String>, Q: Into<Question>> FromIterator<(S, Q)> for Questions {
    fn from_iter<I: IntoIterator<Item = (S, Q)>>(iter: I) -> Questions {
        Questions::new(iter.into_iter().map(|(id, q)| (id.into(), q.into())))
    }
}

impl Serialize for Questions {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        crate::ordered_map::serialize(&self.entries, serializer)
    }
}

impl<'de> Deserialize<'de> for Questions {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Questions, D::Error> {
        crate::ordered_map::read(
            deserializer,
            "an object of question id to question",
            Some("question id"),
        )
        .map(Questions::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn noul_without_descriptions_omits_criteria() {
        let q: Question = NoulQuestion::new("Is it supported?").into();
        assert_eq!(
            serde_json::to_string(&q).unwrap(),
            r#"{"type":"noul","instructions":"Is it supported?"}"#
        );
        let with = Question::Noul(NoulQuestion::new("Urgent?").with_criteria("Yes", "No"));
        assert_eq!(
            serde_json::to_string(&with).unwrap(),
            r#"{"type":"noul","instructions":"Urgent?","criteria":{"true":"Yes","false":"No"}}"#
        );
    }

    #[test]
    fn choice_and_score_keep_their_order_on_the_wire() {
        let text = r#"{"queue":{"type":"choice","instructions":"Which?","criteria":{"zeta":"Z","alpha":null,"日本":"J"}},"level":{"type":"score","instructions":"How?","criteria":["Calm",{"k":1},["a"]]}}"#;
        let questions: Questions = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_string(&questions).unwrap(), text);
        let ids: Vec<_> = questions.iter().map(|(id, _)| id).collect();
        assert_eq!(ids, ["queue", "level"]);
        let Some(Question::Choice(choice)) = questions.get("queue") else {
            panic!("choice expected")
        };
        let labels: Vec<_> = choice.options.iter().map(|o| o.label.as_str()).collect();
        assert_eq!(labels, ["zeta", "alpha", "日本"]);
    }

    #[test]
    fn malformed_questions_are_refused() {
        for bad in [
            json!({"q": {"type": "box", "instructions": "x"}}),
            json!({"q": {"instructions": "x"}}),
            json!({"q": {"type": "noul"}}),
            json!({"q": {"type": "noul", "instructions": 5}}),
            json!({"q": {"type": "noul", "instructions": "x", "criteria": {"maybe": "?"}}}),
            json!({"q": {"type": "choice", "instructions": "x", "criteria": ["a", "b"]}}),
            json!({"q": {"type": "score", "instructions": "x", "criteria": {"0": "a"}}}),
            json!({"q": {"type": "score", "instructions": "x", "criteria": ["a", null]}}),
        ] {
            assert!(
                serde_json::from_value::<Questions>(bad.clone()).is_err(),
                "{bad}"
            );
        }
        assert!(
            serde_json::from_str::<Questions>(
                r#"{"a":{"type":"noul","instructions":"x"},"a":{"type":"noul","instructions":"y"}}"#
            )
            .is_err()
        );
    }
}
