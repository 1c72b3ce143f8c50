//! Issue 14: `--repeat N` in the runner, the repeat-replay rule under concurrency, and the
//! repeat, risk and interval figures of the summaries.

use std::{
    sync::atomic::{AtomicU64, Ordering},
    time::Duration,
};

use jevjudge_eval::{Case, CaseInput, JevEvaluator, Row, Runner, RunnerError, junit, markdown};
use jevjudge_judge::{
    Backend, BackendFuture, Criterion, Definition, Judge, ReplayBackend, Status, repeat,
};
use jevjudge_wire::{NoulQuestion, Request, record::Record};
use serde_json::{Map, Value, json};
use tokio::time::Instant;

fn definition() -> Definition {
    Definition::new(
        "spam-v1",
        vec![
            Criterion::new(
                "spam",
                NoulQuestion::new("Is the message spam?"),
                true,
                0.2,
                0.8,
            )
            .unwrap(),
        ],
    )
    .unwrap()
}

fn case(id: &str, expected_pass: bool) -> Case {
    Case {
        scenario: if id < "c" { "early" } else { "late" }.into(),
        id: id.into(),
        input: CaseInput::State(json!({ "message": format!("text of {id}") })),
        expected_pass,
        expected_findings: None,
        weight: 1.0,
    }
}

fn record(case: &Case, definition: &Definition, p: f64) -> Record {
    let questions = match definition.questions().to_json() {
        Value::Object(map) => map,
        _ => unreachable!("questions are an object"),
    };
    let mut answers = Map::new();
    answers.insert("spam".into(), json!({"type": "noul", "noul": p}));
    Record::new(
        "jev-1.13.0",
        "jev-1.13.0",
        case.input.to_state(),
        questions,
        answers,
        None,
        "2026-09-19T00:00:00Z".into(),
    )
    .unwrap()
}

/// Delays every answer by a different amount, so reviews finish out of order; the inner
/// backend is called (and reads the repeat index) before the delay.
struct Jitter<B> {
    inner: B,
    calls: AtomicU64,
}

impl<B: Backend> Backend for Jitter<B> {
    fn answer<'a>(&'a self, request: &'a Request, deadline: Instant) -> BackendFuture<'a> {
        let call = self.calls.fetch_add(1, Ordering::Relaxed);
        let delay = Duration::from_millis(call.wrapping_mul(7_919) % 13);
        let answer = self.inner.answer(request, deadline);
        Box::pin(async move {
            tokio::time::sleep(delay).await;
            answer.await
        })
    }
}

/// The records of each case, in file order (cases interleaved, as a recording of repeated
/// runs would hold them).
fn recorded() -> Vec<(Case, Vec<f64>)> {
    vec![
        (case("a", true), vec![0.9, 0.5, 0.1]), // PASS, INCONCLUSIVE, FAIL
        (case("b", false), vec![0.95, 0.05]),   // 3 repeats: 0.95, 0.05, 0.95 (cycling)
        (case("c", true), vec![0.99]),          // one record: the same answer every repeat
        (case("d", false), vec![0.1, 0.15, 0.05]), // FAIL every time
    ]
}

fn replay_judge() -> Judge<Jitter<ReplayBackend>> {
    let definition = definition();
    let mut records = Vec::new();
    let cases = recorded();
    for k in 0..3 {
        for (case, ps) in &cases {
            if let Some(p) = ps.get(k) {
                records.push(record(case, &definition, *p));
            }
        }
    }
    let replay = ReplayBackend::new(records, "jev-1.13.0").unwrap();
    assert_eq!(replay.max_records_per_request(), 3);
    Judge::new(
        Jitter {
            inner: replay,
            calls: AtomicU64::new(0),
        },
        Duration::from_secs(2),
    )
    .unwrap()
}

fn probabilities(row: &Row) -> Vec<f64> {
    row.verdicts()
        .iter()
        .map(|v| v.findings.get("spam").unwrap().yes_probability)
        .collect()
}

/// The recorded cases, replayed three times each at `concurrency`.
async fn replay_three_times(concurrency: usize) -> jevjudge_eval::Run {
    let evaluator = JevEvaluator::new(replay_judge(), definition());
    let cases: Vec<Case> = recorded().into_iter().map(|(case, _)| case).collect();
    Runner::new(concurrency)
        .unwrap()
        .repeats(3)
        .unwrap()
        .run(&evaluator, cases, ())
        .await
        .unwrap()
}

// Issue 14 item 2: the k-th record of a request goes to the k-th repeat, cycling when there
// are fewer records than repeats, whatever the concurrency and the completion order.
#[tokio::test(start_paused = true)]
async fn repeat_k_replays_the_kth_record_under_any_concurrency() {
    for concurrency in [1, 2, 3, 8, 32] {
        let run = replay_three_times(concurrency).await;
        let seen: Vec<Vec<f64>> = run.rows.iter().map(probabilities).collect();
        assert_eq!(
            seen,
            vec![
                vec![0.9, 0.5, 0.1],
                vec![0.95, 0.05, 0.95],
                vec![0.99, 0.99, 0.99],
                vec![0.1, 0.15, 0.05],
            ],
            "concurrency {concurrency}"
        );
        let ids: Vec<&str> = run.rows.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["a", "b", "c", "d"]);
    }
}

