//! How body and answer faults change a 200 answer.

use serde_json::{Map, Value, json};

use crate::fault::Fault;

/// A string that stands for a bare `NaN` token until the body is encoded (serde_json cannot
/// hold NaN in a value).
const NAN_MARK: &str = "\u{1}jevjudge-fake-nan\u{1}";

/// Applies an answer fault to a 200 body `{model, answers, usage}`. Other faults leave it alone.
pub(crate) fn apply(fault: &Fault, body: &mut Value) {
    match fault {
        Fault::MissingAnswer => {
            if let Some(answers) = answers_mut(body)
                && let Some(first) = answers.keys().next().cloned()
            {
                answers.shift_remove(&first);
            }
        }
        Fault::ExtraAnswer => {
            if let Some(answers) = answers_mut(body) {
                let mut id = String::from("__extra__");
                while answers.contains_key(&id) {
                    id.push('_');
                }
                answers.insert(id, json!({"type": "noul", "noul": 0.5}));
            }
        }
        Fault::UnknownAnswerType => each_answer(body, |answer| answer["type"] = json!("boolean")),
        Fault::NoulOutOfRange => each_of(body, "noul", |answer| answer["noul"] = json!(1.5)),
        Fault::NoulNan => each_of(body, "noul", |answer| answer["noul"] = json!(NAN_MARK)),
        Fault::NoulNull => each_of(body, "noul", |answer| answer["noul"] = Value::Null),
        Fault::BrokenChoiceSum => each_of(body, "choice", scale_probabilities),
        Fault::BrokenScoreSum => each_of(body, "score", scale_probabilities),
        Fault::BrokenChoiceKeys => each_of(body, "choice", rename_last_key),
        Fault::BrokenScoreKeys => each_of(body, "score", shift_keys),
        Fault::NullConfidence => each_answer(body, |answer| {
            if let Some(fields) = answer
                .as_object_mut()
                .filter(|f| f.contains_key("confidence"))
            {
                fields.insert("confidence".into(), Value::Null);
            }
        }),
        Fault::MissingUsage => remove(body, "usage"),
        Fault::MissingModel => remove(body, "model"),
        Fault::FloatUsage => {
            if let Some(usage) = body.get_mut("usage").and_then(Value::as_object_mut) {
                for count in usage.values_mut() {
                    if let Some(n) = count.as_f64() {
                        *count = json!(n.trunc() + 0.0);
                    }
                }
            }
        }
        Fault::NanToken => {
            if let Some(fields) = body.as_object_mut() {
                fields.insert("x_debug".into(), json!(NAN_MARK));
            }
        }
        Fault::NoulValues(values) => {
            if let Some(answers) = answers_mut(body) {
                for (id, p) in values {
                    if let Some(answer) = answers.get_mut(id).filter(|a| a["type"] == "noul") {
                        answer["noul"] =
                            serde_json::Number::from_f64(*p).map_or(json!(NAN_MARK), Value::Number);
                    }
                }
            }
        }
        Fault::Answers(replacements) => {
            if let Some(answers) = answers_mut(body) {
                for (id, answer) in replacements {
                    answers.insert(id.clone(), answer.clone());
                }
            }
        }
        _ => {}
    }
}

/// The bytes of a 200 body under a body fault (or none).
pub(crate) fn encode(fault: Option<&Fault>, body: &Value) -> Vec<u8> {
    let text = serde_json::to_string(body).unwrap_or_default();
    let quoted = serde_json::to_string(NAN_MARK).unwrap_or_default();
    let text = if text.contains(&quoted) {
        text.replace(&quoted, "NaN")
    } else {
        text
    };
    match fault {
        Some(Fault::TruncatedBody) => {
            let mut bytes = text.into_bytes();
            bytes.truncate(bytes.len() / 2);
            bytes
        }
        Some(Fault::InvalidJson) => b"{\"model\": \"jev-1.13.0\", \"answers\": {'oops': }".to_vec(),
        Some(Fault::XssiPrefix) => {
            let mut bytes = b")]}'\n".to_vec();
            bytes.extend_from_slice(text.as_bytes());
            bytes
        }
        _ => text.into_bytes(),
    }
}

fn answers_mut(body: &mut Value) -> Option<&mut Map<String, Value>> {
    body.get_mut("answers").and_then(Value::as_object_mut)
}

fn each_answer(body: &mut Value, mut change: impl FnMut(&mut Value)) {
    if let Some(answers) = answers_mut(body) {
        answers.values_mut().for_each(&mut change);
    }
}

fn each_of(body: &mut Value, kind: &str, mut change: impl FnMut(&mut Value)) {
    each_answer(body, |answer| {
        if answer["type"] == kind {
            change(answer);
        }
    });
}

fn remove(body: &mut Value, field: &str) {
    if let Some(fields) = body.as_object_mut() {
        fields.shift_remove(field);
    }
}

