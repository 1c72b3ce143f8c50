//! Sign-in attempts per client address, held by [`crate::ServeState`] for the pages in
//! `crate::ui`. A token typed into `/ui/sign-in` is checked only while its address has
//! attempts left: [`BURST`] at once, then one every [`EVERY`] (ten a minute), a GCRA from
//! `governor` on tokio's clock. A reviewer signs in once per session (8 h), so the
//! limit never meets a person; a script guessing tokens gets ten guesses a minute per address.
//! Only a form that passes the pre-session CSRF check and carries a token takes an attempt,
//! so junk posted from a shared address (a proxy's) cannot lock the reviewers out.
//!
//! The address is the client's as `crate::client_address` finds it: the peer's, or behind a
//! trusted proxy (`--trusted-proxy`) the one `X-Forwarded-For` names.
//!
//! Addresses are keyed as the service sees them: an IPv4 address, or an IPv6 address's /64
//! (one host usually holds a whole /64, so keying single IPv6 addresses would give it
//! unlimited guesses). Memory is bounded: past [`MAX_ADDRESSES`] remembered addresses, the
//! ones whose bucket is full again are forgotten, and if that is not enough, new addresses
//! share one bucket — under a spread-out attack sign-in slows for everyone rather than
//! memory growing. A request with no known address (the router driven in-process) uses that
//! shared bucket too.

use std::{
    net::{IpAddr, Ipv6Addr},
    num::NonZeroU32,
    time::Duration,
};

use governor::{
    Quota, RateLimiter, clock::Clock as _, middleware::NoOpMiddleware,
    state::keyed::HashMapStateStore,
};
use jevjudge_client::limit::TokioClock;

/// Attempts an address may make at once.
pub const BURST: u32 = 10;
/// After the burst, one more attempt per this long.
pub const EVERY: Duration = Duration::from_secs(6);
/// Addresses remembered at most.
pub const MAX_ADDRESSES: usize = 10_000;
/// The bucket of requests without an address, and of new addresses once memory is full.
const SHARED: IpAddr = IpAddr::V6(Ipv6Addr::UNSPECIFIED);

/// The sign-in limiter of one service (each replica has its own).
pub(crate) struct SignInThrottle {
    limiter: RateLimiter<
        IpAddr,
        HashMapStateStore<IpAddr>,
        TokioClock,
        NoOpMiddleware<std::time::Instant>,
    >,
}

impl SignInThrottle {
    pub(crate) fn new() -> SignInThrottle {
        let quota = Quota::with_period(EVERY)
            .expect("EVERY is not zero")
            .allow_burst(NonZeroU32::new(BURST).expect("BURST is not zero"));
        SignInThrottle {
            limiter: RateLimiter::hashmap_with_clock(quota, TokioClock),
        }
    }

    /// Takes one attempt for `address`: `Ok` when it may try a token now, else how long until
    /// it may.
    pub(crate) fn attempt(&self, address: Option<IpAddr>) -> Result<(), Duration> {
        let mut key = address.map(key_of).unwrap_or(SHARED);
        if self.limiter.len() >= MAX_ADDRESSES {
            self.limiter.retain_recent();
            if self.limiter.len() >= MAX_ADDRESSES {
                key = SHARED;
            }
        }
        self.limiter
            .check_key(&key)
            .map_err(|not_until| not_until.wait_time_from(TokioClock.now()))
    }

    #[cfg(test)]
    fn remembered(&self) -> usize {
        self.limiter.len()
    }
}

/// The key of an address: IPv4 as it is (an IPv4-mapped IPv6 address too), IPv6 by its /64.
pub(crate) fn key_of(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let prefix = u128::from(v6) & !((1u128 << 64) - 1);
                IpAddr::V6(Ipv6Addr::from(prefix))
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn address(text: &str) -> Option<IpAddr> {
        Some(text.parse().unwrap())
    }

    #[tokio::test(start_paused = true)]
    async fn ten_attempts_then_one_every_six_seconds_per_address() {
        let throttle = SignInThrottle::new();
        for n in 0..BURST {
            assert_eq!(
                throttle.attempt(address("192.0.2.7")),
                Ok(()),
                "attempt {n}"
            );
        }
        let wait = throttle.attempt(address("192.0.2.7")).unwrap_err();
        assert!(wait > Duration::ZERO && wait <= EVERY, "{wait:?}");
        // Another address has its own attempts.
        assert_eq!(throttle.attempt(address("192.0.2.8")), Ok(()));
        tokio::time::advance(EVERY).await;
        assert_eq!(throttle.attempt(address("192.0.2.7")), Ok(()));
        assert!(throttle.attempt(address("192.0.2.7")).is_err());
        // A full minute later the whole burst is back.
        tokio::time::advance(EVERY * BURST).await;
        for n in 0..BURST {
            assert_eq!(
                throttle.attempt(address("192.0.2.7")),
                Ok(()),
                "attempt {n}"
            );
        }
    }

    #[tokio::test(start_paused = true)]
    async fn an_ipv6_host_cannot_rotate_through_its_slash_64() {
        let throttle = SignInThrottle::new();
        for n in 0..BURST {
            let rotated = format!("2001:db8:1:2::{:x}", n + 1);
            assert_eq!(throttle.attempt(address(&rotated)), Ok(()), "{rotated}");
        }
        assert!(throttle.attempt(address("2001:db8:1:2:ffff::1")).is_err());
        assert_eq!(throttle.attempt(address("2001:db8:1:3::1")), Ok(()));
        // An IPv4-mapped address is its IPv4 address.
        for _ in 0..BURST {
            assert_eq!(throttle.attempt(address("198.51.100.1")), Ok(()));
        }
        assert!(throttle.attempt(address("::ffff:198.51.100.1")).is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn memory_stays_bounded_when_addresses_spread() {
        let throttle = SignInThrottle::new();
        for n in 0..(MAX_ADDRESSES as u32 + 500) {
            let spread = IpAddr::V4(std::net::Ipv4Addr::from(0x0a00_0000 + n));
            let _ = throttle.attempt(Some(spread));
        }
        // Every remembered bucket is recent, so the extra 500 share one bucket.
        assert_eq!(throttle.remembered(), MAX_ADDRESSES + 1);
        // Once the buckets are full again they are forgotten and addresses get their own.
        tokio::time::advance(EVERY * BURST).await;
        assert_eq!(throttle.attempt(address("203.0.113.9")), Ok(()));
        assert!(throttle.remembered() <= 2, "{}", throttle.remembered());
    }
}
