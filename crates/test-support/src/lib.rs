//! What jevjudge's integration tests share, so that no test binary carries its own copy
//! (and no copy drifts: before this crate, only one of seven `jevjudge()` helpers set
//! `kill_on_drop`). A dev-dependency only; never published.
//!
//! # Brief overview
//!
//! - [`root`], [`example`]: paths in the repository (the shipped examples are the shared
//!   definition, case and recording fixtures); [`definition_file`]: the contract's shared
//!   definitions (judge-contract.md §14), one file each, for every crate's tests.
//! - [`command`]: a program under a clean environment that is killed when dropped; [`run`]
//!   and [`run_blocking`] run it with a time limit and capture its output; [`stdout`],
//!   [`stderr`], [`stdout_json`] read that output.
//! - [`temp_dir`]: a fresh directory per test name and process.
//! - [`post`], [`get`]: one raw HTTP/1.1 exchange; [`listening_on`]: the address a server
//!   announces; [`sigterm`]: ask a child to stop.
//! - [`Reply`], [`read`]: a reqwest response read whole, for the fake's and
//!   the service's tests; [`mixed_request`]: a System One request of every question type.
//! - [`expect`]: assertions on a finished program (`exit_code`, `contains`) whose failures
//!   show what it said; [`connections`]: raw connections held open against a server.
//! - `databases` (feature `databases`): fresh SQLite and PostgreSQL databases, and a macro
//!   that runs a test on both.
//!
//! ```
//! let definition = jevjudge_test_support::example("refund/definition.toml");
//! assert!(definition.is_file());
//! ```

use std::{
    ffi::OsStr,
    path::{Path, PathBuf},
    process::{Output, Stdio},
    time::Duration,
};

use serde_json::Value;
use tokio::{
    io::{AsyncBufRead, AsyncBufReadExt as _},
    process::Command,
};

pub mod connections;
#[cfg(feature = "databases")]
pub mod databases;
pub mod expect;
mod http;
mod requests;

pub use http::{Reply, read};
pub use requests::mixed_request;

/// How long [`run`] and [`run_blocking`] wait for a program: 120 s.
pub const RUN_LIMIT: Duration = Duration::from_secs(120);

/// The dummy API key tests give the binary (never a real one).
pub const TEST_KEY: &str = "test-key-not-secret";

/// The repository's root directory.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A path under `examples/`, e.g. `example("refund/definition.toml")`.
pub fn example(path: &str) -> PathBuf {
    root().join("examples").join(path)
}

/// The file of a shared definition of judge-contract.md §14 (`refund-answer-v1`,
/// `support-draft-v1`): `examples/definitions/VERSION.toml`. Tests load it rather than
/// spelling the definition out again.
pub fn definition_file(version: &str) -> PathBuf {
    example(&format!("definitions/{version}.toml"))
}

/// `program` with a clean environment: no API key, base URL, store URL or log filter from
/// the caller's shell, stdin closed, and killed when the handle is dropped (a failed
/// assertion never leaves a child running).
pub fn command(program: impl AsRef<OsStr>) -> Command {
    let mut command = Command::new(program);
    command
        .env_remove("TYPESAFE_API_KEY")
        .env_remove("JEV_API_KEY")
        .env_remove("TYPESAFE_BASE_URL")
        .env_remove("JEVJUDGE_STORE")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .kill_on_drop(true);
    command
}

/// Runs `command` to the end, capturing stdout and stderr; panics after [`RUN_LIMIT`].
pub async fn run(command: &mut Command) -> Output {
    tokio::time::timeout(RUN_LIMIT, command.output())
        .await
        .expect("the program finished within the time limit")
        .expect("the program ran")
}

/// [`run`] from a synchronous test, on a runtime of its own.
pub fn run_blocking(command: &mut Command) -> Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(run(command))
}

/// Stdout as text (lossy).
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Stderr as text (lossy).
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Stdout as JSON; the panic shows both streams.
pub fn stdout_json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            stdout(output),
            stderr(output)
        )
    })
}

/// A JSON file, read and parsed.
pub fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// The keys of a JSON object, in document order; panics on anything else.
pub fn keys(value: &Value) -> Vec<&str> {
    value
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {value}"))
        .keys()
        .map(String::as_str)
        .collect()
}

