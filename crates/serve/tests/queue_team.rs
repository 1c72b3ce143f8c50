//! The review queue run by a team: blind claims and a decision log closed to reviewers, held
//! items handed back first, adjudication of disagreements by leads, the decisions readable,
//! sessions per reviewer and the reviewer list reloaded; on SQLite and a real PostgreSQL
//! (`JEVJUDGE_TEST_PG_URL`).

use jevjudge_judge::Status;
use jevjudge_serve::{
    AuthTokens, Config, QueuePolicy, ReloadOutcome, ReviewerTokens, SessionSecret, reload_reviewers,
};
use jevjudge_store::StoreUrl;
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
    let reviewers = ReviewerTokens::parse(&format!("ana:{ANA},bob:{BOB},lea:{LEA}:lead")).unwrap();
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
    a_held_item_comes_back_first_and_new_asks_for_another,
    every_disagreement_reaches_a_lead_whose_decision_is_the_exported_label,
);

async fn claim_with(service: &Service, token: &str, body: Value) -> Reply {
    queue(
        service,
        Method::POST,
        "/v1/queue/claim",
        Some(token),
        Some(body),
    )
    .await
}

async fn a_held_item_comes_back_first_and_new_asks_for_another(url: StoreUrl) {
    let (service, _store, _fake) =
        queued_service_with(&url, 0.5, team_policy(0.0), Config::default()).await;
    for _ in 0..2 {
        assert_eq!(
            service.review_refund().await.json()["status"],
            "INCONCLUSIVE"
        );
    }
    let first = claim(&service, ANA).await.json();
    assert_eq!(first["resumed"], false);
    // Back, and claim again: the held item, resumed, with its lease unchanged.
    let again = claim(&service, ANA).await.json();
    assert_eq!(again["item"], first["item"]);
    assert_eq!(again["resumed"], true);
    assert_eq!(again["lease_expires"], first["lease_expires"]);
    let other = claim_with(&service, ANA, json!({"new": true})).await;
    assert_eq!(other.status, 200, "{}", other.text());
    let other = other.json();
    assert_ne!(other["item"], first["item"]);
    assert_eq!(other["resumed"], false);
    assert_eq!(
        claim_with(&service, ANA, json!({"new": true})).await.status,
        204
    );
    let mine = get(&service, "/v1/queue/mine", Some(ANA)).await;
    assert_eq!(mine.status, 200, "{}", mine.text());
    let items: Vec<Value> = mine.json()["items"].as_array().unwrap().clone();
    let ids: Vec<&Value> = items.iter().map(|held| &held["item"]).collect();
    assert_eq!(ids, [&first["item"], &other["item"]]);
    assert_eq!(items[0]["kind"], "review");
    assert_eq!(items[0]["definition_version"], "refund-answer-v1");
    assert_eq!(items[0]["lease_expires"], first["lease_expires"]);
    let none = get(&service, "/v1/queue/mine", Some(BOB)).await.json();
    assert_eq!(none["items"], json!([]));
    let refused = claim_with(&service, ANA, json!({"new": "yes"})).await;
    assert_eq!(refused.status, 422);
    assert_eq!(refused.error_code(), "invalid_body");
}

