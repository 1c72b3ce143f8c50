//! The real transport over real sockets against the in-process fake server (127.0.0.1:0),
//! with real time and tiny durations.

use std::{net::SocketAddr, time::Duration};

use jevjudge_client::{
    ApiKey, Backoff, CallOptions, Client, ClientBuilder, ErrorKind, HttpTransport,
    TransportErrorKind, USER_AGENT,
};
use jevjudge_fake::{Config, FakeServer, Fault, FaultPlan};
use jevjudge_wire::{DEFAULT_MODEL, Detail};
use serde_json::json;
use tokio::time::Instant;

use crate::support::{KEY, call, fails_within, mixed_request, ms, noul_request};

async fn fake(config: Config) -> FakeServer {
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    FakeServer::start(config, addr).await.unwrap()
}

/// A fake with the default config and a [`client_for`] it.
async fn default_fake() -> (FakeServer, Client<HttpTransport>) {
    let server = fake(Config::default()).await;
    let client = client_for(&server).build().unwrap();
    (server, client)
}

/// A real client for `server` with tiny waits.
fn client_for(server: &FakeServer) -> ClientBuilder<HttpTransport> {
    Client::builder()
        .env_lookup(|_| None)
        .base_url(server.url())
        .api_key(ApiKey::new(KEY).unwrap())
        .attempt_timeout(Duration::from_secs(5))
        .backoff(Backoff::fixed(ms(5)))
}

#[tokio::test]
async fn a_clean_call_sends_the_exact_body_and_headers() {
    let (server, client) = default_fake().await;
    let request = mixed_request();
    let exchange = client
        .system_one(&request, CallOptions::default())
        .await
        .unwrap();
    assert_eq!(exchange.attempts, 1);
    assert_eq!(exchange.response.model.as_deref(), Some("jev-1.13.0"));
    assert_eq!(exchange.requested_model, "jev-latest");
    assert!(exchange.response.usage.is_some());
    assert!(exchange.fake, "the fake server marks its answers");
    let id = exchange.request_id.as_deref().unwrap();
    assert!(id.starts_with("req_") && id.len() == 4 + 32, "{id}");

    let journal = server.journal();
    assert_eq!(journal.len(), 1);
    let entry = &journal[0];
    assert_eq!(
        (entry.method.as_str(), entry.path.as_str()),
        ("POST", "/v1/systemone")
    );
    assert_eq!(entry.body, request.to_body(DEFAULT_MODEL).unwrap());
    assert_eq!(entry.header("authorization"), Some("Bearer <redacted>"));
    assert_eq!(entry.header("content-type"), Some("application/json"));
    assert_eq!(entry.header("accept"), Some("application/json"));
    assert_eq!(entry.header("user-agent"), Some(USER_AGENT));
    assert_eq!(entry.header("content-encoding"), None);
    assert_eq!(entry.retry_count, None);
    // Exactly the spec's header set plus what HTTP/1.1 itself needs.
    let mut names: Vec<&str> = entry
        .headers
        .iter()
        .map(|(name, _)| name.as_str())
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "accept",
            "authorization",
            "content-length",
            "content-type",
            "host",
            "user-agent"
        ]
    );
    let body = entry.json().unwrap();
    let ids = jevjudge_test_support::keys(&body["questions"]);
    assert_eq!(ids, ["zeta", "queue", "alpha"], "question order kept (D1)");
    server.shutdown().await;
}

#[tokio::test]
async fn the_second_attempt_carries_retry_count_1() {
    let server = fake(Config::default()).await;
    server.script(
        FaultPlan::new()
            .then(Fault::RateLimited)
            .then(Fault::Html(503)),
    );
    let client = client_for(&server).build().unwrap();
    let exchange = call(&client).await.unwrap();
    assert_eq!(exchange.attempts, 3);
    let counts: Vec<Option<String>> = server
        .journal()
        .into_iter()
        .map(|e| e.retry_count)
        .collect();
    assert_eq!(counts, [None, Some("1".into()), Some("2".into())]);
    assert_eq!(server.request_count(), 3);
    server.shutdown().await;
}

