//! Batch evaluation for jevjudge: replay labelled cases through a Judge to catch regressions
//! after a prompt, retrieval or model change.
//!
//! # Brief overview
//!
//! - [`Case`]s come from JSON Lines ([`read_cases_file`]): the seeds' (question, evidence,
//!   answer) or any state, with `expected_pass` and optional per-criterion labels.
//! - An [`Evaluator`] turns one case's input into a response; [`JevEvaluator`] runs one
//!   review of a definition.
//! - The [`Runner`] checks the limits first (unique ids, at most 10,000 cases, concurrency
//!   1..=32), keeps at most `concurrency` evaluations in flight, returns rows in input order,
//!   makes synthetic EVALUATOR rows for failing evaluators, and summarises overall and per
//!   scenario ([`Summary`]).
//! - [`Report`] is the JSON report; [`junit`] and [`markdown`] render it for CI; [`rows_file`]
//!   makes runs durable and resumable.
//! - [`calibration`] computes per-criterion calibration metrics and threshold advice from a
//!   report, [`compare`] pairs two runs case by case, and [`html`] renders a report as one
//!   self-contained HTML page with inline SVG charts.
//! - [`session`] is one `eval` run over a cases file (resume, streaming, merge), [`gates`]
//!   decides its exit status, and [`terminal`] renders what the commands print.

pub mod calibration;
mod case;
mod case_ids;
mod cells;
pub mod compare;
pub mod compare_change;
pub mod compare_noise;
mod evaluator;
pub mod export;
pub mod gates;
pub mod html;
pub mod import;
mod interned;
pub mod junit;
mod latencies;
pub mod markdown;
mod ordered_map;
pub mod output;
pub use jevjudge_wire::plural;
mod pretty;
pub mod prevalence;
pub mod repeats;
mod report;
pub mod reviewer;
pub mod risk;
mod row;
mod row_json;
pub mod rows_file;
mod runner;
pub mod session;
pub mod shadow;
mod strict_json;
mod summary;
pub mod terminal;
#[cfg(test)]
mod test_support;

pub use case::{
    Case, CaseInput, CasesError, CasesErrorKind, EvaluatorRequest, check_expected_findings,
    for_each_case, for_each_case_capped, for_each_case_in_file, for_each_case_in_file_capped,
    parse_case, read_cases, read_cases_file,
};
pub use case_ids::for_each_case_in_file_hashed;
pub use evaluator::{
    EvaluationRequest, Evaluator, EvaluatorFailed, EvaluatorResponse, JevEvaluator, respond,
};
pub use repeats::{MAX_REPEATS, Repeated, RepeatedBuilder};
pub use report::{LoadReportError, REPORT_FORMAT, Report, ReportError};
pub use risk::{Risk, RiskBuilder};
pub use row::{Outcome, Repeats, Row};
pub use runner::{
    CONCURRENCY, MAX_CASES, Run, RunObserver, Runner, RunnerError, input_token_estimate,
};
pub use summary::{SummariesBuilder, Summary, SummaryBuilder, error_key, summarize};
