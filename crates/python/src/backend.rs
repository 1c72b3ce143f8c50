//! Where answers come from, as the keyword arguments of `Judge(...)` and `evaluate(...)` name
//! it: the live API (default), a replay of recorded exchanges, or the in-process fake. The
//! rules are the judge crate's; errors name the keyword that fixes them.

use std::{path::PathBuf, sync::Arc, time::Duration};

use jevjudge_client::limit::Limiter;
use jevjudge_judge::{
    backend_settings::{BackendSettings, Refused},
    choice::Chosen,
};
use jevjudge_wire::setting::Explain as _;
use pyo3::PyErr;

use crate::errors::{configuration, keyword};

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
    /// The rules are the judge crate's ([`BackendSettings`]); refusals name the keywords.
    pub fn resolve(&self, limiter: Option<Arc<Limiter>>) -> Result<Chosen, PyErr> {
        let settings = BackendSettings {
            replay: self.replay.clone(),
            fake: self.fake,
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            api_key_env: self.api_key_env.clone(),
            timeout: self.timeout,
            retries: self.retries,
            allow_insecure_http: self.allow_insecure_http,
            record: self.record.clone(),
            repeated_records: self.repeated_records,
            ..BackendSettings::default()
        };
        settings.resolve(None, limiter).map_err(|error| {
            configuration(
                Refused {
                    settings: &settings,
                    error,
                }
                .explain(&keyword),
            )
        })
    }
}
