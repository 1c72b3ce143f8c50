//! Requests per second through `Client::system_one` against an in-process fake with zero
//! latency, at 1 and 32 concurrent requests, next to the same load sent by a minimal
//! raw-reqwest loop (same body, same server), so the ratio client/raw can be quoted.
//!
//! Two more rows explain the gap: `transport` sends through `HttpTransport` alone (no request
//! or answer checks, no retry loop, no timer), and `codec` times the client's own CPU work per
//! call without I/O (check and serialise the request, read and check the 200 body).
//!
//! Run: `cargo bench -p jevjudge-client --bench throughput` (about a minute; 2 worker threads).

use std::{net::SocketAddr, time::Duration};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use jevjudge_client::{ApiKey, CallOptions, Client, HttpRequest, HttpTransport, Method, Transport};
use jevjudge_fake::{Config, FakeServer};
use jevjudge_wire::{DEFAULT_MODEL, NoulQuestion, Questions, Request, Response};
use serde_json::json;
use tokio::{runtime::Runtime, task::JoinSet};

const CONCURRENCY: [usize; 2] = [1, 32];

fn request() -> Request {
    let questions: Questions = [
        (
            "supported",
            NoulQuestion::new("Is `assistant_answer` supported by `supporting_context`?"),
        ),
        ("polite", NoulQuestion::new("Is `assistant_answer` polite?")),
    ]
    .into_iter()
    .collect();
    Request::new(
        json!({"user_question": "Has my refund gone through?",
               "supporting_context": ["Business record: no refund has been executed"],
               "assistant_answer": "The refund is complete."}),
        questions,
    )
}

fn throughput(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let addr: SocketAddr = "127.0.0.1:0".parse().expect("address");
    let server = runtime
        .block_on(FakeServer::start(Config::default(), addr))
        .expect("fake server");
    let url = server.url();

    let client = Client::builder()
        .base_url(&url)
        .api_key(ApiKey::new("apikey_bench").expect("key"))
        .build()
        .expect("client");
    let raw = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("reqwest");
    let transport = HttpTransport::new().expect("transport");
    let endpoint = client.endpoint().to_owned();
    let request = request();
    let body = request.to_body(DEFAULT_MODEL).expect("body");

    let mut group = c.benchmark_group("system_one");
    group
        .measurement_time(Duration::from_secs(4))
        .warm_up_time(Duration::from_secs(1))
        .sample_size(20);
    for concurrency in CONCURRENCY {
        group.throughput(Throughput::Elements(concurrency as u64));
        group.bench_with_input(
            BenchmarkId::new("client", concurrency),
            &concurrency,
            |b, &n| {
                b.iter(|| run_client(&runtime, &client, &request, n));
            },
        );
        group.bench_with_input(
            BenchmarkId::new("transport", concurrency),
            &concurrency,
            |b, &n| {
                b.iter(|| run_transport(&runtime, &transport, &endpoint, &body, n));
            },
        );
        group.bench_with_input(
            BenchmarkId::new("raw_reqwest", concurrency),
            &concurrency,
            |b, &n| {
                b.iter(|| run_raw(&runtime, &raw, &endpoint, &body, n));
            },
        );
    }
    group.finish();

    // The client's own work per call, without I/O: check and serialise the request, read and
    // check a 200 body as the fake answers it. Explains most of the client/raw gap.
    let answer = runtime.block_on(async {
        raw.post(&endpoint)
            .body(body.clone())
            .send()
            .await
            .expect("answer")
            .bytes()
            .await
            .expect("answer body")
    });
    let mut codec = c.benchmark_group("codec");
    codec
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500))
        .sample_size(20);
    codec.bench_function("to_body+from_slice+check", |b| {
        b.iter(|| {
            let sent = request.to_body(DEFAULT_MODEL).expect("body");
            let response = Response::from_slice(&answer).expect("response");
            response.check(&request.questions).expect("answers");
            (sent, response)
        });
    });
    codec.finish();
    runtime.block_on(server.shutdown());
}

/// `n` concurrent client calls, each checked.
fn run_client(runtime: &Runtime, client: &Client, request: &Request, n: usize) {
    runtime.block_on(async {
        let mut set = JoinSet::new();
        for _ in 0..n {
            let client = client.clone();
            let request = request.clone();
            set.spawn(async move { client.system_one(&request, CallOptions::default()).await });
        }
        while let Some(done) = set.join_next().await {
            done.expect("task").expect("call");
        }
    });
}

/// `n` concurrent sends through `HttpTransport` alone (no checks, no retry loop, no timer).
fn run_transport(
    runtime: &Runtime,
    transport: &HttpTransport,
    endpoint: &str,
    body: &[u8],
    n: usize,
) {
    runtime.block_on(async {
        let mut set = JoinSet::new();
        for _ in 0..n {
            let transport = transport.clone();
            let request = HttpRequest {
                method: Method::Post,
                url: endpoint.to_owned(),
                headers: vec![
                    ("Authorization", "Bearer apikey_bench".into()),
                    ("Content-Type", "application/json".into()),
                    ("Accept", "application/json".into()),
                ],
                body: body.to_vec().into(),
            };
            set.spawn(async move { transport.send(request).await });
        }
        while let Some(done) = set.join_next().await {
            assert_eq!(done.expect("task").expect("send").status, 200);
        }
    });
}

/// `n` concurrent raw POSTs of the same body, reading the whole response.
fn run_raw(runtime: &Runtime, raw: &reqwest::Client, endpoint: &str, body: &[u8], n: usize) {
    runtime.block_on(async {
        let mut set = JoinSet::new();
        for _ in 0..n {
            let raw = raw.clone();
            let endpoint = endpoint.to_owned();
            let body = body.to_vec();
            set.spawn(async move {
                let response = raw
                    .post(endpoint)
                    .header("Authorization", "Bearer apikey_bench")
                    .header("Content-Type", "application/json")
                    .header("Accept", "application/json")
                    .body(body)
                    .send()
                    .await?;
                assert_eq!(response.status().as_u16(), 200);
                response.bytes().await
            });
        }
        while let Some(done) = set.join_next().await {
            done.expect("task").expect("raw call");
        }
    });
}

criterion_group!(benches, throughput);
criterion_main!(benches);
