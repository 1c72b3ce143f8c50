//! The response checks of systemone-wire.md §7, each failure with its own detail code.

use jevjudge_wire::{
    ChoiceOption, ChoiceQuestion, Content, Detail, NoulQuestion, Question, Questions, Response,
    ScoreQuestion, Usage,
};
use proptest::prelude::*;
use serde_json::{Value, json};

fn noul_questions(ids: &[&str]) -> Questions {
    ids.iter()
        .map(|id| (*id, NoulQuestion::new("Is it so?")))
        .collect()
}

fn choice(labels: &[&str]) -> Question {
    Question::Choice(ChoiceQuestion {
        instructions: Content::text("Which?"),
        options: labels
            .iter()
            .map(|label| ChoiceOption {
                label: (*label).to_owned(),
                description: None,
            })
            .collect(),
    })
}

fn score(levels: usize) -> Question {
    Question::Score(ScoreQuestion {
        instructions: Content::text("How much?"),
        levels: (0..levels)
            .map(|i| Content::text(format!("L{i}")))
            .collect(),
    })
}

/// The detail of checking `body` against `questions`, or `None` when it passes.
fn detail(questions: &Questions, body: &str) -> Option<Detail> {
    match Response::from_slice(body.as_bytes()) {
        Err(error) => Some(error.detail()),
        Ok(response) => response.check(questions).err().map(|e| e.detail()),
    }
}

fn json_detail(questions: &Questions, body: Value) -> Option<Detail> {
    detail(questions, &body.to_string())
}

#[test]
fn unreadable_bodies() {
    let q = noul_questions(&["a"]);
    for body in [
        "",
        "   ",
        "not json",
        "[]",
        r#"{"model":"m"}"#,
        r#"{"answers":[]}"#,
        ")]}'\n{\"answers\":{\"a\":{\"type\":\"noul\",\"noul\":0.5}}}",
        r#"{"answers":{"a":{"type":"noul","noul":0.5}},"extra":NaN}"#,
        r#"{"answers":{"a":{"type":"noul","noul":0.5}}"#,
    ] {
        assert_eq!(detail(&q, body), Some(Detail::BodyUnreadable), "{body:?}");
    }
}

#[test]
fn answer_ids_must_equal_question_ids() {
    let q = noul_questions(&["covers_request", "unsupported_commitment"]);
    assert_eq!(
        json_detail(&q, json!({"answers": {}})),
        Some(Detail::AnswerMissing)
    );
    assert_eq!(
        json_detail(
            &q,
            json!({"answers": {"covers_request": {"type": "noul", "noul": 0.9}}})
        ),
        Some(Detail::AnswerMissing)
    );
    assert_eq!(
        json_detail(
            &q,
            json!({"answers": {
                "covers_request": {"type": "noul", "noul": 0.9},
                "unsupported_commitment": {"type": "noul", "noul": 0.1},
                "bonus": {"type": "noul", "noul": 0.1}}})
        ),
        Some(Detail::AnswerExtra)
    );
    // Missing beats a bad value elsewhere: the id checks run first.
    assert_eq!(
        json_detail(
            &q,
            json!({"answers": {"covers_request": {"type": "noul", "noul": 7}}})
        ),
        Some(Detail::AnswerMissing)
    );
}

#[test]
fn types_must_match() {
    let q = noul_questions(&["a"]);
    for answer in [
        json!({"type": "boolean", "noul": true}),
        json!({"type": "choice", "choice": "x"}),
        json!({"noul": 0.5}),
        json!("0.5"),
        json!(0.5),
    ] {
        assert_eq!(
            json_detail(&q, json!({"answers": {"a": answer}})),
            Some(Detail::AnswerWrongType),
            "{answer}"
        );
    }
}

#[test]
fn noul_probability_rules() {
    let q = noul_questions(&["a"]);
    let check = |noul: Value| {
        json_detail(
            &q,
            json!({"answers": {"a": {"type": "noul", "noul": noul}}}),
        )
    };
    assert_eq!(check(json!(0.0)), None);
    assert_eq!(check(json!(1.0)), None);
    assert_eq!(check(json!(0)), None);
    assert_eq!(check(json!(1)), None);
    assert_eq!(check(json!(null)), Some(Detail::ProbabilityMissing));
    assert_eq!(
        json_detail(&q, json!({"answers": {"a": {"type": "noul"}}})),
        Some(Detail::ProbabilityMissing)
    );
    assert_eq!(check(json!(-0.1)), Some(Detail::ProbabilityOutOfRange));
    assert_eq!(check(json!(1.1)), Some(Detail::ProbabilityOutOfRange));
    assert_eq!(check(json!(1e300)), Some(Detail::ProbabilityOutOfRange));
}

