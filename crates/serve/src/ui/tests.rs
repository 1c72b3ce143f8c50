//! The pages rendered from plain data, and the request checks.

use axum::http::{HeaderMap, HeaderValue, header::HOST};
use jevjudge_test_support::expect::contains;
use serde_json::json;

use super::{
    item::criteria,
    loopback_host,
    pages::{
        self, Answer, CriterionView, ItemView, QueueRow, QueueView, ResultRow, ResultView, Who,
    },
    same_origin,
};

const XSS: &str = "<script>window.__xss=1</script><img src=x onerror=\"window.__xss=2\"> \
                   <a href=\"javascript:window.__xss=3\">javascript:window.__xss=3</a>";

fn who() -> Who<'static> {
    Who {
        name: "ada",
        csrf: "c5rf",
    }
}

fn item_view(state: &serde_json::Value) -> ItemView<'_> {
    ItemView {
        who: who(),
        item: "0190a0b0-0000-7000-8000-000000000001".to_owned(),
        version: "refund-answer-v1".to_owned(),
        state: Some(state),
        criteria: vec![
            CriterionView {
                id: "supported".to_owned(),
                instructions: "Is assistant_answer <b>supported</b>?".to_owned(),
                answer: None,
            },
            CriterionView {
                id: "polite".to_owned(),
                instructions: "Is it polite?".to_owned(),
                answer: Some(Answer::CantTell),
            },
        ],
        note: "</textarea><script>alert(1)</script>".to_owned(),
        lease_expires: "01:40:00 UTC".to_owned(),
        error: None,
    }
}

