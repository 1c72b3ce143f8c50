//! Client configuration: the builder, its defaults and its errors (systemone-wire.md §1–§2).
//!
//! Every setting has a default that matches the spec, and anything read from the environment
//! (`TYPESAFE_BASE_URL`, `TYPESAFE_API_KEY`, `JEV_API_KEY`) goes through one lookup function,
//! which tests replace with [`ClientBuilder::env_lookup`] instead of mutating the process
//! environment.

use std::{fmt, sync::Arc, time::Duration};

use jevjudge_wire::DEFAULT_MODEL;

use crate::{
    ApiKey, AttemptHook, Backoff, Client, ConfigError, HttpTransport, Transport,
    key::process_env,
    limit::Limiter,
    retry::RetryPolicy,
    settings::Settings,
    url::{DEFAULT_BASE_URL, Endpoints, TYPESAFE_BASE_URL},
};

/// The default per-attempt timeout (as in the Java client).
pub const DEFAULT_ATTEMPT_TIMEOUT: Duration = Duration::from_secs(5);
/// The default overall deadline of a plain call (as in the official SDK).
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// The default number of retries (so at most 3 attempts).
pub const DEFAULT_RETRIES: u32 = 2;

type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;
type MakeTransport<T> = Box<dyn FnOnce() -> Result<T, ConfigError> + Send>;

/// Builds a [`Client`]; start with [`Client::builder`].
///
/// ```no_run
/// use std::time::Duration;
/// use jevjudge_client::{ApiKey, Client};
///
/// let client = Client::builder()
///     .base_url("https://api.typesafe.ai")
///     .api_key(ApiKey::new("apikey_example").unwrap())
///     .model("jev-1.13.0")
///     .attempt_timeout(Duration::from_secs(5))
///     .retries(2)
///     .build()
///     .unwrap();
/// assert_eq!(client.endpoint(), "https://api.typesafe.ai/v1/systemone");
/// ```
pub struct ClientBuilder<T: Transport = HttpTransport> {
    base_url: Option<String>,
    api_key: Option<ApiKey>,
    allow_no_key: bool,
    model: String,
    attempt_timeout: Duration,
    call_timeout: Duration,
    retries: u32,
    backoff: Backoff,
    allow_insecure_http: bool,
    on_attempt: Option<AttemptHook>,
    limiter: Option<Arc<Limiter>>,
    env: EnvLookup,
    transport: MakeTransport<T>,
}

impl Client<HttpTransport> {
    /// A builder with the defaults of systemone-wire.md §2.
    pub fn builder() -> ClientBuilder<HttpTransport> {
        ClientBuilder::new()
    }
}

impl ClientBuilder<HttpTransport> {
    pub(crate) fn new() -> ClientBuilder<HttpTransport> {
        ClientBuilder {
            base_url: None,
            api_key: None,
            allow_no_key: false,
            model: DEFAULT_MODEL.to_owned(),
            attempt_timeout: DEFAULT_ATTEMPT_TIMEOUT,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            retries: DEFAULT_RETRIES,
            backoff: Backoff::default(),
            allow_insecure_http: false,
            on_attempt: None,
            limiter: None,
            env: Arc::new(process_env),
            transport: Box::new(HttpTransport::new),
        }
    }
}

impl<T: Transport> ClientBuilder<T> {
    /// The API root (see systemone-wire.md §1 for how the endpoint is joined). Default: the
    /// `TYPESAFE_BASE_URL` environment variable when set and not blank, else
    /// `https://api.typesafe.ai`.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// The API key. Default: `TYPESAFE_API_KEY` when set and not blank, else `JEV_API_KEY`.
    pub fn api_key(mut self, key: ApiKey) -> Self {
        self.api_key = Some(key);
        self
    }

    /// Allows building without any key (for a local fake without auth); no `Authorization`
    /// header is then sent. Default `false`: a missing key fails the build.
    pub fn allow_no_key(mut self, allow: bool) -> Self {
        self.allow_no_key = allow;
        self
    }