#[test]
fn choice_rules() {
    let q: Questions = [("queue", choice(&["billing", "technical", "other"]))]
        .into_iter()
        .collect();
    let answer = |body: Value| json_detail(&q, json!({"answers": {"queue": body}}));
    let good = json!({"type": "choice", "choice": "billing", "confidence": 0.94,
                      "probabilities": {"billing": 0.96, "technical": 0.02, "other": 0.02}});
    assert_eq!(answer(good.clone()), None);
    let mut unknown = good.clone();
    unknown["choice"] = json!("sales");
    assert_eq!(answer(unknown), Some(Detail::ChoiceUnknown));
    let mut keys = good.clone();
    keys["probabilities"] = json!({"billing": 0.96, "Technical": 0.02, "other": 0.02});
    assert_eq!(answer(keys), Some(Detail::ProbabilitiesKeys));
    let mut missing_key = good.clone();
    missing_key["probabilities"] = json!({"billing": 0.98, "other": 0.02});
    assert_eq!(answer(missing_key), Some(Detail::ProbabilitiesKeys));
    let mut sum = good.clone();
    sum["probabilities"] = json!({"billing": 0.8, "technical": 0.8, "other": 0.0});
    assert_eq!(answer(sum), Some(Detail::ProbabilitiesSum));
    let mut range = good.clone();
    range["probabilities"] = json!({"billing": 1.5, "technical": -0.5, "other": 0.0});
    assert_eq!(answer(range), Some(Detail::ProbabilityOutOfRange));
    let mut null_p = good.clone();
    null_p["probabilities"] = json!({"billing": null, "technical": 0.5, "other": 0.5});
    assert_eq!(answer(null_p), Some(Detail::ProbabilityMissing));
    for (confidence, expected) in [
        (json!(null), None),
        (json!(0.0), None),
        (json!(1.0), None),
        (json!(1.2), Some(Detail::ConfidenceInvalid)),
        (json!(-0.01), Some(Detail::ConfidenceInvalid)),
        (json!("high"), Some(Detail::ConfidenceInvalid)),
    ] {
        let mut body = good.clone();
        body["confidence"] = confidence.clone();
        assert_eq!(answer(body), expected, "confidence {confidence}");
    }
    let mut absent = good;
    absent.as_object_mut().unwrap().remove("confidence");
    assert_eq!(answer(absent), None);
}

#[test]
fn choice_labels_round_trip_byte_for_byte() {
    let q: Questions = [("c", choice(&["caf\u{e9}", "cafe\u{301}"]))]
        .into_iter()
        .collect();
    let body = json!({"answers": {"c": {"type": "choice", "choice": "cafe\u{301}", "confidence": 0.2,
        "probabilities": {"caf\u{e9}": 0.4, "cafe\u{301}": 0.6}}}});
    assert_eq!(json_detail(&q, body), None);
    // NFC-normalised keys are not the labels that were sent.
    let renamed = json!({"answers": {"c": {"type": "choice", "choice": "caf\u{e9}", "confidence": 0.2,
        "probabilities": {"caf\u{e9}": 0.4, "CAFE\u{301}": 0.6}}}});
    assert_eq!(json_detail(&q, renamed), Some(Detail::ProbabilitiesKeys));
}

#[test]
fn sum_tolerance_is_five_e_minus_five_per_option() {
    // systemone-wire.md §7 tolerance examples.
    let labels: Vec<String> = (0..34).map(|i| format!("o{i}")).collect();
    let refs: Vec<&str> = labels.iter().map(String::as_str).collect();
    let q: Questions = [("c", choice(&refs))].into_iter().collect();
    let with = |ps: Vec<f64>| {
        let probabilities: serde_json::Map<String, Value> = labels
            .iter()
            .cloned()
            .zip(ps.into_iter().map(Value::from))
            .collect();
        json_detail(
            &q,
            json!({"answers": {"c": {"type": "choice", "choice": "o0", "confidence": 0.0,
                "probabilities": probabilities}}}),
        )
    };
    let mut ps = vec![1.0 / 34.0; 34];
    ps[0] += 0.0001;
    assert_eq!(with(ps), None, "34 options summing to 1.0001 are accepted");
    let mut ps = vec![1.0 / 34.0; 34];
    ps[0] += 0.01;
    assert_eq!(
        with(ps),
        Some(Detail::ProbabilitiesSum),
        "1.0101 is refused"
    );

    let labels: Vec<String> = (0..255).map(|i| format!("o{i}")).collect();
    let refs: Vec<&str> = labels.iter().map(String::as_str).collect();
    let q: Questions = [("c", choice(&refs))].into_iter().collect();
    let mut ps = vec![1.0 / 255.0; 255];
    ps[7] += 1e-5;
    let probabilities: serde_json::Map<String, Value> = labels
        .iter()
        .cloned()
        .zip(ps.into_iter().map(Value::from))
        .collect();
    let body = json!({"answers": {"c": {"type": "choice", "choice": "o7", "probabilities": probabilities}}});
    assert_eq!(
        json_detail(&q, body),
        None,
        "255 options, one raised by 1e-5"
    );
}

