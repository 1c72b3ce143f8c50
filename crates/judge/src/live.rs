//! The live System One client a run reviews with: the key comes from the environment only.

use std::{sync::Arc, time::Duration};

use jevjudge_client::{ApiKey, AttemptHook, Client, ConfigError, limit::Limiter};
use jevjudge_wire::setting::{Explain, Namer, Setting};

/// How to reach the live API.
#[derive(Default)]
pub struct LiveOptions {
    /// The environment variable to read the key from first (then `TYPESAFE_API_KEY`, then
    /// `JEV_API_KEY`); without one, those two.
    pub key_env: Option<String>,
    /// The base URL; without one, `$TYPESAFE_BASE_URL`, else the public API.
    pub base_url: Option<String>,
    /// The model to ask.
    pub model: String,
    /// The per-attempt timeout.
    pub attempt_timeout: Duration,
    /// Retries of retryable failures.
    pub retries: u32,
    /// Allow plain `http://` to a host that is not loopback.
    pub allow_insecure_http: bool,
    /// Sees every attempt (for metrics).
    pub on_attempt: Option<AttemptHook>,
    /// Paces and counts every attempt, shared with whoever starts reviews.
    pub limiter: Option<Arc<Limiter>>,
}

/// A live client that cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LiveError {
    /// The variable the key is read from holds no valid key, or is not Unicode.
    #[error(transparent)]
    Key(ConfigError),
    /// No variable holds a key.
    #[error("no System One API key")]
    NoKey {
        /// The variable named to read it from first, when one was.
        key_env: Option<String>,
    },
    /// The other settings are refused (base URL, model, timeout).
    #[error(transparent)]
    Config(ConfigError),
}

impl LiveOptions {
    /// Builds the client, the key read from the environment (see [`LiveOptions::key_env`]).
    pub fn client(self) -> Result<Client, LiveError> {
        let key = ApiKey::from_env_or_default(self.key_env.as_deref())
            .map_err(LiveError::Key)?
            .ok_or_else(|| LiveError::NoKey {
                key_env: self.key_env.clone(),
            })?;
        self.client_with(key)
    }

    /// Builds the client with `key` (the environment is not read).
    pub fn client_with(self, key: ApiKey) -> Result<Client, LiveError> {
        let mut builder = Client::builder()
            .api_key(key)
            .model(self.model)
            .attempt_timeout(self.attempt_timeout)
            .retries(self.retries)
            .allow_insecure_http(self.allow_insecure_http);
        if let Some(url) = self.base_url {
            builder = builder.base_url(url);
        }
        if let Some(hook) = self.on_attempt {
            builder = builder.on_attempt(hook);
        }
        if let Some(limiter) = self.limiter {
            builder = builder.limiter(limiter);
        }
        builder.build().map_err(LiveError::Config)
    }
}

impl Explain for LiveError {
    /// The refusal with the setting that fixes it. A key pasted where a variable's name belongs
    /// is never echoed: only a conventional variable name is shown.
    fn explain(&self, name: Namer<'_>) -> String {
        let shown = |var: &str| {
            if jevjudge_client::is_conventional_var_name(var) {
                var.to_owned()
            } else {
                format!(
                    "the variable named by {} (not shown: it does not look like a variable name; \
                     give the variable's NAME there, never the key itself)",
                    name(Setting::ApiKeyEnv)
                )
            }
        };
        match self {
            LiveError::Key(ConfigError::InvalidKeyInEnv { name: var }) => format!(
                "{} does not hold a valid API key (printable ASCII without whitespace)",
                shown(var)
            ),
            LiveError::Key(ConfigError::EnvNotUnicode { name: var }) => {
                format!("{} is not valid Unicode", shown(var))
            }
            LiveError::NoKey { key_env } => format!(
                "no System One API key: set {}TYPESAFE_API_KEY or JEV_API_KEY (or name another \
                 variable with {}), or run offline with {} FILE.jevl (recorded answers) or {} (a \
                 deterministic fake)",
                key_env
                    .as_deref()
                    .map(|var| format!("{}, ", shown(var)))
                    .unwrap_or_default(),
                name(Setting::ApiKeyEnv),
                name(Setting::Replay),
                name(Setting::Fake)
            ),
            LiveError::Config(ConfigError::InsecureHttp { host }) => format!(
                "{}: plain http is allowed only for loopback hosts, not `{host}`: use https, or \
                 pass {} (the key then travels in clear text)",
                name(Setting::BaseUrl),
                name(Setting::AllowInsecureHttp)
            ),
            LiveError::Config(
                e @ (ConfigError::InvalidBaseUrl
                | ConfigError::BaseUrlQueryOrFragment
                | ConfigError::BaseUrlCredentials),
            ) => format!(
                "{}: {}",
                name(Setting::BaseUrl),
                e.to_string().replace("baseUrl", "the base URL")
            ),
            LiveError::Config(ConfigError::BlankModel) => {
                format!("{}: must not be blank", name(Setting::Model))
            }
            LiveError::Config(e @ ConfigError::ZeroTimeout { .. }) => {
                format!("{}: {e}", name(Setting::Timeout))
            }
            other => other.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> LiveOptions {
        LiveOptions {
            model: "jev-latest".to_owned(),
            attempt_timeout: Duration::from_secs(5),
            ..LiveOptions::default()
        }
    }

    fn key() -> ApiKey {
        ApiKey::new("apikey_test").expect("a valid key")
    }

    #[test]
    fn refused_settings_are_config_errors() {
        let error = LiveOptions {
            base_url: Some("http://example.com".to_owned()),
            ..options()
        }
        .client_with(key())
        .expect_err("plain http to a remote host");
        assert!(
            matches!(error, LiveError::Config(ConfigError::InsecureHttp { .. })),
            "{error:?}"
        );
        let blank = LiveOptions {
            model: " ".to_owned(),
            ..options()
        }
        .client_with(key())
        .expect_err("a blank model");
        assert_eq!(blank, LiveError::Config(ConfigError::BlankModel));
    }

    #[test]
    fn loopback_and_allowed_plain_http_build_a_client() {
        for (url, allow) in [("http://127.0.0.1:9", false), ("http://example.com", true)] {
            let client = LiveOptions {
                base_url: Some(url.to_owned()),
                allow_insecure_http: allow,
                ..options()
            }
            .client_with(key());
            assert!(client.is_ok(), "{url}");
        }
    }
}
