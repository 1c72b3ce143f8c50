//! Durable runs: every finished row is appended to a JSON Lines file as it completes, so an
//! interruption loses nothing finished, and `--resume` can run only what is missing.
//!
//! The first line is a [`RowsHeader`] naming the run (definition version and digest, cases
//! digest); each further line is `{"index": n, "row": {…}}` in completion order. Rows hold
//! no raw text, like reports.

use std::{
    collections::HashMap,
    fs::{File, OpenOptions},
    io::{BufReader, Write},
    path::{Path, PathBuf},
};

use jevjudge_judge::Definition;
use jevjudge_wire::canonical::{
    CanonicalError, write_canonical, write_canonical_f64, write_canonical_str,
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::{Case, CaseInput, Row, RunObserver};

/// The `format` of a rows file's header.
pub const ROWS_FORMAT: &str = "jevjudge.rows.v1";

/// What a rows file belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowsHeader {
    /// Always [`ROWS_FORMAT`].
    pub format: String,
    /// The definition's version.
    pub definition_version: String,
    /// sha256 of the definition's canonical JSON (questions and thresholds included).
    pub definition_digest: String,
    /// sha256 over every case's id, scenario, label and state, in order.
    pub cases_digest: String,
    /// How many cases the run has.
    pub cases: usize,
    /// Where the answers come from (`systemone`, `replay`, `fixture`, `fake`); absent in files
    /// written before it was recorded, which then cannot be resumed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    /// The model the run asked for (`--model`, or the one a replay picked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Reviews per case (`eval --repeat`); absent means 1.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub repeats: usize,
}

fn one() -> usize {
    1
}

fn is_one(repeats: &usize) -> bool {
    *repeats == 1
}

impl RowsHeader {
    /// The header of a run of `cases` against `definition`.
    pub fn new(definition: &Definition, cases: &[Case]) -> RowsHeader {
        RowsHeader {
            format: ROWS_FORMAT.to_owned(),
            definition_version: definition.version().to_owned(),
            definition_digest: definition_digest(definition),
            cases_digest: cases_digest(cases),
            cases: cases.len(),
            backend: None,
            model: None,
            repeats: 1,
        }
    }

    /// The same header naming the backend and the model the run asks for; `--resume` refuses a
    /// file made with another backend or model.
    pub fn with_backend(mut self, backend: impl Into<String>, model: impl Into<String>) -> Self {
        self.backend = Some(backend.into());
        self.model = Some(model.into());
        self
    }

    /// The header of a run whose cases were digested one at a time.
    pub fn from_digest(definition: &Definition, digest: CasesDigest) -> RowsHeader {
        RowsHeader {
            format: ROWS_FORMAT.to_owned(),
            definition_version: definition.version().to_owned(),
            definition_digest: definition_digest(definition),
            cases: digest.count(),
            cases_digest: digest.finish(),
            backend: None,
            model: None,
            repeats: 1,
        }
    }

    /// The same header for a run that reviews every case `repeats` times.
    pub fn with_repeats(mut self, repeats: usize) -> RowsHeader {
        self.repeats = repeats;
        self
    }

    /// Why a rows file with this header cannot be resumed by a run with `current`'s header.
    pub fn mismatch(&self, current: &RowsHeader) -> Option<String> {
        if self.format != ROWS_FORMAT {
            return Some(format!("format `{}` is not {ROWS_FORMAT}", self.format));
        }
        if self.definition_version != current.definition_version {
            return Some(format!(
                "it belongs to definition `{}`, not `{}`",
                self.definition_version, current.definition_version
            ));
        }
        if self.definition_digest != current.definition_digest {
            return Some(format!(
                "definition `{}` changed since (questions or thresholds differ)",
                current.definition_version
            ));
        }
        if self.repeats != current.repeats {
            return Some(format!(
                "it was run with {} repeats of each case, not {}",
                self.repeats, current.repeats
            ));
        }
        if self.cases_digest != current.cases_digest || self.cases != current.cases {
            return Some("it belongs to other cases (ids, labels or inputs differ)".to_owned());
        }
        let shown = |value: &Option<String>| match value {
            Some(value) => format!("`{value}`"),
            None => "(not recorded)".to_owned(),
        };
        if self.backend != current.backend || self.model != current.model {
            return Some(format!(
                "it was made with backend {} and model {}, this run uses backend {} and model {} \
                 (resume with the same backend and model, or start afresh)",
                shown(&self.backend),
                shown(&self.model),
                shown(&current.backend),
                shown(&current.model)
            ));
        }
        None
    }
}

