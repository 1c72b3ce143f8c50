use super::{
    charts::{axis_ticks, count_ticks},
    format::{n4, tick_label},
    *,
};
use crate::Row;
use crate::summarize;
use crate::test_support;
use jevjudge_judge::Status;
use jevjudge_judge::{BackendKind, ErrorCode, Finding, Findings, Verdict};
use jevjudge_stats::Thresholds;
use std::time::Duration;

fn report(backend: BackendKind) -> Report {
    let rows: Vec<Row> = (0..30)
        .map(|i| {
            let p = i as f64 / 29.0;
            let status = if p >= 0.8 {
                Status::Pass
            } else if p <= 0.2 {
                Status::Fail
            } else {
                Status::Inconclusive
            };
            let findings = Findings::new(vec![(
                "risk".into(),
                Finding {
                    status,
                    yes_probability: 1.0 - p,
                    expected_probability: p,
                },
            )]);
            let verdict = Verdict {
                model: Some("m<1>".into()),
                elapsed: Duration::from_micros(100 + i as u64 * 37),
                ..test_support::verdict("v\"1", status, findings)
            };
            let scenario = if i % 2 == 0 { "<even & odd>" } else { "odd" };
            let id = format!("case-{i}<script>");
            test_support::row(scenario, &id, i % 3 != 0, verdict)
        })
        .collect();
    Report {
        backend,
        ..test_support::report("v\"1", rows)
    }
}

#[test]
fn every_string_is_escaped_and_charts_are_inline() {
    let html = to_html(&report(BackendKind::Replay), &HtmlOptions::default());
    assert!(!html.contains("<script"), "raw ids leaked");
    assert!(html.contains("case-1&lt;script&gt;"));
    assert!(html.contains("&lt;even &amp; odd&gt;"));
    assert!(html.contains("m&lt;1&gt;"));
    for chart in ["scenarios", "reliability", "histogram", "review-time"] {
        assert!(
            html.contains(&format!("data-chart=\"{chart}\"")),
            "{chart} missing"
        );
    }
    assert!(!html.contains("http://") && !html.contains("https://"));
    assert!(!html.contains("banner synthetic"));
    // Without the definition the thresholds cannot be drawn, and the page says so.
    assert!(html.contains("thresholds unknown"));
}

#[test]
fn rows_to_look_at_list_incorrect_then_errors_then_abstentions() {
    let mut report = report(BackendKind::Systemone);
    for i in [1, 4] {
        let verdict = &mut report.rows[i].verdict;
        verdict.status = Status::Error;
        verdict.error = ErrorCode::Backend;
        verdict.detail = Some(jevjudge_wire::Detail::Transport);
        verdict.findings = Findings::new(Vec::new());
    }
    let html = to_html(&report, &HtmlOptions::default());
    let start = html.find("<h2>Rows to look at").unwrap();
    let end = html.find("<summary>All 30 rows").unwrap();
    let section = &html[start..end];
    let outcomes: Vec<&str> = section
        .match_indices("<td class=\"o-")
        .map(|(at, _)| section[at + 13..].split('"').next().unwrap())
        .collect();
    let rank = |o: &str| {
        ["incorrect", "error", "abstained"]
            .iter()
            .position(|k| *k == o)
    };
    assert!(outcomes.contains(&"incorrect") && outcomes.contains(&"error"));
    assert!(outcomes.contains(&"abstained"), "{outcomes:?}");
    assert!(
        outcomes.windows(2).all(|w| rank(w[0]) <= rank(w[1])),
        "{outcomes:?}"
    );
}

#[test]
fn the_review_time_note_is_true_for_the_backend() {
    let live = to_html(&report(BackendKind::Systemone), &HtmlOptions::default());
    assert!(!live.contains("replayed"), "a live run is not replayed");
    assert!(live.contains("include the network and the model's answer time"));
    let replay = to_html(&report(BackendKind::Replay), &HtmlOptions::default());
    assert!(replay.contains("Answers were replayed from recorded exchanges"));
    let fake = to_html(&report(BackendKind::Fake), &HtmlOptions::default());
    assert!(!fake.contains("replayed") && fake.contains("deterministic fake"));
}

