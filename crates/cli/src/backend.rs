//! The backend options shared by every subcommand that reviews (cli-and-formats.md §1.1),
//! resolved into one [`Backend`].

use std::{path::PathBuf, sync::Arc, time::Duration};

use anyhow::{Context, bail};
use jevjudge_client::{ApiKey, AttemptHook, Client, ConfigError};
use jevjudge_judge::{
    Backend, BackendError, BackendFuture, BackendKind, RecordWriter, Recording, ReplayBackend,
    SystemOneBackend,
};
use jevjudge_wire::{Detail, Request, Response};
use tokio::time::Instant;

use crate::InputError;

/// Which System One answers a run: the live API (default), recorded exchanges, or the fake.
#[derive(Debug, Clone, clap::Args)]
pub struct BackendArgs {
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

    /// The model to ask: an alias (`jev-latest`, `jev-preview`) or a versioned id.
    #[arg(long, value_name = "NAME", default_value = jevjudge_wire::DEFAULT_MODEL)]
    pub model: String,

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
    /// written only when asked). Not with --replay.
    #[arg(long, value_name = "FILE.jevl")]
    pub record: Option<PathBuf>,
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
pub struct ResolvedBackend {
    /// The backend (possibly wrapped to record).
    pub backend: Arc<dyn Backend>,
    /// Where answers come from.
    pub kind: BackendKind,
    /// The record writer, when `--record` was given.
    pub recorder: Option<Arc<RecordWriter>>,
}

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
        let (backend, kind): (Arc<dyn Backend>, BackendKind) = if let Some(path) = &self.replay {
            let replay = ReplayBackend::open(path, &self.model)
                .map_err(|e| InputError(format!("--replay: {e}")))?;
            if replay.is_empty() {
                return Err(
                    InputError(format!("--replay: {} holds no records", path.display())).into(),
                );
            }
            let kind = replay.kind();
            (Arc::new(replay), kind)
        } else if self.fake {
            (Arc::new(FakeBackend), BackendKind::Fake)
        } else {
            let client = self.client_with(on_attempt)?;
            (
                Arc::new(SystemOneBackend::new(client)),
                BackendKind::Systemone,
            )
        };
        match kind {
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
        let Some(path) = &self.record else {
            return Ok(ResolvedBackend {
                backend,
                kind,
                recorder: None,
            });
        };
        let writer =
            Arc::new(RecordWriter::append(path).map_err(|e| {
                InputError(format!("--record: cannot open {}: {e}", path.display()))
            })?);
        let recording = Recording::new(backend, writer.clone(), self.model.clone());
        Ok(ResolvedBackend {
            backend: Arc::new(recording),
            kind,
            recorder: Some(writer),
        })
    }

    /// The live client, key from the environment only; `on_attempt` sees every attempt.
    fn client_with(&self, on_attempt: Option<AttemptHook>) -> anyhow::Result<Client> {
        let key = match &self.api_key_env {
            Some(name) => ApiKey::from_env_var(name)
                .map_err(|e| InputError(e.to_string()))?
                .or_else(ApiKey::from_env),
            None => ApiKey::resolve(|name| std::env::var(name).ok())
                .map_err(|e| InputError(e.to_string()))?,
        };
        let Some(key) = key else {
            let named = self
                .api_key_env
                .as_deref()
                .map(|v| format!("{v}, "))
                .unwrap_or_default();
            return Err(InputError(format!(
                "no System One API key: set {named}TYPESAFE_API_KEY or JEV_API_KEY (or name another \
                 variable with --api-key-env), or run offline with --replay FILE.jevl (recorded \
                 answers) or --fake (a deterministic fake)"
            ))
            .into());
        };
        let mut builder = Client::builder()
            .api_key(key)
            .model(self.model.clone())
            .attempt_timeout(self.timeout)
            .retries(self.retries)
            .allow_insecure_http(self.allow_insecure_http);
        if let Some(url) = &self.base_url {
            builder = builder.base_url(url.clone());
        }
        if let Some(hook) = on_attempt {
            builder = builder.on_attempt(hook);
        }
        builder
            .build()
            .map_err(|e: ConfigError| {
                let message = match e {
                    ConfigError::InsecureHttp { host } => format!(
                        "--base-url: plain http is allowed only for loopback hosts, not `{host}`: \
                         use https, or pass --allow-insecure-http (the key then travels in clear text)"
                    ),
                    other => format!("--base-url/--model/--timeout: {other}"),
                };
                InputError(message).into()
            })
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
            "{} exchange(s) could not be written to {}",
            recorder.failed(),
            path.display()
        );
    }
    Ok(())
}

/// The in-process deterministic fake (`--fake`): the fake server's answerer, without a socket.
#[derive(Debug, Clone, Copy)]
pub struct FakeBackend;

impl Backend for FakeBackend {
    fn answer<'a>(&'a self, request: &'a Request, _deadline: Instant) -> BackendFuture<'a> {
        let outcome = request
            .to_body(jevjudge_wire::DEFAULT_MODEL)
            .map_err(|_| BackendError::new(Detail::RequestInvalid))
            .and_then(|body| {
                let body: serde_json::Value = serde_json::from_slice(&body)
                    .map_err(|_| BackendError::new(Detail::RequestInvalid))?;
                match jevjudge_fake::answer(&body) {
                    Ok(answer) => {
                        Response::from_json(&answer).map_err(|e| BackendError::new(e.detail()))
                    }
                    Err(rejection) => Err(BackendError::new(Detail::HttpStatus(rejection.status))),
                }
            });
        Box::pin(std::future::ready(outcome))
    }

    fn kind(&self) -> BackendKind {
        BackendKind::Fake
    }
}

/// Reads a whole file, naming it in the error.
pub fn read_to_string(path: &std::path::Path, what: &str) -> anyhow::Result<String> {
    std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the {what} {}", path.display()))
        .map_err(|e| InputError(format!("{e:#}")).into())
}
