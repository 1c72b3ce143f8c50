//! Settings of a fake server.

use std::time::Duration;

use jevjudge_wire::Secret;

use crate::rate::Rate;
use crate::replay::Replay;

/// How a fake server behaves when no fault is scripted.
///
/// `Config::default()` has no key (every request is accepted, with or without an
/// `Authorization` header), no added latency, no noise, no replay and no rate limit.
///
/// ```
/// use jevjudge_fake::Config;
///
/// // 200 requests a second per key (bursts of 200), 429 with `Retry-After: 1` beyond.
/// let config = Config {
///     rate_limit: Some("200/s".parse()?),
///     retry_after: Some(1),
///     ..Config::default()
/// };
/// # Ok::<(), jevjudge_fake::RateError>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// The API key to require as `Authorization: Bearer <key>`. Default: none (auth off).
    ///
    /// With a key, a request without a Bearer header gets 403 and a wrong key gets 401. The key
    /// is never echoed, logged or shown by `Debug`.
    pub key: Option<Secret>,
    /// A delay before every `POST /v1/systemone` answer, for benchmarks. Default: zero. The
    /// delivered delay is within about ±1 ms of this (the fake offsets tokio's timer, which
    /// fires up to ~2 ms late; see `router::latency_sleep`).
    pub latency: Duration,
    /// Standard deviation of the Gaussian noise added to every probability, imitating the live
    /// API's drift between identical calls (`--noise`). Each probability moves by
    /// `noise × z` around the deterministic hash answer and is clamped to [0, 1]; choice and
    /// score probabilities are then scaled back to sum 1. `z` is drawn from a hash of
    /// ([`Config::seed`], the request, how many identical requests came before it, the
    /// option), so the answers depend only on the seed and the order of identical requests,
    /// whatever the concurrency. Values outside (0, 1] mean no noise. Default: none (fully
    /// deterministic). Replayed answers are never noised.
    pub noise: Option<f64>,
    /// The seed of the noise (`--seed`). Default: 0.
    pub seed: u64,
    /// Recorded answers to serve for the requests they match. Default: none.
    pub replay: Option<Replay>,
    /// Requests per key (`Authorization` value; requests without one share one bucket) before
    /// answering 429 (`--rate-limit`): a token bucket refilled at this rate. Default: none.
    pub rate_limit: Option<Rate>,
    /// The request bucket's size (`--burst`). Default: one second of `rate_limit` (at least 1).
    pub burst: Option<u32>,
    /// Estimated input tokens per key before answering 429 (`--token-rate`); a request's
    /// estimate is its body's bytes ÷ 4. The bucket holds one second's worth. Default: none.
    pub token_rate: Option<Rate>,
    /// Requests the whole server answers before answering 529 (`--overload-rate`), one bucket
    /// for every caller holding one second's worth. Default: none.
    pub overload_rate: Option<Rate>,
    /// Sends `Retry-After: <seconds>` on the limiter's 429 and 529 (`--retry-after`). Default:
    /// none (no wait hint, like a scripted [`crate::Fault::RateLimited`]).
    pub retry_after: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_key() {
        let config = Config {
            key: Some("apikey_secret".into()),
            ..Config::default()
        };
        let shown = format!("{config:?}");
        assert!(!shown.contains("apikey_secret"));
        assert!(shown.contains("<redacted>"));
    }

    #[test]
    fn default_is_open_and_instant() {
        let config = Config::default();
        assert!(config.key.is_none() && config.noise.is_none() && config.replay.is_none());
        assert!(config.rate_limit.is_none() && config.token_rate.is_none());
        assert!(config.overload_rate.is_none() && config.retry_after.is_none());
        assert_eq!(config.latency, Duration::ZERO);
    }
}