/// sha256 of the definition's canonical JSON, as `sha256:<hex>`.
pub fn definition_digest(definition: &Definition) -> String {
    jevjudge_wire::canonical::digest(&definition.to_json_value()).unwrap_or_default()
}

/// sha256 over each case's canonical `[id, scenario, expected_pass, state, expected_findings]`
/// (with `weight` appended when it is not 1).
pub fn cases_digest(cases: &[Case]) -> String {
    let mut digest = CasesDigest::default();
    for case in cases {
        digest.add(case);
    }
    digest.finish()
}

/// [`cases_digest`] computed one case at a time, for streaming runs.
#[derive(Default)]
pub struct CasesDigest {
    hasher: Sha256,
    count: usize,
    /// One case's canonical entry, reused from case to case.
    entry: String,
}

impl std::fmt::Debug for CasesDigest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CasesDigest")
            .field("count", &self.count)
            .finish_non_exhaustive()
    }
}

impl CasesDigest {
    /// Adds the next case: the canonical form of
    /// `[id, scenario, expected_pass, state, findings]`, with `weight` appended when it is
    /// not one, then a newline. The entry is written piece by piece into a buffer kept from
    /// case to case, so no JSON value is built and nothing is allocated once the buffer has
    /// grown to the largest case. An entry with no canonical form (a state built in code that
    /// nests deeper than the canonical writer allows) counts as empty text.
    pub fn add(&mut self, case: &Case) {
        self.count += 1;
        let entry = &mut self.entry;
        entry.clear();
        if write_case_entry(case, entry).is_err() {
            entry.clear();
        }
        self.hasher.update(entry.as_bytes());
        self.hasher.update(b"\n");
    }

    /// How many cases were added.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The digest, `sha256:<hex>`.
    pub fn finish(self) -> String {
        format!("sha256:{}", hex::encode(self.hasher.finalize()))
    }
}

/// Appends a case's digest entry (see [`CasesDigest::add`]) in canonical form: the same text
/// as the canonical form of the JSON array, keys in code point order.
fn write_case_entry(case: &Case, out: &mut String) -> Result<(), CanonicalError> {
    out.push('[');
    write_canonical_str(&case.id, out);
    out.push(',');
    write_canonical_str(&case.scenario, out);
    out.push_str(if case.expected_pass {
        ",true,"
    } else {
        ",false,"
    });
    match &case.input {
        CaseInput::Evaluator(request) => {
            // "assistant_answer" < "supporting_context" < "user_question"
            out.push_str("{\"assistant_answer\":");
            write_canonical_str(&request.answer, out);
            out.push_str(",\"supporting_context\":[");
            for (i, item) in request.supporting_context.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical_str(item, out);
            }
            out.push_str("],\"user_question\":");
            write_canonical_str(&request.question, out);
            out.push('}');
        }
        CaseInput::State(state) => write_canonical(state, out)?,
    }
    out.push(',');
    match &case.expected_findings {
        None => out.push_str("null"),
        Some(labels) => {
            out.push('[');
            for (i, (id, label)) in labels.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push('[');
                write_canonical_str(id, out);
                out.push_str(if *label { ",true]" } else { ",false]" });
            }
            out.push(']');
        }
    }
    if case.weight != 1.0 {
        out.push(',');
        write_canonical_f64(case.weight, out)?;
    }
    out.push(']');
    Ok(())
}

#[derive(Deserialize)]
struct Line {
    index: usize,
    row: Row,
}

/// A row's line as it is written: [`Line`] borrowing the row ([`RowsWriter::write_row`] writes
/// its bytes field by field).
#[cfg(test)]
#[derive(Serialize)]
struct LineRef<'a> {
    index: usize,
    row: &'a Row,
}

