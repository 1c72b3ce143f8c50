//! Integration tests of the fake System One server, over real sockets on 127.0.0.1 with a plain
//! reqwest client (and in-process through `app` where no socket is needed).

mod answers;
mod app;
mod auth;
mod errors;
mod faults;
mod journal;
mod limits;
mod replay;
mod routes;
mod server;
mod util;
