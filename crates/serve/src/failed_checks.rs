//! Failed bearer-token checks counted per client address in the current minute, in bounded
//! memory; the auth layer logs one WARN line for an address past [`WARN_PAST`] in a minute.

use std::{
    collections::HashMap,
    net::{IpAddr, Ipv6Addr},
    sync::Mutex,
    time::Duration,
};

use tokio::time::Instant;

use crate::sign_in_throttle::key_of;

/// Failed token checks one address may make in a minute before a WARN line says so.
pub const WARN_PAST: u32 = 100;
/// The window failures are counted in.
const WINDOW: Duration = Duration::from_secs(60);
/// Addresses counted at most; past it, new addresses share one count.
const MAX_ADDRESSES: usize = 10_000;
/// The count of requests without an address, and of new addresses once memory is full.
const SHARED: IpAddr = IpAddr::V6(Ipv6Addr::UNSPECIFIED);

/// Failed token checks per client address in the current minute (bounded memory).
pub(crate) struct FailedChecks {
    windows: Mutex<HashMap<IpAddr, Window>>,
}

struct Window {
    started: Instant,
    failures: u32,
    warned: bool,
}

impl FailedChecks {
    pub(crate) fn new() -> FailedChecks {
        FailedChecks {
            windows: Mutex::new(HashMap::new()),
        }
    }

    /// Counts one failure of `address`: `Some(failures)` when a WARN line is due (the first
    /// failure past [`WARN_PAST`] in its minute), else `None`.
    pub(crate) fn failed(&self, address: Option<IpAddr>) -> Option<u32> {
        let now = Instant::now();
        let mut windows = self
            .windows
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut key = address.map(key_of).unwrap_or(SHARED);
        if !windows.contains_key(&key) && windows.len() >= MAX_ADDRESSES {
            windows.retain(|_, window| now.duration_since(window.started) < WINDOW);
            if windows.len() >= MAX_ADDRESSES {
                key = SHARED;
            }
        }
        let window = windows.entry(key).or_insert(Window {
            started: now,
            failures: 0,
            warned: false,
        });
        if now.duration_since(window.started) >= WINDOW {
            *window = Window {
                started: now,
                failures: 0,
                warned: false,
            };
        }
        window.failures = window.failures.saturating_add(1);
        if window.failures > WARN_PAST && !window.warned {
            window.warned = true;
            return Some(window.failures);
        }
        None
    }

    #[cfg(test)]
    fn remembered(&self) -> usize {
        self.windows
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn address(text: &str) -> Option<IpAddr> {
        Some(text.parse().unwrap())
    }

    #[tokio::test(start_paused = true)]
    async fn tokens_failed_checks_warn_once_a_minute_past_100_per_address() {
        let checks = FailedChecks::new();
        for n in 0..WARN_PAST {
            assert_eq!(checks.failed(address("192.0.2.7")), None, "failure {n}");
        }
        assert_eq!(checks.failed(address("192.0.2.7")), Some(WARN_PAST + 1));
        // One line a minute, not one a request; other addresses have their own counts.
        for _ in 0..500 {
            assert_eq!(checks.failed(address("192.0.2.7")), None);
        }
        assert_eq!(checks.failed(address("192.0.2.8")), None);
        tokio::time::advance(WINDOW).await;
        for _ in 0..WARN_PAST {
            assert_eq!(checks.failed(address("192.0.2.7")), None);
        }
        assert_eq!(checks.failed(address("192.0.2.7")), Some(WARN_PAST + 1));
    }

    #[tokio::test(start_paused = true)]
    async fn tokens_failed_checks_memory_stays_bounded() {
        let checks = FailedChecks::new();
        for n in 0..(MAX_ADDRESSES as u32 + 500) {
            let spread = IpAddr::V4(std::net::Ipv4Addr::from(0x0a00_0000 + n));
            let _ = checks.failed(Some(spread));
        }
        assert_eq!(checks.remembered(), MAX_ADDRESSES + 1);
        tokio::time::advance(WINDOW).await;
        let _ = checks.failed(address("203.0.113.9"));
        assert!(checks.remembered() <= 2, "{}", checks.remembered());
    }
}
