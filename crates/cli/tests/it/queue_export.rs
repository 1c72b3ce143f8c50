//! Labels become data: reviews of the real sms-spam recording are queued in an
//! SQLite store, decided by two scripted reviewers from the corpus labels, exported with
//! `reviews export --labelled`, and the export runs through `eval --replay` and `calibrate`.

use std::{collections::BTreeMap, time::Duration};

use jevjudge_store::{
    Decision, Enqueue, KeptState, NewReview, QueueReason, ReviewId, Store, StoreUrl,
};
use jevjudge_test_support::{root, run as output, temp_dir};
use jevjudge_wire::record::parse_line;
use serde_json::{Value, json};

use crate::jevjudge;

const VERSION: &str = "sms-spam-0.1.0";
const REVIEWS: usize = 60;
const LEASE: Duration = Duration::from_secs(600);

fn decision(spam: Option<bool>) -> Decision {
    Decision {
        findings: BTreeMap::from([("spam".to_owned(), spam)]),
        note: None,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn decided_reviews_export_as_cases_that_eval_and_calibrate_run_on() {
    let dir = temp_dir("queue-export");
    let db = dir.join("reviews.db");
    let store = Store::open(&StoreUrl::Sqlite(db.clone())).await.unwrap();
    let recordings =
        std::fs::read_to_string(root().join("examples/sms-spam/recordings.jevl")).unwrap();
    let records: Vec<_> = recordings
        .lines()
        .take(REVIEWS)
        .map(|line| parse_line(line).unwrap())
        .collect();
    let questions = Value::Object(records[0].request.questions.clone());
    store
        .put_definition("sha256:sms", VERSION, &questions)
        .await
        .unwrap();
    store
        .put_definition_expected("sha256:sms", &BTreeMap::from([("spam".to_owned(), true)]))
        .await
        .unwrap();

    // Review i: queued twice when i % 5 == 0. Reviewer ben disagrees on reviews 10 and 20,
    // ana can't tell on review 3, review 59 is never decided, review 7 kept no state.
    let mut labels = Vec::new();
    for (i, record) in records.iter().enumerate() {
        let spam = record.label.as_ref().unwrap()["spam"].as_bool().unwrap();
        labels.push(spam);
        let noul = record.answers["spam"]["noul"].as_f64().unwrap();
        let review = NewReview {
            id: ReviewId::new(),
            definition_version: VERSION.to_owned(),
            definition_digest: "sha256:sms".to_owned(),
            state_digest: format!("sha256:{i}"),
            reference: None,
            status: "INCONCLUSIVE".to_owned(),
            error: "NONE".to_owned(),
            detail: None,
            findings: json!({"spam": {"status": "INCONCLUSIVE", "yes_probability": noul,
                                      "expected_probability": noul}}),
            model: Some(record.model.clone()),
            usage: None,
            elapsed: Duration::from_millis(1),
            request_id: format!("req-{i}"),
            backend: "replay".to_owned(),
            kept: (i != 7).then(|| KeptState {
                state: record.request.state.clone(),
                answers: Some(record.answers.clone()),
                requested_model: record.model.clone(),
            }),
            shadow_of: None,
            route: None,
        };
        let enqueue = Enqueue {
            reason: QueueReason::Status,
            copies: if i % 5 == 0 { 2 } else { 1 },
        };
        store.insert_queued(&review, Some(&enqueue)).await.unwrap();
    }
    for (i, spam) in labels.iter().copied().enumerate().take(REVIEWS - 1) {
        let first = store.claim("ana", None, LEASE).await.unwrap().unwrap();
        let answer = if i == 3 { None } else { Some(spam) };
        store
            .decide(first.item, "ana", &decision(answer))
            .await
            .unwrap();
        if i % 5 == 0 {
            let second = store.claim("ben", None, LEASE).await.unwrap().unwrap();
            assert_eq!(
                second.subject.review.review_id,
                first.subject.review.review_id
            );
            let answer = if i == 10 || i == 20 { !spam } else { spam };
            store
                .decide(second.item, "ben", &decision(Some(answer)))
                .await
                .unwrap();
        }
    }
    store.close().await;

    let out = dir.join("labelled");
    let url = format!("sqlite:{}", db.display());
    let exported = output(
        jevjudge()
            .args(["reviews", "export", "--store", &url, "--labelled", "--out"])
            .arg(&out),
    )
    .await;
    let stdout = String::from_utf8_lossy(&exported.stdout);
    assert!(
        exported.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&exported.stderr)
    );
    // 60 reviews: 1 undecided, 2 disagreements, 1 can't tell, 1 without state → 55.
    assert!(stdout.contains("cases.jsonl: 55 cases\n"), "{stdout}");
    assert!(stdout.contains("recordings.jevl: 55 records\n"), "{stdout}");
    assert!(
        stdout.contains(
            "left out: 0 expired, 1 undecided, 2 disagreement, 1 can't tell, 1 state not kept\n"
        ),
        "{stdout}"
    );
    // The two slots' agreement per version and criterion: Scott's π, can't-tells beside it.
    let agreement = stdout
        .lines()
        .find(|line| line.starts_with(&format!("agreement {VERSION}/spam: ")))
        .unwrap_or_else(|| panic!("no agreement line: {stdout}"));
    assert!(
        agreement.contains("Scott's π") && agreement.contains("can't tell"),
        "{agreement}"
    );
    let cases = std::fs::read_to_string(out.join("cases.jsonl")).unwrap();
    let mut spam_cases = 0;
    for line in cases.lines() {
        let case: Value = serde_json::from_str(line).unwrap();
        assert_eq!(case["scenario"], VERSION);
        assert!(case["id"].as_str().unwrap().parse::<ReviewId>().is_ok());
        let spam = case["expected_findings"]["spam"].as_bool().unwrap();
        // `spam` is expected true: a case passes exactly when the message is spam.
        assert_eq!(case["expected_pass"], spam);
        spam_cases += usize::from(spam);
    }
    let expected_spam = labels
        .iter()
        .enumerate()
        .filter(|(i, spam)| **spam && ![3, 7, 10, 20, 59].contains(i))
        .count();
    assert_eq!(spam_cases, expected_spam);

    // The export replays offline and calibrates.
    let definition = root().join("examples/sms-spam/definition.toml");
    let report = dir.join("report.json");
    let eval = output(
        jevjudge()
            .arg("eval")
            .arg("--replay")
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
        matches!(eval.status.code(), Some(0 | 1)),
        "eval ran: {}",
        String::from_utf8_lossy(&eval.stderr)
    );
    let report_json: Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).expect("a JSON report");
    assert_eq!(report_json["overall"]["total"], 55, "{report_json}");
    assert_eq!(report_json["overall"]["errors"], 0, "every case replayed");
    let calibrate = output(
        jevjudge()
            .arg("calibrate")
            .arg("--report")
            .arg(&report)
            .arg("--definition")
            .arg(&definition)
            .arg("--json"),
    )
    .await;
    assert_eq!(
        calibrate.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&calibrate.stderr)
    );
    let calibrated: Value = serde_json::from_slice(&calibrate.stdout).unwrap();
    assert!(
        calibrated.to_string().contains("\"spam\""),
        "calibrated the spam criterion: {calibrated}"
    );

    // A store with nothing decided exports nothing and says so (exit 1, no files).
    let empty_db = dir.join("empty.db");
    Store::open(&StoreUrl::Sqlite(empty_db.clone()))
        .await
        .unwrap()
        .close()
        .await;
    let empty_out = dir.join("empty");
    let nothing = output(
        jevjudge()
            .args(["reviews", "export", "--labelled", "--store"])
            .arg(format!("sqlite:{}", empty_db.display()))
            .arg("--out")
            .arg(&empty_out),
    )
    .await;
    assert_eq!(nothing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&nothing.stderr).contains("no labelled review to export"));
    assert!(!empty_out.join("cases.jsonl").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
