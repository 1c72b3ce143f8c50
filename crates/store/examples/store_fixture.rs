//! Writes the small decision log the upgrade tests read back (`tests/fixtures/`) through the
//! store's own API: one definition with expected flags, three reviews with fixed ids, two of
//! them queued (one twice, for a second review), and two decisions.
//!
//! ```text
//! cargo run -p jevjudge-store --example store_fixture -- URL
//! ```
//!
//! URL is `sqlite:PATH` (a new file) or `postgresql://…` (an empty database). What it writes
//! is listed in `tests/fixtures/README.md`; the tests check those values.

use std::{
    collections::BTreeMap,
    time::{Duration, SystemTime},
};

use jevjudge_store::{Decision, Enqueue, KeptState, NewReview, QueueReason, Store, StoreUrl};
use jevjudge_wire::Usage;
use serde_json::json;

const LEASE: Duration = Duration::from_secs(600);

fn review(id: &str, reference: &str, status: &str, kept: bool) -> NewReview {
    NewReview {
        id: id.parse().expect("a fixed review id"),
        definition_version: "refund-v1".to_owned(),
        definition_digest: "sha256:refund-v1".to_owned(),
        state_digest: "sha256:00ff".to_owned(),
        reference: Some(reference.to_owned()),
        status: status.to_owned(),
        error: "NONE".to_owned(),
        detail: None,
        findings: json!({"supported": {"status": status, "yes_probability": 0.5, "expected_probability": 0.5}}),
        model: Some("jev-1.13.0".to_owned()),
        usage: Some(Usage {
            input_tokens: 120,
            output_tokens: 3,
        }),
        elapsed: Duration::from_micros(20_512),
        request_id: format!("req-{reference}"),
        backend: "fake".to_owned(),
        kept: kept.then(|| KeptState {
            state: json!({"assistant_answer": format!("Answer of {reference}.")}),
            answers: None,
            requested_model: "jev-latest".to_owned(),
        }),
        shadow_of: None,
        route: None,
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url: StoreUrl = std::env::args()
        .nth(1)
        .ok_or("usage: store_fixture URL")?
        .parse()?;
    let store = Store::open(&url).await?;
    let questions = json!({
        "supported": {"type": "noul", "instructions": "Is it supported?"},
        "polite": {"type": "noul", "instructions": "Is it polite?"},
    });
    store
        .put_definition("sha256:refund-v1", "refund-v1", &questions)
        .await?;
    store
        .put_definition_expected(
            "sha256:refund-v1",
            &BTreeMap::from([("supported".to_owned(), true), ("polite".to_owned(), false)]),
        )
        .await?;

    store
        .insert(&review(
            "019bc119-0100-7000-8000-000000000001",
            "ticket-1",
            "PASS",
            false,
        ))
        .await?;
    let once = Enqueue {
        reason: QueueReason::Status,
        copies: 1,
    };
    store
        .insert_queued(
            &review(
                "019bc119-eb60-7000-8000-000000000002",
                "ticket-2",
                "INCONCLUSIVE",
                true,
            ),
            Some(&once),
        )
        .await?;
    let twice = Enqueue {
        reason: QueueReason::Status,
        copies: 2,
    };
    store
        .insert_queued(
            &review(
                "019bc11a-d5c0-7000-8000-000000000003",
                "ticket-3",
                "FAIL",
                true,
            ),
            Some(&twice),
        )
        .await?;

    // ana decides ticket-2; ben decides the first copy of ticket-3; its second stays pending.
    let now = SystemTime::now();
    for (reviewer, supported, polite, note) in [
        ("ana", Some(true), None, Some("checked the order system")),
        ("ben", Some(false), Some(false), None),
    ] {
        let claimed = store
            .claim_at(reviewer, None, LEASE, now)
            .await?
            .ok_or("an item is pending")?;
        let decision = Decision {
            findings: BTreeMap::from([
                ("supported".to_owned(), supported),
                ("polite".to_owned(), polite),
            ]),
            note: note.map(str::to_owned),
        };
        store
            .decide_at(claimed.item, reviewer, &decision, now)
            .await?;
        println!(
            "{reviewer} decided {} (slot {})",
            claimed.subject.review.review_id, claimed.slot
        );
    }
    store.close().await;
    println!("{url}: 3 reviews, 3 queue items, 2 decisions");
    Ok(())
}
