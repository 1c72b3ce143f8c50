//! `jevjudge import jevassert`: convert another tool's recordings (cli-and-formats.md §3a).

use std::path::PathBuf;

use jevjudge_eval::import::import_jevassert;

use crate::{exit, inputs::read_to_string, output::write_atomic};
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
    let definition_toml = imported.definition.to_toml_string().map_err(|_| {
        anyhow::anyhow!(
            "{}: the pack's question content holds a null (`~`), which a TOML definition cannot \
             carry: remove it from the pack",
            args.pack.display()
        )
    })?;
    std::fs::create_dir_all(&args.out)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", args.out.display()))?;
    let definition_text = format!(
        "# Imported by `jevjudge import jevassert` from {}.\n# pass_at_or_above = the pack's \
         `true` floor; fail_at_or_below = 1 - its `false` floor.\n{}",
        args.pack.display(),
        definition_toml
    );
    write_atomic(&args.out.join("definition.toml"), &definition_text)?;
    write_atomic(&args.out.join("cases.jsonl"), &imported.cases_jsonl)?;
    let cases_count = imported.cases_jsonl.lines().count();
    let mut written = vec![
        "definition.toml".to_owned(),
        format!(
            "cases.jsonl ({})",
            jevjudge_eval::plural::count(cases_count, "case")
        ),
    ];
    if predictions.is_some() {
        let mut lines = String::new();
        for record in &imported.records {
            lines.push_str(
                &record
                    .to_line()
                    .map_err(|e| anyhow::anyhow!("cannot write a record: {e}"))?,
            );
        }
        write_atomic(&args.out.join("recordings.jevl"), &lines)?;
        written.push(format!(
            "recordings.jevl ({})",
            jevjudge_eval::plural::count(imported.records.len(), "exchange")
        ));
    }
    crate::output::print_stdout(
        &(format!(
            "imported {} into {}: {}",
            imported.definition.version(),
            args.out.display(),
            written.join(", ")
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
