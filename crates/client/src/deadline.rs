//! The overall deadline of one call (systemone-wire.md §9, judge-contract D11).
//!
//! Every attempt and every wait counts against it. An attempt's own timeout never extends past
//! it, and a retry whose wait would end after it is not started. Whether the deadline was given
//! by the caller (a review's budget) or is the client's default call timeout changes only what
//! a skipped retry reports: a review wants to know the budget was the reason, a plain call
//! wants the last real error.

use std::time::Duration;

use tokio::time::Instant;

/// About thirty years: "never" for a deadline, without overflowing `Instant`.
const FAR: Duration = Duration::from_secs(30 * 365 * 24 * 3600);

/// When one call must be over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Deadline {
    at: Instant,
    explicit: bool,
}

/// When one attempt must be over, and what ends it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AttemptWindow {
    /// The attempt is dropped at this instant.
    pub(crate) end: Instant,
    /// `true` when the call's deadline, not the per-attempt timeout, sets `end`.
    pub(crate) cut_by_deadline: bool,
}

impl Deadline {
    /// The caller's deadline when given, else `now + call_timeout`.
    pub(crate) fn start(
        explicit: Option<Instant>,
        call_timeout: Duration,
        now: Instant,
    ) -> Deadline {
        match explicit {
            Some(at) => Deadline { at, explicit: true },
            None => Deadline {
                at: add(now, call_timeout),
                explicit: false,
            },
        }
    }

    /// The instant the call must be over.
    pub(crate) fn at(self) -> Instant {
        self.at
    }

    /// Whether the caller set this deadline (as opposed to the default call timeout).
    pub(crate) fn is_explicit(self) -> bool {
        self.explicit
    }

    /// Whether no time is left at `now`.
    pub(crate) fn has_passed(self, now: Instant) -> bool {
        now >= self.at
    }

    /// The window of an attempt starting at `now` with its own `timeout`: it ends at the
    /// earlier of the two, and the deadline wins a tie.
    pub(crate) fn attempt_window(self, now: Instant, timeout: Duration) -> AttemptWindow {
        let own = add(now, timeout);
        if self.at <= own {
            AttemptWindow {
                end: self.at,
                cut_by_deadline: true,
            }
        } else {
            AttemptWindow {
                end: own,
                cut_by_deadline: false,
            }
        }
    }

    /// Whether a wait of `wait` starting at `now` ends no later than the deadline.
    pub(crate) fn admits_wait(self, now: Instant, wait: Duration) -> bool {
        now.checked_add(wait).is_some_and(|end| end <= self.at)
    }
}

fn add(now: Instant, duration: Duration) -> Instant {
    now.checked_add(duration)
        .or_else(|| now.checked_add(FAR))
        .unwrap_or(now)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    #[test]
    fn without_an_explicit_deadline_the_call_timeout_counts_from_now() {
        let now = Instant::now();
        let deadline = Deadline::start(None, secs(30.0), now);
        assert!(!deadline.is_explicit());
        assert!(!deadline.has_passed(now + secs(29.9)));
        assert!(deadline.has_passed(now + secs(30.0)));
        let explicit = Deadline::start(Some(now + secs(2.0)), secs(30.0), now);
        assert!(explicit.is_explicit());
        assert!(explicit.has_passed(now + secs(2.0)));
    }

    #[test]
    fn an_attempt_never_runs_past_the_deadline() {
        let now = Instant::now();
        let deadline = Deadline::start(Some(now + secs(2.0)), secs(30.0), now);
        assert_eq!(
            deadline.attempt_window(now, secs(5.0)),
            AttemptWindow {
                end: now + secs(2.0),
                cut_by_deadline: true
            }
        );
        assert_eq!(
            deadline.attempt_window(now, secs(0.05)),
            AttemptWindow {
                end: now + secs(0.05),
                cut_by_deadline: false
            }
        );
        // A tie goes to the deadline: the budget is what ran out.
        assert!(deadline.attempt_window(now, secs(2.0)).cut_by_deadline);
    }

    #[test]
    fn a_wait_must_end_by_the_deadline() {
        let now = Instant::now();
        let deadline = Deadline::start(Some(now + secs(1.5)), secs(30.0), now);
        assert!(deadline.admits_wait(now, secs(1.0)));
        assert!(deadline.admits_wait(now, secs(1.5)));
        assert!(!deadline.admits_wait(now + secs(1.0), secs(1.0)));
        assert!(!deadline.admits_wait(now, Duration::MAX));
    }

    #[test]
    fn huge_timeouts_do_not_overflow() {
        let now = Instant::now();
        let deadline = Deadline::start(None, Duration::MAX, now);
        assert!(!deadline.has_passed(now + secs(1e6)));
        let window = deadline.attempt_window(now, Duration::MAX);
        assert!(window.end > now);
    }
}
