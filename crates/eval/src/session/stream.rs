//! A streaming session's second reads of its cases file: the cases, lazily, for the run, and
//! their ids, to resume.

use std::{
    fs::File,
    io::BufReader,
    path::Path,
    sync::{Arc, Mutex},
};

use super::{SessionError, SessionPlan};
use crate::{Case, parse_case, rows_file::CasesDigest};

/// The ids of a streaming run's cases in input order, read again (to resume it).
pub(super) fn streamed_ids(plan: &SessionPlan) -> Result<Vec<String>, SessionError> {
    let mut ids = Vec::new();
    crate::for_each_case_in_file_capped(
        &plan.cases,
        plan.case_limit,
        plan.max_line_bytes,
        None,
        |case| ids.push(case.id),
    )
    .map_err(|e| SessionError::Failed(format!("cannot read the cases again: {e}")))?;
    Ok(ids)
}

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
