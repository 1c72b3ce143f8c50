//! The server's lifecycle: port 0, the URL, concurrent clients, graceful shutdown, drop.

use std::net::SocketAddr;
use std::time::Duration;

use jevjudge_fake::{Config, FakeServer};

use crate::util::{client, noul_request, post, server};

#[tokio::test]
async fn port_zero_picks_a_free_port_and_the_url_names_it() {
    let fake = server(Config::default()).await;
    assert_ne!(fake.addr().port(), 0);
    assert_eq!(
        fake.url(),
        format!("http://127.0.0.1:{}", fake.addr().port())
    );
}

#[tokio::test]
async fn a_busy_port_is_an_error() {
    let first = server(Config::default()).await;
    let second = FakeServer::start(Config::default(), first.addr()).await;
    assert!(second.is_err());
}

#[tokio::test]
async fn many_concurrent_clients_are_answered() {
    let fake = server(Config::default()).await;
    let url = format!("{}/v1/systemone", fake.url());
    let shared = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("a client");
    let mut tasks = Vec::new();
    for _ in 0..64 {
        let (client, url) = (shared.clone(), url.clone());
        tasks.push(tokio::spawn(async move {
            let response = client
                .post(url)
                .body(noul_request().to_string())
                .send()
                .await?;
            Ok::<u16, reqwest::Error>(response.status().as_u16())
        }));
    }
    for task in tasks {
        assert_eq!(task.await.expect("joined").expect("answered"), 200);
    }
    assert_eq!(fake.request_count(), 64);
}

#[tokio::test]
async fn shutdown_stops_listening() {
    let fake = server(Config::default()).await;
    let addr: SocketAddr = fake.addr();
    assert_eq!(post(&fake, &noul_request()).await.status, 200);
    tokio::time::timeout(Duration::from_secs(5), fake.shutdown())
        .await
        .expect("shutdown finishes");
    let outcome = client().get(format!("http://{addr}/health")).send().await;
    assert!(outcome.is_err(), "nothing listens any more");
}

#[tokio::test]
async fn dropping_the_server_stops_it() {
    let fake = server(Config::default()).await;
    let addr = fake.addr();
    drop(fake);
    let mut stopped = false;
    for _ in 0..50 {
        if client()
            .get(format!("http://{addr}/health"))
            .send()
            .await
            .is_err()
        {
            stopped = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(stopped);
}
