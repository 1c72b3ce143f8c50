//! Settings of the review service: limits, budgets and callers' tokens.

use std::{fmt, str::FromStr, time::Duration};

use crate::{AuthTokens, TrustedProxy};

/// The default cap on a request body, in bytes (1 MiB).
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;
/// The default budget of a review whose request names none (2 s).
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(2);
/// The default cap on a caller's `budget_millis` (10 s).
pub const DEFAULT_MAX_BUDGET: Duration = Duration::from_secs(10);
/// The default bound on concurrent backend requests (32).
pub const DEFAULT_MAX_CONCURRENT: usize = 32;
/// The default number of reviews that may wait for a backend slot (256).
pub const DEFAULT_QUEUE: usize = 256;
/// The default `Retry-After` of a 503 (1 s).
pub const DEFAULT_RETRY_AFTER: Duration = Duration::from_secs(1);
/// The default time a client has to send a whole request head once its first byte arrived
/// (10 s).
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// The default time a connection may stay open with no request in flight and no byte of the
/// next one (60 s).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// The default cap on open connections (512): well below the usual 1,024 open-file limit, so
/// the backend pool, the record file and the listener always have descriptors left.
pub const DEFAULT_MAX_CONNECTIONS: usize = 512;

/// How the service protects itself and its backend.
///
/// `Config::default()` accepts bodies up to 1 MiB, reviews within 2 s unless the caller asks
/// for another budget (at most 10 s), runs at most 32 backend requests at once with 256 more
/// waiting, answers a full queue with 503 and `Retry-After: 1`, keeps at most 512 connections
/// open (a request head must arrive within 10 s of its first byte; an idle connection closes
/// after 60 s), and requires no token.
///
/// Memory is bounded by design: at most `max_concurrent + queue` requests are admitted at once,
/// and only admitted requests read their body (at most `max_body_bytes` each); everything else
/// is refused with a fast 503 before its body is read. Queued requests hold only their body
/// bytes; a request's JSON is parsed into a tree only once it holds a backend slot.
/// `docs/how-to/run-the-service.md` gives the whole memory bound.
#[derive(Debug, Clone)]
pub struct Config {
    /// The largest request body accepted, in bytes; a larger one is 413. Default: 1 MiB.
    pub max_body_bytes: usize,
    /// The budget of a review whose request has no `budget_millis`. Default: 2 s.
    pub default_budget: Duration,
    /// The cap on any review's budget: a larger `budget_millis` is lowered to it. It also
    /// bounds how long a request body may take to arrive (408 after). Default: 10 s.
    pub max_budget: Duration,
    /// How many reviews may call the backend at once (at least 1). Default: 32.
    pub max_concurrent: usize,
    /// How many admitted reviews may wait for a backend slot; one more is a fast 503.
    /// A review waits at most its own budget for a slot, then gets a 503. Default: 256.
    pub queue: usize,
    /// The `Retry-After` sent with a 503, rounded up to whole seconds (at least 1). Default: 1 s.
    pub retry_after: Duration,
    /// Callers' bearer tokens; empty means no authentication. Default: none.
    pub auth_tokens: AuthTokens,
    /// Administrators' bearer tokens: the only ones that may change routes (`PUT`, promote,
    /// rollback); they also read what callers' tokens read of routes. Empty means routes cannot
    /// be changed through the API. Default: none.
    pub admin_tokens: AuthTokens,
    /// The fewest shadowed reviews a version needs to be promoted without `force`.
    /// Default: [`jevjudge_store::DEFAULT_MIN_SHADOW_REVIEWS`].
    pub min_shadow_reviews: u64,
    /// How long a client may take to send a whole request head, counted from its first byte;
    /// the connection is closed after. Default: 10 s.
    pub header_timeout: Duration,
    /// How long a connection may stay open with no request in flight and no byte of a next
    /// request; it is closed after. Default: 60 s.
    pub idle_timeout: Duration,
    /// The most connections open at once. At the cap, a new connection closes the oldest one
    /// that has no request in flight, or is refused with a 503 when every one is busy.
    /// Default: 512.
    pub max_connections: usize,
    /// Networks of the reverse proxies in front of the service. Only from a peer inside one of
    /// them is `X-Forwarded-For` read to find the client's address (its rightmost address
    /// outside every one of them); from any other peer the peer's own address counts. The
    /// per-address limits (sign-in attempts, failed bearer checks) use that address.
    /// Default: none.
    pub trusted_proxies: Vec<TrustedProxy>,
    /// The address reviewers reach the service at (`https://review.example.com`), when it is
    /// behind a proxy. An `https` one makes the reviewer pages' cookies `Secure` whatever the
    /// request's `Host`, and a form posted from its origin counts as this site's. Default: none.
    pub public_url: Option<PublicUrl>,
    /// How many shadow reviews may send their own backend request at once, apart from (never
    /// taking) the live reviews' `max_concurrent` slots; a shadow finding them all taken is
    /// shed. `None`: a quarter of `max_concurrent`, at least 1. Default: `None`.
    pub shadow_max_concurrent: Option<usize>,
}

