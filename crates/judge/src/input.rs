//! Reading an input whole, within a cap, and inputs that could make a run wait forever: a named
//! pipe (FIFO) that no program ever opens for writing would block the open that reads it, so
//! such an input gets a bounded wait.

use std::{fs::File, io, path::Path, time::Duration};

use jevjudge_wire::setting::{Explain, Namer, Setting, plain};

/// How long a FIFO input may wait for a writer before [`wait_for_writer`] gives up.
pub const FIFO_WRITER_WAIT: Duration = Duration::from_secs(5);

/// A FIFO input that cannot be opened.
#[derive(Debug, thiserror::Error)]
pub enum FifoError {
    /// Opening it failed.
    #[error("cannot read: {0}")]
    Open(io::Error),
    /// No program opened it for writing within [`FIFO_WRITER_WAIT`].
    #[error(
        "a named pipe (FIFO) that nothing wrote to within {} s; start the program that writes \
         it first, or give a regular file",
        FIFO_WRITER_WAIT.as_secs()
    )]
    NoWriter,
}

/// When `path` is a FIFO, waits at most [`FIFO_WRITER_WAIT`] for a writer and returns the pipe,
/// open: read it from this handle (opening the path again would wait for another writer).
/// `None` for any other kind of path, at once.
pub fn wait_for_writer(path: &Path) -> Result<Option<File>, FifoError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let is_fifo = std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo());
        if !is_fifo {
            return Ok(None);
        }
        let (sender, receiver) = std::sync::mpsc::channel();
        let owned = path.to_owned();
        // The open blocks until a writer appears; if none does, the thread is left behind and
        // ends with the process.
        std::thread::spawn(move || {
            let _ = sender.send(File::open(owned));
        });
        match receiver.recv_timeout(FIFO_WRITER_WAIT) {
            Ok(Ok(file)) => Ok(Some(file)),
            Ok(Err(e)) => Err(FifoError::Open(e)),
            Err(_) => Err(FifoError::NoWriter),
        }
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Ok(None)
    }
}

/// An input that cannot be read whole as text.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Opening or reading failed.
    #[error("cannot read: {0}")]
    Io(#[from] io::Error),
    /// It holds more than the cap.
    #[error("larger than the cap of {max_bytes} bytes")]
    TooLarge {
        /// The cap.
        max_bytes: u64,
    },
    /// It is not UTF-8.
    #[error("not valid UTF-8")]
    NotUtf8,
}

/// Reads at most `max_bytes` of `input` as UTF-8 text (reading stops just past the cap).
pub fn read_capped(input: impl io::Read, max_bytes: u64) -> Result<String, ReadError> {
    use std::io::Read;
    let mut bytes = Vec::new();
    input
        .take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(ReadError::TooLarge { max_bytes });
    }
    String::from_utf8(bytes).map_err(|_| ReadError::NotUtf8)
}

/// Opens `path` and reads it like [`read_capped`].
pub fn read_to_string(path: &Path, max_bytes: u64) -> Result<String, ReadError> {
    read_capped(File::open(path)?, max_bytes)
}

/// Why a state cannot be reviewed.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// It could not be read whole as text.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// It is not JSON.
    #[error("the state is not JSON: {0}")]
    NotJson(serde_json::Error),
    /// It is JSON of another kind than the wire's content (systemone-wire.md §4).
    #[error("the state must be a JSON string, object or array, not {0}")]
    Kind(&'static str),
}

/// Reads a state to review: at most `max_bytes` of UTF-8 JSON holding a string, an object or
/// an array.
pub fn read_state(input: impl io::Read, max_bytes: u64) -> Result<serde_json::Value, StateError> {
    use serde_json::Value;
    let text = read_capped(input, max_bytes)?;
    let state: Value = serde_json::from_str(&text).map_err(StateError::NotJson)?;
    match state {
        Value::String(_) | Value::Object(_) | Value::Array(_) => Ok(state),
        other => Err(StateError::Kind(jevjudge_wire::json_kind(&other))),
    }
}

