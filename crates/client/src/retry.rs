//! The retry decision: whether a failed attempt is retried, and after how long
//! (systemone-wire.md §9).
//!
//! Retryable: 408, 429, every status from 500 to 599 (so 529), connection failures and
//! per-attempt timeouts. A server-requested wait replaces the backoff, but only when it came
//! from a retryable response and is at most 60 s; longer waits are ignored, as the JS SDK does.
//! Whether the wait still fits the deadline is [`crate::deadline`]'s question.

use std::time::Duration;

use crate::{Backoff, backoff::Jitter};

/// The longest server-requested wait that is honoured.
pub(crate) const MAX_SERVER_WAIT: Duration = Duration::from_secs(60);

/// Whether an HTTP status is worth another attempt.
pub(crate) fn is_retryable_status(status: u16) -> bool {
    matches!(status, 408 | 429 | 500..=599)
}

/// How many retries a call may make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RetryPolicy {
    retries: u32,
}

/// What to do after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Give up: the failure is final or the retries are used up.
    Stop,
    /// Try again after `wait`; this will be retry number `retry` (1-based).
    Retry {
        /// The retry number, also sent as `X-TypeSafe-Retry-Count`.
        retry: u32,
        /// How long to wait first.
        wait: Duration,
    },
}

impl RetryPolicy {
    /// At most `retries` retries, so `retries + 1` attempts.
    pub(crate) fn new(retries: u32) -> RetryPolicy {
        RetryPolicy { retries }
    }

    /// The configured number of retries.
    pub(crate) fn retries(self) -> u32 {
        self.retries
    }

    /// Decides after attempt `attempt` (1-based) failed. `retryable` says whether the failure
    /// may be retried at all; `server_wait` is what the response asked for, if anything.
    pub(crate) fn decide(
        self,
        attempt: u32,
        retryable: bool,
        server_wait: Option<Duration>,
        backoff: &Backoff,
        jitter: &mut Jitter,
    ) -> Decision {
        if !retryable || attempt > self.retries {
            return Decision::Stop;
        }
        let retry = attempt;
        let wait = match server_wait {
            Some(wait) if wait <= MAX_SERVER_WAIT => wait,
            _ => backoff.next_delay(retry, jitter),
        };
        Decision::Retry { retry, wait }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decide(
        policy: RetryPolicy,
        attempt: u32,
        retryable: bool,
        wait: Option<Duration>,
    ) -> Decision {
        let backoff = Backoff::fixed(Duration::from_millis(700));
        policy.decide(attempt, retryable, wait, &backoff, &mut backoff.jitter())
    }

    #[test]
    fn retryable_statuses_are_408_429_and_5xx() {
        for status in [408, 429, 500, 502, 503, 504, 529, 599] {
            assert!(is_retryable_status(status), "{status}");
        }
        for status in [
            200, 301, 302, 400, 401, 403, 404, 405, 409, 413, 422, 499, 600,
        ] {
            assert!(!is_retryable_status(status), "{status}");
        }
    }

    #[test]
    fn two_retries_by_default_means_three_attempts() {
        let policy = RetryPolicy::new(2);
        let backoff_wait = Duration::from_millis(700);
        assert_eq!(
            decide(policy, 1, true, None),
            Decision::Retry {
                retry: 1,
                wait: backoff_wait
            }
        );
        assert_eq!(
            decide(policy, 2, true, None),
            Decision::Retry {
                retry: 2,
                wait: backoff_wait
            }
        );
        assert_eq!(decide(policy, 3, true, None), Decision::Stop);
        assert_eq!(decide(RetryPolicy::new(0), 1, true, None), Decision::Stop);
    }

    #[test]
    fn final_failures_are_never_retried() {
        assert_eq!(decide(RetryPolicy::new(5), 1, false, None), Decision::Stop);
    }

    #[test]
    fn a_server_wait_replaces_the_backoff_up_to_60_seconds() {
        let policy = RetryPolicy::new(2);
        let server = |secs: u64| decide(policy, 1, true, Some(Duration::from_secs(secs)));
        assert_eq!(
            server(0),
            Decision::Retry {
                retry: 1,
                wait: Duration::ZERO
            }
        );
        assert_eq!(
            server(60),
            Decision::Retry {
                retry: 1,
                wait: Duration::from_secs(60)
            }
        );
        assert_eq!(
            server(61),
            Decision::Retry {
                retry: 1,
                wait: Duration::from_millis(700)
            }
        );
    }
}
