//! Request checks, in the live API's order: JSON, then the schema (422, FastAPI's shape), then
//! the rules (400). systemone-wire.md §13 items 3–5.
//!
//! The schema collects every problem, as FastAPI does; the rules stop at the first one. What the
//! live API accepts stays accepted: unknown fields, null instructions, null option descriptions,
//! one-sided or extended noul criteria, a 1-option choice and a 1-level score.

use serde_json::{Map, Value};

use crate::rejection::{Rejection, entry};

/// At most this many choice options (live: "Must have at most 255 choices.").
pub(crate) const MAX_OPTIONS: usize = 255;
/// At most this many score levels (live: "Must have at most 10 levels.").
pub(crate) const MAX_LEVELS: usize = 10;
/// Estimated tokens (bytes ÷ 4) allowed for `state` plus the longest question.
pub(crate) const MAX_TOKENS_ONE: usize = 32 * 1024;
/// Estimated tokens allowed for `state` plus every question.
pub(crate) const MAX_TOKENS_ALL: usize = 64 * 1024;

/// The models the fake serves: the two aliases resolve to the one versioned id.
pub(crate) const VERSIONED_MODEL: &str = "jev-1.13.0";

static NULL: Value = Value::Null;

/// A request that passed every check, viewed as typed parts.
pub(crate) struct Checked<'a> {
    /// The model as requested (an alias or the versioned id).
    pub(crate) requested_model: &'a str,
    /// The versioned id that answers.
    pub(crate) model: &'static str,
    pub(crate) state: &'a Value,
    /// The `questions` object exactly as sent.
    pub(crate) questions_value: &'a Value,
    /// The questions in request order.
    pub(crate) questions: Vec<(&'a str, Question<'a>)>,
    /// Compact JSON size of `state`, in bytes.
    pub(crate) state_bytes: usize,
    /// Compact JSON size of every question together, in bytes.
    pub(crate) question_bytes: usize,
}

/// One question, with absent fields read as JSON `null`.
pub(crate) enum Question<'a> {
    Noul {
        instructions: &'a Value,
        when_true: &'a Value,
        when_false: &'a Value,
    },
    Choice {
        instructions: &'a Value,
        options: Vec<(&'a str, &'a Value)>,
    },
    Score {
        instructions: &'a Value,
        levels: &'a [Value],
    },
}

/// Parses a request body: anything but one JSON value is FastAPI's `json_invalid` 422.
pub(crate) fn parse(body: &[u8]) -> Result<Value, Rejection> {
    serde_json::from_slice(body).map_err(|error| {
        let position = byte_offset(body, error.line(), error.column());
        Rejection::validation(vec![serde_json::json!({
            "type": "json_invalid",
            "loc": ["body", position],
            "msg": "JSON decode error",
            "input": {},
            "ctx": { "error": error.to_string() },
        })])
    })
}

/// Maps serde_json's 1-based line and column to a byte offset.
fn byte_offset(body: &[u8], line: usize, column: usize) -> usize {
    let mut offset = 0;
    for (index, text) in body.split(|b| *b == b'\n').enumerate() {
        if index + 1 == line {
            return offset + column.saturating_sub(1).min(text.len());
        }
        offset += text.len() + 1;
    }
    body.len()
}

/// Whether `value` is System One "content": a string, an object or an array.
fn is_content(value: &Value) -> bool {
    matches!(value, Value::String(_) | Value::Object(_) | Value::Array(_))
}

/// Runs the schema and the rules over a parsed body.
pub(crate) fn check(body: &Value) -> Result<Checked<'_>, Rejection> {
    let Some(object) = body.as_object() else {
        return Err(Rejection::validation(vec![entry(
            &[],
            "model_attributes_type",
            "Input should be a valid dictionary or object to extract fields from",
            body,
        )]));
    };
    let mut errors = Vec::new();
    let model = schema_model(object, &mut errors);
    let state = schema_state(object, &mut errors);
    let questions = schema_questions(object, &mut errors);
    let (Some(model), Some(state), Some((questions_value, questions)), true) =
        (model, state, questions, errors.is_empty())
    else {
        return Err(Rejection::validation(errors));
    };
    rules(model, state, questions_value, questions)
}

