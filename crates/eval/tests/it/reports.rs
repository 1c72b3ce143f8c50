//! Reports: JSON round trip, JUnit XML parsed back, Markdown, rows files, and privacy.

use std::time::Duration;

use jevjudge_eval::{
    Case, CaseInput, EvaluatorRequest, JevEvaluator, Report, Runner,
    junit::to_junit,
    markdown::to_markdown,
    rows_file::{RowsHeader, RowsWriter, read_rows},
};
use jevjudge_judge::{BackendError, BackendKind, Criterion, Definition, Judge, backend_fn};
use jevjudge_wire::{Answer, NoulAnswer, NoulQuestion, Request, Response, Usage};
use quick_xml::{Reader, events::Event};

const SENTINELS: [&str; 3] = ["RAW-Q-7f3a", "RAW-EVIDENCE-91c2", "RAW-ANSWER-c0de"];

fn definition() -> Definition {
    definition_failing_at(0.2)
}

/// The test definition with `fail_at_or_below = fail`.
fn definition_failing_at(fail: f64) -> Definition {
    Definition::new(
        "refund-answer-v1",
        vec![
            Criterion::new(
                "supported",
                NoulQuestion::new("Is RAW-CRITERION-QUESTION supported?"),
                true,
                fail,
                0.8,
            )
            .unwrap(),
        ],
    )
    .unwrap()
}

fn cases() -> Vec<Case> {
    // answer text decides: pass, fail, abstain, error; ids and scenarios are labels (allowed).
    [
        ("p", "alpha", 0.95, true),
        ("f", "alpha", 0.05, true),
        ("u", "beta", 0.5, false),
        ("e", "beta", -1.0, true),
    ]
    .iter()
    .map(|(id, scenario, p, expected)| Case {
        scenario: (*scenario).into(),
        id: (*id).into(),
        input: CaseInput::Evaluator(EvaluatorRequest {
            question: format!("{} {p}", SENTINELS[0]),
            supporting_context: vec![SENTINELS[1].into()],
            answer: format!("{} {p}", SENTINELS[2]),
        }),
        expected_pass: *expected,
        expected_findings: Some(vec![("supported".into(), *expected)]),
        weight: 1.0,
    })
    .collect()
}

