//! Settings of a fake server.

use std::fmt;
use std::time::Duration;

use crate::replay::Replay;

/// How a fake server behaves when no fault is scripted.
///
/// `Config::default()` has no key (every request is accepted, with or without an
/// `Authorization` header), no added latency, no noise and no replay.
#[derive(Clone, Default)]
pub struct Config {
    /// The API key to require as `Authorization: Bearer <key>`. Default: none (auth off).
    ///
    /// With a key, a request without a Bearer header gets 403 and a wrong key gets 401. The key
    /// is never echoed, logged or shown by `Debug`.
    pub key: Option<String>,
    /// A delay before every `POST /v1/systemone` answer, for benchmarks. Default: zero. The
    /// delivered delay is within about ±1 ms of this (the fake offsets tokio's timer, which
    /// fires up to ~2 ms late; see `router::latency_sleep`).
    pub latency: Duration,
    /// Standard deviation of Gaussian noise added to every logit, imitating the live API's
    /// drift between identical calls. Default: none (fully deterministic).
    pub noise: Option<f64>,
    /// Recorded answers to serve for the requests they match. Default: none.
    pub replay: Option<Replay>,
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("key", &self.key.as_ref().map(|_| "<redacted>"))
            .field("latency", &self.latency)
            .field("noise", &self.noise)
            .field("replay", &self.replay.is_some())
            .finish()
    }
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
        assert_eq!(config.latency, Duration::ZERO);
    }
}
