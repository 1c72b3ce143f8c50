//! `jevjudge reviews list|export`: read the decision log back (issue #12).

use std::{io::Write as _, path::PathBuf};

use anyhow::Context as _;
use jevjudge_store::{Cursor, Filter, MAX_PAGE, Store, StoreError, StoreUrl};

use crate::{InputError, exit, store_cmd::parse_store_url};

/// The name of the record file `reviews export` writes in `--out DIR`.
pub const RECORDINGS: &str = "recordings.jevl";

/// Options of `jevjudge reviews`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: ReviewsCommand,
}

#[derive(Debug, clap::Subcommand)]
enum ReviewsCommand {
    /// List reviews newest first (a page at a time; the next cursor goes to standard error).
    List(ListArgs),
    /// Write DIR/recordings.jevl: replayable records of the reviews whose state was kept
    /// (`serve --store-state`), for `jevjudge judge|eval --replay`.
    Export(ExportArgs),
}

#[derive(Debug, clap::Args)]
struct StoreArg {
    /// The store: `sqlite:PATH` or `postgresql://…` (or the JEVJUDGE_STORE variable).
    #[arg(long, value_name = "URL", env = "JEVJUDGE_STORE", hide_env_values = true,
          value_parser = parse_store_url)]
    store: StoreUrl,
}

#[derive(Debug, clap::Args)]
struct ListArgs {
    #[command(flatten)]
    store: StoreArg,
    /// Only reviews with this caller reference.
    #[arg(long)]
    reference: Option<String>,
    /// Only reviews of this definition version (`--version` is the program's version).
    #[arg(long, value_name = "VERSION")]
    definition_version: Option<String>,
    /// Only reviews with this status (PASS, FAIL, INCONCLUSIVE, ERROR).
    #[arg(long, value_parser = parse_status)]
    status: Option<String>,
    /// Only reviews received at or after this time (RFC 3339, or a date).
    #[arg(long, value_name = "TIME", value_parser = jevjudge_store::parse_time)]
    since: Option<std::time::SystemTime>,
    /// At most this many reviews.
    #[arg(long, default_value_t = 50,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_PAGE)))]
    limit: u32,
    /// Continue after a previous page (its next cursor).
    #[arg(long)]
    cursor: Option<String>,
    /// Print the page as JSON (`{"reviews": [...], "next_cursor": ...}`).
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
struct ExportArgs {
    #[command(flatten)]
    store: StoreArg,
    /// The directory to write recordings.jevl into (created if missing).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

fn parse_status(text: &str) -> Result<String, String> {
    let status = text.to_ascii_uppercase();
    if jevjudge_store::STATUSES.contains(&status.as_str()) {
        Ok(status)
    } else {
        Err("expected PASS, FAIL, INCONCLUSIVE or ERROR".to_owned())
    }
}

async fn open(url: &StoreUrl) -> anyhow::Result<Store> {
    // Reading never creates a database.
    if let StoreUrl::Sqlite(path) = url {
        if !path.is_file() {
            return Err(InputError(format!("--store {url}: no such file")).into());
        }
    }
    let store = Store::connect(url)
        .await
        .map_err(|e| InputError(format!("--store {url}: {e}")))?;
    store
        .check_schema()
        .await
        .map_err(|e| InputError(format!("--store {url}: {e}")))?;
    Ok(store)
}

/// Runs `jevjudge reviews …`.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    match args.command {
        ReviewsCommand::List(args) => list(args).await,
        ReviewsCommand::Export(args) => export(args).await,
    }
}

async fn list(args: ListArgs) -> anyhow::Result<u8> {
    if let Some(reference) = &args.reference {
        jevjudge_store::check_reference(reference)
            .map_err(|e| InputError(format!("--reference: {e}")))?;
    }
    let cursor: Option<Cursor> = args
        .cursor
        .as_deref()
        .map(str::parse)
        .transpose()
        .map_err(|e: jevjudge_store::CursorError| InputError(format!("--cursor: {e}")))?;
    let store = open(&args.store.store).await?;
    let filter = Filter {
        reference: args.reference,
        version: args.definition_version,
        status: args.status,
        since: args.since,
    };
    let page = store.list(&filter, args.limit, cursor).await?;
    store.close().await;
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &page)?;
        writeln!(out)?;
    } else {
        for review in &page.reviews {
            let detail = review.detail.as_deref().unwrap_or("");
            writeln!(
                out,
                "{}  {}  {:<12} {:<24} {:<20} {:>9.1} ms  {}",
                review.received_at,
                review.review_id,
                if detail.is_empty() {
                    review.status.clone()
                } else {
                    format!("{}/{detail}", review.status)
                },
                review.definition_version,
                review.reference.as_deref().unwrap_or("-"),
                review.elapsed_millis,
                review.model.as_deref().unwrap_or("-"),
            )?;
        }
    }
    out.flush()?;
    drop(out);
    match &page.next_cursor {
        Some(cursor) => eprintln!(
            "{} reviews; more with --cursor {cursor}",
            page.reviews.len()
        ),
        None => eprintln!("{} reviews; no more", page.reviews.len()),
    }
    Ok(exit::SUCCESS)
}

async fn export(args: ExportArgs) -> anyhow::Result<u8> {
    let store = open(&args.store.store).await?;
    std::fs::create_dir_all(&args.out)
        .map_err(|e| InputError(format!("--out {}: {e}", args.out.display())))?;
    let path = args.out.join(RECORDINGS);
    // Written whole, then renamed: never a partial file under the final name.
    let partial = args.out.join(format!(".{RECORDINGS}.partial"));
    let file = std::fs::File::create(&partial)
        .with_context(|| format!("cannot write {}", partial.display()))?;
    let mut writer = std::io::BufWriter::new(file);
    let outcome = store
        .export_records(|record| {
            let line = record
                .to_line()
                .map_err(|e| StoreError::Corrupt(e.to_string()))?;
            writer
                .write_all(line.as_bytes())
                .map_err(|e| StoreError::Corrupt(format!("cannot write: {e}")))
        })
        .await;
    store.close().await;
    let count = match outcome {
        Ok(count) => count,
        Err(error) => {
            drop(writer);
            let _ = std::fs::remove_file(&partial);
            return Err(error.into());
        }
    };
    writer
        .into_inner()
        .map_err(|e| anyhow::anyhow!("cannot write {}: {}", partial.display(), e.error()))?
        .sync_all()
        .with_context(|| format!("cannot write {}", partial.display()))?;
    std::fs::rename(&partial, &path).with_context(|| format!("cannot write {}", path.display()))?;
    crate::output::print_stdout(&(format!("{}: {count} records", path.display()) + "\n"));
    if count == 0 {
        eprintln!(
            "jevjudge: no review kept its state: serve with --store-state to keep replayable records"
        );
    }
    Ok(exit::SUCCESS)
}
