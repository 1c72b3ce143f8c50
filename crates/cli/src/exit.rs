//! Exit statuses of every subcommand, in one place (cli-and-formats.md §1).

use std::process::ExitCode;

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

/// Turns one of the constants above into the process exit code.
pub fn code(value: u8) -> ExitCode {
    ExitCode::from(value)
}
