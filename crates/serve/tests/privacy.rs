//! Privacy (judge-contract rules 29, 61–63, D12): sentinel texts in the state, in bad bodies,
//! in paths and headers, the callers' token and the API key never appear in the logs (text and
//! JSON, every level) nor in the metrics.
//!
//! This test is alone in its binary and installs a global subscriber: a thread-local one can
//! miss events when other tests register the same callsites concurrently.

#[allow(dead_code, reason = "the helpers are shared with the main test binary")]
mod util;

use jevjudge_fake::{Fault, FaultPlan};
use jevjudge_judge::SystemOneBackend;
use jevjudge_serve::{AuthTokens, Config, Metrics};
use jevjudge_test_support::LogCapture;
use serde_json::json;
use tracing_subscriber::{fmt, layer::SubscriberExt as _};

use util::{Service, client, fake};

const STATE: &str = "RAW-STATE-7f3a";
const BAD_BODY: &str = "RAW-BODY-91c2";
const FIELD: &str = "RAW-FIELD-4e5d";
const PATH: &str = "RAW-PATH-55aa";
const HEADER: &str = "RAW-ID 6b7c";
const TOKEN: &str = "TOKEN-SECRET-1d2e";
const WRONG_TOKEN: &str = "WRONG-TOKEN-3f4g";
const KEY: &str = "apikey_SECRET-KEY-9b8c";
const QUESTION: &str = "without inventing completed refunds";

#[tokio::test(flavor = "current_thread")]
async fn no_state_text_token_or_key_in_logs_or_metrics() {
    let (text_logs, json_logs) = (LogCapture::default(), LogCapture::default());
    let subscriber = tracing_subscriber::registry()
        .with(fmt::layer().with_ansi(false).with_writer({
            let capture = text_logs.clone();
            move || capture.clone()
        }))
        .with(fmt::layer().json().with_writer({
            let capture = json_logs.clone();
            move || capture.clone()
        }))
        .with(tracing_subscriber::filter::LevelFilter::TRACE);
    tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");

    let fake = fake(jevjudge_fake::Config {
        key: Some(KEY.into()),
        ..Default::default()
    })
    .await;
    fake.script(
        FaultPlan::new()
            .then(Fault::NoulValues(vec![("supported".into(), 0.95)]))
            .then(Fault::Html(503))
            .then(Fault::NoulOutOfRange)
            .then(Fault::Html(500))
            .then(Fault::Html(500)),
    );
    let metrics = Metrics::new();
    let backend = SystemOneBackend::new(client(&fake, &metrics, KEY, 1));
    let config = Config {
        auth_tokens: AuthTokens::parse(TOKEN).unwrap(),
        ..Config::default()
    };
    let service = Service::start(backend, config, metrics).await;
    let bearer = format!("Bearer {TOKEN}");
    let auth = [("authorization", bearer.as_str())];

    let state = json!({"user_question": format!("{STATE} refund?"),
                       "supporting_context": [format!("{STATE} record")],
                       "assistant_answer": STATE});
    let body = serde_json::to_vec(&json!({"state": state})).unwrap();
    let mut statuses = Vec::new();
    // PASS; a retried 503 then INVALID_RESPONSE; ERROR/BACKEND after two 500s.
    for _ in 0..3 {
        let reply = service.post("refund-answer-v1", body.clone(), &auth).await;
        assert_eq!(reply.status, 200);
        statuses.push(reply.json()["status"].as_str().unwrap().to_owned());
    }
    assert_eq!(statuses, ["PASS", "ERROR", "ERROR"]);

    let refusals = [
        (
            "refund-answer-v1",
            format!("{{\"state\": \"{BAD_BODY}").into_bytes(),
            400,
        ),
        (
            "refund-answer-v1",
            format!("{{\"state\": \"x\", \"{FIELD}\": 1}}").into_bytes(),
            422,
        ),
        (PATH, body.clone(), 404),
    ];
    for (version, bytes, status) in refusals {
        let reply = service.post(version, bytes, &auth).await;
        assert_eq!(reply.status, status);
    }
    let reply = service
        .post(
            "refund-answer-v1",
            body.clone(),
            &[("authorization", &format!("Bearer {WRONG_TOKEN}"))],
        )
        .await;
    assert_eq!(reply.status, 401);
    let reply = service
        .post(
            "refund-answer-v1",
            body.clone(),
            &[auth[0], ("x-request-id", HEADER)],
        )
        .await;
    assert_eq!(reply.status, 200);
    assert_ne!(reply.header("x-request-id"), Some(HEADER));

    let metrics_text = service
        .call(reqwest::Method::GET, "/metrics", &auth)
        .await
        .text();
    service.stop().await.unwrap();

    let (text, json_text) = (text_logs.text(), json_logs.text());
    // The capture works: requests and reviews were logged, with their ids.
    assert!(text.contains("request finished"), "{text}");
    assert!(text.contains("verdict=PASS"), "{text}");
    assert!(text.contains("request_id=req_"), "{text}");
    assert!(json_text.contains("\"request_id\":\"req_"), "{json_text}");
    assert!(json_text.contains("\"verdict\":\"ERROR\""), "{json_text}");
    for (name, logs) in [
        ("text", &text),
        ("json", &json_text),
        ("metrics", &metrics_text),
    ] {
        for secret in [
            STATE,
            BAD_BODY,
            FIELD,
            PATH,
            HEADER,
            TOKEN,
            WRONG_TOKEN,
            KEY,
            "SECRET",
            QUESTION,
        ] {
            assert!(!logs.contains(secret), "{secret} in the {name}:\n{logs}");
        }
    }
}