#[test]
fn score_rules() {
    let q: Questions = [("frustration", score(3))].into_iter().collect();
    let good = json!({"type": "score", "score": 1.05, "confidence": 0.92,
        "legend": {"0": "Calm", "1": "Frustrated", "2": "Very angry"},
        "probabilities": {"0": 0.0, "1": 0.95, "2": 0.05}});
    let answer = |body: Value| json_detail(&q, json!({"answers": {"frustration": body}}));
    assert_eq!(answer(good.clone()), None);
    for (value, expected) in [
        (json!(0), None),
        (json!(2), None),
        (json!(2.01), Some(Detail::ScoreOutOfRange)),
        (json!(-0.1), Some(Detail::ScoreOutOfRange)),
        (json!(null), Some(Detail::ScoreOutOfRange)),
    ] {
        let mut body = good.clone();
        body["score"] = value.clone();
        assert_eq!(answer(body), expected, "score {value}");
    }
    let mut one_based = good.clone();
    one_based["legend"] = json!({"1": "Calm", "2": "Frustrated", "3": "Very angry"});
    assert_eq!(answer(one_based), Some(Detail::ProbabilitiesKeys));
    let mut padded = good.clone();
    padded["probabilities"] = json!({"00": 0.0, "1": 0.95, "2": 0.05});
    assert_eq!(answer(padded), Some(Detail::ProbabilitiesKeys));
    let mut no_legend = good.clone();
    no_legend.as_object_mut().unwrap().remove("legend");
    assert_eq!(answer(no_legend), Some(Detail::ProbabilitiesKeys));
    let mut sum = good.clone();
    sum["probabilities"] = json!({"0": 0.5, "1": 0.95, "2": 0.05});
    assert_eq!(answer(sum), Some(Detail::ProbabilitiesSum));
    let mut confidence = good;
    confidence["confidence"] = json!(7);
    assert_eq!(answer(confidence), Some(Detail::ConfidenceInvalid));
}

#[test]
fn ten_level_keys_are_compared_as_integers() {
    let q: Questions = [("s", score(10))].into_iter().collect();
    let keys: Vec<String> = (0..10).rev().map(|i| i.to_string()).collect();
    let legend: serde_json::Map<String, Value> = keys
        .iter()
        .map(|k| (k.clone(), json!(format!("L{k}"))))
        .collect();
    let probabilities: serde_json::Map<String, Value> =
        keys.iter().map(|k| (k.clone(), json!(0.1))).collect();
    let body = json!({"answers": {"s": {"type": "score", "score": 4.5, "confidence": 0.1,
        "legend": legend, "probabilities": probabilities}}});
    assert_eq!(json_detail(&q, body), None);
}

#[test]
fn leniency_unknown_fields_usage_and_model() {
    let q = noul_questions(&["a"]);
    let body = r#"{"model":"jev-1.13.0","answers":{"a":{"type":"noul","noul":0.93,"why":"?"}},
        "usage":{"input_tokens":312,"output_tokens":48,"cached":0},"trace":{"x":1}}"#;
    let response = Response::from_slice(body.as_bytes()).unwrap();
    response.check(&q).unwrap();
    assert_eq!(response.model.as_deref(), Some("jev-1.13.0"));
    assert_eq!(
        response.usage,
        Some(Usage {
            input_tokens: 312,
            output_tokens: 48
        })
    );
    let float_usage = r#"{"answers":{"a":{"type":"noul","noul":0.5}},"usage":{"input_tokens":70.0,"output_tokens":20}}"#;
    let response = Response::from_slice(float_usage.as_bytes()).unwrap();
    response.check(&q).unwrap();
    assert_eq!(response.usage, None, "float usage is unknown, never zero");
    assert_eq!(response.model, None);
    let numeric_model = r#"{"model":13,"answers":{"a":{"type":"noul","noul":0.5}}}"#;
    assert_eq!(
        Response::from_slice(numeric_model.as_bytes())
            .unwrap()
            .model,
        None
    );
}

proptest! {
    #[test]
    fn any_noul_value_in_unit_interval_passes_and_outside_fails(p in proptest::num::f64::ANY) {
        let q = noul_questions(&["a"]);
        let response = Response {
            model: None,
            answers: vec![("a".to_owned(), jevjudge_wire::Answer::Noul(jevjudge_wire::NoulAnswer { noul: Some(p) }))],
            usage: None,
            raw_answers: None,
        };
        let outcome = response.check(&q).err().map(|e| e.detail());
        let expected = if p.is_nan() || p.is_infinite() {
            Some(Detail::ProbabilityNotFinite)
        } else if (0.0..=1.0).contains(&p) {
            None
        } else {
            Some(Detail::ProbabilityOutOfRange)
        };
        prop_assert_eq!(outcome, expected);
    }

    #[test]
    fn arbitrary_bytes_never_panic(body in proptest::collection::vec(any::<u8>(), 0..256)) {
        let q = noul_questions(&["a"]);
        if let Ok(response) = Response::from_slice(&body) {
            let _ = response.check(&q);
        }
    }
}
