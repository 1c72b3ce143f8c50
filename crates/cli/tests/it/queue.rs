//! The real binary with a review queue: the queue flags are refused without a store
//! that keeps state, naming the missing flag; `kill -HUP` reloads the definitions, and a bad new
//! set is refused with a log line while the old one keeps serving.

use std::{process::Stdio, time::Duration};

use serde_json::Value;
use tokio::io::BufReader;

use jevjudge_test_support::{
    definition_file, expect::contains_of, get, listening_on, post, root, sigterm, temp_dir,
};

use crate::{
    fake_server, jevjudge_keyed as jevjudge,
    serve::{refund_definitions, serve_definitions, start_up_refused},
};

/// The versions `GET /v1/definitions` lists, which must answer 200.
async fn served_versions(addr: &str) -> Vec<String> {
    let (status, body) = get(addr, "/v1/definitions").await;
    assert_eq!(status, 200, "{body}");
    versions(&body)
}

/// `POST /v1/reviews/VERSION` of `state` (JSON text): (status, body).
async fn review(addr: &str, version: &str, state: &str) -> (u16, String) {
    post(
        addr,
        &format!("/v1/reviews/{version}"),
        &format!(r#"{{"state": {state}}}"#),
    )
    .await
}

/// Calls `probe` until `done` holds of what it returns, every 50 ms and 100 times at the
/// most; what it returned last.
async fn poll<T, F: Future<Output = T>>(
    mut probe: impl FnMut() -> F,
    done: impl Fn(&T) -> bool,
) -> T {
    let mut last = probe().await;
    for _ in 1..100 {
        if done(&last) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        last = probe().await;
    }
    last
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
    let dir = refund_definitions("queue-refused");
    let store = format!("sqlite:{}", dir.join("reviews.db").display());
    // A queue over a store that keeps state, but nobody to claim its items yet.
    let stateful = [
        "--queue-statuses",
        "INCONCLUSIVE",
        "--store",
        &store,
        "--store-state",
    ];
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
        (stateful.to_vec(), "--reviewer-tokens-env VAR", ""),
        (
            [
                &stateful[..],
                &["--reviewer-tokens-env", "JEVJUDGE_TEST_REVIEWERS"],
            ]
            .concat(),
            "entry 2 is not name:token",
            "tok-SECRET",
        ),
    ] {
        let case = format!("{extra:?}");
        let mut command = serve_definitions(&dir);
        command
            .args(&extra)
            .env("JEVJUDGE_TEST_REVIEWERS", "ana:tok-SECRET-0123456789,bob");
        let stderr = start_up_refused(&case, &mut command).await;
        contains_of(&case, &stderr, named);
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
async fn tokens_under_16_characters_are_exit_2_naming_the_variable_or_reviewer_never_the_token() {
    let dir = refund_definitions("short-tokens");
    let store = format!("sqlite:{}", dir.join("reviews.db").display());
    let reviewers = [
        "--queue-statuses",
        "INCONCLUSIVE",
        "--store",
        &store,
        "--store-state",
        "--reviewer-tokens-env",
        "JEVJUDGE_TEST_REVIEWERS",
    ];
    for (extra, variable, value, named) in [
        (
            &["--auth-token-env", "JEVJUDGE_TEST_CALLERS"][..],
            "JEVJUDGE_TEST_CALLERS",
            "SECRET-short",
            "--auth-token-env: JEVJUDGE_TEST_CALLERS: token 1 of the list is shorter than 16 characters",
        ),
        (
            &reviewers[..],
            "JEVJUDGE_TEST_REVIEWERS",
            "ana:SECRET-ana-0123456789,bob:SECRET-bob",
            "--reviewer-tokens-env: JEVJUDGE_TEST_REVIEWERS: entry 2 (reviewer `bob`): the token is shorter than 16 characters",
        ),
        (
            &reviewers[..],
            "JEVJUDGE_TEST_REVIEWERS",
            "ana:SECRET:0123456789abcdef",
            "entry 1 (reviewer `ana`): the token holds `:`",
        ),
    ] {
        let case = format!("{extra:?} {variable}");
        let mut command = serve_definitions(&dir);
        command.args(extra).env(variable, value);
        let stderr = start_up_refused(&case, &mut command).await;
        contains_of(&case, &stderr, named);
        assert!(!stderr.contains("SECRET"), "{case}: {stderr}");
    }
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
    assert_eq!(served_versions(&addr).await, ["refund-answer-v1"]);

    // A second version appears: after SIGHUP it is served.
    std::fs::copy(definition_file("support-draft-v1"), dir.join("b.toml")).unwrap();
    sighup(pid);
    let seen = poll(
        || async { versions(&get(&addr, "/v1/definitions").await.1) },
        |seen| seen.len() == 2,
    )
    .await;
    assert_eq!(seen, ["refund-answer-v1", "support-draft-v1"]);
    let state = std::fs::read_to_string(root().join("examples/refund/state.json")).unwrap();
    let (status, served) = review(&addr, "support-draft-v1", &state).await;
    assert_eq!(status, 200, "{served}");

    // A bad set (a file that does not load) is refused; the old set keeps serving.
    std::fs::write(dir.join("c.toml"), "version = \"\"\n").unwrap();
    std::fs::remove_file(dir.join("a.toml")).unwrap();
    sighup(pid);
    let refused = poll(
        || async { std::fs::read_to_string(&log).unwrap() },
        |text| text.contains("reload refused"),
    )
    .await;
    assert!(refused.contains("reload refused"), "{refused}");
    assert!(
        refused.contains("c.toml"),
        "the log line names the file: {refused}"
    );
    assert_eq!(
        served_versions(&addr).await,
        ["refund-answer-v1", "support-draft-v1"]
    );
    let (status, served) = review(&addr, "refund-answer-v1", &state).await;
    assert_eq!(status, 200, "the old set still serves: {served}");

    sigterm(pid);
    let exit = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("the server exits")
        .unwrap();
    assert_eq!(exit.code(), Some(0));
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sighup_right_after_the_listening_line_never_kills_serve() {
    let dir = temp_dir("queue-early-sighup");
    std::fs::copy(definition_file("refund-answer-v1"), dir.join("a.toml")).unwrap();
    // Every handler is installed before the line is printed: a SIGHUP sent the moment it is
    // read (before, the reload handler was installed by a task spawned after it) reloads.
    for start in 1..=10 {
        let mut child = jevjudge()
            .args(["serve", "--addr", "127.0.0.1:0", "--fake", "--definitions"])
            .arg(&dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let pid = child.id().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let addr = listening_on(&mut stdout).await;
        sighup(pid);
        assert_eq!(
            served_versions(&addr).await,
            ["refund-answer-v1"],
            "start {start}: serve answers after an early SIGHUP"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "start {start}: serve is still running"
        );
        sigterm(pid);
        let exit = tokio::time::timeout(Duration::from_secs(20), child.wait())
            .await
            .expect("the server exits")
            .unwrap();
        assert_eq!(exit.code(), Some(0), "start {start}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
