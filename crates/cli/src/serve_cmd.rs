//! `jevjudge serve`: the review service over HTTP.
//!
//! Loads every definition in `--definitions DIR` at start (a bad file, or two files with one
//! version, is exit 2 naming the file), resolves the backend options (§1.1) into one shared
//! client whose attempts feed the metrics, prints `listening on http://HOST:PORT` as its first
//! line on standard output, and serves until SIGINT or SIGTERM; then it stops accepting,
//! closes idle and half-open connections at once, finishes the in-flight reviews and exits 0. Logs go to standard error (`--log-format json`
//! for JSON lines) and hold no state text, token or key.

use std::{io::IsTerminal as _, net::SocketAddr, path::PathBuf, time::Duration};

use anyhow::Context as _;
use jevjudge_client::limit::{LimitConfig, Limiter};
use jevjudge_serve::{
    AuthTokens, BuildError, Config, Definitions, Metrics, OsSignals, PublicUrl, RunOptions,
    Service, TrustedProxy,
};
use jevjudge_wire::setting::{Explain as _, Setting};
use tracing_subscriber::EnvFilter;

use crate::{
    backend::{BackendArgs, parse_positive_duration, report_recording},
    exit::{self, Failure},
};

/// Options of `jevjudge serve`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Endpoints: POST /v1/reviews/{version} with {\"state\": ..., \
    \"budget_millis\": ..., \"reference\": ...}; GET /v1/definitions, /healthz, /readyz, /metrics, \
    /openapi.json; with --store, GET /v1/reviews and /v1/reviews/{id}; with a review queue, \
    POST /v1/queue/claim, /v1/queue/{item}/decision, /v1/queue/{item}/release, GET \
    /v1/queue/stats.\n\
    SIGHUP reloads --definitions (a bad set is refused and the old one kept).\n\
    Logs: standard error; RUST_LOG sets the level (default info).\n\
    Exit status: 0 stopped by SIGINT/SIGTERM after finishing in-flight reviews; \
    2 invalid input or configuration (nothing was served)."
)]
pub struct Args {
    /// A directory of definition files (.toml or .json; other files are ignored). Every file is
    /// loaded at start; a bad file or a repeated version stops start-up.
    #[arg(long, value_name = "DIR")]
    pub definitions: PathBuf,

    /// Address to listen on, as HOST:PORT; port 0 picks a free port.
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:8080", value_parser = jevjudge_serve::parse_listen_addr)]
    pub addr: SocketAddr,

