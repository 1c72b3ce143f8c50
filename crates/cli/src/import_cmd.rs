//! `jevjudge import jevassert`: convert another tool's recordings (cli-and-formats.md §3a).

use std::path::PathBuf;

use jevjudge_eval::import::{import_jevassert, write_imported};

use crate::{exit, inputs::read_to_string};
use jevjudge_wire::lines::DEFAULT_MAX_FILE_BYTES;

/// Options of `jevjudge import`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub source: Source,
}

/// The tools jevjudge imports from.
#[derive(Debug, clap::Subcommand)]
pub enum Source {
    /// A jevassert question pack (pack.yaml, cases.jsonl) and its recording
    /// (predictions.jsonl) → definition.toml, cases.jsonl and recordings.jevl.
    Jevassert(JevassertArgs),
}

/// Options of `jevjudge import jevassert`.
#[derive(Debug, clap::Args)]
pub struct JevassertArgs {
    /// The pack folder, holding pack.yaml and cases.jsonl.
    #[arg(long, value_name = "DIR")]
    pub pack: PathBuf,

    /// The recording [default: DIR/predictions.jsonl when it exists].
    #[arg(long, value_name = "FILE")]
    pub predictions: Option<PathBuf>,

    /// Where to write definition.toml, cases.jsonl and recordings.jevl (created if needed).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,

    /// The RFC 3339 time stamped on the records (jevassert's predictions carry none)
    /// [default: now].
    #[arg(long, value_name = "TIME")]
    pub recorded_at: Option<String>,
}

/// Runs the import.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let Source::Jevassert(args) = args.source;
    let pack = read_to_string(&args.pack.join("pack.yaml"), "pack", DEFAULT_MAX_FILE_BYTES)?;
    let cases = read_to_string(
        &args.pack.join("cases.jsonl"),
        "pack cases",
        DEFAULT_MAX_FILE_BYTES,
    )?;
    let predictions_path = args.predictions.clone().or_else(|| {
        let default = args.pack.join("predictions.jsonl");
        default.exists().then_some(default)
    });
    let predictions = match &predictions_path {
        Some(path) => Some(read_to_string(path, "predictions", DEFAULT_MAX_FILE_BYTES)?),
        None => None,
    };
    let recorded_at = args
        .recorded_at
        .clone()
        .unwrap_or_else(jevjudge_wire::record::now_rfc3339);
    let imported = import_jevassert(&pack, &cases, predictions.as_deref(), &recorded_at)
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.pack.display()))?;
    let written = write_imported(&imported, &args.pack, &args.out, predictions.is_some())?;
    crate::output::print_stdout(
        &(format!(
            "imported {} into {}: {}",
            imported.definition.version(),
            args.out.display(),
            written.0.join(", ")
        ) + "\n"),
    );
    if imported.skipped_predictions > 0 {
        crate::output::print_stdout(
            &(format!(
                "skipped {} that recorded an error (not an exchange)",
                jevjudge_eval::plural::count(imported.skipped_predictions, "prediction")
            ) + "\n"),
        );
    }
    Ok(exit::SUCCESS)
}
