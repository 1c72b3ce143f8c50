//! `jevjudge fake-server`: serve the fake System One API (cli-and-formats.md §1.4).

/// Options of `jevjudge fake-server`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs the fake server until SIGINT/SIGTERM.
pub async fn run(_args: Args) -> anyhow::Result<u8> {
    anyhow::bail!("fake-server is not built yet")
}
