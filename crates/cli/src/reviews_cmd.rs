//! `jevjudge reviews list|export`: read the decision log back; `export
//! --labelled` turns the review queue's decisions into cases.

use std::{io::Write as _, path::PathBuf};

use jevjudge_eval::export::{self, ExportFailure};
use jevjudge_store::{Cursor, Filter, MAX_PAGE};

use crate::{
    exit::{self, Failure},
    output,
    store_cmd::{StoreArg, open},
};

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
    /// (`serve --store-state`), for `jevjudge judge|eval --replay`. With --labelled: the
    /// review queue's decided reviews as DIR/cases.jsonl (people's labels) and their records.
    /// The files hold state text: they are created readable by their owner only (0600) and
    /// replace what is at their names (a symlink there is replaced, never written through).
    #[command(
        after_help = "Exit status: 0 written; 1 nothing to export (earlier files are left \
        alone); 2 invalid input (a bad --store, --out or --definition, or --labelled on a \
        store with reviews of several definition versions and no --definition-version); 8 the \
        export was read but its files or summary could not be written."
    )]
    Export(ExportArgs),
    /// The review queue's decisions, oldest first: each queued review's item, version, each
    /// reviewer's findings and note, and the final label with who gave it (the lead's when
    /// the reviewers disagreed). One line a review; --json: one JSON object a line.
    Decisions(DecisionsArgs),
}

#[derive(Debug, clap::Args)]
struct DecisionsArgs {
    #[command(flatten)]
    store: StoreArg,
    /// Only reviews of this definition version.
    #[arg(long, value_name = "VERSION")]
    definition_version: Option<String>,
    /// Only reviews whose two reviewers disagreed on a criterion (a can't-tell against an
    /// answer counts).
    #[arg(long)]
    disagreements: bool,
    /// One JSON object a line.
    #[arg(long)]
    json: bool,
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
    /// Shadow reviews too (a route's shadow versions' verdicts; left out by default).
    #[arg(long)]
    shadow: bool,
}

#[derive(Debug, clap::Args)]
struct ExportArgs {
    #[command(flatten)]
    store: StoreArg,
    /// The directory to write recordings.jevl into (created if missing).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Export the review queue's labels: DIR/cases.jsonl (state form, `id` = the review id,
    /// `expected_findings` from the reviewers, `expected_pass` from the definition's expected
    /// flags, `weight` = 1/π: 1 for a status queued in full, 1/rate for a sampled PASS) and
    /// DIR/recordings.jevl with exactly those reviews' records. Reviews not fully
    /// decided, with two reviewers disagreeing, with a can't-tell, or without kept state are
    /// left out and counted.
    #[arg(long)]
    labelled: bool,
    /// With --labelled: a definition file whose expected flags apply to its version's
    /// reviews (repeatable), for versions the store keeps no flags of.
    #[arg(long, value_name = "DEF", requires = "labelled")]
    definition: Vec<PathBuf>,
    /// With --labelled: export the reviews of this definition version only. Needed when the
    /// store holds reviews of several versions (a labelled export holds one).
    #[arg(long, value_name = "VERSION", requires = "labelled")]
    definition_version: Option<String>,
}

impl Args {
    /// Whether the command writes an export (what it prints then reports files already
    /// written).
    pub fn exports(&self) -> bool {
        matches!(self.command, ReviewsCommand::Export(_))
    }
}

fn parse_status(text: &str) -> Result<String, String> {
    let status = text.to_ascii_uppercase();
    if jevjudge_store::STATUSES.contains(&status.as_str()) {
        Ok(status)
    } else {
        Err("expected PASS, FAIL, INCONCLUSIVE or ERROR".to_owned())
    }
}

/// Runs `jevjudge reviews …`.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    match args.command {
        ReviewsCommand::List(args) => list(args).await,
        ReviewsCommand::Export(args) if args.labelled => export_labelled(args).await,
        ReviewsCommand::Export(args) => export(args).await,
        ReviewsCommand::Decisions(args) => decisions(args).await,
    }
}

