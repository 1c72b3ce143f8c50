//! `.jevl` records (systemone-wire.md §15, cli-and-formats.md §3).
//!
//! `tests/data/records.jevl` was written by jevkit-core 0.2.0's own `write_records`, and
//! `tests/data/record_digests.json` holds the ids jevkit computes for each of its lines
//! (`scripts/gen-canonical-vectors.py`).

use std::io::Cursor;
use std::path::{Path, PathBuf};

use jevjudge_wire::canonical::{request_digest, to_canonical_string};
use jevjudge_wire::record::{
    FORMAT_VERSION, Record, RecordErrorKind, ReplayIndex, now_rfc3339, parse_line, read_file,
    read_records,
};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn reference_records() -> Vec<Record> {
    read_file(&data("records.jevl")).expect("jevkit's file reads")
}

fn reference_digests() -> Vec<Value> {
    let text = std::fs::read_to_string(data("record_digests.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    doc["records"].as_array().unwrap().clone()
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => panic!("not an object"),
    }
}

fn questions_value(record: &Record) -> Value {
    Value::Object(record.request.questions.clone())
}

/// A valid line to break one field of at a time.
fn valid_line() -> Value {
    json!({
        "v": 1,
        "id": "sha256:00",
        "ts": "2026-09-19T19:40:00Z",
        "model": "jev-1-2026-09",
        "request": {"state": "s", "questions": {"q": {"type": "noul", "instructions": "?"}}},
        "answers": {"q": {"type": "noul", "noul": 0.5}},
    })
}

#[test]
fn reads_jevkit_written_file_and_computes_the_same_ids() {
    let records = reference_records();
    let expected = reference_digests();
    assert_eq!(records.len(), expected.len());
    assert_eq!(records.len(), 5);
    for (record, want) in records.iter().zip(&expected) {
        let line = &want["line"];
        let questions = questions_value(record);
        let state = &record.request.state;
        let record_id = request_digest(Some(&record.model), state, &questions).unwrap();
        assert_eq!(
            record_id,
            want["record_id"].as_str().unwrap(),
            "line {line}"
        );
        assert_eq!(record.id, record_id, "line {line}: stored id");
        assert_eq!(
            request_digest(None, state, &questions).unwrap(),
            want["request_id"].as_str().unwrap(),
            "line {line}: request id"
        );
        assert_eq!(
            record.requested_model(),
            want["requested_model"].as_str().unwrap()
        );
        assert_eq!(
            request_digest(Some(record.requested_model()), state, &questions).unwrap(),
            want["requested_digest"].as_str().unwrap(),
            "line {line}: requested-model digest"
        );
    }
}

#[test]
fn record_new_gives_jevkit_id_and_requested_model() {
    let reference = &reference_records()[0];
    let expected = reference_digests();
    let record = Record::new(
        "jev-1-2026-09",
        "jev-latest",
        reference.request.state.clone(),
        reference.request.questions.clone(),
        reference.answers.clone(),
        reference.usage.clone(),
        "2026-09-19T19:40:00Z".to_owned(),
    )
    .unwrap();
    assert_eq!(record.id, expected[0]["record_id"].as_str().unwrap());
    assert_eq!(record.v, FORMAT_VERSION);
    assert_eq!(record.model, "jev-1-2026-09");
    assert_eq!(record.requested_model(), "jev-latest");
    assert!(!record.is_fixture());
    // Same fields as jevkit wrote for this exchange.
    assert_eq!(&record, reference);
}

#[test]
fn write_then_read_gives_equal_records_and_keeps_unknown_keys() {
    let records = reference_records();
    let with_extra = &records[3];
    assert_eq!(with_extra.extra["x_flag"], json!(true));
    assert_eq!(
        with_extra.extra["x_source"],
        json!({"tool": "other", "version": 3})
    );

    let mut text = String::new();
    for record in &records {
        let line = record.to_line().unwrap();
        assert!(line.ends_with('\n'));
        assert_eq!(line.matches('\n').count(), 1, "one line per record");
        text.push_str(&line);
    }
    let back = read_records(Cursor::new(text.as_bytes())).unwrap();
    assert_eq!(back, records);
    assert!(text.contains(r#""x_source":{"tool":"other","version":3},"x_flag":true}"#));
}

#[test]
fn written_line_is_compact_in_jevkit_field_order() {
    let mut record = Record::new(
        "jev-1",
        "jev-latest",
        json!("line\nbreak and \u{2028}"),
        object(json!({"q": {"type": "noul"}})),
        object(json!({"q": {"noul": 0.25}})),
        Some(json!({"input_tokens": 3, "output_tokens": 1})),
        "2026-09-19T19:40:00Z".to_owned(),
    )
    .unwrap();
    record.tags = Some(vec!["a".to_owned()]);
    record.label = Some(json!({"q": true}));
    // An unknown key that shadows a known one is not written twice.
    record.extra.insert("v".to_owned(), json!(99));
    record.extra.insert("x".to_owned(), json!(null));
    let line = record.to_line().unwrap();
    let id = &record.id;
    assert_eq!(
        line,
        format!(
            "{{\"v\":1,\"id\":\"{id}\",\"ts\":\"2026-09-19T19:40:00Z\",\"model\":\"jev-1\",\
             \"request\":{{\"state\":\"line\\nbreak and \u{2028}\",\"questions\":{{\"q\":{{\"type\":\"noul\"}}}}}},\
             \"answers\":{{\"q\":{{\"noul\":0.25}}}},\"usage\":{{\"input_tokens\":3,\"output_tokens\":1}},\
             \"label\":{{\"q\":true}},\"tags\":[\"a\"],\"meta\":{{\"requested_model\":\"jev-latest\"}},\"x\":null}}\n"
        )
    );
}

#[test]
fn answers_and_numbers_survive_a_rewrite_exactly() {
    let answers = object(
        serde_json::from_str(
            r#"{"q": {"noul": 0.30000000000000004, "n": 1, "f": 1.0, "z": -0.0,
                      "big": 1e16, "tiny": 5e-324, "max": 18446744073709551615}}"#,
        )
        .unwrap(),
    );
    let state: Value = serde_json::from_str(r#"{"w": [1e-7, 100.0, 100]}"#).unwrap();
    let record = Record::new(
        "jev-1",
        "jev-1",
        state,
        object(json!({"q": {}})),
        answers,
        None,
        now_rfc3339(),
    )
    .unwrap();
    let back = parse_line(&record.to_line().unwrap()).unwrap();
    let canonical = |r: &Record| {
        (
            to_canonical_string(&Value::Object(r.answers.clone())).unwrap(),
            to_canonical_string(&r.request.state).unwrap(),
        )
    };
    assert_eq!(canonical(&back), canonical(&record));
    assert_eq!(
        canonical(&back).0,
        r#"{"q":{"big":1e+16,"f":1.0,"max":18446744073709551615,"n":1,"noul":0.30000000000000004,"tiny":5e-324,"z":-0.0}}"#
    );
    // The id is recomputable from what was read back.
    assert_eq!(
        request_digest(Some("jev-1"), &back.request.state, &questions_value(&back)).unwrap(),
        record.id
    );
}

#[test]
fn last_duplicate_wins() {
    let index = ReplayIndex::from_records(reference_records()).unwrap();
    let records = reference_records();
    let first = &records[0];
    let questions = questions_value(first);
    let got = index
        .get("jev-latest", &first.request.state, &questions)
        .unwrap();
    assert_eq!(got.ts, "2026-09-21T10:00:00Z");
    assert_eq!(got.answers, records[4].answers);
    // Line 1 is unreachable, so it is not counted.
    assert_eq!(index.len(), 4);
    assert!(!index.is_empty());
}

#[test]
fn alias_lookup_goes_through_meta_requested_model() {
    let records = reference_records();
    let index = ReplayIndex::from_records(records.clone()).unwrap();
    let refund = &records[4];
    let questions = questions_value(refund);
    let state = &refund.request.state;
    // Asked for the alias, and for the versioned id that answered.
    assert!(index.get("jev-latest", state, &questions).is_some());
    assert!(index.get("jev-1-2026-09", state, &questions).is_some());
    // A record without meta is found by its model only.
    let plain = &records[1];
    assert!(replays(&index, "jev-1-2026-09", plain));
    assert!(!replays(&index, "jev-latest", plain));
}

#[test]
fn a_record_made_for_jev_latest_is_not_replayed_for_jev_preview() {
    let records = reference_records();
    let index = ReplayIndex::from_records(records.clone()).unwrap();
    let refund = &records[4];
    assert!(!replays(&index, "jev-preview", refund));
    // Nor for no model at all: there is no fallback to the model-free digest.
    assert!(!replays(&index, "", refund));
}

#[test]
fn the_stored_id_is_never_trusted() {
    let mut records = reference_records();
    records[1].id = "sha256:not-the-real-id".to_owned();
    let target = records[1].clone();
    let index = ReplayIndex::from_records(records).unwrap();
    let found = index
        .get(
            "jev-1-2026-09",
            &target.request.state,
            &questions_value(&target),
        )
        .unwrap();
    assert_eq!(found.ts, target.ts);
}

#[test]
fn lookup_is_independent_of_key_order_in_the_request() {
    let records = reference_records();
    let index = ReplayIndex::from_records(records.clone()).unwrap();
    let record = &records[1];
    let mut reversed = Map::new();
    for (k, v) in record.request.questions.iter().rev() {
        reversed.insert(k.clone(), v.clone());
    }
    let mut state = Map::new();
    for (k, v) in record.request.state.as_object().unwrap().iter().rev() {
        state.insert(k.clone(), v.clone());
    }
    assert!(
        index
            .get(
                "jev-1-2026-09",
                &Value::Object(state),
                &Value::Object(reversed)
            )
            .is_some()
    );
}

#[test]
fn fixture_flags_tell_fixture_from_replay() {
    let records = reference_records();
    assert!(records[2].is_fixture());
    let mixed = ReplayIndex::from_records(records.clone()).unwrap();
    assert!(mixed.any_fixture());
    assert!(!mixed.all_fixture());

    let fixtures = ReplayIndex::from_records(vec![records[2].clone()]).unwrap();
    assert!(fixtures.all_fixture());

    let real = ReplayIndex::from_records(vec![records[0].clone()]).unwrap();
    assert!(!real.any_fixture());
    assert!(!real.all_fixture());

    let empty = ReplayIndex::from_records(Vec::new()).unwrap();
    assert!(empty.is_empty());
    assert!(!empty.all_fixture());
    assert!(!empty.any_fixture());
}

#[test]
fn requested_model_falls_back_to_model() {
    let mut record = reference_records().remove(0);
    assert_eq!(record.requested_model(), "jev-latest");
    record
        .meta
        .as_mut()
        .unwrap()
        .insert("requested_model".to_owned(), json!(7));
    assert_eq!(record.requested_model(), "jev-1-2026-09");
    record.meta = None;
    assert_eq!(record.requested_model(), "jev-1-2026-09");
}

#[test]
fn a_bad_line_errors_with_its_line_number() {
    let good = valid_line().to_string();
    let text = format!("{good}\n\n{{\"v\": 1, \"secret\": \"PRIVATE TEXT\"\n{good}\n");
    let err = read_records(Cursor::new(text.as_bytes())).unwrap_err();
    assert_eq!(err.line(), Some(3));
    assert!(matches!(err.kind(), RecordErrorKind::NotJson { .. }));
    assert!(
        err.to_string().starts_with("line 3: not valid JSON"),
        "{err}"
    );
    assert!(!err.to_string().contains("PRIVATE"));
    assert!(!format!("{err:?}").contains("PRIVATE"));
}

#[test]
fn file_errors_name_the_file_and_line() {
    let dir = std::env::temp_dir().join(format!("jevjudge-wire-records-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("records.jevl");
    let mut missing_ts = object(valid_line());
    missing_ts.remove("ts");
    let text = format!(
        "{}\n{}\n{}\n",
        valid_line(),
        valid_line(),
        Value::Object(missing_ts)
    );
    std::fs::write(&path, text).unwrap();
    let err = read_file(&path).unwrap_err();
    let shown = err.to_string();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(shown, format!("{}:3: missing field `ts`", path.display()));
    assert!(shown.contains("records.jevl:3: "));
    assert_eq!(err.path(), Some(path.as_path()));

    let err = read_file(&dir.join("absent.jevl")).unwrap_err();
    assert_eq!(err.line(), None);
    assert!(matches!(err.kind(), RecordErrorKind::Io(_)));
    assert!(
        err.to_string().contains("absent.jevl: cannot read: "),
        "{err}"
    );
}

#[test]
fn a_newer_version_is_refused() {
    // Even without the other fields: a newer format may not have them.
    let err = parse_line(r#"{"v": 2}"#).unwrap_err();
    assert!(matches!(err, RecordErrorKind::NewerVersion { found: 2 }));
    assert_eq!(
        err.to_string(),
        "record format v2 was written by a newer version (this reader knows v1)"
    );
    let mut line = valid_line();
    line["v"] = json!(2);
    let err = read_records(Cursor::new(format!("{}\n{line}\n", valid_line()))).unwrap_err();
    assert_eq!(err.line(), Some(2));
    assert!(err.to_string().contains("newer version"));
    // Deserialising runs the same checks.
    assert!(serde_json::from_value::<Record>(line).is_err());

    let mut record = parse_line(&valid_line().to_string()).unwrap();
    record.v = 2;
    assert!(matches!(
        record.to_line(),
        Err(RecordErrorKind::NewerVersion { found: 2 })
    ));
}

#[test]
fn every_missing_or_mistyped_field_is_named() {
    let cases: Vec<(&str, Option<Value>, &str)> = vec![
        ("v", None, "missing field `v`"),
        (
            "v",
            Some(json!("1")),
            "field `v` must be a non-negative integer",
        ),
        (
            "v",
            Some(json!(1.0)),
            "field `v` must be a non-negative integer",
        ),
        (
            "v",
            Some(json!(-1)),
            "field `v` must be a non-negative integer",
        ),
        (
            "v",
            Some(json!(0)),
            "record format v0 is not a known version",
        ),
        ("id", None, "missing field `id`"),
        ("id", Some(json!(5)), "field `id` must be a string"),
        ("ts", None, "missing field `ts`"),
        ("ts", Some(json!(null)), "field `ts` must be a string"),
        ("model", None, "missing field `model`"),
        (
            "model",
            Some(json!(["jev"])),
            "field `model` must be a string",
        ),
        ("request", None, "missing field `request`"),
        (
            "request",
            Some(json!("text")),
            "field `request` must be an object",
        ),
        (
            "request",
            Some(json!({"questions": {}})),
            "missing field `request.state`",
        ),
        (
            "request",
            Some(json!({"state": 1})),
            "missing field `request.questions`",
        ),
        (
            "request",
            Some(json!({"state": 1, "questions": []})),
            "field `request.questions` must be an object",
        ),
        ("answers", None, "missing field `answers`"),
        (
            "answers",
            Some(json!([])),
            "field `answers` must be an object",
        ),
        (
            "tags",
            Some(json!("golden")),
            "field `tags` must be a list of strings",
        ),
        (
            "tags",
            Some(json!(["a", 1])),
            "field `tags` must be a list of strings",
        ),
        ("meta", Some(json!([])), "field `meta` must be an object"),
    ];
    for (field, value, message) in cases {
        let mut line = object(valid_line());
        match value {
            Some(value) => line.insert(field.to_owned(), value),
            None => line.remove(field),
        };
        let err = parse_line(&Value::Object(line).to_string()).unwrap_err();
        assert_eq!(err.to_string(), message, "{field}");
    }
    assert_eq!(
        parse_line("[1, 2]").unwrap_err().to_string(),
        "not a JSON object"
    );
    assert!(matches!(
        parse_line("").unwrap_err(),
        RecordErrorKind::NotJson { .. }
    ));
}

#[test]
fn optional_fields_read_null_as_absent() {
    let mut line = object(valid_line());
    for key in ["usage", "label", "tags", "meta"] {
        line.insert(key.to_owned(), Value::Null);
    }
    let record = parse_line(&Value::Object(line).to_string()).unwrap();
    assert_eq!(record.usage, None);
    assert_eq!(record.label, None);
    assert_eq!(record.tags, None);
    assert_eq!(record.meta, None);
    assert!(record.extra.is_empty());
}

#[test]
fn blank_lines_crlf_and_a_missing_final_newline_are_fine() {
    let good = valid_line().to_string();
    let text = format!("\n  \t\n{good}\r\n\r\n{good}");
    let records = read_records(Cursor::new(text)).unwrap();
    assert_eq!(records.len(), 2);
    assert!(read_records(Cursor::new("")).unwrap().is_empty());
}

#[test]
fn invalid_utf8_is_an_error_at_its_line() {
    let mut bytes = valid_line().to_string().into_bytes();
    bytes.extend_from_slice(b"\n{\"v\": 1, \"id\": \"\xff\"}\n");
    let err = read_records(Cursor::new(bytes)).unwrap_err();
    assert_eq!(err.line(), Some(2));
    assert_eq!(err.to_string(), "line 2: not valid UTF-8");
}

#[test]
fn error_messages_never_quote_the_line() {
    let lines = [
        r#"{"v": "PRIVATE"}"#,
        r#"{"v": 1, "id": "x", "ts": "t", "model": "m", "request": "PRIVATE", "answers": {}}"#,
        r#"{"v": 1, "id": "x", "ts": "t", "model": "m", "request": {"state": "PRIVATE", "questions": "PRIVATE"}, "answers": {}}"#,
        r#"{"v": 1, "id": "PRIVATE" "ts"}"#,
        r#""PRIVATE""#,
    ];
    for line in lines {
        let err = parse_line(line).unwrap_err();
        assert!(!err.to_string().contains("PRIVATE"), "{err}");
        assert!(!format!("{err:?}").contains("PRIVATE"), "{err:?}");
    }
}

#[test]
fn replay_index_debug_shows_no_text() {
    let index = ReplayIndex::from_records(reference_records()).unwrap();
    let shown = format!("{index:?}");
    assert!(!shown.contains("Ticket"), "{shown}");
    assert!(shown.starts_with("ReplayIndex"));
}

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter_map("finite", serde_json::Number::from_f64)
            .prop_map(Value::Number),
        "\\PC{0,6}".prop_map(Value::String),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("\\PC{0,4}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn any_record_round_trips_through_a_line(
        state in json_value(),
        questions in prop::collection::btree_map("\\PC{0,4}", json_value(), 0..4),
        answers in prop::collection::btree_map("\\PC{0,4}", json_value(), 0..4),
        extra in prop::collection::btree_map("x_\\PC{0,4}", json_value(), 0..3),
    ) {
        let mut record = Record::new(
            "jev-1", "jev-latest", state,
            questions.into_iter().collect(), answers.into_iter().collect(),
            None, now_rfc3339(),
        ).unwrap();
        record.extra = extra.into_iter().collect();
        let line = record.to_line().unwrap();
        prop_assert_eq!(line.matches('\n').count(), 1);
        let back = parse_line(&line).unwrap();
        prop_assert_eq!(&back, &record);
        let index = ReplayIndex::from_records(vec![back]).unwrap();
        let questions = Value::Object(record.request.questions.clone());
        prop_assert!(index.get("jev-latest", &record.request.state, &questions).is_some());
    }

    #[test]
    fn parse_line_never_panics(line in "\\PC{0,64}") {
        let _ = parse_line(&line);
    }

    #[test]
    fn parse_line_never_panics_on_json(value in json_value()) {
        let _ = parse_line(&value.to_string());
    }
}

/// Whether `index` answers `record`'s request when asked for `model`.
fn replays(index: &ReplayIndex, model: &str, record: &Record) -> bool {
    index
        .get(model, &record.request.state, &questions_value(record))
        .is_some()
}
