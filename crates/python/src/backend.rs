//! Where answers come from, as the keyword arguments of `Judge(...)` and `evaluate(...)` name
//! it: the live API (default), a replay of recorded exchanges, or the in-process fake. The
//! rules are the judge crate's; errors name the keyword that fixes them.

use std::{sync::Arc, time::Duration};

use jevjudge_client::limit::Limiter;
use jevjudge_judge::{
    backend_settings::{BackendSettings, Refused},
    choice::Chosen,
};
use jevjudge_wire::setting::Explain as _;
use pyo3::PyErr;

use crate::errors::{configuration, keyword};

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

/// Builds the backend of `settings`; the live client reports to `limiter` and paces its
/// retries by it. The rules are the judge crate's; refusals name the keywords.
pub fn resolve(settings: &BackendSettings, limiter: Option<Arc<Limiter>>) -> Result<Chosen, PyErr> {
    settings
        .resolve(None, limiter)
        .map_err(|error| configuration(Refused { settings, error }.explain(&keyword)))
}