#[test]
fn a_slow_outlier_does_not_stretch_the_review_time_axis() {
    let mut report = report(BackendKind::Systemone);
    report.rows[0].verdict.elapsed = Duration::from_secs(20);
    let (overall, _) = summarize(&report.rows, None);
    report.overall = overall;
    let html = to_html(&report, &HtmlOptions::default());
    let chart = &html[html.find("data-chart=\"review-time\"").unwrap()..];
    let chart = &chart[..chart.find("</svg>").unwrap()];
    assert!(
        chart.contains("1 row beyond") && chart.contains("(longest 20000 ms)"),
        "{chart}"
    );
    // The axis ends near the bulk (≤ 1.2 ms here), not at 20 s.
    assert!(!chart.contains(">20000<") && !chart.contains(">15000<"));
}

#[test]
fn p50_is_labelled_left_of_its_line_and_p95_right() {
    let html = to_html(&report(BackendKind::Systemone), &HtmlOptions::default());
    let p50 = html.rfind(">P50 ").unwrap();
    let p95 = html.rfind(">P95 ").unwrap();
    assert!(html[..p50].ends_with("text-anchor=\"end\" style=\"font-weight:600\""));
    assert!(html[..p95].ends_with("text-anchor=\"start\" style=\"font-weight:600\""));
}

#[test]
fn synthetic_backends_are_announced() {
    for backend in [BackendKind::Fake, BackendKind::Fixture] {
        let html = to_html(&report(backend), &HtmlOptions::default());
        assert!(html.contains("banner synthetic"));
        assert!(html.contains(&format!("Backend <code>{backend}</code>")));
    }
}

#[test]
fn thresholds_are_drawn_on_the_yes_axis_for_expected_false() {
    let spec = CriterionSpec {
        id: "risk".into(),
        expected: false,
        thresholds: Thresholds::new(0.2, 0.8),
    };
    let html = to_html(
        &report(BackendKind::Replay),
        &HtmlOptions {
            criteria: Some(std::slice::from_ref(&spec)),
            texts: None,
        },
    );
    assert_eq!(html.matches("class=\"threshold\"").count(), 2);
    // p′ ≥ 0.8 passes: p ≤ 0.2; p′ ≤ 0.2 fails: p ≥ 0.8.
    assert!(html.contains("pass: p ≤ 0.2"), "pass label");
    assert!(html.contains("fail: p ≥ 0.8"), "fail label");
}

#[test]
fn text_appears_only_when_given_and_escaped() {
    let report = report(BackendKind::Replay);
    let texts: HashMap<String, String> = [(
        "case-3<script>".to_owned(),
        "RAW-TEXT <b>bold</b>".to_owned(),
    )]
    .into();
    let html = to_html_with_texts(&report, &texts);
    assert!(html.contains("RAW-TEXT &lt;b&gt;bold&lt;/b&gt;"));
    assert!(html.contains("banner text"));
    let plain = to_html(&report, &HtmlOptions::default());
    assert!(!plain.contains("RAW-TEXT"));
}

#[test]
fn an_empty_report_renders() {
    let mut empty = report(BackendKind::Fake);
    empty.rows.clear();
    let (overall, scenarios) = summarize(&[], None);
    empty.overall = overall;
    empty.scenarios = scenarios;
    let html = to_html(&empty, &HtmlOptions::default());
    assert!(html.contains("data-chart=\"review-time\""));
    assert!(html.ends_with("</html>\n"));
}

#[test]
fn axis_ticks_and_labels() {
    // 10 % headroom above the largest count.
    assert_eq!(count_ticks(47), (60.0, vec![0.0, 20.0, 40.0, 60.0]));
    assert_eq!(count_ticks(0), (2.0, vec![0.0, 1.0, 2.0]));
    assert_eq!(count_ticks(3), (4.0, vec![0.0, 1.0, 2.0, 3.0, 4.0]));
    let (top, ticks) = count_ticks(100);
    assert_eq!((top, ticks.len()), (125.0, 6));
    let (top, ticks) = axis_ticks(0.093, 0.0);
    assert!(
        (top - 0.1).abs() < 1e-12 && ticks.len() == 6,
        "{top} {ticks:?}"
    );
    assert_eq!(tick_label(0.04, 0.1), "0.04");
    assert_eq!(tick_label(250.0, 500.0), "250");
    assert_eq!(axis_ticks(f64::NAN, 1.0), (1.0, vec![0.0, 1.0]));
    assert_eq!(n4(0.9299999999999999), "0.93");
    assert_eq!(n4(0.0), "0");
}

