//! What a run shows a person and writes to disk: progress, standard output, files. The
//! summaries themselves are rendered by `jevjudge_eval::terminal`.

use std::{io::Write as _, path::Path};

use anyhow::Context;

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

/// Writes an output file. A regular file (or a new one) is replaced through a temporary
/// sibling and a rename, so a reader never sees half of it. Anything else is written through,
/// never replaced: `/dev/stdout` and `/dev/stderr` go to this process's own streams, a symlink
/// writes the file it points to (the link stays), and a pipe or device is opened and written.
pub fn write_atomic(path: &Path, contents: &str) -> anyhow::Result<()> {
    let cannot = || format!("cannot write {}", path.display());
    let text = path.to_string_lossy();
    if matches!(&*text, "/dev/stdout" | "/dev/fd/1" | "/proc/self/fd/1") {
        let mut stdout = std::io::stdout().lock();
        return stdout
            .write_all(contents.as_bytes())
            .and_then(|()| stdout.flush())
            .with_context(cannot);
    }
    if matches!(&*text, "/dev/stderr" | "/dev/fd/2" | "/proc/self/fd/2") {
        let mut stderr = std::io::stderr().lock();
        return stderr.write_all(contents.as_bytes()).with_context(cannot);
    }
    let link = std::fs::symlink_metadata(path).ok();
    let is_link = link.as_ref().is_some_and(|m| m.file_type().is_symlink());
    let regular = std::fs::metadata(path).ok().map(|m| m.is_file());
    if is_link || regular == Some(false) {
        if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
            anyhow::bail!("cannot write {}: it is a directory", path.display());
        }
        // Truncate only a regular file; a pipe or device is written as it is.
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(is_link)
            .truncate(regular != Some(false))
            .open(path)
            .with_context(cannot)?;
        file.write_all(contents.as_bytes()).with_context(cannot)?;
        return file.flush().with_context(cannot);
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".to_owned());
    let temporary = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    std::fs::write(&temporary, contents).with_context(cannot)?;
    std::fs::rename(&temporary, path).with_context(|| {
        let _ = std::fs::remove_file(&temporary);
        cannot()
    })
}

/// Checks, before anything is sent, that `path` can be written when the run ends: its
/// directory exists and takes a new file, or the file (or what a symlink points to) opens for
/// writing. `flag` names the option in the error.
pub fn check_writable(flag: &str, path: &Path) -> Result<(), crate::InputError> {
    let fail = |why: String| crate::InputError(format!("{flag} {}: {why}", path.display()));
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => return Err(fail("is a directory".to_owned())),
        Ok(meta) if !meta.is_file() => {
            #[cfg(unix)]
            {
                use std::os::unix::fs::FileTypeExt;
                if meta.file_type().is_fifo() {
                    // Opening a FIFO for writing would wait for a reader: it is written at the end.
                    return Ok(());
                }
            }
            return std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map(drop)
                .map_err(|e| fail(format!("cannot be written: {e}")));
        }
        Ok(_) => {
            std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(|e| fail(format!("cannot be written: {e}")))?;
        }
        Err(_) => {}
    }
    // The file is replaced through a temporary sibling: its directory must take a new file.
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    let directory = match real.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
        _ => std::path::PathBuf::from("."),
    };
    if !directory.is_dir() {
        return Err(fail(format!(
            "the directory {} does not exist",
            directory.display()
        )));
    }
    let probe = directory.join(format!(".jevjudge-probe-{}", std::process::id()));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(fail(format!(
            "cannot create files in {}: {e}",
            directory.display()
        ))),
    }
}

/// Parses `--addr HOST:PORT`: an IP address, or a host name such as `localhost` resolved once
/// (the first IPv4 address when there is one, so `localhost:0` listens on 127.0.0.1).
pub fn listen_addr(text: &str) -> Result<std::net::SocketAddr, String> {
    use std::net::ToSocketAddrs;
    if let Ok(addr) = text.parse() {
        return Ok(addr);
    }
    let addrs: Vec<std::net::SocketAddr> = text
        .to_socket_addrs()
        .map_err(|e| format!("`{text}` is not HOST:PORT ({e})"))?
        .collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or_else(|| addrs.first())
        .copied()
        .ok_or_else(|| format!("`{text}` resolves to no address"))
}

#[cfg(test)]
mod listen_addr_tests {
    use super::listen_addr;

    #[test]
    fn localhost_with_port_zero_is_accepted() {
        let addr = listen_addr("localhost:0").expect("localhost resolves");
        assert!(addr.ip().is_loopback(), "{addr}");
        assert_eq!(addr.port(), 0);
        assert_eq!(
            listen_addr("127.0.0.1:8080").unwrap(),
            "127.0.0.1:8080".parse().unwrap()
        );
        assert!(listen_addr("localhost").is_err());
        assert!(listen_addr("not a host:80").is_err());
    }
}
