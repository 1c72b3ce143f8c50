//! Where answers come from, as a front end's settings give it — flags on the command line,
//! keyword arguments in Python: [`BackendSettings::resolve`] reads a replay file, builds the
//! live client (its key from the environment only) or the fake, and applies [`Choice`]'s
//! rules. What it refuses is a [`ResolveError`], whose [`Explain`] names the setting that fixes
//! it in the front end's words.

use std::{path::PathBuf, sync::Arc, time::Duration};

use jevjudge_client::{AttemptHook, limit::Limiter};
use jevjudge_wire::{
    lines::{DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_LINE_BYTES},
    record::{RecordError, RecordErrorKind},
    setting::{Explain, Namer, Setting},
};

use crate::{
    SystemOneBackend,
    choice::{self, Choice, ChoiceError, Chosen, Source},
    live::{LiveError, LiveOptions},
};

/// The backend settings: a replay file, the fake, or the live API (the default) with its
/// model, URL, key variable, timeout and retries; optionally a record file.
#[derive(Debug, Clone)]
pub struct BackendSettings {
    /// Answer every request from the recorded exchanges in this `.jevl` file.
    pub replay: Option<PathBuf>,
    /// The in-process deterministic fake.
    pub fake: bool,
    /// The model to ask [default: `jev-latest`; with a replay, the recording's model when it
    /// holds exactly one].
    pub model: Option<String>,
    /// The base URL [default: `$TYPESAFE_BASE_URL`, else the public API].
    pub base_url: Option<String>,
    /// The environment variable to read the key from first.
    pub api_key_env: Option<String>,
    /// Each attempt's timeout (live API).
    pub timeout: Duration,
    /// Retries of retryable failures (live API).
    pub retries: u32,
    /// Allow plain `http://` to a host that is not loopback.
    pub allow_insecure_http: bool,
    /// Append every successful exchange to this `.jevl` file (not with a replay).
    pub record: Option<PathBuf>,
    /// A recording may hold several different records of one request (repeats).
    pub repeated_records: bool,
    /// The longest line of the replay file.
    pub max_line_bytes: usize,
    /// The largest replay file.
    pub max_input_bytes: u64,
}

impl Default for BackendSettings {
    /// The live API with the documented defaults: a 5 s attempt timeout, 2 retries.
    fn default() -> BackendSettings {
        BackendSettings {
            replay: None,
            fake: false,
            model: None,
            base_url: None,
            api_key_env: None,
            timeout: Duration::from_secs(5),
            retries: 2,
            allow_insecure_http: false,
            record: None,
            repeated_records: false,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            max_input_bytes: DEFAULT_MAX_FILE_BYTES,
        }
    }
}

/// Why the settings give no backend.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// A replay together with the fake or a record file.
    #[error("a replay cannot be combined with the fake or a record file")]
    Combined,
    /// The fake was asked for in a build without it.
    #[error("this build has no fake backend")]
    NoFake,
    /// The replay file cannot be read.
    #[error("{0}")]
    Replay(RecordError),
    /// The live client cannot be made.
    #[error(transparent)]
    Live(LiveError),
    /// The choice's rules refuse it.
    #[error(transparent)]
    Choice(ChoiceError),
}

/// A [`ResolveError`] with the settings it was made from, for [`Explain`].
pub struct Refused<'a> {
    /// The settings.
    pub settings: &'a BackendSettings,
    /// The error.
    pub error: ResolveError,
}

impl std::fmt::Display for Refused<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