#[tokio::test]
async fn server_waits_are_honoured() {
    let server = fake(Config::default()).await;
    server.script(FaultPlan::new().then(Fault::RetryAfterMs(120)));
    let client = client_for(&server).build().unwrap();
    let start = Instant::now();
    let exchange = call(&client).await.unwrap();
    assert_eq!(exchange.attempts, 2);
    assert!(start.elapsed() >= ms(120), "{:?}", start.elapsed());

    server.script(FaultPlan::new().then(Fault::RetryAfterSeconds(30)));
    let (error, _) = fails_within(&client, ms(500)).await;
    assert_eq!(error.detail(), Detail::RetryWaitExceedsBudget);
    assert_eq!(error.status(), Some(429));
    assert_eq!(error.retry_after(), Some(Duration::from_secs(30)));
    assert!(error.request_id().is_some());
    server.shutdown().await;
}

/// Each status fault of the fake, always on, and what the client makes of it.
#[tokio::test]
async fn status_faults_map_to_kinds_and_details() {
    use Detail::HttpStatus;
    let (server, client) = default_fake().await;
    let cases: Vec<(Fault, ErrorKind, Detail, usize)> = vec![
        (
            Fault::RateLimited,
            ErrorKind::RateLimited,
            HttpStatus(429),
            3,
        ),
        (
            Fault::RetryAfterMs(1),
            ErrorKind::RateLimited,
            HttpStatus(429),
            3,
        ),
        (Fault::Overloaded, ErrorKind::Overloaded, HttpStatus(529), 3),
        (Fault::Html(500), ErrorKind::Server, HttpStatus(500), 3),
        (Fault::Html(502), ErrorKind::Server, HttpStatus(502), 3),
        (Fault::Html(504), ErrorKind::Server, HttpStatus(504), 3),
        (
            Fault::Json {
                status: 401,
                body: json!({"message": "invalid key"}),
            },
            ErrorKind::Auth,
            HttpStatus(401),
            1,
        ),
        (
            Fault::Json {
                status: 400,
                body: json!({"detail": {"error_type": "max_tokens_exceeded"}}),
            },
            ErrorKind::TokenLimit,
            Detail::TokenLimit,
            1,
        ),
        (
            Fault::Json {
                status: 408,
                body: json!({}),
            },
            ErrorKind::Status,
            HttpStatus(408),
            3,
        ),
    ];
    for (fault, kind, detail, attempts) in cases {
        server.script(FaultPlan::always(fault.clone()));
        let before = server.request_count();
        let error = call(&client).await.unwrap_err();
        assert_eq!(error.kind(), &kind, "{fault:?}");
        assert_eq!(error.detail(), detail, "{fault:?}");
        assert_eq!(error.attempts() as usize, attempts, "{fault:?}");
        assert_eq!(server.request_count() - before, attempts, "{fault:?}");
        assert!(error.request_id().is_some(), "{fault:?}");
        if matches!(fault, Fault::Html(_)) {
            assert_eq!(error.message(), None, "HTML text is never kept");
        }
    }
    server.shutdown().await;
}

