//! A bounded load generator for `jevjudge serve`, loopback only.
//!
//! Sends `--requests` reviews from `--concurrency` callers to `POST /v1/reviews/{version}`,
//! then prints statuses, throughput, round-trip percentiles, and the service's added latency:
//! each 200's round trip minus the review time it reports (`elapsed_millis`, which is the
//! backend call), with and without the wait for a backend slot (`Server-Timing: queue`).
//! The last line is `LOADGEN_JSON {...}` for scripts.
//!
//! It always stops by itself: after `--requests` reviews or `--max-seconds` (default 300),
//! whichever comes first, with a 30 s timeout per request.
//!
//! ```text
//! cargo run --release -p jevjudge-serve --example loadgen -- \
//!     --url http://127.0.0.1:8080 --requests 20000 --concurrency 64
//! ```

use std::{
    collections::BTreeMap,
    process::ExitCode,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use jevjudge_stats::nearest_rank;
use serde_json::{Value, json};
use tokio::time::Instant;

/// The longest run allowed, whatever `--max-seconds` says.
const HARD_LIMIT: Duration = Duration::from_secs(1800);
/// The most requests allowed.
const MAX_REQUESTS: usize = 1_000_000;
/// The most concurrent callers allowed.
const MAX_CONCURRENCY: usize = 1024;

#[derive(Debug)]
struct Options {
    url: String,
    version: String,
    requests: usize,
    concurrency: usize,
    max_seconds: u64,
    budget_millis: Option<u64>,
    token: Option<String>,
}

/// One finished request.
#[derive(Debug, Clone)]
struct Sample {
    /// The HTTP status, or 0 when no response arrived.
    status: u16,
    round_trip_ms: f64,
    /// `elapsed_millis` of a 200.
    review_ms: Option<f64>,
    /// `Server-Timing: queue;dur=` of a 200.
    queue_ms: Option<f64>,
    /// The verdict's status of a 200.
    verdict: Option<String>,
}

fn usage() -> &'static str {
    "usage: loadgen --url http://127.0.0.1:PORT [--version refund-answer-v1] [--requests 20000] \
     [--concurrency 64] [--max-seconds 300] [--budget-millis MS] [--token-env VAR]"
}

fn parse_options() -> Result<Options, String> {
    let mut options = Options {
        url: String::new(),
        version: "refund-answer-v1".to_owned(),
        requests: 20_000,
        concurrency: 64,
        max_seconds: 300,
        budget_millis: None,
        token: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
        let number = |text: String| {
            text.parse::<u64>()
                .map_err(|_| format!("{flag}: `{text}` is not a whole number"))
        };
        match flag.as_str() {
            "--url" => options.url = value()?.trim_end_matches('/').to_owned(),
            "--version" => options.version = value()?,
            "--requests" => options.requests = number(value()?)? as usize,
            "--concurrency" => options.concurrency = number(value()?)? as usize,
            "--max-seconds" => options.max_seconds = number(value()?)?,
            "--budget-millis" => options.budget_millis = Some(number(value()?)?),
            "--token-env" => {
                let name = value()?;
                options.token = Some(
                    std::env::var(&name).map_err(|_| format!("--token-env: {name} is not set"))?,
                );
            }
            "-h" | "--help" => return Err(usage().to_owned()),
            other => return Err(format!("unknown flag {other}\n{}", usage())),
        }
    }
    let authority = options
        .url
        .strip_prefix("http://")
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_default();
    let loopback = ["127.0.0.1:", "localhost:", "[::1]:"]
        .iter()
        .any(|prefix| authority.starts_with(prefix));
    if !loopback {
        return Err(format!(
            "--url must be http://127.0.0.1:PORT (loopback only), not `{}`",
            options.url
        ));
    }
    if !(1..=MAX_REQUESTS).contains(&options.requests) {
        return Err(format!("--requests must be 1..={MAX_REQUESTS}"));
    }
    if !(1..=MAX_CONCURRENCY).contains(&options.concurrency) {
        return Err(format!("--concurrency must be 1..={MAX_CONCURRENCY}"));
    }
    if options.max_seconds == 0 {
        return Err("--max-seconds must be positive".to_owned());
    }
    Ok(options)
}