    /// The budget of a review whose request has no `budget_millis`, like `2s`.
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_positive_duration)]
    pub budget: Duration,

    /// The cap on any review's budget: a larger `budget_millis` is lowered to it.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_positive_duration)]
    pub max_budget: Duration,

    /// The largest request body accepted (413 above it), in bytes or with a KiB/MiB suffix.
    #[arg(long, value_name = "SIZE", default_value = "1MiB", value_parser = jevjudge_serve::parse_size)]
    pub max_body: usize,

    /// How many reviews may call the backend at once.
    #[arg(long, value_name = "N", default_value_t = 32,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_concurrent: u32,

    /// How many shadow reviews (of a route's shadow versions asking other questions than its
    /// live version) may call the backend at once, apart from --max-concurrent; a shadow
    /// finding them all busy is shed (counted). Default: a quarter of --max-concurrent, at
    /// least 1.
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub shadow_max_concurrent: Option<u32>,

    /// How many more reviews may wait for a backend slot (each at most its budget); beyond
    /// that, requests get a fast 503 with Retry-After.
    #[arg(long, value_name = "N", default_value_t = 256,
          value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    pub queue: u32,

    /// How long a client may take to send a whole request head, counted from its first byte;
    /// the connection is closed after.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_positive_duration)]
    pub header_timeout: Duration,

    /// How long a connection may stay open with no request in flight and no byte of a next
    /// one; it is closed after.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_positive_duration)]
    pub idle_timeout: Duration,

    /// The most connections open at once. Over it, a new connection closes the oldest one with
    /// no request in flight, or gets a 503 when all are busy. Keep it well below the open-file
    /// limit (`ulimit -n`, often 1024): the backend pool and the record file need descriptors
    /// too.
    #[arg(long, value_name = "N", default_value_t = 512,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_connections: u32,

    /// Require callers to send `Authorization: Bearer TOKEN` with one of the tokens in this
    /// environment variable (one token, or several separated by commas) on /v1/* and /metrics.
    /// Tokens are never accepted as flag values and never logged.
    #[arg(long, value_name = "VAR")]
    pub auth_token_env: Option<String>,

    /// Administrators' tokens, in this environment variable (one, or several separated by
    /// commas): the only tokens that change routes (PUT /v1/routes/{route}, promote,
    /// rollback); they read routes too. Without it routes change only through the routes file
    /// and `jevjudge routes`. Never accepted as flag values, never logged.
    #[arg(long, value_name = "VAR")]
    pub admin_token_env: Option<String>,

    /// The fewest shadow reviews a version needs before POST /v1/routes/{route}/promote makes
    /// it live without "force": true.
    #[arg(long, value_name = "N", default_value_t = jevjudge_store::DEFAULT_MIN_SHADOW_REVIEWS)]
    pub min_shadow_reviews: u64,

    /// A reverse proxy in front of the service, as an address or a network (10.0.0.0/8,
    /// 2001:db8::/32); repeatable. Only from peers inside these networks is X-Forwarded-For read
    /// (its rightmost address outside them is the client) for the per-address limits of
    /// sign-in attempts and failed token checks; from any other peer its own address counts.
    #[arg(long = "trusted-proxy", value_name = "CIDR")]
    pub trusted_proxies: Vec<TrustedProxy>,

    /// The address reviewers reach the service at when it is behind a proxy, like
    /// https://review.example.com. An https URL makes the reviewer pages' cookies Secure
    /// whatever the Host header says (so does X-Forwarded-Proto: https from any peer), and a
    /// form posted from its origin counts as the service's own.
    #[arg(long, value_name = "URL")]
    pub public_url: Option<PublicUrl>,

    /// Log format on standard error.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    #[command(flatten)]
    pub backend: BackendArgs,

    #[command(flatten)]
    pub store: crate::store_cmd::ServeStoreArgs,

    /// Seed the store's routes from this file (`[[route]]` tables: name, live, optional
    /// shadows and shadow_sample). Only routes the store does not hold are created, so a
    /// restart never undoes a change. POST /v1/reviews/ROUTE reviews with the route's live
    /// version. A route named like a definition version, or whose live version is not loaded,
    /// is refused (exit 2).
    #[arg(long, value_name = "FILE", requires = "store")]
    pub routes: Option<std::path::PathBuf>,

    #[command(flatten)]
    pub review_queue: crate::queue_cmd::QueueArgs,
}

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// Runs the service until SIGINT or SIGTERM.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    // Held to the end: dropping it writes out every line logged before.
    let _log = init_logging(args.log_format);
    // First of all, so that no signal during start-up takes its default action.
    let signals = OsSignals::install().context("cannot handle signals")?;
    let config = config(&args)?;
    let queue_policy = args.review_queue.policy()?;
    let definitions = Definitions::load_dir(&args.definitions)
        .map_err(|e| Failure::Input(format!("--definitions: {e}")))?;
    let metrics = Metrics::new();
    // One adaptive limiter for every review of the service, within --max-concurrent.
    let limiter = Limiter::new(LimitConfig::new(config.max_concurrent));
    let resolved = args
        .backend
        .resolve(Some(metrics.attempt_hook()), Some(limiter.clone()))?;
    let mut builder = Service::builder(resolved.backend, definitions)
        .config(config)
        .metrics(metrics)
        .limiter(limiter)
        .definitions_dir(&args.definitions);
    if let Some(log) = args.store.decision_log(&resolved.model) {
        builder = builder.decision_log(log);
    }
    if let Some(policy) = queue_policy {
        builder = builder.review_queue(policy);
    }
    if let Some(path) = &args.routes {
        builder = builder.routes(routes_file(path)?);
    }
    let service = builder.build().await.map_err(|e| build_error(&args, e))?;
    // The drain may take twice --max-budget plus a grace (the service's default).
    let options = RunOptions::new().os_signals(signals);
    let listening = service
        .bind(args.addr, options)
        .await
        .map_err(|e| anyhow::anyhow!(e))?;
    let addr = listening.local_addr();
    crate::output::announce_listening(&format!("http://{addr}"))
        .context("cannot write to standard output")?;
    if args.backend.record.is_some() {
        tracing::info!("recording every exchange");
    }
    listening
        .run(std::future::pending())
        .await
        .context("the server failed")?;
    if let Some(recorder) = &resolved.recorder {
        tracing::info!(
            written = recorder.written(),
            failed = recorder.failed(),
            "exchanges recorded"
        );
    }
    report_recording(resolved.recorder.as_deref(), args.backend.record.as_deref())?;
    tracing::info!("stopped");
    Ok(exit::SUCCESS)
}