/// The address the service is reached at: `http://` or `https://`, a host (and port), an
/// optional path; no query, fragment or user. Kept without a trailing `/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicUrl {
    url: String,
    /// The length of `scheme://host[:port]`.
    origin_len: usize,
}

/// Why a public URL was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PublicUrlError {
    /// Not `http://` or `https://`.
    #[error("`{0}` does not start with https:// or http://")]
    Scheme(String),
    /// No host, or characters a URL cannot hold here (spaces, controls, non-ASCII, `?`, `#`,
    /// `@`).
    #[error("`{0}` is not a URL such as https://review.example.com")]
    Invalid(String),
}

impl PublicUrl {
    /// The URL, without a trailing `/`.
    pub fn as_str(&self) -> &str {
        &self.url
    }

    /// Whether it is an `https://` URL.
    pub fn is_https(&self) -> bool {
        self.url.starts_with("https://")
    }

    /// Its origin: `scheme://host[:port]`.
    pub fn origin(&self) -> &str {
        &self.url[..self.origin_len]
    }
}

impl FromStr for PublicUrl {
    type Err = PublicUrlError;

    fn from_str(text: &str) -> Result<PublicUrl, PublicUrlError> {
        let invalid = || PublicUrlError::Invalid(text.to_owned());
        let lower = text.to_ascii_lowercase();
        let scheme = ["https://", "http://"]
            .into_iter()
            .find(|scheme| lower.starts_with(scheme))
            .ok_or_else(|| PublicUrlError::Scheme(text.to_owned()))?;
        let rest = &text[scheme.len()..];
        if !rest.bytes().all(|b| b.is_ascii_graphic()) || rest.contains(['?', '#', '@', '\\']) {
            return Err(invalid());
        }
        let host_len = rest.find('/').unwrap_or(rest.len());
        let host = &rest[..host_len];
        if host.is_empty() || host.starts_with(':') {
            return Err(invalid());
        }
        let path = rest[host_len..].trim_end_matches('/');
        let url = format!("{scheme}{}{path}", host.to_ascii_lowercase());
        Ok(PublicUrl {
            origin_len: scheme.len() + host.len(),
            url,
        })
    }
}

impl fmt::Display for PublicUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.url)
    }
}

impl Default for Config {
    fn default() -> Config {
        Config {
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            default_budget: DEFAULT_BUDGET,
            max_budget: DEFAULT_MAX_BUDGET,
            max_concurrent: DEFAULT_MAX_CONCURRENT,
            queue: DEFAULT_QUEUE,
            retry_after: DEFAULT_RETRY_AFTER,
            auth_tokens: AuthTokens::none(),
            admin_tokens: AuthTokens::none(),
            min_shadow_reviews: jevjudge_store::DEFAULT_MIN_SHADOW_REVIEWS,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            trusted_proxies: Vec::new(),
            public_url: None,
            shadow_max_concurrent: None,
        }
    }
}

/// A setting that cannot work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// `max_concurrent` is zero.
    #[error("max_concurrent must be at least 1")]
    NoConcurrency,
    /// `max_concurrent + queue` does not fit in memory accounting (`usize` overflow).
    #[error("max_concurrent + queue is too large")]
    QueueTooLarge,
    /// `max_body_bytes` is zero.
    #[error("max_body_bytes must be positive")]
    NoBody,
    /// A zero budget.
    #[error("{setting} must be positive")]
    ZeroBudget {
        /// `default_budget` or `max_budget`.
        setting: &'static str,
    },
    /// The default budget is above the cap.
    #[error("default_budget must not exceed max_budget")]
    DefaultAboveMax,
    /// A zero connection timeout.
    #[error("{setting} must be positive")]
    ZeroTimeout {
        /// `header_timeout` or `idle_timeout`.
        setting: &'static str,
    },
    /// `max_connections` is zero.
    #[error("max_connections must be at least 1")]
    NoConnections,
}

