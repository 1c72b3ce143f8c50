//! The limiter's rules, on tokio's paused clock.

use std::{sync::Arc, time::Duration};

use futures_util::FutureExt;
use tokio::time::Instant;

use super::*;

/// A review admitted now that takes `round_trip` and succeeds.
fn review(limiter: &Arc<Limiter>, round_trip: Duration) -> tokio::task::JoinHandle<()> {
    let limiter = Arc::clone(limiter);
    tokio::spawn(async move {
        let permit = limiter.acquire(0).await.unwrap();
        let sent = Instant::now();
        tokio::time::sleep(round_trip).await;
        limiter.record_attempt(AttemptOutcome::Status(200), 1, sent, None);
        drop(permit);
    })
}

#[tokio::test(start_paused = true)]
async fn an_adaptive_limiter_starts_at_its_ceiling() {
    let limiter = Limiter::new(LimitConfig::new(8));
    assert_eq!(limiter.limit(), 8);
    let held: Vec<Permit> = (0..8)
        .map(|_| limiter.acquire(10).now_or_never().unwrap().unwrap())
        .collect();
    assert!(
        limiter.acquire(10).now_or_never().is_none(),
        "a ninth review waits"
    );
    drop(held);
    assert_eq!(limiter.snapshot().in_flight, 0);
}

