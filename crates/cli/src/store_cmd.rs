//! The decision log on the command line: `jevjudge serve --store URL` options, and
//! `jevjudge store migrate --store URL`.

use std::time::Duration;

use jevjudge_serve::DecisionLogConfig;
use jevjudge_store::{Store, StoreError, StoreUrl};

use crate::{
    backend::parse_positive_duration,
    exit::{self, Failure},
};

/// The decision-log options of `jevjudge serve`.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeStoreArgs {
    /// Keep every review in a decision log: `sqlite:PATH` (one process; created with mode
    /// 0600) or `postgresql://USER@HOST:PORT/DB` (replicas share it). Each review is written
    /// before its answer; when the store cannot take it the caller gets 503
    /// store_unavailable and /readyz says not ready. Migrations are applied at start. Prefer
    /// the JEVJUDGE_STORE variable for a URL with a password.
    #[arg(
        long,
        value_name = "URL",
        env = "JEVJUDGE_STORE",
        hide_env_values = true
    )]
    pub store: Option<StoreUrl>,

    /// Also keep each review's state text (and the answers), so `jevjudge reviews export`
    /// can write replayable records. Without it no state text reaches the database.
    #[arg(long, requires = "store")]
    pub store_state: bool,

    /// Erase kept state text older than this (verdicts stay), like `30d` or `12h`; swept at
    /// start and every minute.
    #[arg(long, value_name = "DURATION", requires = "store_state",
          value_parser = parse_positive_duration)]
    pub retain_state: Option<Duration>,
}

impl ServeStoreArgs {
    /// The decision log these flags ask for, or `None` without `--store`.
    pub fn decision_log(&self, requested_model: &str) -> Option<DecisionLogConfig> {
        let url = self.store.clone()?;
        let mut log = DecisionLogConfig::url(url)
            .keep_state(self.store_state)
            .requested_model(requested_model);
        if let Some(retain) = self.retain_state {
            log = log.retain_state(retain);
        }
        Some(log)
    }
}

/// Options of `jevjudge store`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: StoreCommand,
}

#[derive(Debug, clap::Subcommand)]
enum StoreCommand {
    /// Apply the migrations this jevjudge knows (a newer schema is refused).
    Migrate(StoreArg),
}

/// `--store URL` of the commands that read or change a store (`store migrate`, `reviews`,
/// `routes`).
#[derive(Debug, clap::Args)]
pub struct StoreArg {
    /// The store: `sqlite:PATH` or `postgresql://…` (or the JEVJUDGE_STORE variable).
    #[arg(
        long,
        value_name = "URL",
        env = "JEVJUDGE_STORE",
        hide_env_values = true
    )]
    pub store: StoreUrl,
}

/// A store error after the flag that named the store; an outdated schema also names the
/// command that migrates it.
pub fn store_error(url: &StoreUrl, error: &StoreError) -> anyhow::Error {
    let hint = match error {
        StoreError::SchemaOutdated { .. } => {
            format!(": run `jevjudge store migrate --store {url}`")
        }
        _ => String::new(),
    };
    Failure::Input(format!("--store {url}: {error}{hint}")).into()
}

/// Opens an existing store (migrated, not created), errors naming the URL.
pub async fn open(url: &StoreUrl) -> anyhow::Result<Store> {
    Store::open_existing(url)
        .await
        .map_err(|e| store_error(url, &e))
}

/// Runs `jevjudge store …`.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    match args.command {
        StoreCommand::Migrate(args) => {
            let store = Store::connect(&args.store)
                .await
                .map_err(|e| store_error(&args.store, &e))?;
            let migrated = store
                .migrate()
                .await
                .map_err(|e| store_error(&args.store, &e))?;
            crate::output::print_stdout(&format!("{}: {migrated}\n", args.store));
            store.close().await;
            Ok(exit::SUCCESS)
        }
    }
}
