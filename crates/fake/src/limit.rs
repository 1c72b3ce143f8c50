//! Rate limits (`--rate-limit`, `--token-rate`, `--overload-rate`): token buckets on tokio's
//! clock, so tests can drive them with a paused clock.
//!
//! - Requests and estimated input tokens are limited **per key**: one pair of buckets for each
//!   `Authorization` value (the Bearer token; keys are held as SHA-256 digests, never as text),
//!   and one pair shared by every request without the header. Over either limit: 429.
//! - Overload is **server-wide**: one bucket for all callers. Over it: 529. A request refused
//!   with 429 does not count against the overload bucket.
//! - A bucket holds at most its capacity (the request bucket: `--burst`, default one second's
//!   worth; the others one second's worth, at least 1), starts full and refills continuously at
//!   its rate. A request passes when every bucket that applies holds its cost; only then is the
//!   cost taken from each. A request's token cost is its body's bytes ÷ 4 (at least 1), capped
//!   at the bucket's capacity, so one oversized request passes when the bucket is full rather
//!   than never.

use std::collections::HashMap;
use std::sync::Mutex;

use sha2::{Digest as _, Sha256};
use tokio::time::Instant;

use crate::config::Config;
use crate::rate::Rate;

/// At most this many keys have buckets of their own; beyond it, keys whose buckets have refilled
/// are forgotten (a full bucket is the same as a new one), and if that frees nothing a new key
/// shares the bucket of requests without a key. This bounds memory whatever callers send.
const MAX_KEYS: usize = 10_000;

/// Floating-point slack when comparing a bucket's level with a cost.
const EPSILON: f64 = 1e-9;

/// What the limiter decided for one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Admission {
    /// Within every limit.
    Pass,
    /// Over the key's request or token rate: 429.
    RateLimited,
    /// Over the server's overload rate: 529.
    Overloaded,
}

/// A bucket's fixed shape: refill rate per second and capacity.
#[derive(Clone, Copy, Debug)]
struct Shape {
    rate: f64,
    capacity: f64,
}

