//! A backend whose chunked body never ends: the client stops reading at its
//! body cap, so the review ends in a typed ERROR verdict and memory stays bounded by the cap,
//! not by the budget or the backend.

use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use jevjudge_client::{ApiKey, Client, DEFAULT_MAX_BODY_BYTES};
use jevjudge_judge::SystemOneBackend;
use jevjudge_serve::{Config, Metrics};
use tokio::{
    io::{AsyncReadExt as _, AsyncWriteExt as _},
    net::TcpListener,
};

use crate::util::Service;

/// A server on 127.0.0.1 answering every request with `200`, `Transfer-Encoding: chunked` and
/// 64 KiB chunks for ever; it counts the body bytes it managed to write.
async fn endless_backend() -> (String, Arc<AtomicU64>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let written = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&written);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let counter = Arc::clone(&counter);
            tokio::spawn(async move {
                let mut request = [0u8; 8192];
                let _ = stream.read(&mut request).await;
                let head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                             transfer-encoding: chunked\r\n\r\n";
                if stream.write_all(head).await.is_err() {
                    return;
                }
                let mut chunk = b"10000\r\n".to_vec();
                chunk.extend(std::iter::repeat_n(b' ', 0x10000));
                chunk.extend_from_slice(b"\r\n");
                while stream.write_all(&chunk).await.is_ok() {
                    counter.fetch_add(0x10000, Ordering::Relaxed);
                }
            });
        }
    });
    (url, written)
}

#[tokio::test]
async fn a_never_ending_chunked_backend_body_ends_in_a_typed_error_at_the_cap() {
    let (url, written) = endless_backend().await;
    let metrics = Metrics::new();
    let client = Client::builder()
        .base_url(url)
        .api_key(ApiKey::new("test-key").unwrap())
        .retries(0)
        .attempt_timeout(Duration::from_secs(20))
        .on_attempt(metrics.attempt_hook())
        .build()
        .unwrap();
    let config = Config {
        default_budget: Duration::from_secs(20),
        max_budget: Duration::from_secs(20),
        ..Config::default()
    };
    let service = Service::start(SystemOneBackend::new(client), config, metrics).await;
    let reply = service.review_refund().await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    let verdict = reply.json();
    assert_eq!(verdict["status"], "ERROR", "{verdict}");
    // Not a timeout: the read stopped at the cap, long before the 20 s budget.
    assert_eq!(verdict["error"], "INVALID_RESPONSE", "{verdict}");
    assert_eq!(verdict["detail"], "body_unreadable", "{verdict}");
    assert!(crate::util::has_sample(
        &service.metrics_text(),
        "jevjudge_backend_attempt_failures_total{reason=\"body_too_large\"} 1"
    ));
    // What the backend could push is the cap plus what the kernel's socket buffers hold.
    let pushed = written.load(Ordering::Relaxed);
    let cap = DEFAULT_MAX_BODY_BYTES as u64;
    assert!(pushed >= cap, "{pushed} bytes pushed");
    assert!(pushed < cap + 32 * 1024 * 1024, "{pushed} bytes pushed");
}