impl jevjudge_wire::setting::Explain for ConfigError {
    /// The error; the default budget above the cap names both settings.
    fn explain(&self, name: jevjudge_wire::setting::Namer<'_>) -> String {
        use jevjudge_wire::setting::Setting;
        match self {
            ConfigError::DefaultAboveMax => format!(
                "{} must not exceed {}",
                name(Setting::Budget),
                name(Setting::MaxBudget)
            ),
            other => other.to_string(),
        }
    }
}

impl Config {
    /// Checks that the settings can work together.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.max_concurrent == 0 {
            return Err(ConfigError::NoConcurrency);
        }
        if self.max_concurrent.checked_add(self.queue).is_none()
            || self.max_concurrent > tokio::sync::Semaphore::MAX_PERMITS
        {
            return Err(ConfigError::QueueTooLarge);
        }
        if self.max_body_bytes == 0 {
            return Err(ConfigError::NoBody);
        }
        if self.default_budget.is_zero() {
            return Err(ConfigError::ZeroBudget {
                setting: "default_budget",
            });
        }
        if self.max_budget.is_zero() {
            return Err(ConfigError::ZeroBudget {
                setting: "max_budget",
            });
        }
        if self.default_budget > self.max_budget {
            return Err(ConfigError::DefaultAboveMax);
        }
        for (setting, timeout) in [
            ("header_timeout", self.header_timeout),
            ("idle_timeout", self.idle_timeout),
        ] {
            if timeout.is_zero() {
                return Err(ConfigError::ZeroTimeout { setting });
            }
        }
        if self.max_connections == 0 {
            return Err(ConfigError::NoConnections);
        }
        Ok(())
    }

    /// The budget of a review that asked for `requested` (or nothing): the request's, else the
    /// default, never above `max_budget`.
    pub fn budget_for(&self, requested: Option<Duration>) -> Duration {
        requested
            .unwrap_or(self.default_budget)
            .min(self.max_budget)
    }

    /// The shadows' own slots: `shadow_max_concurrent`, else a quarter of `max_concurrent`;
    /// at least 1.
    pub fn shadow_slots(&self) -> usize {
        self.shadow_max_concurrent
            .unwrap_or(self.max_concurrent / 4)
            .max(1)
    }

    /// The `Retry-After` value in whole seconds (rounded up, at least 1).
    pub fn retry_after_secs(&self) -> u64 {
        let secs = self.retry_after.as_secs();
        let secs = if self.retry_after.subsec_nanos() > 0 {
            secs.saturating_add(1)
        } else {
            secs
        };
        secs.max(1)
    }
}

/// A size given as text: `1048576`, `512KiB`, `1MiB` (also `KB`/`MB`, `K`/`M`, as powers of 1024).
pub fn parse_size(text: &str) -> Result<usize, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let multiplier: usize = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1024,
        "m" | "mb" | "mib" => 1024 * 1024,
        _ => return Err(format!("`{text}` is not a size like 65536, 512KiB or 1MiB")),
    };
    let size = digits
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(multiplier))
        .ok_or_else(|| format!("`{text}` is not a size like 65536, 512KiB or 1MiB"))?;
    if size == 0 {
        return Err("must be positive".to_owned());
    }
    Ok(size)
}

