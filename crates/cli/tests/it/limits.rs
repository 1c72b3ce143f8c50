//! Issue 11 end to end: the real binary against the fake server on 127.0.0.1 — a wrong key
//! stops the run after the requests already in flight, a spending cap stops it before the cap,
//! pacing keeps a run under a limit, and `--resume` finishes each.

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use jevjudge_fake::{Config, FakeServer};
use tokio::process::Command;

use jevjudge_test_support::{TempDir, example, read_json as read, stderr, temp_dir};

use crate::{exits, fake_server, fake_with_key, jevjudge};

fn cases(dir: &Path, n: usize) -> PathBuf {
    let path = dir.join("cases.jsonl");
    let text: String = (0..n)
        .map(|i| {
            format!(
                "{{\"scenario\":\"s\",\"id\":\"c{i:03}\",\"state\":{{\"n\":{i},\"text\":\"{}\"}},\"expected_pass\":true}}\n",
                "x".repeat(200)
            )
        })
        .collect();
    std::fs::write(&path, text).unwrap();
    path
}

/// A run's fixture: the fake it talks to, `n` generated cases in a fresh directory and where
/// the report goes.
struct Batch {
    server: FakeServer,
    cases: PathBuf,
    report: PathBuf,
    /// Holds the directory until the batch goes.
    _dir: TempDir,
}

impl Batch {
    /// [`cases`]`(n)` in a fresh directory `name`, for `server`.
    fn new(name: &str, n: usize, server: FakeServer) -> Batch {
        let dir = temp_dir(name);
        Batch {
            server,
            cases: cases(&dir, n),
            report: dir.join("out.json"),
            _dir: dir,
        }
    }

    /// `jevjudge eval` of the cases against the fake with the API key `key` and `extra`.
    fn eval(&self, key: &str, extra: &[&str]) -> Command {
        let mut command = jevjudge();
        command
            .env("TYPESAFE_API_KEY", key)
            .args(["eval", "--budget", "20s", "--definition"])
            .arg(example("refund/definition.toml"))
            .arg("--cases")
            .arg(&self.cases)
            .arg("--report")
            .arg(&self.report)
            .args(["--base-url", &self.server.url()])
            .args(extra);
        command
    }

    /// Runs [`Batch::eval`], which must exit with `code`; its output and the report it wrote.
    async fn eval_exits(
        &self,
        code: i32,
        key: &str,
        extra: &[&str],
    ) -> (std::process::Output, serde_json::Value) {
        let output = exits(&mut self.eval(key, extra), code).await;
        (output, read(&self.report))
    }
}

/// A fake that allows `rate` requests (like `40/s`) in bursts of `burst`, answering after
/// `latency`.
async fn rate_limited(rate: &str, burst: u32, latency: Duration) -> FakeServer {
    fake_server(Config {
        rate_limit: Some(rate.parse().unwrap()),
        burst: Some(burst),
        latency,
        ..Config::default()
    })
    .await
}

#[tokio::test]
async fn a_wrong_key_stops_the_run_and_resume_finishes_it_once_fixed() {
    let batch = Batch::new("limits-key", 40, fake_with_key("the-right-key").await);
    let (output, json) = batch
        .eval_exits(6, "a-wrong-key", &["--concurrency", "8"])
        .await;
    let text = stderr(&output);
    let stopped: Vec<&str> = text
        .lines()
        .filter(|line| line.starts_with("jevjudge: stopped:"))
        .collect();
    assert_eq!(stopped.len(), 1, "{}", stderr(&output));
    assert!(stopped[0].contains("HTTP 401"), "{}", stopped[0]);
    assert!(stopped[0].contains("--resume"), "{}", stopped[0]);
    assert!(!stderr(&output).contains("a-wrong-key"));
    // The adaptive limit starts at the ceiling, 8: at most 8 requests leave before the first
    // 401 comes back, and nothing is sent after it.
    let sent = batch.server.request_count();
    assert!((1..=8).contains(&sent), "{sent} requests");
    assert_eq!(json["complete"], false);
    assert_eq!(json["stopped"]["cause"], "key_refused");
    assert_eq!(json["stopped"]["status"], 401);
    assert_eq!(json["overall"]["total"], sent);
    assert_eq!(json["overall"]["attempts"]["by_status"]["401"], sent);

    let (_, json) = batch
        .eval_exits(
            0,
            "the-right-key",
            &["--concurrency", "8", "--resume", "--retry-errors"],
        )
        .await;
    assert_eq!(json["complete"], true);
    assert!(json.get("stopped").is_none());
    assert_eq!(json["overall"]["total"], 40);
    assert_eq!(json["overall"]["errors"], 0);
    assert_eq!(batch.server.request_count(), sent + 40);
    batch.server.shutdown().await;
}