/// The routes of a `--routes` file; an unreadable or invalid file is exit 2 naming it.
fn routes_file(path: &std::path::Path) -> anyhow::Result<Vec<jevjudge_store::NewRoute>> {
    let shown = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::Input(format!("--routes {shown}: {e}")))?;
    Ok(jevjudge_serve::parse_routes(&text)
        .map_err(|e| Failure::Input(format!("--routes {shown}: {e}")))?)
}

/// A refusal of the service's builder, in terms of the flags (exit 2).
fn build_error(args: &Args, error: BuildError) -> anyhow::Error {
    if let (BuildError::Store(e), Some(url)) = (&error, &args.store.store) {
        return crate::store_cmd::store_error(url, e);
    }
    let name = |setting| match (setting, &args.routes) {
        (Setting::Routes, Some(path)) => format!("--routes {}", path.display()),
        _ => crate::inputs::flag(setting),
    };
    Failure::Input(error.explain(&name)).into()
}

/// The service settings from the flags and the token variable; errors are exit 2.
fn config(args: &Args) -> anyhow::Result<Config> {
    // Tokens from the variable a flag names; none without the flag.
    let tokens = |flag: &str, name: &Option<String>| -> Result<AuthTokens, Failure> {
        let Some(name) = name else {
            return Ok(AuthTokens::none());
        };
        let value = crate::inputs::env_var(flag, name)?;
        AuthTokens::parse(&value).map_err(|e| Failure::Input(format!("{flag}: {name}: {e}")))
    };
    let auth_tokens = tokens("--auth-token-env", &args.auth_token_env)?;
    let admin_tokens = tokens("--admin-token-env", &args.admin_token_env)?;
    let config = Config {
        max_body_bytes: args.max_body,
        default_budget: args.budget,
        max_budget: args.max_budget,
        max_concurrent: args.max_concurrent as usize,
        queue: args.queue as usize,
        auth_tokens,
        admin_tokens,
        min_shadow_reviews: args.min_shadow_reviews,
        header_timeout: args.header_timeout,
        idle_timeout: args.idle_timeout,
        max_connections: args.max_connections as usize,
        trusted_proxies: args.trusted_proxies.clone(),
        public_url: args.public_url.clone(),
        shadow_max_concurrent: args.shadow_max_concurrent.map(|n| n as usize),
        ..Config::default()
    };
    config
        .validate()
        .map_err(|e| Failure::Input(e.explain(&crate::inputs::flag)))?;
    Ok(config)
}