    /// The model sent when a request names none. Default `jev-latest`.
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = model.into();
        self
    }

    /// The timeout of each attempt, including reading the body. Default 5 s. It never extends
    /// past the call's deadline.
    pub fn attempt_timeout(mut self, timeout: Duration) -> Self {
        self.attempt_timeout = timeout;
        self
    }

    /// How many times a retryable failure is retried. Default 2 (so at most 3 attempts); 0
    /// disables retries.
    pub fn retries(mut self, retries: u32) -> Self {
        self.retries = retries;
        self
    }

    /// The wait before a retry when the server asks for none. Default [`Backoff::sdk`].
    pub fn backoff(mut self, backoff: Backoff) -> Self {
        self.backoff = backoff;
        self
    }

    /// The overall deadline of a call whose [`crate::CallOptions`] give none, counted from the
    /// call's start and covering every attempt and wait. Default 30 s.
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// Allows plain `http://` to hosts other than loopback. Default `false`, because the key
    /// would travel in clear text.
    pub fn allow_insecure_http(mut self, allow: bool) -> Self {
        self.allow_insecure_http = allow;
        self
    }

    /// A hook called after every attempt with its number, retry count, outcome and duration.
    /// It runs inline on the calling task, so it should be quick.
    pub fn on_attempt(mut self, hook: AttemptHook) -> Self {
        self.on_attempt = Some(hook);
        self
    }

    /// Reports every attempt to `limiter` (429/529 cut its limit, `Retry-After` becomes a floor,
    /// 401/403 stop its admissions) and paces retries through it. Admitting a call's *first*
    /// attempt is the caller's job ([`Limiter::acquire`]), before the review's budget starts.
    pub fn limiter(mut self, limiter: Arc<Limiter>) -> Self {
        self.limiter = Some(limiter);
        self
    }

    /// Replaces how environment variables are read (default: the process environment), so
    /// tests and embedders need not touch the real environment.
    pub fn env_lookup(
        mut self,
        lookup: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        self.env = Arc::new(lookup);
        self
    }

    /// Uses `transport` instead of [`HttpTransport`] (tests, or a custom stack).
    pub fn transport<U: Transport>(self, transport: U) -> ClientBuilder<U> {
        ClientBuilder {
            base_url: self.base_url,
            api_key: self.api_key,
            allow_no_key: self.allow_no_key,
            model: self.model,
            attempt_timeout: self.attempt_timeout,
            call_timeout: self.call_timeout,
            retries: self.retries,
            backoff: self.backoff,
            allow_insecure_http: self.allow_insecure_http,
            on_attempt: self.on_attempt,
            limiter: self.limiter,
            env: self.env,
            transport: Box::new(move || Ok(transport)),
        }
    }

    /// Checks the configuration and builds the client.
    pub fn build(self) -> Result<Client<T>, ConfigError> {
        let env = &self.env;
        let base_url = match self.base_url {
            Some(url) => url,
            None => env(TYPESAFE_BASE_URL)
                .filter(|url| !url.trim().is_empty())
                .unwrap_or_else(|| DEFAULT_BASE_URL.to_owned()),
        };
        let endpoints = Endpoints::parse(&base_url, self.allow_insecure_http)?;
        let key = match self.api_key {
            Some(key) => Some(key),
            None => ApiKey::resolve(|name| env(name))?,
        };
        if key.is_none() && !self.allow_no_key {
            return Err(ConfigError::MissingKey);
        }
        if self.model.trim().is_empty() {
            return Err(ConfigError::BlankModel);
        }
        if self.attempt_timeout.is_zero() {
            return Err(ConfigError::ZeroTimeout {
                setting: "attempt_timeout",
            });
        }
        if self.call_timeout.is_zero() {
            return Err(ConfigError::ZeroTimeout {
                setting: "call_timeout",
            });
        }
        let transport = (self.transport)()?;
        Ok(Client::from_settings(
            transport,
            Settings {
                endpoints,
                key,
                model: self.model,
                attempt_timeout: self.attempt_timeout,
                call_timeout: self.call_timeout,
                retry: RetryPolicy::new(self.retries),
                backoff: self.backoff,
                on_attempt: self.on_attempt,
                limiter: self.limiter,
            },
        ))
    }
}

