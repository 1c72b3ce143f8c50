//! The real binary with a review queue (issue 13): the queue flags are refused without a store
//! that keeps state, naming the missing flag; `kill -HUP` reloads the definitions, and a bad new
//! set is refused with a log line while the old one keeps serving.

use std::{process::Stdio, time::Duration};

use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _, BufReader};

use jevjudge_test_support::{definition_file, listening_on, post, root, sigterm, temp_dir};

use crate::{fake_server, jevjudge_keyed as jevjudge};

/// One HTTP/1.1 GET over a fresh connection: (status, body).
async fn get(addr: &str, path: &str) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connects");
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("sends");
    let mut response = String::new();
    tokio::time::timeout(
        Duration::from_secs(20),
        stream.read_to_string(&mut response),
    )
    .await
    .expect("an answer within 20 s")
    .expect("reads");
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP response: {response}"));
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default();
    (status, body)
}

fn versions(body: &str) -> Vec<String> {
    let value: Value = serde_json::from_str(body).expect("JSON");
    value["definitions"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|d| d["version"].as_str().expect("a version").to_owned())
        .collect()
}

fn sighup(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-HUP", &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -HUP {pid}: {status}");
}

#[tokio::test(flavor = "multi_thread")]
async fn queue_flags_without_a_store_keeping_state_are_exit_2_naming_the_flag() {
    let dir = temp_dir("queue-refused");
    std::fs::copy(
        root().join("examples/refund/definition.toml"),
        dir.join("refund.toml"),
    )
    .unwrap();
    let store = format!("sqlite:{}", dir.join("reviews.db").display());
    for (extra, named, not_named) in [
        (
            vec!["--queue-statuses", "INCONCLUSIVE"],
            "needs --store URL and --store-state",
            "",
        ),
        (
            vec!["--sample-pass", "0.1", "--store", &store],
            "needs --store-state",
            "--store URL",
        ),
        (
            vec![
                "--queue-statuses",
                "INCONCLUSIVE",
                "--store",
                &store,
                "--store-state",
            ],
            "--reviewer-tokens-env VAR",
            "",
        ),
        (
            vec![
                "--queue-statuses",
                "INCONCLUSIVE",
                "--store",
                &store,
                "--store-state",
                "--reviewer-tokens-env",
                "JEVJUDGE_TEST_REVIEWERS",
            ],
            "entry 2 is not name:token",
            "tok-SECRET",
        ),
    ] {
        let output = tokio::time::timeout(
            Duration::from_secs(30),
            jevjudge()
                .args(["serve", "--addr", "127.0.0.1:0", "--definitions"])
                .arg(&dir)
                .args(&extra)
                .env("JEVJUDGE_TEST_REVIEWERS", "ana:tok-SECRET,bob")
                .output(),
        )
        .await
        .expect("start-up fails within 30 s")
        .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(output.stdout.is_empty(), "nothing is served");
        assert!(stderr.contains(named), "{extra:?}: {stderr}");
        assert!(
            not_named.is_empty() || !stderr.contains(not_named),
            "{extra:?}: {stderr}"
        );
    }
    assert!(
        !dir.join("reviews.db").exists(),
        "no store is created for a refused configuration"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread")]
async fn sighup_reloads_the_definitions_and_a_bad_set_keeps_the_old_one() {
    let fake = fake_server(jevjudge_fake::Config::default()).await;
    let dir = temp_dir("queue-sighup");
    std::fs::copy(definition_file("refund-answer-v1"), dir.join("a.toml")).unwrap();
    let log = dir.join("serve.log");
    let mut child = jevjudge()
        .args(["serve", "--addr", "127.0.0.1:0", "--definitions"])
        .arg(&dir)
        .args(["--base-url", &fake.url()])
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let pid = child.id().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let addr = listening_on(&mut stdout).await;
    let (status, body) = get(&addr, "/v1/definitions").await;
    assert_eq!(status, 200);
    assert_eq!(versions(&body), ["refund-answer-v1"]);

    // A second version appears: after SIGHUP it is served.
    std::fs::copy(definition_file("support-draft-v1"), dir.join("b.toml")).unwrap();
    sighup(pid);
    let mut seen = Vec::new();
    for _ in 0..100 {
        seen = versions(&get(&addr, "/v1/definitions").await.1);
        if seen.len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(seen, ["refund-answer-v1", "support-draft-v1"]);
    let state = std::fs::read_to_string(root().join("examples/refund/state.json")).unwrap();
    let (status, served) = post(
        &addr,
        "/v1/reviews/support-draft-v1",
        &format!(r#"{{"state": {state}}}"#),
    )
    .await;
    assert_eq!(status, 200, "{served}");

    // A bad set (a file that does not load) is refused; the old set keeps serving.
    std::fs::write(dir.join("c.toml"), "version = \"\"\n").unwrap();
    std::fs::remove_file(dir.join("a.toml")).unwrap();
    sighup(pid);
    let mut refused = String::new();
    for _ in 0..100 {
        refused = std::fs::read_to_string(&log).unwrap();
        if refused.contains("reload refused") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(refused.contains("reload refused"), "{refused}");
    assert!(
        refused.contains("c.toml"),
        "the log line names the file: {refused}"
    );
    let (status, body) = get(&addr, "/v1/definitions").await;
    assert_eq!(status, 200);
    assert_eq!(versions(&body), ["refund-answer-v1", "support-draft-v1"]);
    let (status, served) = post(
        &addr,
        "/v1/reviews/refund-answer-v1",
        &format!(r#"{{"state": {state}}}"#),
    )
    .await;
    assert_eq!(status, 200, "the old set still serves: {served}");

    sigterm(pid);
    let exit = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("the server exits")
        .unwrap();
    assert_eq!(exit.code(), Some(0));
    let _ = std::fs::remove_dir_all(&dir);
}