/// Two scripted reviewers decide six second-reviewed items; bob disagrees with ana on his
/// 1st, 3rd and 4th. Every disagreement reaches the lead (and only those are listed as
/// disagreements); the lead's decisions are the labels the export reads.
async fn every_disagreement_reaches_a_lead_whose_decision_is_the_exported_label(url: StoreUrl) {
    let (service, store, _fake) =
        queued_service_with(&url, 0.5, team_policy(1.0), Config::default()).await;
    for _ in 0..6 {
        assert_eq!(
            service.review_refund().await.json()["status"],
            "INCONCLUSIVE"
        );
    }
    let decide_next = |token: &'static str, holds: bool| {
        let service = &service;
        let name = if token == ANA { "ana" } else { "bob" };
        async move {
            let item = claim(service, token).await.json();
            let item = item["item"].as_str().unwrap().to_owned();
            let body =
                json!({"findings": {"supported": holds}, "note": format!("{name} says {holds}")});
            let decided = decide(service, token, &item, body).await;
            assert_eq!(decided.status, 200, "{}", decided.text());
            decided.json()["review_id"].as_str().unwrap().to_owned()
        }
    };
    for _ in 0..6 {
        decide_next(ANA, true).await;
    }
    let mut disputed = Vec::new();
    for n in 0..6 {
        let disagree = [0, 2, 3].contains(&n);
        let review_id = decide_next(BOB, !disagree).await;
        if disagree {
            disputed.push(review_id);
        }
    }
    assert_eq!(claim(&service, BOB).await.status, 204);

    // Only a lead adjudicates and reads the decisions.
    let refused = claim_with(&service, ANA, json!({"kind": "adjudication"})).await;
    assert_eq!(refused.status, 403, "{}", refused.text());
    assert_eq!(refused.error_code(), "not_a_lead");
    let refused = get(&service, "/v1/queue/decisions", Some(BOB)).await;
    assert_eq!(refused.status, 403);
    let listed = get(&service, "/v1/queue/decisions?disagreement=true", Some(LEA)).await;
    assert_eq!(listed.status, 200, "{}", listed.text());
    let listed = listed.json();
    let mut ids: Vec<String> = listed["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["review_id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    disputed.sort();
    assert_eq!(ids, disputed);
    let stats = get(&service, "/v1/queue/stats", Some(ANA)).await.json();
    assert_eq!(stats["adjudication"]["pending"], 3);
    let metrics = service.state.render_metrics_with_store().await;
    assert!(
        metrics.contains("\njevjudge_queue_adjudications_pending 3\n"),
        "{metrics}"
    );

    // The lead adjudicates each, blind to Jev, seeing both answers and notes.
    let mut adjudicated = 0;
    loop {
        let reply = claim_with(&service, LEA, json!({"kind": "adjudication"})).await;
        if reply.status == 204 {
            break;
        }
        assert_eq!(reply.status, 200, "{}", reply.text());
        let text = reply.text();
        for hidden in ["yes_probability", "INCONCLUSIVE", "status", "review_id"] {
            assert!(!text.contains(hidden), "{hidden} in {text}");
        }
        let adjudication = reply.json();
        assert_eq!(adjudication["kind"], "adjudication");
        assert_eq!(adjudication["disagreement"], true);
        let notes: Vec<&str> = adjudication["answers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["note"].as_str().unwrap())
            .collect();
        assert_eq!(notes, ["ana says true", "bob says false"]);
        let item = adjudication["item"].as_str().unwrap();
        let decided = decide(
            &service,
            LEA,
            item,
            json!({"findings": {"supported": false}, "note": "bob is right"}),
        )
        .await;
        assert_eq!(decided.status, 200, "{}", decided.text());
        assert_eq!(decided.json()["upheld"], "second");
        adjudicated += 1;
    }
    assert_eq!(adjudicated, 3);
    let stats = get(&service, "/v1/queue/stats", Some(LEA)).await.json();
    assert_eq!(stats["adjudication"]["pending"], 0);
    assert_eq!(stats["adjudication"]["upheld"]["second"], 3);
    assert_eq!(stats["adjudication"]["by_reviewer"]["ana"]["overruled"], 3);

    // The labels: the lead's for the three disputed reviews, the agreed answer for the rest.
    let mut labels = std::collections::BTreeMap::new();
    store
        .export_labelled(|labelled| {
            labels.insert(labelled.review_id.to_string(), labelled.decisions);
            Ok(())
        })
        .await
        .unwrap();
    assert_eq!(labels.len(), 6);
    for (review_id, decisions) in &labels {
        if disputed.contains(review_id) {
            assert_eq!(decisions.len(), 1, "{review_id}: the lead's only");
            assert_eq!(decisions[0].as_ref().unwrap()["supported"], Some(false));
        } else {
            assert_eq!(decisions.len(), 2);
            assert!(
                decisions
                    .iter()
                    .all(|d| d.as_ref().unwrap()["supported"] == Some(true))
            );
        }
    }
    let listed = get(&service, "/v1/queue/decisions?disagreement=true", Some(LEA))
        .await
        .json();
    for record in listed["decisions"].as_array().unwrap() {
        assert_eq!(record["label_by"], json!(["lea"]));
        assert_eq!(record["label"]["supported"], false);
        assert_eq!(record["adjudication"]["state"], "decided");
    }
}

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
    let mut fields: Vec<&str> = item
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    fields.sort_unstable();
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
        assert_eq!(
            get(&service, &path, Some(CALLER)).await.status,
            200,
            "{path}"
        );
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

/// The queue page's status with this session cookie: 200 signed in, 303 signed out.
async fn queue_page_status(service: &Service, session: &str) -> u16 {
    crate::hardening::page(&format!("{}/ui/", service.url), session, None)
        .await
        .status
}

/// With a session secret, a reloaded reviewer list signs out only the reviewer whose token
/// changed (and the one who left); the new token and a new lead work at once. Without one,
/// any change signs everyone out.
#[tokio::test]
async fn a_reloaded_reviewer_list_signs_out_only_the_changed_reviewer_under_a_session_secret() {
    for secret in [true, false] {
        let mut policy = team_policy(0.0);
        if secret {
            policy.session_secret = Some(SessionSecret::new(&"s".repeat(40)).unwrap());
        }
        let (service, _store, _fake) =
            queued_service_with(&sqlite_url(), 0.5, policy, Config::default()).await;
        let (ana, _) = crate::hardening::sign_in(&service, ANA).await;
        let (bob, _) = crate::hardening::sign_in(&service, BOB).await;
        assert_eq!(queue_page_status(&service, &ana).await, 200);
        assert_eq!(queue_page_status(&service, &bob).await, 200);

        let dir = tempfile::TempDir::new().unwrap();
        let file = dir.path().join("reviewers");
        let new_bob = "tok-bob-new-0123456789";
        std::fs::write(
            &file,
            format!("# the team\nana:{ANA}\nbob:{new_bob}:lead\nlea:{LEA}:lead\n"),
        )
        .unwrap();
        let outcome = reload_reviewers(&service.state, &file);
        assert!(
            matches!(outcome, ReloadOutcome::Reloaded { .. }),
            "{outcome:?}"
        );

        let ana_status = queue_page_status(&service, &ana).await;
        assert_eq!(
            ana_status,
            if secret { 200 } else { 303 },
            "secret {secret}"
        );
        assert_eq!(
            queue_page_status(&service, &bob).await,
            303,
            "secret {secret}"
        );
        // The API takes the new token at once, and bob leads now.
        assert_eq!(get(&service, "/v1/queue/mine", Some(BOB)).await.status, 401);
        let reply = claim_with(&service, new_bob, json!({"kind": "adjudication"})).await;
        assert_eq!(reply.status, 204, "{}", reply.text());
        // A list that does not parse keeps the current one.
        std::fs::write(&file, "ana:tiny\n").unwrap();
        let outcome = reload_reviewers(&service.state, &file);
        assert!(
            matches!(&outcome, ReloadOutcome::Refused { reason } if reason.contains("ana") && !reason.contains("tiny")),
            "{outcome:?}"
        );
        assert_eq!(
            get(&service, "/v1/queue/mine", Some(new_bob)).await.status,
            200
        );
    }
}

#[tokio::test]
async fn with_a_queue_and_no_caller_token_the_decision_log_is_closed() {
    let (service, _store, _fake) =
        queued_service_with(&sqlite_url(), 0.5, team_policy(0.0), Config::default()).await;
    let reply = service.review_refund().await;
    assert_eq!(
        reply.status,
        200,
        "reviews are still taken: {}",
        reply.text()
    );
    let review_id = reply.json()["review_id"].as_str().unwrap().to_owned();
    for path in [format!("/v1/reviews/{review_id}"), "/v1/reviews".to_owned()] {
        for token in [None, Some(ANA), Some("tok-anything-0123456789")] {
            let reply = get(&service, &path, token).await;
            assert_eq!(reply.status, 401, "{path} {token:?}");
        }
    }
}

#[tokio::test]
async fn the_start_up_log_says_why_the_decision_log_is_closed_without_a_caller_token() {
    use tracing_subscriber::util::SubscriberInitExt as _;
    for (config, said) in [(Config::default(), true), (callers(&[CALLER]), false)] {
        let captured = jevjudge_test_support::LogCapture::default();
        let writer = captured.clone();
        let _guard = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .with_max_level(tracing::Level::WARN)
            .finish()
            .set_default();
        // Another test's thread may have cached the start-up log's interest as "never" while
        // no subscriber of its own was set: compute it again with this one in place.
        tracing::callsite::rebuild_interest_cache();
        let (_service, _store, _fake) =
            queued_service_with(&sqlite_url(), 0.5, team_policy(0.0), config).await;
        let text = captured.text();
        assert_eq!(
            text.contains("GET /v1/reviews")
                && text.contains("need a caller token (--auth-token-env)"),
            said,
            "{text}"
        );
    }
}

#[tokio::test]
async fn a_token_that_is_both_a_callers_and_a_reviewers_is_refused_on_the_log() {
    let (service, _store, _fake) = queued_service_with(
        &sqlite_url(),
        0.5,
        team_policy(0.0),
        callers(&[CALLER, ANA]),
    )
    .await;
    assert_eq!(get(&service, "/v1/reviews", Some(ANA)).await.status, 401);
    assert_eq!(get(&service, "/v1/reviews", Some(CALLER)).await.status, 200);
}