fn scale_probabilities(answer: &mut Value) {
    if let Some(probabilities) = answer
        .get_mut("probabilities")
        .and_then(Value::as_object_mut)
    {
        for p in probabilities.values_mut() {
            if let Some(value) = p.as_f64() {
                *p = json!(((value * 0.8) * 10_000.0).round() / 10_000.0);
            }
        }
    }
}

fn rename_last_key(answer: &mut Value) {
    if let Some(probabilities) = answer
        .get_mut("probabilities")
        .and_then(Value::as_object_mut)
        && let Some(label) = probabilities.keys().next_back().cloned()
        && let Some(p) = probabilities.shift_remove(&label)
    {
        probabilities.insert(format!("{label} (renamed)"), p);
    }
}

fn shift_keys(answer: &mut Value) {
    if let Some(probabilities) = answer
        .get_mut("probabilities")
        .and_then(Value::as_object_mut)
    {
        let shifted: Map<String, Value> = std::mem::take(probabilities)
            .into_iter()
            .map(|(key, p)| (key.parse::<usize>().map_or(key, |i| (i + 1).to_string()), p))
            .collect();
        *probabilities = shifted;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body() -> Value {
        json!({"model": "jev-1.13.0",
            "answers": {
                "a": {"type": "noul", "noul": 0.25},
                "b": {"type": "choice", "choice": "x", "confidence": 0.5, "probabilities": {"x": 0.75, "y": 0.25}},
                "c": {"type": "score", "score": 0.5, "confidence": 0.4, "legend": {"0": "l", "1": "h"},
                      "probabilities": {"0": 0.5, "1": 0.5}}},
            "usage": {"input_tokens": 12, "output_tokens": 60}})
    }

    fn with(fault: Fault) -> Value {
        let mut b = body();
        apply(&fault, &mut b);
        b
    }

    fn text(fault: Fault) -> String {
        let mut b = body();
        apply(&fault, &mut b);
        String::from_utf8_lossy(&encode(Some(&fault), &b)).into_owned()
    }

    #[test]
    fn answer_faults_break_what_they_name() {
        assert!(with(Fault::MissingAnswer)["answers"].get("a").is_none());
        assert_eq!(
            with(Fault::ExtraAnswer)["answers"]
                .as_object()
                .map(Map::len),
            Some(4)
        );
        assert_eq!(
            with(Fault::UnknownAnswerType)["answers"]["b"]["type"],
            "boolean"
        );
        assert_eq!(with(Fault::NoulOutOfRange)["answers"]["a"]["noul"], 1.5);
        assert_eq!(with(Fault::NoulNull)["answers"]["a"]["noul"], Value::Null);
        for (fault, answer, probabilities) in [
            (Fault::BrokenChoiceSum, "b", json!({"x": 0.6, "y": 0.2})),
            (Fault::BrokenScoreSum, "c", json!({"0": 0.4, "1": 0.4})),
            (
                Fault::BrokenChoiceKeys,
                "b",
                json!({"x": 0.75, "y (renamed)": 0.25}),
            ),
            (Fault::BrokenScoreKeys, "c", json!({"1": 0.5, "2": 0.5})),
        ] {
            let label = format!("{fault:?}");
            assert_eq!(
                with(fault)["answers"][answer]["probabilities"],
                probabilities,
                "{label}"
            );
        }
        let nulls = with(Fault::NullConfidence);
        assert_eq!(nulls["answers"]["b"]["confidence"], Value::Null);
        assert!(nulls["answers"]["a"].get("confidence").is_none());
        assert!(with(Fault::MissingUsage).get("usage").is_none());
        assert!(with(Fault::MissingModel).get("model").is_none());
    }

    #[test]
    fn float_usage_is_written_with_a_fraction() {
        assert!(text(Fault::FloatUsage).contains(r#""input_tokens":12.0"#));
    }

    #[test]
    fn nan_faults_write_a_bare_token() {
        assert!(text(Fault::NanToken).contains(r#""x_debug":NaN"#));
        assert!(text(Fault::NoulNan).contains(r#""noul":NaN"#));
        assert!(text(Fault::NoulValues(vec![("a".into(), f64::NAN)])).contains(r#""noul":NaN"#));
    }

    #[test]
    fn scripted_noul_values_replace_only_nouls() {
        let b = with(Fault::NoulValues(vec![
            ("a".into(), 0.9),
            ("b".into(), 0.1),
            ("zz".into(), 0.3),
        ]));
        assert_eq!(b["answers"]["a"]["noul"], 0.9);
        assert_eq!(b["answers"]["b"], body()["answers"]["b"]);
        assert!(b["answers"].get("zz").is_none());
    }

    #[test]
    fn body_faults_are_not_json() {
        for fault in [Fault::TruncatedBody, Fault::InvalidJson, Fault::XssiPrefix] {
            assert!(serde_json::from_str::<Value>(&text(fault)).is_err());
        }
        assert!(text(Fault::XssiPrefix).starts_with(")]}'\n{"));
        assert!(serde_json::from_slice::<Value>(&encode(None, &body())).is_ok());
    }
}
