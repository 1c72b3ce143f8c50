//! The sms-spam recording (real answers of `jev-1.13.0`) served under a route with its
//! calibrated version as a shadow: 150 states posted reach the backend 150 times, not 300
//! (the shadow is scored on the live answers), and once people labelled the queued reviews,
//! the shadow report's figures are `compare`'s on the two versions' `eval` reports of the same
//! cases, cell for cell. `jevjudge routes shadow --json` prints the same document.

use std::{collections::HashMap, io::BufReader, process::Stdio, time::Duration};

use jevjudge_fake::{Config, Replay};
use jevjudge_store::{Decision, Filter, Store, StoreUrl};
use jevjudge_test_support::{example, get, listening_on, post, run, stdout_json, temp_dir};
use serde_json::{Value, json};
use tokio::io::BufReader as AsyncBufReader;

use crate::{fake_server, jevjudge, serve::stop_cleanly};

const MODEL: &str = "jev-1.13.0";

/// `jevjudge eval` of the sms-spam cases with `definition`, replayed: the report's path.
async fn eval(definition: &std::path::Path, report: &std::path::Path) {
    let output = run(jevjudge()
        .arg("eval")
        .arg("--definition")
        .arg(definition)
        .arg("--cases")
        .arg(example("sms-spam/cases.jsonl"))
        .arg("--replay")
        .arg(example("sms-spam/recordings.jevl"))
        .args(["--model", MODEL, "--report"])
        .arg(report))
    .await;
    assert!(
        report.exists(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_calibrated_shadow_on_the_sms_spam_replay_costs_no_request_and_reports_compares_cells() {
    let work = temp_dir("shadow-show");
    let definitions = work.join("definitions");
    std::fs::create_dir(&definitions).unwrap();
    let live_definition = definitions.join("sms-spam.toml");
    std::fs::copy(example("sms-spam/definition.toml"), &live_definition).unwrap();

    // The calibrated version, as the review loop makes it, and compare of the two evals.
    eval(&live_definition, &work.join("live.json")).await;
    let calibrated = definitions.join("sms-spam-calibrated.toml");
    let output = run(jevjudge()
        .args(["calibrate", "--report"])
        .arg(work.join("live.json"))
        .arg("--definition")
        .arg(&live_definition)
        .arg("--write-definition")
        .arg(&calibrated)
        .args([
            "--min-pass-precision",
            "0.8",
            "--min-fail-precision",
            "0.8",
            "--max-abstain",
            "0.5",
        ]))
    .await;
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let shadow = "sms-spam-0.1.0+cal.1";
    eval(&calibrated, &work.join("cal.json")).await;
    let output = run(jevjudge()
        .arg("compare")
        .arg(work.join("live.json"))
        .arg(work.join("cal.json"))
        .arg("--json"))
    .await;
    let compared = stdout_json(&output);

    // The recording behind a System One fake, so every backend request is counted.
    let file = std::fs::File::open(example("sms-spam/recordings.jevl")).unwrap();
    let records = jevjudge_wire::record::read_records(BufReader::new(file)).unwrap();
    let (replay, _) = Replay::from_records_for_model(records, Some(MODEL)).unwrap();
    let fake = fake_server(Config {
        replay: Some(replay),
        ..Config::default()
    })
    .await;
    let routes = work.join("routes.toml");
    std::fs::write(
        &routes,
        format!(
            "[[route]]\nname = \"sms-spam\"\nlive = \"sms-spam-0.1.0\"\nshadows = [\"{shadow}\"]\n"
        ),
    )
    .unwrap();
    let db = work.join("reviews.db");
    let store_url = format!("sqlite:{}", db.display());
    let mut child = crate::jevjudge_keyed()
        .args(["serve", "--addr", "127.0.0.1:0", "--definitions"])
        .arg(&definitions)
        .args(["--base-url", &fake.url(), "--model", MODEL])
        .args(["--store", &store_url, "--store-state", "--routes"])
        .arg(&routes)
        .args([
            "--queue-statuses",
            "INCONCLUSIVE,FAIL",
            "--sample-pass",
            "1",
        ])
        .args(["--reviewer-tokens-env", "SHOW_REVIEWERS"])
        .env("SHOW_REVIEWERS", "labeller:tok-labeller-0123456789abcdef")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = AsyncBufReader::new(child.stdout.take().unwrap());
    let addr = listening_on(&mut stdout).await;

    let cases: Vec<Value> = std::fs::read_to_string(example("sms-spam/cases.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(cases.len(), 150);
    for case in &cases {
        let body = json!({"state": case["state"], "reference": case["id"]});
        let (status, answer) = post(&addr, "/v1/reviews/sms-spam", &body.to_string()).await;
        assert_eq!(status, 200, "{answer}");
    }
    let store = Store::open_existing(&store_url.parse::<StoreUrl>().unwrap())
        .await
        .unwrap();
    let every = Filter {
        shadow: true,
        ..Filter::default()
    };
    for _ in 0..1000 {
        if store.count(&every).await.unwrap() == 300 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        store.count(&every).await.unwrap(),
        300,
        "150 live and 150 shadow rows"
    );
    assert_eq!(fake.request_count(), 150, "backend requests: 150, not 300");

    // People label every queued review (played by the corpus's labels).
    let labels: HashMap<String, Value> = cases
        .iter()
        .map(|case| {
            let id = case["id"].as_str().unwrap().to_owned();
            (id, case["expected_findings"].clone())
        })
        .collect();
    let mut decided = 0;
    while let Some(item) = store
        .claim("labeller", None, Duration::from_secs(60))
        .await
        .unwrap()
    {
        let reference = item.subject.review.reference.clone().unwrap();
        let findings = labels[&reference]
            .as_object()
            .unwrap()
            .iter()
            .map(|(id, label)| (id.clone(), label.as_bool()))
            .collect();
        let decision = Decision {
            findings,
            note: None,
        };
        store
            .decide(item.item, "labeller", &decision)
            .await
            .unwrap();
        decided += 1;
    }
    assert_eq!(decided, 150, "every live review was queued, no shadow was");

    let (status, body) = get(&addr, "/v1/routes/sms-spam/shadow").await;
    assert_eq!(status, 200, "{body}");
    let report: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(report["reviews"], 150);
    assert_eq!(report["shadow_input_tokens"], 0);
    assert_eq!(report["labelled"]["cases"], 150);
    let shadowed = &report["labelled"]["compare"];
    for field in [
        "pairs",
        "transitions",
        "regressions",
        "fixes",
        "mcnemar_p",
        "new_incorrect",
        "new_false_pass",
        "changes",
    ] {
        assert_eq!(shadowed[field], compared[field], "{field}");
    }
    for side in ["base", "candidate"] {
        for field in [
            "total",
            "correct",
            "incorrect",
            "abstained",
            "errors",
            "accuracy",
            "weighted",
            "risk",
        ] {
            assert_eq!(
                shadowed[side][field], compared[side][field],
                "{side}.{field}"
            );
        }
    }
    // Over all the shadowed reviews (labelled or not), the same flips.
    assert_eq!(report["transitions"], compared["transitions"]);

    // The command line prints the same document from the store.
    let output = run(jevjudge().args([
        "routes", "shadow", "--store", &store_url, "--route", "sms-spam", "--json",
    ]))
    .await;
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(stdout_json(&output), report);
    stop_cleanly(&mut child, 20).await;
}
