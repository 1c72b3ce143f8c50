//! Cancellation (judge-contract D9, rule 37): dropping the call's future aborts the in-flight
//! request and any wait, and nothing happens afterwards.

use jevjudge_client::{Backoff, CallOptions};

use crate::support::*;

#[tokio::test(start_paused = true)]
async fn dropping_the_call_mid_attempt_drops_the_request() {
    let script = Scripted::always(Step::Stall);
    let client = builder(script.clone()).build().unwrap();
    let request = noul_request();
    let call = client.system_one(&request, CallOptions::default());
    assert!(tokio::time::timeout(ms(100), call).await.is_err());
    assert_eq!(script.sent().len(), 1);
    assert_eq!(
        script.dropped(),
        1,
        "the in-flight request future was dropped"
    );
    // Nothing wakes up later: no retry, no second attempt.
    tokio::time::sleep(secs(60)).await;
    assert_eq!(script.sent().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn dropping_the_call_mid_sleep_cancels_the_retry() {
    let script = Scripted::new([respond(503, "{}"), ok()]);
    let client = builder(script.clone())
        .backoff(Backoff::fixed(secs(1)))
        .build()
        .unwrap();
    let request = noul_request();
    let call = client.system_one(&request, CallOptions::default());
    assert!(tokio::time::timeout(ms(500), call).await.is_err());
    assert_eq!(script.sent().len(), 1);
    assert_eq!(script.finished(), 1);
    tokio::time::sleep(secs(60)).await;
    assert_eq!(script.sent().len(), 1, "the retry never started");
    assert_eq!(script.dropped(), 0);
}

#[tokio::test(start_paused = true)]
async fn dropping_a_slow_response_mid_flight_drops_it() {
    let script = Scripted::always(Step::RespondAfter(secs(2), json(200, NOUL_OK)));
    let client = builder(script.clone()).build().unwrap();
    let request = noul_request();
    let call = client.system_one(&request, CallOptions::default());
    assert!(tokio::time::timeout(secs(1), call).await.is_err());
    assert_eq!(script.dropped(), 1);
    assert_eq!(script.finished(), 0);
}