impl Explain for Refused<'_> {
    /// The refusal naming the setting that fixes it: the replay file with its path, a base URL
    /// that came from the environment with its variable, a cap with the setting that raises it.
    fn explain(&self, name: Namer<'_>) -> String {
        let settings = self.settings;
        let named = |setting: Setting| match (setting, &settings.replay, &settings.base_url) {
            (Setting::Replay, Some(path), _) => format!("{} {}", name(setting), path.display()),
            (Setting::BaseUrl, _, None) => format!("{} (from $TYPESAFE_BASE_URL)", name(setting)),
            _ => name(setting),
        };
        match &self.error {
            ResolveError::Combined => format!(
                "{} cannot be combined with {} or {}",
                name(Setting::Replay),
                name(Setting::Fake),
                name(Setting::Record)
            ),
            ResolveError::NoFake => format!("{}: {}", name(Setting::Fake), self.error),
            ResolveError::Replay(error) => {
                let hint = match error.kind() {
                    RecordErrorKind::LineTooLong { .. } => {
                        format!(" (raise the cap with {})", name(Setting::MaxLineBytes))
                    }
                    RecordErrorKind::FileTooLarge { .. } => {
                        format!(" (raise the cap with {})", name(Setting::MaxInputBytes))
                    }
                    _ => String::new(),
                };
                format!("{}: {error}{hint}", name(Setting::Replay))
            }
            ResolveError::Live(error) => error.explain(&named),
            ResolveError::Choice(error) => error.explain(&named),
        }
    }
}

impl BackendSettings {
    /// Builds the backend. The live client reports every attempt to `on_attempt` (metrics) and
    /// to `limiter`, and paces its retries through it; offline backends make no attempts.
    pub fn resolve(
        &self,
        on_attempt: Option<AttemptHook>,
        limiter: Option<Arc<Limiter>>,
    ) -> Result<Chosen, ResolveError> {
        if self.replay.is_some() && (self.fake || self.record.is_some()) {
            return Err(ResolveError::Combined);
        }
        let source = match &self.replay {
            Some(path) => Source::Replay(
                jevjudge_wire::record::read_file_capped(
                    path,
                    self.max_line_bytes,
                    self.max_input_bytes,
                )
                .map_err(ResolveError::Replay)?,
            ),
            None if self.fake => fake()?,
            None => {
                let client = LiveOptions {
                    key_env: self.api_key_env.clone(),
                    base_url: self.base_url.clone(),
                    model: choice::live_model(self.model.as_deref()),
                    attempt_timeout: self.timeout,
                    retries: self.retries,
                    allow_insecure_http: self.allow_insecure_http,
                    on_attempt,
                    limiter,
                }
                .client()
                .map_err(ResolveError::Live)?;
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
        .map_err(ResolveError::Choice)
    }
}

#[cfg(feature = "fake")]
fn fake() -> Result<Source, ResolveError> {
    Ok(Source::Fake)
}

#[cfg(not(feature = "fake"))]
fn fake() -> Result<Source, ResolveError> {
    Err(ResolveError::NoFake)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flag(setting: Setting) -> String {
        format!("--{}", setting.key().replace('_', "-"))
    }

    fn refusal(settings: &BackendSettings) -> String {
        match settings.resolve(None, None) {
            Ok(_) => panic!("resolved"),
            Err(error) => Refused { settings, error }.explain(&flag),
        }
    }

    #[test]
    fn a_replay_with_a_record_file_is_refused_naming_both() {
        let settings = BackendSettings {
            replay: Some("a.jevl".into()),
            record: Some("b.jevl".into()),
            ..BackendSettings::default()
        };
        assert_eq!(
            refusal(&settings),
            "--replay cannot be combined with --fake or --record"
        );
    }

    #[test]
    fn a_missing_replay_file_names_the_setting_and_the_file() {
        let settings = BackendSettings {
            replay: Some("/nonexistent/answers.jevl".into()),
            ..BackendSettings::default()
        };
        let said = refusal(&settings);
        assert!(said.starts_with("--replay: "), "{said}");
        assert!(said.contains("/nonexistent/answers.jevl"), "{said}");
    }

    #[test]
    fn a_replay_file_over_the_cap_names_the_setting_that_raises_it() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("big.jevl");
        std::fs::write(&path, "x".repeat(100)).expect("written");
        let settings = BackendSettings {
            replay: Some(path),
            max_input_bytes: 10,
            ..BackendSettings::default()
        };
        let said = refusal(&settings);
        assert!(
            said.ends_with("(raise the cap with --max-input-bytes)"),
            "{said}"
        );
    }
}
