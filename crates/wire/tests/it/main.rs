//! jevjudge-wire's integration tests, in one test binary: canonical JSON against the reference
//! vectors, `.jevl` records, and the response checks.

mod canonical_vectors;
mod records;
mod response_checks;
