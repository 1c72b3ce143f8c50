//! A bounded load against a fake System One server on 127.0.0.1, to see what a client sees
//! against `--rate-limit`: `CONCURRENCY` workers send the same small request back to back for
//! `SECONDS` (no retries, no pacing) and the example prints the attempts by status, the 429
//! share, and the request and answer rates.
//!
//! ```text
//! jevjudge fake-server --addr 127.0.0.1:0 --rate-limit 200/s   # prints its URL
//! cargo run -p jevjudge-fake --example rate_limit_load -- http://127.0.0.1:PORT 32 10
//! ```

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let url = args
        .next()
        .ok_or("usage: rate_limit_load URL [CONCURRENCY] [SECONDS]")?;
    let loopback = ["http://127.0.0.1:", "http://localhost:", "http://[::1]:"];
    if !loopback.iter().any(|prefix| url.starts_with(prefix)) {
        return Err("the load runs against a loopback fake only (http://127.0.0.1:PORT)".into());
    }
    let concurrency: usize = args.next().map_or(Ok(32), |n| n.parse())?;
    let seconds: u64 = args.next().map_or(Ok(10), |n| n.parse())?;
    if !(1..=256).contains(&concurrency) || !(1..=120).contains(&seconds) {
        return Err("CONCURRENCY must be 1..=256 and SECONDS 1..=120".into());
    }
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(10))
        .build()?;
    let endpoint = format!("{}/v1/systemone", url.trim_end_matches('/'));
    let body = r#"{"model":"jev-latest","state":"I was charged twice.","questions":{"refund":{"type":"noul","instructions":"Is this a refund request?"}}}"#;
    let started = Instant::now();
    let until = started + Duration::from_secs(seconds);
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..concurrency {
        let client = client.clone();
        let endpoint = endpoint.clone();
        workers.spawn(async move {
            let mut counts: BTreeMap<String, u64> = BTreeMap::new();
            while Instant::now() < until {
                let sent = client
                    .post(&endpoint)
                    .header("content-type", "application/json")
                    .header("authorization", "Bearer load-test")
                    .body(body)
                    .send()
                    .await;
                let status = match sent {
                    Ok(response) => {
                        let status = response.status().as_u16().to_string();
                        let _ = response.bytes().await;
                        status
                    }
                    Err(_) => "transport".to_owned(),
                };
                *counts.entry(status).or_default() += 1;
            }
            counts
        });
    }
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    while let Some(done) = workers.join_next().await {
        for (status, n) in done? {
            *counts.entry(status).or_default() += n;
        }
    }
    let wall = started.elapsed().as_secs_f64();
    let total: u64 = counts.values().sum();
    let of = |status: &str| counts.get(status).copied().unwrap_or(0);
    println!("concurrency {concurrency}, {wall:.2} s, {total} attempts");
    println!("by status: {counts:?}");
    println!(
        "429 share: {:.1} %  ·  attempts/s: {:.1}  ·  answers (200)/s: {:.1}",
        100.0 * of("429") as f64 / total.max(1) as f64,
        total as f64 / wall,
        of("200") as f64 / wall
    );
    Ok(())
}