/// A listening address given as `HOST:PORT`: an IP address, or a host name such as `localhost` resolved once
/// (the first IPv4 address when there is one, so `localhost:0` listens on 127.0.0.1).
pub fn parse_listen_addr(text: &str) -> Result<std::net::SocketAddr, String> {
    use std::net::ToSocketAddrs;
    if let Ok(addr) = text.parse() {
        return Ok(addr);
    }
    let addrs: Vec<std::net::SocketAddr> = text
        .to_socket_addrs()
        .map_err(|e| format!("`{text}` is not HOST:PORT ({e})"))?
        .collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or_else(|| addrs.first())
        .copied()
        .ok_or_else(|| format!("`{text}` resolves to no address"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_documented() {
        let config = Config::default();
        assert_eq!(config.validate(), Ok(()));
        assert_eq!(config.max_body_bytes, 1_048_576);
        assert_eq!(config.default_budget, Duration::from_secs(2));
        assert_eq!(config.max_concurrent, 32);
        assert_eq!(config.queue, 256);
        assert!(!config.auth_tokens.is_enabled());
        assert_eq!(config.header_timeout, Duration::from_secs(10));
        assert_eq!(config.idle_timeout, Duration::from_secs(60));
        assert_eq!(config.max_connections, 512);
        assert_eq!(config.shadow_slots(), 8, "a quarter of 32");
    }

    #[test]
    fn the_shadows_share_is_a_quarter_of_the_live_slots_at_least_one_unless_given() {
        let slots = |max_concurrent, shadow_max_concurrent| {
            Config {
                max_concurrent,
                shadow_max_concurrent,
                ..Config::default()
            }
            .shadow_slots()
        };
        assert_eq!(slots(32, None), 8);
        assert_eq!(slots(3, None), 1);
        assert_eq!(slots(1, None), 1);
        assert_eq!(slots(32, Some(2)), 2);
        assert_eq!(slots(4, Some(40)), 40);
    }

    #[test]
    fn budgets_are_capped_at_the_maximum() {
        let config = Config {
            max_budget: Duration::from_millis(300),
            default_budget: Duration::from_millis(200),
            ..Config::default()
        };
        assert_eq!(config.budget_for(None), Duration::from_millis(200));
        assert_eq!(
            config.budget_for(Some(Duration::from_millis(100))),
            Duration::from_millis(100)
        );
        assert_eq!(
            config.budget_for(Some(Duration::from_secs(60))),
            Duration::from_millis(300)
        );
    }

    #[test]
    fn impossible_settings_are_refused() {
        /// What a row does to the default settings.
        type Change = fn(&mut Config);
        let bad: [(Change, ConfigError); 7] = [
            (|c| c.max_concurrent = 0, ConfigError::NoConcurrency),
            (|c| c.queue = usize::MAX, ConfigError::QueueTooLarge),
            (|c| c.max_body_bytes = 0, ConfigError::NoBody),
            (
                |c| c.default_budget = Duration::ZERO,
                ConfigError::ZeroBudget {
                    setting: "default_budget",
                },
            ),
            (
                |c| c.default_budget = Duration::from_secs(20),
                ConfigError::DefaultAboveMax,
            ),
            (
                |c| c.header_timeout = Duration::ZERO,
                ConfigError::ZeroTimeout {
                    setting: "header_timeout",
                },
            ),
            (|c| c.max_connections = 0, ConfigError::NoConnections),
        ];
        for (change, error) in bad {
            let mut config = Config::default();
            change(&mut config);
            assert_eq!(config.validate(), Err(error));
        }
    }

    #[test]
    fn secure_cookies_public_urls_parse_to_an_origin() {
        let url: PublicUrl = "HTTPS://Review.Example:8443/team/".parse().unwrap();
        assert_eq!(url.as_str(), "https://review.example:8443/team");
        assert_eq!(url.origin(), "https://review.example:8443");
        assert!(url.is_https());
        let plain: PublicUrl = "http://127.0.0.1:8080".parse().unwrap();
        assert!(!plain.is_https());
        assert_eq!(plain.origin(), "http://127.0.0.1:8080");
        for bad in ["review.example", "ftp://x", ""] {
            assert_eq!(
                bad.parse::<PublicUrl>(),
                Err(PublicUrlError::Scheme(bad.to_owned())),
                "{bad}"
            );
        }
        for bad in [
            "https://",
            "https:///x",
            "https://a b",
            "https://x?y",
            "https://u@x",
            "https://:80",
        ] {
            assert_eq!(
                bad.parse::<PublicUrl>(),
                Err(PublicUrlError::Invalid(bad.to_owned())),
                "{bad}"
            );
        }
    }

    #[test]
    fn retry_after_rounds_up_to_whole_seconds() {
        for (wait, secs) in [(0, 1), (1, 1), (999, 1), (1000, 1), (1001, 2), (5000, 5)] {
            let config = Config {
                retry_after: Duration::from_millis(wait),
                ..Config::default()
            };
            assert_eq!(config.retry_after_secs(), secs, "{wait} ms");
        }
    }

    #[test]
    fn sizes_take_binary_suffixes() {
        assert_eq!(parse_size("1048576"), Ok(1_048_576));
        assert_eq!(parse_size("512KiB"), Ok(512 * 1024));
        assert_eq!(parse_size("2 MiB"), Ok(2 * 1024 * 1024));
        assert_eq!(parse_size("64k"), Ok(64 * 1024));
        for bad in ["", "0", "1GiB", "-1", "1.5MiB", "MiB"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn localhost_with_port_zero_is_accepted() {
        let addr = parse_listen_addr("localhost:0").expect("localhost resolves");
        assert!(addr.ip().is_loopback(), "{addr}");
        assert_eq!(addr.port(), 0);
        assert_eq!(
            parse_listen_addr("127.0.0.1:8080"),
            Ok("127.0.0.1:8080".parse().expect("an address"))
        );
        assert!(parse_listen_addr("localhost").is_err());
        assert!(parse_listen_addr("not a host:80").is_err());
    }
}
