//! Output files: written whole or not at all. A result file a person or a CI job reads is
//! replaced through a temporary sibling (or written through a link, a pipe or this process's
//! standard streams); an export of state text is always a new file readable by its owner only.

use std::{
    io::{self, Write as _},
    path::{Path, PathBuf},
};

use crate::pretty::Pretty;

/// The files a run writes when it ends, each optional; all are results a person or a CI job
/// reads ([`Policy::WriteThrough`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReportFiles {
    /// The JSON report.
    pub report: Option<PathBuf>,
    /// JUnit XML.
    pub junit: Option<PathBuf>,
    /// The Markdown summary.
    pub markdown: Option<PathBuf>,
    /// The HTML page.
    pub html: Option<PathBuf>,
    /// Each case's text beside its row of the page.
    pub include_text: bool,
}

impl ReportFiles {
    /// Writes each file asked for, in the order report, JUnit, Markdown, HTML; the first that
    /// cannot be written stops the rest. `gates` are the lines the Markdown summary ends with;
    /// `definition` draws the thresholds on the page.
    pub fn write(
        &self,
        report: &crate::Report,
        gates: &[String],
        definition: Option<&jevjudge_judge::Definition>,
        texts: Option<&std::collections::HashMap<String, String>>,
    ) -> Result<(), WriteError> {
        if let Some(path) = &self.report {
            write_report(path, report)?;
        }
        if let Some(path) = &self.junit {
            write_atomic(path, &crate::junit::to_junit(report))?;
        }
        if let Some(path) = &self.markdown {
            write_atomic(path, &crate::markdown::to_markdown(report, gates))?;
        }
        if let Some(path) = &self.html {
            write_atomic(path, &crate::html::page(report, definition, texts))?;
        }
        Ok(())
    }
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

/// An output file that could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Creating, writing, syncing or renaming failed.
    #[error("cannot write {}", path.display())]
    Io {
        /// The destination.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The destination is a directory.
    #[error("cannot write {}: it is a directory", path.display())]
    IsDirectory {
        /// The destination.
        path: PathBuf,
    },
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> WriteError + '_ {
    move |source| WriteError::Io {
        path: path.to_owned(),
        source,
    }
}

/// An output file being written: a temporary file in the destination's directory, renamed
/// over the destination by [`AtomicFile::commit`] and removed when dropped before that, so a
/// reader never sees half of it and a failed run leaves an earlier file alone.
pub struct AtomicFile {
    writer: io::BufWriter<tempfile::NamedTempFile>,
    path: PathBuf,
}

impl AtomicFile {
    /// Starts writing `path` under `policy` (its temporary file is created at once).
    pub fn create(path: &Path, policy: Policy) -> Result<AtomicFile, WriteError> {
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
        let file = builder.tempfile_in(directory).map_err(io_error(path))?;
        Ok(AtomicFile {
            writer: io::BufWriter::new(file),
            path: path.to_owned(),
        })
    }

    /// Appends `bytes`.
    pub fn write_all(&mut self, bytes: &[u8]) -> Result<(), WriteError> {
        self.writer.write_all(bytes).map_err(io_error(&self.path))
    }

