//! Exit statuses of every subcommand, in one place (cli-and-formats.md §1), and the one error
//! type whose kind decides the status of a command that fails.
//!
//! | code | meaning |
//! |---|---|
//! | 0 | PASS, or a run that completed with every gate holding |
//! | 1 | FAIL (judge), a gate that did not hold (eval, compare), nothing to write (calibrate `--write-definition`, `reviews export`) |
//! | 2 | invalid input or configuration: nothing was sent |
//! | 3 | INCONCLUSIVE (judge) |
//! | 4 | ERROR (judge), or every review of a run errored (eval) |
//! | 5 | interrupted (Ctrl-C) after writing what finished |
//! | 6 | the API key was refused (401/403): no new review started |
//! | 7 | a spending cap stopped the run |
//! | 8 | failed after sending: the reviews ran (or the store was read) but a report, the rows, an export or standard output could not be written |

/// PASS, or a run that completed with every gate holding.
pub const SUCCESS: u8 = 0;
/// FAIL (judge), or a gate that did not hold (eval, compare).
pub const FAILED: u8 = 1;
/// Invalid input or configuration: nothing was sent.
pub const INVALID_INPUT: u8 = 2;
/// INCONCLUSIVE (judge).
pub const INCONCLUSIVE: u8 = 3;
/// ERROR (judge).
pub const ERROR: u8 = 4;
/// The run was interrupted (Ctrl-C) after writing what finished.
pub const INTERRUPTED: u8 = 5;
/// The API key was refused (401/403): no new review started; `--resume` continues once fixed.
pub const KEY_REFUSED: u8 = 6;
/// A spending cap (`--max-input-tokens`, `--max-cost`) stopped the run; `--resume` continues.
pub const CAP_REACHED: u8 = 7;
/// Failed after sending: the reviews ran (or the store was read for an export), but their
/// results could not all be written (a report, the rows file, an export, standard output).
pub const FAILED_AFTER_SENDING: u8 = 8;

/// Why a command failed. Commands return `anyhow::Result`; the first `Failure` in an error's
/// chain decides the exit status, and an error that carries none is invalid input (exit 2):
/// every command checks its input before it sends anything, and marks what fails after with
/// [`Failure::after_sending`]. Helpers whose callers need a typed error return
/// [`Failure::Input`].
#[derive(Debug)]
pub enum Failure {
    /// Invalid input or configuration, found before anything was sent (exit 2).
    Input(String),
    /// The run went ahead (requests were sent, or the store was read for an export), but its
    /// results could not all be written (exit 8).
    AfterSending(anyhow::Error),
}

impl Failure {
    /// The exit status of this failure.
    pub fn code(&self) -> u8 {
        match self {
            Failure::Input(_) => INVALID_INPUT,
            Failure::AfterSending(_) => FAILED_AFTER_SENDING,
        }
    }

    /// Marks `error` as one met after sending.
    pub fn after_sending(error: impl Into<anyhow::Error>) -> anyhow::Error {
        Failure::AfterSending(error.into()).into()
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Input(message) => f.write_str(message),
            Failure::AfterSending(error) => write!(f, "{error:#}"),
        }
    }
}

impl std::error::Error for Failure {}

/// The exit status of a command that failed with `error`.
pub fn status_of(error: &anyhow::Error) -> u8 {
    error
        .chain()
        .find_map(|cause| cause.downcast_ref::<Failure>())
        .map_or(INVALID_INPUT, Failure::code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_after_sending_exits_8_and_anything_else_2() {
        let written = Failure::after_sending(anyhow::anyhow!("cannot write r.json"));
        assert_eq!(status_of(&written), FAILED_AFTER_SENDING);
        assert_eq!(written.to_string(), "cannot write r.json");
        let wrapped = written.context("while writing the outputs");
        assert_eq!(status_of(&wrapped), FAILED_AFTER_SENDING);
        let input: anyhow::Error = Failure::Input("--cases: no such file".into()).into();
        assert_eq!(status_of(&input), INVALID_INPUT);
        assert_eq!(status_of(&anyhow::anyhow!("unclassified")), INVALID_INPUT);
    }
}
