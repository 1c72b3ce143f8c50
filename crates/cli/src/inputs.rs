//! Inputs that could make a run wait forever: a named pipe (FIFO) that no program ever opens
//! for writing would block the open that reads it. Such an input gets a bounded wait
//! (docs/reference/file-formats.md).

use std::{path::Path, time::Duration};

/// How long a FIFO input may wait for a writer before the command gives up (exit 2).
pub const FIFO_WRITER_WAIT: Duration = Duration::from_secs(5);

/// A FIFO input, opened once a writer appeared: read it from this handle (opening the path
/// again would wait for another writer). `None` for any other kind of path.
pub struct Held(pub Option<std::fs::File>);

/// Reads at most `max_bytes` of `file` as UTF-8 text; `what` and `path` name it in errors.
pub fn read_capped(
    file: std::fs::File,
    what: &str,
    path: &Path,
    max_bytes: u64,
) -> anyhow::Result<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| anyhow::anyhow!("cannot read the {what} {}: {e}", path.display()))?;
    if bytes.len() as u64 > max_bytes {
        anyhow::bail!(
            "the {what} {} is larger than the cap of {max_bytes} bytes (raise it with \
             --max-input-bytes)",
            path.display()
        );
    }
    String::from_utf8(bytes)
        .map_err(|_| anyhow::anyhow!("the {what} {} is not valid UTF-8", path.display()))
}

/// Reads a whole file of at most `max_bytes` bytes (reading stops there), naming it in the
/// error.
pub fn read_to_string(path: &Path, what: &str, max_bytes: u64) -> anyhow::Result<String> {
    let file = std::fs::File::open(path)
        .map_err(|e| anyhow::anyhow!("cannot read the {what} {}: {e}", path.display()))?;
    read_capped(file, what, path, max_bytes)
}

/// The value of the environment variable `name`, which the option `flag` (like
/// `--auth-token-env`) names; an unset or non-Unicode variable is an input error naming both.
pub fn env_var(flag: &str, name: &str) -> Result<String, crate::exit::Failure> {
    std::env::var(name).map_err(|e| {
        crate::exit::Failure::Input(match e {
            std::env::VarError::NotPresent => format!("{flag}: the variable {name} is not set"),
            std::env::VarError::NotUnicode(_) => {
                format!("{flag}: the variable {name} is not valid Unicode")
            }
        })
    })
}

/// Loads a definition file (or FIFO) of at most `max_bytes` bytes.
pub fn definition(path: &Path, max_bytes: u64) -> anyhow::Result<jevjudge_judge::Definition> {
    use jevjudge_judge::{Definition, DefinitionFormat, LoadErrorKind};
    match wait_for_writer("--definition", path)?.0 {
        None => Definition::from_path_capped(path, max_bytes).map_err(|e| match e.kind() {
            LoadErrorKind::TooLarge { .. } => {
                anyhow::anyhow!("{e} (raise it with --max-input-bytes)")
            }
            _ => e.into(),
        }),
        Some(file) => {
            let format = DefinitionFormat::from_path(path).ok_or_else(|| {
                anyhow::anyhow!(
                    "{}: a definition file must end in .toml or .json",
                    path.display()
                )
            })?;
            let text = read_capped(file, "definition", path, max_bytes)?;
            Definition::from_str_as(&text, format)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
        }
    }
}

/// When `path` is a FIFO, waits at most [`FIFO_WRITER_WAIT`] for a writer and holds the pipe
/// open; any other path passes at once. `flag` names the option in the error.
pub fn wait_for_writer(flag: &str, path: &Path) -> anyhow::Result<Held> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let is_fifo = std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo());
        if !is_fifo {
            return Ok(Held(None));
        }
        let (sender, receiver) = std::sync::mpsc::channel();
        let owned = path.to_owned();
        // The open blocks until a writer appears; if none does, the thread is left behind and
        // ends with the process.
        std::thread::spawn(move || {
            let _ = sender.send(std::fs::File::open(owned));
        });
        match receiver.recv_timeout(FIFO_WRITER_WAIT) {
            Ok(Ok(file)) => Ok(Held(Some(file))),
            Ok(Err(e)) => Err(anyhow::anyhow!(
                "{flag} {}: cannot read: {e}",
                path.display()
            )),
            Err(_) => Err(anyhow::anyhow!(
                "{flag} {}: a named pipe (FIFO) that nothing wrote to within {} s; start the \
                 program that writes it first, or give a regular file",
                path.display(),
                FIFO_WRITER_WAIT.as_secs()
            )),
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (flag, path);
        Ok(Held(None))
    }
}