#[tokio::test]
async fn a_redirect_is_not_followed() {
    let server = fake(Config::default()).await;
    let target = format!("{}/v1/models", server.url());
    server.script(FaultPlan::always(Fault::Raw {
        status: 302,
        headers: vec![("location".into(), target)],
        body: Vec::new(),
    }));
    let client = client_for(&server).build().unwrap();
    let error = call(&client).await.unwrap_err();
    assert_eq!(error.kind(), &ErrorKind::Status);
    assert_eq!(error.detail(), Detail::HttpStatus(302));
    assert_eq!(error.attempts(), 1);
    let journal = server.journal();
    assert_eq!(
        journal.len(),
        1,
        "the Location was never requested: {journal:?}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn connection_faults_end_as_transport_after_retries() {
    let (server, client) = default_fake().await;
    for fault in [Fault::Close, Fault::CloseMidBody] {
        server.script(FaultPlan::always(fault.clone()));
        let before = server.request_count();
        let error = call(&client).await.unwrap_err();
        assert_eq!(error.kind(), &ErrorKind::Transport, "{fault:?}");
        assert_eq!(error.detail(), Detail::Transport, "{fault:?}");
        assert_eq!(error.attempts(), 3, "{fault:?}");
        assert_eq!(server.request_count() - before, 3, "{fault:?}");
    }
    // A close, then an answer: the retry succeeds.
    server.script(FaultPlan::new().then(Fault::Close));
    let exchange = call(&client).await.unwrap();
    assert_eq!(exchange.attempts, 2);
    server.shutdown().await;
}

#[tokio::test]
async fn a_refused_connection_is_transport_connect() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let client = Client::builder()
        .env_lookup(|_| None)
        .base_url(url)
        .api_key(ApiKey::new(KEY).unwrap())
        .backoff(Backoff::fixed(ms(5)))
        .build()
        .unwrap();
    let error = call(&client).await.unwrap_err();
    assert_eq!(error.kind(), &ErrorKind::Transport);
    assert_eq!(error.transport_kind(), Some(TransportErrorKind::Connect));
    assert_eq!(error.attempts(), 3);
}

#[tokio::test]
async fn slow_and_stalled_servers_time_out() {
    let server = fake(Config::default()).await;
    server.script(FaultPlan::always(Fault::Stall));
    let client = client_for(&server)
        .attempt_timeout(ms(50))
        .retries(0)
        .build()
        .unwrap();
    let (error, _) = fails_within(&client, Duration::from_secs(2)).await;
    assert_eq!(error.detail(), Detail::AttemptsExhausted);

    let client = client_for(&server).build().unwrap();
    let (error, elapsed) = fails_within(&client, ms(150)).await;
    assert_eq!(error.detail(), Detail::BudgetElapsed);
    assert!(
        ms(150) <= elapsed && elapsed < Duration::from_secs(2),
        "{elapsed:?}"
    );

    server.script(FaultPlan::always(Fault::Delay(ms(20))));
    let exchange = call(&client).await.unwrap();
    assert_eq!(exchange.attempts, 1);
    server.shutdown().await;
}

/// Each body and answer fault of the fake and the detail it must give (never retried).
#[tokio::test]
async fn body_and_answer_faults_map_to_invalid_response_details() {
    let (server, client) = default_fake().await;
    let cases = [
        (Fault::TruncatedBody, Detail::BodyUnreadable),
        (Fault::InvalidJson, Detail::BodyUnreadable),
        (Fault::XssiPrefix, Detail::BodyUnreadable),
        (Fault::NanToken, Detail::BodyUnreadable),
        (Fault::NoulNan, Detail::BodyUnreadable),
        (Fault::MissingAnswer, Detail::AnswerMissing),
        (Fault::ExtraAnswer, Detail::AnswerExtra),
        (Fault::UnknownAnswerType, Detail::AnswerWrongType),
        (Fault::NoulOutOfRange, Detail::ProbabilityOutOfRange),
        (Fault::NoulNull, Detail::ProbabilityMissing),
        (Fault::BrokenChoiceSum, Detail::ProbabilitiesSum),
        (Fault::BrokenScoreSum, Detail::ProbabilitiesSum),
        (Fault::BrokenChoiceKeys, Detail::ProbabilitiesKeys),
        (Fault::BrokenScoreKeys, Detail::ProbabilitiesKeys),
    ];
    for (fault, detail) in cases {
        server.script(FaultPlan::always(fault.clone()));
        let before = server.request_count();
        let error = client
            .system_one(&mixed_request(), CallOptions::default())
            .await
            .unwrap_err();
        assert!(
            matches!(error.kind(), ErrorKind::InvalidAnswers(_)),
            "{fault:?}: {error:?}"
        );
        assert_eq!(error.detail(), detail, "{fault:?}");
        assert_eq!(error.status(), Some(200));
        assert_eq!(
            server.request_count() - before,
            1,
            "{fault:?} must not be retried"
        );
        let readable = detail != Detail::BodyUnreadable;
        assert_eq!(
            error.model().is_some(),
            readable,
            "{fault:?}: model kept when readable (D3)"
        );
    }
    server.shutdown().await;
}