#[test]
fn case_text_of_both_forms() {
    let case = crate::parse_case(r#"{"scenario":"s","id":"a","question":"Q?","supporting_context":["E1"],"answer":"A.","expected_pass":true}"#).unwrap();
    assert_eq!(case_text(&case), "Question: Q?\nEvidence 1: E1\nAnswer: A.");
    let case = crate::parse_case(
        r#"{"scenario":"s","id":"b","state":{"message":"hi"},"expected_pass":true}"#,
    )
    .unwrap();
    assert_eq!(case_text(&case), "{\n  \"message\": \"hi\"\n}");
}

#[test]
fn a_stopped_run_and_its_attempts_are_shown() {
    let mut stopped = report(BackendKind::Systemone);
    stopped.stopped = Some(jevjudge_client::limit::Stop::KeyRefused { status: 401 });
    let attempts = jevjudge_client::limit::AttemptCounts {
        total: 3,
        by_status: [(401, 1), (200, 2)].into_iter().collect(),
        ..Default::default()
    };
    stopped.overall.attempts = Some(attempts);
    let html = to_html(&stopped, &HtmlOptions::default());
    assert!(html.contains("<strong>Stopped:</strong>"), "{html}");
    assert!(html.contains("401"));
    assert!(html.contains("HTTP attempts: "));
    let plain = to_html(&report(BackendKind::Systemone), &HtmlOptions::default());
    assert!(!plain.contains("Stopped:") && !plain.contains("HTTP attempts"));
}

const XSS: [(&str, &str); 3] = [
    (
        "<script>alert(1)</script>",
        "&lt;script&gt;alert(1)&lt;/script&gt;",
    ),
    (
        "<img src=x onerror=alert(1)>",
        "&lt;img src=x onerror=alert(1)&gt;",
    ),
    (
        "\"><svg onload=alert(1)>",
        "&quot;&gt;&lt;svg onload=alert(1)&gt;",
    ),
];

#[test]
fn markup_in_ids_scenarios_and_case_text_appears_only_escaped() {
    let mut report = report(BackendKind::Systemone);
    let mut texts = HashMap::new();
    for (i, row) in report.rows.iter_mut().enumerate() {
        let (payload, _) = XSS[i % XSS.len()];
        row.id = format!("id-{i}{payload}");
        row.scenario = format!("scenario{payload}");
        row.verdict.model = Some(format!("model{payload}"));
        texts.insert(row.id.clone(), format!("text {payload}"));
    }
    let (overall, scenarios) = summarize(&report.rows, None);
    report.overall = overall;
    report.scenarios = scenarios;
    report.definition_version = format!("v{}", XSS[0].0);
    let html = to_html_with_texts(&report, &texts);
    for (payload, escaped) in XSS {
        assert!(!html.contains(payload), "raw {payload} in the page");
        assert!(html.contains(&format!("text {escaped}")), "{escaped}");
        assert!(html.contains(&format!("scenario{escaped}")), "{escaped}");
        assert!(html.contains(&format!("model{escaped}")), "{escaped}");
    }
    assert!(html.contains(&format!("<code>id-0{}</code>", XSS[0].1)));
    assert!(html.contains(&format!("<title>jevjudge report · v{}</title>", XSS[0].1)));
    assert!(!html.contains("<script") && !html.contains("<img"));
    // The only elements are the page's own: every <svg is a chart.
    assert_eq!(
        html.matches("<svg").count(),
        html.matches("<svg class=\"chart").count()
    );
}

#[test]
fn the_page_of_a_replayed_run_is_unchanged() {
    let report = report(BackendKind::Replay);
    let texts: HashMap<String, String> = report
        .rows
        .iter()
        .take(3)
        .map(|row| {
            (
                row.id.clone(),
                format!("Question: {}?\nAnswer: yes.", row.id),
            )
        })
        .collect();
    let html = to_html_with_texts(&report, &texts)
        .replace(env!("CARGO_PKG_VERSION"), "[version]")
        .replace("><", ">\n<");
    insta::assert_snapshot!("replayed_page", html);
}

/// The page of `report` with the cases' `texts` (the CLI's `--include-text`).
fn to_html_with_texts(report: &Report, texts: &HashMap<String, String>) -> String {
    to_html(
        report,
        &HtmlOptions {
            criteria: None,
            texts: Some(texts),
        },
    )
}
