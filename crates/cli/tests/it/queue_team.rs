//! A team's queue through the CLI: two scripted reviewers disagree on a known set of
//! second-reviewed items; every disagreement reaches the lead, `reviews export --labelled`
//! writes the lead's labels, and `reviews decisions --disagreements` lists exactly them.

use std::{collections::BTreeMap, time::Duration};

use jevjudge_store::{
    AdjudicationClaim, Decision, Enqueue, KeptState, NewReview, QueueReason, ReviewId, Store,
    StoreUrl,
};
use jevjudge_test_support::{run as output, temp_dir};
use serde_json::{Value, json};

use crate::jevjudge;

const VERSION: &str = "team-v1";
const LEASE: Duration = Duration::from_secs(600);

fn decision(holds: bool, note: &str) -> Decision {
    Decision {
        findings: BTreeMap::from([("supported".to_owned(), Some(holds))]),
        note: Some(note.to_owned()),
    }
}

fn review(i: usize) -> NewReview {
    NewReview {
        id: ReviewId::new(),
        definition_version: VERSION.to_owned(),
        definition_digest: "sha256:team".to_owned(),
        state_digest: format!("sha256:{i}"),
        reference: None,
        status: "INCONCLUSIVE".to_owned(),
        error: "NONE".to_owned(),
        detail: None,
        findings: json!({"supported": {"status": "INCONCLUSIVE", "yes_probability": 0.5}}),
        model: Some("jev-test".to_owned()),
        usage: None,
        elapsed: Duration::from_millis(1),
        request_id: format!("req-{i}"),
        backend: "fake".to_owned(),
        kept: Some(KeptState {
            state: json!({"answer": format!("answer {i}")}),
            answers: json!({"supported": {"noul": 0.5}}).as_object().cloned(),
            requested_model: "jev-test".to_owned(),
        }),
        shadow_of: None,
        route: None,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_disagreement_reaches_the_lead_and_decisions_list_exactly_them() {
    let dir = temp_dir("queue-team");
    let db = dir.join("reviews.db");
    let store = Store::open(&StoreUrl::Sqlite(db.clone())).await.unwrap();
    let questions = json!({"supported": {"type": "noul", "instructions": "Supported?"}});
    store
        .put_definition("sha256:team", VERSION, &questions)
        .await
        .unwrap();
    store
        .put_definition_expected(
            "sha256:team",
            &BTreeMap::from([("supported".to_owned(), true)]),
        )
        .await
        .unwrap();
    let mut ids = Vec::new();
    for i in 0..12 {
        let review = review(i);
        ids.push(review.id.to_string());
        let enqueue = Enqueue {
            reason: QueueReason::Status,
            copies: 2,
        };
        store.insert_queued(&review, Some(&enqueue)).await.unwrap();
    }
    // ana says every answer is supported; ben disagrees on his 2nd, 5th and 11th item.
    for _ in 0..12 {
        let item = store.claim("ana", None, LEASE).await.unwrap().unwrap();
        store
            .decide(item.item, "ana", &decision(true, "ana"))
            .await
            .unwrap();
    }
    let mut disputed = Vec::new();
    for n in 0..12 {
        let item = store.claim("ben", None, LEASE).await.unwrap().unwrap();
        let disagree = [1, 4, 10].contains(&n);
        store
            .decide(item.item, "ben", &decision(!disagree, "ben"))
            .await
            .unwrap();
        if disagree {
            disputed.push(item.subject.review.review_id.to_string());
        }
    }
    // The lead sides with ben on each.
    let mut adjudicated = 0;
    while let AdjudicationClaim::Leased { adjudication, .. } = store
        .claim_adjudication_at("lea", LEASE, 5, false, std::time::SystemTime::now())
        .await
        .unwrap()
    {
        store
            .decide_adjudication_at(
                adjudication.item,
                "lea",
                &decision(false, "lea: ben is right"),
                std::time::SystemTime::now(),
            )
            .await
            .unwrap();
        adjudicated += 1;
    }
    assert_eq!(adjudicated, 3, "every disagreement reached the lead");
    store.close().await;
    let url = format!("sqlite:{}", db.display());

    let listed = output(jevjudge().args([
        "reviews",
        "decisions",
        "--store",
        &url,
        "--disagreements",
        "--json",
    ]))
    .await;
    assert!(
        listed.status.success(),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    let records: Vec<Value> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("one JSON object a line"))
        .collect();
    let mut listed_ids: Vec<String> = records
        .iter()
        .map(|record| record["review_id"].as_str().unwrap().to_owned())
        .collect();
    listed_ids.sort();
    disputed.sort();
    assert_eq!(listed_ids, disputed);
    for record in &records {
        assert_eq!(record["label_by"], json!(["lea"]));
        assert_eq!(record["label"]["supported"], false);
        let names: Vec<&str> = record["reviewers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["ana", "ben"]);
    }
    let all = output(jevjudge().args(["reviews", "decisions", "--store", &url])).await;
    assert!(all.status.success());
    let text = String::from_utf8_lossy(&all.stdout);
    assert_eq!(text.lines().count(), 12, "{text}");
    assert_eq!(text.matches("disagreement").count(), 3, "{text}");
    assert!(text.contains("→ supported=no by lea"), "{text}");
    assert!(text.contains("→ supported=yes by ana+ben"), "{text}");
    let version = output(jevjudge().args([
        "reviews",
        "decisions",
        "--store",
        &url,
        "--definition-version",
        "other",
    ]))
    .await;
    assert!(version.stdout.is_empty());

    // The labelled export carries the lead's labels.
    let out = dir.join("labelled");
    let exported = output(
        jevjudge()
            .args(["reviews", "export", "--store", &url, "--labelled", "--out"])
            .arg(&out),
    )
    .await;
    assert!(
        exported.status.success(),
        "{}",
        String::from_utf8_lossy(&exported.stderr)
    );
    let cases = std::fs::read_to_string(out.join("cases.jsonl")).unwrap();
    let mut seen = 0;
    for line in cases.lines() {
        let case: Value = serde_json::from_str(line).unwrap();
        let id = case["id"].as_str().unwrap();
        let supported = case["expected_findings"]["supported"].as_bool().unwrap();
        assert_eq!(supported, !disputed.iter().any(|d| d == id), "{id}");
        seen += 1;
    }
    assert_eq!(seen, 12, "{cases}");
    assert_eq!(ids.len(), 12);
}

/// `GET path` with a bearer token, by curl: the status code.
fn status_with(addr: &str, path: &str, token: &str) -> u16 {
    let output = std::process::Command::new("curl")
        .args(["-s", "-o", "/dev/null", "-w", "%{http_code}", "-H"])
        .arg(format!("Authorization: Bearer {token}"))
        .arg(format!("http://{addr}{path}"))
        .output()
        .expect("curl runs");
    String::from_utf8_lossy(&output.stdout)
        .trim()
        .parse()
        .expect("a status code")
}

/// `serve --reviewer-tokens-file`: SIGHUP reads the file again (a new token works, the old one
/// is refused, a new lead reads the decisions); a file that does not parse keeps the list and
/// the log names the entry, never a token. A short session secret is refused at start.
#[tokio::test(flavor = "multi_thread")]
async fn sighup_reloads_the_reviewer_file_and_a_bad_file_keeps_the_old_list() {
    use std::process::Stdio;

    use tokio::io::BufReader;

    let dir = temp_dir("queue-team-reviewers");
    let defs = dir.join("defs");
    std::fs::create_dir_all(&defs).unwrap();
    std::fs::copy(
        jevjudge_test_support::definition_file("refund-answer-v1"),
        defs.join("a.toml"),
    )
    .unwrap();
    let file = dir.join("reviewers.txt");
    std::fs::write(&file, "# team\nana:tok-ana-0123456789ab\n").unwrap();
    let db = format!("sqlite:{}", dir.join("reviews.db").display());
    let serve = |secret: &str| {
        let mut command = jevjudge();
        command
            .args(["serve", "--addr", "127.0.0.1:0", "--fake", "--definitions"])
            .arg(&defs)
            .args([
                "--store",
                &db,
                "--store-state",
                "--queue-statuses",
                "INCONCLUSIVE",
            ])
            .arg("--reviewer-tokens-file")
            .arg(&file)
            .args(["--session-secret-env", "JEVJUDGE_TEAM_SECRET"])
            .env("JEVJUDGE_TEAM_SECRET", secret);
        command
    };

    let refused = crate::serve::start_up_refused("short secret", &mut serve("SECRET-short")).await;
    assert!(refused.contains("--session-secret-env"), "{refused}");
    assert!(refused.contains("at least 32 bytes"), "{refused}");
    assert!(!refused.contains("SECRET-short"), "{refused}");

    let log = dir.join("serve.log");
    let mut child = serve(&"s".repeat(40))
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let pid = child.id().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let addr = jevjudge_test_support::listening_on(&mut stdout).await;
    assert_eq!(
        status_with(&addr, "/v1/queue/mine", "tok-ana-0123456789ab"),
        200
    );
    assert_eq!(
        status_with(&addr, "/v1/queue/mine", "tok-lea-0123456789ab"),
        401
    );

    std::fs::write(
        &file,
        "ana:tok-ana-NEW-456789ab\nlea:tok-lea-0123456789ab:lead\n",
    )
    .unwrap();
    let hup = std::process::Command::new("kill")
        .args(["-HUP", &pid.to_string()])
        .status()
        .unwrap();
    assert!(hup.success());
    let mut reloaded = false;
    for _ in 0..100 {
        if status_with(&addr, "/v1/queue/decisions", "tok-lea-0123456789ab") == 200 {
            reloaded = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(reloaded, "the new lead reads the decisions after SIGHUP");
    assert_eq!(
        status_with(&addr, "/v1/queue/mine", "tok-ana-NEW-456789ab"),
        200
    );
    assert_eq!(
        status_with(&addr, "/v1/queue/mine", "tok-ana-0123456789ab"),
        401
    );

    std::fs::write(&file, "ana:TINY\n").unwrap();
    let hup = std::process::Command::new("kill")
        .args(["-HUP", &pid.to_string()])
        .status()
        .unwrap();
    assert!(hup.success());
    let mut text = String::new();
    for _ in 0..100 {
        text = std::fs::read_to_string(&log).unwrap();
        if text.contains("reviewer reload refused") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(text.contains("reviewer reload refused"), "{text}");
    assert!(text.contains("`ana`") && !text.contains("TINY"), "{text}");
    assert_eq!(
        status_with(&addr, "/v1/queue/mine", "tok-ana-NEW-456789ab"),
        200
    );

    jevjudge_test_support::sigterm(pid);
    let exit = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("the server exits")
        .unwrap();
    assert_eq!(exit.code(), Some(0));
}
