//! Shadow versions over real HTTP: a calibrated shadow is scored on the live answers (no
//! second backend request), its rows sit beside the live reviews, out of lists unless asked
//! for, counted in the metrics and reported by `GET /v1/routes/{route}/shadow`; a shadow with
//! other questions sends its own request within its own slots and is shed, counted, when
//! they are full — the live answers never change.

use std::time::Duration;

use jevjudge_judge::{Criterion, Definition, SystemOneBackend};
use jevjudge_serve::{Config, DecisionLogConfig, Definitions, Metrics, parse_routes};
use jevjudge_store::{Filter, Store, StoreUrl};
use jevjudge_test_support::on_both_stores;
use serde_json::json;

use crate::{
    store::{pg_url, sqlite_url},
    util::{Built, Service, client, definitions, fake, fake_answering, has_sample, refund_state},
};

on_both_stores!(a_calibrated_shadow_is_scored_on_the_live_answers_beside_each_live_review);

/// `refund-answer-v1` and a copy asking the same question with other thresholds.
fn with_calibrated() -> Definitions {
    let loaded = definitions();
    let live = loaded.get("refund-answer-v1").expect("loaded").clone();
    let criteria = live
        .criteria()
        .iter()
        .map(|c| Criterion::new(c.id(), c.question().clone(), c.expected(), 0.1, 0.45).unwrap())
        .collect();
    let calibrated = Definition::new("refund-answer-v1+cal.1", criteria).unwrap();
    let support = loaded.get("support-draft-v1").expect("loaded").clone();
    Definitions::new([live, calibrated, support]).unwrap()
}

const ROUTES: &str = r#"
[[route]]
name = "refund"
live = "refund-answer-v1"
shadows = ["refund-answer-v1+cal.1"]
"#;

async fn start(
    fake: &jevjudge_fake::FakeServer,
    store: &Store,
    routes: &str,
    config: Config,
) -> Service {
    let metrics = Metrics::new();
    let backend = SystemOneBackend::new(client(fake, &metrics, "test-key", 0));
    let built = Built::builder(backend, with_calibrated())
        .config(config)
        .metrics(metrics)
        .decision_log(DecisionLogConfig::store(store.clone()))
        .routes(parse_routes(routes).unwrap())
        .build()
        .await
        .expect("the service builds");
    Service::start_built(built).await
}