async fn decisions(args: DecisionsArgs) -> anyhow::Result<u8> {
    let store = open(&args.store.store).await?;
    let filter = jevjudge_store::DecisionFilter {
        version: args.definition_version,
        disagreement: args.disagreements.then_some(true),
        ..jevjudge_store::DecisionFilter::default()
    };
    let mut out = std::io::stdout().lock();
    let count = store
        .each_queue_decision(&filter, |record| -> anyhow::Result<()> {
            if args.json {
                serde_json::to_writer(&mut out, record)?;
                writeln!(out)?;
            } else {
                writeln!(out, "{record}")?;
            }
            Ok(())
        })
        .await?;
    out.flush()?;
    drop(out);
    store.close().await;
    eprintln!("{}", jevjudge_eval::plural::count(count, "queued review"));
    Ok(exit::SUCCESS)
}

async fn list(args: ListArgs) -> anyhow::Result<u8> {
    if let Some(reference) = &args.reference {
        jevjudge_store::check_reference(reference)
            .map_err(|e| anyhow::anyhow!("--reference: {e}"))?;
    }
    let cursor: Option<Cursor> = args
        .cursor
        .as_deref()
        .map(str::parse)
        .transpose()
        .map_err(|e: jevjudge_store::CursorError| anyhow::anyhow!("--cursor: {e}"))?;
    let store = open(&args.store.store).await?;
    let filter = Filter {
        reference: args.reference,
        version: args.definition_version,
        status: args.status,
        since: args.since,
        shadow: args.shadow,
    };
    let page = store.list(&filter, args.limit, cursor).await?;
    store.close().await;
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &page)?;
        writeln!(out)?;
    } else {
        out.write_all(jevjudge_eval::terminal::reviews(&page.reviews).as_bytes())?;
    }
    out.flush()?;
    drop(out);
    eprintln!(
        "{}",
        jevjudge_eval::terminal::page_footer(page.reviews.len(), page.next_cursor.as_deref())
    );
    Ok(exit::SUCCESS)
}

async fn export(args: ExportArgs) -> anyhow::Result<u8> {
    let store = open(&args.store.store).await?;
    let written = export::export_records(store, &args.out)
        .await
        .map_err(failure)?;
    let Some(written) = written else {
        eprintln!(
            "jevjudge: no review kept its state: serve with --store-state to keep replayable \
             records; nothing written"
        );
        return Ok(exit::FAILED);
    };
    output::print_stdout(&format!(
        "{}: {}\n",
        written.path.display(),
        jevjudge_eval::plural::count(written.records, "record")
    ));
    Ok(exit::SUCCESS)
}

/// An export's failure with the flag that names or fixes it; a write failure comes after the
/// store was read.
fn failure(failure: ExportFailure) -> anyhow::Error {
    match failure {
        ExportFailure::Write(error) => Failure::after_sending(error),
        other => crate::inputs::flagged(&other),
    }
}

async fn export_labelled(args: ExportArgs) -> anyhow::Result<u8> {
    let cap = jevjudge_wire::lines::DEFAULT_MAX_FILE_BYTES;
    let definitions = (args.definition.iter())
        .map(|path| crate::inputs::definition(path, cap))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let flags = export::flags_by_version(&definitions)
        .map_err(|version| anyhow::anyhow!("--definition: version {version} is given twice"))?;
    let store = open(&args.store.store).await?;
    let version = args.definition_version.as_deref();
    let exported = export::export_labelled(store, &args.out, flags, version)
        .await
        .map_err(failure)?;
    let left_out = &exported.left_out;
    if exported.unrecorded_inclusion > 0 {
        eprintln!(
            "jevjudge: warning: {} queued before the store recorded sampling rates: weight 1 \
             (a sampled PASS among them stands for more reviews than that)",
            jevjudge_eval::plural::count(exported.unrecorded_inclusion, "case")
        );
    }
    let Some(text) = jevjudge_eval::terminal::labelled_export(&exported) else {
        eprintln!("jevjudge: no labelled review to export ({left_out}); nothing written");
        return Ok(exit::FAILED);
    };
    output::print_stdout(&text);
    Ok(exit::SUCCESS)
}
