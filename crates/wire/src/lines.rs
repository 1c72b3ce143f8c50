//! Bounded line reading for every line-oriented input (cases, rows files, `.jevl` records).
//!
//! A line longer than the cap is refused after reading at most `cap` bytes of it, so a file of
//! one endless line (`/dev/zero`) costs `cap` bytes of memory, never the whole input.

use std::{
    fmt,
    fs::File,
    io::{self, BufRead, BufReader},
    path::{Path, PathBuf},
};

/// The default cap on one line of a cases, rows or `.jevl` file: 16 MiB.
pub const DEFAULT_MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// The default cap on the whole of an input that is kept in memory (a cases file of a
/// non-streaming run, a `.jevl` file for replay): 1 GiB.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 1024 * 1024 * 1024;

/// What one call to [`read_line_bounded`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineRead {
    /// The end of the input: nothing was read.
    Eof,
    /// A line (its newline, if any, is stripped); `complete` is false for a last line without
    /// its newline. `bytes` counts what was consumed, newline included.
    Line {
        /// Whether the line ended with `\n`.
        complete: bool,
        /// Bytes consumed from the input.
        bytes: usize,
    },
    /// The line is longer than the cap; reading stopped inside it.
    TooLong,
}

/// Reads the next line into `buf` (cleared first), reading at most `cap` bytes of it plus the
/// newline. A trailing `\r` is kept (callers trim what they need).
pub fn read_line_bounded(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    cap: usize,
) -> io::Result<LineRead> {
    buf.clear();
    let mut consumed = 0;
    loop {
        let available = match reader.fill_buf() {
            Ok(available) => available,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(if consumed == 0 {
                LineRead::Eof
            } else {
                LineRead::Line {
                    complete: false,
                    bytes: consumed,
                }
            });
        }
        let (take, found) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (at + 1, true),
            None => (available.len(), false),
        };
        let content = if found { take - 1 } else { take };
        if buf.len() + content > cap {
            return Ok(LineRead::TooLong);
        }
        buf.extend_from_slice(&available[..content]);
        reader.consume(take);
        consumed += take;
        if found {
            return Ok(LineRead::Line {
                complete: true,
                bytes: consumed,
            });
        }
    }
}

/// Why [`CappedLines::next_line`] stopped short of a line.
#[derive(Debug)]
pub enum LineFault {
    /// Reading failed.
    Io(io::Error),
    /// The line is longer than the line cap.
    TooLong {
        /// The line cap in bytes.
        cap: usize,
    },
    /// The input read so far, this line included, is longer than the total cap.
    TooLarge {
        /// The total cap in bytes.
        cap: u64,
    },
    /// The line is not valid UTF-8.
    NotUtf8,
}

/// The non-blank lines of a line-oriented text input (cases, `.jevl` records) as text, each
/// with its 1-based line number: every line is read with [`read_line_bounded`] under the line
/// cap, the bytes of all lines (newlines included) are counted against the total cap, if any,
/// and lines of whitespace only are skipped (they still count in the numbering). Memory stays
/// within the line cap, whatever the input.
pub struct CappedLines<R> {
    reader: R,
    text: String,
    number: usize,
    total: u64,
    max_line_bytes: usize,
    max_total_bytes: Option<u64>,
}

impl<R: BufRead> CappedLines<R> {
    /// Lines of `reader`, each at most `max_line_bytes` long, `max_total_bytes` (when given)
    /// in all.
    pub fn new(reader: R, max_line_bytes: usize, max_total_bytes: Option<u64>) -> Self {
        Self {
            reader,
            text: String::new(),
            number: 0,
            total: 0,
            max_line_bytes,
            max_total_bytes,
        }
    }

    /// The next line that is not blank, with its number, or `None` at the end of the input.
    /// An error carries the number of the line it is about; reading stops there (what a
    /// further call returns is unspecified).
    pub fn next_line(&mut self) -> Result<Option<(usize, &str)>, (usize, LineFault)> {
        loop {
            self.number += 1;
            match self.read_text() {
                Ok(false) => return Ok(None),
                Ok(true) if self.text.trim().is_empty() => {}
                Ok(true) => return Ok(Some((self.number, &self.text))),
                Err(fault) => return Err((self.number, fault)),
            }
        }
    }

    /// Reads the next line into `self.text`, checking both caps; false at the end.
    fn read_text(&mut self) -> Result<bool, LineFault> {
        let mut buf = std::mem::take(&mut self.text).into_bytes();
        let read = read_line_bounded(&mut self.reader, &mut buf, self.max_line_bytes)
            .map_err(LineFault::Io)?;
        let bytes = match read {
            LineRead::Eof => return Ok(false),
            LineRead::TooLong => {
                return Err(LineFault::TooLong {
                    cap: self.max_line_bytes,
                });
            }
            LineRead::Line { bytes, .. } => bytes,
        };
        self.total += bytes as u64;
        if let Some(cap) = self.max_total_bytes.filter(|cap| self.total > *cap) {
            return Err(LineFault::TooLarge { cap });
        }
        self.text = String::from_utf8(buf).map_err(|_| LineFault::NotUtf8)?;
        Ok(true)
    }
}

