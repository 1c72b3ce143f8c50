//! `jevjudge fake-server`: serve the fake System One API (cli-and-formats.md §1.4).
//!
//! The first line on standard output is `listening on http://HOST:PORT`, flushed at once, so a
//! script can start the server on port 0 and read the address it got.

use std::fmt;
use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use jevjudge_fake::{Config, FakeServer};

use crate::exit;

/// Options of `jevjudge fake-server`.
#[derive(clap::Args)]
pub struct Args {
    /// Address to listen on, as HOST:PORT; port 0 picks a free port. Default: 127.0.0.1:8787.
    #[arg(
        long,
        value_name = "HOST:PORT",
        default_value = "127.0.0.1:8787",
        hide_default_value = true
    )]
    addr: SocketAddr,

    /// Require this API key as `Authorization: Bearer KEY` (403 without one, 401 for a wrong
    /// one). Default: no key, every request is accepted.
    #[arg(long, value_name = "KEY")]
    key: Option<String>,

    /// Delay before every answer, in milliseconds (for benchmarks). Default: 0.
    #[arg(
        long,
        value_name = "MS",
        default_value_t = 0,
        hide_default_value = true
    )]
    latency: u64,

    /// Answer requests recorded in this `.jevl` file with their recorded model, answers and
    /// usage; everything else is answered by hash. Default: none.
    #[arg(long, value_name = "FILE.jevl")]
    replay: Option<PathBuf>,
}

impl fmt::Debug for Args {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Args")
            .field("addr", &self.addr)
            .field("key", &self.key.as_ref().map(|_| "<redacted>"))
            .field("latency", &self.latency)
            .field("replay", &self.replay)
            .finish()
    }
}

/// Runs the fake server until SIGINT or SIGTERM, then stops it cleanly (exit 0).
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let config = config(&args)?;
    let server = FakeServer::start(config, args.addr)
        .await
        .with_context(|| format!("cannot listen on {}", args.addr))?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "listening on {}", server.url()).context("cannot write to standard output")?;
    stdout.flush().context("cannot write to standard output")?;
    drop(stdout);
    crate::output::interrupted().await;
    server.shutdown().await;
    Ok(exit::SUCCESS)
}

fn config(args: &Args) -> anyhow::Result<Config> {
    let key = match args.key.as_deref().map(str::trim) {
        None => None,
        Some(key) if !key.is_empty() && key.bytes().all(|b| b.is_ascii_graphic()) => {
            Some(key.to_owned())
        }
        Some(_) => anyhow::bail!("--key must be non-empty printable ASCII without whitespace"),
    };
    let replay = match &args.replay {
        None => None,
        Some(path) => Some(replay::load(path)?),
    };
    Ok(Config {
        key,
        latency: Duration::from_millis(args.latency),
        noise: None,
        replay,
    })
}

mod replay {
    //! `--replay FILE.jevl`: recorded answers from a record file.

    use std::path::Path;

    use anyhow::Context as _;
    use jevjudge_fake::Replay;

    /// Reads the record file into a replay source; errors name the file and the line.
    pub(super) fn load(path: &Path) -> anyhow::Result<Replay> {
        let records = jevjudge_wire::record::read_file(path).context("--replay")?;
        Replay::from_records(records)
            .with_context(|| format!("--replay: cannot index {}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    fn parse(argv: &[&str]) -> Result<Args, clap::Error> {
        Cli::try_parse_from(std::iter::once("fake-server").chain(argv.iter().copied()))
            .map(|cli| cli.args)
    }

    #[test]
    fn defaults_listen_on_8787_without_key_or_latency() {
        let args = parse(&[]).expect("no flags are required");
        assert_eq!(args.addr, "127.0.0.1:8787".parse().expect("an address"));
        let config = config(&args).expect("a config");
        assert!(config.key.is_none() && config.replay.is_none());
        assert_eq!(config.latency, Duration::ZERO);
    }

    #[test]
    fn flags_become_the_config() {
        let args = parse(&[
            "--addr",
            "127.0.0.1:0",
            "--key",
            " K-1 ",
            "--latency",
            "250",
        ])
        .expect("valid flags");
        let config = config(&args).expect("a config");
        assert_eq!(config.key.as_deref(), Some("K-1"));
        assert_eq!(config.latency, Duration::from_millis(250));
    }

    #[test]
    fn a_blank_or_spaced_key_is_refused() {
        for key in ["", "  ", "a b"] {
            let args = parse(&["--key", key]).expect("clap accepts it");
            assert!(config(&args).is_err(), "{key:?}");
        }
    }

    #[test]
    fn debug_never_shows_the_key() {
        let args = parse(&["--key", "apikey_secret"]).expect("valid flags");
        assert!(!format!("{args:?}").contains("apikey_secret"));
    }

    #[test]
    fn a_missing_replay_file_is_an_error_naming_it() {
        let args = parse(&["--replay", "/nonexistent/records.jevl"]).expect("valid flags");
        let error = config(&args)
            .err()
            .map(|e| format!("{e:#}"))
            .unwrap_or_default();
        assert!(error.contains("/nonexistent/records.jevl"), "{error}");
    }
}