fn schema_model<'a>(object: &'a Map<String, Value>, errors: &mut Vec<Value>) -> Option<&'a str> {
    match object.get("model") {
        None => {
            errors.push(missing(&[Value::from("model")], object));
            None
        }
        Some(Value::String(model)) => Some(model),
        Some(other) => {
            errors.push(entry(
                &[Value::from("model")],
                "string_type",
                "Input should be a valid string",
                other,
            ));
            None
        }
    }
}

fn schema_state<'a>(object: &'a Map<String, Value>, errors: &mut Vec<Value>) -> Option<&'a Value> {
    match object.get("state") {
        None => {
            errors.push(missing(&[Value::from("state")], object));
            None
        }
        Some(state) if is_content(state) => Some(state),
        Some(other) => {
            for (member, kind, message) in [
                ("str", "string_type", "Input should be a valid string"),
                (
                    "dict[str,any]",
                    "dict_type",
                    "Input should be a valid dictionary",
                ),
                ("list[any]", "list_type", "Input should be a valid list"),
            ] {
                errors.push(entry(
                    &[Value::from("state"), Value::from(member)],
                    kind,
                    message,
                    other,
                ));
            }
            None
        }
    }
}

type Parsed<'a> = (&'a Value, Vec<(&'a str, Unchecked<'a>)>);

/// A question that passed the schema; its type may still be one the rules refuse.
enum Unchecked<'a> {
    Known(Question<'a>),
    /// An unknown `type` string (for example `box`): 400 "Invalid request.".
    UnknownType,
    /// Choice criteria given as a list: 400, as observed live.
    ChoiceList,
}

fn schema_questions<'a>(
    object: &'a Map<String, Value>,
    errors: &mut Vec<Value>,
) -> Option<Parsed<'a>> {
    let loc = [Value::from("questions")];
    let value = match object.get("questions") {
        None => {
            errors.push(missing(&loc, object));
            return None;
        }
        Some(value) => value,
    };
    let Some(map) = value.as_object() else {
        errors.push(not_a_dictionary(&loc, value));
        return None;
    };
    if map.is_empty() {
        let mut e = empty(&loc, "Dictionary", value);
        e["ctx"] =
            serde_json::json!({ "field_type": "Dictionary", "min_length": 1, "actual_length": 0 });
        errors.push(e);
        return None;
    }
    let before = errors.len();
    let mut parsed = Vec::with_capacity(map.len());
    for (id, question) in map {
        if let Some(question) = schema_question(id, question, errors) {
            parsed.push((id.as_str(), question));
        }
    }
    (errors.len() == before).then_some((value, parsed))
}

fn schema_question<'a>(
    id: &'a str,
    value: &'a Value,
    errors: &mut Vec<Value>,
) -> Option<Unchecked<'a>> {
    let loc = |more: &[Value]| {
        let mut path = vec![Value::from("questions"), Value::from(id)];
        path.extend(more.iter().cloned());
        path
    };
    let Some(question) = value.as_object() else {
        errors.push(entry(
            &loc(&[]),
            "model_attributes_type",
            "Input should be a valid dictionary",
            value,
        ));
        return None;
    };
    let kind = match question.get("type") {
        None => {
            errors.push(missing(&loc(&[Value::from("type")]), question));
            return None;
        }
        Some(Value::String(kind)) => kind.as_str(),
        Some(other) => {
            errors.push(entry(
                &loc(&[Value::from("type")]),
                "string_type",
                "Input should be a valid string",
                other,
            ));
            return None;
        }
    };
    if !matches!(kind, "noul" | "choice" | "score") {
        return Some(Unchecked::UnknownType);
    }
    let at = |field: &str| loc(&[Value::from(kind), Value::from(field)]);
    let before = errors.len();
    let instructions = question.get("instructions").unwrap_or(&NULL);
    if !instructions.is_null() && !is_content(instructions) {
        errors.push(content_error(&at("instructions"), instructions));
    }
    let criteria = question.get("criteria");
    let parsed = match kind {
        "noul" => schema_noul(criteria, &at("criteria"), errors).map(|(when_true, when_false)| {
            Unchecked::Known(Question::Noul {
                instructions,
                when_true,
                when_false,
            })
        }),
        "choice" => schema_choice(instructions, criteria, &at("criteria"), errors),
        _ => schema_score(criteria, &at("criteria"), errors).map(|levels| {
            Unchecked::Known(Question::Score {
                instructions,
                levels,
            })
        }),
    };
    if errors.len() == before { parsed } else { None }
}