fn sorted(values: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut values: Vec<f64> = values.filter(|v| v.is_finite()).collect();
    values.sort_by(f64::total_cmp);
    values
}

fn distribution(values: &[f64]) -> Value {
    json!({
        "n": values.len(),
        "p50": nearest_rank(values, 50),
        "p90": nearest_rank(values, 90),
        "p99": nearest_rank(values, 99),
        "max": values.last().copied().unwrap_or(0.0),
    })
}

fn line(name: &str, values: &[f64]) -> String {
    format!(
        "{name:<34} n={:<6} p50={:>8.3}  p90={:>8.3}  p99={:>8.3}  max={:>8.3}",
        values.len(),
        nearest_rank(values, 50),
        nearest_rank(values, 90),
        nearest_rank(values, 99),
        values.last().copied().unwrap_or(0.0)
    )
}

fn queue_millis(timing: &str) -> Option<f64> {
    timing
        .split(',')
        .map(str::trim)
        .find_map(|part| part.strip_prefix("queue;dur="))
        .and_then(|ms| ms.parse().ok())
}

async fn one(client: &reqwest::Client, options: &Options, url: &str, body: &[u8]) -> Sample {
    let started = Instant::now();
    let mut request = client
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_vec());
    if let Some(token) = &options.token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await;
    let Ok(response) = response else {
        return Sample {
            status: 0,
            round_trip_ms: started.elapsed().as_secs_f64() * 1e3,
            review_ms: None,
            queue_ms: None,
            verdict: None,
        };
    };
    let status = response.status().as_u16();
    let queue_ms = response
        .headers()
        .get("server-timing")
        .and_then(|v| v.to_str().ok())
        .and_then(queue_millis);
    let bytes = response.bytes().await.unwrap_or_default();
    let round_trip_ms = started.elapsed().as_secs_f64() * 1e3;
    let verdict: Option<Value> = (status == 200)
        .then(|| serde_json::from_slice(&bytes).ok())
        .flatten();
    Sample {
        status,
        round_trip_ms,
        review_ms: verdict.as_ref().and_then(|v| v["elapsed_millis"].as_f64()),
        queue_ms,
        verdict: verdict.and_then(|v| v["status"].as_str().map(str::to_owned)),
    }
}

async fn run(options: Options) -> Result<(), String> {
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(30))
        .pool_max_idle_per_host(options.concurrency)
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
    let url = format!("{}/v1/reviews/{}", options.url, options.version);
    let mut request = json!({"state": {
        "user_question": "Has my refund gone through?",
        "supporting_context": ["Business record: no refund has been executed"],
        "assistant_answer": "No refund yet; I need to verify the status."
    }});
    if let Some(budget) = options.budget_millis {
        request["budget_millis"] = json!(budget);
    }
    let body = serde_json::to_vec(&request).map_err(|e| e.to_string())?;

    let options = Arc::new(options);
    let next = Arc::new(AtomicUsize::new(0));
    let limit = Duration::from_secs(options.max_seconds).min(HARD_LIMIT);
    let started = Instant::now();
    let deadline = started + limit;
    let mut workers = Vec::with_capacity(options.concurrency);
    for _ in 0..options.concurrency {
        let (client, options, next, url, body) = (
            client.clone(),
            options.clone(),
            next.clone(),
            url.clone(),
            body.clone(),
        );
        workers.push(tokio::spawn(async move {
            let mut samples = Vec::new();
            while next.fetch_add(1, Ordering::Relaxed) < options.requests
                && Instant::now() < deadline
            {
                samples.push(one(&client, &options, &url, &body).await);
            }
            samples
        }));
    }
    let mut samples = Vec::with_capacity(options.requests);
    for worker in workers {
        // Each request times out after 30 s, so a worker ends by deadline + 30 s.
        match tokio::time::timeout_at(deadline + Duration::from_secs(35), worker).await {
            Ok(Ok(mut done)) => samples.append(&mut done),
            Ok(Err(error)) => return Err(format!("a worker failed: {error}")),
            Err(_) => return Err("a worker did not stop in time".to_owned()),
        }
    }
    let wall = started.elapsed().as_secs_f64();
    let hit_time_limit = samples.len() < options.requests;
    report(&options, &samples, wall, hit_time_limit);
    Ok(())
}

