//! Conditions that spoil every review while they last — the backend refused the key, the
//! decision log's store cannot take writes, most reviews end in ERROR — logged once at WARN when
//! each begins and once at INFO when it ends: an operator sees the outage in the log without a
//! line per request.
//!
//! Most reviews erroring is judged on the last [`WINDOW`] reviews: it begins once at least
//! [`MIN_REVIEWS`] of them are known and more than half are ERROR, and ends when at most a
//! quarter are (the gap keeps a rate near one half from logging at every review).

use std::{
    collections::VecDeque,
    sync::{
        Mutex,
        atomic::{AtomicBool, Ordering},
    },
};

/// The reviews the error rate is judged on.
pub const WINDOW: usize = 20;
/// The reviews needed before the error rate is judged at all.
pub const MIN_REVIEWS: usize = 10;

/// The three conditions and what is known of each.
#[derive(Debug, Default)]
pub(crate) struct Episodes {
    key_refused: AtomicBool,
    store_down: AtomicBool,
    errors: Mutex<ErrorWindow>,
}

#[derive(Debug, Default)]
struct ErrorWindow {
    recent: VecDeque<bool>,
    errors: usize,
    high: bool,
}

impl Episodes {
    /// Whether the backend has refused the key (it stays refused until a restart).
    pub(crate) fn key_refused(&self, refused: bool) {
        if self.key_refused.swap(refused, Ordering::Relaxed) != refused {
            if refused {
                tracing::warn!(
                    target: "jevjudge_serve::episodes",
                    "the backend refused the API key (401/403): every review is answered with an \
                     ERROR and /readyz is not ready until the service restarts with a working key"
                );
            } else {
                tracing::info!(target: "jevjudge_serve::episodes", "the backend accepts the API key again");
            }
        }
    }

    /// Whether the decision log's store took the last write or check.
    pub(crate) fn store_ok(&self, ok: bool) {
        let down = !ok;
        if self.store_down.swap(down, Ordering::Relaxed) != down {
            if down {
                tracing::warn!(
                    target: "jevjudge_serve::episodes",
                    "the decision log's store cannot take writes: reviews are answered 503 \
                     store_unavailable and /readyz is not ready until it answers again"
                );
            } else {
                tracing::info!(target: "jevjudge_serve::episodes", "the decision log's store answers again");
            }
        }
    }

    /// One more review, and whether it ended in ERROR.
    pub(crate) fn review(&self, error: bool) {
        let mut window = self
            .errors
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if window.recent.len() == WINDOW && window.recent.pop_front() == Some(true) {
            window.errors -= 1;
        }
        window.recent.push_back(error);
        window.errors += usize::from(error);
        let (errors, known) = (window.errors, window.recent.len());
        if !window.high && known >= MIN_REVIEWS && errors * 2 > known {
            window.high = true;
            tracing::warn!(
                target: "jevjudge_serve::episodes",
                errors,
                reviews = known,
                "more than half of the recent reviews ended in ERROR (the backend, its budget \
                 or the network); the verdicts carry each error's code"
            );
        } else if window.high && errors * 4 <= known {
            window.high = false;
            tracing::info!(
                target: "jevjudge_serve::episodes",
                errors,
                reviews = known,
                "recent reviews are mostly without ERROR again"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The log lines written while the returned guard lives, on this thread.
    fn capture() -> (
        jevjudge_test_support::LogCapture,
        tracing::subscriber::DefaultGuard,
    ) {
        let lines = jevjudge_test_support::LogCapture::default();
        let writer = lines.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_max_level(tracing::Level::INFO)
            .with_ansi(false)
            .finish();
        (lines, tracing::subscriber::set_default(subscriber))
    }

    fn text(lines: &jevjudge_test_support::LogCapture) -> String {
        lines.text()
    }

    fn levels(text: &str) -> Vec<&'static str> {
        text.lines()
            .map(|line| {
                if line.contains(" WARN ") {
                    "WARN"
                } else {
                    "INFO"
                }
            })
            .collect()
    }

    #[test]
    fn outages_a_store_down_for_many_writes_logs_one_warn_and_one_info() {
        let (lines, _guard) = capture();
        let episodes = Episodes::default();
        for _ in 0..50 {
            episodes.store_ok(true);
        }
        for _ in 0..500 {
            episodes.store_ok(false);
        }
        for _ in 0..50 {
            episodes.store_ok(true);
        }
        let text = text(&lines);
        assert_eq!(levels(&text), ["WARN", "INFO"], "{text}");
        assert!(text.contains("cannot take writes") && text.contains("answers again"));
    }

    #[test]
    fn outages_a_refused_key_logs_one_warn_however_many_reviews_follow() {
        let (lines, _guard) = capture();
        let episodes = Episodes::default();
        episodes.key_refused(false);
        for _ in 0..300 {
            episodes.key_refused(true);
        }
        let text = text(&lines);
        assert_eq!(levels(&text), ["WARN"], "{text}");
        assert!(text.contains("refused the API key"), "{text}");
    }

    #[test]
    fn outages_an_error_rate_past_half_logs_once_when_it_begins_and_once_when_it_ends() {
        let (lines, _guard) = capture();
        let episodes = Episodes::default();
        // Too few reviews to judge: 5 errors of 5 say nothing yet.
        for _ in 0..5 {
            episodes.review(true);
        }
        assert_eq!(text(&lines), "");
        // 6 of 10 errored: begins.
        for error in [true, false, false, false, false] {
            episodes.review(error);
        }
        // Hovering around one half logs nothing more.
        for n in 0..200 {
            episodes.review(n % 2 == 0);
        }
        // Then healthy: ends once at most a quarter of the last 20 errored.
        for _ in 0..40 {
            episodes.review(false);
        }
        let text = text(&lines);
        assert_eq!(levels(&text), ["WARN", "INFO"], "{text}");
        assert!(text.contains("errors=6 reviews=10"), "{text}");
        assert!(text.contains("errors=5 reviews=20"), "{text}");
    }

    #[test]
    fn outages_memory_is_the_window_whatever_the_number_of_reviews() {
        let episodes = Episodes::default();
        for n in 0..10_000 {
            episodes.review(n % 3 == 0);
        }
        let window = episodes.errors.lock().unwrap();
        assert_eq!(window.recent.len(), WINDOW);
        assert_eq!(window.errors, window.recent.iter().filter(|e| **e).count());
    }
}
