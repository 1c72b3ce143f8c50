//! The backend options shared by every subcommand that reviews (cli-and-formats.md §1.1),
//! resolved into one [`Backend`].

use std::{
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

use anyhow::bail;
use jevjudge_client::{AttemptHook, Client, ConfigError, limit::Limiter};
use jevjudge_judge::{
    BackendKind, RecordWriter, SystemOneBackend,
    choice::{self, Choice, ChoiceError, Chosen, Source},
    live::{LiveError, LiveOptions},
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
        .map_err(|e| self.refusal(e))?;
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

    /// A refused choice, naming the flags that fix it.
    fn refusal(&self, error: ChoiceError) -> anyhow::Error {
        let replay = self.replay.as_deref().unwrap_or(Path::new("")).display();
        anyhow::Error::msg(match &error {
            ChoiceError::Conflict { .. } => format!("--replay: {replay}: {error}"),
            ChoiceError::Index(_) | ChoiceError::Replay(_) => format!("--replay: {error}"),
            ChoiceError::Empty => format!("--replay: {replay} holds no records"),
            ChoiceError::ModelNotRecorded { asked, held } => format!(
                "--model `{asked}`: {replay} holds no exchange for it; it holds {} (pass one of \
                 them with --model, or leave --model out when it holds one)",
                choice::quoted(held)
            ),
            ChoiceError::SeveralModels { held } => format!(
                "--replay: {replay} holds several models ({}); choose one with --model",
                choice::quoted(held)
            ),
            ChoiceError::Record { path, source } => {
                format!("--record: cannot open {}: {source}", path.display())
            }
        })
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
        .map_err(|e| anyhow::Error::msg(self.live_refusal(e)))
    }

    /// A live client refused, naming the flag or variable that fixes it. A key pasted where the
    /// variable's name belongs is never echoed: only a conventional variable name is shown.
    fn live_refusal(&self, error: LiveError) -> String {
        let shown_var = |name: &str| {
            if jevjudge_client::is_conventional_var_name(name) {
                name.to_owned()
            } else {
                "the variable named by --api-key-env (not shown: it does not look like a \
                 variable name; give the variable's NAME there, never the key itself)"
                    .to_owned()
            }
        };
        match (error, self.api_key_env.as_deref()) {
            (LiveError::Key(ConfigError::InvalidKeyInEnv { .. }), Some(name)) => format!(
                "{} does not hold a valid API key (printable ASCII without whitespace)",
                shown_var(name)
            ),
            (LiveError::Key(ConfigError::EnvNotUnicode { .. }), Some(name)) => {
                format!("{} is not valid Unicode", shown_var(name))
            }
            (LiveError::NoKey, name) => format!(
                "no System One API key: set {}TYPESAFE_API_KEY or JEV_API_KEY (or name another \
                 variable with --api-key-env), or run offline with --replay FILE.jevl (recorded \
                 answers) or --fake (a deterministic fake)",
                name.map(|v| format!("{}, ", shown_var(v)))
                    .unwrap_or_default()
            ),
            (LiveError::Config(ConfigError::InsecureHttp { host }), _) => format!(
                "--base-url: plain http is allowed only for loopback hosts, not `{host}`: use \
                 https, or pass --allow-insecure-http (the key then travels in clear text)"
            ),
            (
                LiveError::Config(
                    e @ (ConfigError::InvalidBaseUrl
                    | ConfigError::BaseUrlQueryOrFragment
                    | ConfigError::BaseUrlCredentials),
                ),
                _,
            ) => format!(
                "--base-url{}: {}",
                if self.base_url.is_some() {
                    ""
                } else {
                    " (from $TYPESAFE_BASE_URL)"
                },
                e.to_string().replace("baseUrl", "the base URL")
            ),
            (LiveError::Config(ConfigError::BlankModel), _) => "--model: must not be blank".into(),
            (LiveError::Config(e @ ConfigError::ZeroTimeout { .. }), _) => {
                format!("--timeout: {e}")
            }
            (other, _) => other.to_string(),
        }
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
