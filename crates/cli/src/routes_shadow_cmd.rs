//! `jevjudge routes-shadow --store URL --route R [--version V] [--since T] [--json|--markdown]`:
//! the evidence for a route's shadow version, read from the store
//! ([`jevjudge_eval::shadow`]); the same document as `GET /v1/routes/{route}/shadow`.

use std::io::Write as _;

use jevjudge_eval::shadow::{ShadowError, shadow_evidence};
use jevjudge_store::{Store, StoreUrl};

use crate::{exit, store_cmd::parse_store_url};

/// Options of `jevjudge routes-shadow` (`--version` names the shadow version here, so the
/// program's version is not a flag of this command).
#[derive(Debug, clap::Args)]
#[command(disable_version_flag = true)]
pub struct Args {
    /// The store: `sqlite:PATH` or `postgresql://…` (or the JEVJUDGE_STORE variable).
    #[arg(long, value_name = "URL", env = "JEVJUDGE_STORE", hide_env_values = true,
          value_parser = parse_store_url)]
    store: StoreUrl,
    /// The route.
    #[arg(long, value_name = "ROUTE")]
    route: String,
    /// The shadow version to report on (default: the route's first shadow).
    #[arg(long, value_name = "VERSION")]
    version: Option<String>,
    /// Only reviews shadowed at or after this time (RFC 3339, or a date).
    #[arg(long, value_name = "TIME", value_parser = jevjudge_store::parse_time)]
    since: Option<std::time::SystemTime>,
    /// Print the JSON document of `GET /v1/routes/{route}/shadow`.
    #[arg(long, conflicts_with = "markdown")]
    json: bool,
    /// Print Markdown (the default).
    #[arg(long)]
    markdown: bool,
}

/// Runs `jevjudge routes-shadow`: parse → read → render.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let store = Store::open_existing(&args.store)
        .await
        .map_err(|e| crate::store_cmd::store_error(&args.store, &e))?;
    let evidence = shadow_evidence(&store, &args.route, args.version.as_deref(), args.since).await;
    store.close().await;
    let evidence = match evidence {
        Ok(evidence) => evidence,
        Err(error @ (ShadowError::UnknownRoute(_) | ShadowError::NoShadow(_))) => {
            eprintln!("jevjudge: error: {error}; --route and --version name them");
            return Ok(exit::INVALID_INPUT);
        }
        Err(error) => return Err(error.into()),
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &evidence.to_document())?;
        writeln!(out)?;
    } else {
        out.write_all(evidence.to_markdown().as_bytes())?;
    }
    out.flush()?;
    Ok(exit::SUCCESS)
}
