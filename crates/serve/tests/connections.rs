//! Connection hardening over real sockets: half-sent request heads and idle
//! connections are closed by their timeouts, the connection cap makes room by closing the
//! oldest idle connection (or answers 503 when every one is busy), and a shutdown does not
//! wait for connections with no request in flight.

use std::time::Duration;

use jevjudge_fake::{Fault, FaultPlan};
use jevjudge_serve::Config;
use serde_json::json;
use tokio::{
    io::{AsyncReadExt as _, AsyncWriteExt as _},
    net::TcpStream,
};

use crate::util::{Service, eventually, fake, fake_with_latency, has_sample, refund_state};

/// Half a request head: the request line and one header, no blank line.
const HALF_HEAD: &[u8] = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n";

async fn connect(service: &Service) -> TcpStream {
    let addr = service.url.trim_start_matches("http://");
    TcpStream::connect(addr).await.expect("a connection")
}

/// Reads until the server closes the connection (at most 20 s); returns what it sent.
async fn read_until_closed(stream: &mut TcpStream) -> String {
    let mut received = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut received))
        .await
        .expect("the server closes the connection within 20 s");
    // A reset is a close too.
    let _ = read;
    String::from_utf8_lossy(&received).into_owned()
}

fn short_timeouts() -> Config {
    Config {
        header_timeout: Duration::from_millis(300),
        idle_timeout: Duration::from_millis(600),
        ..Config::default()
    }
}

#[tokio::test]
async fn a_half_sent_head_is_closed_after_the_header_timeout() {
    let fake = fake_with_latency(Duration::ZERO).await;
    let service = Service::in_front_of(&fake, short_timeouts()).await;
    let mut half_open = connect(&service).await;
    half_open.write_all(HALF_HEAD).await.unwrap();
    let received = read_until_closed(&mut half_open).await;
    // No response was started: the connection is simply closed.
    assert!(!received.contains("200 OK"), "{received}");
    assert!(has_sample(
        &service.metrics_text(),
        "jevjudge_connections_closed_total{reason=\"header_timeout\"} 1"
    ));
    // The service still answers.
    assert_eq!(service.get("/healthz").await.status, 200);
}

#[tokio::test]
async fn an_idle_connection_is_closed_after_the_idle_timeout() {
    let fake = fake_with_latency(Duration::ZERO).await;
    let service = Service::in_front_of(&fake, short_timeouts()).await;
    // Silent from the start.
    let mut silent = connect(&service).await;
    assert_eq!(read_until_closed(&mut silent).await, "");
    // Idle after one keep-alive request.
    let mut kept = connect(&service).await;
    kept.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    let received = read_until_closed(&mut kept).await;
    assert!(received.starts_with("HTTP/1.1 200 OK"), "{received}");
    assert!(has_sample(
        &service.metrics_text(),
        "jevjudge_connections_closed_total{reason=\"idle_timeout\"} 2"
    ));
}

#[tokio::test]
async fn at_the_cap_a_new_caller_closes_the_oldest_idle_connection() {
    let fake = fake_with_latency(Duration::ZERO).await;
    let config = Config {
        max_connections: 2,
        ..Config::default()
    };
    let service = Service::in_front_of(&fake, config).await;
    let mut oldest = connect(&service).await;
    oldest.write_all(HALF_HEAD).await.unwrap();
    let mut second = connect(&service).await;
    second.write_all(HALF_HEAD).await.unwrap();
    // Both half-open connections hold the cap; a caller still gets through.
    let reply = service.get("/healthz").await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(read_until_closed(&mut oldest).await, "");
    assert!(has_sample(
        &service.metrics_text(),
        "jevjudge_connections_closed_total{reason=\"evicted\"} 1"
    ));
}

#[tokio::test]
async fn at_the_cap_with_every_connection_busy_a_new_one_gets_503() {
    let fake = fake(Default::default()).await;
    fake.script(FaultPlan::always(Fault::Stall));
    let config = Config {
        max_connections: 1,
        default_budget: Duration::from_secs(3),
        ..Config::default()
    };
    let service = Service::in_front_of(&fake, config).await;
    let busy = tokio::spawn({
        let url = service.url.clone();
        async move {
            crate::util::caller()
                .post(format!("{url}/v1/reviews/refund-answer-v1"))
                .body(serde_json::to_vec(&json!({"state": refund_state()})).unwrap())
                .send()
                .await
                .map(|reply| reply.status().as_u16())
        }
    });
    eventually(|| has_sample(&service.metrics_text(), "jevjudge_reviews_in_flight 1")).await;
    let mut refused = connect(&service).await;
    let received = read_until_closed(&mut refused).await;
    assert!(
        received.starts_with("HTTP/1.1 503 Service Unavailable"),
        "{received}"
    );
    assert!(received.contains("retry-after: 1"), "{received}");
    assert!(received.contains("content-length: 86\r\n"), "{received}");
    let body = received.split_once("\r\n\r\n").map(|(_, body)| body);
    let body: serde_json::Value = serde_json::from_str(body.unwrap_or_default()).unwrap();
    assert_eq!(body["error"]["code"], "too_many_connections");
    // The busy review is not disturbed: it ends with its verdict (a timeout).
    assert_eq!(busy.await.unwrap().unwrap(), 200);
}

#[tokio::test]
async fn shutdown_does_not_wait_for_half_open_or_idle_connections() {
    let fake = fake_with_latency(Duration::ZERO).await;
    // Long timeouts: only the shutdown may close these connections.
    let service = Service::in_front_of(&fake, Config::default()).await;
    let mut half_open = connect(&service).await;
    half_open.write_all(HALF_HEAD).await.unwrap();
    let mut idle = connect(&service).await;
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    let mut first = [0u8; 15];
    idle.read_exact(&mut first).await.unwrap();
    assert_eq!(&first, b"HTTP/1.1 200 OK");
    // Let the server see the half head before stopping.
    tokio::time::sleep(Duration::from_millis(50)).await;

    // `stopped` allows 10 s, far below the 60 s idle timeout.
    service.stop().await.unwrap();
    assert_eq!(read_until_closed(&mut half_open).await, "");
    read_until_closed(&mut idle).await;
}