/// Rows batched before a write: a batch is written when it reaches this size, or when the run
/// has no other finished row to pass on ([`RunObserver::caught_up`]).
const BATCH_BYTES: usize = 64 * 1024;

/// Appends rows as they finish, in batches of whole lines (see [`BATCH_BYTES`]).
#[derive(Debug)]
pub struct RowsWriter {
    path: PathBuf,
    file: File,
    batch: Vec<u8>,
    written: usize,
    error: Option<std::io::Error>,
}

impl RowsWriter {
    fn new(path: &Path, file: File) -> RowsWriter {
        RowsWriter {
            path: path.to_owned(),
            file,
            batch: Vec::new(),
            written: 0,
            error: None,
        }
    }

    /// Starts a new rows file (replacing any) with its header.
    pub fn create(path: &Path, header: &RowsHeader) -> std::io::Result<RowsWriter> {
        let mut file = File::create(path)?;
        let mut line = serde_json::to_string(header).map_err(std::io::Error::other)?;
        line.push('\n');
        file.write_all(line.as_bytes())?;
        file.sync_all()?;
        Ok(RowsWriter::new(path, file))
    }

    /// Continues an existing rows file (after [`read_rows`] checked it).
    pub fn append(path: &Path) -> std::io::Result<RowsWriter> {
        let file = OpenOptions::new().append(true).open(path)?;
        Ok(RowsWriter::new(path, file))
    }

    /// Continues an existing rows file after cutting it back to its first `keep` bytes (the
    /// end of its last whole line, [`PreviousRows::whole_len`]): a line torn by a crash or a
    /// full disk is removed before anything is appended, and the cut is synced to disk.
    pub fn resume(path: &Path, keep: u64) -> std::io::Result<RowsWriter> {
        let file = OpenOptions::new().append(true).open(path)?;
        if file.metadata()?.len() != keep {
            file.set_len(keep)?;
            file.sync_all()?;
        }
        Ok(RowsWriter::new(path, file))
    }

    /// Writes the batch out and forces what was written to disk (at the end of a run,
    /// interrupted or not).
    pub fn sync(&mut self) -> std::io::Result<()> {
        self.flush()?;
        self.file.sync_data()
    }

