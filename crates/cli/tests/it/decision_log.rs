//! The real binary with a decision log: `serve --store sqlite:… --store-state` answers with a
//! `review_id`, `reviews list` finds it by reference, `reviews export` writes records that
//! `judge --replay` reproduces offline, `store migrate` is idempotent; bad store URLs are exit 2.

use jevjudge_fake::Config;
use serde_json::Value;

use jevjudge_test_support::{root, run as output, temp_dir};

use crate::{
    fake_server, jevjudge_keyed as jevjudge,
    serve::{assert_replay_matches, refund_definitions, serve_one_review},
};

#[tokio::test(flavor = "multi_thread")]
async fn served_reviews_are_listed_and_export_as_replayable_records() {
    let fake = fake_server(Config::default()).await;
    let dir = refund_definitions("dlog-export");
    let store = format!("sqlite:{}", dir.join("reviews.db").display());

    let migrated = output(jevjudge().args(["store", "migrate", "--store", &store])).await;
    assert!(migrated.status.success());
    assert!(
        String::from_utf8_lossy(&migrated.stdout).contains(&format!(
            "migrated schema version 0 → {}",
            jevjudge_store::SCHEMA_VERSION
        )),
        "{}",
        String::from_utf8_lossy(&migrated.stdout)
    );

    let serve_flags = ["--store", &store, "--store-state", "--retain-state", "30d"];
    let reference = r#", "reference": "ticket-4711""#;
    let served = serve_one_review(&dir, &fake, &serve_flags, reference).await;
    let review_id = served["review_id"]
        .as_str()
        .expect("a review_id")
        .to_owned();

    let listed = output(jevjudge().args([
        "reviews",
        "list",
        "--store",
        &store,
        "--reference",
        "ticket-4711",
        "--json",
    ]))
    .await;
    assert!(
        listed.status.success(),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    let page: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(page["reviews"].as_array().unwrap().len(), 1);
    assert_eq!(page["reviews"][0]["review_id"], review_id.as_str());
    assert_eq!(page["reviews"][0]["status"], served["status"]);
    assert_eq!(page["reviews"][0]["state_kept"], true);
    let text = output(jevjudge().args(["reviews", "list", "--store", &store])).await;
    assert!(String::from_utf8_lossy(&text.stdout).contains(&review_id));
    assert!(String::from_utf8_lossy(&text.stderr).contains("1 review; no more"));

    let out = dir.join("export");
    let exported = output(
        jevjudge()
            .args(["reviews", "export", "--store", &store, "--out"])
            .arg(&out),
    )
    .await;
    assert!(
        exported.status.success(),
        "{}",
        String::from_utf8_lossy(&exported.stderr)
    );
    assert!(String::from_utf8_lossy(&exported.stdout).ends_with(": 1 record\n"));
    let record = out.join("recordings.jevl");

    // The service reviewed against jevjudge's fake server, so the exported record replays as
    // `fake`.
    assert_replay_matches(served, &record, &fake).await;

    let again = output(jevjudge().args(["store", "migrate", "--store", &store])).await;
    assert!(String::from_utf8_lossy(&again.stdout).contains("is current; nothing to do"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn bad_store_urls_are_exit_2_and_passwords_never_shown() {
    let bad = output(jevjudge().args(["reviews", "list", "--store", "mysql://x"])).await;
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("sqlite:PATH or postgresql://"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
    let missing = output(jevjudge().args([
        "reviews",
        "export",
        "--store",
        "sqlite:/nonexistent-jevjudge/reviews.db",
        "--out",
        "/tmp",
    ]))
    .await;
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no such file"));
    // A database of an older schema is read by no command until it is migrated, and the
    // error names the command that migrates it.
    let old = temp_dir("dlog-outdated");
    let copy = old.join("v2.sqlite");
    std::fs::copy(root().join("crates/store/tests/fixtures/v2.sqlite"), &copy).unwrap();
    let outdated = output(
        jevjudge()
            .args(["reviews", "list", "--store"])
            .arg(format!("sqlite:{}", copy.display())),
    )
    .await;
    assert_eq!(outdated.status.code(), Some(2));
    let said = String::from_utf8_lossy(&outdated.stderr);
    assert!(said.contains("older than this jevjudge needs"), "{said}");
    assert!(
        said.contains(": run `jevjudge store migrate --store sqlite:"),
        "{said}"
    );
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let dead = output(jevjudge().args([
        "store",
        "migrate",
        "--store",
        &format!("postgresql://app:s3cret-pw@127.0.0.1:{port}/j"),
    ]))
    .await;
    assert_eq!(dead.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&dead.stderr);
    assert!(stderr.contains("the store is unavailable"), "{stderr}");
    assert!(!stderr.contains("s3cret-pw"), "{stderr}");
}
