//! `jevjudge reviews list|export`: read the decision log back (issue #12); `export
//! --labelled` turns the review queue's decisions into cases (issue #13).

use std::{
    collections::{BTreeMap, HashMap, HashSet},
    io::Write as _,
    path::PathBuf,
};

use anyhow::Context as _;
use jevjudge_store::{Cursor, Filter, Findings, MAX_PAGE, Store, StoreError, StoreUrl};

use crate::{InputError, exit, store_cmd::parse_store_url};

/// The name of the record file `reviews export` writes in `--out DIR`.
pub const RECORDINGS: &str = "recordings.jevl";
/// The name of the cases file `reviews export --labelled` writes in `--out DIR`.
pub const CASES: &str = "cases.jsonl";

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
    /// Export the review queue's labels: DIR/cases.jsonl (state form, `id` = the review id,
    /// `expected_findings` from the reviewers, `expected_pass` from the definition's expected
    /// flags) and DIR/recordings.jevl with exactly those reviews' records. Reviews not fully
    /// decided, with two reviewers disagreeing, with a can't-tell, or without kept state are
    /// left out and counted.
    #[arg(long)]
    labelled: bool,
    /// With --labelled: a definition file whose expected flags apply to its version's
    /// reviews (repeatable), for versions the store keeps no flags of.
    #[arg(long, value_name = "DEF", requires = "labelled")]
    definition: Vec<PathBuf>,
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
        ReviewsCommand::Export(args) if args.labelled => export_labelled(args).await,
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

/// Why queued reviews stay out of a labelled export, counted.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct LeftOut {
    undecided: u64,
    disagreement: u64,
    cant_tell: u64,
    state_not_kept: u64,
}

/// What the export rules make of one queued review's decisions.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Label {
    /// Every copy decided, every criterion answered, the reviewers agreeing: the labels.
    Case(BTreeMap<String, bool>),
    /// A copy is not decided yet.
    Undecided,
    /// Two reviewers gave different answers on a criterion (counted before can't-tell).
    Disagreement,
    /// A reviewer could not tell on a criterion.
    CantTell,
}

/// The export rules on a review's decisions (one per queued copy, in slot order).
fn label_of(decisions: &[Option<Findings>]) -> Label {
    if decisions.is_empty() || decisions.iter().any(Option::is_none) {
        return Label::Undecided;
    }
    let decided: Vec<&Findings> = decisions.iter().flatten().collect();
    let mut ids: Vec<&String> = decided.iter().flat_map(|d| d.keys()).collect();
    ids.sort();
    ids.dedup();
    let mut labels = BTreeMap::new();
    let mut cant_tell = false;
    for id in ids {
        let answers: Vec<Option<bool>> = decided
            .iter()
            .map(|d| d.get(id).copied().flatten())
            .collect();
        let known: Vec<bool> = answers.iter().flatten().copied().collect();
        if known.iter().any(|answer| *answer != known[0]) {
            return Label::Disagreement;
        }
        if known.len() < answers.len() {
            cant_tell = true;
        } else {
            labels.insert(id.clone(), known[0]);
        }
    }
    if cant_tell {
        Label::CantTell
    } else {
        Label::Case(labels)
    }
}

/// `expected_pass`: every criterion's label equals the definition's expected flag.
fn expected_pass(
    labels: &BTreeMap<String, bool>,
    expected: &BTreeMap<String, bool>,
) -> Option<bool> {
    if labels.len() != expected.len() {
        return None;
    }
    let mut pass = true;
    for (id, flag) in expected {
        pass &= *labels.get(id)? == *flag;
    }
    Some(pass)
}

/// The expected flags of each `--definition`, by version.
fn definition_flags(paths: &[PathBuf]) -> anyhow::Result<HashMap<String, BTreeMap<String, bool>>> {
    let mut by_version = HashMap::new();
    for path in paths {
        let definition =
            crate::inputs::definition(path, jevjudge_wire::lines::DEFAULT_MAX_FILE_BYTES)?;
        let flags = definition
            .criteria()
            .iter()
            .map(|c| (c.id().to_owned(), c.expected()))
            .collect();
        if by_version
            .insert(definition.version().to_owned(), flags)
            .is_some()
        {
            return Err(InputError(format!(
                "--definition {}: version {} is given twice",
                path.display(),
                definition.version()
            ))
            .into());
        }
    }
    Ok(by_version)
}

/// Writes `name` in `dir` as `.name.partial` first, renamed into place by `finish`.
struct Partial {
    partial: PathBuf,
    path: PathBuf,
    writer: std::io::BufWriter<std::fs::File>,
}

impl Partial {
    fn create(dir: &std::path::Path, name: &str) -> anyhow::Result<Partial> {
        let partial = dir.join(format!(".{name}.partial"));
        let file = std::fs::File::create(&partial)
            .with_context(|| format!("cannot write {}", partial.display()))?;
        Ok(Partial {
            path: dir.join(name),
            writer: std::io::BufWriter::new(file),
            partial,
        })
    }

    fn write(&mut self, line: &str) -> Result<(), StoreError> {
        self.writer.write_all(line.as_bytes()).map_err(|e| {
            StoreError::Corrupt(format!("cannot write {}: {e}", self.partial.display()))
        })
    }

    fn finish(self) -> anyhow::Result<PathBuf> {
        let partial = self.partial;
        self.writer
            .into_inner()
            .map_err(|e| anyhow::anyhow!("cannot write {}: {}", partial.display(), e.error()))?
            .sync_all()
            .with_context(|| format!("cannot write {}", partial.display()))?;
        std::fs::rename(&partial, &self.path)
            .with_context(|| format!("cannot write {}", self.path.display()))?;
        Ok(self.path)
    }