/// A bad line-oriented input (a cases file, a `.jevl` file): where (the file, the 1-based
/// line) and what (`K`).
///
/// Displays as `records.jevl:3: what`, `records.jevl: what` (not on one line), `line 3: what`
/// (read from a stream) or `what`.
#[derive(Debug)]
pub struct InputError<K> {
    /// The file, when read from one.
    pub path: Option<PathBuf>,
    /// The 1-based line, when the problem is on one line.
    pub line: Option<usize>,
    /// What is wrong.
    pub kind: K,
}

impl<K> InputError<K> {
    /// The error of line `line` of a stream ([`read_file`] adds the file).
    pub fn at_line(line: usize, kind: K) -> InputError<K> {
        InputError {
            path: None,
            line: Some(line),
            kind,
        }
    }

    /// What is wrong.
    pub fn kind(&self) -> &K {
        &self.kind
    }

    /// The 1-based line number, or `None` when the problem is not on one line (the file could
    /// not be opened, or holds nothing).
    pub fn line(&self) -> Option<usize> {
        self.line
    }

    /// The file, when read from one.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }
}

impl<K: fmt::Display> fmt::Display for InputError<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.path, self.line) {
            (Some(path), Some(line)) => write!(f, "{}:{line}: {}", path.display(), self.kind),
            (Some(path), None) => write!(f, "{}: {}", path.display(), self.kind),
            (None, Some(line)) => write!(f, "line {line}: {}", self.kind),
            (None, None) => write!(f, "{}", self.kind),
        }
    }
}

impl<K: fmt::Display + fmt::Debug> std::error::Error for InputError<K> {}

/// Runs `read` on the file at `path`, buffered. Its errors name the file, and so does the
/// error of a file that cannot be opened, whose kind `unreadable` makes.
pub fn read_file<T, K>(
    path: &Path,
    unreadable: impl FnOnce(io::Error) -> K,
    read: impl FnOnce(BufReader<File>) -> Result<T, InputError<K>>,
) -> Result<T, InputError<K>> {
    let in_file = |mut error: InputError<K>| {
        error.path = Some(path.to_owned());
        error
    };
    let file = File::open(path).map_err(|e| {
        in_file(InputError {
            path: None,
            line: None,
            kind: unreadable(e),
        })
    })?;
    read(BufReader::new(file)).map_err(in_file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_split_and_the_last_may_lack_its_newline() {
        let mut input = "ab\n\ncd".as_bytes();
        let mut buf = Vec::new();
        let mut next = |buf: &mut Vec<u8>| read_line_bounded(&mut input, buf, 10).unwrap();
        let line = |complete, bytes| LineRead::Line { complete, bytes };
        assert_eq!(next(&mut buf), line(true, 3));
        assert_eq!(buf, b"ab");
        assert_eq!(next(&mut buf), line(true, 1));
        assert_eq!(next(&mut buf), line(false, 2));
        assert_eq!(buf, b"cd");
        assert_eq!(next(&mut buf), LineRead::Eof);
    }

    #[test]
    fn an_endless_line_stops_at_the_cap() {
        let mut zeros = std::io::BufReader::with_capacity(7, std::io::repeat(0));
        let mut buf = Vec::new();
        assert_eq!(
            read_line_bounded(&mut zeros, &mut buf, 1000).unwrap(),
            LineRead::TooLong
        );
        assert!(buf.len() <= 1000);
        let mut exact = "abc\n".as_bytes();
        assert!(matches!(
            read_line_bounded(&mut exact, &mut buf, 3).unwrap(),
            LineRead::Line { .. }
        ));
        let mut over = "abcd\n".as_bytes();
        assert_eq!(
            read_line_bounded(&mut over, &mut buf, 3).unwrap(),
            LineRead::TooLong
        );
    }

    #[test]
    fn capped_lines_skip_blank_lines_but_number_them() {
        let mut lines = CappedLines::new("a\n \n\r\nb\r\n\nc".as_bytes(), 10, None);
        assert_eq!(lines.next_line().unwrap(), Some((1, "a")));
        assert_eq!(lines.next_line().unwrap(), Some((4, "b\r")));
        assert_eq!(lines.next_line().unwrap(), Some((6, "c")));
        assert_eq!(lines.next_line().unwrap(), None);
    }

    #[test]
    fn capped_lines_name_the_line_of_each_fault() {
        let fault = |input: &[u8], max_line: usize, max_total: Option<u64>| {
            let mut lines = CappedLines::new(input, max_line, max_total);
            loop {
                match lines.next_line() {
                    Ok(Some(_)) => {}
                    Ok(None) => panic!("no fault in {input:?}"),
                    Err((line, fault)) => return (line, fault),
                }
            }
        };
        let (line, too_long) = fault(b"ab\n\nabcd\n", 3, None);
        assert_eq!(line, 3);
        assert!(
            matches!(too_long, LineFault::TooLong { cap: 3 }),
            "{too_long:?}"
        );
        // 3 + 1 + 4 bytes: the third line passes the total cap of 7.
        let (line, too_large) = fault(b"ab\n\nabc\nz\n", 10, Some(7));
        assert_eq!(line, 3);
        assert!(
            matches!(too_large, LineFault::TooLarge { cap: 7 }),
            "{too_large:?}"
        );
        let (line, not_utf8) = fault(b"ok\n\xff\n", 10, Some(100));
        assert_eq!(line, 2);
        assert!(matches!(not_utf8, LineFault::NotUtf8), "{not_utf8:?}");
    }
}