    /// Flushes and syncs the file and renames it over the destination.
    pub fn commit(self) -> Result<PathBuf, WriteError> {
        let path = self.path;
        let file = self
            .writer
            .into_inner()
            .map_err(io::IntoInnerError::into_error)
            .map_err(io_error(&path))?;
        file.as_file().sync_all().map_err(io_error(&path))?;
        file.persist(&path)
            .map_err(|e| e.error)
            .map_err(io_error(&path))?;
        Ok(path)
    }
}

/// Writes an output file whole under `policy`.
pub fn write_file(path: &Path, contents: &str, policy: Policy) -> Result<(), WriteError> {
    if policy == Policy::WriteThrough && write_through(path, contents)? {
        return Ok(());
    }
    let mut file = AtomicFile::create(path, policy)?;
    file.write_all(contents.as_bytes())?;
    file.commit().map(drop)
}

/// Writes a result file ([`Policy::WriteThrough`]).
pub fn write_atomic(path: &Path, contents: &str) -> Result<(), WriteError> {
    write_file(path, contents, Policy::WriteThrough)
}

/// Writes `value` as pretty JSON and a newline to a result file ([`Policy::WriteThrough`]). A
/// file that is replaced whole is streamed through a buffered writer into its temporary
/// sibling, so the text is never held whole in memory; other destinations get the same bytes.
pub fn write_json(path: &Path, value: &impl serde::Serialize) -> Result<(), WriteError> {
    if !replaced_whole(path) {
        let json = serde_json::to_string_pretty(value).map_err(|e| io_error(path)(e.into()))?;
        return write_atomic(path, &(json + "\n"));
    }
    let mut file = AtomicFile::create(path, Policy::WriteThrough)?;
    let mut serializer =
        serde_json::Serializer::with_formatter(&mut file.writer, Pretty::default());
    value
        .serialize(&mut serializer)
        .map_err(|e| io_error(path)(e.into()))?;
    file.write_all(b"\n")?;
    file.commit().map(drop)
}

/// Writes a report as [`write_json`] does, its rows laid out field by field
/// ([`crate::row_json`]) rather than through serde.
fn write_report(path: &Path, report: &crate::Report) -> Result<(), WriteError> {
    if !replaced_whole(path) {
        let mut json = Vec::new();
        report_json(&mut json, report).map_err(io_error(path))?;
        json.push(b'\n');
        let json = String::from_utf8(json).map_err(|e| io_error(path)(io::Error::other(e)))?;
        return write_atomic(path, &json);
    }
    let mut file = AtomicFile::create(path, Policy::WriteThrough)?;
    report_json(&mut file.writer, report).map_err(io_error(path))?;
    file.write_all(b"\n")?;
    file.commit().map(drop)
}

/// Writes `report` in [`Pretty`] layout: the report without its rows is serialized, and the
/// `"rows": []` it ends with is replaced by the rows, each laid out by [`crate::row_json`].
fn report_json<W: io::Write>(writer: &mut W, report: &crate::Report) -> io::Result<()> {
    let rowless = crate::Report {
        format: report.format.clone(),
        definition_version: report.definition_version.clone(),
        backend: report.backend,
        complete: report.complete,
        wall_millis: report.wall_millis,
        stopped: report.stopped,
        overall: report.overall.clone(),
        scenarios: report.scenarios.clone(),
        rows: Vec::new(),
    };
    let mut head = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(&mut head, Pretty::default());
    serde::Serialize::serialize(&rowless, &mut serializer)?;
    let rows_last = head.ends_with(b"\n  \"rows\": []\n}");
    let (Some(head), false) = (
        head.strip_suffix(b"[]\n}").filter(|_| rows_last),
        report.rows.is_empty(),
    ) else {
        // No rows, or rows are not the last field: the report serialized whole.
        let mut serializer = serde_json::Serializer::with_formatter(writer, Pretty::default());
        return serde::Serialize::serialize(report, &mut serializer).map_err(io::Error::from);
    };
    writer.write_all(head)?;
    writer.write_all(b"[")?;
    let mut row_json = Vec::new();
    for (at, row) in report.rows.iter().enumerate() {
        row_json.clear();
        row_json.extend_from_slice(if at == 0 { b"\n    " } else { b",\n    " });
        crate::row_json::write_row(&mut row_json, row, crate::row_json::Layout::InReport)?;
        writer.write_all(&row_json)?;
    }
    writer.write_all(b"\n  ]\n}")
}

/// Whether `path` is a regular file or missing (so replaced through a temporary sibling), not
/// this process's standard output or error, a symlink, a pipe or a device (written through).
fn replaced_whole(path: &Path) -> bool {
    let text = path.to_string_lossy();
    let standard = matches!(
        &*text,
        "/dev/stdout"
            | "/dev/fd/1"
            | "/proc/self/fd/1"
            | "/dev/stderr"
            | "/dev/fd/2"
            | "/proc/self/fd/2"
    );
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    let regular = std::fs::metadata(path).ok().map(|m| m.is_file());
    !standard && !is_link && regular != Some(false)
}

/// Writes `contents` through `path` when it is this process's standard output or error, a
/// symlink, a pipe or a device: `false` when it is a regular file or missing (to be replaced).
fn write_through(path: &Path, contents: &str) -> Result<bool, WriteError> {
    let text = path.to_string_lossy();
    if matches!(&*text, "/dev/stdout" | "/dev/fd/1" | "/proc/self/fd/1") {
        let mut stdout = io::stdout().lock();
        stdout
            .write_all(contents.as_bytes())
            .and_then(|()| stdout.flush())
            .map_err(io_error(path))?;
        return Ok(true);
    }
    if matches!(&*text, "/dev/stderr" | "/dev/fd/2" | "/proc/self/fd/2") {
        let mut stderr = io::stderr().lock();
        stderr
            .write_all(contents.as_bytes())
            .map_err(io_error(path))?;
        return Ok(true);
    }
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    let regular = std::fs::metadata(path).ok().map(|m| m.is_file());
    if !is_link && regular != Some(false) {
        return Ok(false);
    }
    if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
        return Err(WriteError::IsDirectory {
            path: path.to_owned(),
        });
    }
    // Truncate only a regular file; a pipe or device is written as it is.
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(is_link)
        .truncate(regular != Some(false))
        .open(path)
        .map_err(io_error(path))?;
    file.write_all(contents.as_bytes())
        .and_then(|()| file.flush())
        .map_err(io_error(path))?;
    Ok(true)
}

