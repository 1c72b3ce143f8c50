//! judge-contract rules 29 and 61–63: no rendering of a client, key, error or exchange shows the
//! key, the request's text or raw response text.

use jevjudge_client::{ApiKey, CallOptions, Error, TransportErrorKind};

use crate::support::*;

const SENTINELS: [&str; 4] = [KEY, "RAW-EVIDENCE-91c2", "RAW-Q-7f3a", "RAW-BODY-c0de"];

fn assert_clean(shown: &str) {
    for sentinel in SENTINELS {
        assert!(!shown.contains(sentinel), "{sentinel} leaked into {shown}");
    }
}

fn renderings(error: &Error) -> String {
    format!("{error} | {error:?} | {error:#?}")
}

#[tokio::test(start_paused = true)]
async fn errors_never_show_the_key_the_request_or_raw_bodies() {
    let steps = [
        respond(
            422,
            r#"{"detail":[{"loc":["body","state"],"msg":"Input should be a valid string","type":"string_type","input":{"text":"RAW-Q-7f3a RAW-EVIDENCE-91c2"},"ctx":{"echo":"RAW-EVIDENCE-91c2"}}]}"#,
        ),
        respond(502, "<html>RAW-BODY-c0de</html>"),
        respond(401, "RAW-BODY-c0de"),
        respond(200, "RAW-BODY-c0de"),
        respond(
            200,
            r#"{"model":"m","answers":{"supported":{"type":"noul","noul":"RAW-BODY-c0de"}}}"#,
        ),
        Step::Fail(TransportErrorKind::Connect),
    ];
    for step in steps {
        let client = builder(Scripted::always(step)).retries(0).build().unwrap();
        let error = client
            .system_one(&mixed_request(), CallOptions::default())
            .await
            .unwrap_err();
        assert_clean(&renderings(&error));
        let error = call(&client).await.unwrap_err();
        assert_clean(&renderings(&error));
    }
}

#[tokio::test(start_paused = true)]
async fn a_422_keeps_only_loc_and_msg() {
    let body = r#"{"detail":[{"loc":["body","questions"],"msg":"Dictionary should have at least 1 item after validation, not 0","type":"too_short","input":{"RAW-Q-7f3a":1},"ctx":{"min_length":1}}]}"#;
    let client = builder(Scripted::always(respond(422, body)))
        .build()
        .unwrap();
    let error = call(&client).await.unwrap_err();
    assert_eq!(
        error.message(),
        Some("questions: Dictionary should have at least 1 item after validation, not 0")
    );
    assert_clean(&renderings(&error));
}

#[tokio::test(start_paused = true)]
async fn client_key_and_exchange_debug_are_clean() {
    let script = Scripted::always(ok());
    let client = builder(script.clone()).build().unwrap();
    assert_clean(&format!("{client:?} {client:#?}"));
    let key = ApiKey::new(KEY).unwrap();
    assert_clean(&format!("{key:?} {key}"));
    let exchange = call(&client).await.unwrap();
    assert_clean(&format!("{exchange:?}"));
    assert_clean(&format!("{:?}", script.sent()));
}
