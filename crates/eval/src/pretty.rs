//! serde_json's pretty layout, written faster (for the JSON report and its rows).

use std::io;

/// serde_json's pretty layout (two spaces a level, `": "` after a key), byte for byte, with each
/// line's indentation written in one piece rather than a write per level: a report's rows are
/// several levels deep, and the per-level writes cost more than the text itself.
#[derive(Debug, Default)]
pub(crate) struct Pretty {
    level: usize,
    has_value: bool,
}

impl Pretty {
    /// The layout of a value `level` levels deep (its members at `level + 1`).
    pub(crate) fn at(level: usize) -> Pretty {
        Pretty {
            level,
            has_value: false,
        }
    }

    fn indent<W: ?Sized + io::Write>(&self, writer: &mut W, first: bool) -> io::Result<()> {
        const SPACES: &[u8; 64] = &[b' '; 64];
        writer.write_all(if first { b"\n" } else { b",\n" })?;
        let mut left = 2 * self.level;
        while left > 0 {
            let piece = left.min(SPACES.len());
            writer.write_all(&SPACES[..piece])?;
            left -= piece;
        }
        Ok(())
    }

    fn close<W: ?Sized + io::Write>(&mut self, writer: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.level = self.level.saturating_sub(1);
        if self.has_value {
            self.indent(writer, true)?;
        }
        writer.write_all(bracket)
    }
}

impl serde_json::ser::Formatter for Pretty {
    fn begin_array<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.level += 1;
        self.has_value = false;
        writer.write_all(b"[")
    }

    fn end_array<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.close(writer, b"]")
    }

    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.indent(writer, first)
    }

    fn end_array_value<W: ?Sized + io::Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.level += 1;
        self.has_value = false;
        writer.write_all(b"{")
    }

    fn end_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.close(writer, b"}")
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.indent(writer, first)
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + io::Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}
