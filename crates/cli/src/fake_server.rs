//! `jevjudge fake-server`: serve the fake System One API (cli-and-formats.md §1.4).
//!
//! The first line on standard output is `listening on http://HOST:PORT`, flushed at once, so a
//! script can start the server on port 0 and read the address it got.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use jevjudge_fake::{Config, Rate, Replay, ServeError};
use jevjudge_wire::{
    Secret,
    setting::{Explain as _, Setting},
};

use crate::exit;

/// Options of `jevjudge fake-server`. `Debug` never shows the key.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Address to listen on, as HOST:PORT; port 0 picks a free port. Default: 127.0.0.1:8787.
    #[arg(
        long,
        value_name = "HOST:PORT",
        default_value = "127.0.0.1:8787",
        hide_default_value = true,
        value_parser = jevjudge_serve::parse_listen_addr
    )]
    addr: SocketAddr,

    /// Require this API key as `Authorization: Bearer KEY` (403 without one, 401 for a wrong
    /// one). Default: no key, every request is accepted.
    #[arg(long, value_name = "KEY")]
    key: Option<Secret>,

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

    /// With --replay: answer every request from the recorded exchanges of this model (an
    /// answering model or the alias it was asked as), whatever model the request names; one
    /// the file does not hold is an error naming those it holds. Default: the recording's
    /// model when it holds exactly one, else the model each request names.
    #[arg(long, value_name = "NAME", requires = "replay")]
    model: Option<String>,

    /// Vary repeated identical requests: every probability moves by Gaussian noise of this
    /// standard deviation (0 < SD ≤ 1) around the deterministic answer, clamped to [0, 1]
    /// (choice and score probabilities then rescaled to sum 1). Reproducible: the k-th repeat
    /// of a request gets the same answer for the same --seed. Default: no noise.
    #[arg(long, value_name = "SD", value_parser = jevjudge_fake::parse_noise)]
    noise: Option<f64>,

    /// The seed of --noise. Default: 0.
    #[arg(long, value_name = "N", requires = "noise")]
    seed: Option<u64>,

    /// Limit each key (each `Authorization` value; requests without one share a limit) to this
    /// many requests, like `200/s` or `1200/m`; beyond it answer 429 at once (a token bucket).
    #[arg(long, value_name = "RATE")]
    rate_limit: Option<Rate>,

    /// The request bucket's size: how many requests a key may send at once. Default: one
    /// second's worth of --rate-limit.
    #[arg(long, value_name = "N", requires = "rate_limit", value_parser = clap::value_parser!(u32).range(1..))]
    burst: Option<u32>,

    /// Limit each key to this many estimated input tokens, like `100000/s` (estimate: request
    /// body bytes ÷ 4); beyond it answer 429. The bucket holds one second's worth.
    #[arg(long, value_name = "TOKENS/s")]
    token_rate: Option<Rate>,

    /// Answer 529 (overloaded) beyond this many requests for the whole server, like `100/s`.
    #[arg(long, value_name = "RATE")]
    overload_rate: Option<Rate>,

    /// Send `Retry-After: SECONDS` with the limits' 429 and 529 answers. Default: no wait hint.
    #[arg(long, value_name = "SECONDS")]
    retry_after: Option<u64>,
}

/// Runs the fake server until SIGINT or SIGTERM, then stops it cleanly (exit 0).
pub async fn run(args: Args) -> anyhow::Result<u8> {
    jevjudge_fake::serve(
        config(&args)?,
        args.addr,
        crate::output::announce_listening,
        crate::output::interrupted(),
    )
    .await
    .map_err(|error| match error {
        ServeError::Announce(source) => {
            anyhow::Error::new(source).context("cannot write to standard output")
        }
        bind => anyhow::Error::new(bind),
    })?;
    Ok(exit::SUCCESS)
}

fn config(args: &Args) -> anyhow::Result<Config> {
    let key = match args.key.as_ref() {
        None => None,
        Some(key) => Some(
            jevjudge_fake::check_key(key.expose_secret())
                .map_err(|e| anyhow::anyhow!("--key {e}"))?,
        ),
    };
    let replay = match &args.replay {
        None => None,
        Some(path) => Some(load_replay(path, args.model.as_deref())?),
    };
    Ok(Config {
        key,
        latency: Duration::from_millis(args.latency),
        replay,
        noise: args.noise,
        seed: args.seed.unwrap_or(0),
        rate_limit: args.rate_limit,
        burst: args.burst,
        token_rate: args.token_rate,
        overload_rate: args.overload_rate,
        retry_after: args.retry_after,
    })
}

