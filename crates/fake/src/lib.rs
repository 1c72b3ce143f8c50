//! A deterministic, offline fake of TypeSafe's System One API, conformant to the third-party
//! suite jevcompat, with scriptable faults for testing clients (systemone-wire.md §13).
//!
//! # Brief overview
//!
//! - [`answer`] is the pure answerer: a request body in, the 200 body or a [`Rejection`] out,
//!   no I/O. Answers come from a hash of (state, instructions, option or level), never from the
//!   question id, the order or the other questions, so the same question always gets the same
//!   answer. The CLI's `--fake` backend calls it in-process.
//! - [`app`] is the HTTP API as an axum [`Router`](axum::Router) over a [`FakeState`]: routes,
//!   auth, FastAPI-shaped errors, request ids, the journal and the fault plan.
//! - [`FakeServer`] serves it on a real socket (`127.0.0.1:0` picks a free port), which is what
//!   connection faults need. [`FakeServer::script`] installs a [`FaultPlan`] of [`Fault`]s;
//!   [`FakeServer::journal`] returns every received request as a [`JournalEntry`] with the key
//!   redacted; [`FakeServer::request_count`] counts the `POST /v1/systemone` calls.
//! - [`Config`] holds the key (auth is off without one), a fixed latency, optional seeded noise
//!   imitating the live API's drift, an optional [`Replay`] of recorded answers, and optional
//!   rate limits ([`Rate`]: 429 per key, 529 for the whole server).
//! - [`serve`] runs a server as the `jevjudge fake-server` program does, until a shutdown
//!   signal; [`Replay::load`] reads a record file for replay.
//! - Every response carries `x-jevjudge-fake: 1` ([`jevjudge_wire::FAKE_MARK_HEADER`]), so
//!   answers, reports and records made against the fake say `fake`.
//!
//! # Example
//!
//! ```
//! use std::net::SocketAddr;
//!
//! use jevjudge_fake::{Config, FakeServer, Fault, FaultPlan};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
//! runtime.block_on(async {
//!     let addr: SocketAddr = "127.0.0.1:0".parse()?;
//!     let server = FakeServer::start(Config::default(), addr).await?;
//!     // The first call is rate limited, the next ones are answered.
//!     server.script(FaultPlan::new().then(Fault::RetryAfterMs(250)));
//!
//!     // Any HTTP client works; here a raw HTTP/1.1 exchange keeps the example dependency-free.
//!     use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
//!     let body = r#"{"model":"jev-latest","state":"hi","questions":{"q":{"type":"noul","instructions":"Greeting?"}}}"#;
//!     let mut stream = tokio::net::TcpStream::connect(server.addr()).await?;
//!     let request = format!(
//!         "POST /v1/systemone HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
//!          Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
//!         body.len()
//!     );
//!     stream.write_all(request.as_bytes()).await?;
//!     let mut response = String::new();
//!     stream.read_to_string(&mut response).await?;
//!     assert!(response.starts_with("HTTP/1.1 429"));
//!     assert!(response.contains("retry-after-ms: 250"));
//!
//!     assert_eq!(server.request_count(), 1);
//!     assert_eq!(server.journal()[0].path, "/v1/systemone");
//!     server.shutdown().await;
//!     Ok::<(), Box<dyn std::error::Error>>(())
//! })
//! # }
//! ```

mod answers;
mod auth;
mod config;
mod corrupt;
mod distribution;
mod fault;
mod hash;
mod journal;
mod limit;
mod noise;
mod plan;
mod rate;
mod rejection;
mod replay;
mod reply;
mod router;
mod serve;
mod server;
mod state;
mod validation;

pub use answers::answer;
pub use config::Config;
pub use fault::Fault;
pub use journal::JournalEntry;
pub use plan::FaultPlan;
pub use rate::{Rate, RateError};
pub use rejection::Rejection;
pub use replay::{Recorded, Replay, ReplayError};
pub use router::app;
pub use serve::{KeyError, LoadError, LoadedReplay, ServeError, check_key, parse_noise, serve};
pub use server::FakeServer;
pub use state::FakeState;