fn schema_noul<'a>(
    criteria: Option<&'a Value>,
    loc: &[Value],
    errors: &mut Vec<Value>,
) -> Option<(&'a Value, &'a Value)> {
    match criteria {
        None | Some(Value::Null) => Some((&NULL, &NULL)),
        Some(Value::Object(sides)) => {
            let mut ok = true;
            for side in ["true", "false"] {
                if let Some(text) = sides.get(side).filter(|v| !v.is_null() && !is_content(v)) {
                    errors.push(content_error(&with(loc, Value::from(side)), text));
                    ok = false;
                }
            }
            ok.then(|| {
                (
                    sides.get("true").unwrap_or(&NULL),
                    sides.get("false").unwrap_or(&NULL),
                )
            })
        }
        Some(other) => {
            errors.push(not_a_dictionary(loc, other));
            None
        }
    }
}

fn schema_choice<'a>(
    instructions: &'a Value,
    criteria: Option<&'a Value>,
    loc: &[Value],
    errors: &mut Vec<Value>,
) -> Option<Unchecked<'a>> {
    match criteria {
        None => {
            errors.push(entry(loc, "missing", "Field required", &NULL));
            None
        }
        Some(Value::Array(_)) => Some(Unchecked::ChoiceList),
        Some(value @ Value::Object(options)) if options.is_empty() => {
            errors.push(empty(loc, "Dictionary", value));
            None
        }
        Some(Value::Object(options)) => {
            let mut ok = true;
            for (label, description) in options {
                if !description.is_null() && !is_content(description) {
                    errors.push(content_error(
                        &with(loc, Value::from(label.as_str())),
                        description,
                    ));
                    ok = false;
                }
            }
            ok.then(|| {
                let options = options
                    .iter()
                    .map(|(label, d)| (label.as_str(), d))
                    .collect();
                Unchecked::Known(Question::Choice {
                    instructions,
                    options,
                })
            })
        }
        Some(other) => {
            errors.push(not_a_dictionary(loc, other));
            None
        }
    }
}

fn schema_score<'a>(
    criteria: Option<&'a Value>,
    loc: &[Value],
    errors: &mut Vec<Value>,
) -> Option<&'a [Value]> {
    match criteria {
        None => {
            errors.push(entry(loc, "missing", "Field required", &NULL));
            None
        }
        Some(value @ Value::Array(levels)) if levels.is_empty() => {
            errors.push(empty(loc, "List", value));
            None
        }
        Some(Value::Array(levels)) => {
            let mut ok = true;
            for (index, level) in levels.iter().enumerate() {
                if !is_content(level) {
                    errors.push(content_error(&with(loc, Value::from(index)), level));
                    ok = false;
                }
            }
            ok.then_some(levels.as_slice())
        }
        Some(other) => {
            errors.push(entry(
                loc,
                "list_type",
                "Input should be a valid list",
                other,
            ));
            None
        }
    }
}

