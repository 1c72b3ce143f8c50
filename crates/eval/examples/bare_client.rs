//! The physical limit of `jevjudge eval` against a server: the same HTTP stack (a tokio
//! multi-thread runtime, reqwest over rustls, no proxy, no redirects) sending byte-identical
//! requests (the body `eval` sends for each case of a definition, the same headers) at the
//! same concurrency, and nothing else: no judge, no verdicts, no rows, no report. It uses the
//! `jevjudge` binary's allocator (mimalloc).
//!
//! `scripts/bench-eval.sh` runs it next to `jevjudge eval` and prints jevjudge ÷ bare.
//!
//! ```text
//! cargo run --release -p jevjudge-eval --example bare_client -- \
//!     DEFINITION.toml CASES.jsonl BASE_URL CONCURRENCY
//! ```
//!
//! The key is read from `TYPESAFE_API_KEY`. Prints the requests sent, those answered 200 and
//! the wall time from the first request to the last answer.

use std::{path::PathBuf, time::Instant};

use futures_util::{StreamExt, stream};
use jevjudge_judge::Definition;
use jevjudge_wire::{DEFAULT_MODEL, Request};

/// The allocator of the `jevjudge` binary, so that the two differ only in what jevjudge adds.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [definition, cases, base_url, concurrency] = args.as_slice() else {
        return Err("usage: bare_client DEFINITION CASES BASE_URL CONCURRENCY".into());
    };
    let concurrency: usize = concurrency.parse()?;
    let definition = Definition::from_path(PathBuf::from(definition))?;
    let questions = definition.questions().clone();
    // Every body built before the clock starts, as eval's first pass reads every case first.
    let mut bodies = Vec::new();
    jevjudge_eval::for_each_case_in_file(&PathBuf::from(cases), usize::MAX, |case| {
        let request = Request::new(case.input.to_state(), questions.clone());
        bodies.push(request.to_body(DEFAULT_MODEL).unwrap_or_default());
    })?;
    let key = std::env::var("TYPESAFE_API_KEY").map_err(|_| "TYPESAFE_API_KEY is not set")?;
    let authorization = format!("Bearer {key}");
    let url = format!("{}/v1/systemone", base_url.trim_end_matches('/'));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let (sent, ok, wall) = runtime.block_on(async {
        let client = reqwest::Client::builder()
            .use_rustls_tls()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .build()?;
        let started = Instant::now();
        let statuses: Vec<bool> = stream::iter(bodies)
            .map(|body| {
                let request = client
                    .post(&url)
                    .header("Authorization", &authorization)
                    .header("Content-Type", "application/json")
                    .header("Accept", "application/json")
                    .header("User-Agent", jevjudge_client::USER_AGENT)
                    .body(body);
                async move {
                    match request.send().await {
                        Ok(response) => {
                            let ok = response.status() == reqwest::StatusCode::OK;
                            response.bytes().await.is_ok() && ok
                        }
                        Err(_) => false,
                    }
                }
            })
            .buffer_unordered(concurrency)
            .collect()
            .await;
        let wall = started.elapsed();
        let ok = statuses.iter().filter(|&&ok| ok).count();
        Ok::<_, reqwest::Error>((statuses.len(), ok, wall))
    })?;
    println!(
        "bare client: {sent} requests, {ok} answered 200, concurrency {concurrency}, wall {:.3} s",
        wall.as_secs_f64()
    );
    Ok(())
}