/// Every `<form` in the page carries the CSRF token as a hidden field.
fn every_form_has_the_token(html: &str, token: &str) {
    let forms = html.matches("<form").count();
    let hidden = format!(r#"<input type="hidden" name="csrf" value="{token}">"#);
    assert!(forms > 0, "no form in {html}");
    assert_eq!(html.matches(&hidden).count(), forms, "{html}");
}

#[test]
fn state_text_is_escaped_never_markup() {
    let state = json!({"draft": XSS, "evidence": {"nested": XSS}, "question": "Refund?",
                       "records": ["<b>one</b>", "two"]});
    let html = pages::item(&item_view(&state)).into_string();
    for raw in [
        "<script>window",
        "<img",
        "<a href=\"javascript",
        "</textarea><script>",
        "<b>",
    ] {
        assert!(!html.contains(raw), "unescaped {raw} in {html}");
    }
    assert!(html.contains("&lt;script&gt;window.__xss=1&lt;/script&gt;"));
    assert!(html.contains("&lt;img src=x onerror="));
    // A list of strings is a list of texts; other JSON is preformatted text, escaped too.
    assert!(html.contains(r#"<pre class="json">"#));
    assert!(html.contains(r#"<ul class="texts"><li class="text">&lt;b&gt;one&lt;/b&gt;</li><li class="text">two</li></ul>"#), "{html}");
    assert!(html.contains("&lt;/textarea&gt;&lt;script&gt;alert(1)"));
    // The only script is the site's own file.
    assert_eq!(html.matches("<script").count(), 1, "{html}");
    assert!(html.contains(r#"<script src="/ui/static/keys.js" defer></script>"#));
}

#[test]
fn the_item_page_is_blind() {
    let state = json!({"draft": "We refunded you."});
    let html = pages::item(&item_view(&state)).into_string();
    for word in ["probability", "PASS", "FAIL", "INCONCLUSIVE", "verdict\""] {
        assert!(!html.contains(word), "{word} in the blind page");
    }
    assert!(html.contains("Blind review"));
}

#[test]
fn the_item_page_asks_each_criterion_with_three_answers_and_documents_the_keys() {
    let state = json!({"draft": "x"});
    let html = pages::item(&item_view(&state)).into_string();
    for id in ["supported", "polite"] {
        for value in ["holds", "not", "cant"] {
            assert!(
                html.contains(&format!(r#"name="c.{id}" value="{value}""#)),
                "{id} {value}"
            );
        }
    }
    assert!(html.contains(r#"name="c.polite" value="cant" required checked"#));
    assert!(html.contains("Is assistant_answer &lt;b&gt;supported&lt;/b&gt;?"));
    assert!(html.contains("Keyboard shortcuts"));
    for key in ["j", "k", "1", "Ctrl"] {
        contains(&html, &format!("<kbd>{key}</kbd>"));
    }
    every_form_has_the_token(&html, "c5rf");
}

#[test]
fn a_state_that_was_not_kept_says_so() {
    let mut view = item_view(&serde_json::Value::Null);
    view.state = None;
    let html = pages::item(&view).into_string();
    assert!(html.contains("The state was not kept"));
}

#[test]
fn counts_that_reached_the_cap_are_shown_as_at_least() {
    let cap = pages::COUNT_CAP;
    let view = QueueView {
        who: who(),
        held: Vec::new(),
        history: Vec::new(),
        adjudications_pending: None,
        pending_by_version: vec![("big".to_owned(), cap - 5), ("small".to_owned(), 5)],
        claimed: 2,
        decided: cap,
        version: None,
        rows: Vec::new(),
        next: None,
        message: None,
    };
    let html = pages::queue(&view).into_string();
    let figure = |text: &str, label: &str| {
        format!("<div class=\"figure\">{text}</div><div class=\"label\">{label}")
    };
    assert!(
        html.contains(&figure(&format!("{cap}+"), "pending")),
        "{html}"
    );
    assert!(
        html.contains(&format!("big ({}+ pending)", cap - 5)),
        "{html}"
    );
    assert!(html.contains("small (5+ pending)"), "{html}");
    assert!(html.contains(&figure("2", "claimed")), "{html}");
    assert!(
        html.contains(&figure(&format!("{cap}+"), "decided")),
        "{html}"
    );
}

#[test]
fn the_queue_page_lists_versions_and_rows_with_a_claim_form() {
    let view = QueueView {
        who: who(),
        held: Vec::new(),
        history: Vec::new(),
        adjudications_pending: None,
        pending_by_version: vec![("refund-answer-v1".to_owned(), 3), ("v<2>".to_owned(), 1)],
        claimed: 1,
        decided: 7,
        version: Some("v<2>"),
        rows: vec![QueueRow {
            item: "0190a0b0-0000-7000-8000-000000000001".to_owned(),
            version: "v<2>".to_owned(),
            slot: 2,
            age: pages::age(125_000),
            claimed_by: Some("bob".to_owned()),
        }],
        next: Some("cursor=abc&version=v%3C2%3E".to_owned()),
        message: Some("Nothing is pending: the queue is empty."),
    };
    let html = pages::queue(&view).into_string();
    assert!(html.contains("<div class=\"figure\">4</div>"), "{html}");
    assert!(html.contains("v&lt;2&gt; (1 pending)"));
    assert!(
        html.contains(r#"<option value="v&lt;2&gt;" selected>"#),
        "{html}"
    );
    assert!(html.contains("/ui/?version=v%3C2%3E"));
    assert!(html.contains("2 min"));
    assert!(html.contains("<td>second</td>"));
    assert!(html.contains("<code>00000001</code>"), "{html}");
    assert!(html.contains(r#"href="/ui/?cursor=abc&amp;version=v%3C2%3E""#));
    every_form_has_the_token(&html, "c5rf");
}

#[test]
fn held_items_are_links_with_the_lease_end_as_a_local_time_and_a_lead_can_claim_adjudications() {
    let view = QueueView {
        who: who(),
        held: vec![pages::HeldRow {
            href: "/ui/items/0190a0b0-0000-7000-8000-000000000001".to_owned(),
            item: "0190a0b0-0000-7000-8000-000000000001".to_owned(),
            adjudication: false,
            version: "refund-answer-v1".to_owned(),
            lease_expires: "2026-12-02T17:36:06.381Z".to_owned(),
        }],
        history: vec![pages::HistoryRow {
            href: "/ui/adjudications/0190a0b0-0000-7000-8000-000000000002".to_owned(),
            item: "0190a0b0-0000-7000-8000-000000000002".to_owned(),
            adjudication: true,
            version: "refund-answer-v1".to_owned(),
            decided_at: "2026-12-02T17:30:00.000Z".to_owned(),
        }],
        adjudications_pending: Some(3),
        pending_by_version: Vec::new(),
        claimed: 1,
        decided: 0,
        version: None,
        rows: Vec::new(),
        next: None,
        message: None,
    };
    let html = pages::queue(&view).into_string();
    contains(
        &html,
        r#"<a class="held" href="/ui/items/0190a0b0-0000-7000-8000-000000000001"><code>00000001</code></a>"#,
    );
    contains(
        &html,
        r#"<time class="local" datetime="2026-12-02T17:36:06.381Z">2026-12-02 17:36:06 UTC</time>"#,
    );
    contains(
        &html,
        r#"href="/ui/adjudications/0190a0b0-0000-7000-8000-000000000002""#,
    );
    contains(&html, "3</strong> adjudications pending");
    contains(&html, r#"name="new" value="1""#);
    every_form_has_the_token(&html, "c5rf");
}

#[test]
fn the_adjudication_page_shows_both_answers_and_notes_and_nothing_of_jevs() {
    let state = json!({"draft": "Refund done."});
    let column = |name: &str, findings: Vec<Option<bool>>, note: &str| pages::AnswerColumn {
        name: name.to_owned(),
        findings,
        note: Some(note.to_owned()),
    };
    let view = pages::AdjudicationView {
        who: who(),
        item: "0190a0b0-0000-7000-8000-000000000003".to_owned(),
        version: "refund-answer-v1".to_owned(),
        disagreement: true,
        state: Some(&state),
        criteria: vec![CriterionView {
            id: "supported".to_owned(),
            instructions: "Is it supported?".to_owned(),
            answer: None,
        }],
        answers: vec![
            column("ana", vec![Some(true)], "looks <fine>"),
            column("bob", vec![None], "cannot tell"),
        ],
        lease_expires: Some("2026-12-02T17:36:06.381Z".to_owned()),
        note: String::new(),
        error: None,
        decided: None,
    };
    let html = pages::adjudication(&view).into_string();
    for shown in [
        "<th>ana</th>",
        "<th>bob</th>",
        "<td>holds</td>",
        "<td>can't tell</td>",
        "looks &lt;fine&gt;",
        "cannot tell",
        "the reviewers disagree",
        r#"action="/ui/adjudications/0190a0b0-0000-7000-8000-000000000003/decision""#,
    ] {
        contains(&html, shown);
    }
    for hidden in ["P(holds)", "probability", "INCONCLUSIVE", "PASS", "FAIL"] {
        assert!(!html.contains(hidden), "{hidden} in {html}");
    }
    every_form_has_the_token(&html, "c5rf");
}

#[test]
fn the_result_page_shows_the_reviewer_beside_jev() {
    let view = ResultView {
        who: who(),
        item: "0190a0b0-0000-7000-8000-000000000001".to_owned(),
        version: "refund-answer-v1".to_owned(),
        review_status: "INCONCLUSIVE".to_owned(),
        rows: vec![ResultRow {
            id: "supported".to_owned(),
            instructions: "Is it supported?".to_owned(),
            reviewer: Some(false),
            jev_status: Some("INCONCLUSIVE".to_owned()),
            jev_probability: Some(0.5312),
        }],
        note: Some("<i>close call</i>".to_owned()),
    };
    let html = pages::result(&view).into_string();
    assert!(html.contains("does not hold"));
    assert!(html.contains("0.531"));
    assert!(html.contains("&lt;i&gt;close call&lt;/i&gt;"));
    every_form_has_the_token(&html, "c5rf");
}

#[test]
fn the_sign_in_page_has_its_token_and_a_password_field() {
    let html = pages::sign_in("pre-token", Some("<bad>")).into_string();
    every_form_has_the_token(&html, "pre-token");
    assert!(html.contains(r#"type="password" name="token""#));
    assert!(html.contains("&lt;bad&gt;"));
    assert!(!html.contains("<script"));
}

#[test]
fn answers_map_to_true_false_and_null() {
    assert_eq!(
        Answer::parse("holds").map(Answer::finding),
        Some(Some(true))
    );
    assert_eq!(Answer::parse("not").map(Answer::finding), Some(Some(false)));
    assert_eq!(Answer::parse("cant").map(Answer::finding), Some(None));
    assert_eq!(Answer::parse("yes"), None);
}

#[test]
fn criteria_come_from_the_questions_json_in_order() {
    let questions = json!({
        "supported": {"type": "noul", "instructions": "Is it supported?"},
        "odd": {"type": "other"},
    });
    assert_eq!(
        criteria(&questions),
        [
            ("supported".to_owned(), "Is it supported?".to_owned()),
            ("odd".to_owned(), r#"{"type":"other"}"#.to_owned()),
        ]
    );
    assert!(criteria(&json!(null)).is_empty());
}

fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        map.insert(*name, HeaderValue::from_static(value));
    }
    map
}

#[test]
fn a_post_from_another_site_is_refused() {
    assert!(same_origin(&headers(&[("host", "127.0.0.1:8080")]), None));
    assert!(same_origin(
        &headers(&[
            ("host", "127.0.0.1:8080"),
            ("origin", "http://127.0.0.1:8080"),
            ("sec-fetch-site", "same-origin"),
        ]),
        None
    ));
    assert!(!same_origin(
        &headers(&[
            ("host", "127.0.0.1:8080"),
            ("origin", "http://evil.example"),
        ]),
        None
    ));
    // Under Referrer-Policy: no-referrer, Chromium sends `Origin: null` with same-origin forms.
    assert!(same_origin(
        &headers(&[
            ("host", "127.0.0.1:8080"),
            ("origin", "null"),
            ("sec-fetch-site", "same-origin"),
        ]),
        None
    ));
    assert!(same_origin(
        &headers(&[("host", "127.0.0.1:8080"), ("origin", "null")]),
        None
    ));
    assert!(!same_origin(
        &headers(&[
            ("host", "127.0.0.1:8080"),
            ("origin", "null"),
            ("sec-fetch-site", "cross-site"),
        ]),
        None
    ));
    assert!(!same_origin(
        &headers(&[("host", "127.0.0.1:8080"), ("sec-fetch-site", "cross-site"),]),
        None
    ));
    assert!(!same_origin(
        &headers(&[("host", "review.example"), ("sec-fetch-site", "same-site"),]),
        None
    ));
    // Behind a proxy that forwards its own Host, a form from --public-url's origin is this
    // site's; any other is not.
    let public = Some("https://review.example");
    assert!(same_origin(
        &headers(&[
            ("host", "127.0.0.1:8080"),
            ("origin", "https://review.example")
        ]),
        public
    ));
    assert!(!same_origin(
        &headers(&[
            ("host", "127.0.0.1:8080"),
            ("origin", "https://evil.example")
        ]),
        public
    ));
}

#[test]
fn the_cookie_is_secure_except_on_a_loopback_host() {
    let host = |value: &'static str| {
        let mut map = HeaderMap::new();
        map.insert(HOST, HeaderValue::from_static(value));
        map
    };
    for local in ["127.0.0.1:8080", "localhost:3000", "[::1]:80", "127.0.0.1"] {
        assert!(loopback_host(&host(local)), "{local}");
    }
    for remote in ["review.example", "10.0.0.5:8080", "localhost.evil.example"] {
        assert!(!loopback_host(&host(remote)), "{remote}");
    }
    assert!(!loopback_host(&HeaderMap::new()));
}