// Issue 14 item 1: every review counts; the repeat figures by hand from the table above.
#[tokio::test(start_paused = true)]
async fn repeated_summaries_count_every_review_and_the_noise() {
    let run = replay_three_times(4).await;
    // a (expects PASS): PASS, INCONCLUSIVE, FAIL → correct, abstained, incorrect (false FAIL)
    // b (expects not PASS): PASS, FAIL, PASS → incorrect (false PASS), correct, incorrect
    // c (expects PASS): PASS ×3 → correct ×3
    // d (expects not PASS): FAIL ×3 → correct ×3
    let o = &run.overall;
    assert_eq!(
        (o.total, o.correct, o.incorrect, o.abstained, o.errors),
        (12, 8, 3, 1, 0)
    );
    assert_eq!(o.accuracy, 8.0 / 12.0);
    assert_eq!(o.repeated.repeats, 3);
    // Repeat 1: a, c, d correct; repeat 2: b, c, d; repeat 3: c, d.
    assert_eq!(o.repeated.accuracy_by_repeat, Some(vec![0.75, 0.75, 0.5]));
    assert_eq!(o.repeated.flipped, Some(2));
    assert_eq!(o.repeated.flip_rate, Some(0.5));
    // Sample SDs (Python statistics.stdev): a [0.9, 0.5, 0.1] → 0.4;
    // b [0.95, 0.05, 0.95] → 0.5196152422706632; c → 0; d [0.1, 0.15, 0.05] → 0.05.
    let sd = &o.repeated.probability_sd.as_ref().unwrap()[0];
    assert_eq!(sd.0, "spam");
    let expected = (0.4 + 0.519_615_242_270_663_2 + 0.0 + 0.05) / 4.0;
    assert!((sd.1 - expected).abs() < 1e-12, "{}", sd.1);
    // Risk over reviews: decided 11 of 12; false PASS 2 (b twice), false FAIL 1 (a once).
    assert_eq!(o.risk.decided, 11);
    assert_eq!(o.risk.coverage, Some(11.0 / 12.0));
    assert_eq!(o.risk.decided_accuracy, Some(8.0 / 11.0));
    assert_eq!((o.risk.false_pass, o.risk.false_fail), (2, 1));
    assert_eq!(o.risk.false_pass_rate, Some(2.0 / 11.0));
    // The interval treats the case as the unit: clusters (correct, reviews) per case.
    let clusters = [(1, 3), (1, 3), (3, 3), (3, 3)];
    let [low, high] = o.risk.accuracy_ci.unwrap();
    assert_eq!(
        Some((low, high)),
        jevjudge_stats::clustered_wilson(&clusters, jevjudge_eval::risk::Z95)
    );
    // Per scenario: early = a, b; late = c, d.
    assert_eq!(run.scenarios.len(), 2);
    assert_eq!(run.scenarios[0].1.repeated.flipped, Some(2));
    assert_eq!(run.scenarios[1].1.repeated.flipped, Some(0));
    // Rows keep every verdict and the pass rate.
    let b = &run.rows[1];
    let repeats = b.repeats.as_ref().unwrap();
    assert_eq!(repeats.verdicts.len(), 3);
    assert!((repeats.pass_rate - 2.0 / 3.0).abs() < 1e-15);
    assert_eq!(b.verdict, repeats.verdicts[0]);
    assert_eq!(
        b.verdicts().iter().map(|v| v.status).collect::<Vec<_>>(),
        [Status::Pass, Status::Fail, Status::Pass]
    );
}

// A repeated report renders: Markdown has the repeat table, JUnit one test per case with
// the worst repeat's outcome and every status in the message.
#[tokio::test(start_paused = true)]
async fn repeated_reports_render_for_ci() {
    let run = replay_three_times(4).await;
    let report = jevjudge_eval::Report::new("spam-v1", jevjudge_judge::BackendKind::Replay, run);
    let md = markdown::to_markdown(&report, &[]);
    assert!(
        md.contains("| scope | repeats | flipped cases | flip rate [95% CI] |"),
        "{md}"
    );
    // 2 of 4 cases flipped: Wilson [0.1500, 0.8500].
    assert!(
        md.contains("| **overall** | 3 | 2 | 0.5000 [0.1500, 0.8500] |"),
        "{md}"
    );
    let xml = junit::to_junit(&report);
    assert_eq!(xml.matches("<testcase").count(), 4, "{xml}");
    assert!(
        xml.contains("expected PASS, verdict PASS, INCONCLUSIVE, FAIL (pass rate 0.3333)"),
        "{xml}"
    );
    let options = jevjudge_eval::html::HtmlOptions {
        criteria: None,
        texts: None,
    };
    let html = jevjudge_eval::html::to_html(&report, &options);
    assert!(html.contains("<h2>Repeats</h2>"));
    assert!(html.contains("Cases whose verdict differs between repeats (2)"));
    // The JSON report round-trips.
    let text = serde_json::to_string(&report).unwrap();
    assert_eq!(jevjudge_eval::Report::from_json(&text).unwrap(), report);
}

#[test]
fn repeats_outside_one_to_ten_are_refused() {
    assert_eq!(
        Runner::new(1).unwrap().repeats(0).err(),
        Some(RunnerError::Repeats(0))
    );
    assert_eq!(
        Runner::new(1).unwrap().repeats(11).err(),
        Some(RunnerError::Repeats(11))
    );
    assert!(Runner::new(1).unwrap().repeats(10).is_ok());
}

// Outside a repeat scope the index is unset, so single runs replay as before.
#[tokio::test]
async fn a_single_run_sets_no_repeat_index() {
    assert_eq!(repeat::current(), None);
}
