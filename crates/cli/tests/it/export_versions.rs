//! `reviews export --labelled` holds one definition version, and weighs each case by its
//! inclusion probability: through the real binary on an SQLite store.

use std::{collections::BTreeMap, time::Duration};

use jevjudge_store::{
    Decision, Enqueue, Inclusion, KeptState, NewReview, QueueReason, ReviewId, Store, StoreUrl,
};
use jevjudge_test_support::{root, run as output, temp_dir};
use jevjudge_wire::record::{Record, parse_line};
use serde_json::{Value, json};

use crate::jevjudge;

const LEASE: Duration = Duration::from_secs(600);

fn review(record: &Record, version: &str, status: &str) -> NewReview {
    NewReview {
        id: ReviewId::new(),
        definition_version: version.to_owned(),
        definition_digest: format!("sha256:{version}"),
        state_digest: format!("sha256:{}", record.id),
        reference: None,
        status: status.to_owned(),
        error: "NONE".to_owned(),
        detail: None,
        findings: json!({}),
        model: Some(record.model.clone()),
        usage: None,
        elapsed: Duration::from_millis(1),
        request_id: "req".to_owned(),
        backend: "replay".to_owned(),
        kept: Some(KeptState {
            state: record.request.state.clone(),
            answers: Some(record.answers.clone()),
            requested_model: record.model.clone(),
        }),
        shadow_of: None,
        route: None,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_labelled_export_takes_one_version_and_weighs_sampled_passes() {
    let dir = temp_dir("export-versions");
    let db = dir.join("reviews.db");
    let store = Store::open(&StoreUrl::Sqlite(db.clone())).await.unwrap();
    let recordings =
        std::fs::read_to_string(root().join("examples/sms-spam/recordings.jevl")).unwrap();
    let records: Vec<Record> = recordings
        .lines()
        .take(6)
        .map(|line| parse_line(line).unwrap())
        .collect();
    let questions = Value::Object(records[0].request.questions.clone());
    for version in ["v1", "v2"] {
        let digest = format!("sha256:{version}");
        store
            .put_definition(&digest, version, &questions)
            .await
            .unwrap();
        store
            .put_definition_expected(&digest, &BTreeMap::from([("spam".to_owned(), false)]))
            .await
            .unwrap();
    }
    let once = |reason| Enqueue { reason, copies: 1 };
    // v1: a FAIL queued for its status, a PASS sampled at 30 %, a PASS sampled by a jevjudge
    // that did not record the rate, and a PASS never queued. v2: one FAIL.
    let queued = [
        (review(&records[0], "v1", "FAIL"), Some(Inclusion::FULL)),
        (
            review(&records[1], "v1", "PASS"),
            Some(Inclusion::new(0.3).unwrap()),
        ),
        (review(&records[2], "v1", "PASS"), None),
        (review(&records[3], "v2", "FAIL"), Some(Inclusion::FULL)),
    ];
    for (review, inclusion) in &queued {
        let reason = if review.status == "FAIL" {
            QueueReason::Status
        } else {
            QueueReason::SampledPass
        };
        match inclusion {
            Some(inclusion) => store
                .insert_queued_with(review, Some(&once(reason)), *inclusion)
                .await
                .unwrap(),
            None => store
                .insert_queued(review, Some(&once(reason)))
                .await
                .unwrap(),
        };
    }
    store
        .insert(&review(&records[4], "v1", "PASS"))
        .await
        .unwrap();
    while let Some(claimed) = store.claim("ana", None, LEASE).await.unwrap() {
        let decision = Decision {
            findings: BTreeMap::from([("spam".to_owned(), Some(false))]),
            note: None,
        };
        store.decide(claimed.item, "ana", &decision).await.unwrap();
    }
    store.close().await;
    let url = format!("sqlite:{}", db.display());
    let out = dir.join("labelled");
    let export = |version: Option<&str>| {
        let mut command = jevjudge();
        command
            .args(["reviews", "export", "--store", &url, "--labelled", "--out"])
            .arg(&out);
        if let Some(version) = version {
            command.args(["--definition-version", version]);
        }
        command
    };

    // Several versions, none named: exit 2, each listed with its count, nothing written.
    let several = output(&mut export(None)).await;
    assert_eq!(several.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&several.stderr);
    assert!(
        stderr.contains(
            "the store holds reviews of 2 definition versions and a labelled export takes one: \
             v1 (4 reviews), v2 (1 review); name one with --definition-version"
        ),
        "{stderr}"
    );
    assert!(!out.exists(), "nothing is written");
    let unknown = output(&mut export(Some("v3"))).await;
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains(
            "--definition-version: the store holds no reviews of definition version v3; it \
             holds v1 (4 reviews), v2 (1 review)"
        ),
        "{}",
        String::from_utf8_lossy(&unknown.stderr)
    );

    // v1 named: its three queued reviews, weighed 1, 1/0.3 and 1 (rate not recorded, warned).
    let v1 = output(&mut export(Some("v1"))).await;
    let stdout = String::from_utf8_lossy(&v1.stdout);
    let stderr = String::from_utf8_lossy(&v1.stderr);
    assert!(v1.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("cases.jsonl: 3 cases\n"), "{stdout}");
    assert!(
        stderr.contains("warning: 1 case queued before the store recorded sampling rates"),
        "{stderr}"
    );
    let cases: Vec<Value> = std::fs::read_to_string(out.join("cases.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let weights: Vec<(String, f64)> = cases
        .iter()
        .map(|case| {
            (
                case["id"].as_str().unwrap().to_owned(),
                case["weight"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        weights,
        vec![
            (queued[0].0.id.to_string(), 1.0),
            (queued[1].0.id.to_string(), 1.0 / 0.3),
            (queued[2].0.id.to_string(), 1.0),
        ]
    );
    assert!(cases.iter().all(|case| case["scenario"] == "v1"));

    // The cases file reads back in eval: the weights reach the rows.
    let report = dir.join("report.json");
    let definition = dir.join("v1.toml");
    let toml = std::fs::read_to_string(root().join("examples/sms-spam/definition.toml"))
        .unwrap()
        .replace("version = \"sms-spam-0.1.0\"", "version = \"v1\"");
    std::fs::write(&definition, toml).unwrap();
    let eval = output(
        jevjudge()
            .args(["eval", "--replay"])
            .arg(out.join("recordings.jevl"))
            .arg("--cases")
            .arg(out.join("cases.jsonl"))
            .arg("--definition")
            .arg(&definition)
            .arg("--report")
            .arg(&report),
    )
    .await;
    assert!(
        eval.status.code().is_some_and(|code| code <= 1),
        "{}",
        String::from_utf8_lossy(&eval.stderr)
    );
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let row_weights: Vec<Option<f64>> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row.get("weight").and_then(Value::as_f64))
        .collect();
    assert_eq!(row_weights, [None, Some(1.0 / 0.3), None]);
}
