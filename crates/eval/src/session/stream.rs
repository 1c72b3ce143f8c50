//! A streaming session's second read of its cases file: the cases, lazily, for the run.

use std::{
    fs::File,
    io::BufReader,
    path::Path,
    sync::{Arc, Mutex},
};

use super::SessionError;
use crate::{Case, parse_case, rows_file::CasesDigest};

/// Reads a cases file again, lazily, for a streaming run (it was checked in a first pass and
/// is a regular file). A line that no longer reads as a case (the file changed since) ends the
/// stream; the run then comes back short and [`super::Session::finish`] reports it. Every case read
/// is added to `digest`, so the two passes can be compared.
pub(super) fn stream_cases(
    path: &Path,
    max_line_bytes: usize,
    digest: Arc<Mutex<CasesDigest>>,
) -> Result<impl Iterator<Item = Case>, SessionError> {
    let file = File::open(path).map_err(|e| {
        SessionError::Failed(format!("cannot read the cases {}: {e}", path.display()))
    })?;
    let mut lines =
        jevjudge_wire::lines::CappedLines::new(BufReader::new(file), max_line_bytes, None);
    Ok(std::iter::from_fn(move || {
        let (_, line) = lines.next_line().ok()??;
        let case = parse_case(line).ok()?;
        if let Ok(mut digest) = digest.lock() {
            digest.add(&case);
        }
        Some(case)
    }))
}

/// Reads a streaming run's cases file again, passing each case's id to `each` in input order,
/// in memory of one line (no check for repeated ids: the first pass made it). A line that no
/// longer reads as a case (the file changed since) is an error.
pub(super) fn each_id(
    path: &Path,
    max_line_bytes: usize,
    mut each: impl FnMut(&str),
) -> Result<(), SessionError> {
    let failed = |problem: String| {
        SessionError::Failed(format!(
            "cannot read the cases {} again: {problem}",
            path.display()
        ))
    };
    let file = File::open(path).map_err(|e| failed(e.to_string()))?;
    let mut lines =
        jevjudge_wire::lines::CappedLines::new(BufReader::new(file), max_line_bytes, None);
    loop {
        match lines.next_line() {
            Ok(None) => return Ok(()),
            Ok(Some((number, line))) => match parse_case(line) {
                Ok(case) => each(&case.id),
                Err(e) => return Err(failed(format!("line {number}: {e}"))),
            },
            Err((number, fault)) => {
                let kind = crate::case::fault_kind(fault);
                return Err(failed(format!("line {number}: {kind}")));
            }
        }
    }
}
