//! Bounded line reading for every line-oriented input (cases, rows files, `.jevl` records).
//!
//! A line longer than the cap is refused after reading at most `cap` bytes of it, so a file of
//! one endless line (`/dev/zero`) costs `cap` bytes of memory, never the whole input.

use std::io::{self, BufRead};

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
}
