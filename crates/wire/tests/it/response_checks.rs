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

/// What a 200 body reads as when it is first parsed whole into a `Value`.
fn read_as_value(body: &[u8]) -> Result<Response, jevjudge_wire::AnswerError> {
    serde_json::from_slice::<Value>(body)
        .map_err(|_| jevjudge_wire::AnswerError::BodyUnreadable)
        .and_then(|value| Response::from_json(&value))
}

/// What a 200 body reads as, directly and parsed whole into a `Value` (raw answers are equal
/// when they hold the same answers).
fn both_readings(body: &[u8]) -> [Result<Response, jevjudge_wire::AnswerError>; 2] {
    [Response::from_slice(body), read_as_value(body)]
}

fn answer_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        (0.0..=1.0_f64).prop_map(|p| json!({"type": "noul", "noul": p})),
        Just(json!({"type": "choice", "choice": "a", "probabilities": {"a": 0.7, "b": 0.3}})),
        Just(json!({"type": "score", "score": 2, "confidence": 0.9})),
        Just(json!({"type": "noul"})),
        Just(json!("not an answer")),
    ]
}

fn field_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (0.0..1e6_f64).prop_map(Value::from),
        "[a-z ]{0,5}".prop_map(Value::String),
        proptest::collection::btree_map("[a-c]{1,2}", answer_value(), 0..3)
            .prop_map(|answers| Value::Object(answers.into_iter().collect())),
        Just(json!({"input_tokens": 12, "output_tokens": 20})),
    ];
    leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            proptest::collection::btree_map("[a-z]{1,3}", inner, 0..3)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

/// An `answers` object's text whose ids, and the fields of whose answers, may repeat or be
/// escaped.
fn answers_text() -> impl Strategy<Value = String> {
    let id = prop_oneof![Just(r#""a""#), Just(r#""\u0061""#), Just(r#""b""#)];
    let field = prop_oneof![
        Just(r#""type":"noul""#),
        Just(r#""typ\u0065":"choice""#),
        Just(r#""noul":0.25"#),
        Just(r#""noul":"high""#),
        Just(r#""choice":"a""#),
        Just(r#""confidence":null"#),
        Just(r#""confidence":[1]"#),
        Just(r#""probabilities":{"a":0.5,"b":0.5,"a":"x"}"#),
        Just(r#""score":1"#),
        Just(r#""legend":{"0":"low","1":{"text":"high"}}"#),
        Just(r#""other":{"noul":1}"#),
    ];
    let answer = prop_oneof![
        4 => proptest::collection::vec(field, 0..5)
            .prop_map(|fields| format!("{{{}}}", fields.join(","))),
        1 => Just("[0.5]".to_owned()),
        1 => Just("null".to_owned()),
    ];
    proptest::collection::vec((id, answer), 0..4).prop_map(|answers| {
        let answers: Vec<String> = answers
            .iter()
            .map(|(id, answer)| format!("{id} : {answer}"))
            .collect();
        format!("{{ {} }}", answers.join(" ,"))
    })
}

/// A body's text: an object whose keys may repeat, be escaped or be unknown, or another
/// JSON value, possibly cut short.
fn body_text() -> impl Strategy<Value = Vec<u8>> {
    let key = prop_oneof![
        Just(r#""model""#),
        Just(r#""answers""#),
        Just(r#""usage""#),
        Just(r#""mod\u0065l""#),
        Just(r#""answ\u0065rs""#),
        Just(r#""other""#),
    ];
    let value = prop_oneof![
        3 => field_value().prop_map(|value| value.to_string()),
        1 => answers_text(),
    ];
    let object = proptest::collection::vec((key, value), 0..6).prop_map(|fields| {
        let fields: Vec<String> = fields
            .iter()
            .map(|(key, value)| format!("{key}:{value}"))
            .collect();
        format!("{{{}}}", fields.join(","))
    });
    let text = prop_oneof![
        4 => object,
        1 => field_value().prop_map(|value| value.to_string()),
    ];
    (text, any::<prop::sample::Index>(), any::<bool>()).prop_map(|(text, cut, whole)| {
        let mut bytes = text.into_bytes();
        if !whole {
            bytes.truncate(cut.index(bytes.len() + 1));
        }
        bytes
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn a_body_reads_as_it_would_parsed_whole(body in body_text()) {
        let [direct, whole] = both_readings(&body);
        prop_assert_eq!(direct, whole);
    }

    #[test]
    fn any_bytes_read_as_they_would_parsed_whole(body in proptest::collection::vec(any::<u8>(), 0..64)) {
        let [direct, whole] = both_readings(&body);
        prop_assert_eq!(direct, whole);
    }
}

#[test]
fn a_body_nested_past_the_parser_limit_in_an_unknown_field_is_unreadable_as_before() {
    let deep = format!(
        r#"{{"answers":{{}},"extra":{}1{}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    assert_eq!(
        Response::from_slice(deep.as_bytes()),
        Err(jevjudge_wire::AnswerError::BodyUnreadable)
    );
    let [direct, whole] = both_readings(deep.as_bytes());
    assert_eq!(direct, whole);
    let duplicate = br#"{"answers":{"a":{"type":"noul","noul":0.1}},"answers":{"b":{"type":"noul","noul":0.9}},"model":1,"model":"jev-2"}"#;
    let read = Response::from_slice(duplicate).unwrap();
    assert_eq!(read.model.as_deref(), Some("jev-2"));
    assert!(read.answer("a").is_none() && read.answer("b").is_some());
    assert_eq!(
        read.raw_answers
            .as_ref()
            .map(jevjudge_wire::RawAnswers::to_map),
        json!({"b": {"type": "noul", "noul": 0.9}})
            .as_object()
            .cloned()
    );
    let [direct, whole] = both_readings(duplicate);
    assert_eq!(direct, whole);
}

#[test]
fn answers_nested_to_the_parser_limit_read_as_they_would_parsed_whole() {
    // The body is one level, the answers object a second and the answer a third: with 124
    // arrays more the body is 127 levels deep, the most serde_json reads; with 125 it is refused.
    for arrays in [123, 124, 125, 126] {
        let body = format!(
            r#"{{"answers":{{"a":{{"type":"noul","noul":0.5,"extra":{}1{}}}}}}}"#,
            "[".repeat(arrays),
            "]".repeat(arrays)
        );
        let [direct, whole] = both_readings(body.as_bytes());
        assert_eq!(direct, whole, "{arrays} arrays");
        assert_eq!(direct.is_ok(), arrays <= 124, "{arrays} arrays");
    }
}

#[test]
fn an_answer_id_named_twice_keeps_its_first_place_and_its_last_answer() {
    // Past 16 answers a repeated id is found through an index rather than a scan; both ways
    // keep the object's order.
    for count in [3, 40] {
        let mut fields: Vec<String> = (0..count)
            .map(|i| format!(r#""q{i}":{{"type":"noul","noul":0.{i}}}"#))
            .collect();
        fields.push(r#""q1":{"type":"noul","noul":0.99}"#.to_owned());
        fields.push(r#""q0":"not an answer""#.to_owned());
        let body = format!(r#"{{"answers":{{{}}}}}"#, fields.join(","));
        let read = Response::from_slice(body.as_bytes()).unwrap();
        assert_eq!(read.answers.len(), count);
        assert_eq!(read.answers[0].0, "q0");
        assert_eq!(read.answers[0].1, jevjudge_wire::Answer::Other);
        assert_eq!(read.answers[1].1.as_noul(), Some(0.99));
        let [direct, whole] = both_readings(body.as_bytes());
        assert_eq!(direct, whole);
    }
}
