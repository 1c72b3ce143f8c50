//! What a run shows a person and writes to disk: progress, standard output, files. The
//! summaries themselves are rendered by `jevjudge_eval::terminal`.

use std::{io::Write as _, path::Path};

/// A progress bar on standard error, hidden when standard error is not a terminal.
pub fn progress_bar(len: u64) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(len),
        indicatif::ProgressDrawTarget::stderr_with_hz(4),
    );
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{spinner} {bar:32} {pos}/{len} reviews · {elapsed_precise} elapsed · eta {eta}",
    ) {
        bar.set_style(style);
    }
    bar
}

/// Completes on Ctrl-C (SIGINT) or SIGTERM.
pub async fn interrupted() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = match signal(SignalKind::terminate()) {
            Ok(term) => term,
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                return;
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Writes `text` to standard output. A closed pipe (`jevjudge … | head -1`) ends the output
/// quietly instead of panicking; the command still exits with its own status.
pub fn print_stdout(text: &str) {
    let mut stdout = std::io::stdout().lock();
    if let Err(error) = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        // A closed pipe (`| head`) ends quietly; any other failure (a full disk, /dev/full)
        // is said once and makes the exit status non-zero: nothing written is no result.
        if error.kind() != std::io::ErrorKind::BrokenPipe
            && !STDOUT_FAILED.swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            eprintln!("jevjudge: error: cannot write to standard output: {error}");
        }
    }
}

/// Set when standard output could not take what a command printed (not a closed pipe).
pub static STDOUT_FAILED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether standard output failed (other than a closed pipe) during the command.
pub fn stdout_failed() -> bool {
    STDOUT_FAILED.load(std::sync::atomic::Ordering::Relaxed)
}

pub use jevjudge_eval::output::write_atomic;

/// Checks, before anything is sent, that `path` can be written when the run ends; `flag` names
/// the option in the error.
pub fn check_writable(flag: &str, path: &Path) -> anyhow::Result<()> {
    jevjudge_eval::output::check_writable(path).map_err(|e| anyhow::anyhow!("{flag} {e}"))
}

/// Prints `listening on URL` on standard output, flushed at once, so that a script that started
/// a server on port 0 can read the address it got.
pub fn announce_listening(url: &str) -> std::io::Result<()> {
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "listening on {url}")?;
    stdout.flush()
}
