//! Runs the review service inside this program, reviews a few shipped cases over HTTP, and
//! stops it: the composition a program embedding `jevjudge-serve` uses.
//!
//! ```sh
//! cargo run -p jevjudge-serve --example embed
//! cargo run -p jevjudge-serve --example embed -- examples/sms-spam 5
//! ```
//!
//! The backend is a **replay** of the recorded answers of the hosted model
//! (`examples/sms-spam/recordings.jevl`), so it runs offline; a live program passes the
//! System One client instead. Every line it prints says so.

use std::path::{Path, PathBuf};

use jevjudge_judge::ReplayBackend;
use jevjudge_serve::{Definitions, RunOptions, Service};

type Error = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main]
async fn main() -> Result<(), Error> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(
        args.next()
            .unwrap_or_else(|| "examples/sms-spam".to_owned()),
    );
    let count: usize = match args.next() {
        Some(text) => text
            .parse()
            .map_err(|_| format!("the count `{text}` is not a whole number"))?,
        None => 3,
    };

    // The parts: a backend and the definitions it serves (every definition file in `dir`).
    let backend = ReplayBackend::open(&dir.join("recordings.jevl"), "jev-1.13.0")?;
    let definitions = Definitions::load_dir(&dir)?;
    let version = definitions
        .iter()
        .map(|d| d.version().to_owned())
        .min()
        .ok_or("no definition to serve")?;

    // Assemble (build() refuses combinations that cannot work), bind a free port, serve.
    let service = Service::builder(backend, definitions)
        .definitions_dir(&dir)
        .build()
        .await?;
    let listening = service
        .bind(
            "127.0.0.1:0".parse()?,
            RunOptions::new().handle_os_signals(),
        )
        .await?;
    let base = format!("http://{}", listening.local_addr());
    println!("serving {version} on {base} (backend: replay of recorded answers, offline)");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(listening.run(async move {
        let _ = stopped.await;
    }));

    // Review the first cases as any HTTP client would.
    let client = reqwest::Client::new();
    for state in first_states(&dir.join("cases.jsonl"), count)? {
        let body = serde_json::to_vec(&serde_json::json!({ "state": state }))?;
        let answer = client
            .post(format!("{base}/v1/reviews/{version}"))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await?
            .error_for_status()?
            .bytes()
            .await?;
        let answer: serde_json::Value = serde_json::from_slice(&answer)?;
        println!(
            "{} (replayed) for {}",
            answer["status"].as_str().unwrap_or("?"),
            serde_json::to_string(&state)?
                .chars()
                .take(60)
                .collect::<String>()
        );
    }

    // Stop: in-flight reviews drain, then `run` returns how it stopped.
    let _ = stop.send(());
    let stopped = running.await??;
    println!(
        "stopped by {:?}; every request finished: {}",
        stopped.cause, stopped.drained
    );
    Ok(())
}

/// The `state` of the first `count` lines of a cases file.
fn first_states(path: &Path, count: usize) -> Result<Vec<serde_json::Value>, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut states = Vec::new();
    for (number, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        if states.len() == count {
            break;
        }
        let case: serde_json::Value = serde_json::from_str(line)
            .map_err(|e| format!("{}:{}: {e}", path.display(), number + 1))?;
        states.push(case["state"].clone());
    }
    Ok(states)
}
