//! The decision log over real HTTP: every answered review has its row, read back by id and by
//! filters; on SQLite and on a real PostgreSQL (`JEVJUDGE_TEST_PG_URL`, see scripts/pg.sh).

use jevjudge_fake::FakeServer;
use jevjudge_judge::SystemOneBackend;
use jevjudge_serve::{Config, DecisionLogConfig, Metrics};
use jevjudge_store::{Filter, Store, StoreUrl};
use jevjudge_test_support::{
    databases::{all_pages, postgres_database, sqlite_file},
    on_both_stores,
};
use serde_json::{Value, json};

use crate::util::{Built, Service, client, definitions, fake_answering, refund_state};

pub fn sqlite_url() -> StoreUrl {
    StoreUrl::Sqlite(sqlite_file("jevjudge_serve"))
}

/// A fresh database on the test PostgreSQL, or `None` (said on stderr) without one.
pub async fn pg_url() -> Option<StoreUrl> {
    postgres_database(
        "js",
        "bash scripts/pg.sh -- cargo test -p jevjudge-serve store",
    )
    .await
    .map(StoreUrl::Postgres)
}

/// The service in front of `fake`, keeping its reviews in `url`.
pub async fn with_store(fake: &FakeServer, url: &StoreUrl, keep_state: bool) -> (Service, Store) {
    let metrics = Metrics::new();
    let backend = SystemOneBackend::new(client(fake, &metrics, "test-key", 0));
    let store = Store::open(url).await.expect("the store opens");
    let built = Built::builder(backend, definitions())
        .metrics(metrics)
        .decision_log(
            DecisionLogConfig::store(store.clone())
                .keep_state(keep_state)
                .requested_model("jev-latest"),
        )
        .build()
        .await
        .expect("the definitions are kept");
    (Service::start_built(built).await, store)
}

on_both_stores!(
    every_answered_review_has_its_row_and_reads_back,
    state_text_is_kept_only_when_asked,
);

