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
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:8787")]
    addr: SocketAddr,

    /// Require this API key as `Authorization: Bearer KEY` (403 without one, 401 for a wrong
    /// one). Default: no key, every request is accepted.
    #[arg(long, value_name = "KEY")]
    key: Option<String>,

    /// Delay before every answer, in milliseconds (for benchmarks). Default: 0.
    #[arg(long, value_name = "MS", default_value_t = 0)]
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
    stop_signal().await.context("cannot wait for a stop signal")?;
    server.shutdown().await;
    Ok(exit::SUCCESS)
}

fn config(args: &Args) -> anyhow::Result<Config> {
    let key = match args.key.as_deref().map(str::trim) {
        None => None,
        Some(key) if !key.is_empty() && key.bytes().all(|b| b.is_ascii_graphic()) => Some(key.to_owned()),
        Some(_) => anyhow::bail!("--key must be non-empty printable ASCII without whitespace"),
    };
    let replay = match &args.replay {
        None => None,
        Some(path) => Some(replay::load(path)?),
    };
    Ok(Config { key, latency: Duration::from_millis(args.latency), noise: None, replay })
}

mod replay {
    //! `--replay FILE.jevl`: recorded answers from a record file.

    use std::path::Path;

    use jevjudge_fake::Replay;

    /// Reads the record file into a replay source.
    pub(super) fn load(path: &Path) -> anyhow::Result<Replay> {
        anyhow::bail!("--replay needs the record reader (cannot read {})", path.display())
    }
}

/// Resolves on Ctrl-C (SIGINT) or SIGTERM.
async fn stop_signal() -> std::io::Result<()> {
    #[cfg(unix)]
    {
        let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        tokio::select! {
            result = tokio::signal::ctrl_c() => result,
            _ = terminate.recv() => Ok(()),
        }
    }
    #[cfg(not(unix))]
    {
        tokio::signal::ctrl_c().await
    }
}
