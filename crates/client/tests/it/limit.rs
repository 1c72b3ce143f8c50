//! A client with a shared limiter: every attempt is reported, the server's wait is
//! a floor for other calls, and a refused key stops admissions.

use std::time::Duration;

use jevjudge_client::limit::{LimitConfig, Limiter, Stop};
use tokio::time::Instant;

use crate::support::*;

#[tokio::test(start_paused = true)]
async fn attempts_reach_the_limiter_and_retry_after_holds_back_the_next_call() {
    let limiter = Limiter::new(LimitConfig::new(4));
    let script = Scripted::new([
        Step::Respond(json(429, "{}").with_header("retry-after", "3")),
        ok(),
        ok(),
    ]);
    let client = builder(script.clone())
        .limiter(limiter.clone())
        .build()
        .unwrap();
    let start = Instant::now();
    let permit = limiter.acquire(10).await.unwrap();
    call(&client).await.unwrap();
    drop(permit);
    assert_eq!(script.attempt_times()[1], Duration::from_secs(3));
    // The floor (3 s from the 429) has passed: the next review starts at once.
    let permit = limiter.acquire(10).await.unwrap();
    assert_eq!(start.elapsed(), Duration::from_secs(3));
    drop(permit);
    let snapshot = limiter.snapshot();
    assert_eq!(snapshot.attempts.total, 2);
    assert_eq!(snapshot.attempts.retried, 1);
    assert_eq!(snapshot.attempts.by_status.get(&429), Some(&1));
    assert_eq!(snapshot.attempts.by_status.get(&200), Some(&1));
    assert_eq!(snapshot.cuts, 1);
}

#[tokio::test(start_paused = true)]
async fn a_401_stops_every_later_admission() {
    let limiter = Limiter::new(LimitConfig::new(4));
    let script = Scripted::always(respond(
        401,
        r#"{"detail":{"error_type":"authentication_error","message":"bad key"}}"#,
    ));
    let client = builder(script.clone())
        .limiter(limiter.clone())
        .build()
        .unwrap();
    let permit = limiter.acquire(10).await.unwrap();
    assert!(call(&client).await.is_err());
    drop(permit);
    assert_eq!(
        limiter.acquire(10).await.unwrap_err(),
        Stop::KeyRefused { status: 401 }
    );
    assert_eq!(script.sent().len(), 1);
}