fn report(options: &Options, samples: &[Sample], wall: f64, hit_time_limit: bool) {
    let mut statuses: BTreeMap<u16, usize> = BTreeMap::new();
    let mut verdicts: BTreeMap<String, usize> = BTreeMap::new();
    for sample in samples {
        *statuses.entry(sample.status).or_insert(0) += 1;
        if let Some(verdict) = &sample.verdict {
            *verdicts.entry(verdict.clone()).or_insert(0) += 1;
        }
    }
    let ok: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.status == 200 && s.review_ms.is_some())
        .collect();
    let failed = samples.len() - ok.len();
    let error_verdicts = verdicts.get("ERROR").copied().unwrap_or(0);
    let round_trip = sorted(ok.iter().map(|s| s.round_trip_ms));
    let review = sorted(ok.iter().filter_map(|s| s.review_ms));
    let added = sorted(
        ok.iter()
            .filter_map(|s| Some(s.round_trip_ms - s.review_ms?)),
    );
    let added_without_queue = sorted(
        ok.iter()
            .filter_map(|s| Some(s.round_trip_ms - s.review_ms? - s.queue_ms?)),
    );
    let queue = sorted(ok.iter().filter_map(|s| s.queue_ms));
    let refused = sorted(
        samples
            .iter()
            .filter(|s| s.status == 503)
            .map(|s| s.round_trip_ms),
    );
    let throughput = ok.len() as f64 / wall;
    let all_throughput = samples.len() as f64 / wall;

    println!(
        "requests: {} sent to {} from {} callers in {wall:.2} s{}",
        samples.len(),
        options.url,
        options.concurrency,
        if hit_time_limit {
            " (stopped at --max-seconds)"
        } else {
            ""
        }
    );
    let by_status: Vec<String> = statuses
        .iter()
        .map(|(status, n)| {
            if *status == 0 {
                format!("no-response={n}")
            } else {
                format!("{status}={n}")
            }
        })
        .collect();
    println!("statuses: {}", by_status.join(" "));
    let by_verdict: Vec<String> = verdicts.iter().map(|(v, n)| format!("{v}={n}")).collect();
    println!("verdicts: {}", by_verdict.join(" "));
    println!(
        "failed requests (not a 200 with a verdict): {failed}; ERROR verdicts: {error_verdicts}"
    );
    println!(
        "throughput: {throughput:.1} reviews/s answered 200 ({all_throughput:.1} responses/s in all)"
    );
    println!("latency in ms:");
    println!("{}", line("  round trip (200s)", &round_trip));
    println!("{}", line("  review time (elapsed_millis)", &review));
    println!("{}", line("  wait for a backend slot (queue)", &queue));
    println!("{}", line("  added = round trip - review", &added));
    println!(
        "{}",
        line("  added, excluding the queue wait", &added_without_queue)
    );
    if !refused.is_empty() {
        println!("{}", line("  503 round trip", &refused));
    }
    let summary = json!({
        "sent": samples.len(),
        "concurrency": options.concurrency,
        "wall_seconds": wall,
        "statuses": statuses.iter().map(|(s, n)| (s.to_string(), *n)).collect::<BTreeMap<_, _>>(),
        "verdicts": verdicts,
        "failed": failed,
        "error_verdicts": error_verdicts,
        "throughput_ok_per_second": throughput,
        "responses_per_second": all_throughput,
        "round_trip_ms": distribution(&round_trip),
        "review_ms": distribution(&review),
        "queue_ms": distribution(&queue),
        "added_ms": distribution(&added),
        "added_without_queue_ms": distribution(&added_without_queue),
        "refused_503_ms": distribution(&refused),
        "hit_time_limit": hit_time_limit,
    });
    println!("LOADGEN_JSON {summary}");
}

fn main() -> ExitCode {
    let options = match parse_options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("loadgen: {message}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("loadgen: cannot start the runtime: {error}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(run(options)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("loadgen: {message}");
            ExitCode::from(1)
        }
    }
}
