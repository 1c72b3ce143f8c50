//! Retries, waits and deadlines on tokio's paused clock (systemone-wire.md §9).

use std::{sync::Arc, time::Duration};

use jevjudge_client::{
    AttemptOutcome, Backoff, CallOptions, ClientBuilder, ErrorKind, HttpResponse,
    TransportErrorKind,
};
use jevjudge_wire::Detail;
use tokio::time::Instant;

use crate::support::*;

/// [`builder`] over `script` with a fixed `wait` before each retry.
fn fixed_backoff(script: &Arc<Scripted>, wait: Duration) -> ClientBuilder<Arc<Scripted>> {
    builder(script.clone()).backoff(Backoff::fixed(wait))
}

/// Answers `first` (with a wait header), then 200, through a client with a fixed `backoff` (or
/// [`builder`]'s own when `None`): the call's attempts and when each attempt started (on the
/// paused clock).
async fn one_wait(first: HttpResponse, backoff: Option<Duration>) -> (u32, Vec<Duration>) {
    let script = Scripted::new([Step::Respond(first), ok()]);
    let client = match backoff {
        Some(wait) => fixed_backoff(&script, wait),
        None => builder(script.clone()),
    };
    let exchange = call(&client.build().unwrap()).await.unwrap();
    (exchange.attempts, script.attempt_times())
}

// ---- the retry test table of systemone-wire.md §9 ----------------------------------------

#[tokio::test(start_paused = true)]
async fn table_429_then_200_is_two_attempts_and_success() {
    let script = Scripted::new([respond(429, "{}"), ok()]);
    let client = builder(script.clone()).build().unwrap();
    let exchange = call(&client).await.unwrap();
    assert_eq!(exchange.attempts, 2);
    assert_eq!(script.sent().len(), 2);
    assert_eq!(exchange.request_id.as_deref(), Some("req_200"));
    // The seeded SDK backoff waited within the first retry's range.
    let times = script.attempt_times();
    assert!(ms(375) <= times[1] && times[1] <= ms(500), "{times:?}");
}

