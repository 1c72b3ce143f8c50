//! Running a fake server as a program does: settings checked from text, a record file loaded for
//! replay, and [`serve`] until a shutdown signal.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::path::Path;

use jevjudge_wire::Secret;
use jevjudge_wire::record::RecordError;

use crate::config::Config;
use crate::replay::{Replay, ReplayError};
use crate::server::FakeServer;

/// A record file loaded for replay, with what it holds.
#[derive(Debug)]
pub struct LoadedReplay {
    /// The replay source.
    pub replay: Replay,
    /// How many records the file holds.
    pub records: usize,
    /// The model every recorded request is answered as, when one was chosen or the file holds
    /// exactly one; `None` when each request is answered from the model it names.
    pub pinned: Option<String>,
}

/// A record file that cannot be loaded for replay.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file cannot be read or holds a line that is not a record.
    #[error(transparent)]
    Read(#[from] RecordError),
    /// The records cannot be replayed as asked (an unknown model, or no canonical form).
    #[error(transparent)]
    Replay(#[from] ReplayError),
}

impl jevjudge_wire::setting::Explain for LoadError {
    /// The error with the setting that names the file or the model.
    fn explain(&self, name: jevjudge_wire::setting::Namer<'_>) -> String {
        use jevjudge_wire::setting::Setting;
        match self {
            LoadError::Read(error) => format!("{}: {error}", name(Setting::Replay)),
            LoadError::Replay(error @ ReplayError::UnknownModel { .. }) => {
                format!("{}: {error}", name(Setting::Model))
            }
            LoadError::Replay(other) => {
                format!("{}: cannot index it: {other}", name(Setting::Replay))
            }
        }
    }
}

impl Replay {
    /// Reads the record file at `path` into a replay source for `model` (see
    /// [`Replay::from_records_for_model`]); errors name the line, or the models the file holds.
    pub fn load(path: &Path, model: Option<&str>) -> Result<LoadedReplay, LoadError> {
        let records = jevjudge_wire::record::read_file(path)?;
        let count = records.len();
        let (replay, pinned) = Replay::from_records_for_model(records, model)?;
        Ok(LoadedReplay {
            replay,
            records: count,
            pinned,
        })
    }
}

/// A key the fake can require: non-empty printable ASCII without whitespace, once trimmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("must be non-empty printable ASCII without whitespace")]
pub struct KeyError;

/// Checks a key given as text, trimming surrounding whitespace.
pub fn check_key(key: &str) -> Result<Secret, KeyError> {
    let key = key.trim();
    if !key.is_empty() && key.bytes().all(|b| b.is_ascii_graphic()) {
        Ok(Secret::from(key))
    } else {
        Err(KeyError)
    }
}

/// A noise standard deviation given as text: a number in (0, 1].
pub fn parse_noise(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(sd) if sd > 0.0 && sd <= 1.0 => Ok(sd),
        _ => Err(format!(
            "`{text}` is not a standard deviation in (0, 1], like 0.05"
        )),
    }
}

/// Why [`serve`] stopped before its shutdown signal.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The address cannot be bound.
    #[error("cannot listen on {addr}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// `on_listening` failed; the server was stopped.
    #[error("cannot announce the address")]
    Announce(#[source] io::Error),
}

/// Serves `config` on `addr` (port 0 picks a free port): calls `on_listening` with the base URL
/// once bound, then serves until `shutdown` completes and stops cleanly.
pub async fn serve(
    config: Config,
    addr: SocketAddr,
    on_listening: impl FnOnce(&str) -> io::Result<()>,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ServeError> {
    let server = FakeServer::start(config, addr)
        .await
        .map_err(|source| ServeError::Bind { addr, source })?;
    if let Err(error) = on_listening(&server.url()) {
        server.shutdown().await;
        return Err(ServeError::Announce(error));
    }
    shutdown.await;
    server.shutdown().await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_trimmed_and_must_be_printable_ascii() {
        assert_eq!(
            check_key(" K-1 ").map(|k| k.expose_secret().to_owned()),
            Ok("K-1".into())
        );
        for key in ["", "  ", "a b", "é"] {
            assert_eq!(check_key(key).map(|_| ()), Err(KeyError), "{key:?}");
        }
    }

    #[test]
    fn noise_is_a_standard_deviation_in_zero_to_one() {
        assert_eq!(parse_noise("0.05"), Ok(0.05));
        assert_eq!(parse_noise(" 1 "), Ok(1.0));
        for text in ["0", "1.5", "NaN", "-0.1", "lots"] {
            let error = parse_noise(text).expect_err(text);
            assert!(error.contains(text) && error.contains("(0, 1]"), "{error}");
        }
    }

    #[test]
    fn a_missing_record_file_is_a_read_error() {
        let error =
            Replay::load(Path::new("/nonexistent/records.jevl"), None).expect_err("no such file");
        assert!(matches!(error, LoadError::Read(_)), "{error:?}");
        assert!(
            error.to_string().contains("/nonexistent/records.jevl"),
            "{error}"
        );
    }

    #[tokio::test]
    async fn serve_announces_the_url_and_stops_on_shutdown() {
        let addr: SocketAddr = "127.0.0.1:0".parse().expect("an address");
        let mut announced = String::new();
        serve(
            Config::default(),
            addr,
            |url| {
                announced = url.to_owned();
                Ok(())
            },
            async {},
        )
        .await
        .expect("served");
        assert!(announced.starts_with("http://127.0.0.1:"), "{announced}");
    }

    #[tokio::test]
    async fn a_failed_announcement_stops_the_server() {
        let addr: SocketAddr = "127.0.0.1:0".parse().expect("an address");
        let error = serve(
            Config::default(),
            addr,
            |_| Err(io::Error::other("closed")),
            std::future::pending(),
        )
        .await
        .expect_err("the announcement failed");
        assert!(matches!(error, ServeError::Announce(_)), "{error:?}");
    }
}