/// Why an output file could not be written when the run ends; shows as `PATH: why`.
#[derive(Debug, thiserror::Error)]
pub enum NotWritable {
    /// The path is a directory.
    #[error("{}: is a directory", path.display())]
    IsDirectory {
        /// The output path.
        path: PathBuf,
    },
    /// The existing file does not open for writing.
    #[error("{}: cannot be written: {source}", path.display())]
    Open {
        /// The output path.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The directory it would be made in does not exist.
    #[error("{}: the directory {} does not exist", path.display(), directory.display())]
    NoDirectory {
        /// The output path.
        path: PathBuf,
        /// Its directory.
        directory: PathBuf,
    },
    /// The directory takes no new file.
    #[error("{}: cannot create files in {}: {source}", path.display(), directory.display())]
    Create {
        /// The output path.
        path: PathBuf,
        /// Its directory.
        directory: PathBuf,
        /// Why.
        source: io::Error,
    },
}

/// Checks, before anything is sent, that `path` can be written when the run ends: its
/// directory exists and takes a new file, or the file (or what a symlink points to) opens for
/// writing.
pub fn check_writable(path: &Path) -> Result<(), NotWritable> {
    let path_buf = || path.to_owned();
    if let Ok(meta) = std::fs::metadata(path) {
        if meta.is_dir() {
            return Err(NotWritable::IsDirectory { path: path_buf() });
        }
        #[cfg(unix)]
        if std::os::unix::fs::FileTypeExt::is_fifo(&meta.file_type()) {
            // Opening a FIFO for writing would wait for a reader: it is written at the end.
            return Ok(());
        }
        std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|source| NotWritable::Open {
                path: path_buf(),
                source,
            })?;
        if !meta.is_file() {
            // A device is written through, never replaced.
            return Ok(());
        }
    }
    // The file is replaced through a temporary sibling: its directory must take a new file.
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    let directory = match real.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
        _ => PathBuf::from("."),
    };
    if !directory.is_dir() {
        return Err(NotWritable::NoDirectory {
            path: path_buf(),
            directory,
        });
    }
    // A probe under a fresh name (removed when dropped) shows that a new file can be made.
    tempfile::Builder::new()
        .prefix(".jevjudge-probe-")
        .tempfile_in(&directory)
        .map(drop)
        .map_err(|source| NotWritable::Create {
            path: path_buf(),
            directory,
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_file_is_replaced_whole_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("report.json");
        std::fs::write(&path, "old").expect("written");
        write_atomic(&path, "new\n").expect("written");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "new\n");
        let names: Vec<_> = std::fs::read_dir(dir.path()).expect("listed").collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[cfg(unix)]
    #[test]
    fn a_result_written_through_a_symlink_keeps_the_link() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let target = dir.path().join("target.json");
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&target, &link).expect("linked");
        write_atomic(&link, "through").expect("written");
        assert!(
            std::fs::symlink_metadata(&link)
                .expect("meta")
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&target).expect("read"), "through");
    }

    #[cfg(unix)]
    #[test]
    fn a_private_export_replaces_a_symlink_and_is_owner_only() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().expect("a temp dir");
        let target = dir.path().join("elsewhere.txt");
        std::fs::write(&target, "untouched").expect("written");
        let link = dir.path().join("export.jevl");
        std::os::unix::fs::symlink(&target, &link).expect("linked");
        write_file(&link, "state", Policy::Private).expect("written");
        let meta = std::fs::symlink_metadata(&link).expect("meta");
        assert!(meta.is_file());
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read_to_string(&target).expect("read"), "untouched");
    }

    proptest::proptest! {
        #[test]
        fn the_pretty_layout_is_serde_jsons_byte_for_byte(
            value in crate::test_support::json_value(40, 120)
        ) {
            let mut ours = Vec::new();
            let mut serializer = serde_json::Serializer::with_formatter(&mut ours, Pretty::default());
            serde::Serialize::serialize(&value, &mut serializer).unwrap();
            proptest::prop_assert_eq!(
                String::from_utf8(ours).unwrap(),
                serde_json::to_string_pretty(&value).unwrap()
            );
        }
    }

    #[tokio::test]
    async fn a_report_written_row_by_row_has_the_bytes_of_the_report_serialized() {
        let dir = tempfile::tempdir().expect("a temp dir");
        for repeat in [1, 3] {
            let mut report = crate::test_support::sms_spam_replay("definition.toml", repeat).await;
            report.wall_millis = Some(1234.5);
            report.stopped = Some(jevjudge_client::limit::Stop::KeyRefused { status: 401 });
            assert_eq!(report.rows[0].repeats.is_some(), repeat > 1);
            for rows in [report.rows.len(), 1, 0] {
                let mut report = report.clone();
                report.rows.truncate(rows);
                let (whole, by_row) = (dir.path().join("whole.json"), dir.path().join("rows.json"));
                write_json(&whole, &report).expect("written");
                write_report(&by_row, &report).expect("written");
                assert_eq!(
                    std::fs::read_to_string(&by_row).expect("read"),
                    std::fs::read_to_string(&whole).expect("read"),
                    "{repeat} repeats, {rows} rows"
                );
            }
        }
    }

    #[test]
    fn deep_indentation_matches_serde_json_past_one_piece() {
        let mut value = serde_json::json!({"leaf": [1, {"x": []}]});
        for depth in 0..45 {
            value = serde_json::json!({ format!("k{depth}"): [value] });
        }
        let mut ours = Vec::new();
        let mut serializer = serde_json::Serializer::with_formatter(&mut ours, Pretty::default());
        serde::Serialize::serialize(&value, &mut serializer).unwrap();
        let ours = String::from_utf8(ours).unwrap();
        assert!(ours.contains(&format!("\n{}\"leaf\"", " ".repeat(2 * 91))));
        assert_eq!(ours, serde_json::to_string_pretty(&value).unwrap());
    }

    #[test]
    fn a_json_result_streamed_to_a_file_has_the_bytes_of_the_whole_text() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let value = serde_json::json!({"rows": [{"id": "a", "score": 0.5}], "é": "\u{1f600}"});
        let expected = serde_json::to_string_pretty(&value).expect("text") + "\n";
        let path = dir.path().join("report.json");
        std::fs::write(&path, "old").expect("written");
        write_json(&path, &value).expect("written");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), expected);
        assert_eq!(std::fs::read_dir(dir.path()).expect("listed").count(), 1);
        #[cfg(unix)]
        {
            let target = dir.path().join("target.json");
            let link = dir.path().join("link.json");
            std::os::unix::fs::symlink(&target, &link).expect("linked");
            write_json(&link, &value).expect("written");
            assert!(
                std::fs::symlink_metadata(&link)
                    .expect("meta")
                    .file_type()
                    .is_symlink()
            );
            assert_eq!(std::fs::read_to_string(&target).expect("read"), expected);
        }
    }

    #[test]
    fn an_uncommitted_file_leaves_the_earlier_one_alone() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("out.txt");
        std::fs::write(&path, "earlier").expect("written");
        let mut file = AtomicFile::create(&path, Policy::Private).expect("created");
        file.write_all(b"half").expect("written");
        drop(file);
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "earlier");
        assert_eq!(std::fs::read_dir(dir.path()).expect("listed").count(), 1);
    }

    #[test]
    fn unwritable_outputs_are_named_with_why() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let error = check_writable(dir.path()).expect_err("a directory");
        assert_eq!(
            error.to_string(),
            format!("{}: is a directory", dir.path().display())
        );
        let missing = dir.path().join("no/such/dir/out.json");
        let error = check_writable(&missing).expect_err("no directory");
        assert!(error.to_string().contains("does not exist"), "{error}");
        check_writable(&dir.path().join("new.json")).expect("a new file can be made");
        let error = write_atomic(dir.path(), "x").expect_err("a directory");
        assert!(error.to_string().starts_with("cannot write "), "{error}");
    }
}