/// Waits (at most 10 s) until the store holds `n` reviews, shadows included.
async fn wait_for_rows(store: &Store, n: u64) {
    let all = Filter {
        shadow: true,
        ..Filter::default()
    };
    for _ in 0..1000 {
        if store.count(&all).await.unwrap() >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the store did not reach {n} reviews");
}

async fn a_calibrated_shadow_is_scored_on_the_live_answers_beside_each_live_review(url: StoreUrl) {
    // 0.5 is INCONCLUSIVE at (0.2, 0.8) and PASS at (0.1, 0.45).
    let fake = fake_answering(&[("supported", 0.5)]).await;
    let store = Store::open(&url).await.expect("the store opens");
    let service = start(&fake, &store, ROUTES, Config::default()).await;
    let body = json!({"state": refund_state(), "reference": "T-1"});
    let mut live_ids = Vec::new();
    for _ in 0..5 {
        let reply = service.review("refund", &body).await;
        assert_eq!(reply.status, 200, "{}", reply.text());
        let result = reply.json();
        assert_eq!(result["definition_version"], "refund-answer-v1");
        assert_eq!(result["status"], "INCONCLUSIVE");
        live_ids.push(result["review_id"].as_str().unwrap().to_owned());
    }
    wait_for_rows(&store, 10).await;
    assert_eq!(
        fake.request_count(),
        5,
        "no request for the calibrated shadow"
    );

    // Lists leave the shadows out unless asked for.
    let reply = service.get("/v1/reviews").await;
    let listed = reply.json();
    assert_eq!(listed["reviews"].as_array().unwrap().len(), 5);
    for review in listed["reviews"].as_array().unwrap() {
        assert_eq!(review["route"], "refund");
        assert!(review.get("shadow_of").is_none());
    }
    let reply = service
        .get("/v1/reviews?shadow=true&version=refund-answer-v1%2Bcal.1")
        .await;
    let shadows = reply.json()["reviews"].as_array().unwrap().clone();
    assert_eq!(shadows.len(), 5);
    for shadow in &shadows {
        assert!(live_ids.contains(&shadow["shadow_of"].as_str().unwrap().to_owned()));
        assert_eq!(shadow["route"], "refund");
        assert_eq!(shadow["status"], "PASS");
        assert_eq!(shadow["reference"], "T-1");
        assert_eq!(
            shadow["usage"],
            json!({"input_tokens": 0, "output_tokens": 0})
        );
        assert_eq!(shadow["state_kept"], false);
    }

    let metrics = service.metrics_text();
    let sample = |outcome: &str, n: u32| {
        format!(
            "jevjudge_shadow_reviews_total{{route=\"refund\",version=\"refund-answer-v1+cal.1\",\
             outcome=\"{outcome}\"}} {n}"
        )
    };
    assert!(has_sample(&metrics, &sample("flip", 5)), "{metrics}");
    assert!(has_sample(&metrics, &sample("agree", 0)), "{metrics}");
    assert!(has_sample(&metrics, &sample("shed", 0)), "{metrics}");
    assert!(
        has_sample(
            &metrics,
            "jevjudge_shadow_agreement{route=\"refund\",version=\"refund-answer-v1+cal.1\"} 0.0"
        ),
        "{metrics}"
    );

    let reply = service.get("/v1/routes/refund/shadow").await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    let report = reply.json();
    assert_eq!(report["shadow"], "refund-answer-v1+cal.1");
    assert_eq!(report["live"], json!(["refund-answer-v1"]));
    assert_eq!(report["reviews"], 5);
    assert_eq!(report["agreement"]["count"], 0);
    assert_eq!(report["transitions"], json!({"INCONCLUSIVE->PASS": 5}));
    assert_eq!(report["coverage"]["live"]["rate"], 0.0);
    assert_eq!(report["coverage"]["shadow"]["rate"], 1.0);
    assert_eq!(report["shadow_input_tokens"], 0);
    assert_eq!(report["labelled"]["cases"], 0, "nobody labelled anything");
    assert_eq!(report["labelled"]["compare"], json!(null));
    let reply = service.get("/v1/routes/refund/shadow?version=other").await;
    assert_eq!(reply.json()["reviews"], 0);
    let reply = service.get("/v1/routes/nowhere/shadow").await;
    assert_eq!(reply.status, 404);
    let reply = service.get("/v1/routes/refund/shadow?colour=red").await;
    assert_eq!(reply.status, 400);
    assert_eq!(reply.json()["error"]["code"], "invalid_query");
}

#[tokio::test]
async fn a_shadow_with_its_own_questions_is_shed_when_its_slots_are_full() {
    let fake = fake(jevjudge_fake::Config {
        latency: Duration::from_millis(300),
        ..Default::default()
    })
    .await;
    let store = Store::open(&sqlite_url()).await.expect("the store opens");
    let routes = r#"
        [[route]]
        name = "refund"
        live = "refund-answer-v1"
        shadows = ["support-draft-v1"]
    "#;
    let config = Config {
        shadow_max_concurrent: Some(1),
        ..Config::default()
    };
    let service = start(&fake, &store, routes, config).await;
    let body = json!({"state": refund_state()});
    // Eight live reviews at once: each answered by the live version; their shadows find one
    // shadow slot, so at least one runs and the others that find it taken are shed.
    let replies =
        futures_util::future::join_all((0..8).map(|_| service.review("refund", &body))).await;
    for reply in &replies {
        assert_eq!(reply.status, 200, "{}", reply.text());
        assert_eq!(reply.json()["definition_version"], "refund-answer-v1");
    }
    let counted = |outcome: &str| -> u64 {
        let prefix = format!(
            "jevjudge_shadow_reviews_total{{route=\"refund\",version=\"support-draft-v1\",\
             outcome=\"{outcome}\"}} "
        );
        service
            .metrics_text()
            .lines()
            .find_map(|line| line.strip_prefix(&prefix)?.parse().ok())
            .unwrap_or(0)
    };
    for _ in 0..1000 {
        let ended = ["agree", "flip", "error", "shed"]
            .map(counted)
            .iter()
            .sum::<u64>();
        if ended == 8 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let shed = counted("shed");
    let ran = counted("agree") + counted("flip") + counted("error");
    assert_eq!(shed + ran, 8, "every shadow ended or was shed");
    assert!(shed >= 1, "one slot cannot hold eight shadows at once");
    assert!(ran >= 1);
    // The backend saw the 8 live requests and one per shadow that ran.
    assert_eq!(fake.request_count() as u64, 8 + ran);
    let shadow_rows = Filter {
        shadow: true,
        version: Some("support-draft-v1".to_owned()),
        ..Filter::default()
    };
    assert_eq!(store.count(&shadow_rows).await.unwrap(), ran);
}
