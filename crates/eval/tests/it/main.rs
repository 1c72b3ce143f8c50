//! jevjudge-eval's integration tests, in one test binary: the runner, reports, analysis,
//! repeats and limits through the public API.

mod analysis;
mod limits;
mod repeats;
mod reports;
mod runner;