impl Shape {
    fn new(rate: Rate, capacity: f64) -> Shape {
        Shape {
            rate: rate.per_second(),
            capacity,
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Bucket {
    level: f64,
    updated: Instant,
}

impl Bucket {
    fn full(shape: Shape, now: Instant) -> Bucket {
        Bucket {
            level: shape.capacity,
            updated: now,
        }
    }

    /// Refills up to `now` (never backwards).
    fn refill(&mut self, shape: Shape, now: Instant) {
        if now > self.updated {
            let elapsed = (now - self.updated).as_secs_f64();
            self.level = (self.level + elapsed * shape.rate).min(shape.capacity);
            self.updated = now;
        }
    }

    fn holds(&self, cost: f64) -> bool {
        self.level + EPSILON >= cost
    }

    fn is_full(&self, shape: Shape) -> bool {
        self.level + EPSILON >= shape.capacity
    }
}

/// The buckets of one key (or of all requests without a key).
#[derive(Debug)]
struct KeyBuckets {
    requests: Bucket,
    tokens: Bucket,
}

/// The limiter of one fake server.
#[derive(Debug)]
pub(crate) struct Limiter {
    requests: Option<Shape>,
    tokens: Option<Shape>,
    overload: Option<Shape>,
    keys: Mutex<HashMap<Option<[u8; 32]>, KeyBuckets>>,
    server: Mutex<Option<Bucket>>,
}

impl Limiter {
    /// The limiter `config` asks for, or `None` when it sets no limit.
    pub(crate) fn from_config(config: &Config) -> Option<Limiter> {
        let requests = config.rate_limit.map(|rate| {
            let capacity = config
                .burst
                .map_or_else(|| rate.one_second(), |burst| f64::from(burst.max(1)));
            Shape::new(rate, capacity)
        });
        let tokens = config
            .token_rate
            .map(|rate| Shape::new(rate, rate.one_second()));
        let overload = config
            .overload_rate
            .map(|rate| Shape::new(rate, rate.one_second()));
        (requests.is_some() || tokens.is_some() || overload.is_some()).then(|| Limiter {
            requests,
            tokens,
            overload,
            keys: Mutex::new(HashMap::new()),
            server: Mutex::new(None),
        })
    }

    /// Decides one request from the key it carries (`None`: no `Authorization` header), its
    /// body length and the time; takes its costs when it passes.
    pub(crate) fn admit(&self, key: Option<&str>, body_bytes: usize, now: Instant) -> Admission {
        if (self.requests.is_some() || self.tokens.is_some())
            && !self.admit_key(key, body_bytes, now)
        {
            return Admission::RateLimited;
        }
        if let Some(shape) = self.overload {
            let mut server = self
                .server
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            let bucket = server.get_or_insert_with(|| Bucket::full(shape, now));
            bucket.refill(shape, now);
            if !bucket.holds(1.0) {
                return Admission::Overloaded;
            }
            bucket.level -= 1.0;
        }
        Admission::Pass
    }

    fn admit_key(&self, key: Option<&str>, body_bytes: usize, now: Instant) -> bool {
        let request_shape = self.requests.unwrap_or(Shape {
            rate: 0.0,
            capacity: 0.0,
        });
        let token_shape = self.tokens.unwrap_or(Shape {
            rate: 0.0,
            capacity: 0.0,
        });
        let fresh = || KeyBuckets {
            requests: Bucket::full(request_shape, now),
            tokens: Bucket::full(token_shape, now),
        };
        let mut keys = self
            .keys
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut id = key.map(|key| <[u8; 32]>::from(Sha256::digest(key.as_bytes())));
        if id.is_some() && !keys.contains_key(&id) && keys.len() >= MAX_KEYS {
            keys.retain(|_, buckets| {
                buckets.requests.refill(request_shape, now);
                buckets.tokens.refill(token_shape, now);
                !(buckets.requests.is_full(request_shape) && buckets.tokens.is_full(token_shape))
            });
            if keys.len() >= MAX_KEYS {
                id = None;
            }
        }
        let buckets = keys.entry(id).or_insert_with(fresh);
        buckets.requests.refill(request_shape, now);
        buckets.tokens.refill(token_shape, now);
        let token_cost = ((body_bytes / 4).max(1) as f64).min(token_shape.capacity);
        let passes = (self.requests.is_none() || buckets.requests.holds(1.0))
            && (self.tokens.is_none() || buckets.tokens.holds(token_cost));
        if passes {
            if self.requests.is_some() {
                buckets.requests.level -= 1.0;
            }
            if self.tokens.is_some() {
                buckets.tokens.level -= token_cost;
            }
        }
        passes
    }

    #[cfg(test)]
    fn keys(&self) -> usize {
        self.keys
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .len()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::Admission::{Overloaded, Pass, RateLimited};
    use super::*;

    fn limiter(config: Config) -> Limiter {
        Limiter::from_config(&config).unwrap_or_else(|| panic!("a limit is set"))
    }

    fn rate(text: &str) -> Option<Rate> {
        text.parse().ok()
    }

    /// A limiter of `text` requests per key (`--rate-limit`) and no other limit.
    fn per_key(text: &str) -> Limiter {
        limiter(Config {
            rate_limit: rate(text),
            ..Config::default()
        })
    }

    /// The admissions of one request per key of `keys`, in turn, each of `bytes` at `now`.
    fn admit_each(
        limiter: &Limiter,
        keys: &[Option<&str>],
        bytes: usize,
        now: Instant,
    ) -> Vec<Admission> {
        keys.iter()
            .map(|key| limiter.admit(*key, bytes, now))
            .collect()
    }

    #[test]
    fn no_limit_means_no_limiter() {
        assert!(Limiter::from_config(&Config::default()).is_none());
    }

    #[test]
    fn the_default_burst_is_one_seconds_worth_then_the_rate_refills() {
        let limiter = per_key("200/s");
        let start = Instant::now();
        let passed = (0..300)
            .filter(|_| limiter.admit(Some("K"), 10, start) == Admission::Pass)
            .count();
        assert_eq!(passed, 200);
        // 5 ms refills exactly one request at 200/s.
        let later = start + Duration::from_millis(5);
        assert_eq!(limiter.admit(Some("K"), 10, later), Admission::Pass);
        assert_eq!(limiter.admit(Some("K"), 10, later), Admission::RateLimited);
        // A full second refills the whole burst, never more.
        let much_later = later + Duration::from_secs(10);
        let passed = (0..300)
            .filter(|_| limiter.admit(Some("K"), 10, much_later) == Admission::Pass)
            .count();
        assert_eq!(passed, 200);
    }

    #[test]
    fn per_minute_rates_and_an_explicit_burst() {
        let limiter = limiter(Config {
            rate_limit: rate("1200/m"),
            burst: Some(3),
            ..Config::default()
        });
        let start = Instant::now();
        let outcomes: Vec<Admission> = (0..4).map(|_| limiter.admit(None, 1, start)).collect();
        assert_eq!(outcomes[..3], [Admission::Pass; 3]);
        assert_eq!(outcomes[3], Admission::RateLimited);
        // 1200/m is one request every 50 ms.
        let soon = start + Duration::from_millis(49);
        assert_eq!(limiter.admit(None, 1, soon), Admission::RateLimited);
        let then = start + Duration::from_millis(50);
        assert_eq!(limiter.admit(None, 1, then), Admission::Pass);
    }

    #[test]
    fn each_key_has_its_own_bucket_and_anonymous_requests_share_one() {
        let limiter = per_key("1/m");
        let keys = [Some("A"), Some("A"), Some("B"), None, None];
        assert_eq!(
            admit_each(&limiter, &keys, 1, Instant::now()),
            [Pass, RateLimited, Pass, Pass, RateLimited]
        );
    }

    #[test]
    fn tokens_are_body_bytes_over_four() {
        // 100 tokens a second: a 200-byte body costs 50, so two pass and the third waits.
        let limiter = limiter(Config {
            token_rate: rate("100/s"),
            ..Config::default()
        });
        let start = Instant::now();
        assert_eq!(
            admit_each(&limiter, &[Some("K"); 3], 200, start),
            [Pass, Pass, RateLimited]
        );
        // 50 tokens come back in half a second.
        let later = start + Duration::from_millis(500);
        assert_eq!(limiter.admit(Some("K"), 200, later), Admission::Pass);
        // An oversized request (10 000 tokens) passes only when the bucket is full.
        assert_eq!(
            limiter.admit(Some("K"), 40_000, later),
            Admission::RateLimited
        );
        let full = later + Duration::from_secs(1);
        assert_eq!(limiter.admit(Some("K"), 40_000, full), Admission::Pass);
    }

    #[test]
    fn a_refused_request_takes_nothing_from_any_bucket() {
        // Request bucket 2, token bucket 100: the token limit refuses the third request and the
        // request bucket keeps its last slot for a small one.
        let limiter = limiter(Config {
            rate_limit: rate("2/m"),
            burst: Some(2),
            token_rate: rate("100/s"),
            ..Config::default()
        });
        let now = Instant::now();
        let outcomes = [4, 4_000, 4, 4].map(|bytes| limiter.admit(None, bytes, now));
        assert_eq!(outcomes, [Pass, RateLimited, Pass, RateLimited]);
    }

    #[test]
    fn overload_is_server_wide_and_counts_only_admitted_requests() {
        let limiter = limiter(Config {
            rate_limit: rate("1/m"),
            overload_rate: rate("2/s"),
            burst: Some(1),
            ..Config::default()
        });
        // A's second request is refused by A's own limit: the server bucket keeps its slot.
        let keys = [Some("A"), Some("A"), Some("B"), Some("C")];
        assert_eq!(
            admit_each(&limiter, &keys, 1, Instant::now()),
            [Pass, RateLimited, Pass, Overloaded]
        );
    }

    #[test]
    fn keys_are_bounded_and_refilled_ones_are_forgotten_first() {
        let limiter = per_key("1/s");
        let start = Instant::now();
        for n in 0..MAX_KEYS {
            assert_eq!(
                limiter.admit(Some(&format!("k{n}")), 1, start),
                Admission::Pass
            );
        }
        // Every bucket is empty: a new key shares the keyless bucket.
        assert_eq!(limiter.admit(Some("new"), 1, start), Admission::Pass);
        assert_eq!(
            limiter.admit(Some("other"), 1, start),
            Admission::RateLimited
        );
        assert_eq!(limiter.keys(), MAX_KEYS + 1);
        // A second later every bucket is full again, so they are forgotten.
        let later = start + Duration::from_secs(1);
        assert_eq!(limiter.admit(Some("new"), 1, later), Admission::Pass);
        assert!(limiter.keys() <= 2, "{}", limiter.keys());
    }

    #[test]
    fn the_key_text_is_never_kept() {
        let limiter = per_key("1/s");
        limiter.admit(Some("apikey_secret"), 1, Instant::now());
        assert!(!format!("{limiter:?}").contains("apikey_secret"));
    }
}