/// `--replay FILE.jevl`: errors name the flag and the file; says on stderr which model it answers
/// as.
fn load_replay(path: &Path, model: Option<&str>) -> anyhow::Result<Replay> {
    let loaded = Replay::load(path, model).map_err(|error| {
        anyhow::Error::msg(error.explain(&|setting| match setting {
            Setting::Replay => format!("--replay {}", path.display()),
            _ => crate::inputs::flag(setting),
        }))
    })?;
    let count = jevjudge_eval::plural::count(loaded.records, "record");
    match loaded.pinned {
        Some(model) => eprintln!(
            "jevjudge fake-server: --replay: {count}; recorded requests are answered \
             as model {model}, whatever model they name; others by hash"
        ),
        None => eprintln!(
            "jevjudge fake-server: --replay: {count} of several models; a request \
             is answered from those of the model it names (pass --model to pick one); \
             others by hash"
        ),
    }
    Ok(loaded.replay)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(argv: &[&str]) -> Result<Args, clap::Error> {
        crate::flags_test::parse("fake-server", argv)
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
        assert_eq!(config.key.as_ref().map(Secret::expose_secret), Some("K-1"));
        assert_eq!(config.latency, Duration::from_millis(250));
    }

    #[test]
    fn rate_limit_flags_become_the_config() {
        let args = parse(&[
            "--rate-limit",
            "1200/m",
            "--burst",
            "5",
            "--token-rate",
            "100000/s",
            "--overload-rate",
            "300/s",
            "--retry-after",
            "2",
        ])
        .expect("valid flags");
        let config = config(&args).expect("a config");
        assert_eq!(config.rate_limit.map(Rate::per_second), Some(20.0));
        assert_eq!(config.burst, Some(5));
        assert_eq!(config.token_rate.map(Rate::per_second), Some(100_000.0));
        assert_eq!(config.overload_rate.map(Rate::per_second), Some(300.0));
        assert_eq!(config.retry_after, Some(2));
        let plain = config_of(&[]);
        assert!(plain.rate_limit.is_none() && plain.retry_after.is_none());
    }

    fn all_refused(argvs: &[&[&str]]) {
        for argv in argvs {
            assert!(parse(argv).is_err(), "{argv:?}");
        }
    }

    fn config_of(argv: &[&str]) -> Config {
        config(&parse(argv).expect("valid flags")).expect("a config")
    }

    #[test]
    fn bad_rates_and_a_lone_burst_are_usage_errors() {
        all_refused(&[
            &["--rate-limit", "200"][..],
            &["--rate-limit", "0/s"],
            &["--token-rate", "lots/s"],
            &["--overload-rate", "5/d"],
            &["--burst", "3"],
            &["--rate-limit", "1/s", "--burst", "0"],
            &["--retry-after", "-1"],
        ]);
    }

    #[test]
    fn noise_and_seed_become_the_config() {
        let config = config_of(&["--noise", "0.05", "--seed", "42"]);
        assert_eq!((config.noise, config.seed), (Some(0.05), 42));
        let unseeded = config_of(&["--noise", "1"]);
        assert_eq!((unseeded.noise, unseeded.seed), (Some(1.0), 0));
        assert_eq!(config_of(&[]).noise, None);
        all_refused(&[
            &["--noise", "0"][..],
            &["--noise", "1.5"],
            &["--noise", "NaN"],
            &["--noise", "-0.1"],
            &["--seed", "3"],
        ]);
    }

    fn write_records(name: &str, records: &[(&str, &str, &str)]) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "jevjudge-fake-server-{name}-{}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).expect("a temp dir");
        let path = dir.join("records.jevl");
        let mut text = String::new();
        for (model, requested, state) in records {
            let questions = serde_json::json!({"q": {"type": "noul", "instructions": "?"}});
            let answers = serde_json::json!({"q": {"type": "noul", "noul": 0.9}});
            let record = jevjudge_wire::record::Record::new(
                model,
                requested,
                serde_json::json!(state),
                questions.as_object().cloned().unwrap_or_default(),
                answers.as_object().cloned().unwrap_or_default(),
                None,
                "2026-11-30T00:00:00Z".into(),
            )
            .expect("a record");
            text.push_str(&record.to_line().expect("a line"));
        }
        std::fs::write(&path, text).expect("written");
        path
    }

    fn replay_error(path: &std::path::Path, model: Option<&str>) -> String {
        let mut argv = vec!["--replay", path.to_str().unwrap_or_default()];
        if let Some(model) = model {
            argv.extend(["--model", model]);
        }
        config(&parse(&argv).expect("valid flags"))
            .err()
            .map(|e| format!("{e:#}"))
            .unwrap_or_default()
    }

    #[test]
    fn a_replay_model_the_file_does_not_hold_is_an_error_naming_those_it_holds() {
        let path = write_records(
            "models",
            &[
                ("jev-1.13.0", "jev-latest", "a"),
                ("jev-1.13.0", "jev-preview", "b"),
                ("jev-1.14.0", "jev-1.14.0", "c"),
            ],
        );
        let error = replay_error(&path, Some("jev-typo"));
        assert!(error.starts_with("--model: "), "{error}");
        assert!(error.contains("jev-typo"), "{error}");
        assert!(
            error.contains("jev-1.13.0 (asked as jev-latest, jev-preview); jev-1.14.0"),
            "{error}"
        );
        // Answering models and the aliases they were asked as are both held.
        for held in ["jev-1.13.0", "jev-latest", "jev-1.14.0"] {
            assert_eq!(replay_error(&path, Some(held)), "", "{held}");
        }
        // Several models without --model: accepted, each request's own model is used.
        assert_eq!(replay_error(&path, None), "");
        assert!(
            parse(&["--model", "jev-latest"]).is_err(),
            "--model needs --replay"
        );
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