async fn every_answered_review_has_its_row_and_reads_back(url: StoreUrl) {
    let fake = fake_answering(&[("supported", 0.95)]).await;
    let (service, store) = with_store(&fake, &url, false).await;
    let mut state = refund_state();
    state["marker"] = json!("PRIVATE-STATE-MARKER");

    let reply = service
        .review(
            "refund-answer-v1",
            &json!({"state": state, "reference": "ticket-4711"}),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    let request_id = reply.headers["x-request-id"].to_str().unwrap().to_owned();
    let verdict = reply.json();
    assert_eq!(verdict["status"], "PASS");
    let id = verdict["review_id"]
        .as_str()
        .expect("a review_id")
        .to_owned();
    // The row was committed before the response.
    let row = store
        .get(id.parse().unwrap())
        .await
        .unwrap()
        .expect("the row");
    assert_eq!(row.reference.as_deref(), Some("ticket-4711"));

    let reply = service.get(&format!("/v1/reviews/{id}")).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    let review = reply.json();
    assert_eq!(review["review_id"], id);
    assert_eq!(review["status"], "PASS");
    assert_eq!(review["reference"], "ticket-4711");
    assert_eq!(review["definition_version"], "refund-answer-v1");
    assert_eq!(review["findings"], verdict["findings"]);
    assert_eq!(review["model"], verdict["model"]);
    // Served against jevjudge's fake server, which marks its answers.
    assert_eq!(review["backend"], "fake");
    assert_eq!(review["state_kept"], false);
    assert!(
        review["state_digest"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    assert!(
        review["definition_digest"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    assert_eq!(review["request_id"], request_id.as_str());

    // More reviews; list them newest first, two per page.
    let mut ids = vec![id.clone()];
    for i in 0..4 {
        let reply = service
            .review(
                "refund-answer-v1",
                &json!({"state": refund_state(), "reference": format!("other-{}", i % 2)}),
            )
            .await;
        assert_eq!(reply.status, 200);
        ids.push(reply.json()["review_id"].as_str().unwrap().to_owned());
    }
    ids.reverse();
    let (listed, _) = all_pages(async |cursor: Option<String>| {
        let path = match cursor {
            Some(cursor) => format!("/v1/reviews?limit=2&cursor={cursor}"),
            None => "/v1/reviews?limit=2".to_owned(),
        };
        let reply = service.get(&path).await;
        assert_eq!(reply.status, 200, "{}", reply.text());
        let page = reply.json();
        assert!(page["reviews"].as_array().unwrap().len() <= 2);
        let on_page = page["reviews"].as_array().unwrap().iter();
        let ids = on_page.map(|review| review["review_id"].as_str().unwrap().to_owned());
        (
            ids.collect(),
            page["next_cursor"].as_str().map(str::to_owned),
        )
    })
    .await;
    assert_eq!(listed, ids);

    let page = service
        .get("/v1/reviews?reference=other-1&status=PASS&version=refund-answer-v1&since=2020-01-01")
        .await
        .json();
    assert_eq!(page["reviews"].as_array().unwrap().len(), 2);
    assert_eq!(page["next_cursor"], Value::Null);
    let page = service.get("/v1/reviews?status=FAIL").await.json();
    assert_eq!(page["reviews"], json!([]));

    let reply = service.get("/v1/reviews?limit=0").await;
    assert_eq!(reply.status, 400);
    assert_eq!(reply.json()["error"]["code"], "invalid_query");
    let reply = service
        .get("/v1/reviews/019ad3c2-0000-7000-8000-000000000000")
        .await;
    assert_eq!(reply.status, 404);
    assert_eq!(reply.json()["error"]["code"], "review_not_found");
    let reply = service.get("/readyz").await;
    assert_eq!(
        (reply.status, reply.json()["store"].clone()),
        (200, json!("ok"))
    );

    // A reference over 256 characters is refused before anything runs.
    let reply = service
        .review(
            "refund-answer-v1",
            &json!({"state": refund_state(), "reference": "x".repeat(257)}),
        )
        .await;
    assert_eq!(reply.status, 422);
    assert_eq!(store.count(&Filter::default()).await.unwrap(), 5);

    service.stop().await.unwrap();
    store.close().await;
    // Without --store-state no state text reaches the database.
    if let StoreUrl::Sqlite(path) = &url {
        let mut bytes = std::fs::read(path).unwrap();
        bytes.extend(std::fs::read(format!("{}-wal", path.display())).unwrap_or_default());
        let needle = b"PRIVATE-STATE-MARKER";
        assert!(
            !bytes.windows(needle.len()).any(|w| w == needle),
            "state text found in the SQLite file"
        );
    }
}

async fn state_text_is_kept_only_when_asked(url: StoreUrl) {
    let fake = fake_answering(&[("supported", 0.95)]).await;
    let (service, store) = with_store(&fake, &url, true).await;
    let state = refund_state();
    let reply = service
        .review("refund-answer-v1", &json!({"state": state}))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    let id = reply.json()["review_id"].as_str().unwrap().to_owned();
    let review = service.get(&format!("/v1/reviews/{id}")).await.json();
    assert_eq!(review["state_kept"], true);
    assert!(
        review.get("state").is_none(),
        "the API never returns state text"
    );

    let mut records = Vec::new();
    store
        .export_records(|record| {
            records.push(record);
            Ok(())
        })
        .await
        .unwrap();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].request.state, state);
    assert_eq!(records[0].requested_model(), "jev-latest");
    assert_eq!(records[0].answers["supported"]["noul"], json!(0.95));
    service.stop().await.unwrap();
    store.close().await;
}

#[tokio::test]
async fn without_a_store_reads_say_so_and_the_service_is_ready() {
    let fake = fake_answering(&[("supported", 0.95)]).await;
    let service = Service::in_front_of(&fake, Config::default()).await;
    let reply = service
        .review(
            "refund-answer-v1",
            &json!({"state": refund_state(), "reference": "T-1"}),
        )
        .await;
    assert_eq!(reply.status, 200);
    assert!(reply.json().get("review_id").is_none());
    let reply = service.get("/v1/reviews").await;
    assert_eq!(reply.status, 404);
    assert_eq!(reply.json()["error"]["code"], "no_store");
    let reply = service.get("/readyz").await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["store"], "none");
}
