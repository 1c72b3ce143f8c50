//! Why a client could not be built: the one error of [`crate::ClientBuilder::build`], also
//! returned by the key, URL and transport checks it runs.

/// Why a client could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The base URL does not parse as an absolute `http(s)` URL with a host.
    #[error("baseUrl must be an absolute http(s) URL")]
    InvalidBaseUrl,
    /// The base URL has a query string or a fragment.
    #[error("baseUrl must not have a query string or a fragment")]
    BaseUrlQueryOrFragment,
    /// The base URL embeds a user name or password.
    #[error("baseUrl must not contain credentials")]
    BaseUrlCredentials,
    /// Plain `http` to a host that is not loopback, without the opt-in.
    #[error(
        "plain http is allowed only for loopback hosts, not `{host}`: use https, or opt in with allow_insecure_http(true)"
    )]
    InsecureHttp {
        /// The host, as configured.
        host: String,
    },
    /// No key configured and none in `TYPESAFE_API_KEY` or `JEV_API_KEY`.
    #[error("no API key: configure one, or set TYPESAFE_API_KEY or JEV_API_KEY")]
    MissingKey,
    /// An empty or whitespace-only key.
    #[error("the API key is blank")]
    BlankKey,
    /// A key with whitespace, control or non-ASCII characters.
    #[error("the API key must be printable ASCII without whitespace")]
    InvalidKey,
    /// An environment variable holds something that is not a valid key.
    #[error("{name} does not hold a valid API key (printable ASCII without whitespace)")]
    InvalidKeyInEnv {
        /// The variable's name.
        name: String,
    },
    /// An environment variable is not valid Unicode.
    #[error("{name} is not valid Unicode")]
    EnvNotUnicode {
        /// The variable's name.
        name: String,
    },
    /// A blank model name.
    #[error("model must not be blank")]
    BlankModel,
    /// A zero timeout.
    #[error("{setting} must be positive")]
    ZeroTimeout {
        /// `attempt_timeout` or `call_timeout`.
        setting: &'static str,
    },
    /// The HTTP transport could not be created (TLS set-up).
    #[error("the HTTP transport could not be set up")]
    TransportSetup,
}