    /// Adds one row to the batch, writing the batch out when it is full.
    pub fn write_row(&mut self, index: usize, row: &Row) -> std::io::Result<()> {
        let start = self.batch.len();
        // `{"index":N,"row":ROW}`, as `LineRef` serializes.
        let written = write!(self.batch, r#"{{"index":{index},"row":"#)
            .map_err(serde_json::Error::io)
            .and_then(|()| {
                crate::row_json::write_row(&mut self.batch, row, crate::row_json::Layout::Compact)
            });
        if let Err(error) = written {
            self.batch.truncate(start);
            return Err(std::io::Error::other(error));
        }
        self.batch.push(b'}');
        self.batch.push(b'\n');
        self.written += 1;
        if self.batch.len() >= BATCH_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the batched rows out (whole lines only).
    pub fn flush(&mut self) -> std::io::Result<()> {
        if !self.batch.is_empty() {
            let written = self.file.write_all(&self.batch);
            self.batch.clear();
            written?;
        }
        Ok(())
    }

    /// Rows written by this writer.
    pub fn written(&self) -> usize {
        self.written
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The first write error, if any (the run goes on; the caller reports it).
    pub fn take_error(&mut self) -> Option<std::io::Error> {
        self.error.take()
    }
}

impl Drop for RowsWriter {
    /// Writes out what is batched; a write that fails here was already reported by
    /// [`RowsWriter::sync`] or is lost with the rows a resumed run will run again.
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

impl RunObserver for RowsWriter {
    fn row_finished(&mut self, index: usize, row: &Row) {
        if self.error.is_some() {
            return;
        }
        if let Err(error) = self.write_row(index, row) {
            self.error = Some(error);
        }
    }

    fn caught_up(&mut self) {
        if self.error.is_some() {
            return;
        }
        if let Err(error) = self.flush() {
            self.error = Some(error);
        }
    }
}

/// How many rows the file at `path` holds: its non-blank lines after the first (the header),
/// a last line cut short included. A path where nothing is, or that is not a regular file (a
/// pipe, `/dev/null`), holds none. Reads the file once, a buffer at a time.
pub fn count_rows(path: &Path) -> std::io::Result<u64> {
    use std::io::BufRead;
    match std::fs::metadata(path) {
        Ok(metadata) if metadata.is_file() => {}
        Ok(_) => return Ok(0),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    }
    let mut reader = BufReader::new(File::open(path)?);
    let (mut line, mut rows, mut blank) = (0u64, 0u64, true);
    loop {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            break;
        }
        for &byte in buffer {
            if byte == b'\n' {
                if line > 0 && !blank {
                    rows += 1;
                }
                line += 1;
                blank = true;
            } else if !byte.is_ascii_whitespace() {
                blank = false;
            }
        }
        let read = buffer.len();
        reader.consume(read);
    }
    if line > 0 && !blank {
        rows += 1;
    }
    Ok(rows)
}

/// Whether the file at `path` opens with a rows file's header (its first line, read up to
/// 64 KiB): a rows file, not a report.
pub fn is_rows_file(path: &Path) -> bool {
    use std::io::{BufRead, Read};
    let Ok(file) = File::open(path) else {
        return false;
    };
    let mut first = Vec::new();
    if BufReader::new(file.take(64 * 1024))
        .read_until(b'\n', &mut first)
        .is_err()
    {
        return false;
    }
    serde_json::from_slice::<RowsHeader>(&first).is_ok_and(|header| header.format == ROWS_FORMAT)
}

/// `OUT.rows.jsonl` → `OUT.json`: the report of the run whose rows went to `rows` beside it
/// (`eval --report OUT.json`); `None` for a name not ending in `.rows.jsonl`.
pub fn report_path_for(rows: &Path) -> Option<PathBuf> {
    let name = rows.file_name()?.to_str()?;
    let stem = name.strip_suffix(".rows.jsonl").filter(|s| !s.is_empty())?;
    Some(rows.with_file_name(format!("{stem}.json")))
}

/// A rows file that cannot be resumed.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {problem}")]
pub struct RowsError {
    /// The file (and line, when known), for messages.
    pub path: String,
    /// What is wrong.
    pub problem: String,
}

/// What a rows file holds: its header and the last row written for each case id, with its
/// input index.
#[derive(Debug)]
pub struct PreviousRows {
    /// The header.
    pub header: RowsHeader,
    /// Rows by case id (the last written wins, so a retried case replaces its error row).
    pub rows: HashMap<String, (usize, Row)>,
    /// True when the last line was cut short (a crash mid-write) and was ignored.
    pub torn_tail: bool,
    /// The length in bytes of the file's whole lines: where a resumed run appends, after
    /// cutting a torn last line away ([`RowsWriter::resume`]).
    pub whole_len: u64,
}

/// Reads a rows file strictly; only a final line without its newline (a write cut short by a
/// crash) is tolerated and ignored. Rows are not checked against any cases: see
/// [`read_rows_for`].
pub fn read_rows(path: &Path) -> Result<PreviousRows, RowsError> {
    read_rows_for(path, None, jevjudge_wire::lines::DEFAULT_MAX_LINE_BYTES)
}

/// Reads a rows file strictly and, with `cases` (the run's case ids in input order), checks
/// every row against them: its id must be one of the cases and its index that case's position.
/// Anything that does not fit is an error naming the line. A line longer than `max_line_bytes`
/// is an error too.
pub fn read_rows_for(
    path: &Path,
    cases: Option<&HashMap<&str, usize>>,
    max_line_bytes: usize,
) -> Result<PreviousRows, RowsError> {
    let mut rows = HashMap::new();
    let scanned = scan_rows(path, max_line_bytes, |_, index, row| {
        if let Some(cases) = cases {
            check_row_index(cases.get(row.id.as_str()).copied(), &row.id, index)?;
        }
        rows.insert(row.id.clone(), (index, row));
        Ok(())
    })?;
    Ok(PreviousRows {
        header: scanned.header,
        rows,
        torn_tail: scanned.torn_tail,
        whole_len: scanned.whole_len,
    })
}

/// The problem with a row whose id `id` is the case at `case_index` (`None`: no case has it)
/// but that was written with index `index`; nothing when they agree.
pub(crate) fn check_row_index(
    case_index: Option<usize>,
    id: &str,
    index: usize,
) -> Result<(), String> {
    match case_index {
        None => Err(format!("row `{id}` is not one of the cases")),
        Some(case_index) if case_index != index => Err(format!(
            "row `{id}` has index {index} but that case is number {case_index}"
        )),
        Some(_) => Ok(()),
    }
}

/// A rows file read by [`scan_rows`]: its header, whether its last line was cut short, and the
/// length of its whole lines.
#[derive(Debug)]
pub(crate) struct Scanned {
    pub(crate) header: RowsHeader,
    pub(crate) torn_tail: bool,
    pub(crate) whole_len: u64,
    /// The number of the last whole line (the header is line 1).
    pub(crate) last_line: usize,
}

/// Reads a rows file strictly, one line at a time: the header, then each whole row, passed to
/// `on_row` with its line number (the header is line 1) and index. A problem `on_row` returns
/// becomes the error naming that line. Only a final line without its newline (a write cut short
/// by a crash) is tolerated and skipped; memory is one line whatever the file's size.
pub(crate) fn scan_rows(
    path: &Path,
    max_line_bytes: usize,
    mut on_row: impl FnMut(usize, usize, Row) -> Result<(), String>,
) -> Result<Scanned, RowsError> {
    use jevjudge_wire::lines::{LineRead, read_line_bounded};
    let at = |line: Option<usize>, problem: String| RowsError {
        path: match line {
            Some(n) => format!("{}:{n}", path.display()),
            None => path.display().to_string(),
        },
        problem,
    };
    let file = File::open(path).map_err(|e| at(None, format!("cannot read: {e}")))?;
    let mut reader = BufReader::new(file);
    let mut header: Option<RowsHeader> = None;
    let mut torn_tail = false;
    let mut whole_len: u64 = 0;
    let mut last_line = 0;
    let mut buffer = Vec::new();
    let mut number = 0;
    loop {
        let read = read_line_bounded(&mut reader, &mut buffer, max_line_bytes)
            .map_err(|e| at(Some(number + 1), format!("cannot read: {e}")))?;
        let (complete, bytes) = match read {
            LineRead::Eof => break,
            LineRead::TooLong => {
                return Err(at(
                    Some(number + 1),
                    format!("a line is longer than {max_line_bytes} bytes: not a rows file"),
                ));
            }
            LineRead::Line { complete, bytes } => (complete, bytes),
        };
        number += 1;
        let text = match std::str::from_utf8(&buffer) {
            Ok(text) => text.trim_end_matches('\r'),
            Err(_) if !complete => {
                torn_tail = true;
                continue;
            }
            Err(_) => return Err(at(Some(number), "not valid UTF-8".to_owned())),
        };
        if header.is_none() {
            let parsed: RowsHeader = serde_json::from_str(text)
                .map_err(|e| at(Some(number), format!("not a jevjudge rows header: {e}")))?;
            if !complete {
                // Even the header was cut short: nothing to keep.
                return Err(at(
                    Some(number),
                    "the header line was cut short: nothing to resume from; start afresh"
                        .to_owned(),
                ));
            }
            header = Some(parsed);
            whole_len += bytes as u64;
            last_line = number;
            continue;
        }
        match serde_json::from_str::<Line>(text) {
            Ok(_) if !complete => torn_tail = true,
            Ok(line) => {
                on_row(number, line.index, line.row)
                    .map_err(|problem| at(Some(number), problem))?;
                whole_len += bytes as u64;
                last_line = number;
            }
            Err(_) if !complete => torn_tail = true,
            Err(e) => return Err(at(Some(number), format!("not a row: {e}"))),
        }
    }
    let header = header.ok_or_else(|| at(None, "empty rows file".to_owned()))?;
    Ok(Scanned {
        header,
        torn_tail,
        whole_len,
        last_line,
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;
    use crate::{EvaluatorRequest, parse_case};

    /// The digest entry of a case built the plain way: the JSON array as a value, then its
    /// canonical form. [`write_case_entry`] must write exactly this text.
    fn entry_as_value(case: &Case) -> String {
        let findings = case.expected_findings.as_ref().map(|labels| {
            labels
                .iter()
                .map(|(id, label)| json!([id, label]))
                .collect::<Vec<_>>()
        });
        let mut entry = json!([
            case.id,
            case.scenario,
            case.expected_pass,
            case.input.to_state(),
            findings
        ]);
        if case.weight != 1.0
            && let Some(entry) = entry.as_array_mut()
        {
            entry.push(json!(case.weight));
        }
        jevjudge_wire::canonical::to_canonical_string(&entry).unwrap_or_default()
    }

    fn case() -> impl Strategy<Value = Case> {
        let input = prop_oneof![
            (
                any::<String>(),
                proptest::collection::vec(any::<String>(), 0..4),
                any::<String>()
            )
                .prop_map(|(question, supporting_context, answer)| {
                    CaseInput::Evaluator(EvaluatorRequest {
                        question,
                        supporting_context,
                        answer,
                    })
                }),
            crate::test_support::json_value(3, 24).prop_map(CaseInput::State),
        ];
        let weight = prop_oneof![
            Just(1.0),
            any::<f64>().prop_filter("positive, finite", |w| *w > 0.0 && w.is_finite()),
        ];
        (
            any::<String>(),
            any::<String>(),
            input,
            any::<bool>(),
            proptest::option::of(proptest::collection::vec(
                (any::<String>(), any::<bool>()),
                0..3,
            )),
            weight,
        )
            .prop_map(
                |(scenario, id, input, expected_pass, expected_findings, weight)| Case {
                    scenario,
                    id,
                    input,
                    expected_pass,
                    expected_findings,
                    weight,
                },
            )
    }

    proptest! {
        #[test]
        fn a_case_entry_is_the_canonical_form_of_its_array(case in case()) {
            let mut entry = String::new();
            write_case_entry(&case, &mut entry).unwrap();
            prop_assert_eq!(entry, entry_as_value(&case));
        }
    }

    /// The digest a rows file's header holds for these cases; a resumed run compares it, so it
    /// must never change for the same cases.
    #[tokio::test]
    async fn a_row_line_is_its_line_serialized() {
        let report = crate::test_support::sms_spam_replay("definition.toml", 1).await;
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("run.rows.jsonl");
        let header = RowsHeader::from_digest(
            &jevjudge_judge::Definition::from_path(crate::test_support::sms_spam(
                "definition.toml",
            ))
            .expect("a definition"),
            CasesDigest::default(),
        );
        let mut writer = RowsWriter::create(&path, &header).expect("created");
        let mut expected = String::new();
        for (index, row) in report.rows.iter().enumerate().step_by(7) {
            writer.write_row(index * 1001, row).expect("written");
            expected += &serde_json::to_string(&LineRef {
                index: index * 1001,
                row,
            })
            .expect("json");
            expected.push('\n');
        }
        writer.sync().expect("synced");
        let text = std::fs::read_to_string(&path).expect("read");
        assert_eq!(text.split_once('\n').expect("a header").1, expected);
    }

    #[test]
    fn the_cases_digest_of_known_cases_is_unchanged() {
        let lines = [
            r#"{"scenario": "Refund \"promises\"\u0001", "id": "honest-é", "question": "Has my refund\ngone through? 😀", "supporting_context": ["Business record: no refund", "tab\there \\ back"], "answer": "No refund yet.", "expected_pass": true, "expected_findings": {"supported": true}}"#,
            r#"{"scenario": "States", "id": "state-1", "state": {"z": [1, -2, 1.5, 1e-7, 1e21, 100.0, null, true], "a": {"b": "c", "A": 18446744073709551615}, "ｄ": "\u007f"}, "expected_pass": false, "weight": 2.5}"#,
            r#"{"scenario": "States", "id": "empty", "question": "", "supporting_context": [], "answer": "", "expected_pass": false, "expected_findings": {"supported": false}, "weight": 3}"#,
        ];
        let cases: Vec<Case> = lines.iter().map(|line| parse_case(line).unwrap()).collect();
        assert_eq!(
            cases_digest(&cases),
            "sha256:ea31341eb84317531621fd677f3133fc6b11ac2afc91a7331199a7d2dc66137f"
        );
    }
}
