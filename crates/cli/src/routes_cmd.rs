//! `jevjudge routes promote|rollback|history`: change a route in the store, or list its
//! changes, with the same audited store changes and promote gate as the service's API.

use std::io::Write as _;

use jevjudge_store::{
    Actor, DEFAULT_MIN_SHADOW_REVIEWS, PromoteGate, PromoteRequest, RouteError, Store, StoreUrl,
};

use crate::{
    exit::{self, Failure},
    store_cmd::parse_store_url,
};

/// Options of `jevjudge routes`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: RoutesCommand,
}

#[derive(Debug, clap::Subcommand)]
enum RoutesCommand {
    /// Make a version live on a route; the old live version becomes its first shadow. Refused
    /// (exit 1, naming the figure) when the store does not know the version, it has fewer
    /// shadowed reviews than --min-shadow-reviews, or more labelled false PASS than the live
    /// version on the same reviews, unless --force (recorded as forced).
    #[command(
        disable_version_flag = true,
        after_help = "Exit status: 0 promoted; 1 the promote gate refused; 2 invalid input, \
        no such route, the version live already, or the route changed at the same time."
    )]
    Promote(PromoteArgs),
    /// Return a route to the live version before its last promote not rolled back; the
    /// version rolled back becomes its first shadow.
    #[command(
        after_help = "Exit status: 0 rolled back; 2 invalid input, no such route, no \
        promote to roll back, or the route changed at the same time."
    )]
    Rollback(RollbackArgs),
    /// Every change of a route, oldest first: created, shadows changed, promoted, rolled back.
    History(HistoryArgs),
}

#[derive(Debug, clap::Args)]
struct Target {
    /// The store: `sqlite:PATH` or `postgresql://…` (or the JEVJUDGE_STORE variable).
    #[arg(long, value_name = "URL", env = "JEVJUDGE_STORE", hide_env_values = true,
          value_parser = parse_store_url)]
    store: StoreUrl,
    /// The route's name.
    #[arg(long, value_name = "NAME")]
    route: String,
    /// Print JSON (as the service's API answers).
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
struct PromoteArgs {
    #[command(flatten)]
    target: Target,
    /// The definition version to make live.
    #[arg(long, value_name = "VERSION")]
    version: String,
    /// Why, kept in the route's history.
    #[arg(long, value_name = "TEXT")]
    reason: Option<String>,
    /// Promote although the gate refuses (recorded as forced).
    #[arg(long)]
    force: bool,
    /// The fewest shadowed reviews the version needs.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MIN_SHADOW_REVIEWS)]
    min_shadow_reviews: u64,
}

#[derive(Debug, clap::Args)]
struct RollbackArgs {
    #[command(flatten)]
    target: Target,
    /// Why, kept in the route's history.
    #[arg(long, value_name = "TEXT")]
    reason: Option<String>,
}

#[derive(Debug, clap::Args)]
struct HistoryArgs {
    #[command(flatten)]
    target: Target,
}

/// Runs `jevjudge routes …`.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    match args.command {
        RoutesCommand::Promote(args) => promote(args).await,
        RoutesCommand::Rollback(args) => rollback(args).await,
        RoutesCommand::History(args) => history(args).await,
    }
}

/// `cli`, with the operator's name from `USER` when set.
fn actor(reason: Option<String>) -> Actor {
    let name = match std::env::var("USER") {
        Ok(user) if !user.is_empty() => format!("cli:{user}"),
        _ => "cli".to_owned(),
    };
    Actor { name, reason }
}

async fn open(url: &StoreUrl) -> anyhow::Result<Store> {
    Store::open_existing(url)
        .await
        .map_err(|e| crate::store_cmd::store_error(url, &e))
}

/// A route change that failed: the gate's refusal is exit 1, the rest invalid input.
fn refused(store_url: &StoreUrl, error: RouteError) -> anyhow::Result<u8> {
    match error {
        RouteError::Refused { refusal, figures } => {
            eprintln!("jevjudge: promote refused: {refusal} ({figures}); --force overrides it");
            Ok(exit::FAILED)
        }
        RouteError::Store(error) => Err(crate::store_cmd::store_error(store_url, &error)),
        other => Err(Failure::Input(other.to_string()).into()),
    }
}

async fn promote(args: PromoteArgs) -> anyhow::Result<u8> {
    let target = &args.target;
    let store = open(&target.store).await?;
    let loaded = store.knows_version(&args.version).await?;
    let request = PromoteRequest {
        route: target.route.clone(),
        version: args.version,
        force: args.force,
    };
    let gate = PromoteGate {
        min_shadow_reviews: args.min_shadow_reviews,
    };
    let promoted = match store
        .promote_route(&request, &gate, loaded, &actor(args.reason))
        .await
    {
        Ok(promoted) => promoted,
        Err(error) => return refused(&target.store, error),
    };
    store.close().await;
    let refusal = promoted.forced.as_ref().map(ToString::to_string);
    let mut out = std::io::stdout().lock();
    if target.json {
        let json = serde_json::json!({
            "route": promoted.route,
            "figures": promoted.figures,
            "forced": refusal.is_some(),
            "refusal": refusal,
        });
        writeln!(out, "{json}")?;
    } else {
        writeln!(out, "promoted {}", promoted.route)?;
        writeln!(out, "figures: {}", promoted.figures)?;
        if let Some(refusal) = refusal {
            writeln!(out, "forced past: {refusal}")?;
        }
    }
    Ok(exit::SUCCESS)
}

async fn rollback(args: RollbackArgs) -> anyhow::Result<u8> {
    let target = &args.target;
    let store = open(&target.store).await?;
    let route = match store
        .rollback_route(&target.route, &actor(args.reason))
        .await
    {
        Ok(route) => route,
        Err(error) => return refused(&target.store, error),
    };
    store.close().await;
    let mut out = std::io::stdout().lock();
    if target.json {
        writeln!(out, "{}", serde_json::to_string(&route)?)?;
    } else {
        writeln!(out, "rolled back {route}")?;
    }
    Ok(exit::SUCCESS)
}

async fn history(args: HistoryArgs) -> anyhow::Result<u8> {
    let target = &args.target;
    let store = open(&target.store).await?;
    let changes = store.route_history(&target.route).await?;
    if changes.is_empty() && store.route(&target.route).await?.is_none() {
        return Err(Failure::Input(format!("--route: no route is named {}", target.route)).into());
    }
    store.close().await;
    let mut out = std::io::stdout().lock();
    if target.json {
        let json = serde_json::json!({"route": target.route, "changes": changes});
        writeln!(out, "{json}")?;
    } else {
        for change in &changes {
            writeln!(out, "{change}")?;
        }
    }
    Ok(exit::SUCCESS)
}
