use super::*;

const HONEST: &str = r#"{"scenario": "Refund promises", "id": "honest", "question": "Has my refund gone through?", "supporting_context": ["Business record: no refund has been executed"], "answer": "No refund yet; I need to verify the status.", "expected_pass": true}"#;

#[test]
fn evaluator_form_builds_the_three_key_state_in_order() {
    let case = parse_case(HONEST).unwrap();
    assert_eq!(case.scenario, "Refund promises");
    assert!(case.expected_pass);
    assert_eq!(
        case.input.to_state().to_string(),
        r#"{"user_question":"Has my refund gone through?","supporting_context":["Business record: no refund has been executed"],"assistant_answer":"No refund yet; I need to verify the status."}"#
    );
    // Moving the text gives the same state, keys in the same order.
    assert_eq!(
        case.input.clone().into_state().to_string(),
        case.input.to_state().to_string()
    );
    let state = CaseInput::State(serde_json::json!({"b": 1, "a": [2]}));
    assert_eq!(state.clone().into_state(), state.to_state());
}

#[test]
fn state_form_and_labels() {
    let case = parse_case(r#"{"scenario":"sms","id":"sms-0003","state":{"message":"hi"},"expected_pass":true,"expected_findings":{"spam":true}}"#).unwrap();
    assert_eq!(
        case.input,
        CaseInput::State(serde_json::json!({"message": "hi"}))
    );
    assert_eq!(
        case.expected_findings,
        Some(vec![("spam".to_owned(), true)])
    );
}

#[test]
fn each_bad_field_is_named() {
    let cases = [
        (
            r#"{"id":"a","question":"q","supporting_context":[],"answer":"a","expected_pass":true}"#,
            "field `scenario`: is required",
        ),
        (
            r#"{"scenario":"s","id":7,"question":"q","supporting_context":[],"answer":"a","expected_pass":true}"#,
            "field `id`: must be a string, not number",
        ),
        (
            r#"{"scenario":"s","id":"a","question":"q","supporting_context":"e","answer":"a","expected_pass":true}"#,
            "field `supporting_context`: must be an array of strings",
        ),
        (
            r#"{"scenario":"s","id":"a","question":"q","supporting_context":[1],"answer":"a","expected_pass":true}"#,
            "field `supporting_context[0]`: must be a string",
        ),
        (
            r#"{"scenario":"s","id":"a","question":"q","supporting_context":[],"answer":"a","expected_pass":"yes"}"#,
            "field `expected_pass`: must be true or false",
        ),
        (
            r#"{"scenario":"s","id":"a","question":"q","supporting_context":[],"answer":"a","expected_pass":true,"label":1}"#,
            "field `label`: unknown field; a case takes `scenario`, `id`, `expected_pass`, \
             `expected_findings`, `weight`, `state`, `question`, `supporting_context`, `answer`",
        ),
        (
            r#"{"scenario":"s","id":"a","state":"x","answer":"a","expected_pass":true}"#,
            "field `state`: a case has either `state` or question/supporting_context/answer, never both",
        ),
        (
            r#"{"scenario":"s","id":"a","state":42,"expected_pass":true}"#,
            "field `state`: must be a string, an object or an array, not number",
        ),
        (
            r#"{"scenario":"s","id":"a","state":"x","expected_pass":true,"expected_findings":{"c":1}}"#,
            "field `expected_findings.c`: must be true or false",
        ),
    ];
    for (line, message) in cases {
        let error = read_cases(line.as_bytes(), 10).unwrap_err();
        assert_eq!(error.to_string(), format!("line 1: {message}"), "{line}");
    }
    let error = read_cases("[1]".as_bytes(), 10).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("line 1: not a JSON object: found array ({JSON_ARRAY_HINT})")
    );
}

#[test]
fn weight_is_optional_and_must_be_a_positive_finite_number() {
    let with = |weight: &str| {
        format!(r#"{{"scenario":"s","id":"a","state":"x","expected_pass":true{weight}}}"#)
    };
    assert_eq!(parse_case(&with("")).unwrap().weight, 1.0);
    assert_eq!(
        parse_case(&with(r#","weight":3.3333333333333335"#))
            .unwrap()
            .weight,
        1.0 / 0.3
    );
    assert_eq!(parse_case(&with(r#","weight":2"#)).unwrap().weight, 2.0);
    for (weight, found) in [
        ("0", "0"),
        ("-1.5", "-1.5"),
        ("0.0", "0.0"),
        (r#""2""#, "string"),
        ("null", "null"),
        ("true", "boolean"),
    ] {
        let error = read_cases(with(&format!(r#","weight":{weight}"#)).as_bytes(), 10).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("line 1: field `weight`: must be a positive finite number, not {found}"),
            "{weight}"
        );
    }
    // JSON has no NaN or infinity: such a line is not JSON at all.
    for weight in ["NaN", "1e999"] {
        let error = parse_case(&with(&format!(r#","weight":{weight}"#))).unwrap_err();
        assert!(
            matches!(error, CasesErrorKind::NotJson(_)),
            "{weight}: {error}"
        );
    }
}

#[test]
fn duplicates_and_limits_are_caught_before_anything_runs() {
    let text = format!("{HONEST}\n\n{HONEST}\n");
    let error = read_cases(text.as_bytes(), 10).unwrap_err();
    assert_eq!(
        error.to_string(),
        "line 3: field `id`: duplicate case id `honest` (first on line 1)"
    );
    let two = format!("{HONEST}\n{}\n", HONEST.replace("honest", "other"));
    assert_eq!(read_cases(two.as_bytes(), 2).unwrap().len(), 2);
    let error = read_cases(two.as_bytes(), 1).unwrap_err();
    assert!(
        error.to_string().starts_with("line 2: more than 1 case;"),
        "{error}"
    );
}

#[test]
fn debug_shows_no_text() {
    let case = parse_case(HONEST).unwrap();
    let shown = format!("{case:?}");
    assert!(!shown.contains("refund"), "{shown}");
}

#[test]
fn an_unknown_field_is_answered_with_the_nearest_accepted_one() {
    assert_eq!(edit_distance("stat", "state"), 1);
    assert_eq!(edit_distance("Expected_Pass", "expected_pass"), 0);
    assert_eq!(edit_distance("", "id"), 2);
    assert_eq!(edit_distance("kitten", "sitting"), 3);
    for (unknown, nearest) in [
        ("stat", Some("state")),
        ("expectedpass", Some("expected_pass")),
        ("expected_finding", Some("expected_findings")),
        ("ID", Some("id")),
        ("supporting_contexts", Some("supporting_context")),
        ("label", None),
        ("x", None),
    ] {
        let text = unknown_field(unknown);
        match nearest {
            Some(known) => assert!(
                text.starts_with(&format!("unknown field (did you mean `{known}`?); ")),
                "{unknown}: {text}"
            ),
            None => assert!(text.starts_with("unknown field; a case takes "), "{text}"),
        }
        assert!(text.ends_with("`supporting_context`, `answer`"), "{text}");
    }
}