fn rules<'a>(
    requested_model: &'a str,
    state: &'a Value,
    questions_value: &'a Value,
    parsed: Vec<(&'a str, Unchecked<'a>)>,
) -> Result<Checked<'a>, Rejection> {
    let model = resolve_model(requested_model)
        .ok_or_else(|| Rejection::usage(&format!("Unknown model: {requested_model}")))?;
    let mut questions = Vec::with_capacity(parsed.len());
    for (id, question) in parsed {
        let question = match question {
            Unchecked::UnknownType | Unchecked::ChoiceList => {
                return Err(Rejection::usage("Invalid request."));
            }
            Unchecked::Known(question) => question,
        };
        match &question {
            Question::Noul {
                instructions: Value::String(text),
                ..
            } if text.is_empty() => {
                return Err(Rejection::usage("Invalid request."));
            }
            Question::Choice { options, .. } if options.len() > MAX_OPTIONS => {
                return Err(Rejection::plain(
                    "Too many choices. Must have at most 255 choices.",
                ));
            }
            Question::Score { levels, .. } if levels.len() > MAX_LEVELS => {
                return Err(Rejection::plain(
                    "Too many levels. Must have at most 10 levels.",
                ));
            }
            _ => {}
        }
        questions.push((id, question));
    }
    let state_bytes = json_len(state);
    let sizes: Vec<usize> = questions_value
        .as_object()
        .map(|map| map.values().map(json_len).collect())
        .unwrap_or_default();
    let longest = sizes.iter().copied().max().unwrap_or(0);
    let all: usize = sizes.iter().sum();
    if (state_bytes + longest) / 4 > MAX_TOKENS_ONE || (state_bytes + all) / 4 > MAX_TOKENS_ALL {
        return Err(Rejection::max_tokens());
    }
    Ok(Checked {
        requested_model,
        model,
        state,
        questions_value,
        questions,
        state_bytes,
        question_bytes: all,
    })
}

/// The versioned id answering `model`, or `None` for a model the fake does not serve.
pub(crate) fn resolve_model(model: &str) -> Option<&'static str> {
    match model {
        "jev-latest" | "jev-preview" | VERSIONED_MODEL => Some(VERSIONED_MODEL),
        _ => None,
    }
}

/// Compact JSON size in bytes.
fn json_len(value: &Value) -> usize {
    serde_json::to_vec(value)
        .map(|bytes| bytes.len())
        .unwrap_or(0)
}

/// `too_short`: an empty `kind` ("Dictionary", "List") where one item at least is needed.
fn empty(loc: &[Value], kind: &str, input: &Value) -> Value {
    entry(
        loc,
        "too_short",
        &format!("{kind} should have at least 1 item after validation, not 0"),
        input,
    )
}

fn not_a_dictionary(loc: &[Value], input: &Value) -> Value {
    entry(
        loc,
        "dict_type",
        "Input should be a valid dictionary",
        input,
    )
}

fn missing(loc: &[Value], input: &Map<String, Value>) -> Value {
    entry(
        loc,
        "missing",
        "Field required",
        &Value::Object(input.clone()),
    )
}

fn content_error(loc: &[Value], input: &Value) -> Value {
    entry(
        loc,
        "string_type",
        "Input should be a valid string, object or array",
        input,
    )
}