async fn report() -> Report {
    let backend = backend_fn(|request: Request| async move {
        let answer = request.state["assistant_answer"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let p: f64 = answer.rsplit(' ').next().unwrap().parse().unwrap();
        if p < 0.0 {
            return Err(BackendError::from_error(std::io::Error::other(format!(
                "boom {answer}"
            ))));
        }
        Ok(Response {
            model: Some("jev-1.13.0".into()),
            answers: vec![(
                "supported".into(),
                Answer::Noul(NoulAnswer { noul: Some(p) }),
            )],
            usage: Some(Usage {
                input_tokens: 300,
                output_tokens: 20,
            }),
            raw_answers: None,
        })
    });
    let evaluator = JevEvaluator::new(
        Judge::new(backend, Duration::from_secs(1)).unwrap(),
        definition(),
    );
    let run = Runner::new(2)
        .unwrap()
        .run(&evaluator, cases(), ())
        .await
        .unwrap();
    Report::new("refund-answer-v1", BackendKind::Replay, run)
}

#[tokio::test]
async fn report_json_round_trips_and_holds_no_raw_text() {
    let report = report().await;
    let json = serde_json::to_string_pretty(&report).unwrap();
    let back = Report::from_json(&json).unwrap();
    assert_eq!(back, report);
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["format"], "jevjudge.report.v1");
    assert_eq!(value["backend"], "replay");
    let scenario_names: Vec<_> = value["scenarios"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(scenario_names, ["alpha", "beta"]);
    assert_eq!(
        value["rows"][0]["expected_findings"],
        serde_json::json!({"supported": true})
    );
    for rendering in [
        json,
        format!("{report:?}"),
        to_junit(&report),
        to_markdown(&report, &[]),
    ] {
        for sentinel in SENTINELS
            .iter()
            .chain(["RAW-CRITERION-QUESTION", "boom"].iter())
        {
            assert!(!rendering.contains(sentinel), "{sentinel} leaked");
        }
    }
    assert_eq!(report.models(), ["jev-1.13.0"]);
    assert!(Report::from_json(r#"{"format":"other"}"#).is_err());
}

#[tokio::test]
async fn junit_xml_parses_back_with_failures_errors_and_skips() {
    let report = report().await;
    let xml = to_junit(&report);
    let mut reader = Reader::from_str(&xml);
    let mut cases = Vec::new();
    let mut current: Option<(String, String)> = None;
    loop {
        match reader.read_event().expect("well-formed XML") {
            Event::Eof => break,
            Event::Start(e) | Event::Empty(e) if e.name().as_ref() == b"testcase" => {
                let attr = |name: &[u8]| {
                    e.attributes()
                        .flatten()
                        .find(|a| a.key.as_ref() == name)
                        .map(|a| String::from_utf8(a.value.to_vec()).unwrap())
                        .unwrap()
                };
                let key = (attr(b"classname"), attr(b"name"));
                cases.push((key.clone(), "success".to_owned()));
                current = Some(key);
            }
            Event::Start(e) | Event::Empty(e) => {
                let tag = String::from_utf8(e.name().as_ref().to_vec()).unwrap();
                if ["failure", "error", "skipped"].contains(&tag.as_str()) {
                    if let Some(key) = &current {
                        let last = cases.iter_mut().rev().find(|(k, _)| k == key).unwrap();
                        let message = e
                            .attributes()
                            .flatten()
                            .find(|a| a.key.as_ref() == b"message")
                            .map(|a| String::from_utf8(a.value.to_vec()).unwrap())
                            .unwrap_or_default();
                        last.1 = format!("{tag}:{message}");
                    }
                }
            }
            _ => {}
        }
    }
    let summary: Vec<_> = cases
        .iter()
        .map(|((class, name), outcome)| format!("{class}/{name}={outcome}"))
        .collect();
    assert_eq!(
        summary,
        [
            "alpha/p=success",
            "alpha/f=failure:expected PASS, verdict FAIL",
            "beta/u=skipped:abstained",
            "beta/e=error:BACKEND/backend_error",
        ]
    );
}

#[tokio::test]
async fn markdown_summary_has_a_row_per_scope() {
    let report = report().await;
    let md = to_markdown(&report, &["min accuracy 0.9: **failed** (0.2500)".into()]);
    assert!(md.starts_with("## jevjudge: `refund-answer-v1`"));
    assert!(
        md.contains("| **overall** | 4 | 1 | 1 | 1 | 1 | 0.2500 |"),
        "{md}"
    );
    assert!(
        md.contains("| alpha | 2 | 1 | 1 | 0 | 0 | 0.5000 |"),
        "{md}"
    );
    assert!(md.contains("- min accuracy 0.9: **failed** (0.2500)"));
}

#[tokio::test]
async fn rows_files_round_trip_and_refuse_other_runs() {
    let dir = std::env::temp_dir().join(format!("jevjudge-rows-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("run.rows.jsonl");
    let report = report().await;
    let header = RowsHeader::new(&definition(), &cases());
    let mut writer = RowsWriter::create(&path, &header).unwrap();
    for (i, row) in report.rows.iter().enumerate().take(3) {
        writer.write_row(i, row).unwrap();
    }
    drop(writer);
    // A crash mid-write leaves a torn last line: tolerated and ignored.
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(r#"{"index":3,"row":{"scen"#);
    std::fs::write(&path, &text).unwrap();
    let previous = read_rows(&path).unwrap();
    assert!(previous.torn_tail);
    assert_eq!(previous.rows.len(), 3);
    assert_eq!(previous.rows["f"].1, report.rows[1]);
    assert_eq!(previous.header.mismatch(&header), None);
    let mut other_cases = cases();
    other_cases[0].expected_pass = !other_cases[0].expected_pass;
    let changed = RowsHeader::new(&definition(), &other_cases);
    assert!(
        previous
            .header
            .mismatch(&changed)
            .unwrap()
            .contains("other cases")
    );
    let other_definition = definition_failing_at(0.3);
    let changed = RowsHeader::new(&other_definition, &cases());
    assert!(
        previous
            .header
            .mismatch(&changed)
            .unwrap()
            .contains("changed since")
    );
    // A torn line in the middle is an error naming the line.
    std::fs::write(
        &path,
        text.replace(r#"{"index":1"#, r#"{"index":1x"#) + "\n",
    )
    .unwrap();
    let error = read_rows(&path).unwrap_err().to_string();
    assert!(error.contains("run.rows.jsonl:3"), "{error}");
    let raw = std::fs::read_to_string(&path).unwrap();
    for sentinel in SENTINELS {
        assert!(!raw.contains(sentinel));
    }
    std::fs::remove_dir_all(&dir).ok();
}
