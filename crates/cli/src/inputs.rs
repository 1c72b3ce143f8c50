//! Inputs read whole within a cap, and named pipes (FIFOs) given a bounded wait for a writer
//! ([`jevjudge_judge::input`]); here the errors name the input and the flag.

use std::path::Path;

use jevjudge_judge::input::{self, InputError, ReadError};
use jevjudge_wire::setting::{Explain, Setting};

/// The command-line flag of a setting that library errors name: `--max-input-bytes`.
pub fn flag(setting: Setting) -> String {
    format!("--{}", setting.key().replace('_', "-"))
}

/// Parses a production base rate for clap: strictly between 0 and 1.
pub fn parse_prevalence(text: &str) -> Result<f64, String> {
    let value: f64 = text.trim().parse().map_err(|e| format!("{e}"))?;
    jevjudge_eval::prevalence::check(value).map_err(|e| e.to_string())
}

/// A library error whose message names settings, each named by its flag.
pub fn flagged(error: &impl Explain) -> anyhow::Error {
    anyhow::Error::msg(error.explain(&flag))
}

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
    input::read_capped(file, max_bytes).map_err(|e| read_error(e, what, path))
}

/// Reads a whole file of at most `max_bytes` bytes (reading stops there), naming it in the
/// error.
pub fn read_to_string(path: &Path, what: &str, max_bytes: u64) -> anyhow::Result<String> {
    input::read_to_string(path, max_bytes).map_err(|e| read_error(e, what, path))
}

fn read_error(error: ReadError, what: &str, path: &Path) -> anyhow::Error {
    let source = &path.display().to_string();
    flagged(&InputError {
        what,
        source,
        error,
    })
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
    use jevjudge_judge::{Definition, DefinitionFormat};
    match wait_for_writer("--definition", path)?.0 {
        None => Definition::from_path_capped(path, max_bytes).map_err(|e| flagged(&e)),
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

/// When `path` is a FIFO, waits a bounded time for a writer and holds the pipe open; any other
/// path passes at once. `flag` names the option in the error.
pub fn wait_for_writer(flag: &str, path: &Path) -> anyhow::Result<Held> {
    input::wait_for_writer(path)
        .map(Held)
        .map_err(|e| anyhow::anyhow!("{flag} {}: {e}", path.display()))
}
