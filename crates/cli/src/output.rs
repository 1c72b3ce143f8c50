//! What a run shows a person and writes to disk: progress, standard output, files. The
//! summaries themselves are rendered by `jevjudge_eval::terminal`.

use std::{
    io::Write as _,
    path::{Path, PathBuf},
};

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

/// How an output file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Results a person or a CI job reads (a report, JUnit, Markdown, HTML, a definition): a
    /// regular (or new) file is replaced whole through a temporary sibling, with the mode a new
    /// file gets (0666 less the umask). Anything else is written through, never replaced:
    /// `/dev/stdout` and `/dev/stderr` go to this process's own streams, a symlink writes the
    /// file it points to (the link stays), and a pipe or device is opened and written.
    WriteThrough,
    /// Exports of state text: always a new file readable by its owner only (0600), made under a
    /// unique name in the destination's directory (create-new, so never an existing file and
    /// never through a link) and renamed over the name. A symlink at the name is replaced; what
    /// it pointed to is never opened.
    Private,
}

/// An output file being written: a temporary file in the destination's directory, renamed
/// over the destination by [`AtomicFile::commit`] and removed when dropped before that, so a
/// reader never sees half of it and a failed run leaves an earlier file alone.
pub struct AtomicFile {
    writer: std::io::BufWriter<tempfile::NamedTempFile>,
    path: PathBuf,
}

impl AtomicFile {
    /// Starts writing `path` under `policy` (its temporary file is created at once).
    pub fn create(path: &Path, policy: Policy) -> anyhow::Result<AtomicFile> {
        let directory = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        let name = path
            .file_name()
            .map_or_else(|| "out".to_owned(), |n| n.to_string_lossy().into_owned());
        let prefix = format!(".{name}.");
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".partial");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // The mode is given to open(2), so the umask still narrows it.
            let mode = match policy {
                Policy::WriteThrough => 0o666,
                Policy::Private => 0o600,
            };
            builder.permissions(std::fs::Permissions::from_mode(mode));
        }
        #[cfg(not(unix))]
        let _ = policy;
        let file = builder
            .tempfile_in(directory)
            .with_context(|| format!("cannot write {}", path.display()))?;
        Ok(AtomicFile {
            writer: std::io::BufWriter::new(file),
            path: path.to_owned(),
        })
    }

    /// Appends `bytes`.
    pub fn write_all(&mut self, bytes: &[u8]) -> anyhow::Result<()> {
        self.writer
            .write_all(bytes)
            .with_context(|| format!("cannot write {}", self.path.display()))
    }

    /// Flushes and syncs the file and renames it over the destination.
    pub fn commit(self) -> anyhow::Result<PathBuf> {
        let path = self.path;
        let cannot = || format!("cannot write {}", path.display());
        let file = self
            .writer
            .into_inner()
            .map_err(std::io::IntoInnerError::into_error)
            .with_context(cannot)?;
        file.as_file().sync_all().with_context(cannot)?;
        file.persist(&path)
            .map_err(|e| e.error)
            .with_context(cannot)?;
        Ok(path)
    }
}

/// Writes an output file whole under `policy`.
pub fn write_file(path: &Path, contents: &str, policy: Policy) -> anyhow::Result<()> {
    if policy == Policy::WriteThrough && write_through(path, contents)? {
        return Ok(());
    }
    let mut file = AtomicFile::create(path, policy)?;
    file.write_all(contents.as_bytes())?;
    file.commit().map(drop)
}

/// Writes a result file ([`Policy::WriteThrough`]).
pub fn write_atomic(path: &Path, contents: &str) -> anyhow::Result<()> {
    write_file(path, contents, Policy::WriteThrough)
}

/// Writes `contents` through `path` when it is this process's standard output or error, a
/// symlink, a pipe or a device: `false` when it is a regular file or missing (to be replaced).
fn write_through(path: &Path, contents: &str) -> anyhow::Result<bool> {
    let cannot = || format!("cannot write {}", path.display());
    let text = path.to_string_lossy();
    if matches!(&*text, "/dev/stdout" | "/dev/fd/1" | "/proc/self/fd/1") {
        let mut stdout = std::io::stdout().lock();
        stdout
            .write_all(contents.as_bytes())
            .and_then(|()| stdout.flush())
            .with_context(cannot)?;
        return Ok(true);
    }
    if matches!(&*text, "/dev/stderr" | "/dev/fd/2" | "/proc/self/fd/2") {
        let mut stderr = std::io::stderr().lock();
        stderr.write_all(contents.as_bytes()).with_context(cannot)?;
        return Ok(true);
    }
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    let regular = std::fs::metadata(path).ok().map(|m| m.is_file());
    if !is_link && regular != Some(false) {
        return Ok(false);
    }
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
    file.flush().with_context(cannot)?;
    Ok(true)
}

/// Checks, before anything is sent, that `path` can be written when the run ends: its
/// directory exists and takes a new file, or the file (or what a symlink points to) opens for
/// writing. `flag` names the option in the error.
pub fn check_writable(flag: &str, path: &Path) -> anyhow::Result<()> {
    let fail = |why: String| anyhow::anyhow!("{flag} {}: {why}", path.display());
    if let Ok(meta) = std::fs::metadata(path) {
        if meta.is_dir() {
            return Err(fail("is a directory".to_owned()));
        }
        #[cfg(unix)]
        if std::os::unix::fs::FileTypeExt::is_fifo(&meta.file_type()) {
            // Opening a FIFO for writing would wait for a reader: it is written at the end.
            return Ok(());
        }
        std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| fail(format!("cannot be written: {e}")))?;
        if !meta.is_file() {
            // A device is written through, never replaced.
            return Ok(());
        }
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
    // A probe under a fresh name (removed when dropped) shows that a new file can be made.
    tempfile::Builder::new()
        .prefix(".jevjudge-probe-")
        .tempfile_in(&directory)
        .map(drop)
        .map_err(|e| {
            fail(format!(
                "cannot create files in {}: {e}",
                directory.display()
            ))
        })
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
