//! Builders shared by the crate's unit tests.

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use jevjudge_judge::{
    BackendKind, Definition, ErrorCode, Findings, Judge, ReplayBackend, Status, Verdict,
};

use crate::{
    JevEvaluator, REPORT_FORMAT, Report, Row,
    session::{Session, SessionPlan},
    summarize,
};

/// A complete replay report of `rows` for definition `version`, with its summaries.
pub(crate) fn report(version: &str, rows: Vec<Row>) -> Report {
    let (overall, scenarios) = summarize(&rows, None);
    Report {
        format: REPORT_FORMAT.into(),
        definition_version: version.into(),
        backend: BackendKind::Replay,
        complete: true,
        wall_millis: None,
        stopped: None,
        overall,
        scenarios,
        rows,
    }
}

/// A verdict of definition `version` with `status` and `findings`: no error, model or usage,
/// no time taken. Tests that need more set it with `..verdict(…)`.
pub(crate) fn verdict(version: &str, status: Status, findings: Findings) -> Verdict {
    Verdict {
        definition_version: version.into(),
        status,
        error: ErrorCode::None,
        detail: None,
        findings,
        model: None,
        usage: None,
        elapsed: Duration::ZERO,
    }
}

/// Case `id` of `scenario`, expected to pass or not, reviewed once with `verdict` (`pass` is
/// whether it said PASS; score 0; no labelled findings).
pub(crate) fn row(scenario: &str, id: &str, expected_pass: bool, verdict: Verdict) -> Row {
    Row {
        repeats: None,
        scenario: scenario.into(),
        id: id.into(),
        expected_pass,
        pass: verdict.status == Status::Pass,
        score: 0.0,
        verdict,
        expected_findings: None,
        weight: 1.0,
    }
}

pub(crate) use jevjudge_test_support::keys;

/// A file of `examples/sms-spam/` (150 real answers of the hosted Jev, replayable offline).
pub(crate) fn sms_spam(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/sms-spam")
        .join(path)
}

/// The sms-spam replay under `definition` (a file of `examples/sms-spam/`), each case
/// reviewed `repeat` times, run through [`Session`] as `jevjudge eval --replay` runs it.
pub(crate) async fn sms_spam_replay(definition: &str, repeat: usize) -> Report {
    let definition = Definition::from_path(sms_spam(definition)).unwrap();
    let plan = SessionPlan {
        repeat,
        ..SessionPlan::new(sms_spam("cases.jsonl"), None)
    };
    let cases = plan.read_cases(&definition, None).unwrap();
    let backend = ReplayBackend::open(&sms_spam("recordings.jevl"), "jev-1.13.0").unwrap();
    let evaluator = JevEvaluator::new(
        Judge::new(backend, Duration::from_secs(2)).unwrap(),
        definition.clone(),
    );
    let runner = plan.runner(4).unwrap();
    let mut session = Session::open(&plan, &definition, cases, "replay", "jev-1.13.0").unwrap();
    let ran = session
        .run(&runner, &evaluator, (), std::future::pending())
        .await
        .unwrap();
    let outcome = session.finish(ran).unwrap();
    assert!(outcome.complete && outcome.cases == 150);
    let mut report = outcome.into_report(definition.version(), BackendKind::Replay);
    // Fixed times (100 µs + 37 µs × the row's index, a wall of 1.5 s): the only measured
    // figures.
    for (index, row) in report.rows.iter_mut().enumerate() {
        let elapsed = Duration::from_micros(100 + 37 * index as u64);
        row.verdict.elapsed = elapsed;
        if let Some(repeats) = row.repeats.as_mut() {
            for verdict in &mut repeats.verdicts {
                verdict.elapsed = elapsed;
            }
        }
    }
    (report.overall, report.scenarios) = summarize(&report.rows, None);
    report.wall_millis = Some(1500.0);
    report
}

/// Any JSON value (finite numbers, any text) nested up to `depth` containers, of about `size`
/// nodes, as a proptest strategy.
pub(crate) fn json_value(
    depth: u32,
    size: u32,
) -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
    use proptest::prelude::*;
    use serde_json::Value;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |x| x.is_finite())
            .prop_map(Value::from),
        any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(depth, size, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map(any::<String>(), inner, 0..4)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}