/// Logs to standard error, from a thread of its own (no request waits for a write): text
/// (colour only on a terminal) or JSON lines; `RUST_LOG` sets the filter (default `info`).
fn init_logging(format: LogFormat) -> jevjudge_serve::LogSinkGuard {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let (lines, guard) = jevjudge_serve::log_sink(std::io::stderr());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(move || lines.line());
    // A subscriber set earlier (tests) stays; the service runs either way.
    let _ = match format {
        LogFormat::Text => builder
            .with_ansi(std::io::stderr().is_terminal())
            .try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
    guard
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flags_test::ParseFlags as _;

    #[test]
    fn defaults_match_the_issue() {
        let args =
            Args::parse_flags(&["--definitions", "defs"]).expect("only --definitions is required");
        assert_eq!(args.addr, "127.0.0.1:8080".parse().expect("an address"));
        let config = config(&args).expect("a config");
        // Every setting the flags leave alone is the service's documented default, whose
        // values `jevjudge_serve`'s own tests pin; `Debug` shows every field (a token only as
        // a count). The cap on budgets, which those tests leave out, is pinned here.
        assert_eq!(format!("{config:?}"), format!("{:?}", Config::default()));
        assert!(!config.auth_tokens.is_enabled());
        assert_eq!(config.max_budget, Duration::from_secs(10));
        assert_eq!(args.log_format, LogFormat::Text);
        assert!(Args::parse_flags(&[]).is_err(), "--definitions is required");
    }

    #[test]
    fn limits_are_checked() {
        assert!(Args::parse_flags(&["--definitions", "d", "--max-concurrent", "0"]).is_err());
        let args =
            Args::parse_flags(&["--definitions", "d", "--queue", "0", "--max-body", "64KiB"])
                .expect("a zero queue is allowed");
        assert_eq!(config(&args).expect("a config").queue, 0);
        let args =
            Args::parse_flags(&["--definitions", "d", "--budget", "20s"]).expect("valid flags");
        let error = config(&args).expect_err("the default budget is above the cap");
        assert_eq!(error.to_string(), "--budget must not exceed --max-budget");
    }

    #[test]
    fn sign_in_lock_out_trusted_proxies_are_repeatable_and_bad_ones_name_the_flag() {
        let args = Args::parse_flags(&[
            "--definitions",
            "d",
            "--trusted-proxy",
            "10.0.0.0/8",
            "--trusted-proxy",
            "2001:db8::1",
        ])
        .expect("valid flags");
        let proxies: Vec<String> = config(&args)
            .expect("a config")
            .trusted_proxies
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(proxies, ["10.0.0.0/8", "2001:db8::1/128"]);
        for bad in ["proxy.example", "10.0.0.0/33"] {
            let error = Args::parse_flags(&["--definitions", "d", "--trusted-proxy", bad])
                .expect_err("not a network");
            let text = error.to_string();
            assert!(text.contains("--trusted-proxy"), "{text}");
            assert!(text.contains(bad), "{text}");
        }
    }

    #[test]
    fn secure_cookies_public_url_is_kept_and_a_bad_one_names_the_flag() {
        let args = Args::parse_flags(&[
            "--definitions",
            "d",
            "--public-url",
            "https://Review.Example/",
        ])
        .expect("valid flags");
        let url = config(&args).expect("a config").public_url.expect("a URL");
        assert_eq!(url.as_str(), "https://review.example");
        assert!(url.is_https());
        for bad in ["review.example", "https://a b"] {
            let error = Args::parse_flags(&["--definitions", "d", "--public-url", bad])
                .expect_err("not a URL");
            let text = error.to_string();
            assert!(text.contains("--public-url"), "{text}");
        }
    }

    #[test]
    fn a_missing_token_variable_is_named_and_tokens_never_shown() {
        let args = Args::parse_flags(&[
            "--definitions",
            "d",
            "--auth-token-env",
            "JEVJUDGE_TEST_SURELY_UNSET_TOKEN_VAR",
        ])
        .expect("valid flags");
        let error = config(&args).expect_err("the variable is not set");
        assert!(
            error
                .to_string()
                .contains("JEVJUDGE_TEST_SURELY_UNSET_TOKEN_VAR is not set"),
            "{error}"
        );
    }

    #[test]
    fn a_missing_admin_token_variable_is_named_and_the_promote_minimum_is_read() {
        let args = Args::parse_flags(&[
            "--definitions",
            "d",
            "--admin-token-env",
            "JEVJUDGE_TEST_SURELY_UNSET_ADMIN_VAR",
        ])
        .expect("valid flags");
        let error = config(&args).expect_err("the variable is not set");
        let text = error.to_string();
        assert!(text.contains("--admin-token-env"), "{text}");
        assert!(
            text.contains("JEVJUDGE_TEST_SURELY_UNSET_ADMIN_VAR is not set"),
            "{text}"
        );
        let args = Args::parse_flags(&["--definitions", "d", "--min-shadow-reviews", "20"])
            .expect("valid flags");
        assert_eq!(config(&args).expect("a config").min_shadow_reviews, 20);
    }
}
