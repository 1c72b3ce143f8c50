//! The backend options shared by every subcommand that reviews (cli-and-formats.md §1.1),
//! resolved into one [`Backend`].

use std::{path::PathBuf, sync::Arc, time::Duration};

use anyhow::bail;
use jevjudge_client::{AttemptHook, Client, limit::Limiter};
use jevjudge_judge::{
    BackendKind, RecordWriter, SystemOneBackend,
    choice::{self, Choice, Chosen, Source},
    live::LiveOptions,
};
use jevjudge_wire::setting::{Explain as _, Setting};

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

/// The resolved backend and what reports must say about it.
pub type ResolvedBackend = Chosen;

impl BackendArgs {
    /// Builds the backend. Configuration problems (no key, bad URL, unreadable records) are
    /// input errors: exit 2, nothing sent.
    pub fn resolve(&self) -> anyhow::Result<ResolvedBackend> {
        self.resolve_with_hook(None)
    }

    /// Builds the backend like [`BackendArgs::resolve`], with `on_attempt` reporting every
    /// attempt of the live client (for metrics; offline backends make no attempts).
    pub fn resolve_with_hook(
        &self,
        on_attempt: Option<AttemptHook>,
    ) -> anyhow::Result<ResolvedBackend> {
        self.resolve_limited(on_attempt, None)
    }

    /// Builds the backend like [`BackendArgs::resolve_with_hook`]; the live client also reports
    /// every attempt to `limiter` and paces its retries through it.
    pub fn resolve_limited(
        &self,
        on_attempt: Option<AttemptHook>,
        limiter: Option<Arc<Limiter>>,
    ) -> anyhow::Result<ResolvedBackend> {
        let source = match &self.replay {
            Some(path) => {
                let _held = crate::inputs::wait_for_writer("--replay", path)?;
                let records = jevjudge_wire::record::read_file_capped(
                    path,
                    self.max_line_bytes,
                    self.max_input_bytes,
                )
                .map_err(|e| anyhow::anyhow!("--replay: {e}{}", limit_hint(e.kind())))?;
                Source::Replay(records)
            }
            None if self.fake => Source::Fake,
            None => Source::Live(Arc::new(SystemOneBackend::new(self.client_with(
                &choice::live_model(self.model.as_deref()),
                on_attempt,
                limiter,
            )?))),
        };
        let chosen = Choice {
            source,
            model: self.model.clone(),
            repeated_records: self.repeated_records,
            record: self.record.clone(),
        }
        .resolve()
        .map_err(|e| anyhow::Error::msg(e.explain(&|s| self.name(s))))?;
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

    /// A setting's flag as a refusal names it: the replay file with its path, a base URL
    /// that came from the environment with its variable.
    fn name(&self, setting: Setting) -> String {
        match (setting, &self.replay, &self.base_url) {
            (Setting::Replay, Some(path), _) => format!("--replay {}", path.display()),
            (Setting::BaseUrl, _, None) => "--base-url (from $TYPESAFE_BASE_URL)".to_owned(),
            _ => crate::inputs::flag(setting),
        }
    }

    /// The live client, key from the environment only; `on_attempt` sees every attempt.
    fn client_with(
        &self,
        model: &str,
        on_attempt: Option<AttemptHook>,
        limiter: Option<Arc<Limiter>>,
    ) -> anyhow::Result<Client> {
        LiveOptions {
            key_env: self.api_key_env.clone(),
            base_url: self.base_url.clone(),
            model: model.to_owned(),
            attempt_timeout: self.timeout,
            retries: self.retries,
            allow_insecure_http: self.allow_insecure_http,
            on_attempt,
            limiter,
        }
        .client()
        .map_err(|e| anyhow::Error::msg(e.explain(&|s| self.name(s))))
    }
}

/// How to raise a cap that a `.jevl` file ran into.
fn limit_hint(kind: &jevjudge_wire::record::RecordErrorKind) -> &'static str {
    use jevjudge_wire::record::RecordErrorKind;
    match kind {
        RecordErrorKind::LineTooLong { .. } => " (raise the cap with --max-line-bytes)",
        RecordErrorKind::FileTooLarge { .. } => " (raise the cap with --max-input-bytes)",
        _ => "",
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
