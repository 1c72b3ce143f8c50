//! Reading a `.jevl` stream or file: strict, line by line, optionally capped.

use std::{io::BufRead, path::Path};

use crate::lines::CappedLines;

use super::{Record, RecordError, RecordErrorKind, parse_line, time::is_rfc3339};

/// Reads every record of a `.jevl` stream, in file order; see the [module docs](super).
///
/// Whitespace-only lines are skipped; any other bad line is an error carrying its 1-based line
/// number.
pub fn read_records(mut reader: impl BufRead) -> Result<Vec<Record>, RecordError> {
    let mut records = Vec::new();
    let mut buf = Vec::new();
    let mut line_no = 0;
    loop {
        buf.clear();
        line_no += 1;
        let at_line = |kind| RecordError::at_line(line_no, kind);
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => return Err(at_line(RecordErrorKind::Io(e))),
        }
        let line = std::str::from_utf8(&buf).map_err(|_| at_line(RecordErrorKind::NotUtf8))?;
        if line.trim().is_empty() {
            continue;
        }
        records.push(parse_line(line).map_err(at_line)?);
    }
    Ok(records)
}

/// Reads every record of the `.jevl` file at `path`; errors name the file
/// (`records.jevl:3: missing field `ts``).
pub fn read_file(path: &Path) -> Result<Vec<Record>, RecordError> {
    crate::lines::read_file(path, RecordErrorKind::Io, read_records)
}

/// Reads every record of a `.jevl` stream like [`read_records`], with bounds and stricter
/// checks for replay: a line longer than `max_line_bytes` or a stream longer than
/// `max_total_bytes` is an error (memory stays within the caps, even for `/dev/zero`), and so
/// is a record whose `id` is not a `sha256:` digest or whose `ts` is not an RFC 3339 time.
pub fn read_records_capped(
    reader: impl BufRead,
    max_line_bytes: usize,
    max_total_bytes: u64,
) -> Result<Vec<Record>, RecordError> {
    let mut records = Vec::new();
    let mut lines = CappedLines::new(reader, max_line_bytes, Some(max_total_bytes));
    while let Some((line_no, line)) = lines
        .next_line()
        .map_err(|(line_no, fault)| RecordError::at_line(line_no, fault.into()))?
    {
        let at_line = |kind| RecordError::at_line(line_no, kind);
        let record = parse_line(line).map_err(at_line)?;
        if !is_digest(&record.id) {
            return Err(at_line(RecordErrorKind::BadId));
        }
        if !is_rfc3339(&record.ts) {
            return Err(at_line(RecordErrorKind::BadTimestamp));
        }
        records.push(record);
    }
    Ok(records)
}

/// [`read_records_capped`] on the file at `path`; errors name the file and the line.
pub fn read_file_capped(
    path: &Path,
    max_line_bytes: usize,
    max_total_bytes: u64,
) -> Result<Vec<Record>, RecordError> {
    crate::lines::read_file(path, RecordErrorKind::Io, |reader| {
        read_records_capped(reader, max_line_bytes, max_total_bytes)
    })
}

/// `sha256:` followed by 64 lowercase hex digits.
fn is_digest(id: &str) -> bool {
    id.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}