#[tokio::test(start_paused = true)]
async fn a_saturated_limiter_doubles_its_limit_per_round_trip() {
    let limiter = Limiter::new(LimitConfig {
        aimd: Some(AimdConfig {
            initial: 4,
            ..AimdConfig::new(32)
        }),
        ..LimitConfig::new(32)
    });
    // 40 reviews of 100 ms queue up: 4, then 8, then 16 in flight.
    let reviews: Vec<_> = (0..40)
        .map(|_| review(&limiter, Duration::from_millis(100)))
        .collect();
    for expected in [4, 8, 16] {
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(limiter.snapshot().in_flight, expected);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for review in reviews {
        review.await.unwrap();
    }
}

#[tokio::test(start_paused = true)]
async fn a_lightly_loaded_run_never_drifts_up_to_the_ceiling() {
    let limiter = Limiter::new(LimitConfig::new(32));
    // A 429 cuts the limit to 22.
    limiter.record_attempt(AttemptOutcome::Status(429), 1, Instant::now(), None);
    assert_eq!(limiter.limit(), 22);
    // 3 reviews in flight at a time, 100 ms each, for 1,000 reviews: 22 is never reached.
    for _ in 0..1000 / 3 {
        let wave: Vec<_> = (0..3)
            .map(|_| review(&limiter, Duration::from_millis(100)))
            .collect();
        for task in wave {
            task.await.unwrap();
        }
    }
    assert_eq!(limiter.limit(), 22);
}

#[tokio::test(start_paused = true)]
async fn a_burst_after_idling_sends_no_more_than_the_limit() {
    let limiter = Limiter::new(LimitConfig::new(32));
    // A 429 cuts the limit to 22; then a long quiet spell of single reviews.
    limiter.record_attempt(AttemptOutcome::Status(429), 1, Instant::now(), None);
    assert_eq!(limiter.limit(), 22);
    for _ in 0..500 {
        review(&limiter, Duration::from_millis(100)).await.unwrap();
    }
    tokio::time::advance(Duration::from_secs(60)).await;
    // A burst of 32 reviews: 22 go, the rest wait for slots.
    let burst: Vec<_> = (0..32)
        .map(|_| review(&limiter, Duration::from_millis(100)))
        .collect();
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert_eq!(limiter.snapshot().in_flight, 22);
    for task in burst {
        task.await.unwrap();
    }
}

#[tokio::test(start_paused = true)]
async fn a_release_wakes_at_most_one_waiter() {
    use std::{
        future::Future,
        pin::Pin,
        sync::atomic::{AtomicUsize, Ordering},
        task::{Context, Poll},
    };

    /// Counts the polls of the future it wraps.
    struct Counted<F> {
        polls: Arc<AtomicUsize>,
        inner: Pin<Box<F>>,
    }
    impl<F: Future> Future for Counted<F> {
        type Output = F::Output;
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
            self.polls.fetch_add(1, Ordering::SeqCst);
            self.inner.as_mut().poll(cx)
        }
    }

    let limiter = Limiter::new(LimitConfig::fixed(1));
    let held = limiter.acquire(0).await.unwrap();
    let polls = Arc::new(AtomicUsize::new(0));
    let waiters: Vec<_> = (0..10)
        .map(|_| {
            let limiter = Arc::clone(&limiter);
            tokio::spawn(Counted {
                polls: Arc::clone(&polls),
                inner: Box::pin(async move {
                    let permit = limiter.acquire(0).await.unwrap();
                    // Hold the slot until the test ends.
                    std::future::pending::<()>().await;
                    drop(permit);
                }),
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert_eq!(polls.load(Ordering::SeqCst), 10, "each waiter polled once");
    drop(held);
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert_eq!(
        polls.load(Ordering::SeqCst),
        11,
        "only the waiter that takes the freed slot runs again"
    );
    assert_eq!(limiter.snapshot().in_flight, 1);
    for waiter in waiters {
        waiter.abort();
    }
}

#[tokio::test(start_paused = true)]
async fn a_cut_limit_takes_freed_slots_back() {
    let limiter = Limiter::new(LimitConfig {
        aimd: Some(AimdConfig {
            initial: 10,
            ..AimdConfig::new(20)
        }),
        ..LimitConfig::new(20)
    });
    let held: Vec<Permit> = (0..10)
        .map(|_| limiter.acquire(0).now_or_never().unwrap().unwrap())
        .collect();
    limiter.record_attempt(AttemptOutcome::Status(429), 1, Instant::now(), None);
    assert_eq!(limiter.limit(), 7);
    let mut held = held.into_iter();
    // 10 in flight over a limit of 7: the first 3 slots freed are not handed out again.
    for _ in 0..3 {
        drop(held.next());
        assert!(limiter.acquire(0).now_or_never().is_none());
    }
    drop(held.next());
    let permit = limiter.acquire(0).now_or_never().unwrap().unwrap();
    assert_eq!(limiter.snapshot().in_flight, 7);
    drop((permit, held));
}

#[tokio::test(start_paused = true)]
async fn a_waiting_review_starts_when_a_slot_frees() {
    let limiter = Limiter::new(LimitConfig::fixed(1));
    let first = limiter.acquire(0).await.unwrap();
    let waiting = tokio::spawn({
        let limiter = Arc::clone(&limiter);
        async move { limiter.acquire(0).await.map(|_| Instant::now()) }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let freed_at = Instant::now();
    drop(first);
    assert_eq!(waiting.await.unwrap().unwrap(), freed_at);
}

#[tokio::test(start_paused = true)]
async fn with_adaptation_off_the_limit_is_the_ceiling_and_429s_change_nothing() {
    let limiter = Limiter::new(LimitConfig::fixed(4));
    assert_eq!(limiter.limit(), 4);
    let permits: Vec<Permit> = (0..4)
        .map(|_| limiter.acquire(0).now_or_never().unwrap().unwrap())
        .collect();
    limiter.record_attempt(AttemptOutcome::Status(429), 1, Instant::now(), None);
    assert_eq!(limiter.limit(), 4);
    assert_eq!(limiter.snapshot().cuts, 0);
    drop(permits);
}

#[tokio::test(start_paused = true)]
async fn a_429_cuts_the_shared_limit_once_per_burst() {
    let limiter = Limiter::new(LimitConfig {
        aimd: Some(AimdConfig {
            initial: 20,
            ..AimdConfig::new(32)
        }),
        ..LimitConfig::new(32)
    });
    assert_eq!(limiter.limit(), 20);
    let sent = Instant::now();
    tokio::time::advance(Duration::from_millis(30)).await;
    for _ in 0..10 {
        limiter.record_attempt(AttemptOutcome::Status(429), 1, sent, None);
    }
    limiter.record_attempt(AttemptOutcome::Status(529), 1, sent, None);
    let snapshot = limiter.snapshot();
    assert_eq!(snapshot.limit, 14);
    assert_eq!(snapshot.cuts, 1);
    assert_eq!(snapshot.attempts.overloaded(), 11);
}

#[tokio::test(start_paused = true)]
async fn retry_after_is_a_floor_for_every_next_attempt() {
    let limiter = Limiter::new(LimitConfig::fixed(4));
    let start = Instant::now();
    limiter.record_attempt(
        AttemptOutcome::Status(429),
        1,
        start,
        Some(Duration::from_secs(2)),
    );
    assert_eq!(limiter.floor_from(start), Duration::from_secs(2));
    let permit = limiter.acquire(0).await.unwrap();
    assert_eq!(start.elapsed(), Duration::from_secs(2));
    assert!(limiter.pace_retry(0).await);
    assert_eq!(start.elapsed(), Duration::from_secs(2));
    // A shorter wait does not lower the floor; over 60 s is ignored, as the client does.
    limiter.record_attempt(
        AttemptOutcome::Status(429),
        1,
        start,
        Some(Duration::from_secs(61)),
    );
    assert_eq!(limiter.floor_from(Instant::now()), Duration::ZERO);
    drop(permit);
}

#[tokio::test(start_paused = true)]
async fn a_refused_key_stops_admission_and_wakes_every_waiter() {
    let limiter = Limiter::new(LimitConfig::fixed(1));
    let held = limiter.acquire(0).await.unwrap();
    let waiters: Vec<_> = (0..3)
        .map(|_| {
            let limiter = Arc::clone(&limiter);
            tokio::spawn(async move { limiter.acquire(0).await.map(drop) })
        })
        .collect();
    tokio::task::yield_now().await;
    limiter.record_attempt(AttemptOutcome::Status(401), 1, Instant::now(), None);
    for waiter in waiters {
        assert_eq!(waiter.await.unwrap(), Err(Stop::KeyRefused { status: 401 }));
    }
    assert!(!limiter.pace_retry(0).await, "no retry after a refused key");
    // The first cause stays.
    limiter.record_attempt(AttemptOutcome::Status(403), 1, Instant::now(), None);
    assert_eq!(limiter.stop(), Some(Stop::KeyRefused { status: 401 }));
    drop(held);
    assert!(limiter.acquire(0).await.is_err());
}

#[tokio::test(start_paused = true)]
async fn no_review_starts_that_could_pass_the_input_token_cap() {
    let limiter = Limiter::new(LimitConfig {
        max_input_tokens: Some(1000),
        ..LimitConfig::fixed(4)
    });
    let a = limiter.acquire(400).await.unwrap();
    let b = limiter.acquire(400).await.unwrap();
    // 800 reserved: a third of 400 could pass 1000, so it waits for the two in flight.
    let third = tokio::spawn({
        let limiter = Arc::clone(&limiter);
        async move { limiter.acquire(400).await.map(drop) }
    });
    tokio::task::yield_now().await;
    assert!(!third.is_finished());
    // They spent less than estimated: 250 + 250 = 500; 500 + 400 fits.
    limiter.record_input_tokens(250);
    drop(a);
    limiter.record_input_tokens(250);
    drop(b);
    assert_eq!(third.await.unwrap(), Ok(()));
    // 500 + 400 spent = 900; a next review of 200 cannot fit and nothing is in flight.
    limiter.record_input_tokens(400);
    assert_eq!(
        limiter.acquire(200).await.unwrap_err(),
        Stop::InputTokenCap {
            cap: 1000,
            spent: 900,
            next_estimate: 200
        }
    );
    // A cap stop does not refuse retries of reviews already in flight.
    assert!(limiter.pace_retry(0).await);
}

#[tokio::test(start_paused = true)]
async fn the_rate_pacer_spaces_admissions() {
    let limiter = Limiter::new(LimitConfig {
        rate: Some("10/s".parse().unwrap()),
        ..LimitConfig::fixed(32)
    });
    let start = Instant::now();
    let mut permits = Vec::new();
    for _ in 0..11 {
        permits.push(limiter.acquire(0).await.unwrap());
    }
    assert_eq!(start.elapsed(), Duration::from_secs(1));
}

#[test]
fn attempts_are_counted_by_status_and_failure() {
    let limiter = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
        .block_on(async {
            let limiter = Limiter::new(LimitConfig::fixed(2));
            let now = Instant::now();
            limiter.record_attempt(AttemptOutcome::Status(200), 1, now, None);
            limiter.record_attempt(AttemptOutcome::Status(429), 1, now, None);
            limiter.record_attempt(AttemptOutcome::Status(200), 2, now, None);
            limiter.record_attempt(
                AttemptOutcome::Transport(crate::TransportErrorKind::Connect),
                1,
                now,
                None,
            );
            limiter.record_attempt(AttemptOutcome::TimedOut, 2, now, None);
            limiter
        });
    let counts = limiter.snapshot().attempts;
    assert_eq!(counts.total, 5);
    assert_eq!(counts.retried, 2);
    assert_eq!(counts.by_status.get(&200), Some(&2));
    assert_eq!(counts.by_status.get(&429), Some(&1));
    assert_eq!((counts.transport, counts.timeout), (1, 1));
    let json = serde_json::to_value(&counts).unwrap();
    assert_eq!(json["by_status"]["429"], 1);
    assert_eq!(
        counts.text(),
        "5 attempts (2 retries): 200 ×2, 429 ×1; 1 transport, 1 timeout"
    );
}

#[test]
fn estimates_are_bytes_over_four_rounded_up() {
    assert_eq!(estimate_tokens(0), 0);
    assert_eq!(estimate_tokens(4), 1);
    assert_eq!(estimate_tokens(5), 2);
}

#[test]
fn token_rates_read_per_second_and_per_minute() {
    assert_eq!(
        parse_token_rate("100000/s").map(NonZeroU32::get),
        Ok(100_000)
    );
    assert_eq!(
        parse_token_rate("6000000/m").map(NonZeroU32::get),
        Ok(100_000)
    );
    assert_eq!(parse_token_rate("250000").map(NonZeroU32::get), Ok(250_000));
    assert!(parse_token_rate("0/s").is_err());
    assert!(parse_token_rate("fast").is_err());
}

#[test]
fn a_cost_cap_is_the_amount_over_the_price_per_million() {
    assert_eq!(cost_cap(2.5, Some(0.5)), Ok(5_000_000));
    assert_eq!(cost_cap(0.0, Some(3.0)), Ok(0));
    assert_eq!(cost_cap(-1.0, Some(1.0)), Err(CostCapError::Amount(-1.0)));
    assert!(matches!(
        cost_cap(f64::NAN, Some(1.0)),
        Err(CostCapError::Amount(_))
    ));
    assert_eq!(cost_cap(1.0, Some(0.0)), Err(CostCapError::Price(0.0)));
    assert_eq!(cost_cap(1.0, None), Err(CostCapError::Price(0.0)));
}

#[test]
fn the_smaller_input_token_cap_holds() {
    let capped = LimitConfig::new(8).cap_input_tokens(5_000);
    assert_eq!(capped.max_input_tokens, Some(5_000));
    assert_eq!(
        capped.clone().cap_input_tokens(9_000).max_input_tokens,
        Some(5_000)
    );
    assert_eq!(capped.cap_input_tokens(1_000).max_input_tokens, Some(1_000));
}

#[test]
fn the_progress_line_shows_the_rate_over_the_last_interval() {
    let limiter = Limiter::new(LimitConfig::new(32));
    let mut before = limiter.snapshot();
    before.age = Duration::from_secs(1);
    let mut now = before.clone();
    now.age = Duration::from_secs(3);
    now.attempts.total = before.attempts.total + 366;
    assert_eq!(now.requests_per_second_since(Some(&before)), 183.0);
    assert_eq!(
        now.progress_line(Some(&before)),
        format!(
            "concurrency {}/32 · 183 req/s · 429s 0 · 0 tokens in",
            now.limit
        )
    );
    // Without an earlier view, or one that is not older: the rate since the start.
    assert_eq!(
        now.requests_per_second_since(None),
        now.requests_per_second()
    );
    assert_eq!(
        now.requests_per_second_since(Some(&now)),
        now.requests_per_second()
    );
}