impl<T: Transport> fmt::Debug for ClientBuilder<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key)
            .field("allow_no_key", &self.allow_no_key)
            .field("model", &self.model)
            .field("attempt_timeout", &self.attempt_timeout)
            .field("call_timeout", &self.call_timeout)
            .field("retries", &self.retries)
            .field("backoff", &self.backoff)
            .field("allow_insecure_http", &self.allow_insecure_http)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{HttpRequest, HttpResponse, TransportError};

    struct Unused;

    impl Transport for Unused {
        async fn send(&self, _: HttpRequest) -> Result<HttpResponse, TransportError> {
            Ok(HttpResponse::new(500, Vec::new()))
        }
    }

    fn builder(env: &'static [(&'static str, &'static str)]) -> ClientBuilder<Unused> {
        Client::builder()
            .env_lookup(move |name| {
                env.iter()
                    .find(|(key, _)| *key == name)
                    .map(|(_, value)| (*value).to_owned())
            })
            .transport(Unused)
    }

    #[test]
    fn defaults_follow_the_spec() {
        let client = builder(&[("JEV_API_KEY", "k")]).build().unwrap();
        assert_eq!(client.endpoint(), "https://api.typesafe.ai/v1/systemone");
        assert_eq!(
            client.models_endpoint(),
            "https://api.typesafe.ai/v1/models"
        );
        assert_eq!(client.model(), "jev-latest");
        let shown = format!("{client:?}");
        for expected in [
            "attempt_timeout: 5s",
            "call_timeout: 30s",
            "retries: 2",
            "has_key: true",
        ] {
            assert!(shown.contains(expected), "{shown}");
        }
    }

    #[test]
    fn the_base_url_comes_from_configuration_then_the_environment() {
        let env: &[(&str, &str)] = &[
            ("JEV_API_KEY", "k"),
            ("TYPESAFE_BASE_URL", "http://127.0.0.1:8787/"),
        ];
        let client = builder(env).build().unwrap();
        assert_eq!(client.endpoint(), "http://127.0.0.1:8787/v1/systemone");
        let client = builder(env)
            .base_url("https://gw.example/p")
            .build()
            .unwrap();
        assert_eq!(client.endpoint(), "https://gw.example/p/v1/systemone");
        let blank: &[(&str, &str)] = &[("JEV_API_KEY", "k"), ("TYPESAFE_BASE_URL", "  ")];
        assert_eq!(
            builder(blank).build().unwrap().endpoint(),
            "https://api.typesafe.ai/v1/systemone"
        );
    }

    #[test]
    fn a_missing_key_fails_unless_allowed() {
        let error = builder(&[]).build().unwrap_err();
        assert_eq!(error, ConfigError::MissingKey);
        let text = error.to_string();
        assert!(
            text.contains("TYPESAFE_API_KEY") && text.contains("JEV_API_KEY"),
            "{text}"
        );
        let client = builder(&[]).allow_no_key(true).build().unwrap();
        assert!(format!("{client:?}").contains("has_key: false"));
    }

    #[test]
    fn key_resolution_prefers_configuration_then_typesafe_then_jev() {
        let env: &[(&str, &str)] = &[("TYPESAFE_API_KEY", " "), ("JEV_API_KEY", "fallback")];
        assert!(builder(env).build().is_ok());
        let bad: &[(&str, &str)] = &[("TYPESAFE_API_KEY", "has space")];
        assert_eq!(
            builder(bad).build().unwrap_err(),
            ConfigError::InvalidKeyInEnv {
                name: "TYPESAFE_API_KEY".into()
            }
        );
        // An explicit key means the environment is not consulted for one.
        let client = builder(bad)
            .api_key(ApiKey::new("explicit").unwrap())
            .build();
        assert!(client.is_ok());
    }

    #[test]
    fn settings_are_validated() {
        let env: &'static [(&str, &str)] = &[("JEV_API_KEY", "k")];
        assert_eq!(
            builder(env).model(" ").build().unwrap_err(),
            ConfigError::BlankModel
        );
        assert_eq!(
            builder(env)
                .attempt_timeout(Duration::ZERO)
                .build()
                .unwrap_err(),
            ConfigError::ZeroTimeout {
                setting: "attempt_timeout"
            }
        );
        assert_eq!(
            builder(env)
                .call_timeout(Duration::ZERO)
                .build()
                .unwrap_err(),
            ConfigError::ZeroTimeout {
                setting: "call_timeout"
            }
        );
        assert_eq!(
            builder(env)
                .base_url("not-a-url")
                .build()
                .unwrap_err()
                .to_string(),
            "baseUrl must be an absolute http(s) URL"
        );
        assert!(matches!(
            builder(env)
                .base_url("http://api.typesafe.ai")
                .build()
                .unwrap_err(),
            ConfigError::InsecureHttp { .. }
        ));
        assert!(
            builder(env)
                .base_url("http://api.typesafe.ai")
                .allow_insecure_http(true)
                .build()
                .is_ok()
        );
    }

    #[test]
    fn debug_of_builder_and_client_never_shows_the_key() {
        let key = ApiKey::new("apikey_SENTINEL_7f3a").unwrap();
        let builder = builder(&[]).api_key(key);
        assert!(!format!("{builder:?}").contains("SENTINEL"));
        let client = builder.build().unwrap();
        let shown = format!("{client:?} {client:#?}");
        assert!(!shown.contains("SENTINEL"), "{shown}");
        assert!(format!("{client:?}").ends_with(", .. }"), "{shown}");
    }

    #[test]
    fn the_real_transport_builds() {
        let client = Client::builder()
            .api_key(ApiKey::new("k").unwrap())
            .base_url("http://localhost:1")
            .build();
        assert!(client.is_ok());
    }
}