fn with(loc: &[Value], last: Value) -> Vec<Value> {
    let mut path = loc.to_vec();
    path.push(last);
    path
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn noul() -> Value {
        json!({"type": "noul", "instructions": "Refund?"})
    }

    fn request(questions: Value) -> Value {
        json!({"model": "jev-latest", "state": "s", "questions": questions})
    }

    fn status(body: &Value) -> u16 {
        match check(body) {
            Ok(_) => 200,
            Err(rejection) => rejection.status,
        }
    }

    #[test]
    fn invalid_json_is_a_422_with_a_position() {
        let rejection = parse(b"{\"model\": ").err();
        let body = rejection.map(|r| r.body).unwrap_or_default();
        assert_eq!(body["detail"][0]["type"], "json_invalid");
        assert_eq!(body["detail"][0]["loc"][0], "body");
        assert!(body["detail"][0]["loc"][1].is_u64());
    }

    #[test]
    fn schema_failures_are_422() {
        for body in [
            json!([1]),
            json!({"state": "s", "questions": {"q": noul()}}),
            json!({"model": "jev-latest", "questions": {"q": noul()}}),
            json!({"model": "jev-latest", "state": "s"}),
            json!({"model": 7, "state": "s", "questions": {"q": noul()}}),
            json!({"model": "jev-latest", "state": 42, "questions": {"q": noul()}}),
            json!({"model": "jev-latest", "state": null, "questions": {"q": noul()}}),
            json!({"model": "jev-latest", "state": true, "questions": {"q": noul()}}),
            request(json!([])),
            request(json!({})),
            request(json!({"q": {"instructions": "x"}})),
            request(json!({"q": {"type": 3, "instructions": "x"}})),
            request(json!({"q": "noul"})),
            request(json!({"q": {"type": "noul", "instructions": 5}})),
            request(json!({"q": {"type": "noul", "criteria": {"true": 1}}})),
            request(json!({"q": {"type": "noul", "criteria": "yes"}})),
            request(json!({"q": {"type": "choice", "instructions": "x", "criteria": {}}})),
            request(json!({"q": {"type": "choice", "instructions": "x"}})),
            request(json!({"q": {"type": "choice", "instructions": "x", "criteria": {"a": 1}}})),
            request(json!({"q": {"type": "score", "instructions": "x", "criteria": []}})),
            request(
                json!({"q": {"type": "score", "instructions": "x", "criteria": {"0": "a", "1": "b"}}}),
            ),
            request(json!({"q": {"type": "score", "instructions": "x", "criteria": ["a", null]}})),
        ] {
            assert_eq!(status(&body), 422, "{body}");
        }
    }

    #[test]
    fn rule_failures_are_400() {
        let options: Map<String, Value> =
            (0..256).map(|i| (format!("o{i}"), Value::Null)).collect();
        let levels: Vec<Value> = (0..11).map(|i| Value::from(format!("l{i}"))).collect();
        for body in [
            request(json!({"q": {"type": "box", "instructions": "x"}})),
            request(json!({"q": {"type": "boolean", "instructions": "x"}})),
            json!({"model": "jev-typo", "state": "s", "questions": {"q": noul()}}),
            request(json!({"q": {"type": "choice", "instructions": "x", "criteria": options}})),
            request(json!({"q": {"type": "score", "instructions": "x", "criteria": levels}})),
            request(json!({"q": {"type": "choice", "instructions": "x", "criteria": ["a", "b"]}})),
            request(json!({"q": {"type": "noul", "instructions": ""}})),
            json!({"model": "jev-latest", "state": "x".repeat(MAX_TOKENS_ONE * 4 + 8), "questions": {"q": noul()}}),
        ] {
            assert_eq!(status(&body), 400);
        }
    }

    #[test]
    fn all_questions_together_may_exceed_the_larger_limit() {
        let half = "y".repeat(MAX_TOKENS_ONE * 2);
        let questions: Map<String, Value> = (0..5)
            .map(|i| {
                (
                    format!("q{i}"),
                    json!({"type": "noul", "instructions": half}),
                )
            })
            .collect();
        let rejection = check(&request(Value::Object(questions))).err();
        assert_eq!(rejection, Some(Rejection::max_tokens()));
    }

    #[test]
    fn live_leniency_is_kept() {
        for body in [
            request(json!({"q": {"type": "noul"}})),
            request(
                json!({"q": {"type": "noul", "instructions": null, "criteria": {"true": "yes"}}}),
            ),
            request(
                json!({"q": {"type": "noul", "instructions": "x", "criteria": {"false": "no", "maybe": 1}}}),
            ),
            request(
                json!({"q": {"type": "choice", "instructions": "x", "criteria": {"only": null}}}),
            ),
            request(
                json!({"q": {"type": "score", "instructions": {"k": 1}, "criteria": [["one"]]}}),
            ),
            json!({"model": "jev-1.13.0", "state": [1, null], "questions": {"q": noul()}, "extra": 1}),
            json!({"model": "jev-preview", "state": {}, "questions": {"q": {"type": "noul", "seed": 3}}}),
        ] {
            assert_eq!(status(&body), 200, "{body}");
        }
    }

    #[test]
    fn aliases_resolve_to_the_versioned_id() {
        assert_eq!(resolve_model("jev-latest"), Some(VERSIONED_MODEL));
        assert_eq!(resolve_model("jev-preview"), Some(VERSIONED_MODEL));
        assert_eq!(resolve_model("jev-1.13.0"), Some(VERSIONED_MODEL));
        assert_eq!(resolve_model("jev-1.14.0"), None);
    }
}
