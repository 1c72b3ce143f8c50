//! jevjudge-judge's integration tests, in one test binary: the judge contract's rules and
//! record/replay through the public API.

mod contract;
mod record_replay;