    fn discard(self) {
        drop(self.writer);
        let _ = std::fs::remove_file(&self.partial);
    }
}

async fn export_labelled(args: ExportArgs) -> anyhow::Result<u8> {
    let from_files = definition_flags(&args.definition)?;
    let store = open(&args.store.store).await?;
    std::fs::create_dir_all(&args.out)
        .map_err(|e| InputError(format!("--out {}: {e}", args.out.display())))?;
    let mut cases = Partial::create(&args.out, CASES)?;
    let mut records = Partial::create(&args.out, RECORDINGS)?;
    let mut left_out = LeftOut::default();
    let mut exported = 0u64;
    let mut written_records = HashSet::new();
    let mut refusal: Option<String> = None;
    let outcome = store
        .export_labelled(|labelled| {
            let labels = match label_of(&labelled.decisions) {
                Label::Undecided => {
                    left_out.undecided += 1;
                    return Ok(());
                }
                Label::Disagreement => {
                    left_out.disagreement += 1;
                    return Ok(());
                }
                Label::CantTell => {
                    left_out.cant_tell += 1;
                    return Ok(());
                }
                Label::Case(labels) => labels,
            };
            let (Some(state), Some(record)) = (labelled.state, labelled.record) else {
                left_out.state_not_kept += 1;
                return Ok(());
            };
            let version = &labelled.definition_version;
            let flags = match (from_files.get(version), &labelled.expected) {
                (Some(flags), _) => flags,
                (None, Some(flags)) => flags,
                (None, None) => {
                    let message = format!(
                        "the store keeps no expected flags for definition version {version} \
                         (its reviews were logged before the review queue): pass its \
                         definition with --definition FILE"
                    );
                    refusal = Some(message.clone());
                    return Err(StoreError::Invalid(message));
                }
            };
            let Some(pass) = expected_pass(&labels, flags) else {
                let message = format!(
                    "the decisions of review {} answer criteria {:?}, but definition version \
                     {version} has {:?}: is --definition the right file for this version?",
                    labelled.review_id,
                    labels.keys().collect::<Vec<_>>(),
                    flags.keys().collect::<Vec<_>>()
                );
                refusal = Some(message.clone());
                return Err(StoreError::Invalid(message));
            };
            let case = serde_json::json!({
                "scenario": version,
                "id": labelled.review_id.to_string(),
                "state": state,
                "expected_pass": pass,
                "expected_findings": labels,
            });
            cases.write(&(case.to_string() + "\n"))?;
            if written_records.insert(record.id.clone()) {
                let line = record
                    .to_line()
                    .map_err(|e| StoreError::Corrupt(e.to_string()))?;
                records.write(&line)?;
            }
            exported += 1;
            Ok(())
        })
        .await;
    store.close().await;
    if let Err(error) = outcome {
        cases.discard();
        records.discard();
        return Err(match refusal {
            Some(message) => InputError(message).into(),
            None => error.into(),
        });
    }
    let counts = format!(
        "left out: {} undecided, {} disagreement, {} can't tell, {} state not kept",
        left_out.undecided, left_out.disagreement, left_out.cant_tell, left_out.state_not_kept
    );
    if exported == 0 {
        cases.discard();
        records.discard();
        eprintln!("jevjudge: no labelled review to export ({counts}); nothing written");
        return Ok(exit::FAILED);
    }
    let cases_path = cases.finish()?;
    let records_path = records.finish()?;
    crate::output::print_stdout(&format!(
        "{}: {exported} cases\n{}: {} records\n{counts}\n",
        cases_path.display(),
        records_path.display(),
        written_records.len()
    ));
    Ok(exit::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn findings(pairs: &[(&str, Option<bool>)]) -> Option<Findings> {
        Some(pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect())
    }

    #[test]
    fn a_single_decision_with_every_answer_is_a_case() {
        let label = label_of(&[findings(&[("a", Some(true)), ("b", Some(false))])]);
        assert_eq!(
            label,
            Label::Case(BTreeMap::from([("a".into(), true), ("b".into(), false)]))
        );
    }

    #[test]
    fn undecided_copies_are_left_out() {
        assert_eq!(label_of(&[]), Label::Undecided);
        assert_eq!(
            label_of(&[findings(&[("a", Some(true))]), None]),
            Label::Undecided
        );
    }

    #[test]
    fn two_reviewers_count_only_where_both_agree() {
        let yes = findings(&[("a", Some(true)), ("b", Some(true))]);
        assert_eq!(
            label_of(&[yes.clone(), yes.clone()]),
            Label::Case(BTreeMap::from([("a".into(), true), ("b".into(), true)]))
        );
        let split = findings(&[("a", Some(true)), ("b", Some(false))]);
        assert_eq!(label_of(&[yes.clone(), split]), Label::Disagreement);
        // A disagreement counts before a can't-tell.
        let unsure = findings(&[("a", None), ("b", Some(false))]);
        assert_eq!(label_of(&[yes, unsure.clone()]), Label::Disagreement);
        assert_eq!(label_of(&[unsure]), Label::CantTell);
    }

    #[test]
    fn expected_pass_needs_every_criterion_as_expected() {
        let expected = BTreeMap::from([("spam".into(), true), ("rude".into(), false)]);
        let labels = |spam, rude| BTreeMap::from([("spam".into(), spam), ("rude".into(), rude)]);
        assert_eq!(expected_pass(&labels(true, false), &expected), Some(true));
        assert_eq!(expected_pass(&labels(true, true), &expected), Some(false));
        assert_eq!(expected_pass(&labels(false, false), &expected), Some(false));
        let other = BTreeMap::from([("spam".into(), true)]);
        assert_eq!(expected_pass(&other, &expected), None);
    }
}