/// A fresh, empty directory `jevjudge-NAME-…` under the system temp dir, removed when the
/// returned [`TempDir`] is dropped (so a failing test leaves nothing behind either).
pub fn temp_dir(name: &str) -> TempDir {
    TempDir(
        tempfile::Builder::new()
            .prefix(&format!("jevjudge-{name}-"))
            .tempdir()
            .expect("a temp dir"),
    )
}

/// A fresh directory that is removed when dropped; it reads as the [`Path`] it is
/// (`dir.join(..)`, `&dir`, `dir.display()`).
#[derive(Debug)]
pub struct TempDir(tempfile::TempDir);

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<OsStr> for TempDir {
    fn as_ref(&self) -> &OsStr {
        self.0.path().as_os_str()
    }
}

/// A writer that keeps what is written, for capturing log lines in a test: give a clone to the
/// subscriber (`.with_writer(move || capture.clone())`), read them back with
/// [`LogCapture::text`].
#[derive(Debug, Clone, Default)]
pub struct LogCapture(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl LogCapture {
    /// Everything written so far, as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
    }
}

impl std::io::Write for LogCapture {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// One POST of a JSON `body` to `addr` (`host:port`): (status, body).
/// Panics when no answer arrives within 20 s.
pub async fn post(addr: &str, path: &str, body: &str) -> (u16, String) {
    exchange(
        plain_client()
            .post(format!("http://{addr}{path}"))
            .header("content-type", "application/json")
            .body(body.to_owned()),
    )
    .await
}

/// One GET of `path` from `addr` (`host:port`): (status, body).
/// Panics when no answer arrives within 20 s.
pub async fn get(addr: &str, path: &str) -> (u16, String) {
    exchange(plain_client().get(format!("http://{addr}{path}"))).await
}

/// A client with no proxy and a 20 s timeout.
fn plain_client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(20))
        .build()
        .expect("a client")
}

/// Sends `request` and reads the answer to its end.
async fn exchange(request: reqwest::RequestBuilder) -> (u16, String) {
    let response = request.send().await.expect("an answer within 20 s");
    let status = response.status().as_u16();
    let body = response.text().await.expect("the body reads");
    (status, body)
}

/// Reads a server's first line, `listening on http://ADDR`, and returns `ADDR`; panics on
/// any other line or when none arrives within 20 s.
pub async fn listening_on(stdout: &mut (impl AsyncBufRead + Unpin)) -> String {
    let mut first = String::new();
    tokio::time::timeout(Duration::from_secs(20), stdout.read_line(&mut first))
        .await
        .expect("the first line within 20 s")
        .expect("reads");
    first
        .trim()
        .strip_prefix("listening on http://")
        .unwrap_or_else(|| panic!("unexpected first line: {first:?}"))
        .to_owned()
}

/// Sends SIGTERM to the process `pid` (with `kill`, as a user would).
pub fn sigterm(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -TERM {pid}: {status}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_is_the_workspace() {
        assert!(root().join("Cargo.toml").is_file());
        assert!(example("refund/definition.toml").is_file());
        for version in ["refund-answer-v1", "support-draft-v1"] {
            let text = std::fs::read_to_string(definition_file(version)).unwrap();
            assert!(text.contains(&format!("version = \"{version}\"")), "{text}");
        }
    }

    #[test]
    fn a_command_has_stdin_closed_and_its_output_captured() {
        // `cat` would wait forever on an inherited terminal; closed stdin ends it at once.
        let output = run_blocking(command("sh").args(["-c", "cat; printf '{\"ok\":true}'"]));
        assert!(output.status.success(), "{}", stderr(&output));
        assert_eq!(stdout_json(&output)["ok"], true);
    }

    #[test]
    fn temp_dirs_start_empty_and_go_when_dropped() {
        let first = temp_dir("support-self-test");
        std::fs::write(first.join("a"), "x").unwrap();
        let second = temp_dir("support-self-test");
        assert_ne!(first.to_path_buf(), second.to_path_buf());
        assert_eq!(std::fs::read_dir(&*second).unwrap().count(), 0);
        let path = first.to_path_buf();
        drop(first);
        assert!(!path.exists());
    }
}