#[tokio::test(start_paused = true)]
async fn table_529_three_times_is_three_attempts_then_overloaded() {
    let script = Scripted::always(respond(
        529,
        r#"{"detail":{"error_type":"overloaded_error","message":"Overloaded"}}"#,
    ));
    let client = builder(script.clone()).build().unwrap();
    let error = call(&client).await.unwrap_err();
    assert_eq!(error.kind(), &ErrorKind::Overloaded);
    assert_eq!(error.detail(), Detail::HttpStatus(529));
    assert_eq!(error.detail().to_string(), "http_status_529");
    assert_eq!(error.attempts(), 3);
    assert_eq!(script.sent().len(), 3);
    assert_eq!(error.message(), Some("Overloaded"));
    assert_eq!(error.error_type(), Some("overloaded_error"));
    let times = script.attempt_times();
    let first_wait = times[1] - times[0];
    let second_wait = times[2] - times[1];
    assert!(ms(375) <= first_wait && first_wait <= ms(500), "{times:?}");
    assert!(
        ms(750) <= second_wait && second_wait <= ms(1000),
        "{times:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn table_401_is_one_attempt_and_never_retried() {
    let script = Scripted::always(respond(401, r#"{"message":"invalid key"}"#));
    let client = builder(script.clone()).build().unwrap();
    let error = call(&client).await.unwrap_err();
    assert_eq!(error.kind(), &ErrorKind::Auth);
    assert_eq!(error.detail().to_string(), "http_status_401");
    assert_eq!(error.attempts(), 1);
    assert_eq!(script.sent().len(), 1);
    assert_eq!(error.message(), Some("invalid key"));
    assert_eq!(error.request_id(), Some("req_401"));
}

#[tokio::test(start_paused = true)]
async fn table_retry_after_ms_replaces_the_backoff() {
    let first = json(429, "{}").with_header("retry-after-ms", "250");
    let (attempts, times) = one_wait(first, Some(secs(2))).await;
    assert_eq!(attempts, 2);
    assert_eq!(times, vec![Duration::ZERO, ms(250)]);
}

#[tokio::test(start_paused = true)]
async fn table_retry_after_past_the_budget_is_not_started() {
    let script = Scripted::new([
        Step::Respond(json(429, "{}").with_header("Retry-After", "3")),
        ok(),
    ]);
    let client = builder(script.clone()).build().unwrap();
    let (error, elapsed) = fails_within(&client, secs(2)).await;
    assert_eq!(elapsed, Duration::ZERO, "returned at once, no sleep");
    assert_eq!(error.kind(), &ErrorKind::Deadline);
    assert!(error.is_retry_skipped_for_deadline());
    assert_eq!(error.detail(), Detail::RetryWaitExceedsBudget);
    assert_eq!(error.attempts(), 1);
    assert_eq!(script.sent().len(), 1);
    // The last response is still reported.
    assert_eq!(error.status(), Some(429));
    assert_eq!(error.request_id(), Some("req_429"));
    assert_eq!(error.retry_after(), Some(secs(3)));
}

#[tokio::test(start_paused = true)]
async fn table_stalled_server_with_short_attempt_timeout_exhausts_attempts() {
    let script = Scripted::always(Step::Stall);
    let client = builder(script.clone())
        .attempt_timeout(ms(50))
        .retries(0)
        .build()
        .unwrap();
    let (error, elapsed) = fails_within(&client, secs(2)).await;
    assert_eq!(elapsed, ms(50));
    assert_eq!(error.kind(), &ErrorKind::AttemptTimeout);
    assert_eq!(error.detail(), Detail::AttemptsExhausted);
    assert!(!error.is_deadline());
    assert_eq!(script.dropped(), 1, "the timed-out request was dropped");
}

#[tokio::test(start_paused = true)]
async fn table_stalled_server_with_long_attempt_timeout_hits_the_budget() {
    let script = Scripted::always(Step::Stall);
    let client = builder(script.clone()).build().unwrap();
    let (error, elapsed) = fails_within(&client, secs(2)).await;
    assert_eq!(elapsed, secs(2));
    assert_eq!(error.kind(), &ErrorKind::Deadline);
    assert_eq!(error.detail(), Detail::BudgetElapsed);
    assert!(!error.is_retry_skipped_for_deadline());
    assert_eq!(script.sent().len(), 1);
    assert_eq!(script.dropped(), 1, "the in-flight request was dropped");
}

#[tokio::test(start_paused = true)]
async fn table_second_attempt_carries_retry_count_1() {
    let script = Scripted::new([respond(503, "{}"), respond(503, "{}"), ok()]);
    let client = builder(script.clone()).build().unwrap();
    call(&client).await.unwrap();
    let counts: Vec<Option<String>> = script
        .sent()
        .iter()
        .map(|s| {
            s.request
                .header("X-TypeSafe-Retry-Count")
                .map(str::to_owned)
        })
        .collect();
    assert_eq!(counts, vec![None, Some("1".into()), Some("2".into())]);
}

// ---- further timing rules ------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn retry_after_one_second_puts_attempts_exactly_one_second_apart() {
    let first = json(429, "{}").with_header("Retry-After", "1");
    let (attempts, times) = one_wait(first, None).await;
    assert_eq!(attempts, 2);
    assert_eq!(times, vec![Duration::ZERO, secs(1)]);
}

#[tokio::test(start_paused = true)]
async fn judge_rule_34_budget_of_1_5_s_with_1_s_backoff_allows_two_attempts() {
    let script = Scripted::always(respond(500, "{}"));
    let client = fixed_backoff(&script, secs(1)).retries(5).build().unwrap();
    let (error, elapsed) = fails_within(&client, ms(1500)).await;
    assert_eq!(script.attempt_times(), vec![Duration::ZERO, secs(1)]);
    assert_eq!(elapsed, secs(1), "the skipped retry returns at once");
    assert_eq!(error.kind(), &ErrorKind::Deadline);
    assert!(error.is_retry_skipped_for_deadline());
    assert_eq!(error.detail(), Detail::RetryWaitExceedsBudget);
    assert_eq!(error.attempts(), 2);
    assert_eq!(error.status(), Some(500));
}

#[tokio::test(start_paused = true)]
async fn a_plain_call_whose_retry_does_not_fit_returns_the_last_error() {
    let script = Scripted::always(respond(500, r#"{"error":"boom"}"#));
    let client = fixed_backoff(&script, secs(1))
        .call_timeout(ms(1500))
        .retries(5)
        .build()
        .unwrap();
    let start = Instant::now();
    let error = call(&client).await.unwrap_err();
    assert_eq!(start.elapsed(), secs(1));
    assert_eq!(error.kind(), &ErrorKind::Server);
    assert_eq!(error.detail(), Detail::HttpStatus(500));
    assert_eq!(error.attempts(), 2);
    assert_eq!(error.message(), Some("boom"));
}

#[tokio::test(start_paused = true)]
async fn a_plain_call_stalled_past_the_call_timeout_is_a_deadline_error() {
    let script = Scripted::always(Step::Stall);
    let client = builder(script.clone())
        .attempt_timeout(secs(60))
        .call_timeout(secs(3))
        .build()
        .unwrap();
    let start = Instant::now();
    let error = call(&client).await.unwrap_err();
    assert_eq!(start.elapsed(), secs(3));
    assert_eq!(error.detail(), Detail::BudgetElapsed);
}

#[tokio::test(start_paused = true)]
async fn per_attempt_timeouts_are_retried_until_the_attempts_run_out() {
    let script = Scripted::always(Step::Stall);
    let client = fixed_backoff(&script, ms(10))
        .attempt_timeout(ms(100))
        .build()
        .unwrap();
    let error = client
        .system_one(&noul_request(), budget(secs(2)))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), &ErrorKind::AttemptTimeout);
    assert_eq!(error.detail(), Detail::AttemptsExhausted);
    assert_eq!(error.attempts(), 3);
    assert_eq!(
        script.attempt_times(),
        vec![Duration::ZERO, ms(110), ms(220)]
    );
    assert_eq!(script.dropped(), 3);
}

#[tokio::test(start_paused = true)]
async fn a_timeout_then_a_success_is_a_success() {
    let script = Scripted::new([Step::Stall, ok()]);
    let client = fixed_backoff(&script, Duration::ZERO)
        .attempt_timeout(ms(100))
        .build()
        .unwrap();
    let exchange = call(&client).await.unwrap();
    assert_eq!(exchange.attempts, 2);
}

#[tokio::test(start_paused = true)]
async fn the_attempt_timeout_is_cut_to_the_remaining_budget() {
    // 1 s of backoff, then the second attempt has only 0.5 s left of a 1.5 s budget.
    let script = Scripted::new([respond(502, "{}"), Step::Stall]);
    let client = fixed_backoff(&script, secs(1))
        .attempt_timeout(secs(5))
        .build()
        .unwrap();
    let (error, elapsed) = fails_within(&client, ms(1500)).await;
    assert_eq!(elapsed, ms(1500));
    assert_eq!(error.detail(), Detail::BudgetElapsed);
    assert_eq!(error.attempts(), 2);
    assert_eq!(error.status(), Some(502), "the last status seen is kept");
}

#[tokio::test(start_paused = true)]
async fn a_deadline_already_passed_sends_nothing() {
    let script = Scripted::always(ok());
    let client = builder(script.clone()).build().unwrap();
    let error = client
        .system_one(&noul_request(), CallOptions::with_deadline(Instant::now()))
        .await
        .unwrap_err();
    assert_eq!(error.detail(), Detail::BudgetElapsed);
    assert_eq!(error.attempts(), 0);
    assert!(script.sent().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_slow_response_within_the_attempt_timeout_succeeds() {
    let script = Scripted::always(Step::RespondAfter(ms(4900), json(200, NOUL_OK)));
    let client = builder(script.clone()).build().unwrap();
    let exchange = call(&client).await.unwrap();
    assert_eq!(exchange.attempts, 1);
}

// ---- server waits ---------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn a_server_wait_over_60_s_is_ignored_for_the_backoff() {
    let first = json(429, "{}").with_header("Retry-After", "120");
    let (_, times) = one_wait(first, Some(ms(700))).await;
    assert_eq!(times, vec![Duration::ZERO, ms(700)]);
}

#[tokio::test(start_paused = true)]
async fn an_unparsable_server_wait_is_ignored() {
    let first = json(503, "{}")
        .with_header("retry-after-ms", "soon")
        .with_header("Retry-After", "later");
    let (_, times) = one_wait(first, Some(ms(700))).await;
    assert_eq!(times, vec![Duration::ZERO, ms(700)]);
}

#[tokio::test(start_paused = true)]
async fn a_retry_after_date_is_honoured() {
    let date = httpdate::fmt_http_date(std::time::SystemTime::now() + secs(3));
    let first = json(503, "{}").with_header("Retry-After", &date);
    let second = one_wait(first, Some(ms(10))).await.1[1];
    // HTTP dates have whole seconds, so the wait is 2–3 s.
    assert!(secs(2) <= second && second <= secs(3), "{second:?}");
}

#[tokio::test(start_paused = true)]
async fn retry_after_zero_retries_immediately() {
    let first = json(429, "{}").with_header("Retry-After", "0");
    let (_, times) = one_wait(first, None).await;
    assert_eq!(times, vec![Duration::ZERO, Duration::ZERO]);
}

#[tokio::test(start_paused = true)]
async fn a_server_wait_on_a_final_response_changes_nothing() {
    let script = Scripted::always(Step::Respond(
        json(
            400,
            r#"{"detail":{"error_type":"api_usage_error","message":"Unknown model: jev-typo"}}"#,
        )
        .with_header("Retry-After", "1"),
    ));
    let client = builder(script.clone()).build().unwrap();
    let error = call(&client).await.unwrap_err();
    assert_eq!(error.kind(), &ErrorKind::InvalidRequest);
    assert_eq!(error.attempts(), 1);
    assert_eq!(error.message(), Some("Unknown model: jev-typo"));
}

// ---- which failures are retried -------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn retryable_statuses_and_connection_failures_are_retried_then_succeed() {
    for first in [
        respond(408, "{}"),
        respond(500, "<html>oops</html>"),
        respond(502, ""),
        respond(503, "{}"),
        respond(504, "{}"),
        respond(529, "{}"),
        Step::Fail(TransportErrorKind::Connect),
        Step::Fail(TransportErrorKind::Closed),
    ] {
        let script = Scripted::new([first, ok()]);
        let client = builder(script.clone()).build().unwrap();
        let exchange = call(&client).await.unwrap();
        assert_eq!(exchange.attempts, 2);
    }
}

#[tokio::test(start_paused = true)]
async fn final_statuses_are_not_retried() {
    let cases: &[(u16, &str, ErrorKind, &str)] = &[
        (301, "", ErrorKind::Status, "http_status_301"),
        (307, "", ErrorKind::Status, "http_status_307"),
        (
            400,
            r#"{"detail":"Too many choices. Must have at most 255 choices."}"#,
            ErrorKind::InvalidRequest,
            "http_status_400",
        ),
        (
            400,
            r#"{"detail":{"error_type":"max_tokens_exceeded"}}"#,
            ErrorKind::TokenLimit,
            "token_limit",
        ),
        (
            403,
            r#"{"detail":{"error_type":"authentication_error","message":"Must supply an API key!"}}"#,
            ErrorKind::Auth,
            "http_status_403",
        ),
        (
            404,
            r#"{"detail":"Not Found"}"#,
            ErrorKind::Status,
            "http_status_404",
        ),
        (
            405,
            r#"{"detail":"Method Not Allowed"}"#,
            ErrorKind::Status,
            "http_status_405",
        ),
        (409, "{}", ErrorKind::Status, "http_status_409"),
        (413, "", ErrorKind::TokenLimit, "token_limit"),
        (
            422,
            r#"{"detail":[{"loc":["body","questions"],"msg":"Field required","type":"missing"}]}"#,
            ErrorKind::InvalidRequest,
            "http_status_422",
        ),
    ];
    for (status, body, kind, detail) in cases {
        let script = Scripted::always(respond(*status, body));
        let client = builder(script.clone()).build().unwrap();
        let error = call(&client).await.unwrap_err();
        assert_eq!(error.kind(), kind, "{status}");
        assert_eq!(error.detail().to_string(), *detail, "{status}");
        assert_eq!(script.sent().len(), 1, "{status} must not be retried");
    }
}

#[tokio::test(start_paused = true)]
async fn connection_failures_end_as_transport_after_retries() {
    let script = Scripted::always(Step::Fail(TransportErrorKind::Closed));
    let client = builder(script.clone()).build().unwrap();
    let error = call(&client).await.unwrap_err();
    assert_eq!(error.kind(), &ErrorKind::Transport);
    assert_eq!(error.detail(), Detail::Transport);
    assert_eq!(error.attempts(), 3);
    assert_eq!(error.status(), None);
}

#[tokio::test(start_paused = true)]
async fn zero_retries_means_one_attempt() {
    let script = Scripted::always(respond(503, "{}"));
    let client = builder(script.clone()).retries(0).build().unwrap();
    let error = call(&client).await.unwrap_err();
    assert_eq!(error.kind(), &ErrorKind::Server);
    assert_eq!(script.sent().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_429_after_retries_is_rate_limited_with_its_wait() {
    let script = Scripted::always(Step::Respond(
        json(
            429,
            r#"{"detail":{"error_type":"rate_limit_error","message":"slow down"}}"#,
        )
        .with_header("retry-after-ms", "5"),
    ));
    let client = builder(script.clone()).build().unwrap();
    let error = call(&client).await.unwrap_err();
    assert_eq!(error.kind(), &ErrorKind::RateLimited);
    assert_eq!(error.retry_after(), Some(ms(5)));
    assert_eq!(script.attempt_times(), vec![Duration::ZERO, ms(5), ms(10)]);
}

// ---- the attempt hook --------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn the_hook_sees_every_attempt() {
    let script = Scripted::new([
        Step::RespondAfter(ms(30), json(503, "{}")),
        Step::Fail(TransportErrorKind::Connect),
        Step::Stall,
        ok(),
    ]);
    let events = Events::default();
    let client = fixed_backoff(&script, ms(10))
        .retries(3)
        .attempt_timeout(ms(100))
        .on_attempt(events.hook())
        .build()
        .unwrap();
    call(&client).await.unwrap();
    let seen: Vec<(u32, u32, AttemptOutcome, Duration)> = events
        .all()
        .iter()
        .map(|e| (e.attempt, e.retry_count, e.outcome, e.elapsed))
        .collect();
    assert_eq!(
        seen,
        vec![
            (1, 0, AttemptOutcome::Status(503), ms(30)),
            (
                2,
                1,
                AttemptOutcome::Transport(TransportErrorKind::Connect),
                Duration::ZERO
            ),
            (3, 2, AttemptOutcome::TimedOut, ms(100)),
            (4, 3, AttemptOutcome::Status(200), Duration::ZERO),
        ]
    );
    assert_eq!(events.all()[0].request_id.as_deref(), Some("req_503"));
}
