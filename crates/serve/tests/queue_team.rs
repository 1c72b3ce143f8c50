//! The review queue run by a team: blind claims and a decision log closed to reviewers, held
//! items handed back first, adjudication of disagreements by leads, the decisions readable,
//! sessions per reviewer and the reviewer list reloaded; on SQLite and a real PostgreSQL
//! (`JEVJUDGE_TEST_PG_URL`).

use jevjudge_judge::Status;
use jevjudge_serve::{AuthTokens, Config, QueuePolicy, ReviewerTokens};
use jevjudge_store::{Store, StoreUrl};
use reqwest::Method;
use serde_json::{Value, json};

use crate::{
    queue::{ANA, BOB, claim, decide, queue, queued_service_with, supported},
    store::{pg_url, sqlite_url},
    util::{Reply, Service, refund_state},
};

/// A caller's token (`--auth-token-env`), not a reviewer's.
const CALLER: &str = "tok-caller-0123456789";
/// A lead's token.
const LEA: &str = "tok-lea-lead-012345678";

fn callers(tokens: &[&str]) -> Config {
    Config {
        auth_tokens: AuthTokens::new(tokens.iter().copied()).expect("valid caller tokens"),
        ..Config::default()
    }
}

/// ana and bob review, lea leads; INCONCLUSIVE reviews are queued, each twice with
/// `second_review` 1.0.
fn team_policy(second_review: f64) -> QueuePolicy {
    let reviewers =
        ReviewerTokens::parse(&format!("ana:{ANA},bob:{BOB},lea:{LEA}:lead")).unwrap();
    let mut policy = QueuePolicy::new([Status::Inconclusive], reviewers);
    policy.second_review = second_review;
    policy
}

/// `POST /v1/reviews/refund-answer-v1` as a caller, with a reference.
async fn review_as_caller(service: &Service, reference: &str) -> Reply {
    let body = json!({"state": refund_state(), "reference": reference});
    service
        .post(
            "refund-answer-v1",
            body.to_string().into_bytes(),
            &[("authorization", &format!("Bearer {CALLER}"))],
        )
        .await
}

async fn get(service: &Service, path: &str, token: Option<&str>) -> Reply {
    queue(service, Method::GET, path, token, None).await
}

jevjudge_test_support::on_both_stores!(
    a_claim_reveals_nothing_that_leads_to_jevs_verdict_and_reviewer_tokens_cannot_read_the_log,
);

async fn a_claim_reveals_nothing_that_leads_to_jevs_verdict_and_reviewer_tokens_cannot_read_the_log(
    url: StoreUrl,
) {
    let (service, _store, _fake) =
        queued_service_with(&url, 0.5, team_policy(0.0), callers(&[CALLER])).await;
    let reply = review_as_caller(&service, "ticket-42").await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    let review_id = reply.json()["review_id"].as_str().unwrap().to_owned();

    let claimed = claim(&service, ANA).await;
    assert_eq!(claimed.status, 200, "{}", claimed.text());
    let item = claimed.json();
    let fields: Vec<&str> = item
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        fields,
        [
            "criteria",
            "definition_version",
            "item",
            "lease_expires",
            "resumed",
            "slot",
            "state"
        ]
    );
    let text = claimed.text();
    for hidden in [
        review_id.as_str(),
        "ticket-42",
        "status",
        "sampled_pass",
        "yes_probability",
        "INCONCLUSIVE",
    ] {
        assert!(!text.contains(hidden), "{hidden} in {text}");
    }
    let item_id = item["item"].as_str().unwrap().to_owned();

    // The item id does not resolve on the decision log, even for a caller.
    let reply = get(&service, &format!("/v1/reviews/{item_id}"), Some(CALLER)).await;
    assert_eq!(reply.status, 404, "{}", reply.text());
    // The decision log is the callers': a reviewer's token is refused there.
    for path in [
        format!("/v1/reviews/{review_id}"),
        "/v1/reviews".to_owned(),
        "/v1/reviews?reference=ticket-42".to_owned(),
    ] {
        for token in [Some(ANA), Some(LEA), None] {
            let reply = get(&service, &path, token).await;
            assert_eq!(reply.status, 401, "{path} {token:?}: {}", reply.text());
            assert_eq!(reply.error_code(), "unauthorized");
        }
        assert_eq!(get(&service, &path, Some(CALLER)).await.status, 200, "{path}");
    }

    // After saving, the answer reveals Jev's side.
    let decided = decide(&service, ANA, &item_id, supported()).await;
    assert_eq!(decided.status, 200, "{}", decided.text());
    let decided = decided.json();
    assert_eq!(decided["status_by_jev"], "INCONCLUSIVE");
    assert_eq!(decided["review_id"], review_id.as_str());
    assert_eq!(
        decided["findings_by_jev"]["supported"]["yes_probability"],
        0.5
    );
}

#[tokio::test]
async fn with_a_queue_and_no_caller_token_the_decision_log_is_closed() {
    let (service, _store, _fake) =
        queued_service_with(&sqlite_url(), 0.5, team_policy(0.0), Config::default()).await;
    let reply = service.review_refund().await;
    assert_eq!(reply.status, 200, "reviews are still taken: {}", reply.text());
    let review_id = reply.json()["review_id"].as_str().unwrap().to_owned();
    for path in [format!("/v1/reviews/{review_id}"), "/v1/reviews".to_owned()] {
        for token in [None, Some(ANA), Some("tok-anything-0123456789")] {
            let reply = get(&service, &path, token).await;
            assert_eq!(reply.status, 401, "{path} {token:?}");
        }
    }
}

#[tokio::test]
async fn a_token_that_is_both_a_callers_and_a_reviewers_is_refused_on_the_log() {
    let (service, _store, _fake) =
        queued_service_with(&sqlite_url(), 0.5, team_policy(0.0), callers(&[CALLER, ANA]))
            .await;
    assert_eq!(get(&service, "/v1/reviews", Some(ANA)).await.status, 401);
    assert_eq!(get(&service, "/v1/reviews", Some(CALLER)).await.status, 200);
}

#[allow(dead_code)]
fn unused(_: Store, _: Value) {}