/// An input's error with what the input is (`"state"`, `"definition"`) and where it came from
/// (a path, or `standard input`); its message names the setting that raises the cap.
#[derive(Debug)]
pub struct InputError<'a, E> {
    /// What the input is.
    pub what: &'a str,
    /// Where it came from.
    pub source: &'a str,
    /// Why it could not be read.
    pub error: E,
}

impl Explain for InputError<'_, ReadError> {
    fn explain(&self, name: Namer<'_>) -> String {
        read_message(self.what, self.source, &self.error, name)
    }
}

impl Explain for InputError<'_, StateError> {
    fn explain(&self, name: Namer<'_>) -> String {
        match &self.error {
            StateError::Read(error) => read_message(self.what, self.source, error, name),
            other => format!("{}: {other}", self.source),
        }
    }
}

fn read_message(what: &str, source: &str, error: &ReadError, name: Namer<'_>) -> String {
    match error {
        ReadError::Io(e) => format!("{source}: cannot read the {what}: {e}"),
        ReadError::TooLarge { max_bytes } => format!(
            "{source}: the {what} is larger than the cap of {max_bytes} bytes (raise it with {})",
            name(Setting::MaxInputBytes)
        ),
        ReadError::NotUtf8 => format!("{source}: the {what} is not valid UTF-8"),
    }
}

impl<E> std::fmt::Display for InputError<'_, E>
where
    Self: Explain,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.explain(&plain))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_is_a_json_string_object_or_array_within_the_cap() {
        for text in [r#""a draft""#, r#"{"a": 1}"#, "[1, 2]"] {
            assert!(read_state(text.as_bytes(), 64).is_ok(), "{text}");
        }
        for (text, kind) in [("1", "number"), ("null", "null"), ("true", "boolean")] {
            let error = read_state(text.as_bytes(), 64).expect_err("not content");
            assert!(matches!(error, StateError::Kind(k) if k == kind), "{error}");
        }
        assert!(matches!(
            read_state(&b"{"[..], 64),
            Err(StateError::NotJson(_))
        ));
        assert!(matches!(
            read_state(&b"\"abcdef\""[..], 4),
            Err(StateError::Read(ReadError::TooLarge { max_bytes: 4 }))
        ));
    }

    #[test]
    fn text_within_the_cap_is_read_and_more_is_refused() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("state.txt");
        std::fs::write(&path, "hello").expect("written");
        assert_eq!(read_to_string(&path, 5).expect("within the cap"), "hello");
        assert!(matches!(
            read_to_string(&path, 4),
            Err(ReadError::TooLarge { max_bytes: 4 })
        ));
        std::fs::write(&path, [0xff, 0xfe]).expect("written");
        assert!(matches!(read_to_string(&path, 5), Err(ReadError::NotUtf8)));
        let missing = read_to_string(&dir.path().join("missing"), 5);
        assert!(matches!(missing, Err(ReadError::Io(_))));
    }

    #[test]
    fn a_regular_file_needs_no_writer() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("cases.jsonl");
        std::fs::write(&path, "").expect("written");
        assert!(wait_for_writer(&path).expect("passes").is_none());
        assert!(
            wait_for_writer(&dir.path().join("missing"))
                .expect("passes")
                .is_none()
        );
    }

    #[test]
    fn an_input_error_names_the_input_and_the_setting_that_raises_the_cap() {
        let too_large = InputError {
            what: "state",
            source: "s.json",
            error: read_state(&b"\"abcdef\""[..], 4).expect_err("too large"),
        };
        assert_eq!(
            too_large.explain(&|s| format!("--{}", s.key())),
            "s.json: the state is larger than the cap of 4 bytes (raise it with --max_input_bytes)"
        );
        assert!(
            too_large
                .to_string()
                .ends_with("(raise it with the max input bytes setting)")
        );
        let kind = InputError {
            what: "state",
            source: "standard input",
            error: read_state(&b"1"[..], 4).expect_err("not content"),
        };
        assert_eq!(
            kind.to_string(),
            "standard input: the state must be a JSON string, object or array, not number"
        );
    }
}
