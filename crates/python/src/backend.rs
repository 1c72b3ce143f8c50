//! Where answers come from, as the keyword arguments of `Judge(...)` and `evaluate(...)` name
//! it: the live API (default), a replay of recorded exchanges, or the in-process fake. The
//! rules are the judge crate's [`Choice`]; errors name the keyword that fixes them.

use std::{path::PathBuf, sync::Arc, time::Duration};

use jevjudge_client::{ConfigError, limit::Limiter};
use jevjudge_judge::{
    SystemOneBackend,
    choice::{self, Choice, ChoiceError, Chosen, Source},
    live::{LiveError, LiveOptions},
};
use jevjudge_wire::lines::{DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_LINE_BYTES};
use pyo3::PyErr;

use crate::errors::configuration;

/// The backend keyword arguments.
#[derive(Debug, Clone, Default)]
pub struct BackendOptions {
    /// `replay=`: a `.jevl` file of recorded exchanges.
    pub replay: Option<PathBuf>,
    /// `fake=True`: the in-process deterministic fake.
    pub fake: bool,
    /// `model=`.
    pub model: Option<String>,
    /// `base_url=`.
    pub base_url: Option<String>,
    /// `api_key_env=`: the variable holding the key.
    pub api_key_env: Option<String>,
    /// `timeout=`: each attempt's timeout.
    pub timeout: Duration,
    /// `retries=`.
    pub retries: u32,
    /// `allow_insecure_http=`.
    pub allow_insecure_http: bool,
    /// `record=`: append every exchange to this `.jevl` file.
    pub record: Option<PathBuf>,
    /// Several records of one request may be replayed (repeats).
    pub repeated_records: bool,
}

/// Seconds as a positive duration, or the error naming `keyword`.
pub fn seconds(keyword: &str, value: f64) -> Result<Duration, PyErr> {
    Duration::try_from_secs_f64(value)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| {
            configuration(format!(
                "{keyword} must be a positive number of seconds, not {value}"
            ))
        })
}

impl BackendOptions {
    /// Builds the backend; the live client reports to `limiter` and paces its retries by it.
    pub fn resolve(&self, limiter: Option<Arc<Limiter>>) -> Result<Chosen, PyErr> {
        if self.replay.is_some() && (self.fake || self.record.is_some()) {
            return Err(configuration(
                "replay= cannot be combined with fake=True or record=",
            ));
        }
        let source = match &self.replay {
            Some(path) => Source::Replay(
                jevjudge_wire::record::read_file_capped(
                    path,
                    DEFAULT_MAX_LINE_BYTES,
                    DEFAULT_MAX_FILE_BYTES,
                )
                .map_err(|e| configuration(format!("replay=: {e}")))?,
            ),
            None if self.fake => Source::Fake,
            None => {
                let client = LiveOptions {
                    key_env: self.api_key_env.clone(),
                    base_url: self.base_url.clone(),
                    model: choice::live_model(self.model.as_deref()),
                    attempt_timeout: self.timeout,
                    retries: self.retries,
                    allow_insecure_http: self.allow_insecure_http,
                    on_attempt: None,
                    limiter,
                }
                .client()
                .map_err(|e| configuration(self.live_refusal(e)))?;
                Source::Live(Arc::new(SystemOneBackend::new(client)))
            }
        };
        Choice {
            source,
            model: self.model.clone(),
            repeated_records: self.repeated_records,
            record: self.record.clone(),
        }
        .resolve()
        .map_err(|e| configuration(self.refusal(e)))
    }

    fn refusal(&self, error: ChoiceError) -> String {
        let replay = self
            .replay
            .as_deref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        match &error {
            ChoiceError::Conflict { .. } => format!("replay={replay}: {error}"),
            ChoiceError::Empty => format!("replay={replay} holds no records"),
            ChoiceError::ModelNotRecorded { asked, held } => format!(
                "model={asked:?}: {replay} holds no exchange for it; it holds {} (pass one of \
                 them as model=, or leave model out when it holds one)",
                choice::quoted(held)
            ),
            ChoiceError::SeveralModels { held } => format!(
                "replay={replay} holds several models ({}); choose one with model=",
                choice::quoted(held)
            ),
            ChoiceError::Record { path, source } => {
                format!("record=: cannot open {}: {source}", path.display())
            }
            ChoiceError::Index(_) | ChoiceError::Replay(_) => format!("replay=: {error}"),
        }
    }

    /// A live client refused, naming the keyword or variable that fixes it; a key passed
    /// where the variable's name belongs is never echoed.
    fn live_refusal(&self, error: LiveError) -> String {
        let shown = |name: &str| {
            if jevjudge_client::is_conventional_var_name(name) {
                name.to_owned()
            } else {
                "the variable named by api_key_env (not shown: it does not look like a variable \
                 name; give the variable's NAME there, never the key itself)"
                    .to_owned()
            }
        };
        match (error, self.api_key_env.as_deref()) {
            (LiveError::Key(ConfigError::InvalidKeyInEnv { .. }), Some(name)) => format!(
                "{} does not hold a valid API key (printable ASCII without whitespace)",
                shown(name)
            ),
            (LiveError::Key(ConfigError::EnvNotUnicode { .. }), Some(name)) => {
                format!("{} is not valid Unicode", shown(name))
            }
            (LiveError::NoKey { .. }, name) => format!(
                "no System One API key: set {}TYPESAFE_API_KEY or JEV_API_KEY (or name another \
                 variable with api_key_env=), or run offline with replay=\"FILE.jevl\" \
                 (recorded answers) or fake=True (a deterministic fake)",
                name.map(|v| format!("{}, ", shown(v))).unwrap_or_default()
            ),
            (LiveError::Config(ConfigError::InsecureHttp { host }), _) => format!(
                "base_url=: plain http is allowed only for loopback hosts, not `{host}`: use \
                 https, or pass allow_insecure_http=True (the key then travels in clear text)"
            ),
            (LiveError::Config(ConfigError::BlankModel), _) => "model= must not be blank".into(),
            (LiveError::Config(e @ ConfigError::ZeroTimeout { .. }), _) => {
                format!("timeout=: {e}")
            }
            (LiveError::Config(e), _) => {
                format!(
                    "base_url=: {}",
                    e.to_string().replace("baseUrl", "the base URL")
                )
            }
            (other, _) => other.to_string(),
        }
    }
}
