//! The files `reviews export` writes hold state text: they are made private (0600) under a fresh
//! name in `--out DIR` and renamed into place, never written through a link planted there, and
//! an export with nothing to export leaves earlier files alone (exit 1).

use std::{
    collections::BTreeMap,
    os::unix::fs::PermissionsExt,
    path::{Path, PathBuf},
    time::Duration,
};

use jevjudge_store::{
    Decision, Enqueue, KeptState, NewReview, QueueReason, ReviewId, Store, StoreUrl,
};
use jevjudge_test_support::{expect, root, run, stderr, stdout, temp_dir};
use jevjudge_wire::record::parse_line;
use serde_json::{Value, json};

use crate::jevjudge;

const VERSION: &str = "sms-spam-0.1.0";

/// An SQLite store in `dir` holding one review of the sms-spam recording with its state kept,
/// queued once and decided by one reviewer.
async fn store_with_one_decided_review(dir: &Path) -> String {
    let db = dir.join("reviews.db");
    let store = Store::open(&StoreUrl::Sqlite(db.clone())).await.unwrap();
    let line = std::fs::read_to_string(root().join("examples/sms-spam/recordings.jevl"))
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_owned();
    let record = parse_line(&line).unwrap();
    let questions = Value::Object(record.request.questions.clone());
    store
        .put_definition("sha256:sms", VERSION, &questions)
        .await
        .unwrap();
    store
        .put_definition_expected("sha256:sms", &BTreeMap::from([("spam".to_owned(), true)]))
        .await
        .unwrap();
    let review = NewReview {
        id: ReviewId::new(),
        definition_version: VERSION.to_owned(),
        definition_digest: "sha256:sms".to_owned(),
        state_digest: "sha256:0".to_owned(),
        reference: None,
        status: "INCONCLUSIVE".to_owned(),
        error: "NONE".to_owned(),
        detail: None,
        findings: json!({"spam": {"status": "INCONCLUSIVE", "yes_probability": 0.5,
                                  "expected_probability": 0.5}}),
        model: Some(record.model.clone()),
        usage: None,
        elapsed: Duration::from_millis(1),
        request_id: "req-0".to_owned(),
        backend: "replay".to_owned(),
        kept: Some(KeptState {
            state: record.request.state.clone(),
            answers: Some(record.answers.clone()),
            requested_model: record.model.clone(),
        }),
        shadow_of: None,
        route: None,
    };
    let enqueue = Enqueue {
        reason: QueueReason::Status,
        copies: 1,
    };
    store.insert_queued(&review, Some(&enqueue)).await.unwrap();
    let claimed = store
        .claim("ana", None, Duration::from_secs(600))
        .await
        .unwrap()
        .unwrap();
    let decision = Decision {
        findings: BTreeMap::from([("spam".to_owned(), Some(true))]),
        note: None,
    };
    store.decide(claimed.item, "ana", &decision).await.unwrap();
    store.close().await;
    format!("sqlite:{}", db.display())
}

/// An empty SQLite store in `dir`.
async fn empty_store(dir: &Path) -> String {
    let db = dir.join("empty.db");
    Store::open(&StoreUrl::Sqlite(db.clone()))
        .await
        .unwrap()
        .close()
        .await;
    format!("sqlite:{}", db.display())
}

async fn export(store: &str, out: &Path, labelled: bool) -> std::process::Output {
    let mut command = jevjudge();
    command
        .args(["reviews", "export", "--store", store, "--out"])
        .arg(out);
    if labelled {
        command.arg("--labelled");
    }
    run(&mut command).await
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// The names in `dir` other than `keep`: what an export left behind.
fn leftovers(dir: &Path, keep: &[&str]) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| !keep.iter().any(|name| path.ends_with(name)))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_plain_export_with_nothing_to_export_exits_1_and_keeps_the_earlier_file() {
    let dir = temp_dir("export-nothing");
    let store = empty_store(&dir).await;
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("recordings.jevl"), "an earlier export\n").unwrap();
    for labelled in [false, true] {
        let output = export(&store, &out, labelled).await;
        expect::exit_code(&output, 1);
        expect::contains(&stderr(&output), "nothing written");
        assert_eq!(
            std::fs::read_to_string(out.join("recordings.jevl")).unwrap(),
            "an earlier export\n",
            "labelled: {labelled}"
        );
        assert_eq!(leftovers(&out, &["recordings.jevl"]), Vec::<PathBuf>::new());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread")]
async fn exports_never_write_through_a_planted_symlink_and_are_private() {
    let dir = temp_dir("export-symlink");
    let store = store_with_one_decided_review(&dir).await;
    let victim = dir.join("victim.txt");
    std::fs::write(&victim, "must stay\n").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
    for labelled in [false, true] {
        let out = dir.join(if labelled { "labelled" } else { "plain" });
        std::fs::create_dir_all(&out).unwrap();
        // Links at the final names and at the names the previous export used for its partial
        // files: none of them may be opened.
        for name in [
            "recordings.jevl",
            "cases.jsonl",
            ".recordings.jevl.partial",
            ".cases.jsonl.partial",
        ] {
            std::os::unix::fs::symlink(&victim, out.join(name)).unwrap();
        }
        let output = export(&store, &out, labelled).await;
        expect::exit_code(&output, 0);
        expect::contains(&stdout(&output), "recordings.jevl: 1 record");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "must stay\n");
        assert_eq!(mode(&victim), 0o644, "the target's mode is untouched");
        let mut written = vec!["recordings.jevl"];
        if labelled {
            written.push("cases.jsonl");
        }
        for name in written {
            let path = out.join(name);
            let meta = std::fs::symlink_metadata(&path).unwrap();
            assert!(meta.file_type().is_file(), "{name} replaced the link");
            assert_eq!(mode(&path), 0o600, "{name} is readable by its owner only");
            let text = std::fs::read_to_string(&path).unwrap();
            assert_eq!(text.lines().count(), 1, "{name}: {text}");
        }
        // The planted partial-name links stay links to the untouched victim.
        assert!(
            std::fs::symlink_metadata(out.join(".recordings.jevl.partial"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_export_whose_summary_cannot_be_printed_exits_8_with_its_files_written() {
    let dir = temp_dir("export-stdout-full");
    let store = store_with_one_decided_review(&dir).await;
    let out = dir.join("out");
    let mut command = jevjudge();
    command
        .args(["reviews", "export", "--store", &store, "--out"])
        .arg(&out)
        .stdout(
            std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap(),
        )
        .stderr(std::process::Stdio::piped());
    // `output()` would capture standard output: spawn, so /dev/full stays standard output.
    let output = command.spawn().unwrap().wait_with_output().await.unwrap();
    expect::exit_code(&output, 8);
    expect::contains(&stderr(&output), "cannot write to standard output");
    assert_eq!(
        std::fs::read_to_string(out.join("recordings.jevl"))
            .unwrap()
            .lines()
            .count(),
        1
    );
    let _ = std::fs::remove_dir_all(&dir);
}