#[tokio::test]
async fn lenient_faults_still_succeed() {
    let (server, client) = default_fake().await;
    for fault in [
        Fault::NullConfidence,
        Fault::MissingUsage,
        Fault::FloatUsage,
        Fault::MissingModel,
        Fault::Pass,
    ] {
        server.script(FaultPlan::always(fault.clone()));
        let exchange = client
            .system_one(&mixed_request(), CallOptions::default())
            .await
            .unwrap_or_else(|error| panic!("{fault:?}: {error:?}"));
        let usage_known = !matches!(fault, Fault::MissingUsage | Fault::FloatUsage);
        assert_eq!(exchange.response.usage.is_some(), usage_known, "{fault:?}");
        let model_known = !matches!(fault, Fault::MissingModel);
        assert_eq!(exchange.response.model.is_some(), model_known, "{fault:?}");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn auth_failures_are_not_retried() {
    let server = fake(Config {
        key: Some("the-right-key".into()),
        ..Config::default()
    })
    .await;
    let wrong = client_for(&server).build().unwrap();
    let error = wrong
        .system_one(&noul_request(), CallOptions::default())
        .await
        .unwrap_err();
    assert_eq!(error.kind(), &ErrorKind::Auth);
    assert_eq!(error.detail(), Detail::HttpStatus(401));
    assert_eq!(error.attempts(), 1);
    assert!(
        error
            .message()
            .is_some_and(|m| m.starts_with("Cannot authenticate"))
    );

    let keyless = Client::builder()
        .env_lookup(|_| None)
        .base_url(server.url())
        .allow_no_key(true)
        .build()
        .unwrap();
    let error = keyless
        .system_one(&noul_request(), CallOptions::default())
        .await
        .unwrap_err();
    assert_eq!(error.detail(), Detail::HttpStatus(403));
    assert!(
        error
            .message()
            .is_some_and(|m| m.starts_with("Must supply an API key"))
    );

    let right = client_for(&server)
        .api_key(ApiKey::new("the-right-key").unwrap())
        .build()
        .unwrap();
    right
        .system_one(&noul_request(), CallOptions::default())
        .await
        .unwrap();
    assert!(
        server
            .journal()
            .iter()
            .all(|e| !format!("{e:?}").contains("the-right-key"))
    );
    server.shutdown().await;
}

#[tokio::test]
async fn an_unknown_model_and_a_wrong_route_are_final() {
    let server = fake(Config::default()).await;
    let client = client_for(&server).model("jev-typo").build().unwrap();
    let error = call(&client).await.unwrap_err();
    assert_eq!(error.kind(), &ErrorKind::InvalidRequest);
    assert_eq!(error.detail(), Detail::HttpStatus(400));
    assert_eq!(error.message(), Some("Unknown model: jev-typo"));

    let client = client_for(&server)
        .base_url(format!("{}/gateway", server.url()))
        .build()
        .unwrap();
    let error = call(&client).await.unwrap_err();
    assert_eq!(error.detail(), Detail::HttpStatus(404));
    assert_eq!(error.attempts(), 1);
    assert_eq!(error.message(), Some("Not Found"));
    server.shutdown().await;
}

#[tokio::test]
async fn list_models_reads_the_fakes_aliases() {
    let (server, client) = default_fake().await;
    let models = client.list_models().await.unwrap();
    let names: Vec<&str> = models.models.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["jev-latest", "jev-preview"]);
    let entry = server.journal().pop().unwrap();
    assert_eq!(
        (entry.method.as_str(), entry.path.as_str()),
        ("GET", "/v1/models")
    );
    server.shutdown().await;
}
