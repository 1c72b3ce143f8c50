//! The backend options shared by every subcommand that reviews (cli-and-formats.md §1.1),
//! resolved into one [`Backend`].

use std::{path::PathBuf, sync::Arc, time::Duration};

use anyhow::bail;
use jevjudge_client::{AttemptHook, limit::Limiter};
use jevjudge_judge::{
    BackendKind, RecordWriter,
    backend_settings::{BackendSettings, Refused},
    choice::Chosen,
};

/// Which System One answers a run: the live API (default), recorded exchanges, or the fake.
#[derive(Debug, Clone, clap::Args)]
pub struct BackendArgs {
    /// Set by `eval --repeat N` (N > 1): a recording may then hold several different records of
    /// one request (the k-th serves the k-th repeat); otherwise two differing records are an
    /// error.
    #[arg(skip)]
    pub repeated_records: bool,

    /// Answer every request from recorded exchanges in this `.jevl` file; nothing is sent
    /// anywhere. A request that is not recorded is an ERROR/BACKEND verdict `not_recorded`.
    #[arg(long, value_name = "FILE.jevl", conflicts_with_all = ["fake", "record"])]
    pub replay: Option<PathBuf>,

    /// Offline smoke test: an in-process deterministic fake whose probabilities are a hash of
    /// the request. Every output made this way says `fake`. Never a measure of a model.
    #[arg(long)]
    pub fake: bool,

    /// System One base URL [default: $TYPESAFE_BASE_URL, else https://api.typesafe.ai].
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,

    /// Read the API key from this environment variable instead of TYPESAFE_API_KEY, then
    /// JEV_API_KEY. The key itself is never accepted as a flag.
    #[arg(long, value_name = "VAR")]
    pub api_key_env: Option<String>,

    /// The model to ask: an alias (`jev-latest`, `jev-preview`) or a versioned id [default:
    /// jev-latest; with --replay, the recording's model when it holds exactly one].
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,

    /// Per-attempt timeout, like `500ms`, `5s` (live API only).
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = parse_duration)]
    pub timeout: Duration,

    /// Retries of 408/429/5xx, connection failures and attempt timeouts (live API only).
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub retries: u32,

    /// Allow a plain `http://` base URL for a host that is not loopback (the key then travels
    /// in clear text). Loopback hosts never need it.
    #[arg(long)]
    pub allow_insecure_http: bool,

    /// Append every successful exchange to this `.jevl` record file (holds raw request text:
    /// written only when asked, created readable by its owner only). Not with --replay.
    #[arg(long, value_name = "FILE.jevl")]
    pub record: Option<PathBuf>,

    /// The longest line accepted in a cases, rows or `.jevl` file, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = jevjudge_wire::lines::DEFAULT_MAX_LINE_BYTES)]
    pub max_line_bytes: usize,

    /// The largest input read whole into memory (a definition, a state, a `.jevl` file for
    /// --replay, the cases of a run that keeps them), in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = jevjudge_wire::lines::DEFAULT_MAX_FILE_BYTES)]
    pub max_input_bytes: u64,
}

/// Parses `500ms`, `2s`, `1m`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    humantime::parse_duration(text.trim())
        .map_err(|e| format!("`{text}` is not a duration like 500ms, 2s or 1m ({e})"))
}

/// A positive duration.
pub fn parse_positive_duration(text: &str) -> Result<Duration, String> {
    let duration = parse_duration(text)?;
    if duration.is_zero() {
        return Err("must be positive".to_owned());
    }
    Ok(duration)
}

impl BackendArgs {
    /// Builds the backend (the judge crate's [`BackendSettings::resolve`]); `on_attempt`
    /// reports every attempt of the live client (for metrics), which also paces its retries
    /// through `limiter`. Configuration problems (no key, bad URL, unreadable records) are
    /// input errors: exit 2, nothing sent.
    pub fn resolve(
        &self,
        on_attempt: Option<AttemptHook>,
        limiter: Option<Arc<Limiter>>,
    ) -> anyhow::Result<Chosen> {
        // A replay from a named pipe: wait (bounded) for its writer, and hold it open.
        let _held = match &self.replay {
            Some(path) => Some(crate::inputs::wait_for_writer("--replay", path)?),
            None => None,
        };
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
            max_line_bytes: self.max_line_bytes,
            max_input_bytes: self.max_input_bytes,
        };
        let chosen = settings.resolve(on_attempt, limiter).map_err(|error| {
            crate::inputs::flagged(&Refused {
                settings: &settings,
                error,
            })
        })?;
        match chosen.kind {
            BackendKind::Fake => eprintln!(
                "jevjudge: --fake: answers come from an in-process deterministic fake, not a model; \
                 outputs are marked \"fake\""
            ),
            BackendKind::Fixture => eprintln!(
                "jevjudge: --replay: the record file holds hand-made fixture records, not a \
                 model's answers; outputs are marked \"fixture\""
            ),
            _ => {}
        }
        Ok(chosen)
    }
}

/// The kind reports must show once the backend has answered: a live backend turns `fake` when the
/// server marked its answers as jevjudge's fake server's (`x-jevjudge-fake: 1`), and stderr says
/// so once.
pub fn answered_kind(resolved: BackendKind, answered: BackendKind) -> BackendKind {
    if answered == BackendKind::Fake && resolved != BackendKind::Fake {
        eprintln!(
            "jevjudge: the server marked its answers as jevjudge fake-server's (x-jevjudge-fake), \
             not a model's; outputs are marked \"fake\""
        );
    }
    answered
}

/// Prints how many exchanges were recorded, and fails loudly when some could not be.
pub fn report_recording(
    recorder: Option<&RecordWriter>,
    path: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    let (Some(recorder), Some(path)) = (recorder, path) else {
        return Ok(());
    };
    if recorder.failed() > 0 {
        bail!(
            "{} could not be written to {}",
            jevjudge_eval::plural::count(recorder.failed(), "exchange"),
            path.display()
        );
    }
    Ok(())
}