#[tokio::test]
async fn a_token_cap_stops_before_it_is_passed_and_resume_continues() {
    let batch = Batch::new("limits-cap", 30, fake_server(Config::default()).await);
    let (output, json) = batch
        .eval_exits(
            7,
            "k",
            &["--concurrency", "4", "--max-input-tokens", "1500"],
        )
        .await;
    assert!(stderr(&output).contains("input-token cap of 1500"));
    assert_eq!(json["stopped"]["cause"], "input_token_cap");
    let spent = json["overall"]["input_tokens"].as_u64().unwrap();
    let total = json["overall"]["total"].as_u64().unwrap();
    assert!(spent <= 1500, "{spent}");
    assert!(
        spent + json["stopped"]["next_estimate"].as_u64().unwrap() > 1500,
        "stopped only when the next could pass"
    );
    assert!(total > 0 && total < 30, "{total}");
    assert_eq!(batch.server.request_count() as u64, total);

    // The cap covers the whole run: resumed with a larger one, it finishes.
    let resumed = [
        "--concurrency",
        "4",
        "--max-input-tokens",
        "100000",
        "--resume",
    ];
    let (_, json) = batch.eval_exits(0, "k", &resumed).await;
    assert_eq!(json["overall"]["total"], 30);
    assert_eq!(batch.server.request_count(), 30);
    batch.server.shutdown().await;
}

#[tokio::test]
async fn pacing_under_the_servers_limit_meets_no_429() {
    let server = rate_limited("50/s", 2, Duration::ZERO).await;
    let batch = Batch::new("limits-pace", 30, server);
    let paced = [
        "--concurrency",
        "8",
        "--fixed-concurrency",
        "--rate",
        "40/s",
    ];
    let (output, json) = batch.eval_exits(0, "k", &paced).await;
    let attempts = &json["overall"]["attempts"];
    assert_eq!(attempts["total"], 30);
    assert_eq!(attempts["retried"], 0);
    assert_eq!(attempts["by_status"], serde_json::json!({"200": 30}));
    assert!(
        String::from_utf8_lossy(&output.stdout)
            .contains("attempts: 30 attempts (0 retries): 200 ×30")
    );
    batch.server.shutdown().await;
}

#[tokio::test]
async fn adaptive_concurrency_finishes_a_rate_limited_run_without_errors() {
    let server = rate_limited("40/s", 4, Duration::from_millis(20)).await;
    let batch = Batch::new("limits-adapt", 40, server);
    let (_, json) = batch
        .eval_exits(0, "k", &["--concurrency", "16", "--retries", "8"])
        .await;
    assert_eq!(json["overall"]["errors"], 0);
    let attempts = &json["overall"]["attempts"];
    let by_status: u64 = attempts["by_status"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(attempts["total"].as_u64(), Some(by_status));
    assert_eq!(attempts["by_status"]["200"], 40);
    assert_eq!(batch.server.request_count() as u64, by_status);
    batch.server.shutdown().await;
}
